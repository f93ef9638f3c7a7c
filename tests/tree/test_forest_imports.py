"""Every supported library's forests import with 100 % prediction agreement on the Adult,
Nursery and Bank Loan test rows, and every count an import claims is the direct count of the
training rows routed through its trees."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from threadpoolctl import threadpool_limits

from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost

N_TREES, DEPTH = 6, 5


def _sklearn(est, split):
    with threadpool_limits(1):  # OpenMP (histogram boosting) crawls on a shared, busy machine
        est.fit(split.D, split.y)
        predicted, proba = est.predict(split.D_test), est.predict_proba(split.D_test)
    forest = forest_from_sklearn(est, split.X, y=split.y)
    # bit for bit, except where scikit-learn's softmax rounds differently (1e-16)
    return forest, predicted, proba, 1e-12


def _xgboost(split):
    xgb = pytest.importorskip("xgboost")
    est = xgb.XGBClassifier(n_estimators=N_TREES, max_depth=DEPTH, learning_rate=0.3, n_jobs=1)
    est.fit(split.D, split.codes)
    forest = forest_from_xgboost(est, split.X, y=split.y)
    # XGBoost adds float32 leaf values in float32
    return forest, split.classes_of(est.predict(split.D_test)), est.predict_proba(split.D_test), 1e-5


def _lightgbm(split):
    lgb = pytest.importorskip("lightgbm")
    est = lgb.LGBMClassifier(n_estimators=N_TREES, max_depth=DEPTH, num_leaves=24, verbose=-1, n_jobs=1)
    est.fit(split.D, split.codes)
    forest = forest_from_lightgbm(est, split.X, list(split.D.columns), y=split.y)
    return forest, split.classes_of(est.predict(split.D_test)), est.predict_proba(split.D_test), 1e-12


LIBRARIES = {
    "random-forest": lambda s: _sklearn(RandomForestClassifier(N_TREES, max_depth=DEPTH, random_state=1, n_jobs=1), s),
    "random-forest-no-bootstrap": lambda s: _sklearn(
        RandomForestClassifier(N_TREES, max_depth=DEPTH, bootstrap=False, max_features=0.5, random_state=1), s
    ),
    "extra-trees": lambda s: _sklearn(ExtraTreesClassifier(N_TREES, max_depth=DEPTH, random_state=1), s),
    "extra-trees-bootstrap": lambda s: _sklearn(
        ExtraTreesClassifier(N_TREES, max_depth=DEPTH, bootstrap=True, max_samples=0.5, random_state=1), s
    ),
    "gradient-boosting": lambda s: _sklearn(GradientBoostingClassifier(n_estimators=N_TREES, max_depth=3, random_state=1), s),
    "hist-gradient-boosting": lambda s: _sklearn(
        HistGradientBoostingClassifier(max_iter=N_TREES, max_depth=DEPTH, early_stopping=False, random_state=1), s
    ),
    "xgboost": _xgboost,
    "lightgbm": _lightgbm,
}


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_import_agrees_on_every_test_row_and_its_counts_are_direct_counts(library, any_split, claims_hold):
    forest, predicted, proba, tolerance = LIBRARIES[library](any_split)
    assert forest.classes == tuple(any_split.y.cat.categories)
    assert np.array_equal(forest.predict(any_split.X_test), np.asarray(predicted, dtype=object))
    assert np.abs(forest.predict_proba(any_split.X_test) - proba).max() <= tolerance
    checked, with_classes = claims_hold(forest, any_split.X, any_split.codes)
    binary = len(forest.classes) == 2
    if forest.combine == "mean-proba":
        assert checked == with_classes == forest.n_trees  # every tree, with its bootstrap multiplicities
    elif library == "xgboost":
        assert checked >= (1 if binary else len(forest.classes))  # the first round's trees
        assert with_classes == int(binary)
    else:
        assert checked == forest.n_trees and with_classes == int(binary)


def test_sklearn_forests_keep_scikit_learns_node_ids(adult_split):
    est = RandomForestClassifier(4, max_depth=4, random_state=0).fit(adult_split.D, adult_split.y)
    forest = forest_from_sklearn(est, adult_split.X, y=adult_split.y)
    expected = np.column_stack([t.apply(adult_split.D_test.to_numpy(dtype=np.float32)) for t in est.estimators_])
    assert np.array_equal(forest.apply(adult_split.X_test), expected)


def test_a_count_check_failing_on_a_missing_value_names_its_row():
    """A training row with no value where a split reads takes the default branch, and the counts
    differ: the message said only "pass the training rows in the order the model was fitted
    on" (a new user's Nursery table with one cell left empty); it now names the row."""
    import pandas as pd

    from ppdm.errors import ModelImportError

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 5, 300).astype(float), "b": rng.normal(size=300)})
    y = pd.Series(np.where(X.a + X.b > 2, "p", "n"), name="y")
    est = RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, y)
    holed = X.copy()
    holed.loc[[7, 8, 9, 10], "a"] = np.nan
    with pytest.raises(ModelImportError, match=r"\(row 7 has no value in 'a'\)"):
        forest_from_sklearn(est, holed, y=y)
