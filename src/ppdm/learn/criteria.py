"""Split criteria: impurity measures and the score a learner maximises.

All functions are vectorised: ``children`` is an array ``(..., n_branches, n_classes)`` of class
counts, so a whole family of candidate splits (every attribute of a node, or every threshold of a
numeric attribute) is scored in one call. Branches with zero rows contribute nothing.

* ``entropy``: information gain (ID3, paper 001 §4.2 equations 1–2; paper 000 §4.2 (2)).
* ``gini``: decrease in Gini impurity (CART; paper 000 §4.2 (1)).
* ``gain_ratio``: information gain divided by the split information (C4.5; paper 002 §3.3).

The expected impurity E(Λ, A) of paper 000 §4.2 is :func:`expected_impurity`; a criterion's
gain is ``impurity(parent) - expected_impurity(children)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ppdm.errors import PpdmError

EPS = 1e-9


def entropy(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy in bits of the class distribution along the last axis (0 for empty).

    Computed as ``log2 n − Σ c·log2 c / n`` from the counts ``c``, without forming probabilities.
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=-1)
    log_c = np.log2(counts, out=np.zeros_like(counts), where=counts > 0)
    log_n = np.log2(n, out=np.zeros_like(n), where=n > 0)
    out = np.divide(n * log_n - (counts * log_c).sum(axis=-1), n, out=np.zeros_like(n), where=n > 0)
    return np.maximum(out, 0.0)


def gini(counts: np.ndarray) -> np.ndarray:
    """Gini impurity 1 − Σ p² of the class distribution along the last axis (0 for empty)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=-1, keepdims=True)
    p = np.divide(counts, n, out=np.zeros_like(counts), where=n > 0)
    out = 1.0 - (p * p).sum(axis=-1)
    return np.where(n[..., 0] > 0, out, 0.0)


def expected_impurity(children: np.ndarray, impurity: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """E(Λ, A) = Σ_i |S_i|/|S| · I(S_i) over the branch axis (second to last)."""
    children = np.asarray(children, dtype=float)
    sizes = children.sum(axis=-1)
    total = sizes.sum(axis=-1)
    weighted = (sizes * impurity(children)).sum(axis=-1)
    return np.divide(weighted, total, out=np.zeros_like(weighted), where=total > 0)


def split_information(children: np.ndarray) -> np.ndarray:
    """C4.5's split information: the entropy of the branch sizes."""
    return entropy(np.asarray(children, dtype=float).sum(axis=-1))


@dataclass(frozen=True)
class Criterion:
    """A split criterion: an impurity and whether the gain is divided by the split information."""

    name: str
    impurity: Callable[[np.ndarray], np.ndarray]
    ratio: bool = False

    def gain(self, parent: np.ndarray, children: np.ndarray) -> np.ndarray:
        """Impurity decrease of each candidate split (vectorised over leading axes)."""
        return self.impurity(parent) - expected_impurity(children, self.impurity)

    def score(self, gain: np.ndarray, split_info: np.ndarray) -> np.ndarray:
        """What the learner maximises, given the gains and split informations."""
        if not self.ratio:
            return gain
        return np.divide(gain, split_info, out=np.zeros_like(gain), where=split_info > EPS)


CRITERIA: dict[str, Criterion] = {
    "entropy": Criterion("entropy", entropy),
    "gini": Criterion("gini", gini),
    "gain_ratio": Criterion("gain_ratio", entropy, ratio=True),
}
ALIASES = {"information_gain": "entropy", "info_gain": "entropy", "gain-ratio": "gain_ratio", "gainratio": "gain_ratio"}


def get_criterion(name: str | Criterion) -> Criterion:
    """Look a criterion up by name ("entropy", "gini", "gain_ratio")."""
    if isinstance(name, Criterion):
        return name
    key = ALIASES.get(str(name).lower(), str(name).lower())
    if key not in CRITERIA:
        raise PpdmError(f"unknown criterion {name!r} (choose one of: {', '.join(CRITERIA)})")
    return CRITERIA[key]
