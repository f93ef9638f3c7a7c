"""Import LightGBM models from LightGBM's own formats: the model text file
(``booster.save_model("m.txt")``, ``model_to_string()``) or the ``dump_model()`` JSON; nothing
is unpickled, and lightgbm itself is not needed.

Per tree the model holds each leaf's value, ``leaf_count`` (training rows) and ``leaf_weight``
(sum of hessians, the cover), each internal node's ``internal_count`` (and a rounded
``internal_weight``), and the splits: ``x <= threshold`` goes left (``decision_type`` ``<=``,
thresholds in float64, compared with float64 data), a missing value goes where
``default_left`` says (missing type NaN) or where 0 goes (missing type None: LightGBM reads NaN
as 0). The text file also lists the training parameters.

Counts: every tree publishes its rows per node. For the binary log-loss (``binary sigmoid:1``)
the first tree also gives its class counts (see :mod:`ppdm.tree.boosting`): LightGBM starts every
row from ``p0`` = the share of positives (``boost_from_average``) and adds that score,
``log(p0/(1 − p0))``, to the first tree's leaves; a leaf's cover is ``n p0 (1 − p0)``, which
gives ``p0``, and its value ``bias − lr · G / (H + λ2)`` gives ``G = n p0 − n1``, the positives,
with the learning rate and ``lambda_l2`` from the parameters (text file) or ``params``. They are
claimed only when they come out whole, and not with ``lambda_l1``, ``max_delta_step``,
``path_smooth``, class weights or GOSS, which change the formula.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import ModelImportError, NotFittedError, advising
from ppdm.tree.boosting import FlatTree, build_tree, counts_from_gradients, resolve_classes, whole
from ppdm.tree.forest import Forest
from ppdm.tree.forest_check import verify_counts
from ppdm.tree.newton import FLOAT32_TOLERANCE, NewtonStep, set_newton_step
from ppdm.tree.sklearn import trace_features

_ZERO = 1e-35  # LightGBM's kZeroThreshold: |x| <= it counts as zero
_MISSING = {0: "None", 1: "Zero", 2: "NaN"}


def _unsanitized(names: Sequence[str], data: pd.DataFrame, prefix_sep: str) -> list[str]:
    """The model's feature names with ``data``'s names restored: LightGBM writes every whitespace
    in a name as ``_`` ("Securities Account" becomes "Securities_Account", a one-hot column
    "town_b c" "town_b_c"). A name that is a column already, or matches none, is kept."""
    def clean(text: str) -> str:
        return re.sub(r"\s", "_", text)

    wanted = {str(n) for n in names} - {str(c) for c in data.columns}
    original: dict[str, str] = {}
    for c in map(str, data.columns):
        original.setdefault(clean(c), c)
        if wanted and not pd.api.types.is_numeric_dtype(data[c]):
            for v in data[c].dropna().unique():
                original.setdefault(clean(f"{c}{prefix_sep}{v}"), f"{c}{prefix_sep}{v}")
    return [n if n not in wanted else original.get(n, n) for n in map(str, names)]


def forest_from_lightgbm(
    model: Any,
    data: pd.DataFrame,
    feature_names: Sequence[str] | None = None,
    *,
    params: Mapping[str, Any] | None = None,
    y: pd.Series | Sequence | None = None,
    classes: Sequence[Any] | None = None,
    prefix_sep: str = "_",
    ordinal_categories: Mapping[str, Sequence] | None = None,
    class_attribute: str | None = None,
    verify: bool | None = None,
) -> Forest:
    """Convert a LightGBM classifier (or L2 ``regression`` model: :func:`_regressor`) into an
    additive :class:`Forest` over ``data``'s columns.

    ``model``: a model text file's path, its text, a ``dump_model()`` dictionary, or a live
    ``lightgbm.Booster`` / ``LGBMClassifier`` (read through ``model_to_string()``). ``params``:
    training parameters (``learning_rate``, ``lambda_l2``, ...) overriding those the text file
    lists (a ``dump_model()`` dictionary lists none). ``feature_names``: the input columns in
    order (default: the model's; LightGBM replaces spaces in names by ``_``). ``classes``: the
    class values, ``classes[i]`` being the class LightGBM calls ``i``. Other arguments as for
    :func:`~ppdm.tree.xgboost_json.forest_from_xgboost`.
    """
    header, raw_trees, listed = _read(model)
    settings = {**listed, **{k: str(v) for k, v in (params or {}).items()}}
    objective = str(header.get("objective", ""))
    kind = objective.split()[0] if objective else ""
    if kind in ("regression", "regression_l2", "l2", "mean_squared_error", "mse") and len(objective.split()) == 1:
        return _regressor(header, raw_trees, settings, data, feature_names, prefix_sep, ordinal_categories, class_attribute, y, verify)
    if kind.startswith(("regression", "huber", "fair", "poisson", "quantile", "mape", "gamma", "tweedie", "l1", "cross_entropy")):
        raise ModelImportError(f"LightGBM objective {objective!r}: its leaf values are not linear in the targets; only the L2 'regression' objective is audited")
    if kind not in ("binary", "multiclass", "softmax"):
        raise ModelImportError(f"LightGBM objective {objective!r}: only 'binary' and 'multiclass' classifiers are imported")
    if kind == "binary" and "sigmoid:1" not in objective.split():
        raise ModelImportError(f"LightGBM objective {objective!r}: only the binary log-loss with sigmoid:1 is imported")
    if str(header.get("average_output", "false")).lower() in ("true", "1") or settings.get("boosting") == "rf":
        raise ModelImportError("LightGBM random forest mode (boosting='rf') is not imported")
    k = int(header.get("num_tree_per_iteration", 1))
    names = list(feature_names) if feature_names is not None else _unsanitized(header.get("feature_names", []), data, prefix_sep)
    n_features = int(header.get("max_feature_idx", len(names) - 1)) + 1
    if len(names) != n_features:
        raise advising(
            ModelImportError(f"pass feature_names: the model has {n_features} input columns, {len(names)} names known"),
            "pass feature_names: ", "feature_names",
        )
    features, domains, attributes = trace_features(data, names, prefix_sep, ordinal_categories)
    n_classes = 2 if kind == "binary" else k
    name, class_values, codes = resolve_classes(data, y, class_attribute, classes, n_classes, [a.name for a in attributes])
    flats = [_flat(t, i, names) for i, t in enumerate(raw_trees)]
    used = _first_tree_counts(flats[0], settings) if kind == "binary" else {}
    set_newton_step(used, _newton_step(settings, kind, k))
    outputs = [i % k for i in range(len(flats))]
    trees = [
        build_tree(f, features, domains, attributes, class_values, name, "lightgbm", outputs[i], kind == "binary")
        for i, f in enumerate(flats)
    ]
    forest = Forest(
        trees, "additive", link="logistic" if kind == "binary" else "softmax", base_score=np.zeros(1 if kind == "binary" else k),
        outputs=outputs, multiplicities=_multiplicities(flats, settings), algorithm="lightgbm", params=used,
    )  # fmt: skip
    root = trees[0].root.n_samples
    if verify or (verify is None and root is not None and round(root) == len(data)):
        verify_counts(forest, data, codes)
    return forest


def _regressor(
    header: Mapping[str, Any], raw_trees: list[dict[str, Any]], settings: Mapping[str, str], data: pd.DataFrame,
    feature_names: Sequence[str] | None, prefix_sep: str, ordinal_categories: Mapping[str, Sequence] | None,
    target: str | None, y: Any, verify: bool | None,
) -> Forest:  # fmt: skip
    """An L2 ``regression`` model as a regression :class:`Forest` (``"identity"`` link, base 0).

    Hessians are 1, so round m's leaf value is ``−lr Σ (F_{m−1}(x_i) − y_i) / (n + λ2)``; with
    ``boost_from_average`` every row starts from the mean target, which LightGBM adds to the
    first tree's leaves and does not store apart (:class:`~ppdm.tree.newton.NewtonStep`'s
    ``biased_first_round``: the audit solves it from those leaves)."""
    from ppdm.tree.regression import target_attribute

    if str(header.get("average_output", "false")).lower() in ("true", "1") or settings.get("boosting") == "rf":
        raise ModelImportError("LightGBM random forest mode (boosting='rf') is not imported")
    if int(header.get("num_tree_per_iteration", 1)) != 1:
        raise ModelImportError("LightGBM regressor with several trees per round: not imported")
    names = list(feature_names) if feature_names is not None else _unsanitized(header.get("feature_names", []), data, prefix_sep)
    n_features = int(header.get("max_feature_idx", len(names) - 1)) + 1
    if len(names) != n_features:
        raise advising(
            ModelImportError(f"pass feature_names: the model has {n_features} input columns, {len(names)} names known"),
            "pass feature_names: ", "feature_names",
        )
    features, domains, attributes = trace_features(data, names, prefix_sep, ordinal_categories)
    name = target_attribute(data, y, target, [a.name for a in attributes])
    flats = [_flat(t, i, names) for i, t in enumerate(raw_trees)]
    used: dict[str, Any] = {}
    if "learning_rate" in settings:
        used = {"learning_rate": _setting(settings, "learning_rate", math.nan), "lambda_l2": _setting(settings, "lambda_l2", 0.0)}
    set_newton_step(used, _newton_step(settings, "regression", 1))
    trees = [build_tree(f, features, domains, attributes, (), name, "lightgbm", 0, False) for f in flats]
    forest = Forest(
        trees, "additive", link="identity", base_score=np.zeros(1), outputs=[0] * len(trees),
        multiplicities=_multiplicities(flats, settings), algorithm="lightgbm-regressor", params=used,
    )  # fmt: skip
    root = trees[0].root.n_samples
    if verify or (verify is None and root is not None and round(root) == len(data)):
        verify_counts(forest, data)
    return forest


# -- reading the model -------------------------------------------------------------------------
def _read(model: Any) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]:
    """The header, the trees (as text fields or dump dictionaries) and the listed parameters."""
    if isinstance(model, Mapping):
        if "tree_info" not in model:
            raise ModelImportError("LightGBM model dictionary: tree_info is missing (expected booster.dump_model())")
        return dict(model), [_from_dump(t, i) for i, t in enumerate(model["tree_info"])], {}
    if hasattr(model, "booster_"):
        model = model.booster_
    elif type(model).__module__.split(".")[0] == "lightgbm" and hasattr(type(model), "booster_"):  # booster_ raises before fit
        raise NotFittedError(f"the {type(model).__name__} is not fitted: call fit(X, y) on the training table first")
    if hasattr(model, "model_to_string"):
        return _parse_text(model.model_to_string(), "model")
    if isinstance(model, str) and model.startswith("tree\n"):
        return _parse_text(model, "model text")
    if isinstance(model, (str, Path)):
        path = Path(model)
        if not path.is_file():
            raise ModelImportError(f"{path}: no such LightGBM model file")
        try:
            return _parse_text(path.read_text(), str(path))
        except UnicodeDecodeError:
            raise ModelImportError(f"{path}: not a LightGBM model text file") from None
    raise ModelImportError(f"cannot read a LightGBM model from a {type(model).__name__}")


def _parse_text(text: str, where: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]:
    if not text.startswith("tree\n"):
        raise ModelImportError(f"{where}: not a LightGBM model text file (it does not start with 'tree')")
    head, _, rest = text.partition("\nTree=")
    header: dict[str, Any] = dict(_pairs(head))
    header["feature_names"] = header.get("feature_names", "").split()
    trees_text, ended, tail = ("Tree=" + rest).partition("end of trees")
    if not ended:
        raise ModelImportError(f"{where}: the model text ends before 'end of trees' (a file cut short?)")
    trees = [dict(_pairs(block)) for block in re.split(r"^Tree=\d+$", trees_text, flags=re.M) if block.strip()]
    sizes = header.get("tree_sizes", "").split()
    if sizes and len(sizes) != len(trees):
        raise ModelImportError(f"{where}: the header lists {len(sizes)} trees (tree_sizes) but the file holds {len(trees)}")
    listed = dict(re.findall(r"^\[([^:\]]+): ?(.*)\]$", tail, flags=re.M))
    return header, [_from_text(t, i, where) for i, t in enumerate(trees)], listed


def _pairs(block: str) -> list[tuple[str, str]]:
    return [tuple(line.split("=", 1)) for line in block.splitlines() if "=" in line]  # type: ignore[misc]


def _from_text(t: Mapping[str, str], i: int, where: str) -> dict[str, Any]:
    """A text tree's arrays: children (≥ 0 internal, ``~leaf`` for a leaf), splits, leaf statistics."""
    def nums(key: str, kind: type = float) -> np.ndarray:
        try:
            return np.array([kind(v) for v in t.get(key, "").split()], dtype=kind)
        except (ValueError, OverflowError):
            bad = next(v for v in t.get(key, "").split() if not _parses(v, kind))
            raise ModelImportError(f"{where}: tree {i}: {key} holds {bad[:40]!r}, not a number") from None

    if int(t.get("num_cat", "0")) > 0:
        raise ModelImportError(f"{where}: tree {i} has categorical splits; encode the categorical columns before fitting")
    if t.get("is_linear", "0") not in ("0", ""):
        raise ModelImportError(f"{where}: tree {i} is a linear tree (linear_tree=True), which ppdm does not import")
    decision = nums("decision_type", int)
    n_leaves = int(t.get("num_leaves", "1"))

    def sized(key: str, size: int) -> np.ndarray:
        """A statistic per node: absent is unknown (NaN); present, one finite number >= 0 per node."""
        if key not in t:
            return np.full(size, np.nan)
        values = nums(key)
        if len(values) != size or not np.isfinite(values).all() or (values < 0).any():
            raise ModelImportError(f"{where}: tree {i}: {key} must hold {size} finite numbers >= 0")
        return values

    return {
        "left": nums("left_child", int), "right": nums("right_child", int),
        "feature": nums("split_feature", int), "threshold": nums("threshold"),
        "default_left": (decision & 2) > 0, "missing": [_MISSING[(d >> 2) & 3] for d in decision],
        "leaf_value": nums("leaf_value"), "leaf_weight": sized("leaf_weight", n_leaves),
        "leaf_count": sized("leaf_count", n_leaves), "internal_count": sized("internal_count", n_leaves - 1),
    }  # fmt: skip


