"""Any fitted model object to the published model ppdm audits: :func:`from_estimator`.

One entry point for what a user holds in Python: a scikit-learn ``DecisionTreeClassifier``, a
random forest, extra trees, gradient boosting or histogram gradient boosting (their importers in
:mod:`ppdm.tree.sklearn` and :mod:`ppdm.tree.sklearn_forest`), their squared-error regressors
(:mod:`ppdm.tree.regression`), an XGBoost or LightGBM classifier
or booster (:mod:`ppdm.tree.xgboost_json`, :mod:`ppdm.tree.lightgbm_text`), a ppdm estimator
(its ``tree_``), a ppdm :class:`Tree` or :class:`Forest` (returned as it is), or a scikit-learn
``Pipeline`` whose last step is one of those and whose earlier steps only encode columns
(``OneHotEncoder``, ``OrdinalEncoder``, ``"passthrough"``, a ``ColumnTransformer`` of them).

A step that changes the values the trees compare (a scaler, an imputer, a polynomial expansion)
is refused, naming the step: the audit reads the trees' splits over the table's own values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ppdm.errors import ModelImportError
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree
from ppdm.tree.regression import SKLEARN_REGRESSORS, regressor_from_sklearn

__all__ = ["from_estimator"]

_SKLEARN_TREE = ("DecisionTreeClassifier", "ExtraTreeClassifier")
_SKLEARN_FOREST = (
    "RandomForestClassifier", "ExtraTreesClassifier", "GradientBoostingClassifier", "HistGradientBoostingClassifier",
)
_ENCODERS = ("OneHotEncoder", "OrdinalEncoder")


def from_estimator(
    estimator: Any,
    X: pd.DataFrame,
    y: pd.Series | Sequence[Any] | None = None,
    *,
    class_attribute: str | None = None,
    feature_names: Sequence[str] | None = None,
    verify: bool | None = None,
) -> Tree | Forest:
    """The :class:`Tree` or :class:`Forest` a fitted ``estimator`` publishes (see the module docstring).

    ``X``: the unencoded training table (its columns give the attributes' kinds and domains; the
    training rows themselves, in the order the model was fitted on, let the import check every
    count); it may hold the class column. ``y``: each row's class (optional when ``X`` holds the
    class column, named by ``class_attribute`` or found as the one column holding the classes).
    ``feature_names``: the estimator's input columns in order (default: what it was fitted on).
    ``verify``: see :func:`ppdm.tree.tree_from_sklearn`.
    """
    if isinstance(estimator, (Tree, Forest)):
        return estimator
    if not isinstance(X, pd.DataFrame):
        raise ModelImportError(f"X must be the unencoded training table as a pandas DataFrame, got {type(X).__name__}")
    ordinal: dict[str, Sequence[Any]] = {}
    if _is_pipeline(estimator):
        estimator, feature_names, ordinal = _unpipe(estimator, feature_names)
    tree = getattr(estimator, "tree_", None)
    if isinstance(tree, Tree):  # a ppdm estimator
        return tree
    kwargs: dict[str, Any] = {"y": y, "class_attribute": class_attribute, "verify": verify}
    if ordinal:
        kwargs["ordinal_categories"] = ordinal
    name = type(estimator).__name__
    module = type(estimator).__module__.split(".")[0]
    if module == "sklearn" and name in SKLEARN_REGRESSORS:
        return regressor_from_sklearn(estimator, X, feature_names, **kwargs)
    if module == "sklearn" and name in _SKLEARN_TREE:
        from ppdm.tree.sklearn import tree_from_sklearn

        return tree_from_sklearn(estimator, X, feature_names, **kwargs)
    if module == "sklearn" and name in _SKLEARN_FOREST:
        from ppdm.tree.sklearn_forest import forest_from_sklearn

        return forest_from_sklearn(estimator, X, feature_names, **kwargs)
    if module == "xgboost":
        from ppdm.tree.xgboost_json import forest_from_xgboost

        return forest_from_xgboost(estimator, X, feature_names, **kwargs)
    if module == "lightgbm":
        from ppdm.tree.lightgbm_text import forest_from_lightgbm

        return forest_from_lightgbm(estimator, X, feature_names, **kwargs)
    raise ModelImportError(
        f"{type(estimator).__module__}.{name} is not a model ppdm imports: give a fitted scikit-learn decision tree, "
        "random forest, extra trees or gradient boosting classifier or regressor, an XGBoost or LightGBM model, a ppdm "
        "estimator, or a Pipeline ending in one"
    )


def _is_pipeline(estimator: Any) -> bool:
    return type(estimator).__name__ == "Pipeline" and hasattr(estimator, "steps")


def _unpipe(pipeline: Any, feature_names: Sequence[str] | None) -> tuple[Any, list[str], dict[str, Sequence[Any]]]:
    """The pipeline's model, the names of the columns it was fitted on, and the ordinal
    encoders' category orders (so that codes map back to the table's values)."""
    steps = list(pipeline.steps)
    *encoding, (_, model) = steps
    ordinal: dict[str, Sequence[Any]] = {}
    for name, step in encoding:
        _check_encoding_step(name, step, ordinal)
    if feature_names is None:
        if not encoding:
            feature_names = list(getattr(model, "feature_names_in_", []))
        else:
            try:
                feature_names = [str(f) for f in pipeline[:-1].get_feature_names_out()]
            except Exception as exc:  # scikit-learn raises several types here
                raise ModelImportError(f"the pipeline's encoding steps do not name their output columns: {exc}") from None
    return model, list(feature_names), ordinal


def _is_identity(step: Any) -> bool:
    """A ``FunctionTransformer`` without a function: how a fitted ``ColumnTransformer`` stores
    ``remainder="passthrough"`` (scikit-learn 1.4 and later). It leaves the values as they are."""
    return type(step).__name__ == "FunctionTransformer" and getattr(step, "func", None) is None and getattr(step, "inverse_func", None) is None


def _check_encoding_step(name: str, step: Any, ordinal: dict[str, Sequence[Any]]) -> None:
    """Refuse a step that changes values; note each ordinal encoder's category order."""
    if step in ("passthrough", None) or _is_identity(step):
        return
    kind = type(step).__name__
    if kind == "ColumnTransformer":
        for inner, transformer, columns in step.transformers_:
            if transformer in ("passthrough", "drop"):
                continue
            _check_encoding_step(f"{name}/{inner}", transformer, ordinal)
            if type(transformer).__name__ == "OrdinalEncoder":
                _ordinal_orders(transformer, columns, ordinal)
        return
    if kind not in _ENCODERS:
        raise ModelImportError(
            f"pipeline step {name!r} ({kind}) changes the values the trees compare: ppdm imports pipelines whose "
            "steps before the model only encode columns (OneHotEncoder, OrdinalEncoder, ColumnTransformer of them)"
        )
    if kind == "OrdinalEncoder":
        _ordinal_orders(step, list(getattr(step, "feature_names_in_", [])), ordinal)


def _ordinal_orders(encoder: Any, columns: Any, ordinal: dict[str, Sequence[Any]]) -> None:
    names = list(columns) if not isinstance(columns, str) else [columns]
    for column, categories in zip(names, encoder.categories_):
        ordinal[str(column)] = list(categories)

