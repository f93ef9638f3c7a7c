"""The Lagrange dual of the linear maximum-entropy problem, and its solver.

With multipliers λ (λ_r ≥ 0 on inequality rows) the maximiser of the Lagrangian is, per class c
of groups, the softmax p(· | c) = softmax(−(Aᵀλ)_c), so the dual function

    D(λ) = Σ_c W_c · logsumexp_x(−(Aᵀλ)_{c,x}) + λ·b

is smooth and convex, its gradient is b − A P(λ) (the constraint residuals) and its Hessian is
A diag_c(W_c (diag p_c − p_c p_cᵀ)) Aᵀ, all sparse. No dense matrix over variables is formed.

Two generalisations serve the nonlinear solver (:mod:`ppdm.maxent.solvers.nonlinear`): a proximal term
β·KL(P ‖ P_k) (the objective becomes entropy relative to a prior p_k at temperature τ = 1 + β:
p = softmax((−Aᵀλ + β log p_k) / τ), D = τ Σ W lse + λ·b), and elastic rows, whose violation
costs u per unit: in the dual their multiplier is capped at u.

The Newton driver (:func:`minimize_dual`) works against a small protocol,
:class:`~ppdm.maxent.solvers.newton.DualFunction` (a state at λ with the value and the residuals,
the Hessian on a set of rows, the projection on the multipliers' bounds), so that duals of the
same problem family laid out differently (the factored problems of
:mod:`ppdm.maxent.solvers.factored`, the forests of :mod:`ppdm.maxent.solvers.forest_solve`) share
it; :mod:`ppdm.maxent.solvers.newton` holds it and the parts of a step the forest's driver shares.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Generic, cast

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.optimize import minimize

from ppdm.maxent.solvers.newton import (
    DAMPING,
    DualFunction,
    DualStateLike,
    Hessian,
    MatrixFreeDual,
    NewtonOptions,
    S,
    backtrack,
    cholesky_solve,
    conjugate_gradients,
    damped_dense,
    largest_violation,
    newton_ridge,
    ridge_for,
    row_violation,
)
from ppdm.maxent.solvers.presolve import Reduced
from ppdm.progress import report

__all__ = [
    "DAMPING", "RADIUS", "Dual", "DualFunction", "DualResult", "DualState", "DualStateLike", "minimize_dual", "row_violation",
    "solve_dual",
]

#: Under a deadline no Newton step starts that would end past it if it took this many times as
#: long as the last one (steps vary: a cell of the forest grid ended 2.2 s past 60 s when the
#: next step was assumed to take as long as the last).
PACE = 1.5
#: A sparse Newton system with this share of its entries filled is solved as a dense one, up to
#: ``dense_max`` rows (:class:`~ppdm.maxent.solvers.newton.NewtonOptions`; 100 trees of depth 8
#: over 3,000 Adult rows, a six-valued secret without bootstrap: 3,407 rows, 24 % filled; SuperLU
#: 4.3 s a step, dense Cholesky 1.9 s).
DENSE_SHARE = 0.2
#: Newton systems on more than ``dense_max`` rows are solved by conjugate gradients on
#: Hessian-vector products when the dual offers them (:class:`~ppdm.maxent.solvers.newton.MatrixFreeDual`),
#: in at most this many iterations and never past the deadline: the Hessian is not formed, and a
#: step's time is bounded. Factorised, the first step of 100 trees of depth 10 over 30,162 Adult
#: rows without bootstrap, a six-valued secret (21,130 rows, 6 % filled), took 178 s; over 10,000
#: rows at depth 8 (8,462 rows, 13 % filled) 18 s, and that audit's 60 s ended after it with rows
#: violated by 0.023. By conjugate gradients: 60 steps of 0.8 s, 6·10⁻⁶ (100 iterations a step:
#: 1.1·10⁻⁵; 1,000: 2.2·10⁻⁵).
MAX_CG = 250
RADIUS = 20.0  # initial trust radius of a Newton step, in units of the multipliers (score units)


@dataclass
class DualState:
    value: float
    p: np.ndarray  # (C, K)
    residual: np.ndarray  # A P − b per row


class Dual:
    """D(λ), its gradient and Hessian on a presolved problem."""

    def __init__(self, red: Reduced) -> None:
        self.red = red
        self.AT = sp.csr_matrix(red.A.T)
        self.n_classes, self.n_values = red.fixed.shape
        self.offset = np.where(red.fixed, -np.inf, 0.0)
        if red.prior is not None:
            self.offset = self.offset + np.where(red.fixed, 0.0, red.prior)
        self.tau = red.temperature
        self.upper = red.upper if red.upper is not None else np.full(len(red.b), np.inf)
        self.lower = np.where(red.le, 0.0, -np.inf)
        self.le = red.le

    def state(self, lam: np.ndarray) -> DualState:
        scores = (-(self.AT @ lam).reshape(self.n_classes, self.n_values) + self.offset) / self.tau
        top = scores.max(axis=1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        e = np.exp(scores - top)
        z = e.sum(axis=1, keepdims=True)
        p = e / z
        lse = (top + np.log(z)).ravel()
        joint = (p * self.red.weights[:, None]).ravel()
        residual = self.red.A @ joint - self.red.b
        value = float(self.tau * (self.red.weights @ lse) + lam @ self.red.b)
        return DualState(value, p, residual)

    def fun_and_grad(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        s = self.state(lam)
        return s.value, -s.residual

    def hessian(self, state: DualState, rows: np.ndarray) -> sp.csr_matrix:
        """∇²D restricted to ``rows``: A_a (diag(W p) − Σ_c W_c p_c p_cᵀ) A_aᵀ / τ."""
        A = self.red.A[rows] if len(rows) < self.red.A.shape[0] else self.red.A
        A.prune()  # data and indices exactly nnz long
        p_flat = state.p.ravel()
        w_flat = np.repeat(self.red.weights, self.n_values)
        # column scalings in place of products with diagonal matrices: O(nnz), no sparse product
        Ap = sp.csr_matrix((A.data * p_flat[A.indices], A.indices, A.indptr), shape=A.shape)
        first = sp.csr_matrix((Ap.data * w_flat[A.indices], A.indices, A.indptr), shape=A.shape) @ A.T
        # B[r, c] = Σ_x A[r, cx] p_cx: the same entries, columns mapped to their class (summed)
        B = sp.csr_matrix((Ap.data, A.indices // self.n_values, A.indptr.copy()), shape=(A.shape[0], self.n_classes))
        B.sum_duplicates()
        Bw = sp.csr_matrix((B.data * np.sqrt(self.red.weights)[B.indices], B.indices, B.indptr), shape=B.shape)
        return ((first - Bw @ Bw.T) / self.tau).tocsr()

    def project(self, lam: np.ndarray) -> np.ndarray:
        return np.clip(lam, self.lower, self.upper)


@dataclass
class DualResult(Generic[S]):
    lam: np.ndarray
    state: S  # the state of the dual solved at lam
    iterations: int
    newton_steps: int
    converged: bool
    timed_out: bool = False


def solve_dual(
    red: Reduced, tol: float, max_iter: int = 5000, lam0: np.ndarray | None = None, max_newton: int = 200,
) -> DualResult[DualState]:
    """Minimise D(λ) to a largest constraint violation of ``tol`` (absolute, on P(q, x) scale).

    First an active-set Newton method: equality rows and the inequality rows that are violated
    or have a positive multiplier are treated as equalities, the Newton system is solved with a
    sparse factorisation and the step is damped by a backtracking line search; rows enter when
    violated and leave when their multiplier would turn negative (or reach its cap). On the tree
    problems this takes tens of steps. If it stalls (``max_newton`` steps), L-BFGS-B with bounds
    takes over (``max_iter`` iterations), then Newton polishes.
    """
    return minimize_dual(Dual(red), len(red.b), tol, max_iter, lam0, max_newton)


def minimize_dual(
    dual: DualFunction[S], n: int, tol: float, max_iter: int = 5000, lam0: np.ndarray | None = None, max_newton: int = 200,
    deadline: float | None = None, options: NewtonOptions | None = None,
) -> DualResult[S]:
    """:func:`solve_dual` on any :class:`~ppdm.maxent.solvers.newton.DualFunction` over ``n`` rows.

    ``deadline`` (a ``time.perf_counter()`` reading): no L-BFGS-B iteration starts after it, and
    no Newton step that would end past it taking :data:`PACE` times as long as the last one (a
    factorised step on thousands of rows takes seconds); the result is then the point reached,
    ``converged`` false (``timed_out`` true)."""
    lam = np.zeros(n) if lam0 is None else dual.project(lam0.copy())
    if n == 0:
        return DualResult(lam, dual.state(lam), 0, 0, True)
    lam, state, steps, ok, late = _active_set_newton(dual, lam, tol, max_newton, deadline, options)
    if ok or late:
        return DualResult(lam, state, 0, steps, ok, timed_out=not ok)
    bounds = list(zip(np.where(np.isfinite(dual.lower), dual.lower, None), np.where(np.isfinite(dual.upper), dual.upper, None)))

    def stop_at_deadline(intermediate_result: object) -> None:
        report("solving: quasi-Newton (L-BFGS-B), then Newton again", detail=f"at most {max_iter:,} iterations")
        if _past(deadline):
            raise StopIteration

    res = minimize(
        dual.fun_and_grad, lam, jac=True, method="L-BFGS-B", bounds=bounds,
        options={"maxiter": max_iter, "maxcor": 20, "ftol": 1e-15, "gtol": tol * 1e-2}, callback=stop_at_deadline,
    )
    lam, state, more, ok, late = _active_set_newton(dual, res.x, tol, max_newton, deadline, options)
    converged = ok or largest_violation(dual, lam, state.residual) <= tol
    return DualResult(lam, state, int(res.nit), steps + more, converged, timed_out=not converged and (late or _past(deadline)))


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


def _active_set_newton(
    dual: DualFunction[S], lam: np.ndarray, tol: float, max_steps: int = 200, deadline: float | None = None,
    options: NewtonOptions | None = None,
) -> tuple[np.ndarray, S, int, bool, bool]:
    """Projected Newton steps inside a trust radius on the largest multiplier change.

    Near a degenerate optimum (a leaf whose label rows hold with equality, a class with a value
    whose probability tends to 0) the Newton system is nearly singular and the raw step can be
    10⁸ long; backtracking from it costs dozens of dual evaluations. The radius starts at
    :data:`RADIUS`, doubles after a full step that hit it and shrinks to the accepted move
    after backtracking. Returns the point, its state, the steps taken, whether it converged, and
    whether the deadline stopped it.
    """
    state = dual.state(lam)
    radius = RADIUS
    began = time.perf_counter()
    for step_no in range(1, max_steps + 1):
        residual = state.residual
        report("solving: Newton's method", step_no - 1, max_steps, "Newton steps at most")
        if largest_violation(dual, lam, residual) <= tol * 1e-3:
            return lam, state, step_no - 1, True, False
        now = time.perf_counter()
        last, began = (now - began if step_no > 1 else 0.0), now
        if deadline is not None and now + PACE * last >= deadline:  # a step like the last would end past it
            return lam, state, step_no - 1, False, True
        rows = np.flatnonzero(_active(dual, lam, residual, tol))
        if len(rows) == 0:
            return lam, state, step_no - 1, True, False
        grad = -residual[rows]
        try:
            step = _direction(dual, state, rows, grad, deadline, NewtonOptions() if options is None else options)
        except (RuntimeError, np.linalg.LinAlgError):
            return lam, state, step_no, False, False
        if not np.all(np.isfinite(step)):
            return lam, state, step_no, False, False
        longest = float(np.abs(step).max(initial=0.0))
        first = min(1.0, radius / longest) if longest > 0 else 1.0
        lam, state, t = _line_search(dual, lam, state, rows, step, grad, first)
        if t == 0.0:
            return lam, state, step_no, False, False
        radius = _next_radius(radius, first, t, longest)
    return lam, state, max_steps, False, False


def _direction(dual: DualFunction[S], state: S, rows: np.ndarray, grad: np.ndarray, deadline: float | None, options: NewtonOptions) -> np.ndarray:
    """The damped Newton step on ``rows``: factorised (:func:`_newton_step`), or on more than
    ``dense_max`` rows of a dual with Hessian-vector products a truncated one
    (:func:`_matrix_free_step`)."""
    if len(rows) > options.dense_max and hasattr(dual, "hess_vec"):
        return _matrix_free_step(cast(MatrixFreeDual[S], dual), state, rows, grad, deadline)
    H = dual.hessian(state, rows)
    return _newton_step(H, newton_ridge(H, grad), grad, options.dense_max)


def _matrix_free_step(dual: MatrixFreeDual[S], state: S, rows: np.ndarray, grad: np.ndarray, deadline: float | None) -> np.ndarray:
    """(H + ridge·I) step = −grad on ``rows`` by conjugate gradients preconditioned by (a bound
    on) the Hessian's diagonal, to a relative residual of min(0.1, √‖grad‖∞) (an inexact Newton
    step: loose far from the optimum, tight near it), at most :data:`MAX_CG` iterations, none
    past ``deadline``. The ridge is :func:`~ppdm.maxent.solvers.newton.newton_ridge`'s."""
    n = len(state.residual)
    diag = np.maximum(dual.hess_diag(state)[rows], 1e-300)
    ridge = ridge_for(float(diag.max()), grad)
    full = np.zeros(n)

    def product(v: np.ndarray) -> np.ndarray:
        full[rows] = v
        return dual.hess_vec(state, full)[rows]

    eta = min(0.1, float(np.sqrt(np.abs(grad).max(initial=0.0))))
    step, _, _ = conjugate_gradients(product, -grad, diag, ridge, eta, MAX_CG, 1e-13, deadline=deadline)
    return step