def _parses(text: str, kind: type) -> bool:
    try:
        kind(text)
    except (ValueError, OverflowError):
        return False
    return True


def _from_dump(t: Mapping[str, Any], i: int) -> dict[str, Any]:
    """A ``dump_model()`` tree's arrays, in the text file's numbering."""
    if int(t.get("num_cat", 0)) > 0:
        raise ModelImportError(f"LightGBM tree {i} has categorical splits; encode the categorical columns before fitting")
    inner: dict[int, Mapping] = {}
    leaves: dict[int, Mapping] = {}
    stack = [t["tree_structure"]]
    while stack:
        node = stack.pop()
        if "split_index" in node:
            inner[int(node["split_index"])] = node
            stack.extend((node["left_child"], node["right_child"]))
        else:
            leaves[int(node.get("leaf_index", 0))] = node

    def child(node: Mapping) -> int:
        return int(node["split_index"]) if "split_index" in node else ~int(node.get("leaf_index", 0))

    ids = sorted(inner)
    return {
        "left": np.array([child(inner[j]["left_child"]) for j in ids], dtype=int),
        "right": np.array([child(inner[j]["right_child"]) for j in ids], dtype=int),
        "feature": np.array([inner[j]["split_feature"] for j in ids], dtype=int),
        "threshold": np.array([_dump_threshold(inner[j], i) for j in ids], dtype=float),
        "default_left": np.array([bool(inner[j].get("default_left", True)) for j in ids]),
        "missing": [str(inner[j].get("missing_type", "None")) for j in ids],
        "leaf_value": np.array([leaves[j]["leaf_value"] for j in sorted(leaves)], dtype=float),
        "leaf_weight": np.array([leaves[j].get("leaf_weight", np.nan) for j in sorted(leaves)], dtype=float),
        "leaf_count": np.array([leaves[j].get("leaf_count", np.nan) for j in sorted(leaves)], dtype=float),
        "internal_count": np.array([inner[j].get("internal_count", np.nan) for j in ids], dtype=float),
    }


