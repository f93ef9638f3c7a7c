"""The factored maximum-entropy problem's data: groups, the blocks they reach, types and rows.

See :mod:`ppdm.maxent.solvers.factored` for the model (groups reach blocks, rows only see types) and its
solver; this module holds the problem (:class:`FactoredProblem`) and its cells (:class:`Cells`), so
that the dual and the presolve can use them without importing the solver.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ppdm.errors import MaxEntError
from ppdm.maxent.rows.problem import LinearBlock

#: Relative tolerance when comparing coefficients of decided rows (exact for ±1 coefficients).
SAME = 1e-12


@dataclass
class FactoredProblem:
    """Groups (weights ``weights``), what they reach, the types and the rows over the types.

    ``reach``: groups × blocks, non-zero where the group may land in the block. ``group_tag``: per
    group the tag its types must have, −1 for any. Per type: ``type_block``, ``type_tag`` (≥ 0),
    ``type_label`` (the value of interest, < ``n_labels``) and ``log_base`` (log of its base
    measure; ``None``: 1 each; ``-inf``: impossible). ``pinned``: per group a type it takes with
    certainty, or −1. Blocks of rows are :class:`~ppdm.maxent.rows.problem.LinearBlock` over P(type),
    the sum over groups of P(q, type).
    """

    weights: np.ndarray
    reach: sp.csr_matrix
    group_tag: np.ndarray
    type_block: np.ndarray
    type_tag: np.ndarray
    type_label: np.ndarray
    n_labels: int
    log_base: np.ndarray | None = None
    blocks: list[LinearBlock] = field(default_factory=list)
    pinned: np.ndarray | None = None
    _cells: Cells | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.weights = np.asarray(self.weights, dtype=float).ravel()
        if (self.weights <= 0).any() or not np.isclose(self.weights.sum(), 1.0):
            raise MaxEntError("group weights must be positive and sum to 1")
        self.reach = sp.csr_matrix(self.reach, dtype=bool)
        self.reach.sum_duplicates()
        g = len(self.weights)
        self.group_tag = _ints(self.group_tag, g, "group_tag")
        t = len(np.asarray(self.type_block))
        self.type_block = _ints(self.type_block, t, "type_block")
        self.type_tag = _ints(self.type_tag, t, "type_tag")
        self.type_label = _ints(self.type_label, t, "type_label")
        if self.reach.shape[0] != g:
            raise MaxEntError(f"reach has {self.reach.shape[0]} rows for {g} groups")
        if t and (self.type_block.min() < 0 or self.type_block.max() >= self.reach.shape[1]):
            raise MaxEntError(f"type blocks must lie in 0..{self.reach.shape[1] - 1}")
        if t and (self.type_tag.min() < 0 or self.type_label.min() < 0 or self.type_label.max() >= self.n_labels):
            raise MaxEntError(f"type tags must be ≥ 0 and labels in 0..{self.n_labels - 1}")
        if self.log_base is not None:
            self.log_base = np.asarray(self.log_base, dtype=float).ravel()
            if len(self.log_base) != t:
                raise MaxEntError(f"log_base has {len(self.log_base)} entries for {t} types")
        if self.pinned is not None:
            self.pinned = _ints(self.pinned, g, "pinned")
            if (self.pinned >= t).any():
                raise MaxEntError("a pinned type is not a type of the problem")

    @property
    def n_groups(self) -> int:
        return len(self.weights)

    @property
    def n_types(self) -> int:
        return len(self.type_block)

    @property
    def base(self) -> np.ndarray:
        """Log base measure per type (0 when none was given)."""
        return np.zeros(self.n_types) if self.log_base is None else self.log_base

    def add(self, block: LinearBlock) -> FactoredProblem:
        if block.A.shape[1] != self.n_types:
            raise MaxEntError(f"block {block.name!r} has {block.A.shape[1]} columns, the problem {self.n_types} types")
        self.blocks.append(block)
        return self

    def stacked(self) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, list[str]]:
        """All rows: ``A`` (rows × types), ``b``, a boolean mask of inequality rows, the names."""
        if not self.blocks:
            return sp.csr_matrix((0, self.n_types)), np.zeros(0), np.zeros(0, dtype=bool), []
        A = sp.vstack([blk.A for blk in self.blocks], format="csr")
        b = np.concatenate([blk.b for blk in self.blocks])
        le = np.concatenate([np.full(blk.n_rows, blk.sense == "le") for blk in self.blocks])
        return A, b, le, [n for blk in self.blocks for n in blk.row_names]

    def violations(self, types: np.ndarray) -> np.ndarray:
        """Per row, its violation by the type probabilities ``types`` (P(t) = Σ_q P(q, t))."""
        A, b, le, _ = self.stacked()
        r = A @ types - b
        return np.where(le, np.maximum(r, 0.0), np.abs(r))

    def cells(self) -> Cells:
        """The cells (block, tag) and which of them every group may take (:class:`Cells`; built
        once: the groups, their reach and the types are not to change after construction)."""
        if self._cells is None:
            self._cells = Cells.of(self)
        return self._cells

    @property
    def n_slots(self) -> int:
        """How many (group, type) pairs are possible: the variables of the explicit form."""
        cells = self.cells()
        live = np.isfinite(self.base)
        per_cell = np.bincount(cells.cell_of_type[live], minlength=cells.n_cells)
        return int(cells.access.multiply(per_cell[None, :]).sum())

    def decided_rows(self, A: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        """Rows of ``A`` (over types) whose value the groups' weights alone decide, and that value.

        A row is decided when, for every group it touches, it holds every possible type of the
        group with one and the same coefficient a: its value is then Σ a · P(q) whatever p(· | q)
        is (as :func:`ppdm.maxent.constraints.tree_constraints.decided_rows` for the explicit form).
        """
        return _decided(self.cells(), A, self.weights, np.isfinite(self.base))


def _ints(values: np.ndarray, n: int, name: str) -> np.ndarray:
    out = np.asarray(values).astype(np.intp).ravel()
    if len(out) != n:
        raise MaxEntError(f"{name} has {len(out)} entries, expected {n}")
    return out


@dataclass
class Cells:
    """Cells (block, tag) of the types, in (block, tag) order, and every group's cells.

    ``cell_of_type`` (types,), ``cell_block`` and ``cell_tag`` (cells,), ``access`` (groups ×
    cells, boolean CSR): a group of tag −1 takes every cell of the blocks it reaches, a group of
    tag c the cell (block, c) of each, when there is one. When no group has a tag, a cell is a
    whole block (tag −1): every group takes all of a block's types or none.
    """

    cell_of_type: np.ndarray
    cell_block: np.ndarray
    cell_tag: np.ndarray
    access: sp.csr_matrix
    _widest: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    _by_cell: sp.csc_matrix | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def n_cells(self) -> int:
        return len(self.cell_block)

    def widest(self) -> np.ndarray:
        """Per cell, the most cells a group taking it takes (0: no group takes it); computed once."""
        if self._widest is None:
            per_group = np.diff(self.access.indptr)
            self._widest = reduce_by(np.maximum, self.access.indices, np.repeat(per_group, per_group), self.n_cells, 0)
        return self._widest

    def groups_by_cell(self) -> sp.csc_matrix:
        """``access`` by columns: the groups taking each cell; computed once."""
        if self._by_cell is None:
            self._by_cell = sp.csc_matrix(self.access)
            self._by_cell.sort_indices()
        return self._by_cell

    @classmethod
    def of(cls, problem: FactoredProblem) -> Cells:
        untagged = bool((problem.group_tag < 0).all())
        n_tags = 1 if untagged else int(problem.type_tag.max(initial=-1)) + 1
        key = problem.type_block.astype(np.int64) * n_tags + (0 if untagged else problem.type_tag)
        keys, cell_of_type = np.unique(key, return_inverse=True)
        cell_block = keys // n_tags
        cell_tag = np.full(len(keys), -1) if untagged else keys % n_tags
        reach = problem.reach.tocoo()
        group, block = reach.row.astype(np.intp), reach.col.astype(np.intp)
        tag = problem.group_tag[group]
        first = np.searchsorted(cell_block, np.arange(problem.reach.shape[1] + 1))
        # tag −1: every cell of the block
        anyone = tag < 0
        count = (first[block + 1] - first[block])[anyone]
        g_any = np.repeat(group[anyone], count)
        c_any = np.repeat(first[block[anyone]] - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
        # a known tag: the cell (block, tag) if the block has one
        wanted = block[~anyone].astype(np.int64) * max(n_tags, 1) + tag[~anyone]
        pos = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
        found = (keys[pos] == wanted) if len(keys) else np.zeros(len(wanted), dtype=bool)
        rows = np.concatenate([g_any, group[~anyone][found]])
        cols = np.concatenate([c_any, pos[found]])
        access = sp.csr_matrix((np.ones(len(rows), dtype=bool), (rows, cols)), shape=(problem.n_groups, len(keys)))
        access.sum_duplicates()
        access.sort_indices()
        return cls(cell_of_type.astype(np.intp), cell_block, cell_tag, access)


def _decided(cells: Cells, A: sp.csr_matrix, weights: np.ndarray, live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`FactoredProblem.decided_rows`: sorts and reductions over the entries of ``A``, the
    cells and the (group, cell) pairs, O(n log n) in them; no product over groups × rows."""
    n_rows = A.shape[0]
    coo = sp.coo_matrix(A)
    keep = live[coo.col] & (coo.data != 0)
    r, cell, val = coo.row[keep], cells.cell_of_type[coo.col[keep]], coo.data[keep]
    size = np.bincount(cells.cell_of_type[live], minlength=cells.n_cells)
    # per (row, cell): how many of the cell's types the row holds, and their coefficients
    key = r.astype(np.int64) * cells.n_cells + cell
    starts, order = _runs_of(key)
    key, val = key[order], val[order]
    count = np.diff(np.r_[starts, len(key)])
    lo = np.minimum.reduceat(val, starts) if len(key) else np.zeros(0)
    hi = np.maximum.reduceat(val, starts) if len(key) else np.zeros(0)
    pair_row, pair_cell = key[starts] // cells.n_cells, key[starts] % cells.n_cells
    # a group that takes more cells than the row touches cannot lie wholly inside it
    widest = cells.widest()
    used = widest[pair_cell] > 0
    uniform = (count == size[pair_cell]) & (hi - lo <= SAME * np.abs(hi))
    bad = np.zeros(n_rows, dtype=bool)
    bad[pair_row[~uniform & used]] = True
    touched_cells = np.bincount(pair_row[used], minlength=n_rows)
    bad |= reduce_by(np.maximum, pair_row, widest[pair_cell], n_rows, 0) > touched_cells
    ok = uniform & used & ~bad[pair_row]
    # per (group, row) among the rows left: the group's cells the row holds, all with one coefficient?
    group, row, n, s1, s2 = _held(cells, pair_row[ok], pair_cell[ok], lo[ok], n_rows)
    n_cells = np.diff(cells.access.indptr)
    fine = (n == n_cells[group]) & (np.abs(s1 * s1 - n * s2) <= SAME * np.maximum(1.0, s1 * s1))
    bad[row[~fine]] = True
    value = np.bincount(row, weights=weights[group] * s1 / np.maximum(n, 1), minlength=n_rows)
    return ~bad, value


