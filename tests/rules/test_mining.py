"""Apriori mining of QI ⇒ SA rules (paper 004 §V-A): the paper's Figure 1, brute force, Adult."""

import itertools

import numpy as np
import pandas as pd
import pytest

from ppdm.errors import DataError, RulesError
from ppdm.rules import mine_rules

VALUES = ("50K+", "50K-")


def as_table(rules) -> dict:
    return {(r.antecedent, r.consequent): (round(r.support, 2), round(r.confidence, 2)) for r in rules.rules}


def test_figure1_rules_with_the_papers_support_and_confidence(salary_d):
    rules = mine_rules(salary_d, ["Education", "Gender"], "Salary", 0.3, 0.8, values=VALUES)
    got = as_table(rules)
    # the three rules of Figure 1(b), with its rounded values
    assert got[((("Education", "Doctorate"),), "50K+")] == (0.42, 0.83)
    assert got[((("Education", "Doctorate"), ("Gender", "Female")), "50K+")] == (0.33, 1.0)
    assert got[((("Gender", "Female"),), "50K+")] == (0.67, 0.89)
    # Figure 1(b) is not the complete rule set: Masters (all female) => 50K+ also qualifies (4/12, 4/5)
    assert got[((("Education", "Masters"),), "50K+")] == (0.33, 0.8)
    assert len(got) == 5
    assert rules.n_records == 12 and rules.publish == "exact" and rules.values == VALUES


def brute_force(frame, qis, sa, s, c):
    n = len(frame)
    out = set()
    for k in range(1, len(qis) + 1):
        for attrs in itertools.combinations(qis, k):
            for key, part in frame.groupby(list(attrs), observed=True):
                key = key if isinstance(key, tuple) else (key,)
                for x, nx in part[sa].value_counts().items():
                    if nx >= s * n - 1e-9 and nx >= c * len(part) - 1e-9:
                        out.add((tuple(zip(attrs, key)), x))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_apriori_equals_brute_force_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "a": rng.choice(list("xyz"), 200), "b": rng.choice(list("pq"), 200),
        "c": rng.choice(list("uvw"), 200, p=[0.6, 0.3, 0.1]), "d": rng.choice(list("mn"), 200, p=[0.8, 0.2]),
    })
    frame["s"] = np.where((frame.a == "x") & (rng.random(200) < 0.8), "hi", rng.choice(["hi", "lo", "mid"], 200))
    for s, c in [(0.05, 0.5), (0.1, 0.3), (0.02, 0.6)]:
        rules = mine_rules(frame, list("abcd"), "s", s, c)
        assert {(r.antecedent, r.consequent) for r in rules.rules} == brute_force(frame, list("abcd"), "s", s, c)


def test_thresholds_are_inclusive(salary_d):
    # Masters => 50K+ has confidence exactly 0.8 and support exactly 4/12
    rules = mine_rules(salary_d, ["Education", "Gender"], "Salary", 4 / 12, 0.8, values=VALUES)
    assert ((("Education", "Masters"),), "50K+") in {(r.antecedent, r.consequent) for r in rules.rules}


def test_adult_rule_counts_and_the_papers_example_rule(adult_train):
    frame, _ = adult_train
    qis = ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country", "education"]
    rules = mine_rules(frame, qis, "income", 0.1, 0.9)
    found = {r.antecedent: r for r in rules.rules}
    # §V-A: MaritalStatus = NeverMarried, Sex = Male => 50K−, support 0.168 (on "a portion" of Adult)
    rule = found[(("marital-status", "Never-married"), ("sex", "Male"))]
    assert rule.consequent == "<=50K" and abs(rule.support - 0.168) < 0.005 and rule.confidence > 0.9
    assert len(rules) == 49
    assert len(mine_rules(frame, qis, "income", 0.1, 0.6)) == 110
    # §VI-A: the paper reports 1337 rules at s = 0.02, c = 0.6
    assert abs(len(mine_rules(frame, qis, "income", 0.02, 0.6)) - 1337) < 20


def test_bad_input_names_the_culprit(salary_d):
    frame = salary_d
    with pytest.raises(DataError, match="Salry"):
        mine_rules(frame, ["Education"], "Salry", 0.3, 0.8)
    with pytest.raises(RulesError, match="min_support"):
        mine_rules(frame, ["Education"], "Salary", 1.5, 0.8)
    with pytest.raises(RulesError, match="'50K-'"):
        mine_rules(frame, ["Education"], "Salary", 0.3, 0.8, values=("50K+", "other"))
    frame.loc[3, "Salary"] = None
    with pytest.raises(RulesError, match="missing values"):
        mine_rules(frame, ["Education"], "Salary", 0.3, 0.8)
