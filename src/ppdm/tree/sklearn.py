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
values that float32 cannot represent exactly: a threshold that a value of ``data`` crosses that
way is moved just past it, so ``data``'s rows go where scikit-learn sent them.

What the import cannot see, it checks or asks for (errors are :class:`ModelImportError`):

* ordinal codes in an order of the user's own (an ``OrdinalEncoder`` with ``categories=``) look
  like any other codes. When ``data`` holds the training rows, they are routed through the
  imported tree and every node must receive as many rows (and, with the classes known, the same
  class counts) as scikit-learn recorded when training; the first split that disagrees is named
  with its column.
* the class column's name is not in a scikit-learn tree: it is taken from ``y`` or from the one
  column of ``data`` holding the estimator's classes, and must be given otherwise;
* regression trees have no classes to audit and are refused.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import ModelImportError, UnseenValueWarning, advising
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
    columns = sorted((str(c) for c in data.columns if name.startswith(f"{c}{sep}")), key=len)
    if columns:
        column, value = columns[-1], name[len(columns[-1]) + len(sep) :]
        raise ModelImportError(
            f"scikit-learn feature {name!r} names the value {value!r} of column {column!r}, which no row of the data holds: "
            "pass the table the model was fitted on"
        )
    column = name.rsplit(sep, 1)[0] if sep in name else name
    raise ModelImportError(
        f"cannot trace scikit-learn feature {name!r} to a column of the data: it has no column {column!r} "
        f"(the model's inputs are the table's columns, or '<column>{sep}<value>' for a one-hot column)"
    )


def _node_split(
    feature: _Feature, threshold: float, domains: Mapping[str, tuple], larger: int, missing: int | None = None
) -> Split:
    """The split of one scikit-learn node; ``larger`` is the branch with more training samples.

    Missing or unseen values go where scikit-learn sends them: for a one-hot column, to the
    "not this value" side (all dummies are 0); for ordinal codes, where code −1 (pandas' code for
    a missing value) goes; for a numeric column, to the child with more samples (scikit-learn's
    rule for features that had no missing values in training). ``missing``, when given, is the
    branch a missing numeric value or ordinal code takes instead (boosting libraries record it).
    """
    if feature.kind == "numeric":
        # A split of the missing values from all others has threshold +inf; scikit-learn refuses
        # infinite inputs, so the largest float routes every value alike and stays valid JSON.
        threshold = min(float(threshold), sys.float_info.max)
        return ThresholdSplit(feature.attribute, threshold, larger if missing is None else missing)
    domain = domains[feature.attribute]
    if feature.kind == "ordinal":
        cut = min(max(int(math.floor(threshold)) + 1, 0), len(domain))
        left, right = domain[:cut], domain[cut:]
        default = (0 if -1 <= threshold else 1) if missing is None else missing
    else:
        hot_left = 1.0 <= threshold
        left = tuple(v for v in domain if (v == feature.value) == hot_left)
        right = tuple(v for v in domain if (v == feature.value) != hot_left)
        default = 1 if hot_left else 0
    if not left or not right:
        raise ModelImportError(f"scikit-learn threshold {threshold} on {feature.attribute!r} sends every value one way")
    return CategoricalSplit(feature.attribute, (left, right), default)


