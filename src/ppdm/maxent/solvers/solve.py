"""Solve a linear maximum-entropy problem and report how well the answer meets its constraints.

:func:`solve_linear` presolves (merged groups, forced zeros), minimises the dual
(:mod:`ppdm.maxent.solvers.dual`), expands the answer back to every QI group and checks it against the
*original* rows: the reported ``max_violation`` is measured, not assumed. If the constraints
cannot all hold, :class:`~ppdm.errors.InfeasibleError` names a small conflicting set,
found by an elastic linear program (HiGHS) and a deletion filter.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ppdm.errors import InfeasibleError
from ppdm.maxent.rows.problem import MaxEntProblem
from ppdm.maxent.solvers.dual import solve_dual
from ppdm.maxent.solvers.presolve import Reduced, reduce
from ppdm.maxent.solvers.solution import Solution, full_dual, row_status


def solve_linear(problem: MaxEntProblem, tol: float = 1e-9, max_iter: int = 5000) -> Solution:
    """Maximise H(X | Q) subject to the problem's linear blocks; ``tol`` bounds every row's violation."""
    start = time.perf_counter()
    A, b, le, names = problem.stacked()
    red = reduce(A, b, le, problem.weights, problem.n_values, log_base=problem.log_base)
    if red.fixed.all(axis=1).any():
        _raise_infeasible(problem, "every sensitive value of some group is forced to 0")
    result = solve_dual(red, tol, max_iter)
    p = result.state.p[red.class_of_group]
    violations = problem.violations(p)
    worst = float(violations.max(initial=0.0))
    if worst > max(tol * 100, 1e-7):
        _raise_infeasible(problem, f"the best solution found still violates a constraint by {worst:.2e}")
    kkt = kkt_residual(red, result.lam, result.state.residual, worst)
    return Solution(
        p=p,
        entropy=problem.entropy(p),
        max_violation=worst,
        iterations=result.iterations,
        newton_steps=result.newton_steps,
        seconds=time.perf_counter() - start,
        n_classes=len(red.weights),
        n_rows=len(b),
        status=row_status(worst, tol),
        dual=full_dual(len(b), red.rows, result.lam),
        kkt_residual=kkt,
    )


def kkt_residual(red: Reduced, lam: np.ndarray, residual: np.ndarray, primal: float) -> float:
    """The largest violation of the KKT conditions at the dual solver's answer.

    Stationarity holds by construction (p is the softmax of the dual scores), so what is left is
    primal feasibility (``primal``, the largest row violation), dual feasibility (λ ≥ 0 on
    inequality rows) and complementary slackness |λ_r · (A P − b)_r| on inequality rows.
    """
    return kkt_residual_of(red.le, lam, residual, primal)


def kkt_residual_of(le: np.ndarray, lam: np.ndarray, residual: np.ndarray, primal: float) -> float:
    """:func:`kkt_residual` for rows whose inequalities are ``le``."""
    dual_infeasible = float(np.maximum(-lam[le], 0.0).max(initial=0.0))
    slackness = float(np.abs(lam[le] * residual[le]).max(initial=0.0))
    return max(primal, dual_infeasible, slackness)


# -- infeasibility ------------------------------------------------------------------------------
def _elastic_lp(
    A: sp.csr_matrix, b: np.ndarray, le: np.ndarray, weights: np.ndarray, n_values: int, rows: np.ndarray, impossible: np.ndarray | None = None,
) -> tuple[bool, np.ndarray]:
    """Minimise total slack of ``rows`` with P(q, ·) summing to w_q; return (feasible, slack per row)."""
    n_var = len(weights) * n_values
    sub = A[rows]
    m = len(rows)
    # variables: P (n_var), s+ (m), s- (m); equality rows get both slacks, inequality rows only s-.
    eye = sp.identity(m, format="csr")
    A_rows = sp.hstack([sub, -eye, eye], format="csr")
    qi = sp.hstack(
        [sp.kron(sp.identity(len(weights)), np.ones((1, n_values))), sp.csr_matrix((len(weights), 2 * m))], format="csr"
    )
    is_le = le[rows]
    A_eq = sp.vstack([A_rows[~is_le], qi], format="csr")
    b_eq = np.concatenate([b[rows][~is_le], weights])
    A_ub = A_rows[is_le]
    b_ub = b[rows][is_le]
    cost = np.concatenate([np.zeros(n_var), np.ones(m), np.where(is_le, 0.0, 1.0)])
    upper_minus = np.where(is_le, 0.0, None)
    cap = [(0, None)] * n_var if impossible is None else [(0, 0 if x else None) for x in impossible.ravel()]
    bounds = cap + [(0, None)] * m + [(0, u) for u in upper_minus]
    res = linprog(cost, A_ub=A_ub if A_ub.shape[0] else None, b_ub=b_ub if A_ub.shape[0] else None, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        return False, np.ones(m)
    slack = res.x[n_var : n_var + m] + res.x[n_var + m :]
    return bool(res.fun <= 1e-10), slack


def conflicting_rows(problem: MaxEntProblem, limit: int = 200) -> list[str]:
    """A small set of rows that cannot hold together (names), by elastic LP and deletion filter."""
    A, b, le, names = problem.stacked()
    all_rows = np.arange(len(b))
    feasible, slack = _elastic_lp(A, b, le, problem.weights, problem.n_values, all_rows, problem.impossible)
    if feasible:
        return []
    suspects = all_rows[slack > 1e-10]
    candidate = _grow_until_infeasible(problem, A, b, le, suspects, limit)
    if candidate is None:
        return [names[i] for i in suspects[:10]]
    keep = list(candidate)
    for r in list(candidate):
        trial = np.array([k for k in keep if k != r])
        if len(trial) and not _elastic_lp(A, b, le, problem.weights, problem.n_values, trial, problem.impossible)[0]:
            keep = list(trial)
    return [names[i] for i in keep]


def _grow_until_infeasible(problem: MaxEntProblem, A: sp.csr_matrix, b: np.ndarray, le: np.ndarray, rows: np.ndarray, limit: int) -> np.ndarray | None:
    """Rows around ``rows`` (sharing a QI group, step by step) that are infeasible on their own."""
    k = problem.n_values
    by_column = sp.csc_matrix(A)
    candidate = np.unique(rows)
    while len(candidate) <= limit:
        if not _elastic_lp(A, b, le, problem.weights, k, candidate, problem.impossible)[0]:
            return candidate
        groups = np.unique(A[candidate].indices // k)
        columns = (groups[:, None] * k + np.arange(k)).ravel()
        grown = np.union1d(candidate, np.unique(by_column[:, columns].indices))
        if len(grown) == len(candidate):
            return None
        candidate = grown
    return None


def _raise_infeasible(problem: MaxEntProblem, reason: str) -> None:
    conflict = conflicting_rows(problem)
    if conflict:
        shown = ", ".join(conflict[:10]) + (" ..." if len(conflict) > 10 else "")
        raise InfeasibleError(f"the constraints are infeasible; a conflicting set: {shown}", conflict)
    raise InfeasibleError(f"the solver did not converge ({reason}); the constraints themselves are feasible", [])
