"""The grower's counts level by level over a table read partition by partition: one pass per level.

When a Dask table's distinct (attributes, class) rows are too many to hold (numeric columns with
many values), ID3 (paper 001 §4.2) and C4.5 still need only counts per node: class counts, class
counts by value of each categorical attribute, and class counts by value of each numeric one
(whose running sums give every threshold's left side, C4.5's candidate cut points). The grower's
level-wise builder splits every node of a level before it asks for any of the next level's
counts, so :class:`LevelCounts` answers all of a level's questions with one pass over the
partitions: each record is routed down the splits chosen so far and tallied at the node it
reaches. A child's class counts come from its parent's tables, with no pass.

A node's state is its id in the growing tree. The tables are the same numbers
:class:`~ppdm.learn.counts.ExactCounts` computes on the records in memory, so the tree is too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.counting import DaskCounting
from ppdm.errors import DataError
from ppdm.tree.model import Attribute, encode_categories
from ppdm.tree.splits import CategoricalSplit, Split, ThresholdSplit

_NODE, _VALUE, _Y, _N = "node", "value", "y", "n"


def domains(frame: Any, names: Sequence[str], class_name: str, categorical: Sequence[str] = (), counting: DaskCounting | None = None) -> tuple[list[Attribute], np.ndarray]:
    """The attributes (kinds and categorical domains, as :func:`~ppdm.learn.encoding.infer_attribute`
    gives them on the whole table) and the sorted classes, in one pass."""
    from ppdm.learn.encoding import is_categorical

    meta = frame._meta
    forced = set(categorical)
    cats = [n for n in names if n in forced or is_categorical(meta[n])]

    def chunk(part: pd.DataFrame, i: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for n in [*cats, class_name]:
            col = part[n]
            if col.isna().any():
                raise DataError(f"column {n!r} has missing value(s) (in partition {i}); drop or fill them before fitting")
            if isinstance(col.dtype, pd.CategoricalDtype):
                out[n] = ("categories", tuple(col.cat.categories))
            else:
                out[n] = ("values", set(pd.unique(col)))
        return out

    def combine(parts: list[dict[str, Any]]) -> dict[str, Any]:
        merged = dict(parts[0])
        for p in parts[1:]:
            for n, (kind, values) in p.items():
                old_kind, old = merged[n]
                if kind == old_kind == "categories" and values == old:
                    continue
                as_set = (set(old) if old_kind == "categories" else old) | set(values)
                merged[n] = ("values", as_set)
        return merged

    found = (counting or DaskCounting()).reduce(frame[[*dict.fromkeys([*cats, class_name])]], chunk, combine, "reading domains")
    if found is None:
        raise DataError("X has no rows")

    def domain(n: str) -> tuple:
        kind, values = found[n]
        plain = [v.item() if isinstance(v, np.generic) else v for v in values]
        return tuple(plain) if kind == "categories" else tuple(sorted(plain, key=lambda v: (str(type(v)), v)))

    attributes = [Attribute(n, "categorical", domain(n)) if n in cats else Attribute(n, "numeric") for n in names]
    try:
        classes = np.array(sorted(domain(class_name)), dtype=object)
    except TypeError:
        raise DataError("class labels mix types that cannot be ordered (e.g. numbers and text)") from None
    return attributes, classes


class LevelCounts:
    """Count source over a Dask ``frame`` (attribute columns and ``class_name``), one pass per level."""

    def __init__(self, frame: Any, attributes: Sequence[Attribute], class_name: str, classes: np.ndarray, counting: DaskCounting | None = None) -> None:
        self.frame = frame[[*[a.name for a in attributes], class_name]]
        self.attributes = list(attributes)
        self.class_name = class_name
        self.classes = classes
        self.n_classes = len(classes)
        self.counting = counting or DaskCounting()
        self._cats = [a for a in attributes if a.is_categorical]
        self._cat_index = {a.name: i for i, a in enumerate(self._cats)}
        self._v_max = max((len(a.categories) for a in self._cats), default=1)
        self._nums = [a.name for a in attributes if not a.is_categorical]
        self._splits: list[tuple[int, Split, list[int]]] = []  # (node, split, children) in order made
        self._depth = [0]
        self._class: dict[int, np.ndarray] = {}
        self._cat_tables: dict[int, np.ndarray] = {}
        self._num_tables: dict[int, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        self._pending = [0]
        self.passes = 0

    # -- CountSource ------------------------------------------------------------------------------
    def root(self) -> int:
        return 0

    def class_counts(self, state: int) -> np.ndarray:
        if state not in self._class:
            self._tabulate()
        return self._class[state]

    def categorical_tables(self, state: int, attributes: Sequence[str]) -> np.ndarray:
        if state not in self._cat_tables:
            self._tabulate()
        return self._cat_tables[state][[self._cat_index[a] for a in attributes]]

    def threshold_tables(self, state: int, attribute: str) -> tuple[np.ndarray, np.ndarray]:
        if state not in self._num_tables:
            self._tabulate()
        values, table = self._num_tables[state][attribute]
        left = np.cumsum(table, axis=0)[:-1].astype(float)
        return (values[:-1] + values[1:]) / 2.0, left

    def children(self, state: int, split: Split) -> list[int]:
        if state not in self._cat_tables:
            self._tabulate()
        if isinstance(split, ThresholdSplit):
            values, table = self._num_tables[state][split.attribute]
            branch = split.branch(values)
        else:
            assert isinstance(split, CategoricalSplit)
            cats = self._cats[self._cat_index[split.attribute]].categories
            table = self._cat_tables[state][self._cat_index[split.attribute], : len(cats)]
            branch = split.branch(np.arange(len(cats)), cats)
        ids = list(range(len(self._depth), len(self._depth) + split.n_branches))
        for b, child in enumerate(ids):
            self._depth.append(self._depth[state] + 1)
            self._class[child] = table[branch == b].sum(axis=0).astype(float)
        self._splits.append((state, split, ids))
        self._pending.extend(ids)
        return ids

    # -- one pass -----------------------------------------------------------------------------------
    def _tabulate(self) -> None:
        """Every pending node's tables, in one pass over the partitions."""
        pending = np.array(self._pending, dtype=np.intp)
        self._pending = []
        position = np.full(len(self._depth), -1, dtype=np.intp)
        position[pending] = np.arange(len(pending))
        routes = list(self._splits)
        found = self.counting.reduce(
            self.frame, lambda part, i: self._chunk(part, routes, position, len(pending)), self._combine,
            f"counting level {self.passes}",
        )
        self.passes += 1
        class_counts, cat_tables, numeric = found
        k = self.n_classes
        for p, node in enumerate(pending.tolist()):
            self._class.setdefault(node, class_counts[p].astype(float))
            self._cat_tables[node] = cat_tables[p].astype(float)
            self._num_tables[node] = {}
        for name, table in numeric.items():
            for p, rows in table.groupby(_NODE, sort=True):
                values, inverse = np.unique(rows[_VALUE].to_numpy(), return_inverse=True)
                counts = np.bincount(inverse * k + rows[_Y].to_numpy(), weights=rows[_N].to_numpy(), minlength=len(values) * k)
                self._num_tables[int(pending[p])][name] = (values, counts.reshape(len(values), k))
        for node in pending.tolist():
            for name in self._nums:
                self._num_tables[node].setdefault(name, (np.zeros(0), np.zeros((0, k))))

    def _encode(self, part: pd.DataFrame) -> tuple[dict[str, np.ndarray], np.ndarray]:
        columns: dict[str, np.ndarray] = {}
        for a in self.attributes:
            if a.is_categorical:
                codes = encode_categories(part[a.name], a.categories)
                if (codes < 0).any():
                    raise DataError(f"column {a.name!r}: value {part[a.name].iloc[int(np.flatnonzero(codes < 0)[0])]!r} is missing or unknown")
                columns[a.name] = codes
            else:
                values = part[a.name].to_numpy(dtype=float)
                if np.isnan(values).any():
                    raise DataError(f"column {a.name!r} has missing value(s); drop or fill them before fitting")
                columns[a.name] = values
        y = encode_categories(part[self.class_name], list(self.classes))
        return columns, y

    def _chunk(self, part: pd.DataFrame, routes: list[tuple[int, Split, list[int]]], position: np.ndarray, n_pending: int) -> tuple:
        columns, y = self._encode(part)
        node = self._route(columns, routes, len(part))
        p = position[node]
        keep = p >= 0
        p, yk = p[keep], y[keep]
        k, v, c = self.n_classes, self._v_max, len(self._cats)
        class_counts = np.bincount(p * k + yk, minlength=n_pending * k).reshape(n_pending, k)
        if c:
            codes = np.column_stack([columns[a.name][keep] for a in self._cats])
            keys = ((p[:, None] * c + np.arange(c)) * v + codes) * k + yk[:, None]
            cat = np.bincount(keys.ravel(), minlength=n_pending * c * v * k).reshape(n_pending, c, v, k)
        else:
            cat = np.zeros((n_pending, 0, v, k))
        numeric = {}
        for name in self._nums:
            frame = pd.DataFrame({_NODE: p, _VALUE: columns[name][keep], _Y: yk})
            numeric[name] = frame.groupby([_NODE, _VALUE, _Y], sort=False).size().rename(_N).reset_index()
        return class_counts, cat, numeric

    def _route(self, columns: dict[str, np.ndarray], routes: list[tuple[int, Split, list[int]]], n: int) -> np.ndarray:
        """The node each record reaches: the splits applied a level at a time, each to the rows of
        its node only (rows sorted by node once per level)."""
        node = np.zeros(n, dtype=np.intp)
        by_depth: dict[int, list[tuple[int, Split, list[int]]]] = {}
        for route in routes:
            by_depth.setdefault(self._depth[route[0]], []).append(route)
        for depth in sorted(by_depth):
            order = np.argsort(node, kind="stable")
            parents = np.array([r[0] for r in by_depth[depth]], dtype=np.intp)
            starts = np.searchsorted(node[order], parents, side="left")
            ends = np.searchsorted(node[order], parents, side="right")
            for (_parent, split, ids), lo, hi in zip(by_depth[depth], starts, ends):
                rows = order[lo:hi]
                values = columns[split.attribute][rows]
                if isinstance(split, ThresholdSplit):
                    branch = split.branch(values)
                else:
                    branch = split.branch(values, self._cats[self._cat_index[split.attribute]].categories)
                node[rows] = np.asarray(ids, dtype=np.intp)[branch]
        return node

    @staticmethod
    def _combine(parts: list[tuple]) -> tuple:
        class_counts = sum(p[0] for p in parts)
        cat = sum(p[1] for p in parts)
        numeric = {}
        for name in parts[0][2]:
            both = pd.concat([p[2][name] for p in parts], ignore_index=True)
            numeric[name] = both.groupby([_NODE, _VALUE, _Y], sort=False)[_N].sum().reset_index()
        return class_counts, cat, numeric
