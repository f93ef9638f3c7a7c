"""The membership estimate's primal by a primal–dual interior-point method (issue 43).

The maximum-entropy membership belief of :mod:`ppdm.maxent.solvers.bernoulli` is, in the primal,
one probability ``p_g`` per pattern of interchangeable candidates (``w_g`` of them,
:func:`~ppdm.maxent.constraints.membership_rows.column_patterns`) solving

    min  Σ_g w_g [p_g log p_g + (1 − p_g) log(1 − p_g)] + Σ_{soft r} (e_r − t_r)² / 2v_r
    s.t. lo_r ≤ e_r ≤ hi_r,   e_r = lo_r on an equality row,   e = P (w ∘ p),

the expected counts ``e`` of the rows; a soft row (a bagged cell's draws, known up to the
variance ``v_r``; Dudík, Phillips & Schapire, COLT 2004 §3) pulls its count towards ``t_r``.
The primal has as many unknowns as there are patterns (2,343 on Adult 5,000 rows, 100 bagged
trees), where the dual has one multiplier per row (43,290 there), and its bounds are inequalities
an interior-point method keeps strictly: the dual's kinks, a cell whose soft target sits on its
bound (half the rows of a bagged forest: a cell counting one draw), are no kinks here.

**Method.** Mehrotra's predictor–corrector (Mehrotra 1992; Nocedal & Wright, *Numerical
Optimization*, 2nd ed., §16.6 and §19.3 for a convex objective) on the KKT conditions with slacks
``s`` and multipliers ``z`` of the inequalities and ``y`` of the equality rows, started outside
the bounds (an infeasible start: the residuals ``G p + s − h`` fall with the steps). The slacks
and multipliers eliminated, each step solves one dense system over the patterns,

    K = diag(w / p(1 − p)) + Pᵀ diag(w) D diag(w) P,   D_r = [soft] 1/v_r + z_r / s_r,

by one Cholesky factorisation (twice solved: predictor and corrector), the equality rows through
their small Schur complement. The probabilities move in their logits (``θ += Δp / p(1 − p)``,
each logit's move capped at :data:`LOGIT_STEP`), so a candidate the rows pin to 0 or 1 approaches
it geometrically and never leaves the open interval; the step length keeps ``s, z > 0``
(fraction to the boundary 0.995). Measured on Adult and Nursery 5,000 rows, 100 bagged trees:
21 steps each to rows met within 10⁻⁸ records, 4.3 s and 11.7 s on one core, where Newton's
method on the dual with the blocks' cycle after it stopped at its 60 s limit 6·10⁻⁴ and 1.7·10⁻³
records off.

**Certificate.** It stops when every row is met within ``tol / 10`` records, the mean
complementarity ``s·z/m`` is below ``tol · 10⁻⁶`` and every candidate's logit is within ``tol``
of stationarity (the Lagrangian's gradient over ``w``): the answer is the maximum-entropy belief
to that accuracy, with the rows' multipliers ``λ`` (logits ``θ = Pᵀλ``) returned for a warm start.
Should rounding break a step's system (short of positive definite, or a direction not finite),
it stops there unconverged and the caller's cycle over the blocks finishes from its multipliers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.special import expit

from ppdm.maxent.constraints.membership_rows import column_patterns
from ppdm.maxent.solvers.newton import mean_diagonal_ridge
from ppdm.progress import report

__all__ = ["DENSE_PATTERNS", "InteriorResult", "interior_bernoulli"]

#: A logit moves by at most this much per step (the step in ``p`` mapped to the logit is a
#: first-order move; 4 and 8 took 27 and 23 steps on Adult 5,000 rows, 2 lost definiteness).
LOGIT_STEP = 8.0

#: Steps taken to the boundary of the slacks and multipliers, at most this share of the way.
TO_BOUNDARY = 0.995

#: The complementarity the corrector aims at is kept above ``tol`` times this: below the
#: certificate's ``tol · 10⁻⁶``, the slacks' ratios ``z/s`` blow up while the rows are still being
#: met (SACRO-ML's breast-cancer forest: ``s·z/m`` at 10⁻¹⁵ with rows 3·10⁻⁶ off, then a system
#: short of positive definite).
CENTRE_FLOOR = 1e-7

#: The method forms a dense patterns × patterns system: beyond this many patterns (512 MB, a
#: factorisation of tens of seconds) it is not tried and the caller cycles over the blocks.
DENSE_PATTERNS = 8000


@dataclass
class InteriorResult:
    """The free bits' probabilities, steps taken, whether the deadline stopped them, whether the
    certificate of the module docstring holds, and the rows' multipliers (one per row of ``A``:
    a warm start for the blocks' exact solves)."""

    q: np.ndarray
    steps: int
    timed_out: bool
    converged: bool
    lam: np.ndarray


