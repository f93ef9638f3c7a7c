"""Presolve for the factored maximum-entropy problem: pinned groups out, forced zeros, merged groups.

The rules of :mod:`ppdm.maxent.solvers.presolve`, at the level of types (a row's coefficient on P(q, t)
does not depend on q), so that the optimum is not on the boundary where the dual multipliers
run to infinity:

* *pinned groups* (:class:`~ppdm.maxent.solvers.factored.FactoredProblem`) leave the problem: what they
  put into every row is subtracted from its right-hand side;
* a *zero row* (equality, non-negative coefficients, right-hand side 0) forces every type in it
  to 0, for every group;
* a *dominated pair*: equalities r₁, r₂ with non-negative coefficients, A[r₂] ≤ A[r₁] on every
  type and b₁ = b₂, make (r₁ − r₂) a zero row (a pure leaf: rate = leaf size); r₁ is then implied;
* a *saturated row* (equality with one positive coefficient a, right-hand side a·Σ P(q) over the
  groups that can put anything into it: every such group puts everything into it) forces the
  other types of the cells it touches to 0 and takes from each of those groups the cells it does
  not touch.

A group left without a possible type makes the problem infeasible: the error names the rows
that removed its types. Groups that may take exactly the same cells are merged (the objective
is symmetric in them); their weights add up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ppdm.errors import InfeasibleError
from ppdm.maxent.rows.factored_problem import Cells, FactoredProblem, reduce_by
from ppdm.maxent.solvers.presolve import TINY

#: Rounds of the presolve rules (each round can only remove types or cells).
ROUNDS = 20

#: (row, type) pairs a saturated row's reduction looks at in one go (see :func:`_kill_below_top`).
CHUNK_PAIRS = 4_000_000


@dataclass
class FactoredReduced:
    """The problem the dual sees.

    ``class_of_group`` (groups,): the merged group of every group (−1: pinned); ``weights``,
    ``access`` (merged groups × cells, CSR) and ``group_tag`` per merged group; ``cell_tag`` per
    cell (−1: a whole block); ``types`` the original index of each
    live type, ordered by cell; ``cell_start`` (cells + 1) the first live type of each cell;
    ``log_base`` per live type; ``A`` (kept rows × live types), ``b`` (pinned groups subtracted),
    ``le``, ``rows`` (indices of the kept rows). ``pinned_types``: P(t) of the pinned groups.
    """

    class_of_group: np.ndarray
    weights: np.ndarray
    access: sp.csr_matrix
    types: np.ndarray
    cell_start: np.ndarray
    log_base: np.ndarray
    type_label: np.ndarray
    A: sp.csr_matrix
    b: np.ndarray
    le: np.ndarray
    rows: np.ndarray
    pinned_types: np.ndarray
    group_tag: np.ndarray
    cell_tag: np.ndarray

    @property
    def n_cells(self) -> int:
        return len(self.cell_start) - 1

    @property
    def cell_of_type(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_cells), np.diff(self.cell_start))


class _State:
    """Which types are alive, which (group, cell) pairs remain, which rows are implied, and why."""

    def __init__(self, problem: FactoredProblem, cells: Cells, free: np.ndarray) -> None:
        self.cells = cells
        self.alive = np.isfinite(problem.base)
        access = cells.access[np.flatnonzero(free)].tocoo()
        self.pair_group = np.flatnonzero(free)[access.row]
        self.pair_cell = access.col.astype(np.intp)
        self.pair_alive = np.ones(len(self.pair_group), dtype=bool)
        self.killed_by = np.full(problem.n_types, -1)
        self.excluded_by = np.full(len(self.pair_group), -1)
        self.n_groups = problem.n_groups

    def access(self) -> sp.csr_matrix:
        """Groups × cells, the pairs still possible (cells with a live type only)."""
        live_cell = np.bincount(self.cells.cell_of_type[self.alive], minlength=self.cells.n_cells) > 0
        keep = self.pair_alive & live_cell[self.pair_cell]
        return sp.csr_matrix(
            (np.ones(int(keep.sum())), (self.pair_group[keep], self.pair_cell[keep])), shape=(self.n_groups, self.cells.n_cells)
        )

    def kill(self, types: np.ndarray, row: np.ndarray) -> bool:
        new = self.alive[types]
        if not new.any():
            return False
        self.killed_by[types[new]] = row[new] if np.ndim(row) else row
        self.alive[types[new]] = False
        return True


def reduce_factored(problem: FactoredProblem, deadline: float | None = None) -> FactoredReduced:
    """Pinned groups out, forced zeros fixed, implied and empty rows dropped, look-alike groups merged.

    ``deadline`` (a ``time.perf_counter()`` reading): no round of reductions starts after it. Each
    round's reductions are proved, so stopping early leaves a larger problem, never a wrong one
    (100 trees over 10,000 Adult rows, a six-valued secret, no bootstrap: 34 rounds took 44 s)."""
    A, b, le, names = problem.stacked()
    cells = problem.cells()
    pinned = problem.pinned if problem.pinned is not None else np.full(problem.n_groups, -1)
    free = pinned < 0
    pinned_types = np.bincount(pinned[~free], weights=problem.weights[~free], minlength=problem.n_types).astype(float)
    b = b - A @ pinned_types
    state = _State(problem, cells, free)
    coo = A.tocoo()
    nonneg = np.ones(len(b), dtype=bool)
    nonneg[coo.row[coo.data < 0]] = False
    candidates = ~le & nonneg
    implied = np.zeros(len(b), dtype=bool)
    for _ in range(ROUNDS):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        changed = _zero_rows(A, b, candidates & ~implied, state, implied)
        changed |= _dominated_pairs(A, b, candidates & ~implied, state, implied)
        changed |= _saturated_rows(A, b, candidates & ~implied, problem.weights, state, implied)
        if not changed:
            break
    access = state.access()
    _check_every_group_has_a_type(access, free, state, names)
    return _assemble(problem, cells, A, b, le, implied, access, free, state.alive, pinned_types)


def _live_entries(A: sp.csr_matrix, rows: np.ndarray, alive: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, type, coefficient) of the positive entries of ``rows`` on live types."""
    coo = A[rows].tocoo()
    keep = alive[coo.col] & (coo.data > TINY)
    return rows[coo.row[keep]], coo.col[keep].astype(np.intp), coo.data[keep]