def tree_from_sklearn(
    estimator: Any,
    data: pd.DataFrame,
    feature_names: Sequence[str] | None = None,
    *,
    y: pd.Series | Sequence | None = None,
    prefix_sep: str = "_",
    ordinal_categories: Mapping[str, Sequence] | None = None,
    class_attribute: str | None = None,
    verify: bool | None = None,
) -> Tree:
    """Convert a fitted ``DecisionTreeClassifier`` into a :class:`Tree` over ``data``'s columns.

    ``data`` is the unencoded table (its columns give the attributes' kinds and domains; the
    training table itself is best). ``feature_names`` are the estimator's input columns in order
    (default: ``estimator.feature_names_in_``, set when it was fitted on a DataFrame). ``y``: the
    class of each row of ``data`` (optional). ``class_attribute``: the class column's name;
    by default ``y``'s name, else the one column of ``data`` (not an input of the estimator)
    whose values are the estimator's classes; a :class:`ModelImportError` asks for it otherwise.

    ``verify``: whether to check that ``data``'s rows reach every node in the numbers (and, when
    their classes are known, with the class counts) scikit-learn recorded in training; ``None``
    (default) checks when ``data`` holds as many rows, of the same classes, as the estimator was
    trained on. A disagreement (e.g. ordinal codes that do not follow the order assumed above)
    raises :class:`ModelImportError` naming the first node and the column whose split differs.
    """
    sk = _fitted_tree(estimator)
    _refuse_weighted(sk)
    if feature_names is None:
        if not hasattr(estimator, "feature_names_in_"):
            raise unnamed_features()
        feature_names = list(estimator.feature_names_in_)
    if len(feature_names) != sk.n_features:
        raise ModelImportError(f"{len(feature_names)} feature names given, the estimator has {sk.n_features} features")
    traced = trace_features(data, feature_names, prefix_sep, ordinal_categories)
    features, _, attributes = traced
    classes = [_plain(c) for c in estimator.classes_]
    name = _class_attribute(class_attribute, y, data, classes, [a.name for a in attributes])
    tree = traced_tree(estimator, traced, name, _numeric_values(data, features))
    labels = _labels(y, data, name)
    if verify or (verify is None and _training_rows(sk, tree, data, labels)):
        _check_routing(tree, sk, data, labels, {f.attribute: f.kind for f in features}, ordinal_categories or {}, _one_hot_values(features))
    return tree


def _one_hot_values(features: Sequence[_Feature]) -> dict[str, set[Any]]:
    """Per one-hot encoded column, the values its dummy columns name."""
    out: dict[str, set[Any]] = {}
    for f in features:
        if f.kind == "onehot":
            out.setdefault(f.attribute, set()).add(f.value)
    return out


def _warn_unnamed(data: pd.DataFrame, one_hot: Mapping[str, set[Any]]) -> None:
    """Warn of each one-hot column holding a category neither a dummy nor the encoding's dropped
    baseline names (:class:`UnseenValueWarning`, :func:`_baselines`)."""
    baselines = _baselines(data, one_hot)
    for column, baseline in baselines.items():
        clause = _unnamed_value(data, column, one_hot[column], baseline)
        if clause:
            warnings.warn(UnseenValueWarning(clause.removeprefix("; ")), stacklevel=3)


def _baselines(data: pd.DataFrame, one_hot: Mapping[str, set[Any]]) -> dict[str, set[Any]]:
    """Per one-hot column of ``data``, the category its encoding dropped for a baseline, if any.
    When every one-hot column holds a category no dummy names, the encoding dropped one of each
    (``drop_first``, ``OneHotEncoder(drop="first")``): the most frequent of a column's unnamed
    values is taken for its baseline; otherwise none was dropped."""
    present = {c: named for c, named in one_hot.items() if c in data.columns}
    unnamed = {c: data[c][_unnamed(data[c], named)].astype(object).map(_plain).value_counts() for c, named in present.items()}  # object: no unused categories
    dropped = bool(unnamed) and all(len(v) for v in unnamed.values())
    return {column: {counts.index[0]} if dropped else set() for column, counts in unnamed.items()}


def _unnamed(values: pd.Series, named: set[Any]) -> pd.Series:
    """Where ``values`` holds a category no dummy column names (missing values aside)."""
    return values.notna() & ~values.map(lambda v: _plain(v) in named).astype(bool)


