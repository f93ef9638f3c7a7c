"""Solve a forest's maximum-entropy problem by Newton's method with conjugate gradients.

Over a forest every (group, joint leaf) type sits in the rows of every tree, so the Hessian of
the dual (:mod:`ppdm.maxent.factored_dual`) couples every tree's leaves: for 100 trees of depth
10 it would be a 10⁵ × 10⁵ matrix with ~10⁹ entries, out of reach of the Newton driver of
:mod:`ppdm.maxent.dual`, and sweeping tree by tree (iterative proportional fitting) needs
hundreds of sweeps because the trees share every record. In paper 000's setting each group
lands in one joint leaf (one *cell*), and the Hessian's product with a vector needs no matrix:

    H v = A [P ∘ (u − ū_cell)],   u = Aᵀ v,   ū_C = Σ_{t ∈ C} w(t | C) u_t,

two sparse products with the rows. When the Hessian is sparse (by its bound :data:`EXACT_NNZ`,
or formed once, :data:`PRECONDITION_NNZ`) it is formed and factorised at every step; up to
:data:`FACTOR_NNZ` non-zeros conjugate gradients take the steps until the rows are nearly met and
the Hessian of that point, factorised once, preconditions them from there on; beyond, each
Newton system is solved by conjugate gradients preconditioned by the Hessian's diagonal (to a
relative accuracy that tightens as the gradient falls: a truncated Newton method). Each step
ends with a line search on the dual.

:func:`solve_forest` presolves as :func:`~ppdm.maxent.factored.solve_factored` does (forced
zeros, merged groups); small problems, problems with inequality rows and problems where a group
reaches several joint leaves (unknown split attributes) go to
:func:`~ppdm.maxent.factored.solve_factored`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ppdm.maxent.bound_propagation import forced_types
from ppdm.maxent.face import forced_by_lp
from ppdm.maxent.factored import FactoredSolution, checked_violations, solve_factored
from ppdm.maxent.factored_dual import FactoredDual, entropy_and_marginal
from ppdm.maxent.factored_presolve import FactoredReduced, reduce_factored
from ppdm.maxent.factored_problem import FactoredProblem
from ppdm.maxent.solve import kkt_residual_of

#: Newton steps before giving up: with factorised Hessians, and with conjugate gradients (truncated
#: steps converge slowly near the boundary: 50 trees of depth 10 on Adult still missed a row by
#: 1.7e-6 after 100).
MAX_NEWTON = 100
MAX_NEWTON_CG = 400

#: Hessians with at most this many non-zeros (bound) are factorised; larger ones go to CG.
EXACT_NNZ = 2e7

#: Hessians with more non-zeros than EXACT_NNZ allows by its bound but at most this many in fact
#: are factorised too (rf10: 1.2·10⁵ non-zeros, 0.2 s per factorisation; 100 trees of depth 10:
#: 4.2·10⁶, 10–20 s per factorisation against 2–6 s per CG solve, but CG steps stall near the
#: boundary: 50 such trees on Adult still missed a row by 1.4·10⁻⁶ after 400 of them).
FACTOR_NNZ = 6e6

#: Hessians with more non-zeros than this (formed once) are factorised once, not at every step:
#: conjugate gradients with the diagonal take the Newton steps until the rows are within
#: :data:`SWITCH` (or for :data:`SWITCH_STEPS` steps), and the Hessian of that point, factorised,
#: preconditions them from there on. 100 trees of depth 10 on Adult (4.2·10⁶ non-zeros, 12 s a
#: factorisation): 48 s instead of 29 factorised steps (387 s); rf10 (1.2·10⁵, 0.2 s) stays below.
PRECONDITION_NNZ = 1e6
SWITCH = 1e-7
SWITCH_STEPS = 50

#: Hessians on at most this many rows are factorised as dense arrays.
DENSE_ROWS = 4000

#: Conjugate-gradient iterations per Newton step at most.
MAX_CG = 200

#: Conjugate gradients stop at a direction whose curvature is below FLAT times its diagonal part:
#: rounding noise there once sent a step to infinity (Adult, 100 trees of depth 5).
FLAT = 1e-13

#: A guessing run fixes at 0 a type whose share of its cell falls below this (see :func:`solve_forest`).
VANISHING = 1e-10

#: Within-cell weights below e^−UNDERFLOW are 0: far below :data:`VANISHING`, and their products
#: in the dual and the Hessian stay normal floating-point numbers (subnormal ones made the dual's
#: evaluation twice as slow on rf10).
UNDERFLOW = 300.0

#: Longest step along an exact Newton direction, in multiples of the Newton step (see :func:`_line_search`).
MAX_EXPAND = 1024.0

#: Largest row violation at which a Newton run whose dual value no longer moves stops ("inaccurate").
STALLED = 1e-7

#: A chase that has taken this many steps without its best violation of the rows falling tenfold
#: over the last :data:`FACE_WINDOW` asks the linear programme of :mod:`ppdm.maxent.face` for every
#: type no distribution can fill (when it has a feasible point). The exact runs of the experiments
#: took 12–40 steps and their best fell at least tenfold per ten steps from the 20th; 50 trees of
#: depth 10 over Adult stalled near 2e-5 from the 14th.
FACE_AFTER = 30
FACE_WINDOW = 10

#: Seconds each method of the face's linear programme may take before the chase goes on without it.
FACE_SECONDS = 900.0

#: Rows at most for which the whole problem goes to the Newton driver of the factored form.
NEWTON_ROWS = 0


class _Dual:
    """D(λ) = Σ_C ρ_C log Σ_{t ∈ C} m_t e^{−(Aᵀλ)_t} + λ·b on one-cell-per-group problems."""

    def __init__(self, red: FactoredReduced) -> None:
        self.red = red
        self.A = red.A
        self.AT = sp.csr_matrix(red.A.T)
        self.rho = np.bincount(red.access.indices, weights=red.weights, minlength=red.n_cells)
        self.cell = red.cell_of_type
        self.starts = red.cell_start[:-1]
        self.log_base = red.log_base.copy()
        self.one_hot = sp.csr_matrix((np.ones(len(self.cell)), (np.arange(len(self.cell)), self.cell)), shape=(len(self.cell), red.n_cells))

    def state(self, lam: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """Value, within-cell weights w, type masses P and the residual A P − b."""
        s = self.log_base - self.AT @ lam
        top = np.maximum.reduceat(s, self.starts)
        gap = s - top[self.cell]
        e = np.exp(np.maximum(gap, -UNDERFLOW))
        e[gap < -UNDERFLOW] = 0.0  # no subnormal numbers: each costs as much as ~100 normal ones
        z = np.add.reduceat(e, self.starts)
        w = e / z[self.cell]
        P = self.rho[self.cell] * w
        value = float(self.rho @ (top + np.log(z)) + lam @ self.red.b)
        return value, w, P, self.A @ P - self.red.b

    def hess_vec(self, w: np.ndarray, P: np.ndarray, v: np.ndarray) -> np.ndarray:
        u = self.AT @ v
        mean = np.add.reduceat(w * u, self.starts)
        return self.A @ (P * (u - mean[self.cell]))

    def hessian(self, w: np.ndarray, P: np.ndarray) -> sp.csr_matrix:
        """∇²D as a sparse matrix: A diag(P) Aᵀ − Y diag(ρ) Yᵀ, Y = A diag(w) (types → cells)."""
        A = self.A
        first = sp.csr_matrix((A.data * P[A.indices], A.indices, A.indptr), shape=A.shape) @ self.AT
        Y = sp.csr_matrix((A.data * w[A.indices], A.indices, A.indptr), shape=A.shape) @ self.one_hot
        Yr = sp.csr_matrix((Y.data * np.sqrt(self.rho)[Y.indices], Y.indices, Y.indptr), shape=Y.shape)
        return sp.csr_matrix(first - Yr @ Yr.T)

    def hessian_size(self) -> float:
        """An upper bound on the Hessian's non-zeros: Σ over cells of (entries of its types)²."""
        per_type = np.diff(self.AT.indptr).astype(float)
        return float((np.add.reduceat(per_type, self.starts) ** 2).sum())

    def hess_diag(self, w: np.ndarray, P: np.ndarray) -> np.ndarray:
        A = self.A
        first = A.multiply(A) @ P
        Y = sp.csr_matrix((A.data * w[A.indices], A.indices, A.indptr), shape=A.shape) @ self.one_hot
        return first - Y.multiply(Y) @ self.rho


