"""Proved intervals of a regressor's targets against brute force: on tiny tables every integer
target vector over a small domain is enumerated, each leaf's published value recomputed from the
library's own formula (an oracle independent of ppdm's rows), and the consistent vectors' extremes
compared with the linear programme's bounds (equal) and bound propagation's (containing them)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

import ppdm
from ppdm.exact.target_bounds import lp_bounds, propagate
from ppdm.exact.target_rows import target_rows
from ppdm.tree import forest_from_lightgbm

DOMAIN = (0, 3)


def tiny(n: int = 7, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x1": rng.integers(0, 4, n).astype(float), "x2": rng.integers(0, 5, n).astype(float)})
    y = pd.Series(rng.integers(DOMAIN[0], DOMAIN[1] + 1, n).astype(float), name="y")
    return X.assign(y=y), X, y


def _leaves(model, X):
    forest = model if isinstance(model, ppdm.tree.Forest) else ppdm.tree.Forest([model], "mean")
    return forest, forest.apply(X)


def mean_oracle(est, model, X):
    """Per tree: each leaf's mean target of the candidate, rows weighted by the redrawn bootstrap."""
    forest, leaves = _leaves(model, X)
    weights = [np.ones(len(X)) if m is None else m.astype(float) for m in forest.multiplicities]
    published = [np.array([t.nodes[i].value if t.nodes[i].is_leaf else np.nan for i in range(t.n_nodes)]) for t in forest.trees]

    def consistent(y: np.ndarray) -> bool:
        for t, tree in enumerate(forest.trees):
            w = weights[t]
            sums = np.bincount(leaves[:, t], weights=w * y, minlength=tree.n_nodes)
            size = np.bincount(leaves[:, t], weights=w, minlength=tree.n_nodes)
            used = size > 0
            if not np.allclose(sums[used] / size[used], published[t][used], atol=1e-6):
                return False
        return True

    return consistent


def newton_oracle(scores_before, model, X, lr, lam, mean_start=False):
    """Per round: each leaf's value recomputed as lr · Σ (y − F_{m−1}) / (n + λ) from the library's
    own scores before the round (``scores_before[m]``); LightGBM's first round starts from the
    candidate's own mean and its leaves hold it."""
    forest, leaves = _leaves(model, X)
    published = [np.array([t.nodes[i].value if t.nodes[i].is_leaf else np.nan for i in range(t.n_nodes)]) for t in forest.trees]

    def consistent(y: np.ndarray) -> bool:
        for m, tree in enumerate(forest.trees):
            F = np.full(len(y), y.mean()) if (mean_start and m == 0) else scores_before[m]
            sums = np.bincount(leaves[:, m], weights=y - F, minlength=tree.n_nodes)
            size = np.bincount(leaves[:, m], minlength=tree.n_nodes).astype(float)
            used = size > 0
            value = lr * sums[used] / (size[used] + lam) + (F[0] if (mean_start and m == 0) else 0.0)
            if not np.allclose(value, published[m][used], atol=1e-4):
                return False
        return True

    return consistent


def brute_force(consistent, n: int) -> tuple[np.ndarray, np.ndarray]:
    found = np.array([y for y in itertools.product(range(DOMAIN[0], DOMAIN[1] + 1), repeat=n) if consistent(np.array(y, float))], float)
    assert len(found)
    return found.min(axis=0), found.max(axis=0)


