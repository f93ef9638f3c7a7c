"""Beside an estimate, the exact audit's target line judges what a proof measures, certainty: its
people are held at 0 or 1, so read as confidence they said "met" where the estimate holds 36 % of
the people at confidence ≥ 0.9 (a new user's trial, XGBoost under the census attacker)."""

from __future__ import annotations

import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.attacks.core.threat import ThreatModel


def test_the_exact_line_judges_certainty_and_the_estimate_line_the_whole_target(nursery):
    frame, roles = nursery
    table = frame.sample(600, random_state=0).reset_index(drop=True)
    inputs = ["parents", "has_nurs", "form", "children"]
    est = DecisionTreeClassifier(max_depth=4, random_state=0).fit(pd.get_dummies(table[inputs]).astype(float), table[roles.class_attribute])
    done = ppdm.audit(est, table[[*inputs, roles.class_attribute]], ThreatModel(preset="insider", sensitive="form"), exact=True, progress=False)
    estimate, exact = done.target_lines()
    assert estimate.startswith("estimate: Target (nobody certain, ≤ 1 % at confidence ≥ 0.9)")
    assert exact.startswith("exact audit (what it proves: certainty): Target (nobody certain):")
    alone = ppdm.audit(est, table[[*inputs, roles.class_attribute]], ThreatModel(preset="insider", sensitive="form"), exact=True, estimate=False, progress=False)
    assert alone.target_lines()[0].startswith("exact audit: Target (nobody certain, ≤ 1 % at confidence ≥ 0.9)")