def solve_forest(problem: FactoredProblem, tol: float = 1e-9, max_newton: int | None = None, feasible: np.ndarray | None = None) -> FactoredSolution:
    """Maximise the entropy subject to the problem's rows; ``tol`` bounds every row's violation.

    Many records sit in leaves that, together over the trees, leave them a single class: the
    optimum is then on the boundary, and the multipliers run off to infinity as Newton chases the
    types that carry no mass. Bound propagation (:mod:`ppdm.maxent.bound_propagation`) first fixes
    at 0 the types it proves can carry none. Exact Newton steps then chase the rest with steps
    doubled while the dual falls (:func:`_line_search`), so their weights reach 0 in a few steps.

    ``feasible``, one distribution over the problem's types that meets every row (the training
    data's, :meth:`~ppdm.maxent.forest_types.ForestTypes.truth`), lets a chase that stalls
    (:data:`FACE_AFTER`) find every type no distribution can fill by a linear programme
    (:mod:`ppdm.maxent.face`) and fix those at 0: the optimum is then inside, and Newton's method
    converges as on an interior problem (50 trees of depth 10 over Adult: 2,627 types beyond bound
    propagation's 11,877, asked for after 30 steps; 8 more steps). Without one (or when the
    programme does not finish in :data:`FACE_SECONDS`), the conjugate-gradient path fixes at 0 a
    type whose share of its cell has fallen below :data:`VANISHING` at two points in a row, after
    a step that brought the rows closer, and so does a chase that has not met the rows after
    ``max_newton`` steps, for as many again. That guess can be wrong (with 16 classes it fixed
    types that carry mass, and posteriors moved by up to 0.38; on that Adult forest two guessing
    runs that met every row differed by 0.43 in a posterior), so a solution it touched is reported
    ``inaccurate`` even when every row is met. ``face`` on the solution says how the forced types
    were found. The answer is checked against every original row as always.
    """
    start = time.perf_counter()
    A, _, le, _ = problem.stacked()
    if A.shape[0] <= NEWTON_ROWS or le.any():
        return solve_factored(problem, tol=tol)
    red = reduce_factored(problem)
    if (np.diff(red.access.indptr) != 1).any() or red.le.any():
        return solve_factored(problem, tol=tol)
    dual = _Dual(red)
    dual.log_base[forced_types(sp.csr_matrix(red.A), red.b, red.cell_start, dual.rho, np.isfinite(dual.log_base))] = -np.inf
    lam = np.zeros(len(red.b))
    value, w, P, g = dual.state(lam)
    mode = _mode(dual, w, P)
    exact = mode != "cg"
    if max_newton is None:
        max_newton = MAX_NEWTON_CG if mode == "cg" else MAX_NEWTON
    steps = cg_total = 0
    history = [value]
    gnorms: list[float] = []
    low = np.zeros(len(w), dtype=bool)
    precondition = None
    reference = None if feasible is None else _reference(dual, feasible)
    guess = not exact and reference is None  # without a feasible point the CG path guesses from the start
    guessed = 0
    face = f"bound propagation: {int(np.isinf(dual.log_base).sum() - np.isinf(red.log_base).sum())} types"
    for steps in range(1, 2 * max_newton + 1):
        if steps == max_newton + 1:
            if guess:
                break
            guess = True  # the chase did not finish: fall back to guessing zeros
        gnorm = float(np.abs(g).max(initial=0.0))
        if gnorm <= tol:
            break
        flat = gnorm <= STALLED and len(history) > 10 and history[-11] - value <= 1e-9 * abs(value)
        gnorms.append(gnorm)
        if reference is not None and not guess and (flat or _stalled(gnorms)):
            forced = forced_by_lp(red.A, red.cell_of_type, np.isfinite(dual.log_base), reference, FACE_SECONDS)
            reference = None  # once
            face += "; linear programme: " + ("did not finish" if forced is None else f"{int(forced.sum())} more")
            guess = forced is None and not exact  # the CG path then guesses, as without the data
            if forced is not None and forced.any():
                dual.log_base[forced] = -np.inf
                value, w, P, g = dual.state(lam)
                history, gnorms, precondition = [value], [], None
                continue
        if flat:
            break
        eta = min(0.5, np.sqrt(gnorm))
        if mode == "precondition" and precondition is None and (gnorm <= SWITCH or steps > SWITCH_STEPS):
            precondition = _preconditioner(dual, w, P)
        if mode == "precondition":
            d, n_cg = _pcg(dual, w, P, g, min(eta, 1e-2) if precondition else eta, precondition)
        else:
            d, n_cg = _direction(dual, w, P, g, eta, exact)
        cg_total += n_cg
        lam, value, w, P, g = _line_search(dual, lam, value, g, d, expand=exact)
        if guess:  # exact steps drive vanishing types to 0 themselves (see _line_search)
            low, vanishing = _vanishing(dual, w, low, float(np.abs(g).max(initial=0.0)) <= gnorm)
            if vanishing.any():
                guessed += int(vanishing.sum())
                dual.log_base[vanishing] = -np.inf
                value, w, P, g = dual.state(lam)
        history.append(value)
    red.log_base = dual.log_base  # the types fixed at 0 stay there
    solution = _solution(problem, red, lam, steps, cg_total, time.perf_counter() - start, tol)
    if guessed and solution.status == "optimal":
        solution.status = "inaccurate"  # the rows are met, but zeros were guessed: maybe not the maximum
    solution.face = face + (f"; guessed: {guessed} more" if guessed else "")
    return solution


