"""The maximum-entropy problem in factored form: groups reach blocks, and rows only see types.

Paper 000 §3 maximises the attacker's entropy over p(u | q) subject to what the tree publishes
(§4). Under a general threat model (:mod:`ppdm.maxent.table.unknowns`) a group q's unknowns are *slots*
(leaf Λ, class c, sensitive cell x) with a base measure m; every row of §4 (class counts, rates,
leaf sizes, labels, the SA distribution) puts the same coefficient on P(q, slot) for every group:
it depends only on the slot's *type* t = (Λ, c, x). So the constraint matrix is small, rows ×
types, and what tells the groups apart is which types each may take:

* group q *reaches* some blocks (the leaves its known values can lead to: the sparse matrix
  ``reach``, groups × blocks);
* a group with a known *tag* (its class) takes only the types of that tag; tag −1 takes any;
* a *pinned* group takes one given type with probability 1 (a fully known individual).

The types of one block and one tag form a *cell*. At the dual optimum
p(t | q) = m_t e^{−(Aᵀλ)_t} / Z_q for every type t of a cell q reaches, with
Z_q = Σ_{cells C of q} g_C and g_C = Σ_{t ∈ C} m_t e^{−(Aᵀλ)_t}: the dual, its gradient and its
Hessian cost O(nnz(reach) + types · rows per type) (:mod:`ppdm.maxent.solvers.factored_dual`), never
one array entry per slot. :func:`solve_factored` presolves at the type level
(:mod:`ppdm.maxent.solvers.factored_presolve`), minimises the dual with the Newton driver of
:mod:`ppdm.maxent.solvers.dual` and reports, per group, the marginal over each type's *label* (the
sensitive cell), checked against the original rows.

*Pinned groups* are how known individuals enter: their contribution A[:, t]·P(q) is subtracted
from the right-hand sides before the solve and their marginal is the label of their type.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from ppdm.errors import InfeasibleError
from ppdm.maxent.rows.factored_problem import Cells, FactoredProblem
from ppdm.maxent.rows.problem import LinearBlock, MaxEntProblem
from ppdm.maxent.solvers.dual import minimize_dual
from ppdm.maxent.solvers.factored_dual import FactoredDual, FactoredState, entropy_and_marginal, possible_labels
from ppdm.maxent.solvers.factored_presolve import FactoredReduced, reduce_factored
from ppdm.maxent.solvers.newton import NewtonOptions
from ppdm.maxent.solvers.solution import INACCURATE, Solution, full_dual, row_status
from ppdm.maxent.solvers.solve import kkt_residual_of

__all__ = ["Cells", "FactoredProblem", "FactoredSolution", "Solution", "expand", "factored_solution", "solve_factored"]


#: The factored form's result is the one :class:`~ppdm.maxent.solvers.solution.Solution` (its
#: ``marginal``, ``types`` and ``face``); the name stays for the code that imports it.
FactoredSolution = Solution


def checked_violations(problem: FactoredProblem, types: np.ndarray, tol: float, how: str = "") -> tuple[np.ndarray, float]:
    """Every original row's violation by ``types`` and the worst; refuses a solution that misses a
    row by more than ``max(100 tol, 1e-7)``, naming the ten worst rows (``how``: what the solver
    did, for the message)."""
    violations = problem.violations(types)
    worst = float(violations.max(initial=0.0))
    if worst > max(tol * 100, 1e-7):
        _, _, _, names = problem.stacked()
        order = np.argsort(-violations)[:10]
        shown = [names[i] for i in order if violations[i] > max(tol * 100, 1e-7)]
        raise InfeasibleError(
            f"the constraints are infeasible or the solver did not converge{how}: the best solution found "
            f"still violates {', '.join(shown)} (worst by {worst:.2e})",
            shown,
        )
    return violations, worst


def solve_factored(
    problem: FactoredProblem, tol: float = 1e-9, max_iter: int = 5000, time_limit: float | None = None, reduced: FactoredReduced | None = None,
    options: NewtonOptions | None = None,
) -> Solution:
    """Maximise the entropy subject to the problem's rows; ``tol`` bounds every row's violation.

    Raises :class:`~ppdm.maxent.rows.problem.InfeasibleError` naming rows when the presolve leaves a
    group without any possible type or the best solution found still violates rows. With
    ``time_limit`` (seconds), a solve that runs out of time returns the point reached instead:
    status ``inaccurate``, its violation measured, ``possible`` the labels the presolve left (the
    presolve stops its rounds at the deadline too). ``reduced``: the problem already presolved
    (:func:`~ppdm.maxent.solvers.factored_presolve.reduce_factored`), not presolved again.
    ``options``: the Newton driver's settings (:class:`~ppdm.maxent.solvers.newton.NewtonOptions`).
    """
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    red = reduce_factored(problem, deadline) if reduced is None else reduced
    dual = FactoredDual(red, options)
    # the Newton systems are small and dense: one BLAS thread each is faster than a contended pool
    with threadpool_limits(limits=1, user_api="blas"):
        result = minimize_dual(dual, len(red.b), tol, max_iter, deadline=deadline, options=options)
    solution = factored_solution(
        problem, red, dual, result.state, result.lam, result.iterations, result.newton_steps, start, tol, strict=not result.timed_out,
    )
    if result.timed_out:
        solution.status = INACCURATE
        solution.face = f"stopped at the time limit ({time_limit:g} s) after {result.newton_steps} Newton steps"
    solution.possible = possible_labels(problem, red, np.ones(len(red.types), dtype=bool))
    return solution


def factored_solution(
    problem: FactoredProblem, red: FactoredReduced, dual: FactoredDual, state: FactoredState, lam: np.ndarray,
    iterations: int, newton_steps: int, start: float, tol: float, how: str = "", strict: bool = True,
) -> Solution:
    """The factored estimate at the presolved problem's multipliers ``lam`` (``state``: ``dual`` at
    them), checked against every original row (:func:`checked_violations`; ``how`` for its
    message; without ``strict``, a solve stopped at its time limit, the violations are measured
    and reported, not refused); ``seconds`` counts from ``start``."""
    types = red.pinned_types.copy()
    types += np.bincount(red.types, weights=state.P, minlength=len(types))  # a type repeated for several groups (group_cells.by_group) sums them
    if strict:
        violations, worst = checked_violations(problem, types, tol, how)
    else:
        violations = problem.violations(types)
        worst = float(violations.max(initial=0.0))
    entropy, marginal = entropy_and_marginal(problem, red, dual, state)
    return Solution(
        marginal=marginal,
        types=types,
        entropy=entropy,
        max_violation=worst,
        iterations=iterations,
        newton_steps=newton_steps,
        seconds=time.perf_counter() - start,
        n_classes=len(red.weights),
        n_rows=len(violations),
        status=row_status(worst, tol),
        dual=full_dual(len(violations), red.rows, lam),
        kkt_residual=kkt_residual_of(red.le, lam, state.residual, worst),
    )


def expand(problem: FactoredProblem) -> tuple[MaxEntProblem, np.ndarray]:
    """The same problem over explicit slots (groups × slots, padded): the reference form.

    Returns the :class:`~ppdm.maxent.rows.problem.MaxEntProblem` and the type of every slot (−1 on
    padding). A pinned group's slot of its type gets the row P(q, slot) = P(q).
    """
    cells = problem.cells()
    live = np.flatnonzero(np.isfinite(problem.base))
    live = live[np.argsort(cells.cell_of_type[live], kind="stable")]
    start = np.searchsorted(cells.cell_of_type[live], np.arange(cells.n_cells + 1))
    access = cells.access.tocoo()
    count = start[access.col + 1] - start[access.col]
    per_group = np.bincount(access.row, weights=count, minlength=problem.n_groups).astype(np.intp)
    width = max(int(per_group.max(initial=0)), 1)
    pair = np.repeat(np.arange(access.nnz), count)
    offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    group = access.row[pair]
    slot = np.arange(len(pair)) - (np.cumsum(per_group) - per_group)[group]
    slot_type = np.full((problem.n_groups, width), -1, dtype=np.intp)
    slot_type[group, slot] = live[start[access.col[pair]] + offset]
    valid = slot_type >= 0
    flat = np.flatnonzero(valid.ravel())
    pick = sp.csr_matrix((np.ones(len(flat)), (slot_type.ravel()[flat], flat)), shape=(problem.n_types, slot_type.size))
    log_base = np.where(valid, problem.base[np.maximum(slot_type, 0)], -np.inf)
    explicit = MaxEntProblem(problem.weights, width, log_base=log_base)
    for blk in problem.blocks:
        explicit.add(LinearBlock(blk.name, blk.A @ pick, blk.b, blk.sense, blk.row_names))
    if problem.pinned is not None and (problem.pinned >= 0).any():
        groups = np.flatnonzero(problem.pinned >= 0)
        slots = np.argmax(slot_type[groups] == problem.pinned[groups, None], axis=1)
        A = sp.csr_matrix((np.ones(len(groups)), (np.arange(len(groups)), groups * width + slots)), shape=(len(groups), slot_type.size))
        explicit.add(LinearBlock("pinned", A, problem.weights[groups], "eq", [f"pinned group {g}" for g in groups]))
    return explicit, slot_type