def _dump_threshold(node: Mapping, i: int) -> float:
    if node.get("decision_type", "<=") != "<=":
        raise ModelImportError(f"LightGBM tree {i}: decision type {node.get('decision_type')!r} (categorical) is not imported")
    return float(node["threshold"])


def _flat(t: Mapping[str, Any], i: int, names: Sequence[str]) -> FlatTree:
    """Internal node ``j`` becomes node ``j``, leaf ``l`` node ``n_internal + l``."""
    n_inner = len(t["left"])
    n_leaves = len(t["leaf_value"])
    for key in ("right", "feature", "threshold", "default_left", "missing"):
        if len(t[key]) != n_inner:
            raise ModelImportError(f"LightGBM tree {i}: {len(t[key])} values of {key} for {n_inner} internal nodes")
    if n_leaves != n_inner + 1:
        raise ModelImportError(f"LightGBM tree {i}: {n_leaves} leaf values for {n_inner} internal nodes (a binary tree has one more leaf)")

    def unified(c: np.ndarray) -> np.ndarray:
        return np.where(c >= 0, c, n_inner + ~c)

    left = np.concatenate([unified(t["left"]), np.full(n_leaves, -1)]).astype(np.intp)
    right = np.concatenate([unified(t["right"]), np.full(n_leaves, -1)]).astype(np.intp)
    threshold = np.asarray(t["threshold"], dtype=float)
    missing_left = np.array([_missing_left(i, j, t, names) for j in range(n_inner)], dtype=bool)
    pad = np.full(n_leaves, np.nan)
    counts = np.concatenate([np.asarray(t["internal_count"], dtype=float), np.asarray(t["leaf_count"], dtype=float)])
    flat = FlatTree(
        left, right, np.concatenate([t["feature"], np.zeros(n_leaves, dtype=int)]), np.concatenate([threshold, pad]),
        np.concatenate([missing_left, np.zeros(n_leaves, dtype=bool)]),
        value=np.concatenate([np.full(n_inner, np.nan), t["leaf_value"]]),
    )  # fmt: skip
    flat.check(f"LightGBM tree {i}")
    if np.isfinite(counts).all():
        flat.n_samples = counts
    weights = np.concatenate([np.zeros(n_inner), np.asarray(t["leaf_weight"], dtype=float)])
    if np.isfinite(weights).all() and n_leaves:
        flat.cover = flat.subtree_sums(weights)  # internal_weight is printed rounded: add up the leaves
    return flat


