"""People counted once: a person who lacks the sensitive column a tree splits on reaches several
leaves, and the report's counts of people must still agree with the verdict's (each person under
the set of leaves they can reach); the estimate and the proof agree on who is proved."""

import re

import pytest
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.report import build_report

from loan_table import FEATURES, loan_table


@pytest.fixture(scope="module")
def report():
    data = loan_table()
    est = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(data[FEATURES], data["Personal Loan"])
    tree = ppdm.from_estimator(est, data[FEATURES], data["Personal Loan"])
    threat = ppdm.ThreatModel(sensitive="Education", known=("Age", "Income", "Family", "CCAvg"), class_known=True)
    audit = ppdm.audit(tree, data, threat, exact=True, exact_time_limit=30)
    return build_report(audit.results, audit.model, audit.threat)


def test_leaf_sets_count_each_proved_person_once(report):
    estimate = report["attacks"][0]
    proved = estimate["summary"]["certain_right"]
    assert proved > 0
    by_leaf = sum(r["certain_right"] for r in estimate["exposure"])
    assert by_leaf > proved  # under every leaf they can reach: not people
    assert sum(s["certain_right"] for s in estimate["leaf_sets"]) == proved
    assert all(len(s["leaves"]) >= 1 for s in estimate["leaf_sets"])
    line = next(a for a in report["advice"] if a.startswith(estimate["name"]))
    covered, total = (int(x.replace(",", "")) for x in re.search(r"\(([\d,]+) of ([\d,]+); each person counted once", line).groups())
    assert total == proved and 0.8 * proved <= covered <= proved


def test_the_proof_is_inside_the_estimate(report):
    r = report["reconciled"]
    assert r["proved"] == report["attacks"][1]["summary"]["certain_right"] and r["proved_only"] == 0
    assert r["both"] == r["proved"] <= r["estimated_certain"] == report["attacks"][0]["summary"]["certain_right"]
    assert r["undecided"] == 0


def test_the_values_are_the_data_s(report):
    for attack in report["attacks"]:
        assert attack["values"] == ["1", "2", "3"], attack["values"]
        assert attack["summary"]["baseline"]["majority_guess"] in ("1", "2", "3")
