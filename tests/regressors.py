"""Small regressors of every family ppdm imports, fitted on one table (imported through pytest's
``pythonpath``): each takes the unencoded inputs ``X``, their one-hot encoding ``D`` and the
numeric target ``y``, and returns the fitted library model and the ppdm model."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeRegressor
from threadpoolctl import threadpool_limits

import ppdm
from ppdm.tree import forest_from_lightgbm


def sklearn_family(make):
    def fit(X, D, y, **kw):
        est = make(**kw)
        with threadpool_limits(1):
            est.fit(D, y)
        return est, ppdm.from_estimator(est, X, y)

    return fit


def _xgboost(X, D, y, rounds=4, depth=3):
    xgb = pytest.importorskip("xgboost")
    est = xgb.XGBRegressor(n_estimators=rounds, max_depth=depth, learning_rate=0.3, n_jobs=1)
    est.fit(D, y.to_numpy())
    return est, ppdm.from_estimator(est, X, y)


def _lightgbm(X, D, y, rounds=4, depth=3):
    lgb = pytest.importorskip("lightgbm")
    est = lgb.LGBMRegressor(n_estimators=rounds, max_depth=depth, num_leaves=2**depth, min_child_samples=3, verbose=-1, n_jobs=1)
    est.fit(D, y.to_numpy())
    return est, forest_from_lightgbm(est, X, list(D.columns), y=y)


REGRESSORS = {
    "tree": sklearn_family(lambda rounds=1, depth=6: DecisionTreeRegressor(max_depth=depth, random_state=0)),
    "random-forest": sklearn_family(lambda rounds=4, depth=4: RandomForestRegressor(rounds, max_depth=depth, random_state=1, n_jobs=1)),
    "random-forest-no-bootstrap": sklearn_family(
        lambda rounds=4, depth=4: RandomForestRegressor(rounds, max_depth=depth, bootstrap=False, max_features=0.5, random_state=1, n_jobs=1)
    ),
    "extra-trees": sklearn_family(lambda rounds=4, depth=4: ExtraTreesRegressor(rounds, max_depth=depth, random_state=1, n_jobs=1)),
    "gradient-boosting": sklearn_family(lambda rounds=4, depth=3: GradientBoostingRegressor(n_estimators=rounds, max_depth=depth, random_state=1)),
    "hist-gradient-boosting": sklearn_family(
        lambda rounds=4, depth=3: HistGradientBoostingRegressor(max_iter=rounds, max_depth=depth, early_stopping=False, random_state=1)
    ),
    "xgboost": _xgboost,
    "lightgbm": _lightgbm,
}


def regression_table(frame: pd.DataFrame, target: str, n: int, drop: tuple[str, ...] = (), seed: int = 0):
    """``n`` rows of ``frame`` (categories trimmed to those present), the inputs, their one-hot
    encoding and the target as floats."""
    sample = frame.sample(n, random_state=seed).reset_index(drop=True).drop(columns=list(drop))
    for c in sample.columns:
        if isinstance(sample[c].dtype, pd.CategoricalDtype):
            sample[c] = sample[c].cat.remove_unused_categories()
    sample[target] = sample[target].astype(float)
    X = sample.drop(columns=[target])
    return sample, X, pd.get_dummies(X).astype(float), sample[target]
