"""A target met on part of a model (rounds or trees left out) is not a target met by the model."""

from __future__ import annotations

import pytest

from ppdm.attacks.core.scope import UNTIED, Scope
from ppdm.attacks.core.target import default_target
from ppdm.report.verdict import key_of, target_line

CLEAN = {
    "targets": 100, "records": 100, "certain_right": 0, "certain_records": 0, "certain_wrong": 0, "baseline": {},
    "confidence_in_true_value": {key_of(0.9): 0}, "prior_alone": {key_of(0.9): 0}, "beyond_prior": {key_of(0.9): 0},
}


def _read(**kw):
    return {"scope": Scope(**kw).to_json()}


@pytest.mark.parametrize(
    ("part", "words"),
    [
        (_read(trees=20, per_round=1, left_out={"a later round's leaf values ...": list(range(1, 20))}), "1 of 20 boosting trees read"),
        (_read(trees=10, left_out={UNTIED: [3, 5, 9]}), "7 trees read, 3 left out"),
        (_read(trees=10, asked="trees 0:10"), "the trees asked for, trees 0:10"),
    ],
)
def test_a_target_met_on_a_part_is_not_judged(part, words):
    level, line = target_line(CLEAN, default_target())
    assert level == "meets" and line.endswith(": met.")
    level, line = target_line({**CLEAN, **part}, default_target())
    assert level == "unknown"
    assert f"met on the part audited only ({words})" in line


def test_a_target_missed_on_a_part_is_missed():
    failing = {**CLEAN, "certain_right": 3, **_read(trees=20, per_round=1, left_out={"why": list(range(1, 20))})}
    level, line = target_line(failing, default_target())
    assert level == "fails" and "not met" in line


def test_a_target_met_by_an_estimate_short_of_its_optimum_is_not_judged():
    stopped = {**CLEAN, "status": "inaccurate", "not_the_optimum": "the time limit ended the solve ..."}
    level, line = target_line(stopped, default_target())
    assert level == "unknown" and "not the maximum-entropy solution" in line and "larger time limit" in line


@pytest.mark.parametrize(
    "unjudged",
    [{"not_the_optimum": "the time limit ended the solve ..."}, _read(trees=10, asked="trees 0:10"), _read(trees=8, left_out={UNTIED: [3]})],
)
def test_the_release_record_does_not_release_what_the_verdict_does_not_judge(unjudged):
    """The verdict and the release record read the same audit the same way: never "not judged"
    above and "release" below."""
    from ppdm.report.record import decide

    target = default_target()
    names = [m.name for m in target.measures]
    met = {"role": "estimate", "result": CLEAN, "measures": dict.fromkeys(names, 0.0), "target": dict.fromkeys(names, "met")}
    assert decide([met], target, None)[0] == "release"
    decision, reasons = decide([{**met, "result": {**CLEAN, **unjudged}}], target, None)
    assert decision == "do not release" and reasons[0].startswith("the model is not judged (the target cannot be checked on the whole model); estimate: met")



def test_a_target_met_on_every_boosting_round_is_judged(adult_train, tmp_path):
    """XGBoost stores no row counts after the first round, so its later trees' class counts cannot
    be tied to the records; their leaf values are read, every round is audited, and the summary
    says so once (``scope``: it once wrote ``"trees_used": 1``, ``"trees_left_out": [1, ..., 9]``
    beside ``"rounds": {"used": 10}``), so the verdict judges the whole model (it once said "met on
    the part audited only (1 trees read, 9 left out)" under a first card saying every round was read)."""
    xgb = pytest.importorskip("xgboost")
    import pandas as pd

    import ppdm

    adult_train[0].sample(3000, random_state=1).to_csv(tmp_path / "train.csv", index=False)
    data = pd.read_csv(tmp_path / "train.csv")  # as ppdm audit --data reads it
    X = data.drop(columns="income")
    data["income"] = (data["income"] == ">50K").astype(int)
    booster = xgb.XGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(pd.get_dummies(X).astype(float), data["income"])
    booster.get_booster().save_model(tmp_path / "model.xgb.json")
    model = ppdm.load_model(tmp_path / "model.xgb.json", data)
    estimate = ppdm.audit(model, data, ppdm.ThreatModel(sensitive="sex", preset="insider")).estimate
    summary = estimate.summary()
    assert summary["scope"]["read"] == summary["scope"]["trees"] == 10 and not summary["scope"]["left_out"]
    assert not {"trees_used", "trees_left_out", "rounds"} & set(summary)  # stated once
    assert estimate.details["trees_used"] == 10 and estimate.details["trees_left_out"] == []
    level, line = target_line(summary, default_target())
    assert level in ("meets", "fails") and "part audited only" not in line, line


def test_a_target_met_by_a_proof_that_left_people_undecided_is_not_judged():
    """An exact audit whose time budget ran out with 173 people undecided: its card read "target
    met" under "some [undecided people] may be [proved]", and the record released."""
    from ppdm.report.record import decide

    target = default_target()
    stopped = {**CLEAN, "exact": {"certain_records": 0, "undecided_records": 173}}
    level, line = target_line(stopped, target)
    assert level == "unknown" and "173 undecided" in line and "--exact-time-limit" in line
    assert target_line({**CLEAN, "exact": {"certain_records": 0, "undecided_records": 0}}, target)[0] == "meets"
    names = [m.name for m in target.measures]
    met = {"role": "exact", "result": stopped, "measures": dict.fromkeys(names, 0.0), "target": dict.fromkeys(names, "met")}
    decision, reasons = decide([met], target, None)
    assert decision == "do not release" and "173 undecided" in reasons[0]
    failing = {**stopped, "certain_right": 2}
    assert target_line(failing, target)[0] == "fails"  # a lower bound already over the limit stays missed


def test_an_approximate_estimate_asks_for_the_proof_only_when_it_can_run():
    """A target met by the pooled estimate is not judged; the advice is the proof when none was
    run, and more known columns when the proof was asked for and could not run."""
    approximate = {**CLEAN, "status": "approximate"}
    level, line = target_line(approximate, default_target())
    assert level == "unknown" and "prove it (--exact)" in line
    level, line = target_line({**approximate, "exact_not_run": "exact audit not run: it would route the same table ..."}, default_target())
    assert level == "unknown" and "--exact" not in line and "the proof could not run either" in line and "declare more columns known" in line
    pooled = target_line({**approximate, "method": "pooled"}, default_target())[1]  # the joint table too large: so is the proof's
    assert "prove it" not in pooled and "would route the same joint table" in pooled and "declare more columns known" in pooled
