"""Newton's method on the whole membership dual (bagged trees' soft rows): its answer is the
blocks' exact solves' answer, it meets the hard rows, and ``auto`` takes it for soft rows over
many blocks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from ppdm.maxent.solvers.bernoulli import BernoulliOptions, _method, solve_bernoulli
from ppdm.maxent.solvers.bernoulli_newton import newton_bernoulli


def _bagged_like(seed: int, n_bits: int = 200, n_trees: int = 12, cells: int = 15):
    """Rows of trees over random cells (each bit in one cell per tree), soft targets drawn near a
    point inside the cube, bounds around them, and the size row as an equality."""
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
    variance = np.r_[np.maximum(target[:-1], 1.0), 0.0]
    return A, lo, hi, np.array(blocks), target, variance


@pytest.mark.parametrize("seed", range(3))
def test_newton_agrees_with_the_blocks_exact_solves(seed):
    A, lo, hi, blocks, target, variance = _bagged_like(seed)
    free = np.full(A.shape[1], -1)
    fast = solve_bernoulli(A, lo, hi, free, blocks, target, variance, BernoulliOptions(method="newton", time_limit=None))
    slow = solve_bernoulli(A, lo, hi, free, blocks, target, variance, BernoulliOptions(method="scaling", max_sweeps=20_000, tol=1e-8, time_limit=None))
    assert fast.converged and slow.converged
    assert fast.max_violation <= 1e-4
    np.testing.assert_allclose(fast.p, slow.p, atol=1e-3)


def test_newton_alone_reaches_its_tolerance_on_soft_rows():
    A, lo, hi, _, target, variance = _bagged_like(0)
    result = newton_bernoulli(A, lo, hi, target, variance, 1e-6, 100, None)
    assert result is not None and result.converged
    q = result.q
    assert ((A @ q >= lo - 1e-6) & (A @ q <= hi + 1e-6)).all()


def test_a_hard_interval_row_is_not_newtons():
    A, lo, hi, _, target, variance = _bagged_like(1)
    target[0] = np.nan  # bounded on both sides, no soft target: a kink at 0
    assert newton_bernoulli(A, lo, hi, target, variance, 1e-6, 10, None) is None


def test_auto_takes_newton_for_soft_rows_over_many_blocks():
    _, _, hi, blocks, target, _ = _bagged_like(2)
    assert _method(BernoulliOptions(method="auto"), blocks, target, np.zeros(len(hi), bool)) == "newton"
    assert _method(BernoulliOptions(method="auto"), blocks[blocks < 2], target[blocks < 2], np.zeros(int((blocks < 2).sum()), bool)) == "scaling"
