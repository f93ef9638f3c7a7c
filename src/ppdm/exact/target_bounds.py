"""Proved intervals of numeric targets under linear rows: ``lower ≤ A y ≤ upper``, ``lo ≤ y ≤ hi``.

For every record i, ``[min y_i, max y_i]`` over every y meeting the rows (the rows a published
regressor gives, :mod:`ppdm.exact.target_rows`; ``A ≥ 0``). Two ways, both sound:

* :func:`propagate` — interval constraint propagation (bound propagation over the rows, as in
  :mod:`ppdm.maxent.solvers.bound_propagation`): a row ``Σ_j a_j y_j ≥ b`` gives
  ``y_i ≥ (b − Σ_{j≠i} a_j hi_j) / a_i`` and ``Σ_j a_j y_j ≤ b'`` gives
  ``y_i ≤ (b' − Σ_{j≠i} a_j lo_j) / a_i`` (a negative ``a_j`` takes the other end of the box:
  the rows' largest and smallest activities); every row and record at once (vectorised over the
  non-zeros), repeated until no bound moves. Whole-number variables (the records of a group in
  a cell, :mod:`ppdm.exact.input_rows`) round every bound inwards after each sweep. Each step keeps every consistent y inside, so
  stopping at any round is sound: an outer bound, tight on one tree (a leaf of n records with sum
  S gives exactly ``[max(lo, S − (n−1) hi), min(hi, S − (n−1) lo)]``) but possibly wider than the
  LP when rows of several trees overlap.
* :func:`lp_bounds` — the tight bounds, one linear programme per group of interchangeable records
  (HiGHS through scipy's ``linprog``). Records with the same column of A and the same box are
  interchangeable: with T their sum over k records, ``max y_i = min(hi, max T − (k−1) lo)``
  (every split of a feasible T among them is feasible), so one LP per group and direction.
  Groups the time budget does not reach keep the propagated bounds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.errors import PpdmError, check_options


@dataclass(frozen=True)
class PropagationOptions:
    """``rounds``: at most this many sweeps over the rows; ``time_limit``: seconds (``None``: no
    limit); ``tolerance``: stop once no bound moves by more than this times the domain's width;
    ``integer``: the variables are whole numbers (bounds rounded inwards, up to 1e-6)."""

    rounds: int = 1000
    time_limit: float | None = None
    tolerance: float = 1e-9
    integer: bool = False

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


@dataclass
class Propagated:
    """Propagated bounds, the sweeps taken and whether they reached a fixed point."""

    lo: np.ndarray
    hi: np.ndarray
    rounds: int
    converged: bool
    seconds: float


def propagate(
    matrix: sp.csr_matrix, lower: np.ndarray, upper: np.ndarray, lo: np.ndarray, hi: np.ndarray, options: PropagationOptions | None = None,
) -> Propagated:  # fmt: skip
    """Bound propagation of ``lower ≤ matrix y ≤ upper`` over the box ``[lo, hi]`` (module docstring).

    Raises :class:`~ppdm.errors.PpdmError` when the rows leave some record no value (they
    contradict each other or the box)."""
    opts = options or PropagationOptions()
    start = time.monotonic()
    a = matrix.tocoo()
    nz = a.data != 0  # a zero coefficient (a target of 0) says nothing of its variable
    order = np.lexsort((a.row[nz], a.col[nz]))
    row, col, coef = a.row[nz][order], a.col[nz][order], a.data[nz][order]
    starts = np.flatnonzero(np.r_[True, col[1:] != col[:-1]]) if len(col) else np.zeros(0, dtype=np.intp)
    cols = col[starts]
    L, U = lo.astype(float).copy(), hi.astype(float).copy()
    width = float(np.max(hi - lo)) if len(lo) else 0.0
    step_tol = opts.tolerance * max(width, 1.0)
    csr = matrix.tocsr()
    plus, minus = csr.maximum(0).tocsr(), csr.minimum(0).tocsr()
    positive = coef > 0
    rounds, converged = 0, not len(coef)
    while not converged and rounds < opts.rounds:
        if opts.time_limit is not None and time.monotonic() - start > opts.time_limit:
            break
        rounds += 1
        top, bottom = plus @ U + minus @ L, plus @ L + minus @ U  # each row's largest and smallest activity
        own_top = coef * np.where(positive, U[col], L[col])
        own_bottom = coef * np.where(positive, L[col], U[col])
        from_lower = (lower[row] - top[row] + own_top) / coef  # a bound on y from the row's lower side
        from_upper = (upper[row] - bottom[row] + own_bottom) / coef
        from_below = np.where(positive, from_lower, from_upper)
        from_above = np.where(positive, from_upper, from_lower)
        new_L, new_U = L.copy(), U.copy()
        new_L[cols] = np.maximum(L[cols], np.maximum.reduceat(from_below, starts))
        new_U[cols] = np.minimum(U[cols], np.minimum.reduceat(from_above, starts))
        if opts.integer:
            new_L, new_U = np.ceil(new_L - 1e-6), np.floor(new_U + 1e-6)
        moved = max(float(np.max(new_L - L, initial=0.0)), float(np.max(U - new_U, initial=0.0)))
        L, U = new_L, new_U
        if (L > U + step_tol).any():
            i = int(np.argmax(L - U))
            raise PpdmError(f"the rows leave record {i} no value (between {L[i]:g} and {U[i]:g}): they contradict each other or the domain")
        converged = moved <= step_tol
    if opts.integer:
        return Propagated(L, U, rounds, converged, time.monotonic() - start)
    slack = 1e-12 * max(width, 1.0)  # float rounding of the sums above: keep the bounds outer
    return Propagated(np.maximum(L - slack, lo), np.minimum(U + slack, hi), rounds, converged, time.monotonic() - start)


def interchangeable(matrix: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A group id per record: records with the same column of ``matrix`` and the same box."""
    csc = matrix.tocsc()
    csc.sort_indices()
    keys = [
        csc.indices[csc.indptr[i] : csc.indptr[i + 1]].tobytes() + csc.data[csc.indptr[i] : csc.indptr[i + 1]].tobytes()
        + np.array([lo[i], hi[i]]).tobytes()
        for i in range(csc.shape[1])
    ]  # fmt: skip
    codes, _ = pd.factorize(pd.Series(keys, dtype=object))
    return np.asarray(codes, dtype=np.intp)


