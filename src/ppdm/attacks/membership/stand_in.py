"""A published tree model as the black-box attacks see it: its answers (``predict_proba``) and a
stand-in learner for the shadow models.

The black-box membership attacks (:mod:`ppdm.attacks.membership.blackbox`) read a fitted
classifier's predicted probabilities, and the shadow attacks (LiRA, RMIA) refit copies of its
learner on the attacker's data. A model read from a file (ppdm's JSON, XGBoost's JSON,
LightGBM's text) answers its probabilities exactly, as the source library computes them
(:meth:`~ppdm.tree.forest.Forest.predict_proba`), but its learner and settings are not in the
file. The shadows are then fitted by a stand-in of the same family and size: a decision tree of
the published depth; a random forest of as many trees, as deep, bootstrapped when the trees
record multiplicities; a histogram gradient boosting of as many rounds, as deep. A stand-in that
differs from the publisher's learner calibrates the shadow attacks less well (Carlini et al.
2022, §VI-C, measure the loss when the shadows' architecture differs), so they may find fewer
members than the publisher's own learner would: each score is still an attack that was run, its
rates measured against the truth, and so never an overstatement; the publisher's own learner is
given by :attr:`~ppdm.attacks.membership.blackbox.BlackboxOptions.learner`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

__all__ = ["PublishedClassifier", "stand_in_learner"]


class PublishedClassifier:
    """A published classifier (a :class:`~ppdm.tree.model.Tree` or :class:`~ppdm.tree.forest.Forest`)
    with the two attributes the black-box attacks read: ``predict_proba`` of a table of its
    inputs and ``classes_``; ``feature_names_in_``: the columns it reads (those it splits on:
    its answers depend on no other)."""

    def __init__(self, model: Tree | Forest) -> None:
        self.model = model
        self.classes_ = np.asarray(model.classes, dtype=object)
        self.feature_names_in_ = np.asarray(list(model.split_attributes), dtype=object)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return np.asarray(self.model.predict_proba(X), dtype=float)


def stand_in_learner(model: Tree | Forest, inputs: pd.DataFrame) -> tuple[Any, str]:
    """The scikit-learn learner the shadow models of ``model`` are fitted with (see the module
    docstring), one-hot encoding the categorical columns of ``inputs`` (the columns the model
    reads), and what it is, in words."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    depth = max(int(model.depth), 1)
    estimator: Any
    if model.n_trees == 1 and model.combine != "additive":
        estimator, said = DecisionTreeClassifier(max_depth=depth, random_state=0), f"a decision tree of depth {depth}"
    elif model.combine == "additive":
        rounds = max(model.n_trees // max(model.n_outputs, 1), 1)
        estimator = HistGradientBoostingClassifier(max_iter=rounds, max_depth=depth, early_stopping=False, random_state=0)
        said = f"histogram gradient boosting of {rounds} rounds of depth {depth}"
    else:
        bootstrap = any(m is not None for m in model.multiplicities)
        estimator = RandomForestClassifier(n_estimators=model.n_trees, max_depth=depth, bootstrap=bootstrap, random_state=0, n_jobs=1)
        said = f"a random forest of {model.n_trees} trees of depth {depth}{', bootstrapped' if bootstrap else ''}"
    categorical = [c for c in inputs.columns if model.attributes[c].is_categorical]
    # dense: histogram gradient boosting refuses sparse inputs, which an all-categorical table one-hot encodes to
    encode = ColumnTransformer([("categories", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical)], remainder="passthrough")
    return make_pipeline(encode, estimator), f"{said}, fitted by scikit-learn on one-hot inputs (a stand-in: a model read as trees does not record its learner; give the fitted estimator itself to refit its own)"
