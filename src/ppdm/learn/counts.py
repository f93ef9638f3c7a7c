"""Where the grower's counts come from.

The grower never looks at rows: it asks a *count source* for class counts of a node, of a node's
rows split by every value of some categorical attributes, and of a node's rows on either side of
every threshold of a numeric attribute. :class:`ExactCounts` counts them in the training table.
A count source estimated from randomized-response data (paper 001 §4.2) answers the same
questions for a node described by its path predicate instead of its rows. When the table's rows
are distinct combinations standing for ``weights`` records each (a table counted by the Dask
backend), every count is weighted: the same numbers as on the records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ppdm.learn.encoding import EncodedTable
from ppdm.tree.splits import CategoricalSplit, Split, ThresholdSplit


class CountSource(Protocol):
    """What the grower needs to know about the data. ``state`` identifies a node's data."""

    n_classes: int

    def root(self) -> Any: ...

    def class_counts(self, state: Any) -> np.ndarray:
        """Per-class counts of the node, shape ``(n_classes,)``."""

    def categorical_tables(self, state: Any, attributes: Sequence[str]) -> np.ndarray:
        """Counts by (attribute, value code, class), shape ``(len(attributes), V_max, n_classes)``."""

    def threshold_tables(self, state: Any, attribute: str) -> tuple[np.ndarray, np.ndarray]:
        """Candidate thresholds ``(T,)`` and the class counts at or below each ``(T, n_classes)``."""

    def children(self, state: Any, split: Split) -> list[Any]:
        """The states of the split's branches, in branch order."""


class ExactCounts:
    """Exact counts from an encoded table; a node's state is the array of its row indices."""

    def __init__(self, table: EncodedTable) -> None:
        self.table = table
        self.n_classes = table.n_classes
        self._y = table.y
        self._w = table.weights
        cats = [a for a in table.attributes if a.is_categorical]
        self._cat_index = {a.name: i for i, a in enumerate(cats)}
        self._categories = {a.name: a.categories for a in cats}
        self._v_max = max((len(a.categories) for a in cats), default=1)
        self._codes = (
            np.column_stack([table.columns[a.name] for a in cats]).astype(np.intp)
            if cats
            else np.zeros((table.n_rows, 0), dtype=np.intp)
        )
        self._ranks: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for a in table.attributes:
            if not a.is_categorical:
                uniq, ranks = np.unique(table.columns[a.name], return_inverse=True)
                self._ranks[a.name] = (uniq, ranks.astype(np.intp))

    def root(self) -> np.ndarray:
        return np.arange(self.table.n_rows, dtype=np.intp)

    def _weights(self, state: np.ndarray) -> np.ndarray | None:
        return None if self._w is None else self._w[state]

    def class_counts(self, state: np.ndarray) -> np.ndarray:
        return np.bincount(self._y[state], weights=self._weights(state), minlength=self.n_classes).astype(float)

    def categorical_tables(self, state: np.ndarray, attributes: Sequence[str]) -> np.ndarray:
        k, v = self.n_classes, self._v_max
        cols = np.array([self._cat_index[a] for a in attributes], dtype=np.intp)
        sub = self._codes[np.ix_(state, cols)]
        keys = (sub + (np.arange(len(cols)) * v)) * k + self._y[state, None]
        w = self._weights(state)
        w = None if w is None else np.broadcast_to(w[:, None], keys.shape).ravel()
        flat = np.bincount(keys.ravel(), weights=w, minlength=len(cols) * v * k)
        return flat.reshape(len(cols), v, k).astype(float)

    def threshold_tables(self, state: np.ndarray, attribute: str) -> tuple[np.ndarray, np.ndarray]:
        uniq, ranks = self._ranks[attribute]
        k = self.n_classes
        r = ranks[state]
        w = self._weights(state)
        if len(r) * 8 >= len(uniq):
            table = np.bincount(r * k + self._y[state], weights=w, minlength=len(uniq) * k).reshape(len(uniq), k)
            present = table.any(axis=1)
            table, values = table[present], uniq[present]
        else:
            present, inverse = np.unique(r, return_inverse=True)
            table = np.bincount(inverse * k + self._y[state], weights=w, minlength=len(present) * k).reshape(len(present), k)
            values = uniq[present]
        left = np.cumsum(table, axis=0)[:-1].astype(float)
        thresholds = (values[:-1] + values[1:]) / 2.0
        return thresholds, left

    def children(self, state: np.ndarray, split: Split) -> list[np.ndarray]:
        if isinstance(split, ThresholdSplit):
            branch = split.branch(self.table.columns[split.attribute][state])
        else:
            assert isinstance(split, CategoricalSplit)
            branch = split.branch(self.table.columns[split.attribute][state], self._categories[split.attribute])
        order = np.argsort(branch, kind="stable")
        bounds = np.searchsorted(branch[order], np.arange(split.n_branches + 1))
        return [state[order[bounds[b] : bounds[b + 1]]] for b in range(split.n_branches)]
