"""Small models of every family ppdm imports, fitted on one table (imported through pytest's
``pythonpath``): each takes the unencoded inputs ``X``, their one-hot encoding ``D`` and the class
``y``, and returns the ppdm :class:`~ppdm.tree.forest.Forest`."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from threadpoolctl import threadpool_limits

from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost

ADULT_QIS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]


def small_table(frame: pd.DataFrame, features: list[str], target: str, n: int, seed: int = 0):
    sample = frame.sample(n, random_state=seed).reset_index(drop=True)[[*features, target]]
    for c in sample.columns:
        if isinstance(sample[c].dtype, pd.CategoricalDtype):
            sample[c] = sample[c].cat.remove_unused_categories()
    X = sample[features]
    return sample, X, pd.get_dummies(X).astype(float), sample[target]


def tiny_table(seed: int, n: int = 36):
    """A table small enough to enumerate every completion: three categorical inputs (3, 4 and 2
    values) and a binary class; the table, its inputs, their one-hot encoding and the class."""
    import numpy as np

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "a": pd.Categorical(rng.choice(["a0", "a1", "a2"], n)),
        "b": pd.Categorical(rng.choice(["b0", "b1", "b2", "b3"], n)),
        "c": pd.Categorical(rng.choice(["c0", "c1"], n)),
    })
    score = frame["a"].cat.codes + frame["b"].cat.codes + rng.normal(0, 1, n)
    frame["y"] = pd.Categorical(np.where(score > 2.5, "yes", "no"))
    X = frame[["a", "b", "c"]]
    return frame, X, pd.get_dummies(X).astype(float), frame["y"]


def sklearn_family(est):
    def fit(X, D, y):
        with threadpool_limits(1):
            est.fit(D, y)
        return forest_from_sklearn(est, X, y=y)

    return fit


def _xgboost(X, D, y):
    xgb = pytest.importorskip("xgboost")
    est = xgb.XGBClassifier(n_estimators=4, max_depth=3, learning_rate=0.3, n_jobs=1)
    est.fit(D, y.cat.codes.to_numpy())
    return forest_from_xgboost(est, X, y=y)


def _lightgbm(X, D, y):
    lgb = pytest.importorskip("lightgbm")
    est = lgb.LGBMClassifier(n_estimators=4, max_depth=3, num_leaves=8, min_child_samples=5, verbose=-1, n_jobs=1)
    est.fit(D, y.cat.codes.to_numpy())
    return forest_from_lightgbm(est, X, list(D.columns), y=y)


FAMILIES = {
    "random-forest": sklearn_family(RandomForestClassifier(4, max_depth=4, random_state=1, n_jobs=1)),
    "random-forest-no-bootstrap": sklearn_family(RandomForestClassifier(4, max_depth=4, bootstrap=False, max_features=0.5, random_state=1)),
    "extra-trees": sklearn_family(ExtraTreesClassifier(4, max_depth=4, random_state=1)),
    "extra-trees-bootstrap": sklearn_family(ExtraTreesClassifier(4, max_depth=4, bootstrap=True, max_samples=0.5, random_state=1)),
    "gradient-boosting": sklearn_family(GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=1)),
    "hist-gradient-boosting": sklearn_family(HistGradientBoostingClassifier(max_iter=4, max_depth=3, early_stopping=False, random_state=1)),
    "xgboost": _xgboost,
    "lightgbm": _lightgbm,
}
