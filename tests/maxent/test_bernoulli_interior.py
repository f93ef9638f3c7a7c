"""The interior-point method on the membership primal (bagged trees' soft rows): its answer is the
blocks' exact solves' answer, it meets the rows, it takes rows bounded on both sides without a soft
target, its multipliers give its logits, and ``auto`` takes it for soft rows over many blocks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from ppdm.maxent.solvers.bernoulli import BernoulliOptions, _method, solve_bernoulli
from ppdm.maxent.solvers.bernoulli_interior import interior_bernoulli


def _bagged_like(seed: int, n_bits: int = 200, n_trees: int = 12, cells: int = 15):
    """Rows of trees over random cells (each bit in one cell per tree), soft targets drawn near a
    point inside the cube, bounds around them (some at the target: a bagged cell counting one draw),
    and the size row as an equality."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.2, 0.8, n_bits)
    rows, blocks = [], []
    for t in range(n_trees):
        cell = rng.integers(0, cells, n_bits)
        for c in range(cells):
            rows.append((cell == c).astype(float))
            blocks.append(t)
    rows.append(np.ones(n_bits))
    blocks.append(n_trees)
    A = sp.csr_matrix(np.array(rows))
    e = A @ truth
    target = np.r_[np.round(e[:-1] + rng.normal(0, 1, len(e) - 1)), np.nan]
    lo = np.r_[np.maximum(e[:-1] - 1.5, 0), e[-1]]
    hi = np.r_[e[:-1] + 1.5, e[-1]]
    on_bound = rng.random(len(lo) - 1) < 0.3
    lo[:-1] = np.where(on_bound, np.minimum(lo[:-1], target[:-1]), lo[:-1])
    variance = np.r_[np.maximum(target[:-1], 1.0), 0.0]
    return A, lo, hi, np.array(blocks), target, variance


def _both(A, lo, hi, blocks, target, variance):
    free = np.full(A.shape[1], -1)
    fast = solve_bernoulli(A, lo, hi, free, blocks, target, variance, BernoulliOptions(method="interior", time_limit=None))
    slow = solve_bernoulli(A, lo, hi, free, blocks, target, variance, BernoulliOptions(method="scaling", max_sweeps=20_000, tol=1e-8, time_limit=None))
    return fast, slow


@pytest.mark.parametrize("seed", range(3))
def test_interior_agrees_with_the_blocks_exact_solves(seed):
    fast, slow = _both(*_bagged_like(seed))
    assert fast.converged and slow.converged
    assert fast.max_violation <= 1e-6
    np.testing.assert_allclose(fast.p, slow.p, atol=1e-5)


def test_a_hard_interval_row_is_taken():
    A, lo, hi, blocks, target, variance = _bagged_like(1)
    target[:5] = np.nan  # bounded on both sides, no soft target: the dual's kink at 0
    fast, slow = _both(A, lo, hi, blocks, target, variance)
    assert fast.converged and fast.iterations < 100
    np.testing.assert_allclose(fast.p, slow.p, atol=1e-5)


def test_its_certificate_holds_and_its_multipliers_give_its_logits():
    A, lo, hi, _, target, variance = _bagged_like(0)
    result = interior_bernoulli(A, lo, hi, target, variance, 1e-6, 100, None)
    assert result is not None and result.converged
    e = A @ result.q
    assert ((e >= lo - 1e-8) & (e <= hi + 1e-8)).all()
    logit = np.log(result.q / (1 - result.q))
    np.testing.assert_allclose(A.T @ result.lam, logit, atol=1e-5)


def test_a_bit_the_rows_pin_approaches_it_inside_the_interval():
    """Two bits, a row asking for both (lo = 2): each tends to 1 and stays below it."""
    A = sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 0.0]]))
    lo, hi = np.array([2.0, 0.0]), np.array([2.0, 1.0])
    result = interior_bernoulli(A, lo, hi, np.array([np.nan, 1.0]), np.array([0.0, 1.0]), 1e-6, 100, None)
    assert result is not None
    assert (result.q < 1).all() and (result.q > 1 - 1e-6).all()


def test_auto_takes_interior_for_soft_rows_over_many_blocks():
    _, _, hi, blocks, target, _ = _bagged_like(2)
    assert _method(BernoulliOptions(method="auto"), blocks, target, np.zeros(len(hi), bool)) == "interior"
    assert _method(BernoulliOptions(method="auto"), blocks[blocks < 2], target[blocks < 2], np.zeros(int((blocks < 2).sum()), bool)) == "scaling"


def test_a_broken_system_hands_over_to_the_blocks(monkeypatch):
    """Rounding that breaks a step's factorisation stops the method unconverged, never the audit:
    the blocks' cycle finishes from its multipliers."""
    import ppdm.maxent.solvers.bernoulli_interior as interior

    A, lo, hi, blocks, target, variance = _bagged_like(0)
    calls = {"n": 0}

    def breaking(K):
        calls["n"] += 1
        if calls["n"] > 3:
            raise np.linalg.LinAlgError("not positive definite")
        return real(K)

    real = interior._cholesky
    monkeypatch.setattr(interior, "_cholesky", breaking)
    result = interior_bernoulli(A, lo, hi, target, variance, 1e-6, 100, None)
    assert result is not None and not result.converged and result.steps == 4
    free = np.full(A.shape[1], -1)
    solved = solve_bernoulli(A, lo, hi, free, blocks, target, variance, BernoulliOptions(method="interior", time_limit=None, tol=1e-6))
    assert solved.converged and solved.max_violation <= 1e-5


def test_the_breast_cancer_forest_converges():
    """SACRO-ML's example, 100 bagged trees over every candidate: the case whose complementarity
    once fell to 10⁻¹⁵ before its rows were met, and whose next system broke."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.attacks.membership.audit import membership_attack
    from ppdm.tree import forest_from_sklearn

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.rename(columns=lambda c: c.replace(" ", "_"))
    member = np.random.default_rng(0).random(len(y)) < 0.5
    labels = y.astype(str).to_numpy()
    est = RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1).fit(X[member], labels[member])
    frame = X.assign(target=labels)
    published = forest_from_sklearn(est, X[member].reset_index(drop=True), y=pd.Series(labels[member], name="target"))
    result = membership_attack(published, frame, truth=member)
    assert result.details["estimate_converged"] and result.details["max_violation"] <= 1e-4
    assert result.summary()["wrong_proved_members"] == 0 and result.summary()["wrong_proved_non_members"] == 0
