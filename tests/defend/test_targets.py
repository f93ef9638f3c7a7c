"""Privacy targets: parsing, each measure on hand-made evidence, and the tolerance kept equal."""

import math

import numpy as np
import pytest

from ppdm.defend.targets import (
    CERTAINTY_TOL,
    Certain,
    Confident,
    Evidence,
    LDiverse,
    MinSpan,
    Target,
    parse_target,
)
from ppdm.errors import PpdmError
from ppdm.metrics import baseline
from ppdm.tree.spans import Spans


def evidence(certain, confidence, targets=None, spans=None):
    n = len(certain)
    return Evidence(np.array(certain), np.array(confidence, dtype=float), np.ones(n, bool) if targets is None else np.array(targets), spans)


def test_parse_the_issue_target():
    target = parse_target("certain=0, confident=1%@0.9")
    assert target.measures == (Certain(0), Confident(0.01, 0.9))
    assert target.describe() == "nobody certain, ≤ 1 % at confidence ≥ 0.9"
    assert parse_target(target.to_text()) == target
    assert parse_target("span=5,l=2").measures == (MinSpan(5), LDiverse(2))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("certain", "not name=value"),
        ("certain=-1", "whole number"),
        ("certain=1.5", "whole number"),
        ("confident=0.01", "SHARE@CONFIDENCE"),
        ("confident=2@0.9", "share must be in"),
        ("confident=0.01@0", "confidence must be in"),
        ("confident=x@0.9", "is not a number"),
        ("span=0", "span takes"),
        ("l=0.5", "l takes"),
        ("sure=0", "unknown measure 'sure'"),
        ("certain=0,certain=1", "names a measure twice"),
        ("certain=nan", "finite"),
    ],
)
def test_bad_targets_say_what_is_wrong(text, message):
    with pytest.raises(PpdmError, match=message):
        parse_target(text)


def test_certain_and_confident_count_target_records_only():
    ev = evidence([True, False, False, False], [1.0, 0.95, 0.9 - 1e-12, 0.2], targets=[True, True, True, False])
    assert Certain(0).value(ev) == 1 and not Certain(0).meets(1) and Certain(1).meets(1)
    # 1.0, 0.95 and 0.9 (within the tolerance) of the 3 targets are held at >= 0.9
    assert Confident(0.01, 0.9).value(ev) == pytest.approx(1.0)
    assert Confident(0.01, 0.95).value(ev) == pytest.approx(2 / 3)


def test_span_measures_read_the_spans_and_are_nan_without():
    spans = Spans([(1,), (2,)], None, np.array([0, 0, 1, 1, 1]), np.array([2, 3]), np.array([[1.0, 1.0], [3.0, 0.0]]))
    ev = evidence([False] * 5, [0.5] * 5, spans=spans)
    assert MinSpan(2).value(ev) == 2 and MinSpan(2).meets(2) and not MinSpan(3).meets(2)
    assert LDiverse(2).value(ev) == 1.0 and not LDiverse(2).meets(1.0)
    assert math.isnan(MinSpan(2).value(evidence([False], [0.5])))
    assert not MinSpan(2).meets(math.nan)
    assert Target((Certain(0), MinSpan(2))).needs_spans


def test_target_asks_for_a_measure_it_has():
    with pytest.raises(PpdmError, match="no measure 'span'"):
        parse_target("certain=0").measure("span")


def test_one_certainty_tolerance():
    assert CERTAINTY_TOL == baseline.CERTAINTY_TOL


def test_a_target_missed_by_part_of_the_audits():
    """More audits only raise certain and confident: evidence from some of them that misses the
    target settles it; spans do not come from the audits."""
    from ppdm.defend.targets import Evidence

    evidence = Evidence(
        certain=np.array([True, False, False]), confidence=np.array([1.0, 0.5, 0.2]), targets=np.ones(3, dtype=bool)
    )
    assert parse_target("certain=0").missed_by(evidence)
    assert not parse_target("certain=1,confident=0.5@0.9").missed_by(evidence)
    assert parse_target("confident=0.2@0.9").missed_by(evidence)
    assert not parse_target("span=5").missed_by(evidence)
