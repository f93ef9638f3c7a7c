"""The release record (issue 29, deliverable 6): valid against the JSON Schema shipped in the
package for every model family the audit reads, the inputs hashed, every attack beside its
baselines, and the decision with its reasons."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
from regressors import REGRESSORS, regression_table
from schema_check import errors, validate
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.attacks.core.target import parse_target
from ppdm.data.datasets import load_adult
from ppdm.report.record import DECISIONS, decide, schema
from ppdm.tree import tree_from_sklearn

from families import FAMILIES, small_table

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]
THREAT = ppdm.ThreatModel(sensitive="class", known=FEATURES)


def test_the_schema_is_package_data_and_the_checker_refuses_what_it_should():
    s = schema()
    assert s["$schema"].endswith("2020-12/schema") and set(s["properties"]["decision"]["enum"]) == set(DECISIONS)
    assert errors({"format": "x"}, s)  # wrong const and missing keys
    assert errors(3, {"type": ["string", "null"]}) and not errors(None, {"type": ["string", "null"]})


@pytest.fixture(scope="module")
def nursery_small(nursery):
    frame, _ = nursery
    return small_table(frame, FEATURES, "class", 300)


@pytest.mark.parametrize("family", ["tree", *sorted(FAMILIES)])
def test_a_record_of_every_classifier_family_is_valid(nursery_small, family):
    table, X, D, y = nursery_small
    if family == "tree":
        model = tree_from_sklearn(DecisionTreeClassifier(max_depth=4, random_state=0).fit(D, y), X, y=y)
    else:
        model = FAMILIES[family](X, D, y)
    audit = ppdm.audit(model, table, THREAT, time_limit=60 if family != "tree" else None)
    record = audit.release_record(inputs={"data": table})
    validate(record, schema())
    assert record["model"]["trees"] == (1 if family == "tree" else model.n_trees)
    assert record["decision"] in DECISIONS and record["reasons"]
    (estimate,) = record["attacks"]
    assert estimate["baselines"]["prior"]["accuracy"] == audit.estimate.summary()["baseline"]["accuracy"]
    assert set(estimate["measures"]) == {"certain", "confident"}
    json.loads(json.dumps(record, allow_nan=False))  # plain JSON, no NaN


def test_a_regressor_and_a_membership_audit_records_are_valid(nursery, tmp_path):
    frame, _ = load_adult("train")
    table, X, D, y = regression_table(frame, "hours-per-week", 300, drop=("income",))
    _, model = REGRESSORS["tree"](X, D, y)
    regression = ppdm.audit(model, table, {"sensitive": "hours-per-week", "preset": "insider"}, tolerance=1.0)
    record = regression.release_record()
    validate(record, schema())
    assert record["model"]["regressor"] and record["attacks"][0]["role"] == "interval"
    assert record["attacks"][0]["measures"]["certain"] == regression.summary()["pinned"]

    nursery_frame, _ = nursery
    population = nursery_frame.sample(400, random_state=1).reset_index(drop=True)
    member = np.random.default_rng(1).random(len(population)) < 0.5
    train = population[member].reset_index(drop=True)
    tree = tree_from_sklearn(DecisionTreeClassifier(max_depth=4, random_state=0).fit(pd.get_dummies(train[FEATURES]).astype(float), train["class"]),
                             train[FEATURES], y=train["class"])  # fmt: skip
    path = tmp_path / "population.csv"
    population.assign(member=member).to_csv(path, index=False)
    membership = ppdm.audit(tree, membership=path)
    record = membership.release_record()
    validate(record, schema())
    assert record["target"]["text"] == "members_proved<=0,mia_tpr@1%<=0.02" and not record["target"]["given"]
    assert record["attacks"][0]["role"] == "membership" and record["attacks"][0]["baselines"]["prior"]["auc"] == 0.5
    by_role = {i["role"]: i for i in record["inputs"]}
    assert set(by_role) == {"model", "population"}  # the model in memory, hashed as its ppdm JSON
    entry = by_role["population"]
    assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_decision_needs_every_measure_met_and_measured():
    target = parse_target("certain=0,confident=5%@0.9")
    met = {"role": "estimate", "result": {}, "measures": {"certain": 0.0, "confident": 0.01}, "target": {"certain": "met", "confident": "met"}}
    assert decide([met], target, None)[0] == "release"
    defended = {"chosen": "Method 1, s=5", "chosen_family": "pruning-1"}
    assert decide([met], target, defended)[0] == "release the defended model"
    assert decide([met], target, {"chosen": "unprotected (input model)", "chosen_family": "unprotected"})[0] == "release"
    missed = {**met, "measures": {"certain": 3.0, "confident": 0.01}, "target": {"certain": "not met", "confident": "met"}}
    decision, reasons = decide([missed], target, defended)
    assert decision == "do not release" and "certain" in reasons[0]
    unknown = {**met, "measures": {"certain": 0.0, "confident": None}, "target": {"certain": "met", "confident": "not measured"}}
    decision, reasons = decide([unknown], target, None)
    assert decision == "do not release" and "cannot be checked" in reasons[0]


def test_the_record_names_what_the_audit_took_as_published_not_what_the_file_holds(nursery_small):
    """An audit at --publish error-rates of a tree holding class counts: the record's model said
    'publishing class-counts' beside a threat model and a report saying error-rates."""
    table, X, D, y = nursery_small
    model = tree_from_sklearn(DecisionTreeClassifier(max_depth=4, random_state=0).fit(D, y), X, y=y)
    threat = ppdm.ThreatModel(sensitive="class", known=FEATURES, publish="labels")
    record = ppdm.audit(model, table, threat).release_record(inputs={"data": table})
    assert record["model"]["publishes"] == "labels"
    assert "publishes labels" in record["threat_model"]["description"]
    full = ppdm.audit(model, table, THREAT).release_record(inputs={"data": table})
    assert full["model"]["publishes"] == model.disclosure.value


def test_a_python_audit_records_its_tables_and_model_hashes(audit, tmp_path):
    import hashlib

    import ppdm
    from ppdm.tree.model_files import save_model

    tree, frame, threat, _ = audit
    record = ppdm.audit(tree, frame, threat).release_record()
    inputs = {i["role"]: i for i in record["inputs"]}
    assert set(inputs) == {"model", "data"}
    frame.to_csv(tmp_path / "t.csv", index=False)  # the same bytes as the file the user would write
    assert inputs["data"]["sha256"] == hashlib.sha256((tmp_path / "t.csv").read_bytes()).hexdigest()
    assert "to_csv(index=False)" in inputs["data"]["note"]
    save_model(tree, tmp_path / "m.json")
    assert inputs["model"]["sha256"] == hashlib.sha256((tmp_path / "m.json").read_bytes()).hexdigest()