def fitted(family: str, rounds: int):
    table, X, y = tiny()
    if family == "tree":
        est = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
        model = ppdm.from_estimator(est, X, y)
        return table, X, model, mean_oracle(est, model, X)
    if family == "random-forest":
        est = RandomForestRegressor(rounds, max_depth=2, random_state=3, n_jobs=1).fit(X, y)
        model = ppdm.from_estimator(est, X, y)
        return table, X, model, mean_oracle(est, model, X)
    if family == "gradient-boosting":
        est = GradientBoostingRegressor(n_estimators=rounds, max_depth=2, learning_rate=0.5, random_state=0).fit(X, y)
        before = [np.full(len(X), y.mean())] + list(est.staged_predict(X))[:-1]
        return table, X, ppdm.from_estimator(est, X, y), newton_oracle(before, ppdm.from_estimator(est, X, y), X, 0.5, 0.0)
    if family == "hist-gradient-boosting":
        est = HistGradientBoostingRegressor(max_iter=rounds, max_depth=2, learning_rate=0.5, min_samples_leaf=1, early_stopping=False).fit(X, y)
        model = ppdm.from_estimator(est, X, y)
        before = [np.full(len(X), y.mean())] + list(est.staged_predict(X))[:-1]
        return table, X, model, newton_oracle(before, model, X, 0.5, 1e-15)
    if family == "xgboost":
        xgb = pytest.importorskip("xgboost")
        est = xgb.XGBRegressor(n_estimators=rounds, max_depth=2, learning_rate=0.5, reg_lambda=1.0, min_child_weight=0, n_jobs=1).fit(X, y)
        model = ppdm.from_estimator(est, X, y)
        booster = est.get_booster()
        before = [booster.predict(xgb.DMatrix(X), output_margin=True, iteration_range=(0, m)) if m else np.full(len(X), model.base_score[0]) for m in range(rounds)]
        return table, X, model, newton_oracle([np.asarray(b, float) for b in before], model, X, 0.5, 1.0)
    lgb = pytest.importorskip("lightgbm")
    est = lgb.LGBMRegressor(
        n_estimators=rounds, num_leaves=4, learning_rate=0.5, min_child_samples=1, min_data_in_bin=1, min_sum_hessian_in_leaf=0, verbose=-1, n_jobs=1,
    ).fit(X, y)  # fmt: skip
    model = forest_from_lightgbm(est, X, y=y)
    before = [None] + [np.asarray(est.predict(X, raw_score=True, num_iteration=m), float) for m in range(1, rounds)]
    return table, X, model, newton_oracle(before, model, X, 0.5, 0.0, mean_start=True)


FAMILIES = ["tree", "random-forest", "gradient-boosting", "hist-gradient-boosting", "xgboost", "lightgbm"]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("rounds", [2, 3])
def test_lp_bounds_equal_brute_force(family, rounds):
    table, X, model, consistent = fitted(family, rounds)
    n = len(X)
    lo_true, hi_true = brute_force(consistent, n)
    rows = target_rows(model, table, ["x1", "x2"], 3.0)
    assert rows.rounds.left_out == {}
    lo, hi = np.zeros(n), np.full(n, 3.0)
    tight = lp_bounds(rows.matrix, rows.lower, rows.upper, lo, hi)
    assert tight.solved.all()
    # sound: every consistent integer vector lies inside; tight: the extremes are reached
    assert (tight.lo <= lo_true + 1e-6).all() and (tight.hi >= hi_true - 1e-6).all()
    assert np.allclose(tight.lo, lo_true, atol=1e-4) and np.allclose(tight.hi, hi_true, atol=1e-4), (tight.lo, lo_true, tight.hi, hi_true)
    outer = propagate(rows.matrix, rows.lower, rows.upper, lo, hi)
    assert (outer.lo <= lo_true + 1e-6).all() and (outer.hi >= hi_true - 1e-6).all()  # an outer bound of the tight one
    assert (outer.lo <= tight.lo + 1e-5).all() and (outer.hi >= tight.hi - 1e-5).all()


def test_a_leaf_of_one_record_pins_it_exactly():
    table, X, y = tiny(40, seed=2)
    est = DecisionTreeRegressor(random_state=0).fit(X, y)  # grown out: leaves of one record
    model = ppdm.from_estimator(est, X, y)
    result = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="y", preset="insider"), tolerance=0.0)
    leaf = model.apply(X)
    alone = np.bincount(leaf)[leaf] == 1
    assert alone.any()
    people = result.people()
    assert np.allclose(people["lower"].to_numpy()[alone], y.to_numpy()[alone], rtol=0, atol=1e-7)  # to the float precision of the leaf's mean
    assert np.allclose(people["upper"].to_numpy()[alone], y.to_numpy()[alone], rtol=0, atol=1e-7)
    assert people["pinned"].to_numpy()[alone].all()


def test_closed_form_on_one_tree():
    # a leaf of n records with sum S over [lo, hi]: [max(lo, S − (n−1) hi), min(hi, S − (n−1) lo)]
    import scipy.sparse as sp

    A = sp.csr_matrix(np.ones((1, 4)))
    for S in (0.0, 1.0, 5.5, 11.0, 12.0):
        got = propagate(A, np.array([S]), np.array([S]), np.zeros(4), np.full(4, 3.0))
        assert np.allclose(got.lo, max(0.0, S - 9.0)) and np.allclose(got.hi, min(3.0, S))
