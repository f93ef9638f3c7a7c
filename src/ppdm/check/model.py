"""The model a checker is handed: any fitted scikit-learn classifier or Pipeline, or a ppdm model.

A researcher's model arrives as a ``.skops`` file (skops' secure format: only the types in
:data:`~ppdm.tree.model_files.SKOPS_TRUSTED` beyond skops' own safe list are loaded, never a pickle), as a fitted estimator in
Python, or as any model file ppdm reads (:func:`ppdm.tree.model_files.load_model`: ppdm JSON,
XGBoost JSON, LightGBM). :class:`Checked` holds it with what the checks need: its family
(:func:`family_of`), the final estimator of a Pipeline, and its predicted probabilities on a
table. The tree models ppdm reads white-box are also held as a ppdm :class:`~ppdm.tree.Tree` or
:class:`~ppdm.tree.Forest` (``ppdm_model``) for the structural equivalence classes (leaves,
spans) and the audits on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import PpdmError
from ppdm.files import note_read, regular_file
from ppdm.tree.forest import Forest, is_model
from ppdm.tree.model import Tree

__all__ = ["Checked", "family_of", "final_estimator", "read_checked"]

#: Family by the estimator's class name (scikit-learn, XGBoost, LightGBM).
_FAMILIES = {
    "DecisionTreeClassifier": "tree", "ExtraTreeClassifier": "tree",
    "RandomForestClassifier": "forest", "ExtraTreesClassifier": "forest",
    "GradientBoostingClassifier": "boosting", "HistGradientBoostingClassifier": "boosting", "AdaBoostClassifier": "boosting",
    "XGBClassifier": "boosting", "LGBMClassifier": "boosting",
    "LogisticRegression": "linear", "LogisticRegressionCV": "linear", "SGDClassifier": "linear", "RidgeClassifier": "linear",
    "Perceptron": "linear", "LinearDiscriminantAnalysis": "linear", "GaussianNB": "linear",
    "MLPClassifier": "mlp",
    "SVC": "svm", "NuSVC": "svm", "LinearSVC": "linear",
    "KNeighborsClassifier": "knn", "RadiusNeighborsClassifier": "knn",
    "ScoresOnly": "unknown",  # known by its outputs only (ppdm.check.scores)
}  # fmt: skip


def final_estimator(model: Any) -> Any:
    """The last step of a Pipeline (itself otherwise)."""
    steps = getattr(model, "steps", None)
    return final_estimator(steps[-1][1]) if steps else model


def family_of(model: Any) -> str:
    """``tree``, ``forest``, ``boosting``, ``linear``, ``mlp``, ``svm``, ``knn``, ``other``, or
    ``unknown`` (a model known by its outputs only)."""
    if isinstance(model, Tree):
        return "tree"
    if is_model(model):
        return "boosting" if model.combine == "additive" else "forest"
    return _FAMILIES.get(type(final_estimator(model)).__name__, "other")


@dataclass
class Checked:
    """A classifier to check: ``model`` as given (estimator, Pipeline or ppdm model), its family,
    its class column, and ``ppdm_model`` when ppdm reads it white-box (``None`` otherwise)."""

    model: Any
    class_attribute: str
    ppdm_model: Tree | Forest | None = None
    source: str | None = None

    @property
    def family(self) -> str:
        return family_of(self.model)

    @property
    def estimator(self) -> Any:
        return final_estimator(self.model)

    @property
    def name(self) -> str:
        return str(getattr(self.estimator, "checker_name", type(self.estimator).__name__))

    def features(self, table: pd.DataFrame) -> pd.DataFrame:
        """The model's input columns of ``table`` (every column but the class, in the fitted order when known)."""
        names = getattr(self.model, "feature_names_in_", None)
        if names is not None:
            missing = [str(n) for n in names if n not in table.columns]
            if missing:
                raise PpdmError(f"the table lacks the model's input column {missing[0]!r}")
            return table[[str(n) for n in names]]
        return table.drop(columns=[self.class_attribute], errors="ignore")

    def classes(self) -> np.ndarray:
        got = getattr(self.model, "classes_", None)
        if got is None:
            got = getattr(self.model, "classes", None)
        if got is None:
            raise PpdmError(f"the {self.name} has no classes: the checker reads classifiers")
        return np.asarray(got, dtype=object)

    def proba(self, table: pd.DataFrame) -> np.ndarray:
        """Predicted probabilities on ``table``'s rows (rows × classes); a classifier that gives
        labels only (an SVM without ``probability``) publishes one-hot vectors of them."""
        try:
            if not hasattr(self.model, "predict_proba"):
                labels = np.asarray(self.model.predict(self.features(table)), dtype=object).astype(str)
                return np.asarray(labels[:, None] == self.classes().astype(str)[None, :], dtype=float)
            return np.asarray(self.model.predict_proba(self.features(table)), dtype=float)
        except (ValueError, TypeError, KeyError) as exc:
            said = _text_where_numbers(self.features(table)) if "could not convert" in str(exc) else None
            raise PpdmError(f"the {self.name} cannot predict the table's rows ({said or str(exc).splitlines()[0][:160]})") from None

    def truth(self, table: pd.DataFrame) -> np.ndarray:
        """Each row's class as an index into :meth:`classes` (-1: a class the model does not know)."""
        if self.class_attribute not in table.columns:
            raise PpdmError(f"the table has no class column {self.class_attribute!r}")
        classes = list(self.classes())
        lookup = {str(c): i for i, c in enumerate(classes)}
        return np.array([lookup.get(str(v), -1) for v in table[self.class_attribute].to_numpy()], dtype=np.intp)


