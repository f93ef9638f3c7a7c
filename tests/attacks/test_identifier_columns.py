"""A preset leaves out of what the attacker knows the columns that identify each row (an ``ID``)
and that the model does not split on, and says so; the audit is the same without them."""

from __future__ import annotations

import numpy as np
import pytest

import ppdm
from ppdm.attacks.core.threat import ThreatModel, identifier_columns
from ppdm.data.datasets import load_nursery
from ppdm.learn import ID3Classifier


@pytest.fixture(scope="module")
def nursery_with_ids():
    frame, _ = load_nursery()
    frame = frame.sample(400, random_state=3).reset_index(drop=True)
    frame["class"] = frame["class"].cat.remove_unused_categories()
    frame.insert(0, "ID", np.arange(7000, 7400))
    frame["customer"] = [f"c{i:05d}" for i in range(len(frame))]
    frame["weight"] = np.random.default_rng(0).random(len(frame))  # a measurement, unique per row, not an identifier
    features = ["parents", "has_nurs", "form", "children", "housing", "finance", "social"]
    tree = ID3Classifier(max_depth=4).fit(frame[features], frame["class"]).tree_
    tree.class_attribute = "class"
    return frame, tree


def test_identifiers_are_whole_numbers_or_texts_unique_per_row(nursery_with_ids):
    frame, _ = nursery_with_ids
    assert identifier_columns(frame, list(frame.columns)) == ["ID", "customer"]


def test_the_insider_preset_leaves_identifiers_out_with_a_note(nursery_with_ids):
    frame, tree = nursery_with_ids
    resolved = ThreatModel(sensitive="health", preset="insider").resolve(frame, "class", splits=tree.split_attributes)
    assert resolved.left_out == ("ID", "customer") and "ID" not in resolved.known and "weight" in resolved.known
    assert "(not ID, customer: an identifier)" in resolved.describe()
    (note,) = resolved.notes()
    assert "'ID', 'customer' are left out of what the attacker knows: unique per row" in note
    declared = ThreatModel(sensitive="health", known=("ID", "parents")).resolve(frame, "class", splits=tree.split_attributes)
    assert declared.known == ("ID", "parents") and not declared.notes()  # declared columns are the user's


def test_the_audit_is_the_same_without_the_identifier(nursery_with_ids):
    frame, tree = nursery_with_ids
    threat = ThreatModel(sensitive="health", preset="insider")
    audit = ppdm.audit(tree, frame.drop(columns=["weight"]), threat)
    assert audit.threat.left_out == ("ID", "customer") and audit.threat.notes()
    assert audit.main.groups.n_groups < len(frame)  # not every person a group of one
    with_ids = ppdm.audit(tree, frame.drop(columns=["weight"]), ThreatModel(sensitive="health", known=(*audit.threat.known, "ID", "customer")))
    assert with_ids.main.groups.n_groups == len(frame)
    people, alone = audit.people(), with_ids.people()
    posterior = [c for c in people.columns if c.startswith("P(")]
    assert np.allclose(people[posterior].to_numpy(float), alone[posterior].to_numpy(float), atol=1e-6)


def test_a_column_the_model_splits_on_stays_known(nursery_with_ids):
    frame, tree = nursery_with_ids
    resolved = ThreatModel(sensitive="health", preset="insider").resolve(frame, "class", splits=(*tree.split_attributes, "ID"))
    assert "ID" in resolved.known and resolved.left_out == ("customer",)