def _zero_rows(A: sp.csr_matrix, b: np.ndarray, candidates: np.ndarray, state: _State, implied: np.ndarray) -> bool:
    zero = np.flatnonzero(candidates & (np.abs(b) <= TINY))
    if len(zero) == 0:
        return False
    r, t, _ = _live_entries(A, zero, state.alive)
    state.kill(t, r)
    implied[zero] = True
    return True


def _dominated_pairs(A: sp.csr_matrix, b: np.ndarray, candidates: np.ndarray, state: _State, implied: np.ndarray) -> bool:
    """Rows r₁ ⊇ r₂ (coefficient-wise, on live types) with equal right-hand sides."""
    rows = np.flatnonzero(candidates)
    if len(rows) < 2:
        return False
    sub = sp.csr_matrix(A[rows] @ sp.diags(state.alive.astype(float)))
    sub.data[sub.data <= TINY] = 0.0
    sub.eliminate_zeros()
    overlap = _overlap_within(sub, _equal_runs(b[rows]))
    size = np.diff(sub.indptr)
    i, j = overlap.row, overlap.col  # r₁ = rows[i] holds every type of r₂ = rows[j]
    bi, bj = b[rows[i]], b[rows[j]]
    pick = (i != j) & (overlap.data == size[j]) & (size[j] > 0) & (np.abs(bi - bj) <= 1e-12 * np.maximum(1.0, np.abs(bi)))
    i, j = i[pick], j[pick]
    if len(i) == 0:
        return False
    diff = sp.csr_matrix(sub[i] - sub[j])
    lowest = np.minimum(diff.min(axis=1).toarray().ravel(), 0.0)
    extra = sp.csr_matrix(diff > TINY)
    identical = np.diff(extra.indptr) == 0
    dominated = (lowest >= -TINY) & (~identical | (i > j))  # of two identical rows, drop the later
    if not dominated.any():
        return False
    extra = extra[np.flatnonzero(dominated)].tocoo()
    r1 = rows[i[dominated]]
    state.kill(extra.col.astype(np.intp), r1[extra.row])
    implied[r1] = True
    return True


