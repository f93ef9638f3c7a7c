"""What was read (trees, boosting rounds, rules, rows, and why any were left out) is stated once:
the audit's JSON (``"scope"``), the printout, the report's first card and the release record all
read the one :class:`~ppdm.attacks.core.scope.Scope` (issue 40, deliverable 6). A 50-round XGBoost
insider audit once wrote ``"trees_used": 1``, ``"trees_left_out": [1, ..., 49]`` beside
``"rounds": {"used": 50}`` and "all 50 boosting rounds audited"."""

from __future__ import annotations

import json
from html import escape

import numpy as np
import pandas as pd
import pytest
from regressors import REGRESSORS, regression_table
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.attacks.core.scope import READ_KEYS, Scope
from ppdm.report.verdict import not_judged
from ppdm.rules.mining import mine_rules
from ppdm.tree import forest_from_sklearn, tree_from_sklearn

from families import FAMILIES, small_table

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]
THREAT = ppdm.ThreatModel(sensitive="class", known=FEATURES)


def _stated(audit, tmp_path) -> Scope:
    """The audit's scope as its JSON states it, after checking that the printout, the report
    (its first card, or a regressor's card) and the release record state the same."""
    audit.save(tmp_path / "audit.json")
    payload = json.loads((tmp_path / "audit.json").read_text())
    summary = payload.get("summary") or payload["membership"]
    words = {"trees_used"} if "membership" in payload else set()  # a membership audit's counting modes, in words
    assert not (set(READ_KEYS) - {"scope"} - words) & set(summary)  # stated once
    stated = summary["scope"]
    scope = Scope.from_json(stated)
    assert scope.line().strip() in str(audit)  # the printout
    report = audit.report(tmp_path / "audit.html")
    if "audited" in report:  # a classifier's or a membership audit's first card
        facts = {f["label"]: f["text"] for f in report["audited"]}
        assert scope.sentence() in facts.values(), facts
    else:  # a regressor's card
        assert escape(scope.sentence()) in (tmp_path / "audit.html").read_text()
    record = audit.release_record(inputs={})
    for entry in record["attacks"]:
        assert entry["result"]["scope"] == stated if entry["role"] != "exact" else Scope.from_json(entry["result"]["scope"]).trees == scope.trees
    assert record["model"]["trees_audited"] == scope.asked
    assert scope.records in (None, payload.get("summary", {}).get("records", scope.records))
    return scope


@pytest.fixture(scope="module")
def nursery_small(nursery):
    frame, _ = nursery
    return small_table(frame, FEATURES, "class", 300)


CLASSIFIERS = ["tree", "random-forest", "xgboost", "lightgbm", "hist-gradient-boosting", "gradient-boosting"]


@pytest.mark.parametrize("family", CLASSIFIERS)
def test_every_classifier_family_states_what_was_read_once(nursery_small, family, tmp_path):
    table, X, D, y = nursery_small
    if family == "tree":
        model = tree_from_sklearn(DecisionTreeClassifier(max_depth=4, random_state=0).fit(D, y), X, y=y)
    else:
        model = FAMILIES[family](X, D, y)
    audit = ppdm.audit(model, table, THREAT, time_limit=60)
    scope = _stated(audit, tmp_path)
    trees = 1 if family == "tree" else model.n_trees
    assert scope.trees == trees and scope.read + len(scope.left_out_trees) == trees
    assert (scope.per_round is not None) == (family not in ("tree", "random-forest"))


def test_a_regressor_states_what_was_read_once(adult_train, tmp_path):
    table, X, D, y = regression_table(adult_train[0], "hours-per-week", 300, drop=("income",), seed=5)
    _, model = REGRESSORS["xgboost"](X, D, y)
    audit = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="hours-per-week", preset="insider"), tolerance=2.0, domain=(0, 120))
    scope = _stated(audit, tmp_path)
    assert scope.trees == model.n_trees and scope.per_round == 1


