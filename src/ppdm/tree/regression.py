"""Import fitted scikit-learn regressors: what a published regression tree, forest or squared-error
boosted model says about its numeric target.

A regressor is a :class:`Tree` or :class:`Forest` without classes (``is_regressor``):
``class_attribute`` names the target, each leaf's ``value`` is what the leaf predicts and its
``n_samples`` the rows (with their multiplicity) it was fitted on. What the leaf values publish is
linear in the targets (docs/regression.md):

* ``DecisionTreeRegressor`` / ``ExtraTreeRegressor`` (criterion ``squared_error``,
  ``friedman_mse`` or ``poisson``): a leaf's value is the mean target of its ``n`` rows, so
  ``Σ y = value · n``; a leaf of one row publishes that row's target;
* ``RandomForestRegressor`` / ``ExtraTreesRegressor``: each tree as above over its bootstrap
  draw, rows counted with the multiplicities redrawn from each tree's stored seed
  (:func:`~ppdm.tree.sklearn_forest.bootstrap_multiplicities`): ``Σ m_i y_i = value · Σ m_i``;
* ``GradientBoostingRegressor`` (loss ``squared_error``; Friedman 2001, Algorithm 2 "LS_Boost"):
  the initial score is the mean target and round m's leaf value is ``η`` times the mean residual
  ``y − F_{m−1}(x)`` of its rows;
* ``HistGradientBoostingRegressor`` (loss ``squared_error``): round m's leaf value is
  ``−η G / (n + λ)`` with ``G = Σ (F_{m−1}(x_i) − y_i)`` (hessian 1).

The boosted models record this step as a :class:`~ppdm.tree.newton.NewtonStep` with hessian 1
(``hessian_scale`` 1 on the ``"identity"`` link), or why their rounds cannot be read (sample
weights, rows subsampled from a stream the model does not store, an early-stopping hold-out).
Other losses (``absolute_error``, ``huber``, ``quantile``, ``poisson``, ``gamma``) publish medians,
quantiles or steps on a log scale, not linear in the targets: they are refused, naming the loss.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import ModelImportError, advising
from ppdm.tree.boosting import FlatTree, build_tree
from ppdm.tree.forest import Forest
from ppdm.tree.forest_check import verify_counts
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.newton import FLOAT32_TOLERANCE, NewtonStep, set_newton_step
from ppdm.tree.sklearn import _Feature, _missing_branch, _node_split, _numeric_values, _on_float32, trace_features, unnamed_features

#: The regression tree criteria whose leaf value is the mean target of the leaf's rows.
MEAN_CRITERIA = ("squared_error", "friedman_mse", "poisson", "mse")

SKLEARN_REGRESSORS = (
    "DecisionTreeRegressor", "ExtraTreeRegressor", "RandomForestRegressor", "ExtraTreesRegressor",
    "GradientBoostingRegressor", "HistGradientBoostingRegressor",
)  # fmt: skip


def target_attribute(data: pd.DataFrame, y: Any, given: str | None, features: Sequence[str]) -> str:
    """The name of a regressor's target column: ``given``, ``y``'s name, or the one numeric column
    of ``data`` the model does not read."""
    if given is not None:
        return given
    if getattr(y, "name", None) is not None:
        return str(y.name)
    found = [
        str(c) for c in data.columns
        if c not in features and pd.api.types.is_numeric_dtype(data[c]) and not pd.api.types.is_bool_dtype(data[c])
    ]  # fmt: skip
    if len(found) == 1:
        return found[0]
    where = f"columns {found} could all be it" if found else "no numeric column of the data is left over"
    raise advising(
        ModelImportError(f"pass class_attribute (or y as a named Series): the regressor's target column is not named and {where}"),
        "pass class_attribute (or y as a named Series)", "class_attribute", "name the target column of the table",
    )


def regressor_from_sklearn(
    estimator: Any,
    data: pd.DataFrame,
    feature_names: Sequence[str] | None = None,
    *,
    y: pd.Series | Sequence | None = None,
    prefix_sep: str = "_",
    ordinal_categories: Mapping[str, Sequence] | None = None,
    class_attribute: str | None = None,
    verify: bool | None = None,
) -> Tree | Forest:
    """Convert a fitted scikit-learn regressor (:data:`SKLEARN_REGRESSORS`) into a regression
    :class:`Tree` (a single tree) or :class:`Forest` over ``data``'s columns.

    Arguments as for :func:`~ppdm.tree.sklearn.tree_from_sklearn`; ``class_attribute`` names the
    target (default: ``y``'s name, else the one numeric column of ``data`` the model does not
    read). ``verify``: route ``data``'s rows through every tree and check every leaf's row count
    (default: when ``data`` has as many rows as the model was fitted on).
    """
    name = type(estimator).__name__
    if name not in SKLEARN_REGRESSORS:
        raise ModelImportError(f"cannot import a {name} as a regressor: expected one of {', '.join(SKLEARN_REGRESSORS)}")
    if not hasattr(estimator, "n_features_in_"):
        raise ModelImportError(f"the {name} is not fitted")
    if getattr(estimator, "n_outputs_", 1) != 1:
        raise ModelImportError(f"the {name} predicts several targets: only single-output regressors are imported")
    names = _feature_names(estimator, feature_names)
    features, domains, attributes = trace_features(data, names, prefix_sep, ordinal_categories)
    target = target_attribute(data, y, class_attribute, [a.name for a in attributes])
    if target in {a.name for a in attributes}:
        raise ModelImportError(f"the target {target!r} is also an input of the model")
    numeric = _numeric_values(data, features)
    model: Tree | Forest
    if name in ("DecisionTreeRegressor", "ExtraTreeRegressor"):
        model = _tree(estimator, features, domains, attributes, target, numeric, weights_known=False)
        n = model.root.n_samples
        if verify or (verify is None and n is not None and round(n) == len(data)):
            verify_counts(Forest([model], "mean", algorithm=model.algorithm), data)
        return model
    if name in ("RandomForestRegressor", "ExtraTreesRegressor"):
        model = _forest(estimator, features, domains, attributes, target, numeric)
    else:
        model = _boosted(estimator, features, domains, attributes, target)
    if verify or (verify is None and len(data) == model.n_records):
        verify_counts(model, data)
    return model


def _feature_names(estimator: Any, given: Sequence[str] | None) -> list[str]:
    names = list(given) if given is not None else list(getattr(estimator, "feature_names_in_", []))
    if not names:
        raise unnamed_features()
    if len(names) != estimator.n_features_in_:
        raise ModelImportError(f"{len(names)} feature names given, the estimator has {estimator.n_features_in_} features")
    return names


# -- regression trees and forests --------------------------------------------------------------
def _tree(
    est: Any, features: list[_Feature], domains: Mapping[str, tuple], attributes: list[Attribute], target: str,
    numeric: Mapping[str, np.ndarray], weights_known: bool,
) -> Tree:  # fmt: skip
    """One scikit-learn regression tree: its leaves' mean targets and weighted row counts.

    ``weights_known``: the rows' weights are multiplicities the import knows (a forest's
    bootstrap); otherwise a tree fitted with sample weights is refused (its means are weighted
    by numbers the model does not hold)."""
    criterion = str(getattr(est, "criterion", "squared_error"))
    if criterion not in MEAN_CRITERIA:
        raise ModelImportError(
            f"a regression tree with criterion={criterion!r} publishes leaf medians, not means: only "
            f"{', '.join(MEAN_CRITERIA[:3])} trees are audited"
        )
    sk = est.tree_
    if not weights_known and not np.allclose(sk.weighted_n_node_samples, sk.n_node_samples):
        raise ModelImportError("the regression tree was fitted with sample weights: its leaf means weigh rows by numbers the model does not hold")
    nodes: list[Node] = []
    parent = np.full(sk.node_count, -1)
    for i in range(sk.node_count):
        left, right = int(sk.children_left[i]), int(sk.children_right[i])
        node = Node(id=i, parent=None if parent[i] < 0 else int(parent[i]), depth=0 if parent[i] < 0 else nodes[parent[i]].depth + 1, label=0)
        node._n_samples = float(sk.weighted_n_node_samples[i])
        if left == -1:
            node.value = float(sk.value[i, 0, 0])
        else:
            parent[left] = parent[right] = i
            larger = 0 if sk.n_node_samples[left] >= sk.n_node_samples[right] else 1
            feature = features[sk.feature[i]]
            threshold = _on_float32(float(sk.threshold[i]), numeric.get(feature.attribute))
            node.split = _node_split(feature, threshold, domains, larger, _missing_branch(sk, i, feature))
            node.children = [left, right]
        nodes.append(node)
    return Tree(nodes, attributes, (), target, criterion=criterion, algorithm="sklearn-regression-tree", disclosure="error-rates")


def _forest(
    est: Any, features: list[_Feature], domains: Mapping[str, tuple], attributes: list[Attribute], target: str,
    numeric: Mapping[str, np.ndarray],
) -> Forest:  # fmt: skip
    from ppdm.tree.sklearn_forest import bootstrap_multiplicities

    if not hasattr(est, "estimators_"):
        raise ModelImportError(f"the {type(est).__name__} is not fitted (no estimators_)")
    trees = [_tree(e, features, domains, attributes, target, numeric, weights_known=True) for e in est.estimators_]
    multiplicities = bootstrap_multiplicities(est)
    kind = "random-forest" if type(est).__name__ == "RandomForestRegressor" else "extra-trees"
    return Forest(
        trees, "mean", multiplicities=multiplicities, algorithm=f"sklearn-{kind}-regressor",
        params={"bootstrap": bool(est.bootstrap), "n_estimators": len(trees)},
    )  # fmt: skip


# -- squared-error gradient boosting -----------------------------------------------------------
def _boosted(est: Any, features: list[_Feature], domains: Mapping[str, tuple], attributes: list[Attribute], target: str) -> Forest:
    loss = str(getattr(est, "loss", "squared_error"))
    if loss not in ("squared_error", "ls"):
        raise ModelImportError(
            f"{type(est).__name__} with loss={loss!r}: its leaf values are not linear in the targets; only loss='squared_error' is audited"
        )
    read = _gradient_boosting if type(est).__name__ == "GradientBoostingRegressor" else _hist_gradient_boosting
    flats, base, multiplicities, algorithm, params = read(est)
    trees = [build_tree(flat, features, domains, attributes, (), target, algorithm, 0, False) for flat in flats]
    for tree in trees:
        tree.disclosure = tree.disclosure.parse("error-rates")
    return Forest(
        trees, "additive", link="identity", base_score=[base], outputs=[0] * len(trees), multiplicities=multiplicities,
        algorithm=algorithm, params=params,
    )  # fmt: skip


Read = tuple[list[FlatTree], float, list[np.ndarray | None] | None, str, dict[str, Any]]


def _gradient_boosting(est: Any) -> Read:
    from ppdm.tree.sklearn_boosting import _regression_tree, _unweighted

    init = est.init_
    if isinstance(init, str) and init == "zero":
        base = 0.0
    elif type(init).__name__ == "DummyRegressor" and getattr(init, "strategy", "mean") == "mean":
        base = float(np.asarray(init.constant_).ravel()[0])
    else:
        raise ModelImportError(f"GradientBoostingRegressor with init={type(init).__name__}: only the mean (init=None) or 'zero' is supported")
    lr = float(est.learning_rate)
    flats = [_regression_tree(est.estimators_[stage, 0].tree_, lr) for stage in range(est.n_estimators_)]
    n = int(est.estimators_[0, 0].tree_.n_node_samples[0])
    held_out = est.subsample < 1.0 or getattr(est, "n_iter_no_change", None) is not None
    multiplicities: list[np.ndarray | None] | None = None if held_out else [np.ones(n, dtype=np.int64)] * len(flats)
    params: dict[str, Any] = {"learning_rate": lr, "subsample": float(est.subsample), "n_estimators": int(est.n_estimators_)}
    weighted = not all(_unweighted(e.tree_) for e in est.estimators_.ravel())
    hidden = "sample weights weight the rows' residuals" if weighted else None
    if held_out:
        hidden = "rows were subsampled (subsample < 1) or held out for early stopping, which the model does not store"
    # LS_Boost: each leaf's value is lr times the mean residual, i.e. the Newton step with hessian 1 and λ = 0
    set_newton_step(params, hidden or NewtonStep(lr, 0.0, 1.0))
    return flats, base, multiplicities, "sklearn-gradient-boosting-regressor", params


def _hist_gradient_boosting(est: Any) -> Read:
    from ppdm.tree.sklearn_boosting import _predictor_tree, _unconstrained

    if est.is_categorical_ is not None and np.any(est.is_categorical_):
        raise ModelImportError(
            "HistGradientBoostingRegressor with categorical features: encode them (one-hot or ordinal codes as numbers) "
            "before fitting; native categorical splits are not imported"
        )
    base = float(np.asarray(est._baseline_prediction, dtype=float).ravel()[0])
    lr, lam = float(est.learning_rate), float(est.l2_regularization)
    flats = [_predictor_tree(stage[0].nodes) for stage in est._predictors]
    n_rows = int(flats[0].n_samples[0])  # type: ignore[index]
    held_out = bool(est.do_early_stopping_ and est._use_validation_data)
    multiplicities: list[np.ndarray | None] | None = None if held_out else [np.ones(n_rows, dtype=np.int64)] * len(flats)
    params: dict[str, Any] = {"learning_rate": lr, "l2_regularization": lam, "max_iter": int(est.n_iter_)}
    hidden = None
    if not _unconstrained(est):
        hidden = "monotonic constraints clip the leaf values"
    if held_out:
        hidden = "rows were held out for early stopping (a random split the model does not store)"
    # −lr G / (H + λ + 1e−15) with H the leaf's rows (hessian 1), gradients in float32
    set_newton_step(params, hidden or NewtonStep(lr, lam + 1e-15, 1.0, tolerance=FLOAT32_TOLERANCE))
    return flats, base, multiplicities, "sklearn-hist-gradient-boosting-regressor", params

