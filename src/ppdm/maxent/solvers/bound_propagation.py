"""Bound propagation: the box every solution of some linear rows lies in, tightened row by row.

One implementation for every caller: the maximum-entropy solver's forced types (below), the exact
search's whole counts (:mod:`ppdm.exact.propagate`), the proved intervals of regression targets
(:mod:`ppdm.exact.target_bounds`) and the proved members (:mod:`ppdm.exact.membership`).

Given rows ``lower ≤ A x ≤ upper`` (either side may be infinite) and a box ``lo ≤ x ≤ hi`` every
solution meets, each row's least activity ``Σ_i min(a_i lo_i, a_i hi_i)`` leaves its variables the
room ``upper − least``, its largest activity the room ``most − lower``; for a coefficient a_j > 0

    x_j ≤ lo_j + (upper − least) / a_j,      x_j ≥ hi_j − (most − lower) / a_j,

and for a_j < 0 the two rooms trade places (over |a_j|). Each step keeps every solution inside the
box, so stopping at any round is sound; repeating tightens the bounds of every record a tree's leaf
decides once the others in that leaf are decided, leaf after leaf and tree after tree. Whole-number
variables round each bound inwards (⌈·⌉ below, ⌊·⌋ above): exactly, in integers, when the rows'
coefficients are integers (``int64`` matrices), else up to :data:`~ppdm.defaults.WHOLE`.

Rows come in *blocks* read in turn within a round (a Gauss–Seidel step between blocks: a block
reads the bounds the blocks before it left); within a block every row reads the bounds the block
began with (a Jacobi step). Only the rows with a variable whose bounds moved since the block was
last read are read again: a row whose variables all kept their bounds gives the bounds it gave
before, already applied. So the bounds are those of reading every row every round, at the cost of
the rows that can still move (after the first few rounds of a 100,000-row forest audit a handful
of leaves still move, while a full round over its 4.5 million entries took 0.3 s).

**Forced types** (:func:`forced_types`). On a one-cell-per-group problem
(:mod:`ppdm.maxent.solvers.forest_solve`) every feasible distribution P over the live types
satisfies each equality row Σ_j a_kj P_j = b_k (a ≥ 0) and each cell's total Σ_{j ∈ C} P_j = ρ_C:
the rows are one block, the cells the next. A type whose upper bound falls to 0 carries no mass at
the maximum-entropy optimum either (paper 000 §4: the estimate is the maximum-entropy distribution
among those meeting the rows): a stronger form of the presolve's saturated-row rule
(:mod:`ppdm.maxent.solvers.factored_presolve`). Fixing such types at 0 before Newton's method spares
it chasing them: their multipliers would run off to infinity. The rows of a forest over bootstrap
samples (the multiplicities make no two records alike) can force more types than propagation
proves; the linear programme of :mod:`ppdm.maxent.solvers.face` finds all of them, but takes
minutes where propagation takes about a second (100 trees of depth 10 over Adult: three quarters
of them), so the solver asks it only when Newton's chase stalls.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ppdm.defaults import WHOLE
from ppdm.errors import check_options

__all__ = ["FORCED", "Propagated", "PropagationOptions", "RowBlock", "forced_types", "propagate_bounds"]


@dataclass(frozen=True)
class PropagationOptions:
    """``rounds``: at most this many rounds over the rows; ``time_limit``: seconds (``None``: no
    limit); ``tolerance``: stop once no bound moves by more than this times the problem's scale
    (by default its widest box, at least 1); ``integer``: the variables are whole numbers (bounds
    rounded inwards); ``chunk``: entries read at once (the round's temporaries stay in the cache:
    whole rounds over millions of entries spent as much time faulting in fresh pages as computing)."""

    rounds: int = 1000
    time_limit: float | None = None
    tolerance: float = 1e-9
    integer: bool = False
    chunk: int = 1 << 16

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


@dataclass(frozen=True)
class RowBlock:
    """Rows ``lower ≤ matrix x ≤ upper`` read together (``±inf``: no bound on that side)."""

    matrix: sp.csr_matrix
    lower: np.ndarray
    upper: np.ndarray


@dataclass
class Propagated:
    """Propagated bounds, the rounds taken, whether they reached a fixed point, and ``empty``: a
    variable the rows leave no value (its bounds crossed), or ``None``."""

    lo: np.ndarray
    hi: np.ndarray
    rounds: int
    converged: bool
    seconds: float
    empty: int | None = None


def propagate_bounds(
    blocks: Sequence[RowBlock], lo: np.ndarray, hi: np.ndarray, options: PropagationOptions | None = None, *,
    scale: float | None = None, crossing: float | None = None,
) -> Propagated:  # fmt: skip
    """Bound propagation of the ``blocks`` over the box ``[lo, hi]`` (module docstring).

    ``scale``: what ``options.tolerance`` is a share of (default the widest box, at least 1);
    ``crossing``: a variable whose lower bound passes its upper by more than this (default the
    tolerance × scale) has no value: propagation stops there, bounds as they are, ``empty`` naming
    it; a smaller crossing is rounding, the upper bound raised to meet the lower."""
    opts = options or PropagationOptions()
    start = time.monotonic()
    exact = opts.integer and all(np.issubdtype(blk.matrix.dtype, np.integer) for blk in blocks)
    L, U = _box(lo, hi, opts.integer, exact)
    width = float(np.max(U - L, initial=0.0))
    still = opts.tolerance * (max(width, 1.0) if scale is None else scale)
    cross = still if crossing is None else crossing
    prepared = [_prepared(blk, opts.integer, exact) for blk in blocks]
    pending = [np.flatnonzero(np.diff(p[0].indptr)) for p in prepared]  # rows to read: at first every row with an entry
    rounds, converged = 0, not any(len(p) for p in pending)
    while not converged and rounds < opts.rounds:
        if opts.time_limit is not None and time.monotonic() - start > opts.time_limit:
            break
        rounds += 1
        L0, U0 = L, U
        for k, (A, _, low, up) in enumerate(prepared):
            new_L, new_U = _block_round(A, low, up, pending[k], L, U, opts, exact)
            if (new_L > new_U + cross).any():
                return Propagated(new_L, new_U, rounds, False, time.monotonic() - start, int(np.argmax(new_L - new_U)))
            new_U = np.maximum(new_U, new_L)
            step = np.flatnonzero((new_L != L) | (new_U != U))
            L, U = new_L, new_U
            pending[k] = np.zeros(0, dtype=np.intp)
            if step.size:
                pending = [_rows_of(p[1], step, rows) for p, rows in zip(prepared, pending)]
        moved = max(float(np.max(np.abs(L - L0), initial=0.0)), float(np.max(np.abs(U - U0), initial=0.0)))
        converged = moved <= still or not any(len(rows) for rows in pending)
    return Propagated(L, U, rounds, converged, time.monotonic() - start)


def _box(lo: np.ndarray, hi: np.ndarray, integer: bool, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """The starting box (a copy), rounded inwards for whole variables."""
    if exact:
        return np.ceil(np.asarray(lo, dtype=float) - WHOLE).astype(np.int64), np.floor(np.asarray(hi, dtype=float) + WHOLE).astype(np.int64)
    L, U = np.asarray(lo, dtype=float).copy(), np.asarray(hi, dtype=float).copy()
    return (np.ceil(L - WHOLE), np.floor(U + WHOLE)) if integer else (L, U)


#: A row side with no bound, in integers (far from overflow when activities are added to it).
_NO_BOUND = np.iinfo(np.int64).max // 4


def _prepared(blk: RowBlock, integer: bool, exact: bool) -> tuple[sp.csr_matrix, sp.csc_matrix, np.ndarray, np.ndarray]:
    """A block's matrix (no explicit zeros: a zero coefficient says nothing of its variable), its
    columns, and its row bounds (in integers, rounded inwards: a whole activity meets them alike)."""
    A = sp.csr_matrix(blk.matrix, dtype=np.int64 if exact else float, copy=True)
    A.sum_duplicates()
    A.eliminate_zeros()
    lower, upper = np.asarray(blk.lower, dtype=float), np.asarray(blk.upper, dtype=float)
    if exact:
        low = np.where(np.isfinite(lower), np.ceil(lower - WHOLE), -_NO_BOUND).astype(np.int64)
        up = np.where(np.isfinite(upper), np.floor(upper + WHOLE), _NO_BOUND).astype(np.int64)
        return A, A.tocsc(), low, up
    return A, A.tocsc(), lower, upper


def _block_round(
    A: sp.csr_matrix, lower: np.ndarray, upper: np.ndarray, rows: np.ndarray, L: np.ndarray, U: np.ndarray, opts: PropagationOptions, exact: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """The bounds after one Jacobi step of the block's ``rows`` (sorted, none empty)."""
    new_L, new_U = L.copy(), U.copy()
    if not rows.size:
        return new_L, new_U
    for part in _chunks(np.diff(A.indptr)[rows], rows, opts.chunk):
        low, high, v = _row_bounds(A, lower, upper, part, L, U, exact)
        if opts.integer and not exact:
            low, high = np.ceil(low - WHOLE), np.floor(high + WHOLE)
        np.fmax.at(new_L, v, low)  # fmax/fmin: an undefined bound (∞ − ∞ beside an open box) is none
        np.fmin.at(new_U, v, high)
    return new_L, new_U