def _reference(dual: _Dual, feasible: np.ndarray) -> np.ndarray:
    """``feasible`` on the presolved problem's types, checked against its rows and cell totals."""
    red = dual.red
    reference = feasible[red.types] - red.pinned_types[red.types]
    rows = np.abs(red.A @ reference - red.b)
    cells = np.abs(np.add.reduceat(reference, dual.starts) - dual.rho)
    if rows.max(initial=0.0) > 1e-9 or cells.max(initial=0.0) > 1e-9:
        worst = f"row {int(rows.argmax())}" if rows.max(initial=0.0) >= cells.max(initial=0.0) else f"cell {int(cells.argmax())}"
        raise ValueError(f"the feasible point does not meet the problem ({worst} off by {max(rows.max(initial=0.0), cells.max(initial=0.0)):.1e})")
    return reference


def _stalled(gnorms: list[float]) -> bool:
    """Whether a chase has stalled: :data:`FACE_AFTER` steps taken, and the best violation of the
    rows over the last :data:`FACE_WINDOW` not a tenth of the best before (a single spike ten
    steps back hid a stall from a rule that compared the two ends of the window)."""
    if len(gnorms) < FACE_AFTER or len(gnorms) <= FACE_WINDOW:
        return False
    return min(gnorms[-FACE_WINDOW:]) > min(gnorms[:-FACE_WINDOW]) / 10