@dataclass
class _Rows:
    """The rows over the patterns: ``Q = P diag(w)``; the soft rows' targets and variances;
    the inequalities ``G p ≤ h`` (``-Q_r p ≤ -lo_r`` and ``Q_r p ≤ hi_r`` where the bound can
    bind, ``sign`` −1 and +1, ``of`` their row) and the equality rows ``E p = b`` (``equal``: which)."""

    Q: sp.csr_matrix
    soft: np.ndarray
    t: np.ndarray
    v: np.ndarray
    G: sp.csr_matrix
    h: np.ndarray
    of: np.ndarray
    sign: np.ndarray
    E: np.ndarray
    b: np.ndarray
    equal: np.ndarray


def interior_bernoulli(
    A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, target: np.ndarray, variance: np.ndarray,
    tol: float, max_steps: int, deadline: float | None,
) -> InteriorResult | None:
    """The maximum-entropy bits under ``lo ≤ A q ≤ hi`` (bits free, rows shifted for the proved
    ones; ``target`` NaN or ``variance`` 0: no soft target), by the method of the module
    docstring; ``None`` when the free bits form more than :data:`DENSE_PATTERNS` patterns."""
    width = np.diff(A.indptr)
    keep = width > 0
    P, of_bit, w = column_patterns(A[keep].tocsr())
    if P.shape[1] > DENSE_PATTERNS:
        return None
    soft = (~np.isnan(target) & (variance > 0) & (hi - lo > 1e-12))[keep]
    rows = _rows(P, w, lo[keep], hi[keep], np.nan_to_num(target[keep]), np.where(soft, variance[keep], 1.0), soft)
    theta, u, steps, timed_out, converged = _solve(rows, w, tol, max_steps, deadline)
    lam = np.zeros(len(keep))
    lam[keep] = -u
    return InteriorResult(expit(theta)[of_bit], steps, timed_out, converged, lam)


def _rows(P: sp.csr_matrix, w: np.ndarray, lo: np.ndarray, hi: np.ndarray, t: np.ndarray, v: np.ndarray, soft: np.ndarray) -> _Rows:
    """The rows of the primal; a bound no ``p ∈ [0, 1]`` can break is left out."""
    Q = (P @ sp.diags(w)).tocsr()
    least = np.asarray(Q.minimum(0).sum(axis=1)).ravel()
    most = np.asarray(Q.maximum(0).sum(axis=1)).ravel()
    eq = (np.abs(hi - lo) <= 1e-12) & ~soft
    low = np.flatnonzero(~eq & np.isfinite(lo) & (lo > least))
    up = np.flatnonzero(~eq & np.isfinite(hi) & (hi < most))
    G = sp.vstack([-Q[low], Q[up]]).tocsr()
    return _Rows(
        Q, soft, t[soft], v[soft], G, np.r_[-lo[low], hi[up]], np.r_[low, up],
        np.r_[-np.ones(len(low)), np.ones(len(up))], Q[np.flatnonzero(eq)].toarray(), lo[eq], np.flatnonzero(eq),
    )


def _solve(rows: _Rows, w: np.ndarray, tol: float, max_steps: int, deadline: float | None) -> tuple[np.ndarray, np.ndarray, int, bool, bool]:
    """Mehrotra's predictor–corrector: the logits, the rows' combined multipliers ``u`` (the
    logits are ``−Pᵀu``), steps, whether the deadline stopped it, whether it converged."""
    Qs = rows.Q[rows.soft]
    QsT, GT = Qs.T.tocsr(), rows.G.T.tocsr()
    m = rows.G.shape[0]
    share = float(np.clip(rows.b.sum() / max(w.sum(), 1.0), 0.05, 0.95)) if len(rows.b) else 0.5
    theta = np.full(len(w), np.log(share / (1.0 - share)))
    p = expit(theta)
    s, z, y = np.maximum(rows.h - rows.G @ p, 1.0), np.ones(m), np.zeros(len(rows.b))
    step = 0
    for step in range(1, max_steps + 1):
        report("estimating membership: interior-point steps", step - 1, max_steps, "steps at most")
        rd = w * theta + QsT @ ((Qs @ p - rows.t) / rows.v) + GT @ z + rows.E.T @ y
        rp, re = rows.G @ p + s - rows.h, rows.E @ p - rows.b
        mu = float(s @ z) / max(m, 1)
        if _met(rd / w, rp, re, mu, tol):
            return theta, _multipliers(rows, p, z, y), step, False, True
        if deadline is not None and time.perf_counter() > deadline:
            return theta, _multipliers(rows, p, z, y), step, True, False
        pq = np.maximum(p * (1.0 - p), 1e-300)
        try:
            direction = _directions(rows, w / pq, z, s, rd, rp, re)
            dp, dy, ds, dz = direction(z * s)
            a = _to_boundary(s, ds, z, dz, 1.0)
            sigma = ((s + a * ds) @ (z + a * dz) / max(m, 1) / mu) ** 3 if mu > 0 else 0.0
            dp, dy, ds, dz = direction(z * s + ds * dz - max(sigma * mu, tol * CENTRE_FLOOR))
        except np.linalg.LinAlgError:
            break  # rounding broke the system: the caller's cycle finishes from here
        if not all(np.isfinite(d).all() for d in (dp, dy, ds, dz)):
            break
        a = _to_boundary(s, ds, z, dz, TO_BOUNDARY)
        theta = theta + a * np.clip(dp / pq, -LOGIT_STEP, LOGIT_STEP)
        p, s, z, y = expit(theta), s + a * ds, z + a * dz, y + a * dy
    return theta, _multipliers(rows, p, z, y), step, False, False


