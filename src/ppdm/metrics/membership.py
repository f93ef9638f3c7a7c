"""How well a membership score tells members from non-members (Carlini et al., *Membership
Inference Attacks From First Principles*, IEEE S&P 2022, §III: the ROC curve, its area, and the
true-positive rate at a low false-positive rate, read on log-log axes).

A score with ties (every candidate of one published cell gets one probability) is read as the
attacker who breaks them at random would use it: at a false-positive budget that falls inside a
tie group, the attacker flags the whole groups above it and a random share of that one, just
enough to spend the budget; the expected true-positive rate is the ROC curve read with linear
interpolation between consecutive thresholds (Fawcett, *An introduction to ROC analysis*, 2006,
§6: a point between two operating points is reached by randomising between them; the most
powerful test at a given level randomises on its boundary, Neyman–Pearson). The AUC treats ties
the same way (a tied pair counts one half). ``ties="together"`` gives the deterministic reading
(thresholds only: a tie group straddling the budget is left out whole), as Carlini et al.'s code
reads it; for scores without ties the two agree. The baseline is the attacker without a model:
every candidate scored alike (AUC 0.5, TPR = FPR) and the member share of the population, the prior.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve

__all__ = ["FPRS", "interpolated_tpr", "membership_advantage", "membership_metrics", "roc_points", "tpr_at_fpr"]

#: The false-positive budgets reported (Carlini et al. 2022: 0.1 % and 1 %).
FPRS = (0.001, 0.01)


def roc_points(truth: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ROC curve's (FPR, TPR) points, one per distinct score (none dropped: a segment between
    two consecutive points is one tie group)."""
    fpr, tpr, _ = roc_curve(truth.astype(bool), score, drop_intermediate=False)
    return fpr, tpr


def interpolated_tpr(fpr: np.ndarray, tpr: np.ndarray, at: np.ndarray | float) -> np.ndarray:
    """The ROC curve ``(fpr, tpr)`` (points in threshold order) read at ``at``: at a point's FPR
    the highest TPR reached there, between two FPRs the straight line from the last point of the
    lower one to the next point (the tie group whose threshold crosses the budget)."""
    at = np.asarray(at, dtype=float)
    i = np.clip(np.searchsorted(fpr, at, side="right") - 1, 0, len(fpr) - 1)
    j = np.minimum(i + 1, len(fpr) - 1)
    span = fpr[j] - fpr[i]
    share = np.where(span > 0, (at - fpr[i]) / np.where(span > 0, span, 1.0), 0.0)
    return tpr[i] + np.clip(share, 0.0, 1.0) * (tpr[j] - tpr[i])


def tpr_at_fpr(truth: np.ndarray, score: np.ndarray, fpr: float, ties: str = "random") -> float:
    """The true-positive rate at ``fpr`` false positives: ``ties="random"`` the expected rate of
    the attacker who flags a random share of the tie group straddling the budget (the ROC curve
    interpolated between thresholds), ``"together"`` the largest rate a threshold alone reaches
    with at most ``fpr`` false positives."""
    f, t = roc_points(truth, score)
    if ties == "together":
        return float(t[f <= fpr + 1e-12].max(initial=0.0))
    if ties != "random":
        raise ValueError(f"ties must be 'random' or 'together', got {ties!r}")
    return float(interpolated_tpr(f, t, fpr))


def membership_advantage(truth: np.ndarray, score: np.ndarray) -> float:
    """The membership advantage of the best threshold on ``score``: the largest TPR − FPR over the
    ROC curve (Yeom et al., *Privacy Risk in Machine Learning*, CSF 2018, Definition 4: the
    adversary's advantage is its true-positive rate minus its false-positive rate; Kolmogorov and
    Smirnov's distance between the members' and the non-members' scores). 0 for a score that
    tells nothing (every candidate alike), ``nan`` without both members and non-members."""
    truth = np.asarray(truth, dtype=bool)
    if not 0 < truth.sum() < len(truth):
        return float("nan")
    fpr, tpr = roc_points(truth, np.asarray(score, dtype=float))
    return float(max((tpr - fpr).max(), 0.0))


def membership_metrics(truth: np.ndarray, score: np.ndarray) -> dict[str, float]:
    """AUC and TPR at each of :data:`FPRS` (ties broken at random, and read together:
    ``tpr@1%_thresholds``), with the baseline member share (the prior)."""
    truth = truth.astype(bool)
    out: dict[str, float] = {"members": int(truth.sum()), "non_members": int((~truth).sum()), "member_share": float(truth.mean())}
    both = 0 < truth.sum() < len(truth)
    out["auc"] = float(roc_auc_score(truth, score)) if both else float("nan")
    for f in FPRS:
        key = f"tpr@{f:.1%}".replace(".0%", "%")
        out[key] = tpr_at_fpr(truth, score, f) if both else float("nan")
        out[f"{key}_thresholds"] = tpr_at_fpr(truth, score, f, ties="together") if both else float("nan")
    return out
