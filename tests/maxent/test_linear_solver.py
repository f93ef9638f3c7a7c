"""The linear maximum-entropy solver against cvxpy + Clarabel, and its infeasibility reports."""

import numpy as np
import pytest
import scipy.sparse as sp

from ppdm.errors import InfeasibleError
from ppdm.maxent import LinearBlock, MaxEntProblem, solve_linear

cp = pytest.importorskip("cvxpy")


def random_problem(rng, n_groups, n_values, n_leaves, rate, label, sa):
    counts = rng.integers(1, 6, n_groups)
    w = counts / counts.sum()
    leaf = rng.integers(0, n_leaves, n_groups)
    joint = rng.dirichlet(np.ones(n_values), n_groups) * w[:, None]
    problem = MaxEntProblem(w, n_values)

    def row(groups, x, coef=1.0):
        r = np.zeros(n_groups * n_values)
        r[groups * n_values + x] = coef
        return r

    rate_rows, rate_b, label_rows = [], [], []
    for leaf_id in np.unique(leaf):
        groups = np.flatnonzero(leaf == leaf_id)
        top = int(joint[groups].sum(0).argmax())
        if rate:
            rate_rows.append(row(groups, top))
            rate_b.append(joint[groups, top].sum())
        if label:
            label_rows += [row(groups, x) - row(groups, top) for x in range(n_values) if x != top]
    if rate_rows:
        problem.add(LinearBlock("rate", sp.csr_matrix(np.array(rate_rows)), rate_b, "eq"))
    if label_rows:
        problem.add(LinearBlock("label", sp.csr_matrix(np.array(label_rows)), np.zeros(len(label_rows)), "le"))
    if sa:
        S = np.stack([row(np.arange(n_groups), x) for x in range(n_values - 1)])
        problem.add(LinearBlock("sa", sp.csr_matrix(S), joint.sum(0)[:-1], "eq"))
    return problem


def clarabel(problem):
    A, b, le, _ = problem.stacked()
    g, k = problem.n_groups, problem.n_values
    P = cp.Variable(g * k, nonneg=True)
    cons = [cp.reshape(P, (g, k), order="C").sum(axis=1) == problem.weights]
    if (~le).any():
        cons.append(A[~le] @ P == b[~le])
    if le.any():
        cons.append(A[le] @ P <= b[le])
    cp.Problem(cp.Maximize(cp.sum(cp.entr(P))), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return np.clip(P.value.reshape(g, k) / problem.weights[:, None], 0, 1)


@pytest.mark.parametrize("seed", range(12))
def test_agrees_with_clarabel_on_random_instances(seed):
    rng = np.random.default_rng(seed)
    problem = random_problem(
        rng, int(rng.integers(3, 80)), int(rng.integers(2, 7)), int(rng.integers(1, 10)),
        rate=seed % 2 == 0, label=seed % 4 != 3, sa=seed % 3 != 0,
    )
    ours = solve_linear(problem)
    reference = clarabel(problem)
    assert abs(ours.entropy - problem.entropy(reference)) <= 1e-6
    assert ours.max_violation <= 1e-7
    assert problem.violations(ours.p).max(initial=0) <= 1e-7
    assert ours.kkt_residual <= 1e-7  # feasibility, λ ≥ 0 and complementary slackness
    assert np.allclose(ours.p.sum(axis=1), 1)


def test_infeasible_problem_names_a_small_conflicting_set():
    w = np.array([0.5, 0.5])
    problem = MaxEntProblem(w, 2)
    # group 0 must be all class 0 and all class 1: impossible; an unrelated row stays out of the report
    problem.add(LinearBlock("rate", sp.csr_matrix([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]), [0.5, 0.5, 0.25], "eq", ["a", "b", "unrelated"]))
    with pytest.raises(InfeasibleError) as err:
        solve_linear(problem)
    assert set(err.value.conflict) == {"a", "b"}
    assert "a, b" in str(err.value) or "b, a" in str(err.value)


def test_presolve_fixes_pure_leaves_exactly():
    # one leaf of two groups publishes P(class 0 | leaf) = 1: both groups are certain
    problem = MaxEntProblem(np.array([0.25, 0.25, 0.5]), 3)
    problem.add(LinearBlock("rate", sp.csr_matrix([[1, 0, 0, 1, 0, 0, 0, 0, 0]]), [0.5], "eq"))
    solution = solve_linear(problem)
    assert np.array_equal(solution.p[:2], [[1, 0, 0], [1, 0, 0]])
    assert np.allclose(solution.p[2], 1 / 3)
