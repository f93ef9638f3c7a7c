"""Import fitted scikit-learn gradient boosting: ``GradientBoostingClassifier`` and
``HistGradientBoostingClassifier`` (Friedman, *Greedy function approximation*, 2001).

Both store each node's number of training rows (``tree_.n_node_samples``; ``count`` of the
histogram trees' predictor nodes) and each leaf's value; the import keeps both, the values times
the learning rate, so that a row's raw score is the initial score plus the sum of its leaves'
values. Rows are counted once each; under row subsampling (``subsample < 1``) or with a
held-out early-stopping set, only the rows the tree was fitted on, and which rows those were
depends on the classes (a stratified split) or on a random stream the model does not store:
the multiplicities are then unknown.

For the binary log-loss the first tree's leaf values give its class counts (module
:mod:`ppdm.tree.boosting`): every row starts from the prior's probability ``p0``, so

* ``GradientBoostingClassifier`` (one Newton step per leaf,
  ``value = Σ(y − p0) / Σ p0(1 − p0)``): positives ``n1 = n (p0 + value · p0 (1 − p0))``;
* ``HistGradientBoostingClassifier`` (``value = −lr · G / (H + λ)``, ``G = n p0 − n1``,
  ``H = n p0 (1 − p0)``, λ = ``l2_regularization``): ``n1 = n p0 + value · (H + λ) / lr``.

They are claimed only when every count comes out whole (not with class or sample weights, or
monotonic constraints, which break the formulas).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import ModelImportError
from ppdm.tree.boosting import FlatTree, build_tree, counts_from_gradients, expit, resolve_classes
from ppdm.tree.forest import Forest
from ppdm.tree.forest_check import verify_counts
from ppdm.tree.newton import FLOAT32_TOLERANCE, NewtonStep, set_newton_step
from ppdm.tree.sklearn import trace_features, unnamed_features

_EPS = float(np.finfo(np.float64).eps)


def boosted_from_sklearn(
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
    """Convert a fitted ``GradientBoostingClassifier`` or ``HistGradientBoostingClassifier`` into
    an additive :class:`Forest` (arguments as for :func:`~ppdm.tree.sklearn_forest.forest_from_sklearn`)."""
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

    if isinstance(estimator, GradientBoostingClassifier):
        read = _gradient_boosting
    elif isinstance(estimator, HistGradientBoostingClassifier):
        read = _hist_gradient_boosting
    else:
        raise ModelImportError(
            f"cannot import a {type(estimator).__name__}: expected a fitted RandomForestClassifier, "
            "ExtraTreesClassifier, GradientBoostingClassifier or HistGradientBoostingClassifier"
        )
    if not hasattr(estimator, "classes_"):
        raise ModelImportError(f"the {type(estimator).__name__} is not fitted")
    names = _feature_names(estimator, feature_names)
    features, domains, attributes = trace_features(data, names, prefix_sep, ordinal_categories)
    k = len(estimator.classes_)
    name, classes, codes = resolve_classes(data, y, class_attribute, list(estimator.classes_), k, [a.name for a in attributes])
    flats, base, multiplicities, algorithm, params = read(estimator)
    logistic = k == 2
    trees = [
        build_tree(flat, features, domains, attributes, classes, name, algorithm, out, logistic)
        for flat, out in flats
    ]
    forest = Forest(
        trees, "additive", link="logistic" if logistic else "softmax", base_score=base,
        outputs=[out for _, out in flats], multiplicities=multiplicities, algorithm=algorithm, params=params,
    )  # fmt: skip
    if verify or (verify is None and len(data) == forest.n_records):
        verify_counts(forest, data, codes)
    return forest


def _feature_names(estimator: Any, given: Sequence[str] | None) -> list[str]:
    names = list(given) if given is not None else list(getattr(estimator, "feature_names_in_", []))
    if not names:
        raise unnamed_features()
    if len(names) != estimator.n_features_in_:
        raise ModelImportError(f"{len(names)} feature names given, the estimator has {estimator.n_features_in_} features")
    return names


Read = tuple[list[tuple[FlatTree, int]], np.ndarray, list[np.ndarray | None] | None, str, dict[str, Any]]


# -- GradientBoostingClassifier ----------------------------------------------------------------
def _gradient_boosting(est: Any) -> Read:
    if getattr(est, "loss", "log_loss") not in ("log_loss", "deviance"):
        raise ModelImportError(f"GradientBoostingClassifier with loss={est.loss!r}: only the log-loss is supported")
    k = est.estimators_.shape[1]
    base = _initial_scores(est, k)
    lr = float(est.learning_rate)
    flats = []
    for stage in range(est.n_estimators_):
        for out in range(k):
            flats.append((_regression_tree(est.estimators_[stage, out].tree_, lr), out))
    first = flats[0][0]
    if k == 1:
        p0 = float(expit(base[0]))
        raw = first.value / lr  # type: ignore[operator]
        first.counts = counts_from_gradients(first, first.n_samples, -first.n_samples * raw * p0 * (1 - p0), p0)  # type: ignore[arg-type,operator]
        if first.counts is not None and not _unweighted(est.estimators_[0, 0].tree_):
            first.counts = None
    n = int(est.estimators_[0, 0].tree_.n_node_samples[0])
    held_out = est.subsample < 1.0 or getattr(est, "n_iter_no_change", None) is not None
    multiplicities = None if held_out else [np.ones(n, dtype=np.int64)] * len(flats)
    params: dict[str, Any] = {"learning_rate": lr, "subsample": float(est.subsample), "n_estimators": int(est.n_estimators_)}
    weighted = not all(_unweighted(e.tree_) for e in est.estimators_.ravel())
    # Friedman's one Newton step: lr (K − 1)/K Σ(y − p) / Σ p(1 − p), i.e. a hessian scale K/(K − 1)
    scale = 1.0 if k == 1 else k / (k - 1.0)
    set_newton_step(params, "sample weights weight the rows' gradients" if weighted else NewtonStep(lr, 0.0, scale))
    return flats, base, multiplicities, "sklearn-gradient-boosting", params


def _initial_scores(est: Any, k: int) -> np.ndarray:
    """The raw score every row starts from: the link of the prior (``init=None``) or zero."""
    init = est.init_
    if isinstance(init, str) and init == "zero":
        return np.zeros(k)
    prior = getattr(init, "class_prior_", None)
    if prior is None or getattr(init, "strategy", "prior") != "prior":
        raise ModelImportError(
            f"GradientBoostingClassifier with init={type(init).__name__}: only the prior (init=None) or 'zero' is supported"
        )
    p = np.clip(np.asarray(prior, dtype=float), _EPS, 1 - _EPS)
    if k == 1:
        return np.array([np.log(p[1] / (1 - p[1]))])
    logp = np.log(p)
    return logp - logp.mean()


def _regression_tree(sk: Any, lr: float) -> FlatTree:
    left, right = sk.children_left.astype(np.intp), sk.children_right.astype(np.intp)
    inner = left >= 0
    n = sk.n_node_samples.astype(float)
    missing_left = np.zeros(len(left), dtype=bool)
    missing_left[inner] = n[left[inner]] >= n[right[inner]]  # scikit-learn: the larger child
    value = np.where(~inner, lr * sk.value[:, 0, 0], np.nan)
    return FlatTree(left, right, sk.feature, sk.threshold, missing_left, value=value, n_samples=n)


def _unweighted(sk: Any) -> bool:
    return bool(np.allclose(sk.weighted_n_node_samples, sk.n_node_samples))


# -- HistGradientBoostingClassifier ------------------------------------------------------------
def _hist_gradient_boosting(est: Any) -> Read:
    if est.is_categorical_ is not None and np.any(est.is_categorical_):
        raise ModelImportError(
            "HistGradientBoostingClassifier with categorical features: encode them (one-hot or ordinal "
            "codes as numbers) before fitting; native categorical splits are not imported"
        )
    base = np.asarray(est._baseline_prediction, dtype=float).ravel()
    lr, lam = float(est.learning_rate), float(est.l2_regularization)
    flats = [(_predictor_tree(p.nodes), out) for stage in est._predictors for out, p in enumerate(stage)]
    first = flats[0][0]
    if len(base) == 1 and est.class_weight is None and _unconstrained(est):
        p0 = float(expit(base[0]))
        n = first.n_samples
        gradient = -first.value * (n * p0 * (1 - p0) + lam + 1e-15) / lr  # type: ignore[operator]
        first.counts = counts_from_gradients(first, n, gradient, p0)  # type: ignore[arg-type]
    n_rows = int(first.n_samples[0])  # type: ignore[index]
    held_out = est.do_early_stopping_ and est._use_validation_data
    multiplicities = None if held_out else [np.ones(n_rows, dtype=np.int64)] * len(flats)
    params: dict[str, Any] = {"learning_rate": lr, "l2_regularization": lam, "max_iter": int(est.n_iter_)}
    hidden = "class_weight weights the rows' gradients" if est.class_weight is not None else None
    if not _unconstrained(est):
        hidden = "monotonic constraints clip the leaf values"
    # HistGradientBoosting's leaves: −lr G / (H + λ + 1e−15), hessians p (1 − p) in float32
    set_newton_step(params, hidden or NewtonStep(lr, lam + 1e-15, 1.0, tolerance=FLOAT32_TOLERANCE))
    return flats, base, multiplicities, "sklearn-hist-gradient-boosting", params


def _unconstrained(est: Any) -> bool:
    cst = est.monotonic_cst
    values = list(cst.values()) if isinstance(cst, Mapping) else list(cst if cst is not None else [])
    return not any(v != 0 for v in values)


def _predictor_tree(nodes: np.ndarray) -> FlatTree:
    leaf = nodes["is_leaf"].astype(bool)
    left = np.where(leaf, -1, nodes["left"].astype(np.intp))
    right = np.where(leaf, -1, nodes["right"].astype(np.intp))
    value = np.where(leaf, nodes["value"], np.nan)
    return FlatTree(
        left, right, nodes["feature_idx"], nodes["num_threshold"], nodes["missing_go_to_left"].astype(bool),
        value=value, n_samples=nodes["count"].astype(float),
    )  # fmt: skip