def _missing_left(i: int, j: int, t: Mapping[str, Any], names: Sequence[str]) -> bool:
    """Where a missing value goes: the default side (NaN), or where 0 goes (None: NaN reads as 0)."""
    kind, threshold = t["missing"][j], float(t["threshold"][j])
    zero_left = 0.0 <= threshold
    if kind == "NaN":
        return bool(t["default_left"][j])
    if kind == "Zero" and bool(t["default_left"][j]) != zero_left:
        f = int(t["feature"][j])
        column = names[f] if 0 <= f < len(names) else f
        raise ModelImportError(
            f"LightGBM tree {i}, split {j} on {column!r}: zero counts as missing (zero_as_missing) and goes the "
            "other way than the threshold sends it, which a threshold split cannot express"
        )
    return zero_left


# -- what the statistics reveal ----------------------------------------------------------------
def _setting(settings: Mapping[str, str], key: str, default: float) -> float:
    text = str(settings.get(key, default)).strip().lower()
    if text in ("true", "false"):
        return float(text == "true")
    try:
        return float(text)
    except ValueError:
        return math.nan


def _sampled(settings: Mapping[str, str]) -> bool:
    """Whether GOSS drew (and reweighted) the rows of each tree."""
    return "goss" in (settings.get("data_sample_strategy"), settings.get("boosting"))


