"""What the importers of boosted trees share: flat node arrays → :class:`Tree`, exact threshold
conversion, the class of an imported model, and counts derived from stored statistics.

Gradient boosting with the binary log-loss (Friedman 2001; Chen & Guestrin, *XGBoost*, KDD 2016,
eq. 5) fits its first tree when every row still has the same predicted probability ``p0`` (the
base score): each row's gradient is ``p0 − y`` and its hessian ``h0 = p0 (1 − p0)``. A node's
sums over its ``n`` rows, ``n1`` of them positive, are then ``G = n p0 − n1`` and ``H = n h0``,
so a stored cover (``H``) gives ``n`` and a stored leaf value (a function of ``G`` and ``H``) gives
``n1``: :func:`counts_from_gradients` turns the per-node ``n`` and ``G`` each library's formula
yields into class counts, and claims them only when they come out as whole numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import ModelImportError, advising
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.sklearn import _node_split, _plain
from ppdm.tree.splits import Split


@dataclass
class FlatTree:
    """A library's binary tree as arrays over its node ids (``left``/``right`` are -1 at leaves).

    An internal node sends ``x <= threshold`` of input column ``feature`` left and a missing value
    left where ``missing_left``. ``value`` holds the leaves' additive scores (learning rate
    included); ``n_samples``, ``cover`` (nodes) and ``counts`` (nodes × classes) what is known.
    """

    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    value: np.ndarray | None = None
    n_samples: np.ndarray | None = None
    cover: np.ndarray | None = None
    counts: np.ndarray | None = None

    @property
    def is_leaf(self) -> np.ndarray:
        return self.left < 0

    def check(self, where: str) -> None:
        """Refuse arrays that are not one binary tree rooted at node 0 (a child out of range, a
        node reached twice or never, a cycle) or whose numbers are not finite: a library file cut
        or edited by hand would otherwise loop forever or be audited with holes."""
        n = len(self.left)
        if n == 0:
            raise ModelImportError(f"{where}: no nodes")
        arrays = {"right children": self.right, "split features": self.feature, "thresholds": self.threshold, "missing-value sides": self.missing_left}
        for name, values in arrays.items():
            if len(values) != n:
                raise ModelImportError(f"{where}: {len(values)} {name} for {n} nodes")
        inner = np.flatnonzero(self.left >= 0)
        if ((self.left >= 0) != (self.right >= 0)).any():
            node = int(np.flatnonzero((self.left >= 0) != (self.right >= 0))[0])
            raise ModelImportError(f"{where}: node {node} has one child")
        children = np.concatenate([self.left[inner], self.right[inner]])
        if len(children) and (children.max() >= n or children.min() < 1):
            bad = int(children[(children >= n) | (children < 1)][0])
            raise ModelImportError(f"{where}: a node names child {bad}, the tree has nodes 0 to {n - 1} (0 is the root)")
        reached = np.bincount(children, minlength=n) if len(children) else np.zeros(n, dtype=np.intp)
        if (reached[1:] != 1).any():
            node = int(np.flatnonzero(reached[1:] != 1)[0]) + 1
            raise ModelImportError(f"{where}: node {node} is the child of {int(reached[node])} nodes (a tree gives each node but the root one parent)")
        if len(preorder(self.left, self.right, 0, limit=n)) != n:
            raise ModelImportError(f"{where}: not every node hangs under the root (the children form a cycle)")
        if not np.isfinite(self.threshold[inner]).all():
            node = int(inner[~np.isfinite(self.threshold[inner])][0])
            raise ModelImportError(f"{where}: node {node} splits at {self.threshold[node]}, not a finite number")
        for name, stat in (("value", self.value), ("cover", self.cover), ("row count", self.n_samples)):
            if stat is None:
                continue
            at = np.asarray(stat, dtype=float)[self.left < 0] if name == "value" else np.asarray(stat, dtype=float)
            if len(stat) != n or not np.isfinite(at).all() or (name != "value" and (at < 0).any()):
                raise ModelImportError(f"{where}: a node's {name} is not a finite number{'' if name == 'value' else ' >= 0'}")

    def parents(self) -> np.ndarray:
        """The parent of every node (-1 at the root)."""
        out = np.full(len(self.left), -1)
        inner = np.flatnonzero(~self.is_leaf)
        out[self.left[inner]] = inner
        out[self.right[inner]] = inner
        return out

    def subtree_sums(self, at_node: np.ndarray) -> np.ndarray:
        """Per-node totals of ``at_node`` (given at the leaves) over each node's subtree."""
        out = np.where(self.is_leaf.reshape((-1,) + (1,) * (at_node.ndim - 1)), at_node, 0.0).astype(float)
        for node in preorder(self.left, self.right, 0)[::-1]:
            if not self.is_leaf[node]:
                out[node] = out[self.left[node]] + out[self.right[node]]
        return out