def _unnamed_value(data: pd.DataFrame, column: str, named: set[Any], baseline: set[Any] | None = None) -> str:
    """A clause naming a value of ``column`` no dummy column names, nor the encoding's dropped
    ``baseline`` (the first row holding it), or ''."""
    values = data[column]
    unnamed = _unnamed(values, named | (baseline or set()))
    if not unnamed.any():
        return ""
    at = int(np.argmax(unnamed.to_numpy()))
    shown = ", ".join(repr(v) for v in sorted(map(str, named))[:5]) + (", …" if len(named) > 5 else "")
    return (
        f"; column {column!r} holds {_plain(values.iloc[at])!r} (row {_plain(data.index[at])!r}), which none of the model's "
        f"one-hot inputs names (they name {shown}): a value it never saw in training ({int(unnamed.sum()):,} such row(s))"
    )


def _missing_clause(data: pd.DataFrame, column: str) -> str:
    """A clause naming ``column``'s missing values (the first row holding one), or '': a row the
    model saw with a value there is routed as holding none."""
    missing = data[column].isna().to_numpy()
    if not missing.any():
        return ""
    at = _plain(data.index[int(np.argmax(missing))])
    return (
        f"; column {column!r} has {int(missing.sum()):,} missing value(s), first at row {at!r}, which the model routes as holding "
        "no value: if the training rows held values there, fill them in"
    )


def traced_tree(
    estimator: Any, traced: tuple[list[_Feature], dict[str, tuple], list[Attribute]], class_attribute: str, numeric_values: dict[str, np.ndarray],
) -> Tree:
    """The :class:`Tree` of one fitted tree over features already traced (:func:`trace_features`)
    and the numeric attributes' values (:func:`_numeric_values`): a forest traces its table once
    for all its trees, not once per tree (10,000 trees took a minute)."""
    sk = _fitted_tree(estimator)
    features, domains, attributes = traced
    return Tree(
        _nodes(sk, features, domains, [a.name for a in attributes], numeric_values),
        attributes,
        [_plain(c) for c in estimator.classes_],
        class_attribute=class_attribute,
        criterion=_CRITERIA.get(getattr(estimator, "criterion", ""), getattr(estimator, "criterion", None)),
        algorithm="sklearn",
    )


def unnamed_features() -> ModelImportError:
    """The error for an estimator that does not know its input columns' names (fitted on an
    array, or the last step of a ``Pipeline`` given alone): it says where to find them."""
    where = (
        "pass feature_names, its input columns in order (for the last step of a Pipeline: "
        "list(pipeline[:-1].get_feature_names_out())), or give the whole Pipeline, which names them"
    )
    return advising(
        ModelImportError(f"the estimator was not fitted on a DataFrame, so its input columns have no names: {where}"),
        where, None, "save the whole Pipeline (skops.io.dump(pipeline, ...)) instead of its last step: its steps name the columns",
    )


def trace_features(
    data: pd.DataFrame,
    feature_names: Sequence[str],
    prefix_sep: str = "_",
    ordinal_categories: Mapping[str, Sequence] | None = None,
) -> tuple[list[_Feature], dict[str, tuple], list[Attribute]]:
    """What each encoded input column means in ``data``'s attributes (see the module docstring):
    the features in order, the categorical domains, and the attributes the features use."""
    domains = {c: _domain(data[c]) for c in data.columns if not _is_numeric(data[c]) or _has_dummies(c, data[c], feature_names, prefix_sep)}
    for col, cats in (ordinal_categories or {}).items():
        domains[col] = tuple(_plain(c) for c in cats)
    prefix_sep = _separator(data, feature_names, domains, prefix_sep)
    features = [_resolve(str(f), data, domains, prefix_sep) for f in feature_names]
    _warn_unnamed(data, _one_hot_values(features))
    used = list(dict.fromkeys(f.attribute for f in features))
    attributes = [
        Attribute(a, "categorical", domains[a]) if a in domains else Attribute(a, "numeric") for a in used
    ]
    return features, domains, attributes