def _newton_step(H: Hessian, ridge: float, grad: np.ndarray, dense_max: int = NewtonOptions.dense_max) -> np.ndarray:
    """Solve (H + ridge·I) step = −grad: a sparse factorisation, or for a dense Hessian Cholesky
    (LU when rounding leaves the damped matrix not quite positive definite). A sparse Hessian
    that is :data:`DENSE_SHARE` filled on at most ``dense_max`` rows goes the dense way."""
    n = len(grad)
    if sp.issparse(H) and (n > dense_max or H.nnz < DENSE_SHARE * n * n):
        return spla.spsolve((H + ridge * sp.identity(n)).tocsc(), -grad)
    if sp.issparse(H):
        H = H.toarray()
    damped = damped_dense(H, ridge)
    try:
        return cholesky_solve(damped, -grad)
    except np.linalg.LinAlgError:
        return sla.lu_solve(sla.lu_factor(damped, check_finite=False), -grad, check_finite=False)


def _next_radius(radius: float, first: float, t: float, longest: float) -> float:
    """Double the radius after a full step that the radius cut short; shrink it to the accepted
    move after backtracking; otherwise keep it."""
    if t < first:
        return max(t * longest, RADIUS * 1e-3)
    if first < 1.0:
        return 2.0 * radius
    return radius


def _active(dual: DualFunction[S], lam: np.ndarray, residual: np.ndarray, tol: float) -> np.ndarray:
    """Rows in the Newton system: equalities, and inequalities off their bounds or pushing off them."""
    le = dual.le
    at_zero = le & (lam <= 0) & (residual <= tol * 1e-3)
    at_cap = le & (lam >= dual.upper) & (residual >= 0)
    return ~at_zero & ~at_cap


def _line_search(
    dual: DualFunction[S], lam: np.ndarray, state: S, rows: np.ndarray, step: np.ndarray, grad: np.ndarray, t: float = 1.0
) -> tuple[np.ndarray, S, float]:
    """Backtracking (Armijo, :func:`~ppdm.maxent.solvers.newton.backtrack`) from step length ``t``
    along ``step`` on ``rows``, projected on the bounds; returns the accepted length, 0 if none."""

    def point(s: float) -> np.ndarray:
        trial = lam.copy()
        trial[rows] += s * step
        return dual.project(trial)

    found = backtrack(dual, state, min(float(grad @ step), 0.0), point, t, halvings=40)
    return (lam, state, 0.0) if found is None else found
