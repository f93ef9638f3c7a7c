"""Solve a forest's maximum-entropy problem by Newton's method with conjugate gradients.

Over a forest every (group, joint leaf) type sits in the rows of every tree, so the Hessian of
the dual (:mod:`ppdm.maxent.solvers.factored_dual`) couples every tree's leaves: for 100 trees of depth
10 it would be a 10⁵ × 10⁵ matrix with ~10⁹ entries, out of reach of the Newton driver of
:mod:`ppdm.maxent.solvers.dual`, and sweeping tree by tree (iterative proportional fitting) needs
hundreds of sweeps because the trees share every record. In paper 000's setting each group
lands in one joint leaf (one *cell*), and the Hessian's product with a vector needs no matrix:

    H v = A [P ∘ (u − ū_cell)],   u = Aᵀ v,   ū_C = Σ_{t ∈ C} w(t | C) u_t,

two sparse products with the rows. Newton's method works on the cells bound propagation (and the
face) left two or more live types and the rows they reach (:mod:`ppdm.maxent.solvers.fixed_cells`):
the other rows' Hessian entries are 0. When the Hessian is sparse (by its bound, or formed once:
:class:`ForestSolveOptions`) it is formed and factorised at every step, unless conjugate gradients
preconditioned by the last factorisation solve the step's system in a few iterations; up to
``factor_nnz`` non-zeros conjugate gradients take the steps until the rows are nearly met and
the Hessian of that point, factorised once, preconditions them from there on; beyond, each
Newton system is solved by conjugate gradients preconditioned by the Hessian's diagonal (to a
relative accuracy that tightens as the gradient falls: a truncated Newton method). Each step
ends with a line search on the dual.

The dual (:class:`ForestDual`) implements the interface every driver reads
(:class:`~ppdm.maxent.solvers.newton.DualFunction`, with Hessian-vector products:
:class:`~ppdm.maxent.solvers.newton.MatrixFreeDual`), and this driver shares with the general one
(:func:`~ppdm.maxent.solvers.dual.minimize_dual`) the measure of the rows it stops on, the
damping of the Newton systems, the dense Cholesky solve and Armijo's backtracking
(:mod:`ppdm.maxent.solvers.newton`). The rest (the choice of linear solver, step doubling, the
face, guessing) is its own.

:func:`solve_forest` presolves as :func:`~ppdm.maxent.solvers.factored.solve_factored` does (forced
zeros, merged groups) and joins each group's cells into one (:mod:`~ppdm.maxent.solvers.group_cells`,
copying the few cells several groups reach); problems without rows, with inequality rows, or whose
groups share too many cells to copy (``copies``: unknown split attributes) go to
:func:`~ppdm.maxent.solvers.factored.solve_factored`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from threadpoolctl import threadpool_limits

from ppdm.errors import check_options
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.solvers.bound_propagation import forced_types
from ppdm.maxent.solvers.cell_centring import CellPairs, CentredRows, cell_pairs, centred_rows
from ppdm.maxent.solvers.dual import PACE
from ppdm.maxent.solvers.face import forced_by_lp
from ppdm.maxent.solvers.factored import factored_solution, solve_factored
from ppdm.maxent.solvers.factored_dual import FactoredDual, possible_labels
from ppdm.maxent.solvers.factored_presolve import FactoredReduced, reduce_factored
from ppdm.maxent.solvers.fixed_cells import ActivePart, active_part
from ppdm.maxent.solvers.group_cells import by_group, copies, joined_reference
from ppdm.maxent.solvers.newton import (
    MatrixFreeDual,
    S,
    backtrack,
    cholesky_solve,
    conjugate_gradients,
    damped_dense,
    diagonal_scale,
    largest_violation,
    newton_ridge,
    ridge_for,
    sufficient_decrease,
)
from ppdm.maxent.solvers.solution import INACCURATE, OPTIMAL, Solution


@dataclass(frozen=True)
class ForestSolveOptions:
    """Settings of :func:`solve_forest`. The defaults are those its benchmarks were run with
    (``benchmarks/README.md``, "Forest solver settings", says where each comes from).

    Which Newton systems are factorised (:func:`_mode`) is decided by ``exact_nnz``,
    ``precondition_nnz`` and ``factor_nnz``; a negative value turns its path off.
    """

    #: Groups reaching several cells are joined into one cell each (:mod:`~ppdm.maxent.solvers.group_cells`)
    #: when the types of the cells several of them reach, copied once per group, add at most this
    #: share of the types; otherwise the problem goes to the general driver.
    copies: float = 0.05
    #: Newton steps of a chase whose Hessian is factorised before it falls back to guessing zeros
    #: (for as many steps again).
    max_newton: int = 100
    #: The same for a chase by conjugate gradients, whose truncated steps converge slowly near the
    #: boundary.
    max_newton_cg: int = 400
    #: The Hessian is factorised at every step when the bound on its non-zeros
    #: (:meth:`ForestDual.hessian_size`) is at most this.
    exact_nnz: float = 2e7
    #: ... or when, formed once, it has at most this many non-zeros in fact (the bound is far too
    #: large with many classes).
    precondition_nnz: float = 1e6
    #: Up to this many non-zeros, conjugate gradients preconditioned by the diagonal take the steps
    #: until the rows are within ``switch`` (or for ``switch_steps`` steps), then the Hessian of that
    #: point, factorised once, preconditions them; beyond, the diagonal does throughout.
    factor_nnz: float = 6e6
    #: Largest row violation at which the preconditioning Hessian is formed.
    switch: float = 1e-7
    #: Steps after which it is formed anyway.
    switch_steps: int = 50
    #: Hessians on at most this many rows are factorised as dense arrays when at least
    #: ``dense_share`` of their entries are non-zero; the others by SuperLU.
    dense_rows: int = 4000
    #: See ``dense_rows``: 100 bootstrap trees of depth 8 over Bank Loan give Hessians on 3,057
    #: rows with 9 % of their entries non-zero, factorised in 3.6–3.9 s as dense arrays and in
    #: 0.17–0.19 s by SuperLU (with the fill-reducing ordering); a fully dense one (20 trees, 1,722
    #: rows) is faster dense.
    dense_share: float = 0.25
    #: On the factorised path, conjugate-gradient iterations a Newton step may take preconditioned
    #: by the last factorisation (an earlier step's Hessian) before the Hessian is formed and
    #: factorised again (0: factorise at every step). 100 trees of depth 10 over Adult: 25 steps,
    #: 8 of them without a factorisation, 22–30 s at load 5.5 against 28 steps and 35 s with none.
    reuse_cg: int = 30
    #: ... to this relative residual of the damped Newton system (an inexact Newton step; 10⁻⁸
    #: let few steps through, 10⁻³ took more steps).
    reuse_tol: float = 1e-4
    #: Conjugate-gradient iterations per Newton step at most.
    max_cg: int = 200
    #: Conjugate gradients stop at a direction whose curvature is below this times its diagonal
    #: part: below it the curvature is rounding noise, and a step along it can overflow.
    flat: float = 1e-13
    #: A guessing run fixes at 0 a type whose share of its cell falls below this.
    vanishing: float = 1e-10
    #: Within-cell weights below e^−underflow are 0: far below ``vanishing``, and their products
    #: stay normal floating-point numbers (subnormal ones are slow).
    underflow: float = 300.0
    #: Longest step along an exact Newton direction, in multiples of the Newton step (see
    #: :func:`_line_search`).
    max_expand: float = 1024.0
    #: Largest row violation at which a run whose dual value no longer moves stops ("inaccurate").
    stalled: float = 1e-7
    #: Steps a chase takes before it can count as stalled (see :func:`_stalled`): then, given a
    #: feasible point, it asks the face's linear programme (:mod:`ppdm.maxent.solvers.face`) for every
    #: type no distribution can fill.
    face_after: int = 30
    #: A chase has stalled when its best row violation over the last this many steps is not a tenth
    #: of its best before.
    face_window: int = 10
    #: Given a feasible point, ask the face's linear programme at the first step instead of after
    #: a stall (default ``False``: only a stalled or flat chase asks it). A check that the exact
    #: face changes nothing Newton's own chase finds.
    face_at_once: bool = False
    #: Seconds each method of the face's linear programme may take before the chase goes on
    #: without it.
    face_seconds: float = 900.0
    #: Under a time limit, the face's linear programme gets at most this share of the time left,
    #: and the chase the rest: 100 bootstrap trees of depth 10 over 30,162 Adult rows (binary
    #: secret, 180 s) spent 156 of its 167 s solve in a programme that did not finish, after 30
    #: Newton steps.
    face_share: float = 0.5
    #: Seconds the whole solve may take (``None``: no limit). The chase starts no Newton step that
    #: would end past it if it took as long as the last one (a 30,000-row forest's step may take
    #: 15 s; the face's linear programme gets ``face_share`` of what is left), and the answer is the point it
    #: reached: status ``inaccurate``, its row violation measured, and ``Solution.possible`` the
    #: labels not proved impossible so far (sound: proofs only, never a guess).
    time_limit: float | None = None
    #: No Newton step starts that would end past the time limit if it took ``pace`` times as long
    #: as the last one.
    pace: float = PACE
    #: Called after bound propagation, after each Newton step and around the face's linear
    #: programme with a :class:`ForestProgress` (``None``: silent).
    progress: Callable[[ForestProgress], None] | None = None
    #: The Newton direction on the factorised and conjugate-gradient paths, called as
    #: ``direction(dual, state, eta, exact, options, held)`` and returning the direction and the
    #: CG iterations it took (default ``None``: :func:`newton_direction`). A replacement wraps
    #: :func:`newton_direction`, e.g. to make a chase stall or its steps slow.
    direction: Callable[..., tuple[np.ndarray, int]] | None = None
    #: Threads the numerical libraries (BLAS, OpenMP) may use during the solve (``None``: as they
    #: are). One by default: on a shared 2-core machine a contended pool made an insider audit of
    #: 100 trees of depth 8 over 3,000 Adult rows take 157 s instead of 41 s.
    threads: int | None = 1

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


@dataclass(frozen=True)
class ForestProgress:
    """Where :func:`solve_forest` is: ``phase`` (``"bounds"``, ``"newton"``, ``"face"``; ``"general"``
    once when the problem goes to the general driver, whose steps go to :func:`ppdm.progress.report`),
    the Newton ``step`` of at most ``budget`` (``None`` outside the Newton loop), the largest row
    ``violation`` (NaN before the first step), the ``seconds`` spent and the ``time_limit`` (``None``: none)."""

    phase: str
    step: int
    violation: float
    seconds: float
    time_limit: float | None
    budget: int | None = None


@dataclass
class ForestState:
    """The forest's dual at λ: value, residuals A P − b, within-cell weights w per type, type masses P."""

    value: float
    residual: np.ndarray
    w: np.ndarray
    P: np.ndarray


