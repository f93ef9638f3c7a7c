"""Import a fitted scikit-learn ``DecisionTreeClassifier`` back into attribute predicates.

scikit-learn trees split binary on encoded columns. Each input column (feature) is traced back
to an attribute of the original table ``data``:

* a numeric column of ``data`` → a :class:`ThresholdSplit` on it;
* a categorical column of ``data`` used directly (ordinal codes, e.g. ``OrdinalEncoder`` or
  ``Series.cat.codes``) → a :class:`CategoricalSplit` of the categories with code ``<= t``
  against the rest (codes follow ``ordinal_categories[col]`` if given, else the column's category
  order: sorted values for text columns, as ``OrdinalEncoder`` uses);
* a one-hot column named ``<col><prefix_sep><value>`` (``pandas.get_dummies``,
  ``OneHotEncoder.get_feature_names_out``; a ``ColumnTransformer`` prefix ``name__`` is ignored)
  → a :class:`CategoricalSplit` of ``{value}`` against every other value of the domain.

Node ids, structure, labels and class counts are kept as scikit-learn has them. Thresholds are
compared in float64; scikit-learn compares float32 copies of the inputs, which only differs for
values that float32 cannot represent exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import DataError
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.splits import CategoricalSplit, Split, ThresholdSplit

_CRITERIA = {"gini": "gini", "entropy": "entropy", "log_loss": "entropy"}


@dataclass(frozen=True)
class _Feature:
    """What one scikit-learn input column means in terms of the original attributes."""

    attribute: str
    kind: str  # "numeric" | "ordinal" | "onehot"
    value: Any = None


def _domain(column: pd.Series) -> tuple:
    if isinstance(column.dtype, pd.CategoricalDtype):
        return tuple(_plain(c) for c in column.cat.categories)
    return tuple(_plain(c) for c in sorted(pd.unique(column.dropna()), key=lambda v: (str(type(v)), v)))


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _is_numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype)


def _resolve(name: str, data: pd.DataFrame, domains: Mapping[str, tuple], sep: str) -> _Feature:
    if name in data.columns:
        return _Feature(name, "numeric" if name not in domains else "ordinal")
    matches = [
        (col, name[len(col) + len(sep) :])
        for col in domains
        if name.startswith(f"{col}{sep}")
    ]
    for col, text in sorted(matches, key=lambda m: -len(m[0])):
        for value in domains[col]:
            if str(value) == text:
                return _Feature(col, "onehot", value)
    if "__" in name:
        return _resolve(name.split("__", 1)[1], data, domains, sep)
    raise DataError(
        f"cannot trace scikit-learn feature {name!r} to a column of the data "
        f"(expected a column name or '<column>{sep}<value>' for a one-hot column)"
    )


def _node_split(feature: _Feature, threshold: float, domains: Mapping[str, tuple], larger: int) -> Split:
    """The split of one scikit-learn node; ``larger`` is the branch with more training samples.

    Missing or unseen values go where scikit-learn sends them: for a one-hot column, to the
    "not this value" side (all dummies are 0); for ordinal codes, where code −1 (pandas' code for
    a missing value) goes; for a numeric column, to the child with more samples (scikit-learn's
    rule for features that had no missing values in training).
    """
    if feature.kind == "numeric":
        return ThresholdSplit(feature.attribute, float(threshold), larger)
    domain = domains[feature.attribute]
    if feature.kind == "ordinal":
        cut = min(max(int(math.floor(threshold)) + 1, 0), len(domain))
        left, right = domain[:cut], domain[cut:]
        default = 0 if -1 <= threshold else 1
    else:
        hot_left = 1.0 <= threshold
        left = tuple(v for v in domain if (v == feature.value) == hot_left)
        right = tuple(v for v in domain if (v == feature.value) != hot_left)
        default = 1 if hot_left else 0
    if not left or not right:
        raise DataError(f"scikit-learn threshold {threshold} on {feature.attribute!r} sends every value one way")
    return CategoricalSplit(feature.attribute, (left, right), default)


def tree_from_sklearn(
    estimator: Any,
    data: pd.DataFrame,
    feature_names: Sequence[str] | None = None,
    *,
    prefix_sep: str = "_",
    ordinal_categories: Mapping[str, Sequence] | None = None,
    class_attribute: str = "class",
) -> Tree:
    """Convert a fitted ``DecisionTreeClassifier`` into a :class:`Tree` over ``data``'s columns.

    ``data`` is the unencoded table (its columns give the attributes' kinds and domains; the
    training table itself is fine). ``feature_names`` are the estimator's input columns in order
    (default: ``estimator.feature_names_in_``, set when it was fitted on a DataFrame).
    """
    sk = getattr(estimator, "tree_", None)
    if sk is None:
        raise DataError("the estimator is not a fitted scikit-learn decision tree (no tree_)")
    if getattr(estimator, "n_outputs_", 1) != 1:
        raise DataError("only single-output scikit-learn trees can be imported")
    if feature_names is None:
        if not hasattr(estimator, "feature_names_in_"):
            raise DataError("pass feature_names: the estimator was not fitted on a DataFrame")
        feature_names = list(estimator.feature_names_in_)
    if len(feature_names) != sk.n_features:
        raise DataError(f"{len(feature_names)} feature names given, the estimator has {sk.n_features} features")
    domains = {c: _domain(data[c]) for c in data.columns if not _is_numeric(data[c])}
    for col, cats in (ordinal_categories or {}).items():
        domains[col] = tuple(_plain(c) for c in cats)
    features = [_resolve(str(f), data, domains, prefix_sep) for f in feature_names]
    used = list(dict.fromkeys(f.attribute for f in features))
    attributes = [
        Attribute(a, "categorical", domains[a]) if a in domains else Attribute(a, "numeric") for a in used
    ]
    nodes = _nodes(sk, features, domains, used)
    return Tree(
        nodes,
        attributes,
        [_plain(c) for c in estimator.classes_],
        class_attribute=class_attribute,
        criterion=_CRITERIA.get(getattr(estimator, "criterion", ""), getattr(estimator, "criterion", None)),
        algorithm="sklearn",
    )


def _nodes(sk: Any, features: list[_Feature], domains: Mapping[str, tuple], candidates: list[str]) -> list[Node]:
    value = sk.value[:, 0, :].astype(float)
    totals = value.sum(axis=1, keepdims=True)
    counts = np.divide(value, totals, out=np.zeros_like(value), where=totals > 0) * sk.weighted_n_node_samples[:, None]
    rounded = np.round(counts)
    counts = np.where(np.abs(counts - rounded) < 1e-6, rounded, counts)
    nodes: list[Node] = []
    parent = np.full(sk.node_count, -1)
    for i in range(sk.node_count):
        left, right = int(sk.children_left[i]), int(sk.children_right[i])
        depth = 0 if parent[i] < 0 else nodes[parent[i]].depth + 1
        node = Node(
            id=i,
            parent=None if parent[i] < 0 else int(parent[i]),
            depth=depth,
            label=int(np.argmax(value[i])),
            counts=counts[i].copy(),
        )
        if left != -1:
            parent[left] = parent[right] = i
            larger = 0 if sk.n_node_samples[left] >= sk.n_node_samples[right] else 1
            node.split = _node_split(features[sk.feature[i]], sk.threshold[i], domains, larger)
            node.children = [left, right]
            node.candidates = tuple(candidates)
        nodes.append(node)
    return nodes
