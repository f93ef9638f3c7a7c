"""Maximum entropy over independent bits: each candidate's membership probability (issue 27).

The attacker's most neutral belief over the membership bits ``b ∈ {0,1}^N`` given expected-count
rows ``lo ≤ A E[b] ≤ hi`` (paper 000 §3's principle, over bits instead of sensitive values). The
maximum-entropy distribution under linear expectation rows is a product of independent Bernoulli
laws with logits ``θ = Aᵀλ`` (the exponential family of the rows' statistics; Jaynes 1957, and the
dual of Della Pietra, Della Pietra & Lafferty 1997 §3), so ``P(member_i) = σ(θ_i)`` and the
multipliers minimise the smooth convex dual

    F(λ_eq, μ, ν, λ_s) = Σ_i log(1 + e^{θ_i}) − λ_eq·c − μ·lo + ν·hi − λ_s·t + ½ Σ v_s λ_s²,
    θ = A_eqᵀ λ_eq + A_loᵀ μ − A_hiᵀ ν + Sᵀ λ_s,    μ, ν ≥ 0,

with free multipliers on equality rows, signed ones on the sides of interval rows, and the soft
rows ``S E[b] ≈ t`` penalised by Gaussian noise of variance ``v`` (Dudík, Phillips & Schapire,
COLT 2004 §3: always solvable). F is minimised by L-BFGS-B (bounds for μ, ν), every step two
sparse products. Bits already proved (``fixed``) are taken out first and their rows' bounds
shifted; a side of a row no free bit can reach is dropped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.optimize as so
import scipy.sparse as sp
from scipy.special import expit

__all__ = ["BernoulliOptions", "BernoulliSolution", "solve_bernoulli"]


@dataclass(frozen=True)
class BernoulliOptions:
    """Settings of :func:`solve_bernoulli`: L-BFGS-B's iteration cap, its gradient tolerance (in
    expected records: a row is met within it), its memory and a time limit (seconds)."""

    max_iter: int = 3000
    tol: float = 1e-4
    memory: int = 20
    time_limit: float | None = 100.0


@dataclass
class BernoulliSolution:
    """Each bit's probability, the largest row violation left (expected records), the L-BFGS-B
    iterations used, whether the time limit stopped them, and the seconds taken."""

    p: np.ndarray
    max_violation: float
    iterations: int
    timed_out: bool
    seconds: float


class _Stop(Exception):
    pass


def solve_bernoulli(
    A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, fixed: np.ndarray, soft: sp.csr_matrix | None = None,
    target: np.ndarray | None = None, variance: np.ndarray | None = None, options: BernoulliOptions | None = None,
) -> BernoulliSolution:
    """Maximum-entropy membership probabilities (see the module docstring).

    ``fixed``: per bit ``-1`` (free), ``0`` or ``1`` (proved); a fixed bit keeps its value.
    """
    options = options or BernoulliOptions()
    start = time.perf_counter()
    free = fixed < 0
    p = np.where(free, 0.5, fixed).astype(float)
    if not free.any():
        return BernoulliSolution(p, 0.0, 0, False, 0.0)
    ones = (fixed == 1).astype(float)
    Af = A[:, free].tocsr()
    shift = A @ ones
    width = np.asarray(Af.sum(axis=1)).ravel()
    lo_f, hi_f = lo - shift, hi - shift
    live = width > 0
    eq = live & (np.abs(hi_f - lo_f) < 1e-9)
    low = live & ~eq & (lo_f > 1e-9)
    high = live & ~eq & (hi_f < width - 1e-9)
    blocks = [Af[eq], Af[low], -Af[high]]
    rhs = [lo_f[eq], lo_f[low], -hi_f[high]]
    n_soft = 0
    penalty = np.zeros(0)
    if soft is not None and soft.shape[0]:
        S = soft[:, free].tocsr()
        keep = np.asarray(S.sum(axis=1)).ravel() > 0
        blocks.append(S[keep])
        rhs.append(np.asarray(target)[keep] - soft[keep] @ ones)
        penalty = np.asarray(variance)[keep]
        n_soft = int(keep.sum())
    M = sp.vstack(blocks, format="csr")
    MT = M.T.tocsr()
    c = np.concatenate(rhs)
    n_eq, n_lo, n_hi = int(eq.sum()), int(low.sum()), int(high.sum())
    lower = np.r_[np.full(n_eq, -np.inf), np.zeros(n_lo + n_hi), np.full(n_soft, -np.inf)]
    if not len(lower):  # no row reaches a free bit: each is a fair coin
        return BernoulliSolution(p, _violation(A, lo, hi, p), 0, False, time.perf_counter() - start)
    bounds = so.Bounds(lower, np.full(len(lower), np.inf))
    soft_at = n_eq + n_lo + n_hi
    deadline = None if options.time_limit is None else start + options.time_limit

    def dual(z: np.ndarray) -> tuple[float, np.ndarray]:
        theta = MT @ z
        q = expit(theta)
        value = float(np.logaddexp(0.0, theta).sum() - z @ c)
        grad = M @ q - c
        if n_soft:
            zs = z[soft_at:]
            value += 0.5 * float((penalty * zs * zs).sum())
            grad[soft_at:] += penalty * zs
        return value, grad

    last = [np.zeros(M.shape[0])]

    def stop(x: np.ndarray) -> None:
        last[0] = x
        if deadline is not None and time.perf_counter() > deadline:
            raise _Stop

    z = last[0]
    timed_out = False
    iterations = 0
    try:
        settings: dict[str, Any] = {
            "jac": True, "method": "L-BFGS-B", "bounds": bounds, "callback": stop,
            "options": {"maxiter": options.max_iter, "maxcor": options.memory, "gtol": options.tol, "ftol": 0.0},
        }
        found = so.minimize(dual, z, **settings)
        z, iterations = found.x, int(found.nit)
    except _Stop:
        timed_out = True
        z = last[0]
    q = expit(MT @ z)
    p[free] = q
    violation = _violation(A, lo, hi, p)
    return BernoulliSolution(p, violation, iterations, timed_out, time.perf_counter() - start)


def _violation(A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, p: np.ndarray) -> float:
    x = A @ p
    return float(np.maximum(np.maximum(lo - x, x - hi), 0.0).max(initial=0.0))
