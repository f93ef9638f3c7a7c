"""Import fitted scikit-learn forests: random forests and extra trees here, gradient boosting in
:mod:`ppdm.tree.sklearn_boosting`.

Every tree of a ``RandomForestClassifier`` / ``ExtraTreesClassifier`` is imported with
:func:`~ppdm.tree.sklearn.tree_from_sklearn` and keeps its per-node class counts: scikit-learn
stores them (``tree_.value``: counts up to 1.3, fractions from 1.4, times
``weighted_n_node_samples``), and they are exact whole numbers when the forest was fitted
without sample or class weights. With ``bootstrap=True`` a tree is fitted on every training row
weighted by how often its bootstrap drew it, so its counts count rows with that multiplicity.

The multiplicities are not stored, but each tree stores the seed of its draw
(``estimator.random_state``), and scikit-learn redraws them from it (for out-of-bag scores):
:func:`bootstrap_multiplicities` does the same draw. Anyone holding the fitted forest can do so;
only the number of training rows must be known. Each redraw is checked against the tree: its
total must be the root's weighted count and its number of drawn rows the root's row count.

Models come in through the Python API (a fitted estimator), never by unpickling a file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import ModelImportError
from ppdm.tree.forest import Forest
from ppdm.tree.forest_check import verify_counts
from ppdm.tree.model import Tree
from ppdm.tree.sklearn import _class_attribute, _class_codes, _labels, _numeric_values, _plain, trace_features, traced_tree, unnamed_features


def forest_from_sklearn(
    estimator: Any,
    data: pd.DataFrame,
    feature_names: Sequence[str] | None = None,
    *,
    y: pd.Series | Sequence | None = None,
    prefix_sep: str = "_",
    ordinal_categories: Mapping[str, Sequence] | None = None,
    class_attribute: str | None = None,
    verify: bool | None = None,
) -> Forest:
    """Convert a fitted scikit-learn forest into a :class:`Forest` over ``data``'s columns.

    Supported: ``RandomForestClassifier`` and ``ExtraTreesClassifier`` (bootstrap on or off;
    ``combine="mean-proba"``), ``GradientBoostingClassifier`` and
    ``HistGradientBoostingClassifier`` (``combine="additive"``, see
    :func:`~ppdm.tree.sklearn_boosting.boosted_from_sklearn`). The arguments are those of
    :func:`~ppdm.tree.sklearn.tree_from_sklearn`: ``data`` is the unencoded table (the training
    rows, in the order the estimator was fitted on, to check the import and to give the
    multiplicities their meaning), ``feature_names`` the estimator's input columns (default
    ``estimator.feature_names_in_``).

    ``verify``: route ``data``'s rows through every tree and check every count the import claims
    (:func:`~ppdm.tree.forest_check.verify_counts`); ``None`` (default) checks when ``data`` has as
    many rows as the training set. A disagreement raises :class:`ModelImportError`.
    """
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    if not isinstance(estimator, (RandomForestClassifier, ExtraTreesClassifier)):
        from ppdm.tree.sklearn_boosting import boosted_from_sklearn

        return boosted_from_sklearn(
            estimator, data, feature_names, y=y, prefix_sep=prefix_sep,
            ordinal_categories=ordinal_categories, class_attribute=class_attribute, verify=verify,
        )  # fmt: skip
    if not hasattr(estimator, "estimators_"):
        raise ModelImportError(f"the {type(estimator).__name__} is not fitted (no estimators_)")
    feature_names = _feature_names(estimator, feature_names)
    traced = trace_features(data, feature_names, prefix_sep, ordinal_categories)
    features, _, attributes = traced
    classes = [_plain(c) for c in estimator.classes_]
    name = _class_attribute(class_attribute, y, data, classes, [a.name for a in attributes])
    numeric = _numeric_values(data, features)
    trees = [traced_tree(est, traced, name, numeric) for est in estimator.estimators_]
    for i, tree in enumerate(trees):
        tree.classes = tuple(classes)  # a forest's trees are fitted on class indices
        _check_whole(i, tree)
    multiplicities = bootstrap_multiplicities(estimator)
    kind = "random-forest" if isinstance(estimator, RandomForestClassifier) else "extra-trees"
    forest = Forest(
        trees,
        "mean-proba",
        multiplicities=multiplicities,
        algorithm=f"sklearn-{kind}",
        params={"bootstrap": bool(estimator.bootstrap), "n_estimators": len(trees), **_growth(estimator)},
    )
    labels = _labels(y, data, name)
    codes = None if labels is None else _class_codes(trees[0], labels)
    if labels is not None and codes is not None and (codes < 0).any():
        first = int(np.argmax(codes < 0))
        raise ModelImportError(
            f"the class labels given hold {labels[first]!r} (row {first}), not one of the classes the forest was fitted on "
            f"({', '.join(map(repr, classes[:6]))}{', ...' if len(classes) > 6 else ''}): pass the labels it was fitted with"
        )
    if verify or (verify is None and len(data) == forest.n_records):
        verify_counts(forest, data, codes)
    return forest


#: The settings that shape a forest's trees, kept with it so that a defense retrains it alike.
GROWTH = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf", "max_features", "max_leaf_nodes", "max_samples")


def _growth(estimator: Any) -> dict[str, Any]:
    """The estimator's tree settings (:data:`GROWTH`) that are plain JSON values."""
    settings = estimator.get_params()
    return {k: settings[k] for k in GROWTH if k in settings and (settings[k] is None or isinstance(settings[k], (str, int, float)))}


