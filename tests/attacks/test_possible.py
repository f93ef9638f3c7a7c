"""Possible values under partial knowledge (ppdm.attacks.models.possible): never a wrong value ruled out
(the truth always kept, brute force on tiny forests of every family), exact with the search, and
the audits built on them (a sensitive input in the leaf attacks, a forest too large to enumerate)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

import ppdm
from ppdm.attacks import homogeneity_attack, possible_attack, possible_values
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.possible import PossibleOptions
from ppdm.cli import main
from ppdm.errors import PpdmError
from ppdm.tree import save_forest
from ppdm.tree.forest import parse_trees

from families import FAMILIES, small_table, tiny_table
from oracles import possible_by_enumeration

SETTINGS = [(["a"], "b"), (["a", "y"], "b"), (["c"], "y"), (["a", "c"], "y"), (["b", "y"], "a"), ([], "y")]


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("seed", [0, 1])
def test_possible_values_equal_brute_force_on_tiny_forests(family, seed):
    table, X, D, y = tiny_table(seed)
    forest = FAMILIES[family](X, D, y)
    for known, sensitive in SETTINGS:
        propagated = possible_values(forest, table, known, sensitive)
        exact = possible_values(forest, table, known, sensitive, PossibleOptions(search_nodes=500))
        truth = possible_by_enumeration(forest, table, known, sensitive, exact.values)
        where = (family, seed, known, sensitive)
        assert propagated.truth_kept() and exact.truth_kept(), where
        assert not (truth & ~propagated.possible).any(), where  # propagation never removes a possible value
        assert exact.decided.all(), where
        np.testing.assert_array_equal(exact.possible, truth, err_msg=str(where))
        # a person with one value left is certain, and that value is theirs
        certain = exact.certain
        assert (exact.possible[certain].argmax(axis=1) == exact.true_codes[certain]).all(), where


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("dataset", ["adult", "nursery"])
def test_the_truth_is_always_possible_on_real_tables(family, dataset, adult_train, nursery):
    frame, roles = adult_train if dataset == "adult" else nursery
    features = [c for c in frame.columns if c != roles.class_attribute][:8]
    table, X, D, y = small_table(frame, features, roles.class_attribute, 400)
    forest = FAMILIES[family](X, D, y)
    for known, sensitive in ((features[:2], y.name), ([*features[:3], y.name], features[3]), ([y.name, *features[1:]], features[0])):
        pv = possible_values(forest, table, known, sensitive)
        assert pv.truth_kept(), (family, known, sensitive)
        assert pv.possible.any(axis=1).all()


def test_an_insider_with_every_split_attribute_known_is_a_leaf_attack():
    table, X, D, y = tiny_table(3, n=60)
    forest = FAMILIES["random-forest-no-bootstrap"](X, D, y)
    insider = possible_values(forest, table, ["a", "b", "c"], "y")
    assert insider.passes >= 1 and insider.converged
    # every split attribute known: each tree routes the record to one leaf; a class is possible
    # when every tree's leaf holds some of it
    for r in range(len(table)):
        row = table.iloc[[r]]
        ok = np.ones(2, dtype=bool)
        for tree in forest.trees:
            ok &= tree.nodes[tree.apply(row)[0]].counts > 0
        np.testing.assert_array_equal(insider.possible[r], ok)


def test_homogeneity_reads_a_sensitive_input_through_possible_values(nursery):
    frame, roles = nursery
    features = [c for c in frame.columns if c != roles.class_attribute]
    table, X, D, y = small_table(frame, features, roles.class_attribute, 800)
    forest = FAMILIES["random-forest"](X, D, y)
    threat = ThreatModel(sensitive="social", known=(*features[:5], y.name))
    result = homogeneity_attack(forest, table, threat)
    assert result.attack == "homogeneity" and result.sensitive == "social"
    right = result.predicted() == result.true_codes
    assert (right[result.exposed]).all()  # every exposure is right
    summary = result.summary()
    assert summary["certain_wrong"] == 0
    assert summary["attacker_accuracy"] >= summary["baseline"]["accuracy"] - 1e-12  # never below the prior


def test_the_other_leaf_attacks_name_the_one_that_takes_a_sensitive_input(nursery):
    frame, roles = nursery
    features = [c for c in frame.columns if c != roles.class_attribute]
    table, X, D, y = small_table(frame, features, roles.class_attribute, 300)
    forest = FAMILIES["random-forest"](X, D, y)
    from ppdm.attacks import uniqueness_attack

    with pytest.raises(PpdmError, match="homogeneity attack reads each person's possible values"):
        uniqueness_attack(forest, table, ThreatModel(sensitive="social", known=tuple(features[:5])))


def test_an_audit_too_large_to_enumerate_reports_possible_values_and_says_why(adult_train):
    """With class counts the fallback is the pooled per-tree estimate (tests/attacks/test_forest_pooled.py);
    a forest whose trees publish only their labels gets each person's possible values."""
    frame, roles = adult_train
    features = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "hours-per-week"]
    table, X, D, y = small_table(frame, features, roles.class_attribute, 500)
    forest = FAMILIES["random-forest"](X, D, y)
    threat = ThreatModel(sensitive="marital-status", known=("age", "sex", "race"))
    assert ppdm.audit(forest, table, threat).estimate.details["method"] == "pooled"
    audit = ppdm.audit(forest, table, replace(threat, publish="labels"))
    details = audit.estimate.details
    assert audit.estimate.attack == "possible values"
    assert "no maximum-entropy estimate" in details["note"] and "--trees" in details["note"]
    assert "possible values of 'marital-status'" in str(audit)
    people = audit.people()
    assert people["certain"].sum() == details["certain_proved"]
    assert (people.loc[people["certain"], "guess"] == people.loc[people["certain"], "truth"]).all()
    summary = audit.estimate.summary()
    assert summary["attacker_accuracy"] >= summary["baseline"]["accuracy"] - 1e-12