def _first_tree_counts(first: FlatTree, settings: Mapping[str, str]) -> dict[str, Any]:
    """Class counts of a binary model's first tree (module docstring); the parameters used."""
    if "learning_rate" not in settings or first.n_samples is None or first.cover is None:
        return {}
    lr, lam = _setting(settings, "learning_rate", math.nan), _setting(settings, "lambda_l2", 0.0)
    blockers = {"lambda_l1": 0.0, "max_delta_step": 0.0, "path_smooth": 0.0, "scale_pos_weight": 1.0, "is_unbalance": 0.0}
    if any(_setting(settings, key, ok) != ok for key, ok in blockers.items()) or _sampled(settings):
        return {}
    if not (lr > 0 and lam >= 0):
        return {}
    leaf = first.is_leaf
    n, H = first.n_samples, first.cover
    root = float(n[leaf].sum())
    spread = math.sqrt(max(0.25 - H[leaf].sum() / root, 0.0))  # h0 = p0 (1 - p0)
    if _setting(settings, "boost_from_average", 1.0) != 1.0:
        candidates = [0.5]
    else:
        # the bias log(p0 / (1 - p0)) is in every first-tree leaf: their mean shows its sign
        # (p0 is the share of positives among all rows: a whole number of the root's rows unless
        # the first tree saw a bag of them, when the cover's float32 precision has to do)
        side = 1.0 if np.average(first.value[leaf], weights=n[leaf]) >= 0 else -1.0  # type: ignore[index]
        near = [0.5 + s * spread for s in (side, -side)]
        found = [whole(np.array([root * p])) for p in near]
        candidates = [float(f[0]) / root for f in found if f is not None] + near
    for p0 in candidates:
        bias = math.log(p0 / (1.0 - p0))
        gradient = np.where(leaf, -(first.value - bias) * (H + lam) / lr, 0.0)  # type: ignore[operator]
        first.counts = counts_from_gradients(first, n, gradient, p0)
        if first.counts is not None:
            break
    return {"learning_rate": lr, "lambda_l2": lam}


