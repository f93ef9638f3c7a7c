"""The relative membership inference attack, RMIA: Zarifzadeh, Liu, Mireshghallah & Shokri,
*Low-Cost High-Power Membership Inference Attacks*, ICML 2024, §3 (Eq. 4–5) and App. B.

The likelihood ratio of a candidate x against a reference point z (a population record) is
LR(x, z) = (Pr(x|θ) / Pr(x)) / (Pr(z|θ) / Pr(z)), where Pr(·|θ) is the target model's
confidence in the point's true class and Pr(·) its average over reference (shadow) models. The
score is the share of reference points z with LR(x, z) ≥ γ.

* **online**: Pr(x) the mean over every shadow model (each candidate was in half of them);
* **offline** (App. B.2.2): only the models that did not hold the point, scaled by the offline
  parameter a: Pr(x) = ½ ((1 + a) Pr_OUT(x) + (1 − a)), which approximates the missing IN half.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GAMMA", "OFFLINE_A", "rmia_scores"]

#: The paper's offline parameter a (its CIFAR and Purchase settings lie near 0.3).
OFFLINE_A = 0.3

#: The threshold γ on the pairwise likelihood ratio.
GAMMA = 1.0

#: Probabilities below this are treated as this (a class a model never predicts).
TINY = 1e-30


def marginal(shadow: np.ndarray, inside: np.ndarray, online: bool, a: float) -> np.ndarray:
    """Pr(x) per point (column) from the shadow models' confidences (models × points)."""
    if online:
        return np.asarray(shadow.mean(axis=0), dtype=float)
    outside = ~inside
    count = outside.sum(axis=0)
    if (count == 0).any():
        raise ValueError(f"point {int(np.argmax(count == 0))} was held by every shadow model: RMIA offline needs a model without it")
    out = np.where(outside, shadow, 0.0).sum(axis=0) / count
    return 0.5 * ((1.0 + a) * out + (1.0 - a))


def rmia_scores(
    target: np.ndarray,
    shadow: np.ndarray,
    inside: np.ndarray,
    reference: np.ndarray,
    *,
    online: bool,
    a: float = OFFLINE_A,
    gamma: float = GAMMA,
) -> np.ndarray:
    """RMIA scores of every point. ``target``: the target model's true-class confidence per point
    (candidates and reference points), ``shadow`` and ``inside`` the shadow models' (models ×
    points) and which model held which, ``reference``: the indices of the points z."""
    target = np.asarray(target, dtype=float)
    ratio = np.maximum(target, TINY) / np.maximum(marginal(shadow, inside, online, a), TINY)
    z = np.sort(ratio[np.asarray(reference, dtype=int)])
    # LR(x, z) >= γ  ⇔  ratio_z <= ratio_x / γ: the share of z at or below it (one sorted search)
    return np.searchsorted(z, ratio / gamma, side="right") / max(len(z), 1)