def _separator(data: pd.DataFrame, feature_names: Sequence[str], domains: Mapping[str, tuple], sep: str) -> str:
    """The separator of the dummy columns' names: ``sep``, unless no input is named with it and
    every input that is no column is ``<column><s><value>`` for one other ``s``
    (``pd.get_dummies(prefix_sep="=")``)."""
    names = [str(f).rsplit("__", 1)[-1] for f in feature_names]
    dummies = [n for n in names if n not in data.columns]
    if not dummies or any(n.startswith(f"{c}{sep}") for n in dummies for c in domains):
        return sep
    middles = {n[len(c) : len(n) - len(str(v))] for n in dummies[:1] for c, values in domains.items() if n.startswith(str(c))
               for v in values if n.endswith(str(v)) and len(n) > len(str(c)) + len(str(v))}  # fmt: skip
    fits = [m for m in middles if set(dummies) <= {f"{c}{m}{v}" for c, values in domains.items() for v in values}]
    return fits[0] if len(fits) == 1 else sep


def _has_dummies(column: str, values: pd.Series, feature_names: Sequence[str], sep: str) -> bool:
    """Whether a numeric column was one-hot encoded (``pd.get_dummies(columns=["Family"])`` names
    ``Family_1``, ``Family_2``, ...): it is no input itself and some input names one of its values."""
    names = {str(f).rsplit("__", 1)[-1] for f in feature_names}
    if column in names:
        return False
    prefix = f"{column}{sep}"
    texts = {n[len(prefix):] for n in names if n.startswith(prefix)}
    return bool(texts) and any(str(v) in texts for v in _domain(values))


def _fitted_tree(estimator: Any) -> Any:
    """scikit-learn's tree structure of a fitted single-output classification tree."""
    sk = getattr(estimator, "tree_", None)
    if sk is None:
        raise ModelImportError("the estimator is not a fitted scikit-learn decision tree (no tree_)")
    if not hasattr(estimator, "classes_"):
        raise ModelImportError(
            f"{type(estimator).__name__} predicts numbers, not classes: only decision tree classifiers can be imported"
        )
    if getattr(estimator, "n_outputs_", 1) != 1:
        raise ModelImportError("only single-output scikit-learn trees can be imported")
    return sk


def _class_attribute(given: str | None, y: Any, data: pd.DataFrame, classes: Sequence, features: Sequence[str]) -> str:
    """The class column's name: given, ``y``'s name, or the one column of ``data`` holding the classes."""
    if given is not None:
        return given
    if getattr(y, "name", None) is not None:
        return str(y.name)
    found = [str(c) for c in data.columns if c not in features and _holds_classes(data[c], classes)]
    if len(found) == 1:
        return found[0]
    where = f"columns {found} all hold them" if found else "no column of the data holds them"
    if not found and set(map(str, data.columns)) <= set(features):
        where += " (the data are the model's inputs alone: give the training table with its class column, before any encoding)"
    raise advising(
        ModelImportError(f"pass class_attribute (or y as a named Series): the estimator's classes are {classes!r} and {where}"),
        "pass class_attribute (or y as a named Series)", "class_attribute", "name the class column of the table",
    )


def _holds_classes(column: pd.Series, classes: Sequence) -> bool:
    """Whether ``column`` has values and every one of them is a class."""
    values = {_plain(v) for v in pd.unique(column.dropna())}
    return bool(values) and values <= set(classes)


def _labels(y: Any, data: pd.DataFrame, name: str) -> np.ndarray | None:
    """The class of each row of ``data``, when known (``y``, or ``data``'s class column)."""
    if y is None:
        return data[name].to_numpy(dtype=object) if name in data.columns else None
    labels = np.asarray(y, dtype=object)
    if labels.ndim != 1 or len(labels) != len(data):
        raise ModelImportError(f"y holds {labels.size} class values but the data have {len(data)} rows")
    return labels


def _class_codes(tree: Tree, labels: np.ndarray) -> np.ndarray:
    return pd.Index(list(tree.classes), dtype=object).get_indexer(pd.Index(labels, dtype=object))