def preorder(left: np.ndarray, right: np.ndarray, root: int, limit: int | None = None) -> list[int]:
    """Node ids in depth-first order, left child first: every parent before its children (at
    most ``limit`` + 1 of them: a cycle stops there)."""
    order: list[int] = []
    stack = [root]
    while stack and (limit is None or len(order) <= limit):
        node = stack.pop()
        order.append(node)
        if left[node] >= 0:
            stack.extend((int(right[node]), int(left[node])))
    return order


def build_tree(
    flat: FlatTree,
    features: Sequence[Any],
    domains: Mapping[str, tuple],
    attributes: Sequence[Attribute],
    classes: Sequence[Any],
    class_attribute: str,
    algorithm: str,
    output: int,
    logistic: bool,
) -> Tree:
    """A :class:`Tree` of ``flat``, its nodes renumbered root first (depth-first, left first).

    Labels: the majority class where class counts are known, else a placeholder (the class the
    leaf's score favours; see :mod:`ppdm.tree.forest`).
    """
    order = preorder(flat.left, flat.right, 0)
    new_id = {old: new for new, old in enumerate(order)}
    parents = flat.parents()
    nodes: list[Node] = []
    for old in order:
        parent = None if parents[old] < 0 else new_id[int(parents[old])]
        node = Node(
            id=new_id[old],
            parent=parent,
            depth=0 if parent is None else nodes[parent].depth + 1,
            label=_label(flat, old, output, logistic),
            counts=None if flat.counts is None else flat.counts[old].astype(float),
            value=float(flat.value[old]) if flat.value is not None and flat.left[old] < 0 else None,
            cover=None if flat.cover is None else float(flat.cover[old]),
        )
        if flat.counts is None and flat.n_samples is not None:
            node._n_samples = float(flat.n_samples[old])
        if flat.left[old] >= 0:
            node.split = _split(flat, old, features, domains)
            node.children = [new_id[int(flat.left[old])], new_id[int(flat.right[old])]]
        nodes.append(node)
    disclosure = Disclosure.CLASS_COUNTS if flat.counts is not None else Disclosure.LABELS
    return Tree(nodes, attributes, classes, class_attribute, criterion=None, algorithm=algorithm, disclosure=disclosure)


def _label(flat: FlatTree, node: int, output: int, logistic: bool) -> int:
    if flat.counts is not None:
        return int(np.argmax(flat.counts[node]))
    if logistic:
        return int(flat.value is not None and flat.left[node] < 0 and flat.value[node] > 0)
    return output


def _split(flat: FlatTree, node: int, features: Sequence[Any], domains: Mapping[str, tuple]) -> Split:
    f = int(flat.feature[node])
    if not 0 <= f < len(features):
        raise ModelImportError(f"node {node} splits on input column {f}, the model has {len(features)} input columns")
    missing = 0 if flat.missing_left[node] else 1
    return _node_split(features[f], float(flat.threshold[node]), domains, missing, missing=missing)