@dataclass
class LPBounds:
    """Bounds after the linear programmes: ``solved`` marks records whose group's LPs both ran."""

    lo: np.ndarray
    hi: np.ndarray
    solved: np.ndarray
    programmes: int
    seconds: float


def lp_bounds(
    matrix: sp.csr_matrix, lower: np.ndarray, upper: np.ndarray, lo: np.ndarray, hi: np.ndarray, *,
    start_lo: np.ndarray | None = None, start_hi: np.ndarray | None = None, records: np.ndarray | None = None,
    time_limit: float | None = None,
) -> LPBounds:  # fmt: skip
    """Tight bounds by linear programming over groups of interchangeable records (module docstring).

    ``start_lo``/``start_hi``: sound bounds already known (propagated), kept where tighter and for
    records no LP reached; ``records``: the records whose groups to solve, in that order (default:
    every record, narrowest first); ``time_limit``: seconds for all the LPs."""
    from scipy.optimize import linprog

    begin = time.monotonic()
    n = matrix.shape[1]
    out_lo = lo.astype(float).copy() if start_lo is None else start_lo.astype(float).copy()
    out_hi = hi.astype(float).copy() if start_hi is None else start_hi.astype(float).copy()
    solved = np.zeros(n, dtype=bool)
    group = interchangeable(matrix, lo, hi)
    n_groups = int(group.max()) + 1 if n else 0
    first = np.zeros(n_groups, dtype=np.intp)
    first[group[::-1]] = np.arange(n)[::-1]
    csc = matrix.tocsc()
    G = (csc[:, first]).tocsr()  # rows × groups: a group's sum T enters each row with its members' coefficient
    box_lo = np.bincount(group, weights=lo, minlength=n_groups)
    box_hi = np.bincount(group, weights=hi, minlength=n_groups)
    A_ub = sp.vstack([G, -G]).tocsr()
    b_ub = np.concatenate([upper, -lower])
    bounds = np.column_stack([box_lo, box_hi])
    wanted = np.arange(n) if records is None else np.asarray(records, dtype=np.intp)
    if records is None:
        wanted = wanted[np.argsort(out_hi - out_lo, kind="stable")]
    order = list(dict.fromkeys(int(g) for g in group[wanted]))
    width = float(np.max(hi - lo)) if n else 0.0
    slack = 1e-6 * max(width, 1.0)  # HiGHS' feasibility tolerance (1e-7 per row), kept outer
    programmes = 0
    for g in order:
        if time_limit is not None and time.monotonic() - begin > time_limit:
            break
        ends = []
        for sign in (1.0, -1.0):
            c = np.zeros(n_groups)
            c[g] = sign
            res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")  # type: ignore[call-overload]
            programmes += 1
            if res.status != 0:
                raise PpdmError(f"the linear programme for record {int(first[g])} ended with status {res.status}: {res.message}")
            ends.append(float(res.x[g]))
        t_min, t_max = ends
        members = np.flatnonzero(group == g)
        lo_g, hi_g = lo[members], hi[members]
        rest_hi = box_hi[g] - hi_g  # the other members at their largest / smallest
        rest_lo = box_lo[g] - lo_g
        out_lo[members] = np.maximum(out_lo[members], np.maximum(lo_g, t_min - rest_hi - slack))
        out_hi[members] = np.minimum(out_hi[members], np.minimum(hi_g, t_max - rest_lo + slack))
        solved[members] = True
    return LPBounds(out_lo, out_hi, solved, programmes, time.monotonic() - begin)
