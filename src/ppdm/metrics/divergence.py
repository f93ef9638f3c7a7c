"""Kullback-Leibler divergences between the true and the estimated P(X | Q) (paper 000 §5).

    D_individual(q) = Σ_x P(x | q) log( P(x | q) / P*(x | q) )
    D_overall       = Σ_q P(q) · D_individual(q)

with P the original distribution and P* the attacker's estimate; natural logarithms, as the
paper's Example 1 (Figure 5: 0.231 = (2/6)·log 2). The smaller the divergence, the more the
published model disclosed. A group whose true value the estimate rules out has an infinite
divergence.
"""

from __future__ import annotations

import numpy as np


def individual_divergence(true: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """D_individual for every group (rows of ``true`` and ``estimate``, each a distribution)."""
    true = np.asarray(true, dtype=float)
    estimate = np.asarray(estimate, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(true > 0, true / estimate, 1.0)
        terms = np.where(true > 0, true * np.log(ratio), 0.0)
    return terms.sum(axis=1)


def overall_divergence(true: np.ndarray, estimate: np.ndarray, weights: np.ndarray) -> float:
    """D_overall = Σ_q P(q) D_individual(q)."""
    return float(np.asarray(weights, dtype=float) @ individual_divergence(true, estimate))


def top_k_individuals(true: np.ndarray, estimate: np.ndarray, k: int = 10) -> np.ndarray:
    """Indices of the ``k`` groups with the smallest individual divergence (the most exposed)."""
    d = individual_divergence(true, estimate)
    return np.argsort(d, kind="stable")[:k]