class ForestDual:
    """D(λ) = Σ_C ρ_C log Σ_{t ∈ C} m_t e^{−(Aᵀλ)_t} + λ·b on one-cell-per-group problems.

    A :class:`~ppdm.maxent.solvers.newton.MatrixFreeDual` over equality rows (λ free): the
    general Newton driver (:func:`~ppdm.maxent.solvers.dual.minimize_dual`) can minimise it as it
    does the other duals; :func:`solve_forest` reads the same interface. ``A`` holds the rows as
    the problem states them; the value, gradient and Hessian are computed on the same rows centred
    cell by cell (:mod:`~ppdm.maxent.solvers.cell_centring`: the same function of λ on about half
    the non-zeros), formed at the first evaluation.
    """

    def __init__(self, red: FactoredReduced, underflow: float) -> None:
        self.red = red
        self.underflow = underflow
        self.A = red.A
        self.rho = np.bincount(red.access.indices, weights=red.weights, minlength=red.n_cells)
        self.cell = red.cell_of_type
        self.starts = red.cell_start[:-1]
        self.log_base = red.log_base.copy()
        self.le = red.le.copy()
        self.lower = np.where(red.le, 0.0, -np.inf)
        self.upper = np.full(len(red.b), np.inf)
        self._centred: tuple[CentredRows, CellPairs, np.ndarray] | None = None
        self._squared: sp.csr_matrix | None = None  # C ∘ C, formed at the first diagonal (the rows do not change)

    def _rows(self) -> tuple[CentredRows, CellPairs, np.ndarray]:
        """The centred rows, their (row, cell) pairs and right-hand side b − Mρ, formed once."""
        if self._centred is None:
            centred = centred_rows(self.A, self.red.cell_start, self.rho)
            self._centred = centred, cell_pairs(centred.A, self.cell, self.red.n_cells), self.red.b - centred.shift
        return self._centred

    def state(self, lam: np.ndarray) -> ForestState:
        rows, _, b = self._rows()
        s = self.log_base - rows.AT @ lam
        top = np.maximum.reduceat(s, self.starts)
        gap = s - top[self.cell]
        e = np.exp(np.maximum(gap, -self.underflow))
        e[gap < -self.underflow] = 0.0  # no subnormal numbers: each costs as much as ~100 normal ones
        z = np.add.reduceat(e, self.starts)
        w = e / z[self.cell]
        P = self.rho[self.cell] * w
        value = float(self.rho @ (top + np.log(z)) + lam @ b)
        return ForestState(value, rows.AT.T @ P - b, w, P)  # Aᵀ's transpose: the product reads P in order

    def fun_and_grad(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        s = self.state(lam)
        return s.value, -s.residual

    def project(self, lam: np.ndarray) -> np.ndarray:
        return np.clip(lam, self.lower, self.upper)

    def hess_vec(self, state: ForestState, v: np.ndarray) -> np.ndarray:
        AT = self._rows()[0].AT
        u = AT @ v
        mean = np.add.reduceat(state.w * u, self.starts)
        return AT.T @ (state.P * (u - mean[self.cell]))

    def hessian(self, state: ForestState, rows: np.ndarray | None = None) -> sp.csr_matrix:
        """∇²D as a sparse matrix, on ``rows`` (every row by default): C diag(P) Cᵀ − Y diag(ρ) Yᵀ,
        C the centred rows, Y = C diag(w) E (types → cells)."""
        centred, pairs, _ = self._rows()
        C, CT = centred.A, centred.AT
        Y = pairs.Y(C, state.w)
        if rows is not None and len(rows) < C.shape[0]:
            C, Y = C[rows], Y[rows]
            CT = sp.csr_matrix(C.T)
        first = sp.csr_matrix((C.data * state.P[C.indices], C.indices, C.indptr), shape=C.shape) @ CT
        Yr = sp.csr_matrix((Y.data * np.sqrt(self.rho)[Y.indices], Y.indices, Y.indptr), shape=Y.shape)
        return sp.csr_matrix(first - Yr @ Yr.T)

    def hessian_size(self) -> float:
        """An upper bound on the Hessian's non-zeros: Σ over cells of (entries of its types)²."""
        per_type = np.diff(self._rows()[0].AT.indptr).astype(float)
        return float((np.add.reduceat(per_type, self.starts) ** 2).sum())

    def hess_diag(self, state: ForestState) -> np.ndarray:
        """∇²D's diagonal: (C ∘ C) P − (Y ∘ Y) ρ, with C ∘ C formed once per dual."""
        centred, pairs, _ = self._rows()
        if self._squared is None:
            self._squared = centred.A.multiply(centred.A).tocsr()
        Y = pairs.Y(centred.A, state.w)
        return self._squared @ state.P - sp.csr_matrix((Y.data**2, Y.indices, Y.indptr), shape=Y.shape) @ self.rho


def solve_forest(
    problem: FactoredProblem, tol: float = 1e-9, feasible: np.ndarray | None = None, options: ForestSolveOptions | None = None,
) -> Solution:
    """Maximise the entropy subject to the problem's rows; ``tol`` bounds every row's violation.

    Many records sit in leaves that, together over the trees, leave them a single class: the
    optimum is then on the boundary, and the multipliers run off to infinity as Newton chases the
    types that carry no mass. Bound propagation (:mod:`ppdm.maxent.solvers.bound_propagation`) first fixes
    at 0 the types it proves can carry none. Exact Newton steps then chase the rest with steps
    doubled while the dual falls (:func:`_line_search`), so their weights reach 0 in a few steps.

    ``feasible``, one distribution over the problem's types that meets every row (the training
    data's, :meth:`~ppdm.maxent.table.forest_types.ForestTypes.truth`), lets a chase that stalls
    (``face_after``) find every type no distribution can fill by a linear programme
    (:mod:`ppdm.maxent.solvers.face`) and fix those at 0: the optimum is then inside, and Newton's method
    converges as on an interior problem (50 trees of depth 10 over Adult: 2,627 types beyond bound
    propagation's 11,877, asked for after 30 steps; 8 more steps). Without one (or when the
    programme does not finish in ``face_seconds``), the conjugate-gradient path fixes at 0 a
    type whose share of its cell has fallen below ``vanishing`` at two points in a row, after
    a step that brought the rows closer, and so does a chase that has not met the rows after
    ``max_newton`` steps (``max_newton_cg`` by conjugate gradients), for as many again. That
    guess can be wrong (with 16 classes it fixed types that carry mass, and posteriors moved by up
    to 0.38; on that Adult forest two guessing runs that met every row differed by 0.43 in a
    posterior), so a solution it touched is reported ``inaccurate`` even when every row is met. ``face`` on the solution says how the forced types
    were found. The answer is checked against every original row as always. ``options``: the
    solver's settings (:class:`ForestSolveOptions`; ``None``: the defaults).
    """
    options = ForestSolveOptions() if options is None else options
    if options.threads is not None:
        with threadpool_limits(limits=options.threads):
            return solve_forest(problem, tol, feasible, replace(options, threads=None))
    start = time.perf_counter()

    def report(phase: str, step: int, violation: float, budget: int | None = None) -> None:
        if options.progress is not None:
            options.progress(ForestProgress(phase, step, violation, time.perf_counter() - start, options.time_limit, budget))

    deadline = None if options.time_limit is None else start + options.time_limit
    A, _, le, _ = problem.stacked()
    presolved = None if not A.shape[0] or le.any() else reduce_factored(problem, deadline)  # no rows, or inequality rows: the general driver
    red, on_types = presolved, None if presolved is None or feasible is None else feasible[presolved.types] - presolved.pinned_types[presolved.types]
    if red is not None and (np.diff(red.access.indptr) != 1).any() and copies(red) <= options.copies * len(red.types):
        red, on_types = by_group(red), None if on_types is None else joined_reference(red, on_types)  # the same problem, each group's cells one cell
    if red is None or (np.diff(red.access.indptr) != 1).any() or red.le.any():
        report("general", 0, float("nan"))
        left = None if options.time_limit is None else max(0.0, options.time_limit - (time.perf_counter() - start))
        return solve_factored(problem, tol=tol, time_limit=left, reduced=presolved)  # presolved once

    full = ForestDual(red, options.underflow)
    report("bounds", 0, float("nan"))
    full.log_base[forced_types(sp.csr_matrix(red.A), red.b, red.cell_start, full.rho, np.isfinite(full.log_base))] = -np.inf
    face = f"bound propagation: {int(np.isinf(full.log_base).sum() - np.isinf(red.log_base).sum())} types"
    reference = None if on_types is None else _reference(full, on_types)
    part = active_part(red, full.log_base)
    dual = ForestDual(part.red, options.underflow)
    lam = np.zeros(len(part.red.b))
    state = dual.state(lam)
    mode = _mode(dual, state, options)
    exact = mode != "cg"
    max_newton = options.max_newton_cg if mode == "cg" else options.max_newton
    steps = cg_total = 0
    history = [state.value]
    gnorms: list[float] = []
    low = np.zeros(len(state.w), dtype=bool)
    precondition = None
    held = _Held()
    guess = not exact and reference is None  # without a feasible point the CG path guesses from the start
    guessed = np.zeros(len(full.log_base), dtype=bool)
    stopped = False
    step_began = time.perf_counter()  # when the last Newton step began: none starts that would end past the deadline
    for steps in range(1, 2 * max_newton + 1):
        if steps == max_newton + 1:
            if guess:
                break
            guess = True  # the chase did not finish: fall back to guessing zeros
        gnorm = largest_violation(dual, lam, state.residual)
        report("newton", steps - 1, gnorm, 2 * max_newton)
        if gnorm <= tol:
            break
        now = time.perf_counter()
        step_seconds, step_began = (now - step_began if steps > 1 else 0.0), now
        if deadline is not None and now + options.pace * step_seconds >= deadline:  # a step like the last would end past it
            stopped = True
            break
        flat = gnorm <= options.stalled and len(history) > 10 and history[-11] - state.value <= 1e-9 * abs(state.value)
        gnorms.append(gnorm)
        if reference is not None and not guess and (flat or options.face_at_once or _stalled(gnorms, options)):
            report("face", steps - 1, gnorm, 2 * max_newton)
            # the programme leaves the chase its share, and the time of a step like the last for checking the final point
            seconds = options.face_seconds if deadline is None else min(options.face_seconds, options.face_share * (deadline - time.perf_counter() - options.pace * step_seconds))
            lp_began = time.perf_counter()
            forced = forced_by_lp(dual.A, dual.cell, np.isfinite(dual.log_base), reference[part.types], seconds) if seconds > 0 else None
            step_began += time.perf_counter() - lp_began  # the programme's time is not a Newton step's
            reference = None  # once
            face += "; linear programme: " + ("did not finish" if forced is None else f"{int(forced.sum())} more")
            guess = forced is None and not exact  # the CG path then guesses, as without the data
            if forced is not None and forced.any():
                dual.log_base[forced] = -np.inf
                full.log_base[part.types] = dual.log_base
                whole = _scattered(part, lam, len(red.b))
                part = active_part(red, full.log_base)
                dual = ForestDual(part.red, options.underflow)
                lam = whole[part.rows]
                state = dual.state(lam)
                low = np.zeros(len(state.w), dtype=bool)
                history, gnorms, precondition, held = [state.value], [], None, _Held()
                continue
        if flat:
            break
        eta = min(0.5, np.sqrt(gnorm))
        if mode == "precondition" and precondition is None and (gnorm <= options.switch or steps > options.switch_steps):
            precondition = _preconditioner(dual, state)
        if mode == "precondition":
            d, n_cg = _pcg(dual, state, min(eta, 1e-2) if precondition else eta, options, precondition)
        else:
            d, n_cg = (options.direction or newton_direction)(dual, state, eta, exact, options, held)
        cg_total += n_cg
        lam, state = _line_search(dual, lam, state, d, options.max_expand if exact else None)
        if guess:  # exact steps drive vanishing types to 0 themselves (see _line_search)
            closer = largest_violation(dual, lam, state.residual) <= gnorm
            low, vanishing = _vanishing(dual, state.w, low, closer, options.vanishing)
            if vanishing.any():
                guessed[part.types[vanishing]] = True
                dual.log_base[vanishing] = -np.inf
                state = dual.state(lam)
        history.append(state.value)
    full.log_base[part.types] = dual.log_base
    red.log_base = full.log_base  # the types fixed at 0 stay there
    lam = _scattered(part, lam, len(red.b))
    exact_dual = FactoredDual(red)  # the estimate at lam, checked against the original rows as the factored solver does
    how = f" in {steps} Newton steps"
    solution = factored_solution(problem, red, exact_dual, exact_dual.state(lam), lam, cg_total, steps, start, tol, how, strict=not stopped)
    if (guessed.any() or stopped) and solution.status == OPTIMAL:
        solution.status = INACCURATE  # the rows are met, but zeros were guessed: maybe not the maximum
    solution.face = face + (f"; guessed: {int(guessed.sum())} more" if guessed.any() else "")
    if stopped:
        solution.face += f"; stopped at the time limit ({options.time_limit:g} s) after {steps - 1} Newton steps"
    solution.possible = possible_labels(problem, red, np.isfinite(full.log_base) | guessed)
    return solution


def _reference(dual: ForestDual, reference: np.ndarray) -> np.ndarray:
    """``reference`` (a feasible point on the presolved problem's types), checked against its rows and cell totals."""
    red = dual.red
    rows = np.abs(red.A @ reference - red.b)
    cells = np.abs(np.add.reduceat(reference, dual.starts) - dual.rho)
    if rows.max(initial=0.0) > 1e-9 or cells.max(initial=0.0) > 1e-9:
        worst = f"row {int(rows.argmax())}" if rows.max(initial=0.0) >= cells.max(initial=0.0) else f"cell {int(cells.argmax())}"
        raise ValueError(f"the feasible point does not meet the problem ({worst} off by {max(rows.max(initial=0.0), cells.max(initial=0.0)):.1e})")
    return reference


def _scattered(part: ActivePart, lam: np.ndarray, n_rows: int) -> np.ndarray:
    """The active part's multipliers ``lam`` on the whole problem's rows (0 on the others: they
    change no type's weight, see :mod:`ppdm.maxent.solvers.fixed_cells`)."""
    whole = np.zeros(n_rows)
    whole[part.rows] = lam
    return whole


def _stalled(gnorms: list[float], options: ForestSolveOptions) -> bool:
    """Whether a chase has stalled: ``face_after`` steps taken, and the best violation of the
    rows over the last ``face_window`` not a tenth of the best before (a single spike ten
    steps back hid a stall from a rule that compared the two ends of the window)."""
    after, window = options.face_after, options.face_window
    if len(gnorms) < after or len(gnorms) <= window:
        return False
    return min(gnorms[-window:]) > min(gnorms[:-window]) / 10


def _vanishing(dual: ForestDual, w: np.ndarray, was_low: np.ndarray, closer: bool, vanishing: float) -> tuple[np.ndarray, np.ndarray]:
    """The types whose share of their cell is below ``vanishing`` now, and those to fix at 0:
    below it at two points in a row, after a step that brought the rows ``closer`` (a poor
    truncated-CG step can swing many types to near 0 at once; fixing them then made the problem
    infeasible)."""
    low = (w < vanishing) & np.isfinite(dual.log_base)
    return low, (low & was_low) if closer else np.zeros_like(low)


def _mode(dual: ForestDual, state: ForestState, options: ForestSolveOptions) -> str:
    """How Newton systems are solved.

    ``"factorise"``: the Hessian is factorised at every step, when it is small: by its bound
    :meth:`ForestDual.hessian_size` (``exact_nnz``), or formed once (``precondition_nnz``; the
    bound counts every pair of rows a cell's types share, and is 55× too large with 16 classes:
    Adult with ``education`` as the class). ``"precondition"``: up to ``factor_nnz``
    non-zeros, conjugate gradients with the Hessian's diagonal until the rows are within
    ``switch``, then with the Hessian of that point factorised once. ``"cg"``: conjugate
    gradients with the diagonal throughout.
    """
    if dual.hessian_size() <= options.exact_nnz:
        return "factorise"
    nnz = dual.hessian(state).nnz
    return "factorise" if nnz <= options.precondition_nnz else "precondition" if nnz <= options.factor_nnz else "cg"


@dataclass
class _Held:
    """The last factorisation of the damped Hessian on the factorised path (its solve)."""

    solve: Callable[[np.ndarray], np.ndarray] | None = None


def newton_direction(
    dual: ForestDual, state: ForestState, eta: float, exact: bool, options: ForestSolveOptions, held: _Held | None = None,
) -> tuple[np.ndarray, int]:
    """The Newton direction at ``state``: a factorisation of the damped Hessian
    (:func:`~ppdm.maxent.solvers.newton.newton_ridge`) when it is ``exact`` (small enough:
    :func:`_mode`; dense up to ``dense_rows`` rows when ``dense_share`` of it is filled), conjugate
    gradients otherwise; and the CG iterations it took. With ``held``, the same damped system is
    first solved by conjugate gradients preconditioned by the last factorisation
    (:func:`_refined`), and the Hessian formed and factorised again only when they do not reach
    ``reuse_tol`` in ``reuse_cg`` iterations."""
    if not exact:
        return _pcg(dual, state, eta, options)
    g = state.residual
    if held is not None and held.solve is not None and options.reuse_cg > 0:
        ridge = ridge_for(max(float(np.abs(dual.hess_diag(state)).max(initial=0.0)), 1e-300), g)
        refined = _refined(dual, state, ridge, held.solve, options)
        if refined is not None:
            return refined
    H = dual.hessian(state)
    ridge = newton_ridge(H, g)
    if len(g) <= options.dense_rows and H.nnz >= options.dense_share * len(g) ** 2:
        try:
            return cholesky_solve(damped_dense(H, ridge), g), 0
        except np.linalg.LinAlgError:
            return _pcg(dual, state, eta, options)
    lu = _factorised(H, ridge)
    step = lu.solve(g)
    if not np.all(np.isfinite(step)):  # pragma: no cover - the damped system is positive definite
        return _pcg(dual, state, eta, options)
    if held is not None:
        held.solve = lu.solve
    return step, 0


def _refined(
    dual: ForestDual, state: ForestState, ridge: float, solve: Callable[[np.ndarray], np.ndarray], options: ForestSolveOptions,
) -> tuple[np.ndarray, int] | None:
    """(H + ridge·I) d = g by conjugate gradients preconditioned by ``solve`` (an earlier step's
    factorisation) to relative residual ``reuse_tol``, or ``None`` when ``reuse_cg`` iterations do
    not reach it. Between steps the Hessian changes most in the cells whose weights move most, so
    the preconditioned system differs from the identity in a few directions."""
    d, iterations, reached = conjugate_gradients(
        lambda v: dual.hess_vec(state, v), state.residual, np.zeros(len(state.residual)), ridge, options.reuse_tol, options.reuse_cg, 0.0, solve,
    )
    return (d, iterations) if reached else None


def _factorised(H: sp.csr_matrix, ridge: float) -> spla.SuperLU:
    """H + ridge·I factorised. The damped Hessian is positive definite, so no pivoting is needed:
    SuperLU's symmetric mode (diagonal pivots after one symmetric fill-reducing ordering)
    factorises it as Cholesky would, with a quarter of the fill and 12× faster than with partial
    pivoting on rf10."""
    damped = (H + ridge * sp.identity(H.shape[0], format="csr")).tocsc()
    return spla.splu(damped, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})