def _feature_names(estimator: Any, given: Sequence[str] | None) -> list[str]:
    if given is not None:
        names = list(given)
    elif hasattr(estimator, "feature_names_in_"):
        names = list(estimator.feature_names_in_)
    else:
        raise unnamed_features()
    if len(names) != estimator.n_features_in_:
        raise ModelImportError(f"{len(names)} feature names given, the estimator has {estimator.n_features_in_} features")
    return names


def bootstrap_multiplicities(estimator: Any) -> list[np.ndarray]:
    """How many times each tree of a fitted random forest / extra-trees drew each training row.

    Without bootstrap every tree sees every row once. With it, each tree's draw is redone from
    its stored seed as scikit-learn does: ``n_samples_bootstrap`` integers below the number of
    training rows, uniformly (``RandomState(seed).randint``), or — from scikit-learn 1.9, when the
    forest was fitted with sample or class weights — with probabilities proportional to the
    weights it stores. A tree fitted on weighted rows (weights other than its multiplicities)
    has weighted class counts and is refused with :class:`ModelImportError`.
    """
    n = _n_training_rows(estimator)
    out = []
    for i, est in enumerate(estimator.estimators_):
        sk = est.tree_
        if not estimator.bootstrap:
            m = np.ones(n, dtype=np.int64)
        else:
            m = np.bincount(_draw(estimator, est.random_state, n), minlength=n).astype(np.int64)
        _check_draw(i, sk, m, estimator.bootstrap)
        out.append(m)
    return out


def _n_training_rows(estimator: Any) -> int:
    n = getattr(estimator, "_n_samples", None)
    if n is not None:
        return int(n)
    root = estimator.estimators_[0].tree_
    if not estimator.bootstrap or estimator.max_samples is None:
        return int(round(root.weighted_n_node_samples[0] if estimator.bootstrap else root.n_node_samples[0]))
    raise ModelImportError("this scikit-learn version does not record the number of training rows: fit with max_samples=None")


def _draw(estimator: Any, seed: Any, n: int) -> np.ndarray:
    """The bootstrap indices of the tree seeded with ``seed`` (scikit-learn's ``_generate_sample_indices``)."""
    rng = np.random.RandomState(seed)
    size = _n_bootstrap(estimator, n)
    weights = getattr(estimator, "_sample_weight", None)
    if weights is None:
        return rng.randint(0, n, size)
    return rng.choice(n, size, replace=True, p=np.asarray(weights, dtype=float) / np.sum(weights))


def _n_bootstrap(estimator: Any, n: int) -> int:
    """Draws per tree: stored by scikit-learn ≥ 1.4, else computed by the rule of the time."""
    stored = getattr(estimator, "_n_samples_bootstrap", None)
    if stored is not None:
        return int(stored)
    m = estimator.max_samples
    if m is None:
        return n
    if isinstance(m, (int, np.integer)):
        return int(m)
    return max(round(n * m), 1)


def _check_whole(i: int, tree: Tree) -> None:
    counts = np.stack([n.counts for n in tree.nodes])  # type: ignore[misc]
    if np.abs(counts - np.round(counts)).max() > 1e-6:
        raise ModelImportError(
            f"tree {i}: its class counts are not whole numbers: its rows were weighted (class_weight or "
            "sample_weight), so its class counts are not row counts"
        )


def _check_draw(i: int, sk: Any, m: np.ndarray, bootstrap: bool) -> None:
    weighted, drawn = float(sk.weighted_n_node_samples[0]), int(sk.n_node_samples[0])
    if abs(weighted - m.sum()) > 1e-6 * max(1.0, weighted) or np.count_nonzero(m) != drawn:
        why = "its rows were weighted (class_weight or sample_weight), so its class counts are not row counts"
        if bootstrap and np.count_nonzero(m) != drawn:
            why = "the bootstrap redrawn from its random_state does not match it (another scikit-learn version?)"
        raise ModelImportError(
            f"tree {i}: the root holds {weighted:g} weighted and {drawn} distinct training rows, "
            f"the multiplicities give {m.sum()} and {np.count_nonzero(m)}: {why}"
        )