@pytest.mark.parametrize("published", ["tree", "rules"])
def test_a_membership_audit_states_what_was_read_once(nursery, published, tmp_path):
    frame, _ = nursery
    population = frame.sample(400, random_state=1).reset_index(drop=True)
    member = np.random.default_rng(1).random(len(population)) < 0.5
    train = population[member].reset_index(drop=True)
    if published == "tree":
        model = tree_from_sklearn(DecisionTreeClassifier(max_depth=4, random_state=0).fit(pd.get_dummies(train[FEATURES]).astype(float), train["class"]),
                                  train[FEATURES], y=train["class"])  # fmt: skip
    else:
        model = mine_rules(train, FEATURES[:4], "class", 0.05, 0.5).published("exact")
    path = tmp_path / "population.csv"
    population.assign(member=member).to_csv(path, index=False)
    audit = ppdm.audit(model, membership=path)
    scope = _stated(audit, tmp_path)
    assert scope.unit == ("rule" if published == "rules" else "tree")
    assert scope.trees == (len(model.rules) if published == "rules" else 1)


def test_a_subset_of_a_forest_is_stated_as_the_part_asked_for(nursery_small, tmp_path):
    table, X, D, y = nursery_small
    forest = forest_from_sklearn(RandomForestClassifier(10, max_depth=3, bootstrap=False, random_state=0, n_jobs=1).fit(D, y), X, y=y)
    audit = ppdm.audit(forest, table, THREAT, trees="0:3")
    scope = _stated(audit, tmp_path)
    assert scope.trees == scope.read == 3 and scope.asked.startswith("trees 0:3 of 10") and not scope.whole
    assert scope.sentence().startswith("3 trees read. The audit was asked for trees 0:3 of 10")
    assert "part audited only (the trees asked for, trees 0:3 of 10" in not_judged(audit.summary())  # the verdict's reading


def test_a_boosted_model_with_every_round_read_says_so_everywhere(tmp_path):
    """Every round's leaf values are read where the known columns decide each leaf's records,
    even though XGBoost's later trees publish no row counts (their class counts cannot be tied
    to the records): the scope says every round was read, and nothing says a tree was left out."""
    xgb = pytest.importorskip("xgboost")
    from families import tiny_table

    table, X, D, y = tiny_table(0, 200)
    table["s"] = pd.Categorical(np.where(table["a"] == "a0", np.random.default_rng(1).choice(["s0", "s1"], 200), "s1"))
    est = xgb.XGBClassifier(n_estimators=50, max_depth=3, n_jobs=1).fit(D, y.cat.codes.to_numpy())
    est.get_booster().save_model(tmp_path / "model.json")
    model = ppdm.load_model(tmp_path / "model.json", table, class_attribute="y")
    assert not any("sample-counts" in known or "class-counts" in known for known in model.known[1:])  # later trees publish no counts
    audit = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="s", preset="insider"), time_limit=60)
    scope = _stated(audit, tmp_path)
    assert scope.trees == scope.read == 50 and scope.per_round == 1 and scope.whole
    assert audit.estimate.details["trees_used"] == 50 and audit.estimate.details["trees_left_out"] == []
    assert "all 50 boosting rounds read" in str(audit) and "left out" not in str(audit)
    assert not not_judged(audit.summary()) and "part audited only" not in audit.target_lines()[0]


def test_the_cli_states_a_forest_subset_once_in_its_printout_json_report_and_record(tmp_path):
    """``ppdm audit --trees 0:3`` of a 10-tree forest: the printed scope line, ``--out``'s
    ``"scope"``, ``--report``'s first card and ``--record``'s results say the same."""
    from click.testing import CliRunner

    from ppdm.cli import main

    from forest_files import NURSERY_FEATURES, nursery_forest_files

    nursery_forest_files(tmp_path, rows=300, trees=10, depth=3)
    args = ["audit", "--model", tmp_path / "forest.json", "--data", tmp_path / "train.csv", "--sensitive", "class",
            "--known", ",".join(NURSERY_FEATURES), "--trees", "0:3", "--out", tmp_path / "a.json",
            "--report", tmp_path / "a.html", "--record", tmp_path / "record.json"]  # fmt: skip
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    stated = json.loads((tmp_path / "a.json").read_text())["summary"]["scope"]
    scope = Scope.from_json(stated)
    assert scope.trees == 3 and scope.asked.startswith("trees 0:3 of 10")
    assert scope.line() in result.output.splitlines()
    assert escape(scope.sentence()) in (tmp_path / "a.html").read_text()
    record = json.loads((tmp_path / "record.json").read_text())
    assert record["model"]["trees_audited"] == scope.asked and all(a["result"]["scope"] == stated for a in record["attacks"])