def below_float32(c: float) -> float:
    """The float64 ``t`` with ``x <= t`` exactly when ``float32(x) < c`` (XGBoost's ``x < c`` on
    float32 copies of the data), for every finite float64 ``x`` in float32's range.

    ``float32(x) < c`` means ``float32(x) <= p``, ``p`` the float32 just below ``c``: ``x`` lies
    below the midpoint ``m`` of ``p`` and ``c``, or on it when round-half-to-even sends ``m`` to ``p``.
    """
    c32 = np.float32(c)
    if not np.isfinite(c32):
        return float(c32)
    p = np.nextafter(c32, np.float32(-np.inf))
    m = (float(p) + float(c32)) / 2.0  # exact in float64
    p_is_even = int(np.array(p, dtype=np.float32).view(np.uint32)) % 2 == 0
    return m if p_is_even else float(np.nextafter(m, -np.inf))


def expit(x: np.ndarray | float) -> np.ndarray | float:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x))
    return e / e.sum()


def whole(x: np.ndarray) -> np.ndarray | None:
    """``x`` rounded to whole numbers if every entry is one up to float noise, else ``None``.

    The noise allowed grows with the number (stored statistics are float32 in XGBoost) and stays
    well below 1/2, so a count is only claimed when its rounding is certain.
    """
    x = np.asarray(x, dtype=float)
    if not np.isfinite(x).all():
        return None
    r = np.round(x)
    tol = np.minimum(0.01 + 2e-6 * np.abs(x), 0.25)
    return r if bool((np.abs(x - r) <= tol).all() and (r >= 0).all()) else None


def counts_from_gradients(flat: FlatTree, n: np.ndarray, gradient: np.ndarray, p0: float) -> np.ndarray | None:
    """Class counts (nodes × 2) of a binary log-loss first tree from each leaf's rows ``n`` and
    gradient sum ``G = n p0 − n1``; ``None`` unless every count is a whole number in range."""
    leaves = flat.is_leaf
    n_leaf = whole(n[leaves])
    if n_leaf is None:
        return None
    positives = whole(n_leaf * p0 - gradient[leaves])
    if positives is None or (positives > n_leaf).any():
        return None
    at_leaves = np.zeros((len(n), 2))
    at_leaves[leaves, 0] = n_leaf - positives
    at_leaves[leaves, 1] = positives
    return flat.subtree_sums(at_leaves)


def resolve_classes(
    data: pd.DataFrame,
    y: Any,
    class_attribute: str | None,
    classes: Sequence[Any] | None,
    n_classes: int,
    features: Sequence[str],
) -> tuple[str, list[Any], np.ndarray | None]:
    """The class column's name, the class values (``classes[i]`` is the class the library calls
    ``i``), and each row's class index in ``data`` when known (-1 where not a class)."""
    labels = None if y is None else pd.Series(np.asarray(y, dtype=object))
    if labels is not None and len(labels) != len(data):
        raise ModelImportError(f"y holds {len(labels)} class values but the data have {len(data)} rows")
    name = class_attribute or (str(y.name) if getattr(y, "name", None) is not None else None)
    if name is None:
        found = [str(c) for c in data.columns if c not in features and data[c].nunique() == n_classes]
        if len(found) != 1:
            raise advising(
                ModelImportError(
                    f"pass class_attribute (or y as a named Series): the model has {n_classes} classes and "
                    + (f"columns {found} all have as many values" if found else "no column of the data has as many values")
                ),
                "pass class_attribute (or y as a named Series)", "class_attribute", "name the class column of the table",
            )
        name = found[0]
    if labels is None and name in data.columns:
        labels = data[name]
    if classes is None:
        if labels is None:
            raise ModelImportError(f"pass classes: the model numbers its {n_classes} classes and neither y nor the data give them")
        classes = _class_values(labels)
    classes = [_plain(c) for c in classes]
    if len(classes) != n_classes:
        raise ModelImportError(f"the model has {n_classes} classes, {len(classes)} class values given or found: {classes!r}")
    codes = None
    if labels is not None:
        codes = pd.Index(classes, dtype=object).get_indexer(pd.Index(labels.to_numpy(dtype=object), dtype=object))
    return name, classes, codes


def _class_values(labels: pd.Series) -> list[Any]:
    """The class values in the order a label encoder numbers them: category order, else sorted."""
    if isinstance(labels.dtype, pd.CategoricalDtype):
        return list(labels.cat.categories)
    return sorted(pd.unique(labels.dropna()), key=lambda v: (str(type(v)), v))