def _newton_step(settings: Mapping[str, str], kind: str, k: int) -> NewtonStep | str:
    """The step every round's leaf values took, ``−lr · G / (H + λ2)`` with LightGBM's hessian
    ``p (1 − p)`` (times K/(K − 1) for the softmax), or why they did not."""
    if "learning_rate" not in settings:
        return "the model lists no training parameters (learning rate, lambda_l2): pass params"
    lr, lam = _setting(settings, "learning_rate", math.nan), _setting(settings, "lambda_l2", 0.0)
    if not (lr > 0 and lam >= 0):
        return "its learning rate or lambda_l2 is not a number LightGBM trains with"
    hidden = {
        "lambda_l1 (an L1 penalty) shrinks every gradient sum": _setting(settings, "lambda_l1", 0.0) != 0.0,
        "max_delta_step clips the leaf values": _setting(settings, "max_delta_step", 0.0) != 0.0,
        "path_smooth mixes each leaf value with its parent's": _setting(settings, "path_smooth", 0.0) != 0.0,
        "class weighting (scale_pos_weight, is_unbalance) weights the rows' gradients": _setting(settings, "scale_pos_weight", 1.0) != 1.0
        or _setting(settings, "is_unbalance", 0.0) != 0.0,
        "GOSS drew and reweighted the rows of each tree, which the model does not store": _sampled(settings),
        "quantized gradients (use_quantized_grad) round every gradient": _setting(settings, "use_quantized_grad", 0.0) != 0.0,
        "monotone constraints clip the leaf values": any(c not in "0, " for c in str(settings.get("monotone_constraints", ""))),
    }
    for reason, applies in hidden.items():
        if applies:
            return reason
    biased = _setting(settings, "boost_from_average", 1.0) != 0.0
    scale = 1.0 if kind in ("binary", "regression") else k / (k - 1.0)
    return NewtonStep(lr, lam, scale, tolerance=FLOAT32_TOLERANCE, biased_first_round=biased)


def _multiplicities(flats: list[FlatTree], settings: Mapping[str, str]) -> list[np.ndarray | None] | None:
    """Each row once in every tree when the parameters say rows were not sampled (no bagging, no GOSS)."""
    n = flats[0].n_samples
    if n is None or not settings:
        return None
    bagged = _setting(settings, "bagging_freq", 0) > 0 and min(
        _setting(settings, key, 1.0) for key in ("bagging_fraction", "pos_bagging_fraction", "neg_bagging_fraction")
    ) < 1.0
    if bagged or _sampled(settings):
        return None
    return [np.ones(int(n[0]), dtype=np.int64)] * len(flats)
