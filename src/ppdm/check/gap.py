"""The generalisation gap, and whether the model beats the majority class, on held-out rows.

A model much more accurate on its training rows than on rows it never saw has memorised them
(Yeom et al. 2018: the gap bounds a threshold membership attacker's advantage); SACRO-ML tests
the gap by comparing the training and held-out per-row losses (two-sample Kolmogorov–Smirnov).
ppdm reports both: ``generalisation_gap`` is training accuracy minus held-out accuracy, at most
the policy's ``max_generalisation_gap``, with the KS test's p-value beside it.

``beat_majority``: a model whose held-out accuracy is not significantly above the share of the
majority class (training's most frequent label) among the held-out rows (one-sided binomial test
at 5 %) predicts no better than a constant. Such a model discloses little, but releasing it is no
defense's success: it is never ``release``d for that (:func:`no_better_than_majority`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.check.findings import Finding
from ppdm.check.model import Checked

__all__ = ["ALPHA", "gap_checks", "majority_share", "no_better_than_majority"]

#: The significance level of the tests.
ALPHA = 0.05


def no_better_than_majority(accuracy: float, rows: int, majority: float) -> bool:
    """Whether ``accuracy`` on ``rows`` held-out rows is not significantly above ``majority``
    (one-sided exact binomial test at :data:`ALPHA`)."""
    from scipy.stats import binomtest

    if rows <= 0:
        return True
    if majority >= 1:
        return True
    correct = int(round(accuracy * rows))
    return bool(binomtest(correct, rows, majority, alternative="greater").pvalue >= ALPHA)


def majority_share(train_truth: np.ndarray, held_truth: np.ndarray) -> float:
    """The share of the held-out rows holding the training table's most frequent label."""
    known = train_truth[train_truth >= 0]
    if not len(known) or not len(held_truth):
        return 0.0
    top = int(np.bincount(known).argmax())
    return float(np.mean(held_truth == top))


def _losses(proba: np.ndarray, truth: np.ndarray) -> np.ndarray:
    p = np.where(truth >= 0, proba[np.arange(len(truth)), np.clip(truth, 0, None)], 0.0)
    return -np.log(np.clip(p, 1e-12, 1.0))


def gap_checks(
    model: Checked, data: pd.DataFrame, holdout: pd.DataFrame | None, max_gap: float, train_proba: np.ndarray, held_proba: np.ndarray | None = None
) -> list[Finding]:
    """``generalisation_gap`` and ``beat_majority`` (both ``not checked`` without held-out rows);
    ``held_proba``: the model's probabilities on ``holdout`` when given (a model known by its outputs)."""
    if holdout is None or not len(holdout):
        why = "no held-out rows given (--holdout): the gap and the majority-class comparison are not measured"
        return [Finding("generalisation_gap", "not checked", None, max_gap, "none", why), Finding("beat_majority", "not checked", None, None, "none", why)]
    from scipy.stats import ks_2samp

    y_train, y_held = model.truth(data), model.truth(holdout)
    held_proba = model.proba(holdout) if held_proba is None else held_proba
    train_acc = float(np.mean(train_proba.argmax(axis=1) == y_train))
    held_acc = float(np.mean(held_proba.argmax(axis=1) == y_held))
    gap = train_acc - held_acc
    p = float(ks_2samp(_losses(train_proba, y_train), _losses(held_proba, y_held)).pvalue)
    shown = f"training accuracy {train_acc:.4f}, held-out {held_acc:.4f} on {len(holdout):,} rows: gap {gap:+.4f}; losses differ by KS p = {p:.3g}"
    majority = majority_share(y_train, y_held)
    flat = no_better_than_majority(held_acc, len(holdout), majority)
    return [
        Finding("generalisation_gap", "failed" if gap > max_gap + 1e-12 else "passed", gap, max_gap, "estimated", shown),
        Finding(
            "beat_majority", "failed" if flat else "passed", held_acc, majority, "estimated",
            f"held-out accuracy {held_acc:.4f} against the majority class's share {majority:.4f} "
            + ("(not significantly above it: the model predicts no better than a constant)" if flat else "(significantly above it)"),
        ),
    ]
