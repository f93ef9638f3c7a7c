"""The face of a forest problem: every type no distribution meeting the rows can fill.

Over the distributions that meet the published rows, {P ≥ 0 : A P = b, Σ_{t ∈ C} P_t = ρ_C for
every cell C}, a type is *forced* (to 0) when every one of them leaves it empty; the
maximum-entropy distribution fills every other type, so its support is the smallest face of
that polytope (the *facial set* of log-linear models: Fienberg & Rinaldo, "Maximum likelihood
estimation in log-linear models", Ann. Statist. 2012; Geyer, "Likelihood inference in
exponential families and directions of recession", EJS 2009). Newton's method cannot reach a
forced type's 0, only chase it; bound propagation (:mod:`ppdm.maxent.solvers.bound_propagation`) finds
most forced types cheaply, this module finds all of them with one linear programme.

It needs one distribution P⁰ that meets the rows: the training data's own (every row the model
publishes was counted on it). Moves D = P − P⁰ between such distributions form the cone

    {D : A D = 0, Σ_{t ∈ C} D_t = 0 for every cell, D_t ≥ 0 where P⁰_t = 0}

(a type P⁰ fills can move either way, so it is free), and a type P⁰ leaves empty is free iff some
move has D_t > 0. The cone is closed under sums and scaling, so max Σ min(D_t, 1) over those
types reaches 1 on every free one at once and 0 on every forced one. Each cell's best-filled type
(its *pivot*) absorbs the cell's sum, D_pivot = −Σ_{others} D_t: the programme has one column
A_t − A_pivot per other live type and no cell rows (50 trees of depth 10 over Adult: 14,832
columns, 2,739 rows, 103–113 s with HiGHS' dual simplex; 10 trees: 12,031 columns, 0.3 s).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

#: HiGHS methods tried in turn, without presolve: with it, the same programme (50 trees of depth 10
#: over Adult) ended "model status unknown" in 6 of 13 runs of the dual simplex and 1 of 2 of the
#: interior point; without, in none of 4 (and 103–113 s instead of 124–135 s).
METHODS = ("highs-ds", "highs-ipm")

#: Tolerance of the dual certificate that proves the forced types empty (see :func:`_certified`).
CERTIFICATE = 1e-7

#: Mass below which a type of the feasible point counts as empty (the data gives each record 1/n).
EMPTY = 1e-9


def forced_by_lp(A: sp.spmatrix, cell_of_type: np.ndarray, alive: np.ndarray, feasible: np.ndarray, time_limit: float = 600.0) -> np.ndarray | None:
    """Every live type that no distribution meeting the rows can fill, as a mask over types.

    ``A``: rows × types (the types of one cell consecutive or not); ``cell_of_type``: each type's
    cell; ``alive``: the types not already known to be forced; ``feasible``: a distribution over
    the types meeting every row and cell total, 0 outside ``alive`` (the training data's). Returns
    ``None`` when no method of :data:`METHODS` solves the programme within ``time_limit`` seconds
    (shared: a method that ends without an answer leaves the next one what is left).
    """
    if (feasible[~alive] > EMPTY).any():
        raise ValueError(f"the feasible point fills type {int(np.flatnonzero(~alive & (feasible > EMPTY))[0])}, which is marked forced")
    columns, pivots = _columns_and_pivots(cell_of_type, alive, feasible)
    forced = np.zeros(len(alive), dtype=bool)
    signed = feasible[columns] <= EMPTY  # the types only a move onto them can fill
    if not signed.any():
        return forced
    A = sp.csc_matrix(A)
    moves = (A[:, columns] - A[:, pivots]).tocsr()
    moves = moves[np.diff(moves.indptr) > 0]
    free = _free(moves, signed, time_limit)
    if free is None:
        return None
    forced[columns[signed][~free]] = True
    return forced


def _columns_and_pivots(cell_of_type: np.ndarray, alive: np.ndarray, feasible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The live types other than their cell's pivot (the live type P⁰ fills most), and each one's pivot."""
    live = np.flatnonzero(alive)
    order = live[np.lexsort((-feasible[live], cell_of_type[live]))]
    cells = cell_of_type[order]
    first = np.r_[True, cells[1:] != cells[:-1]]
    if (feasible[order[first]] <= EMPTY).any():
        cell = int(cells[first][feasible[order[first]] <= EMPTY][0])
        raise ValueError(f"the feasible point leaves cell {cell} empty: it does not meet the cell's total")
    pivot_of_cell = np.full(int(cell_of_type.max(initial=-1)) + 1, -1)
    pivot_of_cell[cells[first]] = order[first]
    columns = order[~first]
    return columns, pivot_of_cell[cell_of_type[columns]]


def _free(moves: sp.csr_matrix, signed: np.ndarray, time_limit: float) -> np.ndarray | None:
    """For each signed column, whether some D with ``moves`` D = 0, D ≥ 0 on the signed columns has D > 0 there.

    Maximise Σ s over D = u + s on the signed columns (u ≥ 0, 0 ≤ s ≤ 1; D free elsewhere): s
    repeats its column of ``moves``, so the programme keeps only the rows of ``moves`` (a row per
    s ≤ D instead made it 40 % slower on 50 trees of depth 10 over Adult).
    """
    n, k = moves.shape[1], int(signed.sum())
    problem = {
        "c": np.concatenate([np.zeros(n), -np.ones(k)]),
        "A_eq": sp.hstack([moves, moves[:, np.flatnonzero(signed)]], format="csr"),
        "b_eq": np.zeros(moves.shape[0]),
        "bounds": np.column_stack([np.concatenate([np.where(signed, 0.0, -np.inf), np.zeros(k)]), np.concatenate([np.full(n, np.inf), np.ones(k)])]),
    }
    deadline = time.perf_counter() + time_limit  # one budget for every method tried
    for method in METHODS:
        left = deadline - time.perf_counter()
        if left <= 0:
            return None
        res = linprog(**problem, method=method, options={"time_limit": left, "presolve": False})
        if res.status == 0:
            free = res.x[n:] > 0.5
            if _certified(moves, signed, ~free, res.eqlin.marginals):
                return free
        if res.status == 1:  # out of time: another method would be no faster
            return None
    return None


def _certified(moves: sp.csr_matrix, signed: np.ndarray, forced: np.ndarray, y: np.ndarray) -> bool:
    """Whether the programme's row duals ``y`` prove every ``forced`` signed column empty.

    With r = −movesᵀ y, every move D has Σ r_j D_j = 0; dual feasibility gives r = 0 on the
    unsigned columns, r ≥ 0 on the signed ones and r ≥ 1 on those left at s = 0, so such a D has
    r_j D_j ≤ Σ |r_F| |D_F| there (F: the unsigned columns and the signed ones with r < 0). Any
    positive r_j proves D_j = 0 when the others are exact; the check asks r_j ≥ 1/2 (HiGHS' own
    tolerance leaves r a few 10⁻⁷ short of 1 when y is large: 1.8·10⁵ on 100 bootstrap trees of
    depth 5 over 1,000 Adult rows, where requiring 1 − 10⁻⁷ refused a valid proof) and the
    others to :data:`CERTIFICATE`. Feasible distributions differ by at most 2 in total mass, so a
    forced type then holds at most 4·CERTIFICATE of it: the answer is a proof rather than the
    solver's word.
    """
    r = -(moves.T @ y)
    on_signed = r[np.flatnonzero(signed)]
    return bool(
        np.abs(r[~signed]).max(initial=0.0) <= CERTIFICATE
        and on_signed.min(initial=0.0) >= -CERTIFICATE
        and on_signed[forced].min(initial=1.0) >= 0.5
    )
