"""The membership dual as one of the Newton drivers' duals (issue 43).

The dual of :mod:`ppdm.maxent.solvers.bernoulli` over rows ``r`` (``θ = Aᵀλ``, bits merged into
patterns of weight ``w`` by :func:`~ppdm.maxent.constraints.membership_rows.column_patterns`):

    F(λ) = Σ_g w_g log(1 + e^{θ_g}) − Σ_r φ_r(λ_r),   φ_r(λ) = min_{x ∈ [lo_r, hi_r]} λx + (x − t_r)² / 2v_r,

an equality row (``v_r = 0``, ``lo_r = hi_r``) giving ``φ_r = λ lo_r``. ``F`` is convex and
continuously differentiable: ``∂F/∂λ_r = a_r·(w σ(θ)) − x_r(λ)`` with ``x_r(λ) = clip(t_r − v_rλ,
lo_r, hi_r)``, the row's expected count minus the count the soft row asks for; its generalised
Hessian is ``H = A diag(d) Aᵀ + diag(c)``, ``d = w σ'(θ)``, ``c_r = v_r`` while ``x_r`` is inside
its bounds and 0 on them (Dudík, Phillips & Schapire, COLT 2004 §3).

:class:`MembershipDual` reads it through :class:`~ppdm.maxent.solvers.newton.DualFunction` (one of
the Newton drivers of :mod:`ppdm.maxent.solvers.newton`): the dense Newton method of
:mod:`ppdm.maxent.solvers.bernoulli` on a rule set's equality rows steps on it, and
:func:`largest_residual` measures its rows. A bagged forest's soft rows
are not solved here: their ``φ_r`` has a kink where a soft target sits on its bound (half the rows
of 100 bagged trees), across which Newton's method on ``F`` zigzagged (Adult 5,000 rows: 6·10⁻⁴
records off after 60 s); the primal's interior-point method has no kink
(:mod:`ppdm.maxent.solvers.bernoulli_interior`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ppdm.maxent.solvers.newton import row_violation

__all__ = ["MembershipDual", "MembershipState", "largest_residual"]

#: Multipliers stay within ±this (a logit of 40 is a probability 1 − 4e-18).
CAP = 40.0

@dataclass
class MembershipState:
    """The membership dual at λ: ``F(λ)``, the residuals (each row's expected count ``a_r·(w q)``
    less the count ``x_r(λ)`` it asks for), the patterns' probabilities ``q = σ(Pᵀλ)`` and which
    soft rows pull within their bounds (:meth:`MembershipDual.counts`).

    The logits are ``θ = +Pᵀλ`` (the bits' law is ``e^{θ·b}``, not the types' ``e^{−Aᵀλ}``), so
    here the residuals are ``+∇F``, where the duals of ``P ∝ e^{−Aᵀλ}`` have ``−∇D``."""

    value: float
    residual: np.ndarray
    q: np.ndarray
    inside: np.ndarray


@dataclass
class MembershipDual:
    """The dual ``F`` of the module docstring as a :class:`~ppdm.maxent.solvers.newton.DualFunction`:
    ``P`` (rows × patterns, sparse, or dense for the small equality duals of
    :mod:`ppdm.maxent.solvers.bernoulli`), the bounds, soft targets (``soft``: which rows carry
    one) and variances, and the patterns' weights. Every row's residual counts (``le`` all
    ``False``: a bound enters through ``x_r(λ)``); multipliers lie within ±:data:`CAP`."""

    P: sp.csr_matrix | np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    t: np.ndarray
    v: np.ndarray
    soft: np.ndarray
    w: np.ndarray

    le: np.ndarray = field(init=False)
    lower: np.ndarray = field(init=False)
    upper: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        m = self.P.shape[0]
        self.le = np.zeros(m, dtype=bool)
        self.lower = np.full(m, -CAP)
        self.upper = np.full(m, CAP)

    @classmethod
    def equalities(cls, P: sp.csr_matrix | np.ndarray, w: np.ndarray, b: np.ndarray) -> MembershipDual:
        """The dual of hard rows ``P (w q) = b``: ``F = Σ w log(1 + e^{Pᵀλ}) − λ·b``."""
        m = len(b)
        return cls(P, b, b, np.zeros(m), np.zeros(m), np.zeros(m, dtype=bool), w)

    def counts(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's asked-for count ``x(λ)`` and whether the soft row's pull lies within its
        bounds (on a bound either curvature is a generalised Hessian; the soft one is taken)."""
        pulled = np.where(self.soft, self.t - self.v * lam, self.lo)
        x = np.clip(pulled, self.lo, self.hi)
        return x, self.soft & (pulled >= self.lo) & (pulled <= self.hi)

    def state(self, lam: np.ndarray) -> MembershipState:
        """``F(λ)`` of the module docstring and its gradient (the residuals)."""
        theta = self.P.T @ lam
        x, inside = self.counts(lam)
        penalty = np.where(self.soft, (x - self.t) ** 2 / (2.0 * np.maximum(self.v, 1e-300)), 0.0)
        value = float(self.w @ np.logaddexp(0.0, theta) - lam @ x - penalty.sum())
        q = expit(theta)
        return MembershipState(value, self.P @ (self.w * q) - x, q, inside)

    def curvature(self, state: MembershipState) -> np.ndarray:
        """The rows' own curvature in the generalised Hessian: ``v_r`` inside the bounds, 0 on them."""
        return np.where(state.inside, self.v, 0.0)

    def hessian(self, state: MembershipState, rows: np.ndarray) -> np.ndarray:
        """The generalised Hessian ``P diag(d) Pᵀ + diag(c)`` on ``rows``, dense (``d = w σ'(θ)``)."""
        d = self.w * state.q * (1.0 - state.q)
        P = self.P if len(rows) == self.P.shape[0] else self.P[rows]
        H = (P * d) @ P.T if isinstance(P, np.ndarray) else (P @ sp.diags(d) @ P.T).toarray()
        H[np.diag_indices_from(H)] += self.curvature(state)[rows]
        return H

    def project(self, lam: np.ndarray) -> np.ndarray:
        return np.clip(lam, -CAP, CAP)

    def fun_and_grad(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        s = self.state(lam)
        return s.value, s.residual


def largest_residual(dual: MembershipDual, state: MembershipState) -> float:
    """How far the rows are from optimal (expected records): what the membership drivers stop on."""
    return float(row_violation(dual.le, state.residual).max(initial=0.0))