def _held(
    cells: Cells, row: np.ndarray, cell: np.ndarray, coef: np.ndarray, n_rows: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per (group, row) pair where the row holds a cell of the group (``row``, ``cell``, ``coef``:
    the (row, cell) pairs and their one coefficient): the group, the row, how many of the group's
    cells the row holds, and the sum of their coefficients and of their squares. One join of the
    pairs with the groups taking their cell and one sort, O(n log n) in the pairs joined."""
    by_cell = cells.groups_by_cell()
    count = by_cell.indptr[cell + 1] - by_cell.indptr[cell]
    total = int(count.sum())
    if total == 0:
        empty = np.zeros(0)
        return empty.astype(np.intp), empty.astype(np.intp), empty, empty, empty
    of_pair = np.repeat(np.arange(len(cell)), count)
    group = by_cell.indices[np.repeat(by_cell.indptr[cell] - np.cumsum(count) + count, count) + np.arange(total)]
    width = max(n_rows, 1)
    key = group.astype(np.int64) * width + row[of_pair]
    starts, order = _runs_of(key)
    key, held = key[order], coef[of_pair][order]
    n = np.diff(np.r_[starts, total]).astype(float)
    s1, s2 = np.add.reduceat(held, starts), np.add.reduceat(held * held, starts)
    return key[starts] // width, key[starts] % width, n, s1, s2


def _runs_of(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stable order sorting ``key`` and where each run of equal keys starts in that order."""
    order = np.argsort(key, kind="stable")
    k = key[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if len(k) else np.zeros(0, dtype=np.intp)
    return starts, order


def reduce_by(ufunc: np.ufunc, keys: np.ndarray, values: np.ndarray, n: int, fill: float) -> np.ndarray:
    """``ufunc.reduce`` of ``values`` per key in 0..n−1 (``fill`` where a key has none), by sorting."""
    out = np.full(n, fill, dtype=np.result_type(values, type(fill)))
    if len(keys):
        order = np.argsort(keys, kind="stable")
        k = keys[order]
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        out[k[starts]] = ufunc.reduceat(values[order], starts)
    return out
