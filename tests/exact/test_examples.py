"""The exact audit on the papers' examples, against the maximum-entropy estimate, and on real data."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import exact_attack
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.attacks.models.rules import rules_attack
from ppdm.learn import ID3Classifier
from ppdm.maxent.constraints.rule_constraints import RuleKnowledge
from ppdm.rules import mine_rules


def _group(result, **qi):  # type: ignore[no-untyped-def]
    table = result.groups.table
    mask = np.ones(len(table), dtype=bool)
    for k, v in qi.items():
        mask &= (table[k].astype(str) == v).to_numpy()
    return int(np.flatnonzero(mask)[0])


def _example1_tree(d2: pd.DataFrame):  # type: ignore[no-untyped-def]
    model = ID3Classifier(max_depth=1).fit(d2[["Age", "Education"]], d2["Salary"])  # Fig. 2(b)
    model.tree_.class_attribute = "Salary"
    return model.tree_


def test_paper_000_example_1_in_integer_form(d2: pd.DataFrame) -> None:
    """Fig. 2: the tree splits on Age. Youth (q1) and MiddleAge (q4) are proved; in the Senior
    leaf (one record ≤50K, one >50K) q2 and q3 hold one record each: on whole counts each is
    ≤50K or >50K, never both, and exactly one of them is >50K. The estimate says 0.5 for each."""
    tree = _example1_tree(d2)
    assert tree.root.split.attribute == "Age"
    result = exact_attack(tree, d2, ThreatModel(known=["Age", "Education"], sensitive="Salary"))
    values = list(result.values)
    le, gt = values.index("<=50K"), values.index(">50K")
    q1, q4 = _group(result, Age="Youth"), _group(result, Age="MiddleAge")
    q2, q3 = _group(result, Age="Senior", Education="Masters"), _group(result, Age="Senior", Education="Doctorate")
    assert result.bounds["min"][q1, le] == 2 and result.bounds["min"][q4, gt] == 2
    assert result.certain_groups[[q1, q4]].all() and not result.certain_groups[[q2, q3]].any()
    for q in (q2, q3):
        assert result.bounds["min"][q].tolist() == [0, 0] and result.bounds["max"][q].tolist() == [1, 1]
    assert result.details["exact"]["method"] == "network"
    estimate = maxent_attack(tree, d2, ThreatModel(known=["Age", "Education"], sensitive="Salary"))
    assert estimate.posterior[q2, gt] == pytest.approx(0.5, abs=1e-6)
    assert set(np.flatnonzero(estimate.certain_groups)) == {q1, q4}


def test_paper_004_example_2_in_integer_form() -> None:
    """§I-A: 'Education = Doctorate => 50K+' (support 0.67, confidence 1) is published and
    'Gender = Female => 50K+' is not: on whole counts the third person earns 50K−, proved."""
    frame = pd.DataFrame(
        [("Doctorate", "Female", "50K+"), ("Doctorate", "Male", "50K+"), ("Masters", "Female", "50K-")],
        columns=["Education", "Gender", "Salary"],
    )
    for publish in ("exact", "thresholds"):
        rules = mine_rules(frame, ["Education", "Gender"], "Salary", 0.6, 0.9, values=("50K+", "50K-")).published(publish)
        assert len(rules.rules) == 1
        result = exact_attack(rules, frame)
        assert result.certain_groups.all()
        third = _group(result, Education="Masters")
        assert result.bounds["min"][third].tolist() == [0, 1]
        assert result.bounds["max"][third].tolist() == [0, 1]
        without = exact_attack(rules, frame, rule_knowledge=RuleKnowledge(nar=False))
        assert not without.certain_groups[third]  # the NAR row is what decides it


@st.composite
def tables(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(4, 9))
    col = lambda vals: draw(st.lists(st.sampled_from(vals), min_size=n, max_size=n))  # noqa: E731
    return pd.DataFrame({"A": col(["a0", "a1", "a2"]), "B": col(["b0", "b1"]), "S": col(["s0", "s1", "s2"]), "Y": col(["n", "y"])})


@pytest.mark.parametrize("publish", ["class-counts", "error-rates"])
@given(frame=tables(), known_class=st.booleans())
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_where_the_estimate_is_certain_the_exact_audit_proves_it(publish: str, frame: pd.DataFrame, known_class: bool) -> None:
    model = ID3Classifier(max_depth=2).fit(frame[["A", "B", "S"]], frame["Y"])
    model.tree_.class_attribute = "Y"
    threat = ThreatModel(sensitive="S", known=("A", "Y") if known_class else ("A",), publish=publish)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimate = maxent_attack(model.tree_, frame, threat=threat)
    proved = exact_attack(model.tree_, frame, threat=threat)
    assert not (estimate.certain_groups & ~proved.certain_groups).any()
    truth = frame.assign(one=1).groupby(["S"]).size()  # noqa: F841 (the truth is consistent: checked inside)


def test_rule_sets_where_the_estimate_is_certain_the_exact_audit_proves_it() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"A": rng.choice(["a0", "a1", "a2"], 30), "B": rng.choice(["b0", "b1"], 30), "S": rng.choice(["s0", "s1"], 30, p=[0.8, 0.2])})
    for s, c in [(0.1, 0.6), (0.05, 0.9), (0.2, 0.8)]:
        rules = mine_rules(frame, ["A", "B"], "S", s, c)
        estimate = rules_attack(rules, frame)
        proved = exact_attack(rules, frame)
        assert not (estimate.certain_groups & ~proved.certain_groups).any()


def _truth_inside(result) -> None:  # type: ignore[no-untyped-def]
    counts = result.groups.value_counts(result.true_codes, len(result.values))
    assert (result.bounds["min"] <= counts).all() and (counts <= result.bounds["max"]).all()
    certain = result.certain_groups
    assert (result.predicted()[certain[result.groups.group_of_record]] == result.true_codes[certain[result.groups.group_of_record]]).all()


def test_the_truth_is_consistent_on_nursery(nursery) -> None:  # type: ignore[no-untyped-def]
    frame, roles = nursery
    inputs = [c for c in frame.columns if c != "class"]
    model = ID3Classifier(max_depth=4).fit(frame[inputs], frame["class"])
    model.tree_.class_attribute = "class"
    for threat in (
        ThreatModel(sensitive="class", known=tuple(c for c in inputs if c != "health")),
        ThreatModel(sensitive="health", known=(*[c for c in inputs if c != "health"], "class"), sa_published=False),
    ):
        result = exact_attack(model.tree_, frame, threat=threat, time_limit=20)
        _truth_inside(result)
        assert result.details["exact"]["method"] == "network"


@pytest.mark.slow
def test_the_truth_is_consistent_on_adult(adult_train) -> None:  # type: ignore[no-untyped-def]
    from ppdm.learn import C45Classifier

    frame, roles = adult_train
    inputs = [c for c in roles.quasi_identifiers if c != "fnlwgt"]
    model = C45Classifier(max_depth=6).fit(frame[inputs], frame["income"])
    model.tree_.class_attribute = "income"
    known = (*[c for c in inputs if c != "marital-status"], "income")
    for sa in (False, True):
        result = exact_attack(model.tree_, frame, threat=ThreatModel(sensitive="marital-status", known=known, sa_published=sa), time_limit=60)
        _truth_inside(result)
