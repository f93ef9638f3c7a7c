"""The exact audit's time limit reaches every LP it runs (HiGHS's own ``time_limit``).

Without it one relaxation LP on full Nursery ran 150 s past a 20 s budget: the deadline was only
checked between solver calls. The test records the options each LP receives instead of timing.
"""

from __future__ import annotations

import pandas as pd
import pytest

import ppdm.exact.search as search
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import exact_attack
from ppdm.tree import forest_from_sklearn


@pytest.mark.parametrize("time_limit", [None, 30.0])
def test_every_lp_gets_what_is_left_of_the_budget(nursery, monkeypatch, time_limit) -> None:  # type: ignore[no-untyped-def]
    from sklearn.ensemble import RandomForestClassifier

    frame, roles = nursery
    frame = frame.sample(400, random_state=0).reset_index(drop=True)
    X, y = frame.drop(columns=[roles.class_attribute]), frame[roles.class_attribute]
    est = RandomForestClassifier(3, max_depth=4, random_state=0).fit(pd.get_dummies(X).astype(float), y)
    forest = forest_from_sklearn(est, X, y=y)
    seen: list[dict] = []
    real = search.linprog

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(dict(kwargs.get("options") or {}))
        return real(*args, **kwargs)

    monkeypatch.setattr(search, "linprog", recording)
    known = tuple(c for c in frame.columns if c != "health")
    exact_attack(forest, frame, threat=ThreatModel(sensitive="health", known=known, sa_published=True), time_limit=time_limit)
    assert seen, "the audit ran no LP: the test no longer covers the relaxation"
    if time_limit is None:
        assert all("time_limit" not in o for o in seen)
    else:
        assert all(0 < o["time_limit"] <= time_limit for o in seen)