def _equal_runs(b: np.ndarray) -> np.ndarray:
    """A bucket per value of ``b``: values within 2·10⁻¹² (relative) of their neighbour in sorted
    order share one, so every pair :func:`_dominated_pairs` can accept is in one bucket."""
    order = np.argsort(b, kind="stable")
    sorted_b = b[order]
    gap = np.diff(sorted_b) > 2e-12 * np.maximum(1.0, np.abs(sorted_b[1:]))
    bucket = np.empty(len(b), dtype=np.int64)
    bucket[order] = np.r_[0, np.cumsum(gap)]
    return bucket


def _overlap_within(sub: sp.csr_matrix, bucket: np.ndarray) -> sp.coo_matrix:
    """Per pair of rows in one ``bucket``, how many types they share (COO; pairs across buckets are
    left out). Each row's types are renamed (bucket, type), so the product counts shared types of
    rows with equal right-hand sides only: over a forest every type sits in a row of every tree,
    and the product over all pairs took 2.4 s a round on 100 trees over Adult."""
    columns = bucket[np.repeat(np.arange(sub.shape[0]), np.diff(sub.indptr))] * sub.shape[1] + sub.indices
    _, renamed = np.unique(columns, return_inverse=True)
    support = sp.csr_matrix((np.ones(sub.nnz), renamed.ravel(), sub.indptr), shape=(sub.shape[0], int(renamed.max(initial=-1)) + 1))
    return sp.coo_matrix(support @ support.T)


def _saturated_rows(
    A: sp.csr_matrix, b: np.ndarray, candidates: np.ndarray, weights: np.ndarray, state: _State, implied: np.ndarray,
) -> bool:
    """Rows whose right-hand side is all their groups can put into them."""
    rows = np.flatnonzero(candidates & (np.abs(b) > TINY))
    r, t, v = _live_entries(A, rows, state.alive)
    if len(r) == 0:
        return False
    top = reduce_by(np.maximum, r, v, len(b), 0.0)
    low = reduce_by(np.minimum, r, v, len(b), np.inf)
    single = (top - low <= 1e-12 * top) & (top > 0)
    keep = single[r]
    r, t = r[keep], t[keep]
    touch = sp.csr_matrix((np.ones(len(r)), (r, state.cells.cell_of_type[t])), shape=(len(b), state.cells.n_cells))
    touch.data[:] = 1.0
    reached = sp.csr_matrix(state.access() @ touch.T)  # groups × rows: the row touches a cell of the group
    reached.data[:] = 1.0
    attainable = top * np.asarray(reached.T @ weights).ravel()
    saturated = single & (b >= attainable - 1e-12 * np.maximum(1.0, np.abs(b))) & (attainable > TINY)
    sat = np.flatnonzero(saturated)
    if len(sat) == 0:
        return False
    _kill_below_top(A, sat, touch, top, state)
    _exclude_untouched(sat, touch, reached, state)
    implied[sat] = True
    return True