def _met(logit_error: np.ndarray, rp: np.ndarray, re: np.ndarray, mu: float, tol: float) -> bool:
    """The certificate of the module docstring."""
    feasible = max(np.abs(rp).max(initial=0.0), np.abs(re).max(initial=0.0)) <= tol * 0.1
    return feasible and mu <= tol * 1e-6 and float(np.abs(logit_error).max(initial=0.0)) <= tol


def _directions(
    rows: _Rows, curvature: np.ndarray, z: np.ndarray, s: np.ndarray, rd: np.ndarray, rp: np.ndarray, re: np.ndarray,
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """``rc ↦ (Δp, Δy, Δs, Δz)``, the Newton step of the KKT conditions for complementarity
    target ``rc`` (``z∘s`` less it), from one factorisation of ``K`` (module docstring)."""
    D = np.zeros(rows.Q.shape[0])
    D[rows.soft] += 1.0 / rows.v
    np.add.at(D, rows.of, z / s)
    used = np.flatnonzero(D > 0)
    Qd = rows.Q[used]
    K = (Qd.T @ sp.diags(D[used]) @ Qd).toarray()
    K[np.diag_indices_from(K)] += curvature
    solve = _cholesky(K)
    KiE = solve(rows.E.T) if len(rows.b) else np.zeros((len(curvature), 0))
    schur = rows.E @ KiE
    GT = rows.G.T.tocsr()

    def direction(rc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        Kr = solve(-rd - GT @ ((z * rp - rc) / s))
        dy = np.linalg.lstsq(schur, rows.E @ Kr + re, rcond=None)[0] if len(rows.b) else np.zeros(0)
        dp = Kr - KiE @ dy
        ds = -rp - rows.G @ dp
        return dp, dy, ds, -(rc + z * ds) / s

    return direction


def _cholesky(K: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``rhs ↦ K⁻¹ rhs``; a tiny ridge (relative to the mean diagonal) when rounding left ``K``
    short of positive definite."""
    try:
        factor = sla.cho_factor(K, check_finite=False)
    except np.linalg.LinAlgError:
        K[np.diag_indices_from(K)] += mean_diagonal_ridge(K, 1e-10, 1e-300)
        factor = sla.cho_factor(K, check_finite=False)
    return lambda rhs: sla.cho_solve(factor, rhs, check_finite=False)


def _to_boundary(s: np.ndarray, ds: np.ndarray, z: np.ndarray, dz: np.ndarray, share: float) -> float:
    """The longest step keeping ``s`` and ``z`` positive, times ``share``, and at most 1."""
    a = np.inf
    for x, dx in ((s, ds), (z, dz)):
        falling = dx < 0
        if falling.any():
            a = min(a, float(np.min(-x[falling] / dx[falling])))
    return min(1.0, share * a)


def _multipliers(rows: _Rows, p: np.ndarray, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per row the multiplier ``u_r`` with logits ``θ ≈ −Pᵀu`` at the optimum (stationarity over
    ``w``): a soft row's pull ``(e_r − t_r)/v_r``, its bounds' ``±z``, an equality's ``y``."""
    u = np.zeros(rows.Q.shape[0])
    u[rows.soft] = (rows.Q[rows.soft] @ p - rows.t) / rows.v
    np.add.at(u, rows.of, rows.sign * z)
    u[rows.equal] += y
    return u
