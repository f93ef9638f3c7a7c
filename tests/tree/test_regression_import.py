"""Regressors import into ppdm's Tree / Forest: same predictions as the library, every leaf's row
count checked against the training rows, unsupported losses refused naming the loss."""

from __future__ import annotations

import numpy as np
import pytest
from regressors import REGRESSORS, regression_table

import ppdm
from ppdm.data.datasets import load_adult
from ppdm.errors import ModelImportError, PpdmError
from ppdm.tree import Forest, Tree
from ppdm.tree.forest_check import verify_counts


@pytest.fixture(scope="module")
def adult_hours():
    frame, _ = load_adult("train")
    return regression_table(frame, "hours-per-week", 1500, drop=("income",))


@pytest.mark.parametrize("family", sorted(REGRESSORS))
def test_same_predictions_and_counts(adult_hours, family):
    _, X, D, y = adult_hours
    est, model = REGRESSORS[family](X, D, y)
    assert model.is_regressor and model.class_attribute == "hours-per-week"
    assert np.allclose(model.predict(X), est.predict(D), rtol=1e-6, atol=1e-4)
    forest = model if isinstance(model, Forest) else Forest([model], "mean")
    assert verify_counts(forest, X) == forest.n_trees  # every tree's row counts, with multiplicities


def test_a_single_tree_is_a_tree(adult_hours):
    _, X, D, y = adult_hours
    _, model = REGRESSORS["tree"](X, D, y)
    assert isinstance(model, Tree) and model.classes == ()
    assert all(leaf.value is not None and leaf.n_samples for leaf in model.leaves())
    with pytest.raises(PpdmError, match="regression tree"):
        ppdm.tree.io.tree_to_dict(model)


@pytest.mark.parametrize(
    "make, loss",
    [
        (lambda: __import__("sklearn.ensemble", fromlist=["x"]).GradientBoostingRegressor(loss="absolute_error", n_estimators=2), "absolute_error"),
        (lambda: __import__("sklearn.ensemble", fromlist=["x"]).GradientBoostingRegressor(loss="quantile", n_estimators=2), "quantile"),
        (lambda: __import__("sklearn.ensemble", fromlist=["x"]).HistGradientBoostingRegressor(loss="poisson", max_iter=2), "poisson"),
        (lambda: __import__("sklearn.tree", fromlist=["x"]).DecisionTreeRegressor(criterion="absolute_error", max_depth=2), "absolute_error"),
    ],
)
def test_unsupported_losses_are_refused_by_name(adult_hours, make, loss):
    _, X, D, y = adult_hours
    est = make().fit(D, y)
    with pytest.raises(ModelImportError, match=loss):
        ppdm.from_estimator(est, X, y)


def test_library_objectives_refused_by_name(adult_hours):
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    _, X, D, y = adult_hours
    est = xgb.XGBRegressor(n_estimators=2, max_depth=2, objective="reg:absoluteerror", n_jobs=1).fit(D, y)
    with pytest.raises(ModelImportError, match="reg:absoluteerror"):
        ppdm.from_estimator(est, X, y)
    est = lgb.LGBMRegressor(n_estimators=2, objective="quantile", verbose=-1, n_jobs=1).fit(D, y)
    with pytest.raises(ModelImportError, match="quantile"):
        ppdm.tree.forest_from_lightgbm(est, X, list(D.columns), y=y)


def test_the_target_is_found_or_asked_for(adult_hours):
    table, X, D, y = adult_hours
    est, _ = REGRESSORS["tree"](X, D, y)
    assert ppdm.from_estimator(est, table).class_attribute == "hours-per-week"  # the one numeric column left over
    two = table.assign(other=1.0)
    with pytest.raises(ModelImportError, match="class_attribute"):
        ppdm.from_estimator(est, two)


def test_files_round_trip_through_load_model(adult_hours, tmp_path):
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    table, X, D, y = adult_hours
    est = xgb.XGBRegressor(n_estimators=3, max_depth=3, n_jobs=1).fit(D, y)
    est.save_model(tmp_path / "m.json")
    model = ppdm.load_model(tmp_path / "m.json", table)
    assert model.is_regressor and np.allclose(model.predict(X), est.predict(D), atol=1e-4)
    est = lgb.LGBMRegressor(n_estimators=3, num_leaves=8, verbose=-1, n_jobs=1).fit(D, y)
    est.booster_.save_model(tmp_path / "m.txt")
    model = ppdm.load_model(tmp_path / "m.txt", table)
    assert model.is_regressor and np.allclose(model.predict(X), est.predict(D))