def _vanishing(dual: _Dual, w: np.ndarray, was_low: np.ndarray, closer: bool) -> tuple[np.ndarray, np.ndarray]:
    """The types below :data:`VANISHING` now, and those to fix at 0: below it at two points in a
    row, after a step that brought the rows ``closer`` (a poor truncated-CG step can swing many
    types to near 0 at once; fixing them then made the problem infeasible)."""
    low = (w < VANISHING) & np.isfinite(dual.log_base)
    return low, (low & was_low) if closer else np.zeros_like(low)


def _mode(dual: _Dual, w: np.ndarray, P: np.ndarray) -> str:
    """How Newton systems are solved.

    ``"factorise"``: the Hessian is factorised at every step, when it is small: by its bound
    :meth:`_Dual.hessian_size` (:data:`EXACT_NNZ`), or formed once (:data:`PRECONDITION_NNZ`; the
    bound counts every pair of rows a cell's types share, and is 55× too large with 16 classes:
    Adult with ``education`` as the class). ``"precondition"``: up to :data:`FACTOR_NNZ`
    non-zeros, conjugate gradients with the Hessian's diagonal until the rows are within
    :data:`SWITCH`, then with the Hessian of that point factorised once. ``"cg"``: conjugate
    gradients with the diagonal throughout.
    """
    if dual.hessian_size() <= EXACT_NNZ:
        return "factorise"
    nnz = dual.hessian(w, P).nnz
    return "factorise" if nnz <= PRECONDITION_NNZ else "precondition" if nnz <= FACTOR_NNZ else "cg"


