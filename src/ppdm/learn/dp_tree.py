"""An ε-differentially private decision tree: a random structure with Laplace-noised leaf counts.

The baseline the defense search (:mod:`ppdm.defend.search`) sets its candidates against. The
approach is the random decision tree of Fletcher & Islam (2017), which diffprivlib's
``DecisionTreeClassifier`` also follows: the *structure* is drawn without looking at the records,
so only the leaves spend privacy budget. diffprivlib itself is not used: ppdm never imports the
peers it is measured against (DESIGN.md, Dependencies), and the installed diffprivlib does not
import with scikit-learn 1.9 (its forest module reads ``sklearn.tree._tree.DOUBLE``, gone since).

How the tree is built:

* **Structure** (no privacy cost). Down to ``max_depth``, every node splits on an attribute
  drawn uniformly at random: a categorical attribute on a random two-way partition of the values
  still possible on the node's path, a numeric one at a threshold drawn uniformly inside the
  node's interval. The domains of categorical attributes and the ``bounds`` of numeric ones are
  the table's *schema*, taken as public; by default the bounds are the training data's minimum and
  maximum, which strictly speaking is data: pass ``bounds`` from public knowledge (e.g. "age is
  in 17–90") for the guarantee to cover them too (diffprivlib warns about the same thing).
* **Leaves** (all of the budget). Each (leaf, class) cell's record count gets independent
  Laplace noise of scale ``1/ε`` and is clipped at 0; a leaf's label is its largest noisy count,
  internal nodes publish the sums of their leaves' noisy counts.

**Guarantee.** With add/remove-one neighbouring tables (one person's record present or absent),
the leaf-class histogram has L1 sensitivity 1 (each record falls in exactly one cell), so the
Laplace mechanism at scale 1/ε makes the published counts ε-differentially private; the labels,
error rates and internal counts are post-processing of them and the structure is independent of
the records. With replace-one neighbours (a record changed) the same tree is 2ε-DP. The fitted
tree publishes its noisy counts (``Disclosure.CLASS_COUNTS``); they are *not* the training
counts, so audits that take published counts as exact constraints on the training table (the
maximum-entropy audit) do not apply to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from ppdm.errors import NotFittedError, PpdmError
from ppdm.learn.encoding import EncodedTable, encode_table
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.splits import CategoricalSplit, Split, ThresholdSplit

__all__ = ["DPRandomTreeClassifier"]


class DPRandomTreeClassifier(ClassifierMixin, BaseEstimator):
    """A random-structure decision tree whose published leaf counts are ε-differentially private.

    See the module docstring for the construction and the guarantee.

    Parameters
    ----------
    epsilon: the privacy budget ε (> 0) of the whole tree (add/remove-one neighbours).
    max_depth: depth of the random structure (each split is two-way: up to 2^max_depth leaves).
    bounds: public ``(low, high)`` of numeric attributes (default: the data's minimum and maximum).
    random_state: seed of both the structure and the noise.
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        max_depth: int = 5,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        random_state: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.bounds = bounds
        self.random_state = random_state

    def _check_params(self) -> None:
        if not (isinstance(self.epsilon, (int, float)) and self.epsilon > 0 and np.isfinite(self.epsilon)):
            raise PpdmError(f"epsilon must be a positive number, got {self.epsilon!r}")
        if isinstance(self.max_depth, bool) or not isinstance(self.max_depth, (int, np.integer)) or self.max_depth < 0:
            raise PpdmError(f"max_depth must be a non-negative integer, got {self.max_depth!r}")

    def fit(self, X: pd.DataFrame, y: pd.Series) -> DPRandomTreeClassifier:
        """Draw the structure, then publish the leaves' Laplace-noised class counts."""
        self._check_params()
        table = encode_table(X, y)
        rng = np.random.default_rng(self.random_state)
        nodes = _random_structure(table, self._bounds(table), int(self.max_depth), rng)
        name = y.name if isinstance(y, pd.Series) and y.name is not None else "class"
        tree = Tree(nodes, table.attributes, list(table.classes), class_attribute=str(name), algorithm="dp-random")
        leaf = tree.apply(X)
        k = table.n_classes
        true = np.bincount(leaf * k + table.y, minlength=len(nodes) * k).reshape(len(nodes), k).astype(float)
        noisy = np.clip(true + rng.laplace(0.0, 1.0 / self.epsilon, size=true.shape), 0.0, None)
        _publish(tree, noisy)
        self.classes_ = table.classes
        self.feature_names_in_ = np.array([a.name for a in table.attributes], dtype=object)
        self.tree_ = tree
        return self

    def _bounds(self, table: EncodedTable) -> dict[str, tuple[float, float]]:
        given = dict(self.bounds or {})
        out = {}
        for a in table.attributes:
            if a.is_categorical:
                continue
            if a.name in given:
                low, high = map(float, given[a.name])
                if not low <= high:
                    raise PpdmError(f"bounds of {a.name!r}: low {low} is above high {high}")
            else:
                values = table.columns[a.name]
                low, high = (float(np.nanmin(values)), float(np.nanmax(values))) if len(values) else (0.0, 0.0)
            out[a.name] = (low, high)
        return out

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Predicted class of each row (the leaf's largest noisy count)."""
        if not hasattr(self, "tree_"):
            raise NotFittedError("this DPRandomTreeClassifier is not fitted yet: call fit(X, y) first")
        return self.tree_.predict(X)


def _random_structure(
    table: EncodedTable, bounds: Mapping[str, tuple[float, float]], max_depth: int, rng: np.random.Generator
) -> list[Node]:
    """Nodes of a random tree, parents before children; no record is looked at."""
    start = {a.name: (tuple(a.categories) if a.is_categorical else bounds[a.name]) for a in table.attributes}
    nodes: list[Node] = []
    queue: list[tuple[int | None, int, dict]] = [(None, 0, start)]
    while queue:
        parent, depth, allowed = queue.pop(0)
        node = Node(id=len(nodes), parent=parent, depth=depth, label=0)
        nodes.append(node)
        if parent is not None:
            nodes[parent].children.append(node.id)
        split, branches = _random_split(table.attributes, allowed, rng) if depth < max_depth else (None, [])
        node.split = split
        queue.extend((node.id, depth + 1, branch) for branch in branches)
    return nodes


def _random_split(attributes: list[Attribute], allowed: dict[str, Any], rng: np.random.Generator) -> tuple[Split | None, list[dict[str, Any]]]:
    """A random two-way split on an attribute that can still be split, and each branch's domain."""
    splittable = [a for a in attributes if (len(allowed[a.name]) >= 2 if a.is_categorical else allowed[a.name][0] < allowed[a.name][1])]
    if not splittable:
        return None, []
    a = splittable[int(rng.integers(len(splittable)))]
    if a.is_categorical:
        values = list(allowed[a.name])
        side = rng.integers(0, 2, size=len(values))
        if side.min() == side.max():
            side[int(rng.integers(len(values)))] ^= 1
        left = tuple(v for v, s in zip(values, side) if s == 0)
        right = tuple(v for v, s in zip(values, side) if s == 1)
        rest = tuple(v for v in a.categories if v not in values)  # unreachable on this path
        split = CategoricalSplit(a.name, (left + rest, right))
        return split, [{**allowed, a.name: left}, {**allowed, a.name: right}]
    low, high = allowed[a.name]
    threshold = float(rng.uniform(low, high))
    return ThresholdSplit(a.name, threshold), [{**allowed, a.name: (low, threshold)}, {**allowed, a.name: (threshold, high)}]


def _publish(tree: Tree, leaf_counts: np.ndarray) -> None:
    """Leaves get their noisy counts, internal nodes the sums of their children's; labels follow."""
    for node in reversed(tree.nodes):
        node.counts = leaf_counts[node.id] if node.is_leaf else np.sum([tree.nodes[c].counts for c in node.children], axis=0)
        node.label = int(np.argmax(node.counts))
