"""The maximum-entropy membership solver: the method ``auto`` picks converges on rule-set shapes
(many blocks of several equality rows), every method gives the same answer, and an estimate that
stops short of its tolerance says so."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from ppdm.maxent.solvers.bernoulli import BernoulliOptions, solve_bernoulli


def _rule_like(seed: int, n_bits: int = 300, n_blocks: int = 40, rows_per_block: int = 4) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Blocks of disjoint rows over random bits (a rule's supports), equality rows met by a point
    strictly inside the cube (no bit pinned: the proofs take pinned bits out before the estimate)."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.1, 0.9, n_bits)
    rows, blocks = [], []
    for b in range(n_blocks):
        chosen = rng.choice(n_bits, rows_per_block * 12, replace=False)
        for part in np.array_split(chosen, rows_per_block):
            row = np.zeros(n_bits)
            row[part] = 1.0
            rows.append(row)
            blocks.append(b)
    A = sp.csr_matrix(np.array(rows))
    return A, A @ truth, np.array(blocks)


@pytest.mark.parametrize("seed", range(3))
def test_auto_converges_on_many_blocks_of_equalities_and_agrees_with_scaling(seed):
    A, b, blocks = _rule_like(seed)
    free = np.full(A.shape[1], -1)
    auto = solve_bernoulli(A, b, b, free, blocks)
    assert auto.converged and auto.max_violation <= 1e-4
    assert auto.iterations <= 50  # Newton's method, not hundreds of sweeps
    slow = solve_bernoulli(A, b, b, free, blocks, options=BernoulliOptions(method="scaling", max_sweeps=20_000, tol=1e-7, time_limit=None))
    np.testing.assert_allclose(auto.p, slow.p, atol=2e-3)


def test_the_sparse_dual_agrees_with_the_dense_one():
    A, b, blocks = _rule_like(5)
    free = np.full(A.shape[1], -1)
    dense = solve_bernoulli(A, b, b, free, blocks)
    sparse = solve_bernoulli(A, b, b, free, blocks, options=BernoulliOptions(dense_entries=0))
    assert dense.converged and sparse.converged
    np.testing.assert_allclose(sparse.p, dense.p, atol=2e-3)


def test_rows_pinning_bits_fall_back_to_cycling_and_say_whether_they_converged():
    """Rows met by 0/1 bits pin some of them (no interior: the proofs take such bits out first).
    ``auto``'s Newton steps then stall at the multiplier cap; it cycles over the blocks instead,
    as ``scaling`` alone would, and says whether the rows were met."""
    rng = np.random.default_rng(0)
    A, _, blocks = _rule_like(0)
    b = A @ (rng.random(A.shape[1]) < 0.4)
    free = np.full(A.shape[1], -1)
    options = BernoulliOptions(max_sweeps=100, time_limit=None)
    auto = solve_bernoulli(A, b, b, free, blocks, options=options)
    alone = solve_bernoulli(A, b, b, free, blocks, options=BernoulliOptions(method="scaling", max_sweeps=100, time_limit=None))
    np.testing.assert_allclose(auto.p, alone.p)
    assert auto.converged == (auto.max_violation <= options.tol)


def test_a_solve_short_of_its_tolerance_says_so():
    A, b, blocks = _rule_like(1)
    free = np.full(A.shape[1], -1)
    short = solve_bernoulli(A, b, b, free, blocks, options=BernoulliOptions(method="scaling", max_sweeps=2))
    assert not short.converged and not short.timed_out and short.max_violation > 1e-4
    newton = solve_bernoulli(A, b, b, free, blocks, options=BernoulliOptions(method="dual", max_sweeps=1))
    assert not newton.converged


def test_a_soft_target_beyond_its_bound_ends_on_the_bound_and_converges():
    """A bagged tree's soft row whose target lies outside its bounds ends on the bound: the solve
    stops there (before, its distance to the target counted as still off: it ran every sweep)."""
    A = sp.csr_matrix(np.array([[1.0] * 10 + [0.0] * 10, [0.0] * 10 + [1.0] * 10]))
    lo, hi = np.array([0.0, 4.0]), np.array([5.0, 4.0])
    target, variance = np.array([8.0, np.nan]), np.array([1.0, 0.0])
    solution = solve_bernoulli(A, lo, hi, np.full(20, -1), np.zeros(2, dtype=int), target, variance)
    assert solution.converged and solution.iterations <= 3
    np.testing.assert_allclose(A @ solution.p, [5.0, 4.0], atol=1e-6)


def _real_rows(seed: int, n_bits: int = 60) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Two blocks (few: ``auto`` cycles over them when rows are 0/1): a counting row per block and
    a real-valued row over the same bits (a boosting round's gradient sums), met by a point inside the cube."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.2, 0.8, n_bits)
    half = n_bits // 2
    rows = []
    for part in (np.arange(half), np.arange(half, n_bits)):
        count = np.zeros(n_bits)
        count[part] = 1.0
        grad = np.zeros(n_bits)
        grad[part] = rng.uniform(-1.0, 1.0, len(part))
        rows += [count, grad]
    A = sp.csr_matrix(np.array(rows))
    return A, A @ truth, np.array([0, 1, 2, 3])


def test_auto_takes_the_dual_when_a_row_is_real_valued_and_cycles_over_counting_rows():
    A, b, blocks = _real_rows(0)
    free = np.full(A.shape[1], -1)
    auto = solve_bernoulli(A, b, b, free, blocks)
    dual = solve_bernoulli(A, b, b, free, blocks, options=BernoulliOptions(method="dual"))
    assert auto.converged and auto.max_violation <= 1e-4  # the blocks' exact solves would miss the real rows
    np.testing.assert_array_equal(auto.p, dual.p)
    with pytest.raises(ValueError, match="0/1 rows only"):
        solve_bernoulli(A, b, b, free, blocks, options=BernoulliOptions(method="scaling"))
    counting = A[[0, 2]]
    auto01 = solve_bernoulli(counting, b[[0, 2]], b[[0, 2]], free, np.array([0, 1]))
    scaling = solve_bernoulli(counting, b[[0, 2]], b[[0, 2]], free, np.array([0, 1]), options=BernoulliOptions(method="scaling"))
    np.testing.assert_array_equal(auto01.p, scaling.p)  # 0/1 rows keep their solver and figures
