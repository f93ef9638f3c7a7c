"""Any fitted model object to the published model ppdm audits: :func:`from_estimator`.

One entry point for what a user holds in Python: a scikit-learn ``DecisionTreeClassifier``, a
random forest, extra trees, gradient boosting or histogram gradient boosting (their importers in
:mod:`ppdm.tree.sklearn` and :mod:`ppdm.tree.sklearn_forest`), their squared-error regressors
(:mod:`ppdm.tree.regression`), an XGBoost or LightGBM classifier
or booster (:mod:`ppdm.tree.xgboost_json`, :mod:`ppdm.tree.lightgbm_text`), a ppdm estimator
(its ``tree_``), a ppdm :class:`Tree` or :class:`Forest` (returned as it is), or a scikit-learn
``Pipeline`` whose last step is one of those and whose earlier steps encode or scale columns
(``OneHotEncoder``, ``OrdinalEncoder``, ``"passthrough"``, monotone scalers, a
``ColumnTransformer`` of them), its splits read back onto the table's columns
(:mod:`ppdm.tree.pipeline`).

A step whose splits cannot be stated exactly on the table's own values (an imputer, a
polynomial expansion) is refused, naming the step: the audit reads the trees' splits over them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ppdm.data.roles import text_columns
from ppdm.errors import ModelImportError
from ppdm.tree.forest import Forest, as_forest, is_model
from ppdm.tree.model import Tree
from ppdm.tree.pipeline import PipelineSteps, merged_table, read_steps, scaled_table, ungroup, unscale
from ppdm.tree.regression import SKLEARN_REGRESSORS, regressor_from_sklearn

__all__ = ["from_estimator"]

_SKLEARN_TREE = ("DecisionTreeClassifier", "ExtraTreeClassifier")
_SKLEARN_FOREST = (
    "RandomForestClassifier", "ExtraTreesClassifier", "GradientBoostingClassifier", "HistGradientBoostingClassifier",
)


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
    if is_model(estimator):
        return estimator
    if not isinstance(X, pd.DataFrame):
        raise ModelImportError(f"X must be the unencoded training table as a pandas DataFrame, got {type(X).__name__}")
    X = text_columns(X)
    if feature_names is not None:
        feature_names = [str(name) for name in feature_names]
    if _is_pipeline(estimator):
        model, names, steps = _unpipe(estimator, feature_names)
        if isinstance(getattr(model, "tree_", None), Tree):  # a ppdm estimator reads the table's columns itself
            return model.tree_
        scaled = scaled_table(X, steps)
        merged = merged_table(scaled, steps)
        categories = steps.categories(X)
        extra: dict[str, Any] = {"ordinal_categories": categories} if categories else {}
        try:
            imported = unscale(ungroup(_import(model, merged, y, class_attribute, names, verify, extra), scaled, merged, steps), X, scaled, steps)
        except ModelImportError:
            steps.check_values(X)  # a value the encoders never saw says better why the counts differ
            raise
        if verify is not False and _training_size(imported) == len(X):  # the training table itself (candidates of a membership audit hold others)
            steps.check_values(X)
        return imported
    tree = getattr(estimator, "tree_", None)
    if isinstance(tree, Tree):  # a ppdm estimator
        return tree
    try:
        return _import(estimator, X, y, class_attribute, feature_names, verify, {})
    except ModelImportError as as_codes:
        valued = _numbered_categories(estimator, X, feature_names)
        if not valued:
            raise
        try:
            return _import(estimator, X.astype(valued), y, class_attribute, feature_names, verify, {})
        except ModelImportError:
            raise as_codes from None


def _numbered_categories(estimator: Any, X: pd.DataFrame, feature_names: Sequence[str] | None) -> dict[str, Any]:
    """The categorical columns of numbers a bare scikit-learn estimator took by name, each with
    the dtype of its values: fitted on the table as it is, scikit-learn reads such a column as its
    values (1, 2, 3), not as the codes (0, 1, 2) the import reads a categorical input as by
    default (an ``OrdinalEncoder``'s, ``Series.cat.codes``). :func:`from_estimator` reads them
    so when the codes do not import (a threshold outside them, or rows routed otherwise)."""
    if type(estimator).__module__.split(".")[0] != "sklearn":
        return {}
    names = feature_names if feature_names is not None else [str(n) for n in getattr(estimator, "feature_names_in_", [])]
    out: dict[str, Any] = {}
    for name in names:
        column = X[name] if name in X.columns else None
        if column is None or not isinstance(column.dtype, pd.CategoricalDtype):
            continue
        values = column.cat.categories
        if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
            out[name] = values.dtype if not column.isna().any() else float
    return out


def _import(
    estimator: Any, X: pd.DataFrame, y: Any, class_attribute: str | None, feature_names: Sequence[str] | None, verify: bool | None,
    extra: dict[str, Any],
) -> Tree | Forest:
    """The model of a library's fitted ``estimator`` over ``X``'s columns (its importer by kind)."""
    kwargs: dict[str, Any] = {"y": y, "class_attribute": class_attribute, "verify": verify, **extra}
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


def _training_size(model: Tree | Forest) -> float | None:
    """How many training rows the model says it was fitted on (its multiplicities', else its first tree's root count)."""
    forest = as_forest(model)
    if forest.n_records is not None:
        return float(forest.n_records)
    root = forest.trees[0].root.n_samples
    return None if root is None else float(root)


def _is_pipeline(estimator: Any) -> bool:
    return type(estimator).__name__ == "Pipeline" and hasattr(estimator, "steps")


def _unpipe(pipeline: Any, feature_names: Sequence[str] | None) -> tuple[Any, list[str], PipelineSteps]:
    """The pipeline's model, the names of the columns it was fitted on, and what its earlier
    steps do (:func:`ppdm.tree.pipeline.read_steps`: ordinal orders, scalers)."""
    *encoding, (_, model) = list(pipeline.steps)
    steps = read_steps(encoding)
    if feature_names is None:
        if not encoding:
            feature_names = list(getattr(model, "feature_names_in_", []))
        else:
            try:
                feature_names = [str(f) for f in pipeline[:-1].get_feature_names_out()]
            except Exception as exc:  # scikit-learn raises several types here
                raise ModelImportError(f"the pipeline's encoding steps do not name their output columns: {exc}") from None
    return model, list(feature_names), steps
