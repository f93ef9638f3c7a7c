"""Maximum entropy over independent bits: each candidate's membership probability (issue 27).

The attacker's most neutral belief over the membership bits ``b ∈ {0,1}^N`` given expected-count
rows ``lo ≤ A E[b] ≤ hi`` (paper 000 §3's principle, over bits instead of sensitive values). The
maximum-entropy distribution under linear expectation rows is a product of independent Bernoulli
laws with logits ``θ = Aᵀλ`` (the exponential family of the rows' statistics; Jaynes 1957, and the
dual of Della Pietra, Della Pietra & Lafferty 1997 §3), so ``P(member_i) = σ(θ_i)`` and the
multipliers minimise the smooth convex dual

    F(λ) = Σ_i log(1 + e^{θ_i}) − Σ_r φ_r(λ_r),    θ = Aᵀλ,

where a hard row contributes ``φ_r(λ) = min(λ lo_r, λ hi_r)`` (an equality row ``λ lo_r``) and a
row that also carries a *soft* target ``t_r`` with variance ``v_r`` (a count known up to Gaussian
noise; Dudík, Phillips & Schapire, COLT 2004 §3) the conjugate of ``−(x − t_r)² / 2v_r`` restricted
to ``[lo_r, hi_r]``: its expected count is ``t_r`` pulled by the noise, clipped to the bounds.

**Solver.** Rows come in blocks whose rows share no bit (one tree's cells: each candidate lands in
one). Minimising F over one block with the others fixed splits into one monotone equation per
row, ``Σ_{i∈r} σ(θ_i^{−r} + λ) + v_r λ = T_r``, solved for every row of the block at once by
safeguarded Newton steps; cycling over the blocks is the iterative scaling of Darroch & Ratcliff
(1972) extended to bounds and soft rows (cyclic block coordinate descent on a smooth convex dual:
it converges). A bagged forest's hundred blocks of soft rows are solved in the primal instead, by
an interior-point method (:mod:`ppdm.maxent.solvers.bernoulli_interior`), whose multipliers warm-start
the cycle should it stop short. Bits already proved (``fixed``) are taken out first, their rows'
bounds shifted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ppdm.errors import check_options
from ppdm.maxent.constraints.membership_rows import column_patterns
from ppdm.maxent.solvers.bernoulli_interior import interior_bernoulli
from ppdm.maxent.solvers.bernoulli_newton import MembershipDual, largest_residual
from ppdm.maxent.solvers.newton import backtrack, cholesky_solve, damped_dense, mean_diagonal_ridge
from ppdm.progress import report

__all__ = ["BernoulliOptions", "BernoulliSolution", "solve_bernoulli"]

#: A row's multiplier stays within ±this (a logit of 40 is a probability 1 − 4e-18).
LOGIT_CAP = 40.0

#: Safeguarded Newton steps per block at most: warm-started, a few usually do, but a bagged tree's soft
#: rows may need dozens (with 12, blocks were left up to 0.8 records off and a bagged forest never converged).
NEWTON_STEPS = 60

#: ``method="auto"`` solves the whole dual at once past this many blocks (a rule set's overlapping
#: rows each need a block of their own, and cycling over hundreds of them converges slowly).
DUAL_BLOCKS = 20

#: ``method="auto"`` solves a model with soft rows (bagged trees) over more than this many blocks
#: by the interior-point method on the primal (:mod:`ppdm.maxent.solvers.bernoulli_interior`):
#: cycling over a hundred bagged trees' blocks took hundreds of sweeps and stopped at its time
#: limit, Newton's method on the dual zigzagged across the soft rows' kinks.
INTERIOR_BLOCKS = 4

#: Interior-point steps at most (21 on Adult and Nursery 5,000 rows, 100 bagged trees); short of
#: its certificate after them, the blocks' exact solves finish from its multipliers.
INTERIOR_STEPS = 100

#: Newton's method on an equality dual stops after this many steps (it converges in a handful;
#: more means bits pinned by the rows, whose multipliers run to the cap; ``auto`` then cycles over the blocks).
NEWTON_MAX = 100

#: Halvings of a dense Newton step before the line search takes the last one anyway (``t`` = 2⁻³⁴ ≈ 6·10⁻¹¹).
DENSE_HALVINGS = 34


@dataclass(frozen=True)
class BernoulliOptions:
    """Settings of :func:`solve_bernoulli`: sweeps over the blocks at most, the tolerance (expected
    records: every hard row met within it, every block's equations solved within it), and a time
    limit (seconds; the estimate then is the last sweep's, said so)."""

    max_sweeps: int = 500
    tol: float = 1e-4
    time_limit: float | None = 60.0
    #: ``"scaling"``: iterative scaling over the blocks (many rows, few blocks: trees);
    #: ``"dual"``: the whole dual at once, by Newton's method (equality rows, at most
    #: ``dense_rows``) or L-BFGS-B (few rows sharing bits across many blocks: rule sets);
    #: ``"interior"``: the primal by an interior-point method, every kind of row (soft rows over
    #: many blocks: bagged forests);
    #: ``"auto"``: ``"interior"`` for soft rows over more than :data:`INTERIOR_BLOCKS` blocks; the
    #: dual when there is no soft row and more than :data:`DUAL_BLOCKS` blocks,
    #: either of one or two rows each on average or all equalities within ``dense_rows`` rows
    #: (a rule set publishing exact supports: cycling over its blocks stalls, Newton's method
    #: converges in a few steps).
    method: str = "auto"
    #: The dual method factorises the Hessian densely up to this many rows (else L-BFGS-B).
    dense_rows: int = 2500
    #: ... and while the rows × patterns matrix it forms holds at most this many entries (160 MB).
    dense_entries: int = 20_000_000

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


@dataclass
class BernoulliSolution:
    """Each bit's probability, the largest hard-row violation left (expected records), the sweeps
    made, whether the time limit stopped them, the seconds taken, and whether the solver reached
    its tolerance (``False``: it ran out of sweeps or time; the estimate is the last one)."""

    p: np.ndarray
    max_violation: float
    iterations: int
    timed_out: bool
    seconds: float
    converged: bool = True


@dataclass
class _Block:
    """One block's rows over the free bits: the bits (``idx``), each bit's row (``row``), and per
    row the bounds, the soft target and its variance (NaN and 0 for a hard row)."""

    idx: np.ndarray
    row: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    target: np.ndarray
    variance: np.ndarray
    lam: np.ndarray


def solve_bernoulli(
    A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, fixed: np.ndarray, blocks: np.ndarray,
    target: np.ndarray | None = None, variance: np.ndarray | None = None, options: BernoulliOptions | None = None,
) -> BernoulliSolution:
    """Maximum-entropy membership probabilities (see the module docstring).

    ``A`` (rows × bits, 0/1), ``lo``, ``hi``: the hard rows; ``blocks``: one id per row, rows of
    one id sharing no bit; ``target`` and ``variance``: a soft target per row (NaN: none).
    ``fixed``: per bit ``-1`` (free), ``0`` or ``1`` (proved); a fixed bit keeps its value.
    """
    options = options or BernoulliOptions()
    start = time.perf_counter()
    deadline = None if options.time_limit is None else start + options.time_limit
    free = fixed < 0
    p = np.where(free, 0.5, fixed).astype(float)
    if not free.any():
        return BernoulliSolution(p, 0.0, 0, False, 0.0)
    ones = (fixed == 1).astype(float)
    shift = A @ ones
    Af = A[:, free].tocsc()
    target = np.full(len(lo), np.nan) if target is None else np.asarray(target, dtype=float)
    variance = np.zeros(len(lo)) if variance is None else np.nan_to_num(np.asarray(variance, dtype=float))
    real = not np.isin(A.data, (0.0, 1.0)).all()
    method = _method(options, np.asarray(blocks), target, np.abs(hi - lo) < 1e-12, real)
    if method == "dual":
        q, iterations, timed_out, converged = _dual(Af.tocsr(), lo - shift, hi - shift, options, deadline)
        if converged or timed_out or options.method == "dual" or real:  # the blocks' exact solves take 0/1 rows only
            p[free] = q
            return BernoulliSolution(p, _violation(A, lo, hi, p), iterations, timed_out, time.perf_counter() - start, converged)
        # the rows pin bits the proofs left free (multipliers at the cap): cycle over the blocks instead
    start_lam, steps = None, 0
    if method == "interior":
        fast = interior_bernoulli(Af.tocsr(), lo - shift, hi - shift, target - shift, variance, options.tol, INTERIOR_STEPS, deadline)
        if fast is not None and (fast.converged or fast.timed_out):
            p[free] = fast.q
            return BernoulliSolution(p, _violation(A, lo, hi, p), fast.steps, fast.timed_out, time.perf_counter() - start, fast.converged)
        start_lam, steps = (None, 0) if fast is None else (fast.lam, fast.steps)  # the blocks' exact solves finish from its multipliers
    parts = _blocks(Af, lo - shift, hi - shift, target - shift, variance, np.asarray(blocks), start_lam)
    theta = np.zeros(int(free.sum())) if start_lam is None else Af.T @ start_lam
    sweeps, timed_out, converged = 0, False, not parts
    while parts and sweeps < options.max_sweeps:
        sweeps += 1
        report("estimating membership: sweeps over the blocks", sweeps, options.max_sweeps, "sweeps at most")
        worst = 0.0
        for b in parts:
            base = theta[b.idx] - b.lam[b.row]
            b.lam, off = _row_solve(base, b)
            theta[b.idx] = base + b.lam[b.row]
            worst = max(worst, off)
        if worst <= options.tol:
            converged = True
            break
        if deadline is not None and time.perf_counter() > deadline:
            timed_out = True
            break
    p[free] = expit(theta)
    return BernoulliSolution(p, _violation(A, lo, hi, p), steps + sweeps, timed_out, time.perf_counter() - start, converged)


def _method(options: BernoulliOptions, blocks: np.ndarray, target: np.ndarray, equality: np.ndarray, real: bool = False) -> str:
    """The solver ``options.method`` names, or under ``"auto"`` the one fitting the rows: the dual
    whenever a row has a coefficient other than 0 or 1 (a boosting round's gradients or hessians:
    the blocks' exact solves take counting rows only)."""
    method = options.method
    if method not in ("auto", "scaling", "dual", "interior"):
        raise ValueError(f"method must be 'auto', 'scaling', 'dual' or 'interior', got {method!r}")
    if (method == "dual" or real) and not np.isnan(target).all():
        raise ValueError("method 'dual' takes hard rows only (a soft row needs 'scaling'; rows with real coefficients need 'dual')")
    if real and method == "scaling":
        raise ValueError("method 'scaling' takes 0/1 rows only (rows with real coefficients need 'dual' or 'auto')")
    if method != "auto":
        return method
    if real:
        return "dual"
    n_blocks = len(np.unique(blocks))
    if not np.isnan(target).all() and n_blocks > INTERIOR_BLOCKS:
        return "interior"
    if n_blocks <= DUAL_BLOCKS or not np.isnan(target).all():
        return "scaling"
    overlapping = len(blocks) <= 2 * n_blocks  # a row or two per block: rows share bits
    newton = bool(equality.all()) and len(blocks) <= options.dense_rows
    return "dual" if overlapping or newton else "scaling"


def _dual(A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, options: BernoulliOptions, deadline: float | None) -> tuple[np.ndarray, int, bool, bool]:
    """The dual of the module docstring over every row at once, and whether it converged. Bits
    reaching the same rows are one pattern with a weight (their probabilities are equal at the
    optimum). With equality rows only, up to ``dense_rows`` of them and
    ``dense_entries`` rows × patterns, ``F = Σ w log(1 + e^θ) − λ·lo`` is minimised by
    Newton's method (:func:`_dense_newton`); otherwise ``λ = μ⁺ − μ⁻`` (``μ⁺, μ⁻ ≥ 0``, ``μ⁻ = 0``
    for an equality row) makes ``min(λ lo, λ hi)`` smooth, ``F = Σ w log(1 + e^θ) − μ⁺·lo + μ⁻·hi``,
    minimised by L-BFGS-B. Multipliers stay within ±:data:`LOGIT_CAP`."""
    from scipy.optimize import OptimizeResult, minimize

    pattern, of_bit, weight = column_patterns(A)
    eq = np.abs(hi - lo) < 1e-12
    m = len(lo)
    At = pattern.T.tocsr()
    stopped = {"late": False}

    def late(intermediate_result: OptimizeResult) -> None:
        if deadline is not None and time.perf_counter() > deadline:
            stopped["late"] = True
            raise StopIteration

    if eq.all() and m <= options.dense_rows and m * pattern.shape[1] <= options.dense_entries:
        lam, iterations, timed_out, converged = _dense_newton(pattern.toarray(), weight, lo, options, deadline)
        return expit(pattern.T @ lam)[of_bit], iterations, timed_out, converged
    def f(z: np.ndarray) -> tuple[float, np.ndarray]:
        theta = At @ (z[:m] - z[m:])
        e = pattern @ (weight * expit(theta))
        return float(weight @ np.logaddexp(0.0, theta) - z[:m] @ lo + z[m:] @ hi), np.r_[e - lo, hi - e]

    bounds = [(-LOGIT_CAP, LOGIT_CAP) if e else (0.0, LOGIT_CAP) for e in eq] + [(0.0, 0.0) if e else (0.0, LOGIT_CAP) for e in eq]
    res = minimize(
        f, np.zeros(2 * m), jac=True, method="L-BFGS-B", bounds=bounds, callback=late,
        options={"maxiter": 50 * options.max_sweeps, "gtol": options.tol * 1e-3, "ftol": 0.0, "maxcor": 30},
    )
    lam = res.x[:m] - res.x[m:]
    q = expit(At @ lam)
    met = _violation(pattern, lo, hi, weight * q) <= options.tol
    return q[of_bit], int(res.nit), stopped["late"], met and not stopped["late"]


def _dense_newton(A: np.ndarray, w: np.ndarray, b: np.ndarray, options: BernoulliOptions, deadline: float | None) -> tuple[np.ndarray, int, bool, bool]:
    """Newton's method with a backtracking line search (:func:`~ppdm.maxent.solvers.newton.backtrack`,
    no slack, the last of 34 halvings taken anyway) on ``F = Σ w log(1 + e^{Aᵀλ}) − λ·b``
    (:meth:`MembershipDual.equalities`), the Hessian ``A diag(w q(1 − q)) Aᵀ`` factorised densely
    (a tiny ridge for redundant rows: :func:`~ppdm.maxent.solvers.newton.mean_diagonal_ridge`),
    until every row is met within the tolerance. A row set pinning some bits to 0 or 1 sends λ
    to infinity at a linear rate; the tolerance stops it there (within ±:data:`LOGIT_CAP`)."""
    dual = MembershipDual.equalities(A, w, b)
    lam = np.zeros(A.shape[0])
    rows = np.arange(A.shape[0])
    steps = min(options.max_sweeps, NEWTON_MAX)
    for iteration in range(1, steps + 1):
        report("estimating membership: Newton's method", iteration - 1, steps, "Newton steps at most")
        state = dual.state(lam)
        if largest_residual(dual, state) <= options.tol:
            return lam, iteration, False, True
        if deadline is not None and time.perf_counter() > deadline:
            return lam, iteration, True, False
        H = dual.hessian(state, rows)
        step = -cholesky_solve(damped_dense(H, mean_diagonal_ridge(H, 1e-10, 1e-12)), state.residual)
        slope = float(state.residual @ step)
        found = backtrack(dual, state, slope, _along(lam, step), halvings=DENSE_HALVINGS, slack=0.0)
        t = 0.5**DENSE_HALVINGS if found is None else found[2]
        lam = np.clip(lam + t * step, -LOGIT_CAP, LOGIT_CAP)
    return lam, steps, False, False


def _along(lam: np.ndarray, step: np.ndarray) -> Callable[[float], np.ndarray]:
    """The ray ``t ↦ λ + t·step`` a line search tries (unclipped)."""
    return lambda t: lam + t * step


def _blocks(
    Af: sp.csc_matrix, lo: np.ndarray, hi: np.ndarray, target: np.ndarray, variance: np.ndarray, ids: np.ndarray, lam: np.ndarray | None = None,
) -> list[_Block]:
    """The rows that reach a free bit, grouped by block id (each bit's row within its block),
    their multipliers started at ``lam`` (one per row; zeros without)."""
    R = Af.tocsr()
    width = np.diff(R.indptr)
    out = []
    for b in np.unique(ids[width > 0]):
        rows = np.flatnonzero((ids == b) & (width > 0))
        sub = R[rows].tocsc()
        counts = np.diff(sub.indptr)
        if counts.max(initial=0) > 1:
            raise ValueError(f"block {b}: a bit is in two of its rows")
        idx = np.flatnonzero(counts)
        row = sub.indices[sub.indptr[idx]]
        out.append(_Block(idx, row, lo[rows], hi[rows], target[rows], variance[rows], np.zeros(len(rows)) if lam is None else lam[rows].copy()))
    return out


def _row_solve(base: np.ndarray, b: _Block) -> tuple[np.ndarray, float]:
    """Per row of block ``b`` the multiplier minimising the dual with the other blocks fixed, and
    how far the block was off before: the most any row's expected count moves when the block is
    solved (expected records; zero exactly at the optimum, whether a row ends on its target, on a
    bound or free with ``λ = 0``). A soft row solves ``E(λ) + vλ = t``, and when that leaves its
    bounds ``E(λ) = bound``; a hard row ``E(λ) = lo`` or ``hi`` when ``E(0)`` breaks it, else
    ``λ = 0``."""
    n_rows = len(b.lo)
    soft = ~np.isnan(b.target)

    def expected(lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = expit(base + lam[b.row])
        return np.bincount(b.row, q, n_rows), np.bincount(b.row, q * (1.0 - q), n_rows)

    e_start, _ = expected(b.lam)
    lam = b.lam
    if soft.any():
        lam = _newton(expected, np.where(soft, b.target, np.nan), np.where(soft, b.variance, 0.0), lam)
    e_now, _ = expected(lam)
    reference = np.where(soft, e_now, expected(np.zeros(n_rows))[0])
    goal = np.where(reference < b.lo, b.lo, np.where(reference > b.hi, b.hi, np.nan))
    settled = np.isnan(goal)
    lam = _newton(expected, goal, np.zeros(n_rows), np.where(settled, np.where(soft, lam, 0.0), lam))
    e_end, _ = expected(lam)
    return lam, float(np.abs(e_end - e_start).max(initial=0.0))


def _newton(expected, goal: np.ndarray, v: np.ndarray, start: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Solve ``E(λ) + vλ = goal`` for the rows whose ``goal`` is not NaN (others keep ``start``):
    Newton steps kept inside a bracket that halves when a step leaves it."""
    active = ~np.isnan(goal)
    if not active.any():
        return start
    lam = start.copy()
    low, high = np.full(len(lam), -LOGIT_CAP), np.full(len(lam), LOGIT_CAP)
    for _ in range(NEWTON_STEPS):
        e, de = expected(lam)
        g = np.where(active, e + v * lam - np.nan_to_num(goal), 0.0)
        if np.abs(g).max(initial=0.0) <= 1e-9:
            break
        low = np.where(g < 0, lam, low)
        high = np.where(g > 0, lam, high)
        step = lam - g / np.maximum(de + v, 1e-300)
        inside = (step > low) & (step < high)
        lam = np.where(active, np.where(inside, step, 0.5 * (low + high)), lam)
    return lam


def _violation(A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, p: np.ndarray) -> float:
    x = A @ p
    return float(np.maximum(np.maximum(lo - x, x - hi), 0.0).max(initial=0.0))