def _kill_below_top(A: sp.csr_matrix, sat: np.ndarray, touch: sp.csr_matrix, top: np.ndarray, state: _State) -> None:
    """In every cell a saturated row touches, the types below its coefficient are 0. The (row,
    type) pairs are looked at :data:`CHUNK_PAIRS` at a time: on 100 trees over 30,162 Adult rows
    (a six-valued secret, no bootstrap) all at once they took 5.4 GB."""
    cell_of_type = state.cells.cell_of_type
    order = np.argsort(cell_of_type, kind="stable")
    start = np.searchsorted(cell_of_type[order], np.arange(state.cells.n_cells + 1))
    entries = _SortedEntries(A)
    sub = sp.csr_matrix(touch[sat])
    size = start[sub.indices + 1] - start[sub.indices]
    per_row = np.add.reduceat(size, sub.indptr[:-1]) if sub.nnz else np.zeros(len(sat), dtype=np.intp)
    per_row[np.diff(sub.indptr) == 0] = 0  # reduceat gives an empty row its next entry
    chunk = np.cumsum(per_row) // CHUNK_PAIRS
    for lo, hi in zip(*_runs(chunk)):
        part = sub[lo:hi].tocoo()
        count = start[part.col + 1] - start[part.col]
        pair = np.repeat(np.arange(len(part.row)), count)
        offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        types = order[start[part.col][pair] + offset]
        rows = sat[lo:hi][part.row][pair]
        low = entries(rows, types) < top[rows] - TINY
        state.kill(types[low].astype(np.intp), rows[low])


