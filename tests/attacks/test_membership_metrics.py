"""The membership metrics' reading of tied scores: a random share of the tie group at the budget."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from ppdm.metrics.membership import membership_metrics, tpr_at_fpr


def _tied() -> tuple[np.ndarray, np.ndarray]:
    # 10 members alone at the top; then a tie group of 20 members and 20 non-members; then the rest
    truth = np.r_[np.ones(10), np.ones(20), np.zeros(20), np.ones(10), np.zeros(20)].astype(bool)
    score = np.r_[np.full(10, 3.0), np.full(40, 2.0), np.full(30, 1.0)]
    return truth, score


def test_a_budget_inside_a_tie_group_takes_its_share() -> None:
    truth, score = _tied()
    # 40 non-members: 10 false positives (FPR 0.25) are half the tie group's 20, so half its 20 members
    assert tpr_at_fpr(truth, score, 0.25) == pytest.approx((10 + 10) / 40)
    assert tpr_at_fpr(truth, score, 0.25, ties="together") == pytest.approx(10 / 40)
    assert tpr_at_fpr(truth, score, 0.0) == pytest.approx(10 / 40)


def test_the_random_reading_is_what_random_tie_breaks_reach_at_the_budget() -> None:
    truth, score = _tied()
    rng = np.random.default_rng(0)
    broken = [score + 1e-6 * rng.random(len(score)) for _ in range(400)]
    # a threshold on a random order stops just before the group's 11th non-member, having flagged
    # 11 · 20/21 of its members on average (a little more than the random share's 10)
    stopped = [tpr_at_fpr(truth, b, 0.25, ties="together") for b in broken]
    random_share = tpr_at_fpr(truth, score, 0.25)
    assert tpr_at_fpr(truth, score, 0.25, ties="together") <= random_share <= np.mean(stopped)
    assert random_share == pytest.approx(np.mean(stopped), abs=0.03)


@pytest.mark.parametrize("seed", range(5))
def test_without_ties_both_readings_agree(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.random(3000) < 0.5
    score = rng.random(3000) + 0.3 * truth
    for fpr in (0.001, 0.01, 0.1):
        assert tpr_at_fpr(truth, score, fpr) >= tpr_at_fpr(truth, score, fpr, ties="together")
        assert tpr_at_fpr(truth, score, fpr) == pytest.approx(tpr_at_fpr(truth, score, fpr, ties="together"))
    metrics = membership_metrics(truth, score)
    assert metrics["auc"] == pytest.approx(roc_auc_score(truth, score))
    assert metrics["tpr@1%"] >= metrics["tpr@1%_thresholds"]


def test_unknown_tie_reading_is_refused() -> None:
    truth, score = _tied()
    with pytest.raises(ValueError, match="ties"):
        tpr_at_fpr(truth, score, 0.01, ties="first")
