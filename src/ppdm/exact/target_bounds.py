"""Proved intervals of numeric targets under linear rows: ``lower ≤ A y ≤ upper``, ``lo ≤ y ≤ hi``.

For every record i, ``[min y_i, max y_i]`` over every y meeting the rows (the rows a published
regressor gives, :mod:`ppdm.exact.target_rows`; ``A ≥ 0``). Two ways, both sound:

* :func:`propagate` — interval constraint propagation (bound propagation over the rows,
  :func:`ppdm.maxent.solvers.bound_propagation.propagate_bounds`): a row ``Σ_j a_j y_j ≥ b`` gives
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
import scipy.sparse as sp

from ppdm.errors import PpdmError
from ppdm.maxent.constraints.interchangeable import same_columns
from ppdm.maxent.solvers.bound_propagation import Propagated, PropagationOptions, RowBlock, propagate_bounds

__all__ = ["LPBounds", "Propagated", "PropagationOptions", "interchangeable", "lp_bounds", "propagate"]


def propagate(
    matrix: sp.csr_matrix, lower: np.ndarray, upper: np.ndarray, lo: np.ndarray, hi: np.ndarray, options: PropagationOptions | None = None,
) -> Propagated:  # fmt: skip
    """Bound propagation of ``lower ≤ matrix y ≤ upper`` over the box ``[lo, hi]`` (module docstring;
    :func:`~ppdm.maxent.solvers.bound_propagation.propagate_bounds`, the rows one block).

    Raises :class:`~ppdm.errors.PpdmError` when the rows leave some record no value (they
    contradict each other or the box)."""
    opts = options or PropagationOptions()
    found = propagate_bounds([RowBlock(sp.csr_matrix(matrix, dtype=float), lower, upper)], lo, hi, opts)
    if found.empty is not None:
        i = found.empty
        raise PpdmError(f"the rows leave record {i} no value (between {found.lo[i]:g} and {found.hi[i]:g}): they contradict each other or the domain")
    if opts.integer:
        return found
    width = float(np.max(hi - lo)) if len(lo) else 0.0
    slack = 1e-12 * max(width, 1.0)  # float rounding of the sums: keep the bounds outer
    found.lo, found.hi = np.maximum(found.lo - slack, lo), np.minimum(found.hi + slack, hi)
    return found


def interchangeable(matrix: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A group id per record: records with the same column of ``matrix`` and the same box
    (:func:`~ppdm.maxent.constraints.interchangeable.same_columns`), numbered in the order they first occur."""
    first, of = same_columns(matrix, np.c_[lo, hi])
    rank = np.empty(len(first), dtype=np.intp)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[of]


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
