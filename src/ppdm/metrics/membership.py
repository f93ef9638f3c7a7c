"""How well a membership score tells members from non-members (Carlini et al., *Membership
Inference Attacks From First Principles*, IEEE S&P 2022, §III: the ROC curve, its area, and the
true-positive rate at a low false-positive rate, read on log-log axes).

The score's thresholds are the only operating points: tied scores move together (no randomised
tie-breaking), so a rate at a false-positive budget is what a deterministic attacker achieves.
The baseline is the attacker without a model: every candidate scored alike (AUC 0.5, TPR = FPR)
and the member share of the population, the prior.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve

__all__ = ["FPRS", "membership_metrics", "roc_points", "tpr_at_fpr"]

#: The false-positive budgets reported (Carlini et al. 2022: 0.1 % and 1 %).
FPRS = (0.001, 0.01)


def roc_points(truth: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ROC curve's (FPR, TPR) points, one per distinct score."""
    fpr, tpr, _ = roc_curve(truth.astype(bool), score)
    return fpr, tpr


def tpr_at_fpr(truth: np.ndarray, score: np.ndarray, fpr: float) -> float:
    """The largest true-positive rate a threshold on ``score`` reaches with at most ``fpr`` false positives."""
    f, t = roc_points(truth, score)
    return float(t[f <= fpr + 1e-12].max(initial=0.0))


def membership_metrics(truth: np.ndarray, score: np.ndarray) -> dict[str, float]:
    """AUC and TPR at each of :data:`FPRS`, with the baseline member share (the prior)."""
    truth = truth.astype(bool)
    out: dict[str, float] = {"members": int(truth.sum()), "non_members": int((~truth).sum()), "member_share": float(truth.mean())}
    both = 0 < truth.sum() < len(truth)
    out["auc"] = float(roc_auc_score(truth, score)) if both else float("nan")
    for f in FPRS:
        out[f"tpr@{f:.1%}".replace(".0%", "%")] = tpr_at_fpr(truth, score, f) if both else float("nan")
    return out