def _row_bounds(
    A: sp.csr_matrix, lower: np.ndarray, upper: np.ndarray, rows: np.ndarray, L: np.ndarray, U: np.ndarray, exact: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per entry of ``rows``: the bounds its row gives its variable and the variable's index."""
    start, length = A.indptr[rows], np.diff(A.indptr)[rows]
    idx = _ranges(start, length)
    r = np.repeat(np.arange(len(rows)), length)
    v, a = A.indices[idx], A.data[idx]
    positive = a > 0
    own_least = np.where(positive, a * L[v], a * U[v])
    own_most = np.where(positive, a * U[v], a * L[v])
    first = np.cumsum(length) - length
    room_up = upper[rows][r] - np.add.reduceat(own_least, first)[r]  # how much more the row can take above its least
    room_down = np.add.reduceat(own_most, first)[r] - lower[rows][r]  # how much it must give up below its most
    size = np.abs(a)
    if exact:
        room_up, room_down = np.minimum(room_up, _NO_BOUND), np.minimum(room_down, _NO_BOUND)
        up, down = np.floor_divide(np.where(positive, room_up, room_down), size), np.floor_divide(np.where(positive, room_down, room_up), size)
        with np.errstate(invalid="ignore"):
            return U[v] - down, L[v] + up, v
    # in floating point each room is widened by a bound on its rounding, and so is every result:
    # the bounds then hold every exact solution, however many rounds feed them (unwidened, rounding
    # compounds from round to round: over a 100-tree forest's rows with multiplicities up to 8 it
    # grew about fivefold a round, and after 20 rounds bounds excluded the training data itself)
    # Where every term is a whole number (counts in records, whole coefficients) the sums are exact
    # and nothing is widened, so that a bound reaching 0 stays 0.
    slack_up = _rounding(length, first, own_least, upper[rows])[r]
    slack_down = _rounding(length, first, own_most, lower[rows])[r]
    with np.errstate(invalid="ignore"):
        up = _outward_quotient(np.where(positive, room_up + slack_up, room_down + slack_down), size)
        down = _outward_quotient(np.where(positive, room_down + slack_down, room_up + slack_up), size)
        return _outward(U[v], -down), _outward(L[v], up), v


def _rounding(length: np.ndarray, first: np.ndarray, terms: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Per row, twice a bound on the rounding error of ``bound − Σ terms`` (the row's ``length``
    terms from ``first``): |fl(Σ) − Σ| ≤ γ_{n−1} Σ|x_i|, γ_k = k·u/(1 − k·u) (Higham, *Accuracy
    and Stability of Numerical Algorithms*, 2002, §4.2), plus the bound's own rounding (a
    right-hand side such as k/n is stored to within u of itself); 0 where the bound and every term
    are whole numbers below 2⁵³, whose sums are exact."""
    with np.errstate(invalid="ignore"):
        inexact = np.add.reduceat((terms != np.round(terms)) | (np.abs(terms) >= _EXACT), first) > 0
        inexact |= (bound != np.round(bound)) | (np.abs(bound) >= _EXACT)
        return np.where(inexact, 2 * (length + 2) * _U * (np.add.reduceat(np.abs(terms), first) + np.abs(bound)), 0.0)


def _outward_quotient(room: np.ndarray, size: np.ndarray) -> np.ndarray:
    """``room / size`` rounded away from zero (exact when ``size`` divides a whole ``room``)."""
    q = room / size
    exact = (room == np.round(room)) & (np.abs(room) < _EXACT) & (np.mod(room, size) == 0)
    return np.where(exact, q, q + 2 * _U * np.abs(q))


def _outward(x: np.ndarray, step: np.ndarray) -> np.ndarray:
    """``x + step`` rounded away from ``x`` (exact on whole numbers)."""
    total = x + step
    exact = (x == np.round(x)) & (step == np.round(step)) & (np.abs(total) < _EXACT)
    return np.where(exact, total, total + np.sign(step) * 2 * _U * (np.abs(x) + np.abs(step)))


#: The unit roundoff of float64, and the magnitude below which whole numbers add exactly.
_U = float(np.finfo(float).eps) / 2
_EXACT = 2.0**52


def _chunks(length: np.ndarray, rows: np.ndarray, chunk: int) -> list[np.ndarray]:
    """``rows`` cut into runs of about ``chunk`` entries (a longer row alone)."""
    first = np.cumsum(length) - length
    cuts = np.unique(np.searchsorted(first, np.arange(chunk, int(first[-1]) + 1, chunk)))
    return np.split(rows, cuts[(cuts > 0) & (cuts < len(rows))])


def _rows_of(by_var: sp.csc_matrix, cols: np.ndarray, already: np.ndarray) -> np.ndarray:
    """The rows (sorted, distinct) in ``already`` or with an entry in any of the columns ``cols``."""
    start = by_var.indptr[cols]
    mark = np.zeros(by_var.shape[0], dtype=bool)
    mark[by_var.indices[_ranges(start, by_var.indptr[cols + 1] - start)]] = True
    mark[already] = True
    return np.flatnonzero(mark)


def _ranges(start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The indices ``start[i] … start[i] + length[i] − 1``, range after range."""
    total = int(length.sum())
    offset = np.repeat(start - (np.cumsum(length) - length), length)
    return np.arange(total, dtype=np.int64) + offset


#: Forced types: at most 50 rounds (each can only tighten; most types are forced in the first few:
#: 100 Adult trees of depth 10, 11,198 after one round, 12,485 after 50, 12,612 after 200), still
#: once no bound moves by more than 1e-13 of the largest cell's mass.
FORCED = PropagationOptions(rounds=50, tolerance=1e-13)

#: A type is forced to 0 when its upper bound is at most this share of its cell's mass (bounds are
#: computed in floating point: rounding leaves ~1e-16 where the exact bound is 0).
TIGHT = 1e-9


def forced_types(
    A: sp.csr_matrix, b: np.ndarray, cell_start: np.ndarray, rho: np.ndarray, alive: np.ndarray, options: PropagationOptions = FORCED,
) -> np.ndarray:
    """Which types (columns of ``A``) every feasible distribution leaves at 0.

    ``A`` (rows × types, non-negative) and ``b``: the equality rows; types are ordered by cell,
    ``cell_start`` (cells + 1) the first type of each cell, ``rho`` each cell's mass; ``alive``:
    the types not already fixed at 0. Returns a boolean mask over the types, ``alive`` excluded.
    The rows are read first, then the cells, each round; a crossing bound is rounding (the rows
    hold for the true distribution), never a stop."""
    n = A.shape[1]
    if A.nnz == 0 or A.data.min() < 0:
        return np.zeros(n, dtype=bool)
    cell = np.repeat(np.arange(len(rho)), np.diff(cell_start))
    cells = sp.csr_matrix((np.ones(n), (cell, np.arange(n))), shape=(len(rho), n))
    unit = _records_unit(rho, b)
    if unit is not None:
        rho, b = np.round(rho / unit), np.round(b / unit)
    blocks = [RowBlock(sp.csr_matrix(A), b, b), RowBlock(cells, rho, rho)]
    found = propagate_bounds(blocks, np.zeros(n), np.where(alive, rho[cell], 0.0), options, scale=float(rho.max(initial=0.0)), crossing=np.inf)
    return alive & (found.hi <= TIGHT * rho[cell])


def _records_unit(rho: np.ndarray, b: np.ndarray) -> float | None:
    """The share of one record when every cell's mass and right-hand side is a whole number of
    them (the smallest cell holding one record, shares k/n): in records the bounds are whole numbers
    wherever the coefficients are, and their sums exact. ``None`` otherwise (shares as given)."""
    positive = rho[rho > 0]
    if not len(positive):
        return None
    unit = float(positive.min())
    whole = np.concatenate([rho, b]) / unit
    return unit if np.abs(whole - np.round(whole)).max(initial=0.0) <= 1e-6 else None