def test_auditing_a_subset_of_the_trees_says_it_is_a_lower_bound(nursery, tmp_path):
    frame, roles = nursery
    features = [c for c in frame.columns if c != roles.class_attribute]
    table, X, D, y = small_table(frame, features, roles.class_attribute, 300)
    forest = FAMILIES["random-forest-no-bootstrap"](X, D, y)
    audit = ppdm.audit(forest, table, ThreatModel(sensitive=y.name, known=tuple(features)), trees="0:2")
    assert audit.estimate.details["trees_audited"].startswith("trees 0:2 of 4 (a lower bound")
    assert "trees 0:2 of 4" in str(audit)
    assert audit.estimate.details["trees_used"] == 2
    # the CLI spelling, and one line with exit 2 for a bad one
    save_forest(forest, tmp_path / "forest.json")
    table.to_csv(tmp_path / "train.csv", index=False)
    args = ["audit", "--model", str(tmp_path / "forest.json"), "--data", str(tmp_path / "train.csv"), "--sensitive", y.name,
            "--known", ",".join(features)]
    ok = CliRunner().invoke(main, [*args, "--trees", "1,3"])
    assert ok.exit_code == 0, ok.output
    assert "trees 1,3 of 4" in ok.output
    bad = CliRunner().invoke(main, [*args, "--trees", "zero:ten"])
    assert bad.exit_code == 2 and "--trees 'zero:ten'" in bad.output
    assert len(bad.output.strip().splitlines()) == 1


def test_parse_trees():
    assert parse_trees("0:3", 10) == [0, 1, 2]
    assert parse_trees(":2", 5) == [0, 1]
    assert parse_trees("4,1", 5) == [4, 1]
    assert parse_trees(range(2), 5) == [0, 1]
    with pytest.raises(PpdmError, match="the forest has 5 trees"):
        parse_trees("7:9", 5)
    with pytest.raises(PpdmError, match=r"trees '3,3': tree 3 is named twice"):
        parse_trees("3,3", 5)
    with pytest.raises(PpdmError, match=r"tree 1 is named twice"):
        parse_trees([1, 2, 1], 5)
    table, X, D, y = tiny_table(0)
    forest = FAMILIES["random-forest"](X, D, y)
    with pytest.raises(PpdmError, match="tree 9 does not exist"):
        forest.select([9])
    assert possible_attack(forest.select([0]), table, ThreatModel(sensitive="y", known=("a",))).details["trees"] == 1


def test_the_defense_search_audits_a_forest_too_large_to_enumerate(adult_train):
    from ppdm.defend.audits import maxent_auditor

    frame, roles = adult_train
    features = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "hours-per-week"]
    table, X, D, y = small_table(frame, features, roles.class_attribute, 500)
    forest = FAMILIES["random-forest"](X, D, y)
    threat = ThreatModel(sensitive="marital-status", known=("age", "sex", "race")).resolve(table, y.name)
    result = maxent_auditor(forest, table, threat)
    assert result is not None and result.details["method"] == "pooled"
    assert "an approximate estimate: the joint maximum-entropy table is too large" in result.details["note"]