def _direction(dual: _Dual, w: np.ndarray, P: np.ndarray, g: np.ndarray, eta: float, exact: bool) -> tuple[np.ndarray, int]:
    """The Newton direction: a sparse factorisation of the Hessian when it is small enough
    (:data:`EXACT_NNZ`), conjugate gradients otherwise; and the CG iterations it took."""
    if not exact:
        return _pcg(dual, w, P, g, eta)
    H = dual.hessian(w, P)
    ridge = max(float(np.abs(H.diagonal()).max(initial=0.0)), 1e-300) * max(1e-12, 1e-4 * float(np.abs(g).max(initial=0.0)))
    if len(g) <= DENSE_ROWS:
        damped = H.toarray()
        damped[np.diag_indices_from(damped)] += ridge
        try:
            return sla.cho_solve(sla.cho_factor(damped, check_finite=False), g, check_finite=False), 0
        except np.linalg.LinAlgError:
            return _pcg(dual, w, P, g, eta)
    step = _factorised(H, ridge).solve(g)
    if not np.all(np.isfinite(step)):  # pragma: no cover - the damped system is positive definite
        return _pcg(dual, w, P, g, eta)
    return step, 0


def _factorised(H: sp.csr_matrix, ridge: float) -> spla.SuperLU:
    """H + ridge·I factorised. The damped Hessian is positive definite, so no pivoting is needed:
    SuperLU's symmetric mode (diagonal pivots after one symmetric fill-reducing ordering)
    factorises it as Cholesky would, with a quarter of the fill and 12× faster than with partial
    pivoting on rf10."""
    damped = (H + ridge * sp.identity(H.shape[0], format="csr")).tocsc()
    return spla.splu(damped, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})


