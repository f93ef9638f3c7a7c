"""An ε-differentially private forest: random-structure trees whose leaf counts share one budget ε.

The baseline a defense search of a published forest (:mod:`ppdm.defend.search`) sets its
candidates against, as :mod:`ppdm.learn.dp_tree` is for one tree. Each of the ``n_estimators``
trees is a :class:`~ppdm.learn.dp_tree.DPRandomTreeClassifier` (a structure drawn without
looking at the records, Laplace noise on every (leaf, class) count; Fletcher & Islam 2017) fitted
on *every* training record with the budget ``ε / n_estimators``.

**Guarantee.** Each tree's published counts are (ε / n_estimators)-DP for add/remove-one
neighbours (see :mod:`ppdm.learn.dp_tree`); the trees are drawn independently, so by sequential
composition the forest's counts together are ε-DP (2ε for replace-one neighbours). The forest
predicts by the mean of its trees' noisy leaf class frequencies (``combine="mean-proba"``,
post-processing). Every tree counts every record once (multiplicity 1), before the noise.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from ppdm.errors import NotFittedError, PpdmError
from ppdm.learn.dp_tree import DPRandomTreeClassifier
from ppdm.tree.forest import Forest

__all__ = ["DPRandomForestClassifier"]


class DPRandomForestClassifier(ClassifierMixin, BaseEstimator):
    """A forest of ε-DP random trees sharing one budget ε (see the module docstring).

    Parameters
    ----------
    epsilon: the privacy budget ε (> 0) of the whole forest; each tree spends ε / n_estimators.
    n_estimators: the number of trees (≥ 1).
    max_depth: depth of each tree's random structure.
    bounds: public ``(low, high)`` of numeric attributes (default: the data's minimum and maximum).
    random_state: seed of the structures and the noise.
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        n_estimators: int = 10,
        max_depth: int = 5,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        random_state: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.bounds = bounds
        self.random_state = random_state

    def fit(self, X: pd.DataFrame, y: pd.Series) -> DPRandomForestClassifier:
        """Fit every tree on all of ``X`` with its share of ε."""
        n = self.n_estimators
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise PpdmError(f"n_estimators must be a positive integer, got {n!r}")
        if not (isinstance(self.epsilon, (int, float)) and self.epsilon > 0 and np.isfinite(self.epsilon)):
            raise PpdmError(f"epsilon must be a positive number, got {self.epsilon!r}")
        seeds = np.random.default_rng(self.random_state).integers(0, 2**32, size=int(n))
        share = float(self.epsilon) / int(n)
        trees = [
            DPRandomTreeClassifier(epsilon=share, max_depth=self.max_depth, bounds=self.bounds, random_state=int(s)).fit(X, y).tree_
            for s in seeds
        ]
        ones = np.ones(len(X), dtype=np.int64)
        self.forest_ = Forest(
            trees, "mean-proba", multiplicities=[ones] * len(trees), algorithm="dp-random-forest",
            params={"epsilon": float(self.epsilon), "n_estimators": int(n), "max_depth": int(self.max_depth)},
        )  # fmt: skip
        self.classes_ = trees[0].classes
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Predicted class of each row (the largest mean noisy class frequency)."""
        if not hasattr(self, "forest_"):
            raise NotFittedError("this DPRandomForestClassifier is not fitted yet: call fit(X, y) first")
        return self.forest_.predict(X)
