"""``ppdm.audit(..., options=AuditOptions(...))`` (issue 40): one frozen object holds how the
audit runs, nesting the solver options that exist; the keyword arguments keep working, and
each given other than its default overrides the options' value."""

from __future__ import annotations

import numpy as np
import pytest

import ppdm
from ppdm.attacks.models.explicit import ForestAuditOptions
from ppdm.errors import ArgumentTypeError, PpdmError
from ppdm.exact.options import SearchOptions
from ppdm.learn import ID3Classifier
from ppdm.pipeline.options import AuditOptions

from families import FAMILIES, tiny_table

THREAT = ppdm.ThreatModel(sensitive="a", known=("b",))


@pytest.fixture(scope="module")
def tiny():  # type: ignore[no-untyped-def]
    frame, X, D, y = tiny_table(5)
    return frame, ID3Classifier().fit(X, y).tree_, FAMILIES["random-forest"](X, D, y)


def _figures(audit: ppdm.Audit) -> tuple[np.ndarray, list[bool]]:
    assert audit.estimate is not None
    certain = [] if audit.proved is None else audit.proved.certain_groups.tolist()
    return audit.estimate.posterior, certain


def test_options_audit_as_the_keywords_do(tiny) -> None:  # type: ignore[no-untyped-def]
    frame, tree, _ = tiny
    by_keywords = ppdm.audit(tree, frame, THREAT, exact=True, labels=False, exact_detail="bounds", progress=False)
    by_options = ppdm.audit(tree, frame, THREAT, options=AuditOptions(exact=True, labels=False, exact_detail="bounds"), progress=False)
    (p1, c1), (p2, c2) = _figures(by_keywords), _figures(by_options)
    np.testing.assert_array_equal(p1, p2)
    assert c1 == c2 and by_options.proved is not None
    # a keyword other than its default overrides the options: labels=True is the default, so the options' False holds
    assert AuditOptions(labels=False, time_limit=5.0).with_keywords(labels=True, time_limit=7.0) == AuditOptions(labels=False, time_limit=7.0)


def test_the_nested_search_options_reach_the_exact_audit(tiny) -> None:  # type: ignore[no-untyped-def]
    frame, _, forest = tiny
    heard: list[object] = []
    chosen = ppdm.audit(forest, frame, THREAT, options=AuditOptions(exact=True, search=SearchOptions(engine="milp", progress=heard.append)), progress=False)
    default = ppdm.audit(forest, frame, THREAT, exact=True, progress=False)
    assert chosen.proved is not None and default.proved is not None
    assert chosen.proved.details["exact"]["method"] == "milp" != default.proved.details["exact"]["method"]
    assert heard and all(type(p).__name__ == "SearchProgress" for p in heard)
    np.testing.assert_array_equal(chosen.proved.certain_groups, default.proved.certain_groups)


def test_the_nested_forest_options_reach_the_forest_estimate(tiny) -> None:  # type: ignore[no-untyped-def]
    frame, _, forest = tiny
    capped = ppdm.audit(forest, frame, THREAT, options=AuditOptions(forest=ForestAuditOptions(max_routed=1)), progress=False)
    explicit = ppdm.audit(forest, frame, THREAT, progress=False)
    assert capped.estimate is not None and explicit.estimate is not None
    assert "too large" in capped.estimate.details["note_details"]  # past the (tiny) cap the pooled estimate answers
    assert explicit.estimate.details["status"] == "optimal" and "note_details" not in explicit.estimate.details


def test_options_of_another_type_are_refused(tiny) -> None:  # type: ignore[no-untyped-def]
    frame, tree, _ = tiny
    with pytest.raises(ArgumentTypeError, match="options must be an AuditOptions"):
        ppdm.audit(tree, frame, THREAT, options={"exact": True})  # type: ignore[arg-type]
    with pytest.raises(PpdmError, match="no option 'exact_seconds'"):
        AuditOptions().with_keywords(exact_seconds=3)
    with pytest.raises(PpdmError, match="ForestAuditOptions"):
        AuditOptions(forest=SearchOptions())  # type: ignore[arg-type]
    with pytest.raises(PpdmError, match="exact_time_limit needs exact=True"):
        ppdm.audit(tree, frame, THREAT, options=AuditOptions(exact_time_limit=3.0))