def _training_rows(sk: Any, tree: Tree, data: pd.DataFrame, labels: np.ndarray | None) -> bool:
    """Whether ``data`` looks like the estimator's training rows: as many, and of the same classes."""
    if len(data) != int(sk.n_node_samples[0]):
        return False
    if labels is None or not _unweighted(sk):
        return True
    codes = _class_codes(tree, labels)
    root = tree.root.counts
    return bool((codes >= 0).all() and root is not None and np.array_equal(np.bincount(codes, minlength=len(tree.classes)), root))


def _refuse_weighted(sk: Any) -> None:
    """Refuse a tree fitted with ``sample_weight`` or ``class_weight``: scikit-learn records its
    class counts as sums of weights, which no table of records can be checked against."""
    if not _unweighted(sk):
        node = int(np.flatnonzero(~np.isclose(sk.weighted_n_node_samples, sk.n_node_samples))[0])
        weighted, rows = float(sk.weighted_n_node_samples[node]), int(sk.n_node_samples[node])
        raise ModelImportError(
            f"the tree was fitted with sample_weight or class_weight (node {node} holds {weighted:,.6g} weighted records and {rows:,} rows): "
            "its class counts are sums of weights, not counts of records; refit it without weights to audit it"
        )


def _unweighted(sk: Any) -> bool:
    return bool(np.allclose(sk.weighted_n_node_samples, sk.n_node_samples))


def _check_routing(
    tree: Tree, sk: Any, data: pd.DataFrame, labels: np.ndarray | None, kinds: Mapping[str, str], orders: Mapping[str, Sequence],
    one_hot: Mapping[str, set[Any]] | None = None,
) -> None:
    """Raise :class:`ModelImportError` unless ``data``'s rows reach every node of ``tree`` in the
    numbers (and, when their classes are known, with the class counts) scikit-learn recorded.

    Node ids are scikit-learn's, so the parent of the first node (lowest id) in disagreement
    agrees: its split is the one the import got wrong, and its column is named.
    """
    found = _first_disagreement(tree, sk, data, labels)
    if found is None:
        return
    node_id, here = found
    parent = tree.nodes[node_id].parent
    if parent is None:
        raise advising(
            ModelImportError(
                f"the data are not the estimator's training rows ({here} rows here, {int(sk.n_node_samples[0])} in "
                "training, or other classes): pass those rows to check the import, or verify=False"
            ),
            ", or verify=False",
        )
    column = tree.nodes[parent].split.attribute  # type: ignore[union-attr]
    if kinds[column] == "ordinal":
        hint = (
            f"if the encoder's codes do not follow {_order_note(column, data, orders)}, "
            f"pass ordinal_categories={{{column!r}: <its categories in code order>}}"
        )
    else:
        hint = "if the data are not the estimator's training rows, pass verify=False"
    sent = int(sk.n_node_samples[node_id])
    classes = " with other classes" if sent == here else ""
    unseen = _unnamed_value(data, column, one_hot[column], _baselines(data, one_hot).get(column)) if one_hot and column in one_hot else ""
    unseen += _missing_clause(data, column)
    error = ModelImportError(
        f"column {column!r} (split of node {parent}): scikit-learn sent {sent} training row(s) to node {node_id}, "
        f"the imported tree sends {here}{classes}{unseen}; {hint}"
    )
    if kinds[column] != "ordinal":
        advising(error, hint, "verify", "give the estimator's training rows, in the order it was fitted on")
    raise error


def _first_disagreement(tree: Tree, sk: Any, data: pd.DataFrame, labels: np.ndarray | None) -> tuple[int, int] | None:
    """The first node whose row count (or class counts) over ``data`` differs from scikit-learn's
    record, and its row count here; ``None`` if every node agrees."""
    leaf = tree.apply(data)
    rows = _subtree_sums(tree, np.bincount(leaf, minlength=tree.n_nodes)[:, None].astype(float))[:, 0]
    wrong = rows != sk.n_node_samples
    if labels is not None and _unweighted(sk):
        codes = _class_codes(tree, labels)
        k = len(tree.classes)
        keys = leaf[codes >= 0] * k + codes[codes >= 0]
        by_class = _subtree_sums(tree, np.bincount(keys, minlength=tree.n_nodes * k).reshape(-1, k).astype(float))
        recorded = np.stack([n.counts for n in tree.nodes])  # type: ignore[misc]
        wrong |= (np.abs(by_class - recorded) > 1e-6).any(axis=1)
    if not wrong.any():
        return None
    first = int(np.flatnonzero(wrong)[0])
    return first, int(rows[first])