def _preconditioner(dual: _Dual, w: np.ndarray, P: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The Hessian at (w, P), factorised once, as a preconditioner for the Newton systems that follow
    (see :data:`SWITCH`)."""
    H = dual.hessian(w, P)
    return _factorised(H, max(float(np.abs(H.diagonal()).max(initial=0.0)), 1e-300) * 1e-10).solve


def _pcg(dual: _Dual, w: np.ndarray, P: np.ndarray, g: np.ndarray, eta: float, precondition: Callable[[np.ndarray], np.ndarray] | None = None) -> tuple[np.ndarray, int]:
    """Solve H d = g to relative residual ``eta`` by conjugate gradients, preconditioned by
    ``precondition`` (r ↦ M⁻¹r) or else by the Hessian's diagonal (Jacobi)."""
    diag = np.maximum(dual.hess_diag(w, P), 1e-300)
    ridge = float(diag.max()) * 1e-12
    if precondition is None:
        inv = 1.0 / (diag + ridge)
        precondition = inv.__mul__
    d = np.zeros_like(g)
    r = g.copy()
    z = precondition(r)
    p = z.copy()
    rz = float(r @ z)
    target = eta * float(np.linalg.norm(g))
    for it in range(1, MAX_CG + 1):
        Hp = dual.hess_vec(w, P, p) + ridge * p
        curvature = float(p @ Hp)
        if not curvature - ridge * float(p @ p) > FLAT * float(p @ (diag * p)):  # the ridge's alone: noise
            return (d if it > 1 else precondition(g)), it
        alpha = rz / curvature
        step = d + alpha * p
        if not np.all(np.isfinite(step)):
            return (d if it > 1 else precondition(g)), it
        d = step
        r -= alpha * Hp
        if float(np.linalg.norm(r)) <= target:
            return d, it
        z = precondition(r)
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return d, MAX_CG


_Step = tuple[np.ndarray, float, np.ndarray, np.ndarray, np.ndarray]
"""A point on the search line: ``(lam, *dual.state(lam))``."""


def _line_search(dual: _Dual, lam: np.ndarray, value: float, g: np.ndarray, d: np.ndarray, expand: bool = False) -> _Step:
    """Backtracking (Armijo) along d from step 1; ∇D = −g, so the slope is −g·d.

    With ``expand``, a full step that is accepted is doubled while the dual keeps falling (up to
    :data:`MAX_EXPAND` times the step): near the boundary the Newton step of a dying type's
    multipliers is about one unit of log-weight (its weight falls by a factor e per step, as Newton's
    method on e^{−x} moves x by 1), and longer steps along the same direction take its weight to 0
    in a few steps instead of ~20 (rf10: 23 Newton steps → 17). Only for exact Newton directions:
    a truncated conjugate-gradient direction has flat components that doubling sends far away.
    """
    slope = float(g @ d)
    t = 1.0
    for _ in range(60):
        trial = lam + t * d
        new = dual.state(trial)
        if new[0] <= value - 1e-4 * t * slope + 1e-15 * abs(value):
            return _expanded(dual, lam, value, slope, d, (trial, *new)) if expand and t == 1.0 else (trial, *new)
        t *= 0.5
    return (lam, value, *dual.state(lam)[1:])


def _expanded(dual: _Dual, lam: np.ndarray, value: float, slope: float, d: np.ndarray, best: _Step) -> _Step:
    """The accepted full step ``best``, doubled while the dual falls strictly and by Armijo's rule."""
    t = 1.0
    while t < MAX_EXPAND:
        t *= 2.0
        trial = lam + t * d
        new = dual.state(trial)
        if not (new[0] < best[1] and new[0] <= value - 1e-4 * t * slope):
            break
        best = (trial, *new)
    return best


def _solution(problem: FactoredProblem, red: FactoredReduced, lam: np.ndarray, steps: int, cg: int, seconds: float, tol: float) -> FactoredSolution:
    """The estimate at ``lam``, checked against the original rows as the factored solver does."""
    dual = FactoredDual(red)
    state = dual.state(lam)
    types = red.pinned_types.copy()
    types[red.types] += state.P
    violations, worst = checked_violations(problem, types, tol, f" in {steps} Newton steps")
    entropy, marginal = entropy_and_marginal(problem, red, dual, state)
    full = np.zeros(len(violations))
    full[red.rows] = lam
    return FactoredSolution(
        marginal=marginal,
        types=types,
        entropy=entropy,
        max_violation=worst,
        iterations=cg,
        newton_steps=steps,
        seconds=seconds,
        n_classes=len(red.weights),
        n_rows=len(violations),
        status="optimal" if worst <= tol else "inaccurate",
        dual=full,
        kkt_residual=kkt_residual_of(red.le, lam, state.residual, worst),
    )