def _text_where_numbers(X: pd.DataFrame) -> str | None:
    """Where a table holds text the model reads as a number: "column 'sex' holds text ('F', row 0)
    where the model reads numbers" (``None``: no such column)."""
    for column in X.columns:
        if pd.api.types.is_numeric_dtype(X[column]) or pd.api.types.is_bool_dtype(X[column]):
            continue
        numbers = pd.to_numeric(X[column], errors="coerce")
        bad = numbers.isna() & X[column].notna()
        if bad.any():
            at = int(np.argmax(bad.to_numpy()))
            return f"column {str(column)!r} holds text ({X[column].iloc[at]!r}, row {X.index[at]!r}) where the model reads numbers"
    return None


def read_checked(model: Any, data: pd.DataFrame, class_attribute: str) -> Checked:
    """A :class:`Checked` from a fitted estimator, a ppdm model, or a model file (``.skops`` or any
    file :func:`~ppdm.tree.model_files.load_model` reads), with ppdm's white-box view when it has one."""
    if isinstance(model, Checked):
        return model
    source = str(model) if isinstance(model, (str, Path)) else None
    if isinstance(model, (str, Path)):
        path = regular_file(model, "model")
        note_read(path)
        from ppdm.tree.model_files import is_skops, load_estimator, load_model

        model = load_estimator(path) if is_skops(path) else load_model(path, data, class_attribute=class_attribute)
    if is_model(model):
        return Checked(model, class_attribute, model, source)
    if not hasattr(model, "predict_proba") and not hasattr(model, "predict"):
        raise PpdmError(f"the checker reads fitted classifiers, got {type(model).__name__}")
    return Checked(model, class_attribute, _white_box(model, data, class_attribute), source)


def _white_box(model: Any, data: pd.DataFrame, class_attribute: str) -> Tree | Forest | None:
    """ppdm's reading of a tree model (``None`` for a family ppdm does not read white-box, or a
    tree model it cannot import: the checks then read its outputs only)."""
    if family_of(model) not in ("tree", "forest", "boosting"):
        return None
    from ppdm.tree.estimator import from_estimator

    try:
        return from_estimator(model, data, class_attribute=class_attribute)
    except PpdmError:
        return None