def _preconditioner(dual: ForestDual, state: ForestState) -> Callable[[np.ndarray], np.ndarray]:
    """The Hessian at ``state``, factorised once, as a preconditioner for the Newton systems that
    follow (see :attr:`ForestSolveOptions.switch`)."""
    H = dual.hessian(state)
    return _factorised(H, diagonal_scale(H) * 1e-10).solve


def _pcg(
    dual: MatrixFreeDual[S], state: S, eta: float, options: ForestSolveOptions,
    precondition: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, int]:
    """Solve H d = g (g = A P − b, the residuals at ``state``) to relative residual ``eta`` by
    :func:`~ppdm.maxent.solvers.newton.conjugate_gradients` on Hessian-vector products (at most
    ``max_cg`` iterations, stopping at a direction flatter than ``flat``), preconditioned by
    ``precondition`` or else by the Hessian's diagonal."""
    diag = np.maximum(dual.hess_diag(state), 1e-300)
    d, iterations, _ = conjugate_gradients(
        lambda v: dual.hess_vec(state, v), state.residual, diag, float(diag.max()) * 1e-12, eta, options.max_cg, options.flat, precondition,
    )
    return d, iterations


def _line_search(
    dual: ForestDual, lam: np.ndarray, state: ForestState, d: np.ndarray, max_expand: float | None = None,
) -> tuple[np.ndarray, ForestState]:
    """Backtracking (Armijo, :func:`~ppdm.maxent.solvers.newton.backtrack`) along d from step 1,
    halving at most 60 times; ∇D = −g (g the residuals at ``state``), so the slope is −g·d. Returns
    the point and its state (``lam`` and ``state`` when no step is accepted).

    With ``max_expand``, a full step that is accepted is doubled while the dual keeps falling (up
    to ``max_expand`` times the step): near the boundary the Newton step of a dying type's
    multipliers is about one unit of log-weight (its weight falls by a factor e per step, as Newton's
    method on e^{−x} moves x by 1), and longer steps along the same direction take its weight to 0
    in a few steps instead of ~20 (rf10: 23 Newton steps → 17). Only for exact Newton directions:
    a truncated conjugate-gradient direction has flat components that doubling sends far away.
    """
    slope = -float(state.residual @ d)
    found = backtrack(dual, state, slope, lambda t: lam + t * d, halvings=60)
    if found is None:
        return lam, state
    trial, new, t = found
    if max_expand is not None and t == 1.0:
        return _expanded(dual, lam, state, slope, d, (trial, new), max_expand)
    return trial, new


def _expanded(
    dual: ForestDual, lam: np.ndarray, state: ForestState, slope: float, d: np.ndarray, best: tuple[np.ndarray, ForestState], max_expand: float,
) -> tuple[np.ndarray, ForestState]:
    """The accepted full step ``best``, doubled while the dual falls strictly and by Armijo's rule
    without slack (up to ``max_expand`` times)."""
    t = 1.0
    while t < max_expand:
        t *= 2.0
        trial = lam + t * d
        new = dual.state(trial)
        if not (new.value < best[1].value and sufficient_decrease(new.value, state.value, t, slope, slack=0.0)):
            break
        best = (trial, new)
    return best
