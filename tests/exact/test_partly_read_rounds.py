"""A proof over fewer rows proves fewer certainties: the boosting rounds whose real-valued rows
the exact audit reads only in part are counted among those it left out, so "nobody proved
certain" there is met on a part of the model, not judged on the whole, and never released (an
XGBoost audit read 4 of 5 rounds so and said "all 5 read", target met)."""

from __future__ import annotations

import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from small_nursery import FEATURES, small_nursery

import ppdm
from ppdm.attacks.models.exact import PARTLY_READ
from ppdm.pipeline.options import AuditOptions


def test_rounds_read_in_part_leave_the_whole_unjudged() -> None:
    frame = small_nursery(4, rows=500)
    model = HistGradientBoostingClassifier(max_iter=5, max_depth=3, random_state=0).fit(pd.get_dummies(frame[FEATURES]), frame["class"])
    threat = ppdm.ThreatModel(sensitive=FEATURES[0], known=tuple(FEATURES[1:3]), class_known=True)
    audit = ppdm.audit(model, frame, threat, exact=True, options=AuditOptions(estimate=False), target="certain=0", progress=False)
    scope = audit.proved.summary()["scope"]
    partly = scope["left_out"].get(PARTLY_READ, [])
    assert partly, "the case under test: some round's rows have real coefficients"
    line = next(line for line in str(audit).splitlines() if "Target" in line)
    assert "met on the part audited only" in line or "not met" in line
    assert audit.release_record()["decision"] == "do not release"


def test_a_boosted_models_trees_are_read_from_the_first_round_on() -> None:
    """Each round's leaf values are fitted to the rounds before it: the trees 1, 2 alone made the
    truth infeasible ("the table contradicts what the model publishes"); 0:2 is read."""
    import pytest

    from ppdm.errors import PpdmError

    frame = small_nursery(4, rows=500)
    model = HistGradientBoostingClassifier(max_iter=5, max_depth=3, random_state=0).fit(pd.get_dummies(frame[FEATURES]), (frame["class"] == "not_recom"))
    table = frame.assign(label=frame["class"] == "not_recom").drop(columns="class")
    threat = ppdm.ThreatModel(sensitive=FEATURES[0], known=tuple(FEATURES[1:3]), class_known=True)
    with pytest.raises(PpdmError, match=r"trees 1,2: a boosted model is read from its first round on \(trees 0:K\)"):
        ppdm.audit(model, table, threat, trees="1,2", class_attribute="label", progress=False)
    assert ppdm.audit(model, table, threat, trees="0:2", class_attribute="label", progress=False).estimate is not None
