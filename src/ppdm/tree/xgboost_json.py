"""Import XGBoost models from XGBoost's own JSON model format (``booster.save_model("m.json")``,
``booster.save_raw(raw_format="json")``); nothing is unpickled, and xgboost itself is not needed.

Per tree the file holds, for every node, ``sum_hessian`` (the cover: the sum of the training
rows' hessians), ``base_weights`` (a node's weight ``−G/(H+λ)``; at leaves times the learning
rate η) and the split: input column ``split_indices``, threshold ``split_conditions`` (at leaves
the leaf value) and ``default_left`` (where a missing value goes). The model also stores the
base score and the objective.

Splits: XGBoost sends ``x < c`` left, comparing float32 copies of the data; ppdm's
:class:`~ppdm.tree.splits.ThresholdSplit` sends ``x <= t`` left in float64, so ``t`` is the
largest float64 whose float32 rounding is below ``c`` (:func:`~ppdm.tree.boosting.below_float32`):
the same side for every value.

Counts (Chen & Guestrin 2016, eq. 5; see :mod:`ppdm.tree.boosting`): in the first round every row
has the base score's probability, so a node's cover is ``n · h0`` with ``h0 = p0(1 − p0)``
(``binary:logistic``) or ``2 p0k (1 − p0k)`` (``multi:softprob``, class ``k``): the first round's
trees give each node's number of rows. For ``binary:logistic`` the first tree's leaf values
``w = −η G / (H + λ)`` then give ``G = n p0 − n1``, the positives, given λ and η: read from the
training configuration (``booster.save_config()``; taken from a live booster), or else solved
from the tree itself (internal nodes' unscaled weights add up: ``G_parent = G_left + G_right``).
Counts are claimed only when they come out whole. Later rounds publish covers and leaf values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import ModelImportError, advising
from ppdm.files import MAX_MODEL_BYTES, load_json, read_bytes
from ppdm.tree.boosting import FlatTree, below_float32, build_tree, counts_from_gradients, expit, resolve_classes, softmax, whole
from ppdm.tree.forest import Forest
from ppdm.tree.forest_check import rows_once_by_covers, verify_counts
from ppdm.tree.newton import FLOAT32_TOLERANCE, NewtonStep, set_newton_step
from ppdm.tree.sklearn import trace_features

_OBJECTIVES = ("binary:logistic", "multi:softprob", "multi:softmax")


def forest_from_xgboost(
    model: Any,
    data: pd.DataFrame,
    feature_names: Sequence[str] | None = None,
    *,
    config: Any = None,
    y: pd.Series | Sequence | None = None,
    classes: Sequence[Any] | None = None,
    prefix_sep: str = "_",
    ordinal_categories: Mapping[str, Sequence] | None = None,
    class_attribute: str | None = None,
    verify: bool | None = None,
) -> Forest:
    """Convert an XGBoost classifier (or ``reg:squarederror`` regressor: :func:`_regressor`) into an
    additive :class:`Forest` over ``data``'s columns.

    ``model``: a JSON model file's path, its text or bytes, its parsed dictionary, or a live
    ``xgboost.Booster`` / ``XGBClassifier`` (read through ``save_raw(raw_format="json")``).
    ``config``: the training configuration (``booster.save_config()``: a path, text or
    dictionary; read from a live booster), for λ, η and the row subsampling. ``feature_names``:
    the input columns in order (default: the names stored in the model). ``classes``: the class
    values, ``classes[i]`` being the class XGBoost calls ``i`` (default: the class column's
    categories, else its sorted values). Other arguments as for
    :func:`~ppdm.tree.sklearn.tree_from_sklearn`; input columns are traced back to ``data``'s
    attributes the same way (numeric, ordinal codes, one-hot). ``verify``: route ``data``'s rows
    through every tree whose row counts are known and check them (default: when ``data`` has as
    many rows as the first tree saw).
    """
    doc, live_config = _model_json(model)
    config = _config(config) if config is not None else live_config
    learner = _field(doc, "learner", dict, "")
    objective = _field(_field(learner, "objective", dict, "learner"), "name", str, "learner.objective")
    if objective == "reg:squarederror":
        return _regressor(doc, config, data, feature_names, prefix_sep, ordinal_categories, class_attribute, y, verify)
    if objective.startswith(("reg:", "count:", "survival:")):
        raise ModelImportError(f"XGBoost objective {objective!r}: its leaf values are not linear in the targets; only reg:squarederror regressors are audited")
    if objective not in _OBJECTIVES:
        raise ModelImportError(f"XGBoost objective {objective!r} is not a model ppdm imports ({', '.join(_OBJECTIVES)}, reg:squarederror)")
    booster = _field(learner, "gradient_booster", dict, "learner")
    if booster.get("name") != "gbtree":
        raise ModelImportError(f"XGBoost booster {booster.get('name')!r}: only 'gbtree' models are imported")
    raw_trees = _field(_field(booster, "model", dict, "learner.gradient_booster"), "trees", list, "learner.gradient_booster.model")
    if not raw_trees:
        raise ModelImportError("XGBoost model: learner.gradient_booster.model.trees is empty")
    _check_declared_counts(booster["model"], raw_trees)
    info = list(booster["model"].get("tree_info", [0] * len(raw_trees)))
    k = max(int(_field(learner["learner_model_param"], "num_class", str, "learner.learner_model_param")), 1)
    if len(info) != len(raw_trees) or not all(type(o) is int and 0 <= o < max(k, 1) for o in info):
        raise ModelImportError(f"XGBoost model: tree_info must give each of the {len(raw_trees)} trees a class from 0 to {max(k, 1) - 1}")
    base = _base_margin(learner["learner_model_param"]["base_score"], objective, k)
    names = list(feature_names) if feature_names is not None else list(learner.get("feature_names") or [])
    n_features = int(learner["learner_model_param"]["num_feature"])
    if len(names) != n_features:
        raise advising(
            ModelImportError(f"pass feature_names: the model has {n_features} input columns, {len(names)} names known"),
            "pass feature_names: ", "feature_names",
        )
    features, domains, attributes = trace_features(data, names, prefix_sep, ordinal_categories)
    n_classes = 2 if objective == "binary:logistic" else k
    name, class_values, codes = resolve_classes(data, y, class_attribute, classes, n_classes, [a.name for a in attributes])
    flats = [_flat(t, i) for i, t in enumerate(raw_trees)]
    params = _train_params(config)
    first_round = _first_round(booster["model"], len(flats))
    _derive_counts(flats, info, first_round, base, objective, learner, params)
    logistic = objective == "binary:logistic"
    trees = [
        build_tree(f, features, domains, attributes, class_values, name, "xgboost", info[i], logistic)
        for i, f in enumerate(flats)
    ]
    forest = Forest(
        trees, "additive", link="logistic" if logistic else "softmax", base_score=base, outputs=info,
        multiplicities=_multiplicities(flats, params), algorithm="xgboost", params=params,
    )  # fmt: skip
    root = trees[0].root.n_samples
    if verify or (verify is None and root is not None and round(root) == len(data)):
        verify_counts(forest, data, codes)
        _rows_once_from_data(forest, data, params)
    return forest


def _rows_once_from_data(forest: Forest, data: pd.DataFrame, params: dict[str, Any]) -> None:
    """Without the training configuration, whether rows were subsampled read off ``data`` (the
    training rows): when every round's covers are their hessians, each row counted once in every
    round (:func:`~ppdm.tree.forest_check.rows_once_by_covers`), said in ``forest.params``."""
    if "subsample" in params or any(m is not None for m in forest.multiplicities):
        return
    if rows_once_by_covers(forest, data):
        forest.multiplicities = [np.ones(len(data), dtype=np.int64)] * len(forest.trees)
        forest.params["rows_once"] = "every round's covers are the training rows' hessians (checked on the data given): no row subsampled"


def _regressor(
    doc: Mapping, config: Mapping | None, data: pd.DataFrame, feature_names: Sequence[str] | None, prefix_sep: str,
    ordinal_categories: Mapping[str, Sequence] | None, target: str | None, y: Any, verify: bool | None,
) -> Forest:  # fmt: skip
    """A ``reg:squarederror`` model as a regression :class:`Forest` (``"identity"`` link).

    Every row's hessian is 1, so a node's cover is its number of rows (in every round), and round
    m's leaf value is ``−η Σ (F_{m−1}(x_i) − y_i) / (n + λ)``: the Newton step of
    :mod:`ppdm.tree.newton` with hessian 1, scores in float32 as XGBoost keeps them. The base
    score is the raw score every row starts from (XGBoost's estimate of the mean target)."""
    from dataclasses import replace

    from ppdm.tree.regression import target_attribute

    learner = doc["learner"]
    booster = _field(learner, "gradient_booster", dict, "learner")
    if booster.get("name") != "gbtree":
        raise ModelImportError(f"XGBoost booster {booster.get('name')!r}: only 'gbtree' models are imported")
    raw_trees = _field(_field(booster, "model", dict, "learner.gradient_booster"), "trees", list, "learner.gradient_booster.model")
    if not raw_trees:
        raise ModelImportError("XGBoost model: learner.gradient_booster.model.trees is empty")
    _check_declared_counts(booster["model"], raw_trees)
    param = _field(learner, "learner_model_param", dict, "learner")
    if int(param.get("num_target", "1") or 1) != 1:
        raise ModelImportError("XGBoost regressor with several targets: only single-target models are imported")
    base = _numbers(param["base_score"])
    if len(base) != 1 or not np.isfinite(base).all():
        raise ModelImportError(f"XGBoost model: base_score {str(param['base_score'])[:40]!r} is not one finite number")
    names = list(feature_names) if feature_names is not None else list(learner.get("feature_names") or [])
    if len(names) != int(param["num_feature"]):
        raise advising(
            ModelImportError(f"pass feature_names: the model has {param['num_feature']} input columns, {len(names)} names known"),
            "pass feature_names: ", "feature_names",
        )
    features, domains, attributes = trace_features(data, names, prefix_sep, ordinal_categories)
    name = target_attribute(data, y, target, [a.name for a in attributes])
    flats = [_flat(t, i) for i, t in enumerate(raw_trees)]
    for flat in flats:
        flat.n_samples = whole(flat.cover)  # hessian 1: the cover counts the rows
    params = _train_params(config)
    step = _newton_step(flats, "reg:squarederror", learner, params)
    set_newton_step(params, replace(step, hessian_scale=1.0) if isinstance(step, NewtonStep) else step)
    trees = [build_tree(f, features, domains, attributes, (), name, "xgboost", 0, False) for f in flats]
    forest = Forest(
        trees, "additive", link="identity", base_score=base, outputs=[0] * len(trees),
        multiplicities=_multiplicities(flats, params), algorithm="xgboost-regressor", params=params,
    )  # fmt: skip
    root = trees[0].root.n_samples
    if verify or (verify is None and root is not None and round(root) == len(data)):
        verify_counts(forest, data)
    return forest


# -- reading the model -------------------------------------------------------------------------
def _model_json(model: Any) -> tuple[dict, dict | None]:
    """The model's JSON document, and the training configuration when the model is live."""
    if isinstance(model, Mapping):
        return dict(model), None
    if isinstance(model, (bytes, bytearray, str, Path)):
        return _parse(model, "model"), None
    booster = model.get_booster() if hasattr(model, "get_booster") else model
    if not hasattr(booster, "save_raw"):
        raise ModelImportError(f"cannot read an XGBoost model from a {type(model).__name__}")
    return json.loads(bytes(booster.save_raw(raw_format="json"))), json.loads(booster.save_config())


def _config(config: Any) -> dict:
    return dict(config) if isinstance(config, Mapping) else _parse(config, "config")


def _parse(source: Any, what: str) -> dict:
    """A JSON document from bytes, JSON text, or a file path; errors name the file."""
    where = what
    if isinstance(source, (bytes, bytearray)):
        text = bytes(source)
    elif isinstance(source, str) and source.lstrip().startswith("{"):
        text = source.encode()
    else:
        path = Path(source)
        where = str(path)
        if not path.is_file():
            raise ModelImportError(f"{path}: no such XGBoost {what} file")
        text = read_bytes(path, f"XGBoost {what}", MAX_MODEL_BYTES, ModelImportError)
    try:
        doc = load_json(text, where, ModelImportError)
    except ModelImportError as exc:
        if "not valid JSON" not in str(exc) and "not a text file" not in str(exc):
            raise
        raise ModelImportError(
            f"{where}: not JSON (save the {what} as JSON: booster.save_model('model.json') or save_raw(raw_format='json'))"
        ) from None
    if not isinstance(doc, dict):
        raise ModelImportError(f"{where}: expected a JSON object")
    return doc


def _field(obj: Mapping, key: str, kind: type, where: str) -> Any:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if not isinstance(value, kind):
        raise ModelImportError(f"XGBoost model: {where + '.' if where else ''}{key} is missing or malformed")
    return value


def _numbers(text: str) -> np.ndarray:
    """XGBoost's number lists: ``"[2.4892248E-1]"``, ``"[1E0,2E0]"`` or a plain ``"0.5"``."""
    return np.array([float(v) for v in str(text).strip("[]").split(",")])


def _base_margin(text: str, objective: str, k: int) -> np.ndarray:
    """The raw score every row starts from: the logit of ``base_score`` for binary:logistic, the
    stored margins (one per class) for the multiclass objectives."""
    values = _numbers(text)
    if not len(values) or not np.isfinite(values).all():
        raise ModelImportError(f"XGBoost model: base_score {str(text)[:40]!r} is not a finite number")
    if objective == "binary:logistic":
        p = float(values[0])
        if not 0 < p < 1:
            raise ModelImportError(f"XGBoost model: base_score {p:g} is not a probability strictly between 0 and 1")
        return np.array([np.log(p / (1.0 - p))])
    return np.broadcast_to(values, (k,)).astype(float) if len(values) in (1, k) else values


def _declared(obj: Mapping, key: str, where: str) -> int | None:
    """The count ``obj[key]`` declares (XGBoost writes it as text: ``"5"``), ``None`` when absent."""
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if value is None:
        return None
    try:
        number = int(value) if not isinstance(value, (bool, float)) else None
    except (TypeError, ValueError):
        number = None
    if number is None or number < 0:
        raise ModelImportError(f"XGBoost model: {where}.{key} {str(value)[:40]!r} is not a count")
    return number


def _check_declared_counts(model: Mapping, trees: list) -> None:
    """Refuse a file whose declared counts disagree with what it holds, as XGBoost's own loader
    does: ``gbtree_model_param.num_trees`` against the trees, ``iteration_indptr`` (rising from 0
    to the number of trees), each tree's ``id`` and ``tree_param.num_nodes`` against its arrays."""
    where = "learner.gradient_booster.model"
    declared = _declared(model.get("gbtree_model_param", {}), "num_trees", f"{where}.gbtree_model_param")
    if declared is not None and declared != len(trees):
        raise ModelImportError(f"XGBoost model: {where}.gbtree_model_param.num_trees is {declared:,} but the file holds {len(trees):,} trees")
    indptr = model.get("iteration_indptr")
    if indptr is not None:
        ok = isinstance(indptr, list) and len(indptr) >= 1 and all(type(v) is int for v in indptr)
        if not ok or indptr[0] != 0 or indptr[-1] != len(trees) or any(b < a for a, b in zip(indptr, indptr[1:])):
            raise ModelImportError(f"XGBoost model: {where}.iteration_indptr must rise from 0 to the {len(trees):,} trees the file holds")
    for i, t in enumerate(trees):
        if not isinstance(t, Mapping):
            continue  # named by _flat
        if "id" in t and (type(t["id"]) is not int or t["id"] != i):
            raise ModelImportError(f"XGBoost tree {i}: its id is {str(t['id'])[:20]!r}, not {i} (the trees are out of order or missing)")
        nodes = _declared(t.get("tree_param", {}), "num_nodes", f"tree {i}.tree_param")
        children = t.get("left_children")
        if nodes is not None and isinstance(children, list) and nodes != len(children):
            raise ModelImportError(f"XGBoost tree {i}: tree_param.num_nodes is {nodes:,} but the tree holds {len(children):,} nodes")


def _flat(t: Mapping, i: int) -> FlatTree:
    where = f"tree {i}"
    if not isinstance(t, Mapping):
        raise ModelImportError(f"XGBoost {where}: expected an object")
    if int(t.get("tree_param", {}).get("size_leaf_vector", "1") or 1) > 1:
        raise ModelImportError(f"XGBoost {where}: multi-output trees (vector leaves) are not imported")
    if any(int(s) != 0 for s in t.get("split_type", [])):
        raise ModelImportError(
            f"XGBoost {where}: categorical splits (enable_categorical) are not imported; "
            "encode the categorical columns (one-hot or ordinal codes) before fitting"
        )
    left = _array(t, "left_children", np.intp, where)
    right = _array(t, "right_children", np.intp, where)
    cond = _array(t, "split_conditions", float, where)
    inner = left >= 0
    if len(cond) != len(left) or not np.isfinite(cond).all():
        raise ModelImportError(f"XGBoost {where}: split_conditions must hold one finite number per node")
    threshold = np.array([below_float32(c) if is_inner else np.nan for c, is_inner in zip(cond, inner, strict=True)])
    flat = FlatTree(
        left, right, _array(t, "split_indices", np.intp, where), threshold,
        _array(t, "default_left", bool, where), value=np.where(inner, np.nan, cond),
        cover=_array(t, "sum_hessian", float, where),
        n_samples=None,
    )  # fmt: skip
    flat.check(f"XGBoost {where}")
    return flat


def _array(t: Mapping, key: str, dtype: Any, where: str) -> np.ndarray:
    """The list ``t[key]`` as an array of ``dtype``; a missing or malformed one is named."""
    values = t.get(key) if isinstance(t, Mapping) else None
    if not isinstance(values, list) or not all(isinstance(v, (int, float)) for v in values):
        raise ModelImportError(f"XGBoost {where}: {key} is missing or not a list of numbers")
    try:
        return np.asarray(values, dtype=dtype)
    except (OverflowError, ValueError):
        raise ModelImportError(f"XGBoost {where}: {key} holds a number out of range") from None


def _first_round(model: Mapping, n_trees: int) -> int:
    """How many trees the first boosting round grew."""
    indptr = model.get("iteration_indptr")
    if isinstance(indptr, list) and len(indptr) > 1:
        return int(indptr[1])
    return n_trees


def _train_params(config: Mapping | None) -> dict[str, Any]:
    """η, λ, α, max_delta_step and the row subsampling from a training configuration."""
    if not config:
        return {}
    try:
        tp = config["learner"]["gradient_booster"]["tree_train_param"]
        return {
            "learning_rate": float(tp["eta"]),
            "reg_lambda": float(tp["lambda"]),
            "reg_alpha": float(tp["alpha"]),
            "max_delta_step": float(tp["max_delta_step"]),
            "subsample": float(tp["subsample"]),
            "sampling_method": str(tp.get("sampling_method", "uniform")),
            "min_child_weight": float(tp.get("min_child_weight", 1.0)),
        }
    except (KeyError, TypeError, ValueError):
        raise ModelImportError("XGBoost config: learner.gradient_booster.tree_train_param is missing or malformed") from None


# -- what the statistics reveal ----------------------------------------------------------------
def _derive_counts(
    flats: list[FlatTree], info: list[int], first_round: int, base: np.ndarray, objective: str,
    learner: Mapping, params: dict[str, Any],
) -> None:  # fmt: skip
    """Row counts of the first round's trees (cover / h0), the Newton step of every round
    (:mod:`ppdm.tree.newton`) and, for binary:logistic, the first tree's class counts (see the
    module docstring)."""
    p = expit(base) if objective == "binary:logistic" else softmax(base)
    for i in range(min(first_round, len(flats))):
        pk = float(p[info[i]] if len(p) > 1 else p[0])
        h0 = pk * (1 - pk) * (1.0 if objective == "binary:logistic" else 2.0)
        flats[i].n_samples = whole(flats[i].cover / h0)  # type: ignore[operator]
    step = _newton_step(flats, objective, learner, params)
    set_newton_step(params, step)
    first = flats[0]
    if objective != "binary:logistic" or first_round != 1 or first.n_samples is None or not isinstance(step, NewtonStep):
        return
    lam, eta = step.l2, step.learning_rate
    gradient = -first.value * (first.cover + lam) / eta  # type: ignore[operator]
    first.counts = counts_from_gradients(first, first.n_samples, gradient, float(p[0]))


def _newton_step(flats: list[FlatTree], objective: str, learner: Mapping, params: dict[str, Any]) -> NewtonStep | str:
    """λ and η (the configuration's, else solved from the trees' weights), or why the leaf values
    are not the plain Newton step ``−η G / (H + λ)``."""
    weight = float(learner["objective"].get("reg_loss_param", {}).get("scale_pos_weight", "1"))
    parallel = int(learner["gradient_booster"]["model"].get("gbtree_model_param", {}).get("num_parallel_tree", "1") or 1)
    hidden = {
        "reg_alpha (an L1 penalty) shrinks every gradient sum": params.get("reg_alpha", 0.0) != 0.0,
        "max_delta_step clips the leaf values": params.get("max_delta_step", 0.0) != 0.0,
        "scale_pos_weight weights the positive rows' gradients": weight != 1.0,
        "num_parallel_tree > 1 grows several trees per round": parallel != 1,
        "rows were drawn by gradient-based sampling, which the model does not store": params.get("sampling_method", "uniform") != "uniform",
    }
    for reason, applies in hidden.items():
        if applies:
            return reason
    if "reg_lambda" in params:
        lam, eta = params["reg_lambda"], params["learning_rate"]
    else:
        solved = _solve_lambda_eta(flats, learner["gradient_booster"]["model"]["trees"])
        if solved is None:
            return "the file alone does not give λ and η (no tree with two internal children): pass the training configuration"
        lam, eta = solved
        params.setdefault("reg_lambda", lam)
        params.setdefault("learning_rate", eta)
    scale = 1.0 if objective == "binary:logistic" else 2.0
    # a leaf whose hessian sum is below min_child_weight is valued 0 (XGBoost's CalcWeight); the
    # library's default when the configuration is not given
    floor = float(params.get("min_child_weight", 1.0))
    return NewtonStep(float(eta), float(lam), scale, float32=True, tolerance=FLOAT32_TOLERANCE, min_hessian=floor)


def _solve_lambda_eta(flats: Sequence[FlatTree], trees: Sequence[Mapping]) -> tuple[float, float] | None:
    """λ and η from the trees' weights alone: a parent's gradient sum is its children's.

    With ``g(c) = w_c (H_c + λ)`` (internal nodes store the unscaled weight, leaves η times it),
    ``g(parent) = g(left) + g(right)``: parents of two internal nodes give λ, then parents of
    leaves give 1/η, each by least squares pooled over every tree (the weights are float32: one
    tree gives λ to about 10⁻⁴, a hundred trees to about 10⁻⁶).
    """
    parts = []
    for flat, tree in zip(flats, trees):
        w = np.asarray(tree["base_weights"], dtype=float)
        if len(w) != len(flat.left) or flat.cover is None:
            continue
        inner = np.flatnonzero(~flat.is_leaf)
        parts.append((w, flat.cover, flat.is_leaf, flat.left, flat.right, inner))
    a_all, b_all = [], []
    for w, H, leaf, L, R, inner in parts:
        both = inner[~leaf[L[inner]] & ~leaf[R[inner]]]
        a_all.append(w[both] - w[L[both]] - w[R[both]])
        b_all.append(w[L[both]] * H[L[both]] + w[R[both]] * H[R[both]] - w[both] * H[both])
    a, b = (np.concatenate(x) if x else np.zeros(0) for x in (a_all, b_all))
    if not np.any(a):
        return None
    lam = float(a @ b / (a @ a))
    x_all, y_all = [], []
    for w, H, leaf, L, R, inner in parts:
        g = w * (H + lam)
        at_leaves = np.zeros(len(inner))
        rest = g[inner].copy()
        for side in (L, R):
            child = side[inner]
            at_leaves += np.where(leaf[child], g[child], 0.0)
            rest -= np.where(leaf[child], 0.0, g[child])
        use = at_leaves != 0
        x_all.append(at_leaves[use])
        y_all.append(rest[use])
    x, y = (np.concatenate(v) if v else np.zeros(0) for v in (x_all, y_all))
    if lam < 0 or not len(x):
        return None
    inverse_eta = float(x @ y / (x @ x))
    return (lam, 1.0 / inverse_eta) if inverse_eta > 0 else None


def _multiplicities(flats: list[FlatTree], params: Mapping[str, Any]) -> list[np.ndarray | None] | None:
    """Each row once in every tree when the configuration says rows were not subsampled."""
    n = flats[0].n_samples
    if n is None or params.get("subsample") != 1.0:
        return None
    return [np.ones(int(n[0]), dtype=np.int64)] * len(flats)