def _runs(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of each run of equal values in the sorted ``labels``."""
    edges = np.flatnonzero(np.diff(labels)) + 1
    return np.r_[0, edges], np.r_[edges, len(labels)]


def _exclude_untouched(sat: np.ndarray, touch: sp.csr_matrix, reached: sp.csr_matrix, state: _State) -> None:
    """A group a saturated row touches keeps only the cells that row touches.

    Per live (group, cell) pair, how many of the group's saturated rows touch the cell, counted
    at those pairs only, :data:`CHUNK_PAIRS` (pair, row) at a time: the product over every group
    and cell (groups × saturated rows × cells) took 5.4 GB and 14 s on 100 trees over 30,162
    Adult rows (a six-valued secret, no bootstrap)."""
    by_group = sp.csr_matrix(reached[:, sat])  # groups × saturated rows
    n_sat = np.diff(by_group.indptr)
    touches = _SortedEntries(sp.csr_matrix(touch[sat]))
    live = np.flatnonzero(state.pair_alive & (n_sat[state.pair_group] > 0))
    chunk = np.cumsum(n_sat[state.pair_group[live]]) // CHUNK_PAIRS
    outside = []
    for lo, hi in zip(*_runs(chunk)):
        pairs = live[lo:hi]
        g, cell = state.pair_group[pairs], state.pair_cell[pairs]
        count = n_sat[g]
        of_pair = np.repeat(np.arange(len(pairs)), count)
        offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        rows = by_group.indices[by_group.indptr[g][of_pair] + offset]
        inside = np.bincount(of_pair, weights=touches(rows, cell[of_pair]) > 0, minlength=len(pairs))
        outside.append(pairs[inside < count])
    out = np.concatenate(outside) if outside else np.zeros(0, dtype=np.intp)
    if len(out) == 0:
        return
    g = state.pair_group[out]
    state.pair_alive[out] = False
    state.excluded_by[out] = sat[by_group.indices[by_group.indptr[g]]]  # one saturated row of the group


def _lookup(M: sp.csr_matrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``M[rows[i], cols[i]]`` for every i (0 where M has no entry), by a sorted search."""
    return _SortedEntries(M)(rows, cols)


class _SortedEntries:
    """A sparse matrix's entries sorted by (row, column), for many :func:`_lookup` calls."""

    def __init__(self, M: sp.csr_matrix) -> None:
        coo = sp.coo_matrix(M)
        self.n_cols = M.shape[1]
        keys = coo.row.astype(np.int64) * self.n_cols + coo.col
        order = np.argsort(keys, kind="stable")
        self.keys, self.data = keys[order], coo.data[order]

    def __call__(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        wanted = rows.astype(np.int64) * self.n_cols + cols
        if len(self.keys) == 0:
            return np.zeros(len(wanted))
        pos = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        return np.where(self.keys[pos] == wanted, self.data[pos], 0.0)


def _check_every_group_has_a_type(access: sp.csr_matrix, free: np.ndarray, state: _State, names: list[str]) -> None:
    empty = np.flatnonzero(free & (np.diff(access.indptr) == 0))
    if len(empty) == 0:
        return
    g = int(empty[0])
    mine = np.flatnonzero(state.pair_group == g)
    reasons = set(state.excluded_by[mine][state.excluded_by[mine] >= 0].tolist())
    cell_types = np.flatnonzero(np.isin(state.cells.cell_of_type, state.pair_cell[mine]))
    reasons |= set(state.killed_by[cell_types][state.killed_by[cell_types] >= 0].tolist())
    conflict = [names[r] for r in sorted(reasons)]
    shown = ", ".join(conflict[:10]) + (" ..." if len(conflict) > 10 else "")
    raise InfeasibleError(
        f"the constraints are infeasible: group {g} has no possible value left; the rows that rule its values out: {shown or 'none (it reaches nothing)'}",
        conflict,
    )


def _assemble(
    problem: FactoredProblem, cells: Cells, A: sp.csr_matrix, b: np.ndarray, le: np.ndarray, implied: np.ndarray,
    access: sp.csr_matrix, free: np.ndarray, alive: np.ndarray, pinned_types: np.ndarray,
) -> FactoredReduced:
    used_cell = np.asarray(access.sum(axis=0)).ravel() > 0
    alive = alive & used_cell[cells.cell_of_type]
    live = np.flatnonzero(alive)
    live = live[np.argsort(cells.cell_of_type[live], kind="stable")]
    cell_ids, cell_of_live = np.unique(cells.cell_of_type[live], return_inverse=True)
    new_cell = np.full(cells.n_cells, -1)
    new_cell[cell_ids] = np.arange(len(cell_ids))
    coo = access.tocoo()
    access = sp.csr_matrix((np.ones(coo.nnz), (coo.row, new_cell[coo.col])), shape=(problem.n_groups, len(cell_ids)))
    class_of_group, weights, merged = _merge(access, problem.weights, free)
    group_tag = np.zeros(len(weights), dtype=np.intp)
    group_tag[class_of_group[free]] = problem.group_tag[free]  # merged groups share their cells, hence their tag
    sub = sp.csr_matrix(A[:, live])
    sub.eliminate_zeros()
    rows = np.flatnonzero(~implied & (np.diff(sub.indptr) > 0))
    return FactoredReduced(
        class_of_group=class_of_group,
        weights=weights,
        access=merged,
        types=live,
        cell_start=np.searchsorted(cell_of_live, np.arange(len(cell_ids) + 1)),
        log_base=problem.base[live],
        type_label=problem.type_label[live],
        A=sp.csr_matrix(sub[rows]),
        b=b[rows],
        le=le[rows],
        rows=rows,
        pinned_types=pinned_types,
        group_tag=group_tag,
        cell_tag=cells.cell_tag[cell_ids],
    )


def _merge(access: sp.csr_matrix, weights: np.ndarray, free: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
    """Classes of the free groups that take exactly the same cells; their weights and cells."""
    rng = np.random.default_rng(seed)
    signature = np.asarray(access @ rng.standard_normal((access.shape[1], 2)))
    signature = np.hstack([signature, np.diff(access.indptr)[:, None]])
    groups = np.flatnonzero(free)
    _, first, inverse = np.unique(signature[groups], axis=0, return_index=True, return_inverse=True)
    class_of_group = np.full(len(weights), -1, dtype=np.intp)
    class_of_group[groups] = inverse.ravel()
    merged_weights = np.bincount(inverse.ravel(), weights=weights[groups])
    merged = sp.csr_matrix(access[groups[first]])
    merged.sort_indices()
    return class_of_group, merged_weights, merged
