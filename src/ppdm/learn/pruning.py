"""C4.5's error-based pruning (Quinlan 1993, ch. 4), by subtree replacement only.

A subtree is replaced by a leaf when the leaf's pessimistic error estimate is no larger than the
subtree's (plus C4.5's 0.1 slack). The pessimistic error of a leaf with ``n`` records and ``e``
errors is ``e + U_CF(e, n)``, the upper limit of a binomial confidence interval at level ``CF``
(default 0.25), computed as C4.5 release 8 does.

C4.5's second operation, subtree raising, is not performed: paper 002 §3.3 notes that it can
break k-anonymity (a span's population may shrink), and discarding subtrees alone keeps every
learner in ppdm on the same pruning.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.stats import norm

from ppdm.errors import DataError
from ppdm.tree.edit import collapse
from ppdm.tree.model import Tree


def added_errors(n: float, e: float, confidence: float) -> float:
    """Extra errors U_CF(e, n) − e predicted for a leaf of ``n`` records with ``e`` errors."""
    if n <= 0:
        return 0.0
    if e < 1e-6:
        return n * (1 - math.exp(math.log(confidence) / n))
    if e < 0.9999:
        base = n * (1 - math.exp(math.log(confidence) / n))
        return base + e * (added_errors(n, 1.0, confidence) - base)
    if e + 0.5 >= n:
        return 0.67 * (n - e)
    coeff = _z_squared(confidence)
    upper = (e + 0.5 + coeff / 2 + math.sqrt(coeff * ((e + 0.5) * (1 - (e + 0.5) / n) + coeff / 4))) / (n + coeff)
    return n * upper - e


@lru_cache(maxsize=32)
def _z_squared(confidence: float) -> float:
    return float(norm.ppf(1 - confidence)) ** 2


def error_based_prune(tree: Tree, confidence: float = 0.25) -> Tree:
    """Prune ``tree`` bottom-up by C4.5's pessimistic error estimate; returns a new tree."""
    if not 0 < confidence < 1:
        raise DataError(f"error_based_prune: confidence must be in (0, 1), got {confidence!r}")
    estimate = np.zeros(tree.n_nodes)
    prune: list[int] = []
    for node in reversed(tree.nodes):
        assert node.counts is not None, "error-based pruning needs the training counts"
        n, e = float(node.counts.sum()), float(node.n_errors or 0.0)
        as_leaf = e + added_errors(n, e, confidence)
        if node.is_leaf:
            estimate[node.id] = as_leaf
            continue
        subtree = float(estimate[node.children].sum())
        if as_leaf <= subtree + 0.1:
            prune.append(node.id)
            estimate[node.id] = as_leaf
        else:
            estimate[node.id] = subtree
    return collapse(tree, prune) if prune else tree
