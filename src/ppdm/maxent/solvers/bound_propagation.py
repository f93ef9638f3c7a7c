"""Bound propagation: types that no distribution meeting the rows can give any mass.

On a one-cell-per-group problem (:mod:`ppdm.maxent.solvers.forest_solve`) every feasible distribution P
over the live types satisfies each equality row Σ_j a_kj P_j = b_k (a ≥ 0) and each cell's total
Σ_{j ∈ C} P_j = ρ_C. Given bounds lb ≤ P ≤ ub that every feasible P meets, each row bounds each of
its types by the others' bounds,

    P_j ≤ lb_j + (b_k − Σ_i a_ki lb_i) / a_kj,      P_j ≥ ub_j − (Σ_i a_ki ub_i − b_k) / a_kj,

and each cell likewise (P_j ≤ ρ_C − Σ_{i ≠ j} lb_i, P_j ≥ ρ_C − Σ_{i ≠ j} ub_i). Repeating tightens
the bounds of every record a tree's leaf decides once the others in that leaf are decided, leaf
after leaf and tree after tree: a stronger form of the presolve's saturated-row rule
(:mod:`ppdm.maxent.solvers.factored_presolve`). Every bound holds for every feasible P, so a type whose
upper bound falls to 0 carries no mass at the maximum-entropy optimum either (paper 000 §4: the
estimate is the maximum-entropy distribution among those meeting the rows). Fixing such types at 0
before Newton's method spares it chasing them: their multipliers would run off to infinity.

The rows of a forest over bootstrap samples (the multiplicities make no two records alike) can
force more types than propagation proves; the linear programme of :mod:`ppdm.maxent.solvers.face` finds
all of them, but takes minutes where propagation takes about a second (100 trees of depth 10 over
Adult: three quarters of them), so the solver asks it only when Newton's chase stalls.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: Rounds of propagation at most (each round can only tighten bounds; most types are forced in the
#: first few: 100 Adult trees of depth 10, 11,198 after one round, 12,485 after 50, 12,612 after 200).
ROUNDS = 50

#: A type is forced to 0 when its upper bound is at most this share of its cell's mass (bounds are
#: computed in floating point: rounding leaves ~1e-16 where the exact bound is 0).
TIGHT = 1e-9

#: Propagation stops once no bound moves by more than this share of the largest cell's mass.
STILL = 1e-13


def forced_types(A: sp.csr_matrix, b: np.ndarray, cell_start: np.ndarray, rho: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """Which types (columns of ``A``) every feasible distribution leaves at 0.

    ``A`` (rows × types, non-negative) and ``b``: the equality rows; types are ordered by cell,
    ``cell_start`` (cells + 1) the first type of each cell, ``rho`` each cell's mass; ``alive``:
    the types not already fixed at 0. Returns a boolean mask over the types, ``alive`` excluded.
    """
    n = A.shape[1]
    if A.nnz == 0 or A.data.min() < 0:
        return np.zeros(n, dtype=bool)
    cell = np.repeat(np.arange(len(rho)), np.diff(cell_start))
    starts = cell_start[:-1]
    AT = sp.csr_matrix(A.T)
    lb = np.zeros(n)
    ub = np.where(alive, rho[cell], 0.0)
    still = STILL * float(rho.max(initial=0.0))
    for _ in range(ROUNDS):
        new_lb, new_ub = _row_bounds(A, AT, b, lb, ub)
        new_lb, new_ub = _cell_bounds(new_lb, new_ub, rho, cell, starts)
        moved = max(float(np.abs(new_ub - ub).max(initial=0.0)), float(np.abs(new_lb - lb).max(initial=0.0)))
        lb, ub = new_lb, new_ub
        if moved <= still:
            break
    return alive & (ub <= TIGHT * rho[cell])


def _row_bounds(A: sp.csr_matrix, AT: sp.csr_matrix, b: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One pass of every row over the bounds: each type's tightest bound from the rows it is in."""
    room_up = np.maximum(b - A @ lb, 0.0)  # how much more the row can take above the lower bounds
    room_down = np.maximum(A @ ub - b, 0.0)  # how much the row must give up below the upper bounds
    up = _min_over_rows(AT, room_up)
    down = _min_over_rows(AT, room_down)
    new_ub = np.minimum(ub, lb + up)
    new_lb = np.maximum(lb, ub - down)
    return new_lb, np.maximum(new_ub, new_lb)


def _min_over_rows(AT: sp.csr_matrix, room: np.ndarray) -> np.ndarray:
    """Per type (row of ``AT``), min over its rows k of room_k / a_kj (∞ for a type in no row)."""
    out = np.full(AT.shape[0], np.inf)
    present = np.diff(AT.indptr) > 0
    if AT.nnz:
        ratio = room[AT.indices] / AT.data
        out[present] = np.minimum.reduceat(ratio, AT.indptr[:-1][present])
    return out


def _cell_bounds(lb: np.ndarray, ub: np.ndarray, rho: np.ndarray, cell: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's total ρ_C bounds each of its types by the others' bounds."""
    if not len(cell):
        return lb, ub
    sum_lb = np.add.reduceat(lb, starts)[cell]
    sum_ub = np.add.reduceat(ub, starts)[cell]
    new_ub = np.minimum(ub, rho[cell] - (sum_lb - lb))
    new_lb = np.maximum(lb, rho[cell] - (sum_ub - ub))
    return new_lb, np.maximum(new_ub, new_lb)
