"""The truth is feasible: on every supported family of forests (scikit-learn random forests with
and without bootstrap, extra trees, gradient boosting, histogram gradient boosting, XGBoost,
LightGBM), fitted on Adult and Nursery subsets, every record's true class is among the candidate
classes the trees leave its group, so no leaf attack marks a wrong value certain."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from threadpoolctl import threadpool_limits

from ppdm.attacks import background_knowledge_attack, forest_view, homogeneity_attack, uniqueness_attack
from ppdm.attacks.core.threat import ThreatModel
from ppdm.errors import AttackError
from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost

N_ROWS, N_TREES, DEPTH = 1000, 5, 5
QIS = {"adult": ["age", "workclass", "education", "marital-status", "race", "sex"], "nursery": ["parents", "has_nurs", "form", "children"]}


@pytest.fixture(scope="module", params=["adult", "nursery"])
def subset(request, adult_train, nursery):
    frame, roles = adult_train if request.param == "adult" else nursery
    rows = frame.sample(N_ROWS, random_state=5).reset_index(drop=True).drop(columns=["fnlwgt"], errors="ignore")
    cls = roles.class_attribute
    rows[cls] = rows[cls].cat.remove_unused_categories()
    X = rows.drop(columns=cls)
    return request.param, rows, X, pd.get_dummies(X).astype(float), rows[cls]


def _sklearn(est):
    def fit(X, D, y):
        with threadpool_limits(1):
            est.fit(D, y)
        return forest_from_sklearn(est, X, y=y)

    return fit


def _xgboost(X, D, y):
    xgb = pytest.importorskip("xgboost")
    est = xgb.XGBClassifier(n_estimators=N_TREES, max_depth=DEPTH, n_jobs=1).fit(D, y.cat.codes)
    return forest_from_xgboost(est, X, y=y)


def _lightgbm(X, D, y):
    lgb = pytest.importorskip("lightgbm")
    est = lgb.LGBMClassifier(n_estimators=N_TREES, max_depth=DEPTH, num_leaves=24, verbose=-1, n_jobs=1).fit(D, y.cat.codes)
    return forest_from_lightgbm(est, X, list(D.columns), y=y)


FAMILIES = {
    "random-forest": _sklearn(RandomForestClassifier(N_TREES, max_depth=DEPTH, random_state=1, n_jobs=1)),
    "random-forest-no-bootstrap": _sklearn(RandomForestClassifier(N_TREES, max_depth=DEPTH, bootstrap=False, max_features=0.5, random_state=1)),
    "extra-trees": _sklearn(ExtraTreesClassifier(N_TREES, max_depth=DEPTH, random_state=1)),
    "extra-trees-bootstrap": _sklearn(ExtraTreesClassifier(N_TREES, max_depth=DEPTH, bootstrap=True, max_samples=0.5, random_state=1)),
    "gradient-boosting": _sklearn(GradientBoostingClassifier(n_estimators=N_TREES, max_depth=3, random_state=1)),
    "hist-gradient-boosting": _sklearn(HistGradientBoostingClassifier(max_iter=N_TREES, max_depth=DEPTH, early_stopping=False, random_state=1)),
    "xgboost": _xgboost,
    "lightgbm": _lightgbm,
}  # fmt: skip


@pytest.mark.parametrize("family", list(FAMILIES))
def test_no_leaf_attack_marks_a_wrong_value_certain(family, subset):
    name, rows, X, D, y = subset
    forest = FAMILIES[family](X, D, y)
    if not any(forest.known[i] & {"class-counts", "error-rates"} for i in range(forest.n_trees)):
        assert forest.combine == "additive" and len(forest.classes) > 2  # boosting publishes no class counts here
        with pytest.raises(AttackError, match="publishes class counts"):
            homogeneity_attack(forest, rows)
        return
    certain = 0
    for threat in (None, ThreatModel(known=QIS[name])):
        view = forest_view(forest, rows, threat)
        assert view.candidates()[view.groups.group_of_record, view.true_codes].all()  # the truth is feasible
        for result in (
            homogeneity_attack(forest, rows, threat),
            uniqueness_attack(forest, rows, threat),
            background_knowledge_attack(forest, rows, rows.iloc[:40], threat=threat),
        ):
            summary = result.summary()
            assert summary["certain_wrong"] == 0, (result.attack, threat)
            if result.attack != "background-knowledge":
                assert summary["exposed_wrong"] == 0
            assert all(p.startswith(("tree ", "no tree")) for p in result.provenance)
        certain += summary["certain_records"]
    assert certain > 0  # the check bites: some people are exposed (boosting: by the first tree's counts)
    assert np.isfinite(summary["attacker_accuracy"])
