"""One family of Newton drivers for the maximum-entropy duals: the dual's interface and the parts of a step.

Every solver minimises a Lagrange dual D(λ) of the maximum-entropy problem, convex and smooth,
whose gradient is the rows' residuals A P − b (with the sign flipped where P ∝ e^{−Aᵀλ}) and whose
Hessian is sparse or small. Three Newton loops do it, all on duals of this module's interface:

* :func:`~ppdm.maxent.solvers.dual.minimize_dual`: active-set Newton steps inside a trust radius,
  projected on the multipliers' bounds, with L-BFGS-B when they stall; systems too large to
  factorise by conjugate gradients when the dual offers Hessian-vector products. It serves the explicit dual
  (:class:`~ppdm.maxent.solvers.dual.Dual`, and through it the subproblems of the sequential convex
  method, :mod:`ppdm.maxent.solvers.nonlinear`) and the factored one
  (:class:`~ppdm.maxent.solvers.factored_dual.FactoredDual`).
* :func:`~ppdm.maxent.solvers.forest_solve.solve_forest`: truncated Newton on equality rows, the
  Hessian factorised or the systems solved by conjugate gradients, steps doubled along exact
  directions, types forced to 0 as the face is found
  (:class:`~ppdm.maxent.solvers.forest_solve.ForestDual`).
* :mod:`~ppdm.maxent.solvers.bernoulli`'s dense Newton method on equality rows: the membership
  dual over independent bits (:class:`~ppdm.maxent.solvers.bernoulli_newton.MembershipDual`). A
  bagged forest's soft rows, whose dual has kinks, are solved in the primal by an interior-point
  method instead (:mod:`~ppdm.maxent.solvers.bernoulli_interior`), outside this family.

All three read the dual through :class:`DualFunction` (the first two's conjugate gradients also
through :class:`MatrixFreeDual`), measure the rows the same way (:func:`row_violation`, and
:func:`largest_violation` where multipliers have caps that release elastic rows), damp and solve
their Newton systems with the same parts (:func:`newton_ridge`, :func:`mean_diagonal_ridge`,
:func:`damped_dense`, :func:`cholesky_solve`, :func:`cholesky_solver`), truncate the same conjugate
gradients (:func:`conjugate_gradients`) and search along a step by the same backtracking rule
(:func:`backtrack`, :func:`sufficient_decrease`).

What tells them apart stays with each driver, because merged, each would take other steps than it
does: the general driver's active set and trust radius; the forest driver's choice between
factorising and conjugate gradients, its step doubling and the face; the membership driver's
dense factorisation of the patterns' rows. The membership dual
needs no conjugate gradients (its systems are patterns × patterns, dense), and its blocks' exact
solves (:mod:`ppdm.maxent.solvers.bernoulli`'s iterative scaling) are safeguarded one-dimensional
Newton steps per row, bracketed, outside this family. :class:`NewtonOptions` holds the general
driver's dense-system limits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ppdm.errors import PpdmError, check_options


@dataclass(frozen=True)
class NewtonOptions:
    """Settings of the general driver (:func:`~ppdm.maxent.solvers.dual.minimize_dual`) and of the
    duals it reads: where a Newton system stops being formed and factorised."""

    #: Newton systems on more than this many rows are solved by conjugate gradients on
    #: Hessian-vector products when the dual offers them (see
    #: :data:`~ppdm.maxent.solvers.dual.MAX_CG` for the measurements).
    dense_max: int = 8000
    #: The factored dual (:class:`~ppdm.maxent.solvers.factored_dual.FactoredDual`) forms Newton
    #: systems on at most this many rows as dense arrays (factorised by dense Cholesky): on the
    #: 100,000-row RF10 insider audit (3,754 rows, 4 % filled) a step's system took 1.3 s that way
    #: and 2.0 s by SuperLU.
    dense_rows: int = 5000
    #: How the factored dual forms its Hessian's groups' term
    #: (:meth:`~ppdm.maxent.solvers.factored_dual.FactoredDual.group_term`): ``"groups"`` (BᵀB),
    #: ``"cells"`` (Yᵀ K Y) or ``"auto"`` (default: whichever costs fewer operations, by
    #: :func:`~ppdm.maxent.solvers.factored_dual._by_groups_cheaper`). Both give the same matrix.
    group_term: str = "auto"

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a number '5' is refused here, naming the field
        if self.group_term not in ("auto", "groups", "cells"):
            raise PpdmError(f"NewtonOptions.group_term must be 'auto', 'groups' or 'cells', got {self.group_term!r}")


#: Armijo's constant: a step must lower the dual by this fraction of the decrease its slope promises.
ARMIJO = 1e-4

#: Levenberg–Marquardt damping per unit of the largest residual (see :func:`newton_ridge`).
DAMPING = 1e-4


class DualStateLike(Protocol):
    """What a driver reads of the dual at λ: the value D(λ) and the residuals A P − b (= −∇D where
    P ∝ e^{−Aᵀλ}; = +∇D for the membership dual, whose logits are +Aᵀλ)."""

    value: float
    residual: np.ndarray


S = TypeVar("S", bound=DualStateLike)

#: A Hessian as the duals return it: sparse, or dense when small.
Hessian = sp.csr_matrix | np.ndarray


class DualFunction(Protocol[S]):
    """A convex dual D(λ) over constraint rows whose states are of type ``S``.

    ``le`` marks inequality rows (λ ≥ ``lower``); ``upper`` caps the multipliers (elastic rows);
    :meth:`state` evaluates D at λ; :meth:`hessian` returns ∇²D on ``rows`` as a sparse matrix
    or a dense array; :meth:`project` clips λ to its bounds; :meth:`fun_and_grad` is D and ∇D
    for a quasi-Newton method.
    """

    le: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def state(self, lam: np.ndarray) -> S: ...

    def hessian(self, state: S, rows: np.ndarray) -> Hessian: ...

    def project(self, lam: np.ndarray) -> np.ndarray: ...

    def fun_and_grad(self, lam: np.ndarray) -> tuple[float, np.ndarray]: ...


class MatrixFreeDual(DualFunction[S], Protocol[S]):
    """A :class:`DualFunction` whose Hessian is also available without forming it: its product
    with a vector and its diagonal (for conjugate gradients preconditioned by the diagonal)."""

    def hess_vec(self, state: S, v: np.ndarray) -> np.ndarray: ...

    def hess_diag(self, state: S) -> np.ndarray: ...


# -- stopping -----------------------------------------------------------------------------------
def row_violation(le: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """Per row: |A P − b| for equalities, max(0, A P − b) for inequalities."""
    return np.where(le, np.maximum(residual, 0.0), np.abs(residual))


def elastic_violation(dual: DualFunction[S], lam: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """Per row, the violation of the optimality conditions: :func:`row_violation`, except on rows
    whose multiplier sits at its cap (elastic rows may stay violated)."""
    return np.where(lam >= dual.upper, 0.0, row_violation(dual.le, residual))


def largest_violation(dual: DualFunction[S], lam: np.ndarray, residual: np.ndarray) -> float:
    """The largest :func:`elastic_violation`: what the general and forest drivers stop on (each
    against its own threshold) and what the forest driver tracks from step to step."""
    return float(elastic_violation(dual, lam, residual).max(initial=0.0))


# -- the Newton system ---------------------------------------------------------------------------
def diagonal_scale(H: Hessian) -> float:
    """The largest diagonal entry of H in absolute value (at least 1e-300): the unit of a ridge."""
    return max(float(np.abs(H.diagonal()).max(initial=0.0)), 1e-300)


def newton_ridge(H: Hessian, grad: np.ndarray) -> float:
    """Levenberg–Marquardt damping proportional to the gradient: vanishes at the optimum (so the
    last steps are Newton's) but keeps the nearly singular systems of degenerate rows from
    producing steps of 10⁸ early on."""
    return ridge_for(diagonal_scale(H), grad)


def ridge_for(scale: float, grad: np.ndarray) -> float:
    """:func:`newton_ridge` given the Hessian's largest diagonal entry ``scale``."""
    return scale * max(1e-12, DAMPING * float(np.abs(grad).max(initial=0.0)))


def damped_dense(H: Hessian, ridge: float) -> np.ndarray:
    """H + ridge·I as a new dense array."""
    damped = np.array(H, dtype=float) if isinstance(H, np.ndarray) else H.toarray()
    damped[np.diag_indices_from(damped)] += ridge
    return damped


def mean_diagonal_ridge(H: Hessian, share: float, floor: float) -> float:
    """A ridge of ``share`` times H's mean diagonal entry (at least ``floor``): a fixed relative
    damping that only keeps redundant rows' systems (a tree's cells summing to its size row)
    factorisable, where :func:`newton_ridge`'s would shorten every step."""
    return share * max(float(H.diagonal().sum()) / H.shape[0], floor)


def cholesky_solve(damped: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``damped``⁻¹ ``rhs`` by Cholesky (``damped`` is left as it is); raises
    :class:`numpy.linalg.LinAlgError` when rounding leaves it not quite positive definite."""
    return cholesky_solver(damped)(rhs)


def cholesky_solver(damped: np.ndarray, overwrite: bool = False) -> Callable[[np.ndarray], np.ndarray]:
    """``rhs ↦ damped⁻¹ rhs`` from one Cholesky factorisation, for a system solved against
    several right-hand sides (``overwrite``: ``damped`` may be overwritten by its factor)."""
    factor = sla.cho_factor(damped, overwrite_a=overwrite, check_finite=False)
    return lambda rhs: sla.cho_solve(factor, rhs, check_finite=False)


def conjugate_gradients(
    hess_vec: Callable[[np.ndarray], np.ndarray], rhs: np.ndarray, diag: np.ndarray, ridge: float, eta: float,
    max_iter: int, flat: float, precondition: Callable[[np.ndarray], np.ndarray] | None = None, deadline: float | None = None,
) -> tuple[np.ndarray, int, bool]:
    """(H + ridge·I) d = ``rhs`` by conjugate gradients on products with H (``hess_vec``), to
    relative residual ``eta``, preconditioned by ``precondition`` (r ↦ M⁻¹r) or else by the
    diagonal ``diag`` (Jacobi); returns d, the iterations taken and whether ``eta`` was reached.

    A truncated Newton direction: it stops after ``max_iter`` iterations, at a direction flatter
    than ``flat`` times its diagonal part (below it the curvature is rounding noise and a step
    along it can overflow), or once ``time.perf_counter()`` passes ``deadline``. Every iterate
    from 0 is a descent direction for a positive definite H, so a stop at any of these is a
    usable step; before the first iteration completes, the preconditioned right-hand side is."""
    if precondition is None:
        inv = 1.0 / (diag + ridge)
        precondition = inv.__mul__
    d = np.zeros_like(rhs)
    r = rhs.copy()
    z = precondition(r)
    p = z.copy()
    rz = float(r @ z)
    target = eta * float(np.linalg.norm(rhs))
    for it in range(1, max_iter + 1):
        Hp = hess_vec(p) + ridge * p
        curvature = float(p @ Hp)
        if not curvature - ridge * float(p @ p) > flat * float(p @ (diag * p)):  # the ridge's alone: noise
            return (d if it > 1 else precondition(rhs)), it, False
        alpha = rz / curvature
        step = d + alpha * p
        if not np.all(np.isfinite(step)):
            return (d if it > 1 else precondition(rhs)), it, False
        d = step
        r -= alpha * Hp
        reached = float(np.linalg.norm(r)) <= target
        if reached or (deadline is not None and time.perf_counter() >= deadline):
            return d, it, reached
        z = precondition(r)
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return d, max_iter, False


# -- the line search -----------------------------------------------------------------------------
def sufficient_decrease(new: float, old: float, t: float, slope: float, slack: float = 1e-15) -> bool:
    """Armijo's rule for a step of length ``t`` along a direction of ``slope`` (the directional
    derivative of D): D falls to at most old + :data:`ARMIJO`·t·slope, give or take ``slack``
    times |old| of rounding."""
    bound = old + ARMIJO * t * slope
    return new <= (bound + slack * abs(old) if slack else bound)


def backtrack(
    dual: DualFunction[S], state: S, slope: float, point: Callable[[float], np.ndarray], t: float = 1.0, halvings: int = 40,
    slack: float = 1e-15,
) -> tuple[np.ndarray, S, float] | None:
    """Backtracking (Armijo) from step length ``t``, halved at most ``halvings`` times: the first
    ``point(t)`` whose state meets :func:`sufficient_decrease` (with ``slack``) against ``state``,
    with that state and ``t``; ``None`` if none does. ``t`` after the ``halvings`` trials is
    ``t · 2^−halvings``: a driver that takes a step anyway takes that one."""
    for _ in range(halvings):
        trial = point(t)
        new = dual.state(trial)
        if sufficient_decrease(new.value, state.value, t, slope, slack):
            return trial, new, t
        t *= 0.5
    return None
