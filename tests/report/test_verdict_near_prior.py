"""The verdict says when the prior alone sits just under the target's confidence level: then a
small lift from the model counts people there (a trial's prior gave everyone 'no' 0.896; the
model's +0.019 put 83 % at >= 0.9, "held there only thanks to the model")."""

from __future__ import annotations

from ppdm.report.verdict import just_under, key_of


def _summary(prior_share: float, lifted: int) -> dict:  # type: ignore[type-arg]
    return {
        "baseline": {"majority_guess": "no", "accuracy": prior_share, "prior": {"no": prior_share, "yes": 1 - prior_share}},
        "beyond_prior": {key_of(0.9): lifted},
    }


def test_a_prior_just_under_the_level_is_said() -> None:
    assert just_under(_summary(0.896, 1656), 0.9) == (
        "the prior alone gives everyone whose value is 'no' a confidence of 0.896, just under 0.9: a small lift from the model counts them there"
    )


def test_nothing_is_said_far_under_above_or_without_anyone_lifted() -> None:
    assert just_under(_summary(0.70, 1656), 0.9) == ""  # far under: the model's lift is no small one
    assert just_under(_summary(0.93, 1656), 0.9) == ""  # above: the prior alone holds them there
    assert just_under(_summary(0.896, 0), 0.9) == ""