def _order_note(column: str, data: pd.DataFrame, orders: Mapping[str, Sequence]) -> str:
    """Which order of ``column``'s values the import took its ordinal codes to follow."""
    if column in orders:
        return "the order given in ordinal_categories"
    if isinstance(data[column].dtype, pd.CategoricalDtype):
        return "the column's category order"
    return "the column's sorted values"


def _subtree_sums(tree: Tree, at_node: np.ndarray) -> np.ndarray:
    """Per-node totals over each node's subtree (children have larger ids than their parent)."""
    out = at_node.copy()
    for node in reversed(tree.nodes):
        if node.parent is not None:
            out[node.parent] += out[node.id]
    return out


def _missing_branch(sk: Any, i: int, feature: _Feature) -> int | None:
    """Where node ``i`` sends a missing numeric value: scikit-learn ≥ 1.3 records it per node
    (``missing_go_to_left``: the side chosen when the column had missing values in training, the
    side with more samples otherwise), and predicts with it; ``None`` before that. One-hot and
    ordinal columns are encoded by the user, so their missing values are not NaN to the model."""
    go_left = getattr(sk, "missing_go_to_left", None)
    if go_left is None or feature.kind != "numeric":
        return None
    return 0 if go_left[i] else 1


def _numeric_values(data: pd.DataFrame, features: list[_Feature]) -> dict[str, np.ndarray]:
    """Each numeric attribute's distinct finite values in ``data``, sorted (for :func:`_on_float32`)."""
    out = {}
    for f in features:
        if f.kind == "numeric" and f.attribute not in out:
            v = pd.to_numeric(data[f.attribute], errors="coerce").to_numpy(dtype=float)
            out[f.attribute] = np.unique(v[np.isfinite(v)])
    return out


def _on_float32(threshold: float, values: np.ndarray | None) -> float:
    """A threshold ``t`` that sends ``values`` as scikit-learn does: it compares float32 copies,
    ``float32(x) <= t``, so a value just above ``t`` that rounds onto it goes left (a threshold
    on a data value: extra trees, or a midpoint that rounds up). The largest such value replaces
    ``t``; thresholds no value of ``data`` crosses stay as scikit-learn has them."""
    if values is None or not np.isfinite(threshold) or not len(values):
        return threshold
    below = np.float32(threshold)
    if float(below) > threshold:
        below = np.nextafter(below, np.float32(-np.inf))
    above = np.nextafter(below, np.float32(np.inf))
    upper = (float(below) + float(above)) / 2.0  # float32(x) <= below for x < upper (exact in float64)
    if int(np.array(below, dtype=np.float32).view(np.uint32)) % 2:  # a tie rounds to the even one
        upper = float(np.nextafter(upper, -np.inf))
    i = int(np.searchsorted(values, upper, side="right")) - 1
    return float(values[i]) if i >= 0 and values[i] > threshold else threshold


def _nodes(
    sk: Any,
    features: list[_Feature],
    domains: Mapping[str, tuple],
    candidates: list[str],
    numeric_values: Mapping[str, np.ndarray] | None = None,
) -> list[Node]:
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
            feature = features[sk.feature[i]]
            threshold = _on_float32(float(sk.threshold[i]), (numeric_values or {}).get(feature.attribute))
            node.split = _node_split(feature, threshold, domains, larger, _missing_branch(sk, i, feature))
            node.children = [left, right]
            node.candidates = tuple(candidates)
        nodes.append(node)
    return nodes
