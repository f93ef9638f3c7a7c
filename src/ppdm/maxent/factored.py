"""The maximum-entropy problem in factored form: groups reach blocks, and rows only see types.

Paper 000 §3 maximises the attacker's entropy over p(u | q) subject to what the tree publishes
(§4). Under a general threat model (:mod:`ppdm.maxent.unknowns`) a group q's unknowns are *slots*
(leaf Λ, class c, sensitive cell x) with a base measure m; every row of §4 (class counts, rates,
leaf sizes, labels, the SA distribution) puts the same coefficient on P(q, slot) for every group:
it depends only on the slot's *type* t = (Λ, c, x). So the constraint matrix is small, rows ×
types, and what tells the groups apart is which types each may take:

* group q *reaches* some blocks (the leaves its known values can lead to: the sparse matrix
  ``reach``, groups × blocks);
* a group with a known *tag* (its class) takes only the types of that tag; tag −1 takes any;
* a *pinned* group takes one given type with probability 1 (a fully known individual).

The types of one block and one tag form a *cell*. At the dual optimum
p(t | q) = m_t e^{−(Aᵀλ)_t} / Z_q for every type t of a cell q reaches, with
Z_q = Σ_{cells C of q} g_C and g_C = Σ_{t ∈ C} m_t e^{−(Aᵀλ)_t}: the dual, its gradient and its
Hessian cost O(nnz(reach) + types · rows per type) (:mod:`ppdm.maxent.factored_dual`), never
one array entry per slot. :func:`solve_factored` presolves at the type level
(:mod:`ppdm.maxent.factored_presolve`), minimises the dual with the Newton driver of
:mod:`ppdm.maxent.dual` and reports, per group, the marginal over each type's *label* (the
sensitive cell), checked against the original rows.

*Pinned groups* are how known individuals enter: their contribution A[:, t]·P(q) is subtracted
from the right-hand sides before the solve and their marginal is the label of their type.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from ppdm.errors import MaxEntError
from ppdm.maxent.dual import minimize_dual
from ppdm.maxent.factored_dual import FactoredDual, entropy_and_marginal
from ppdm.maxent.factored_presolve import reduce_by, reduce_factored
from ppdm.maxent.problem import InfeasibleError, LinearBlock, MaxEntProblem
from ppdm.maxent.solve import kkt_residual_of

#: Relative tolerance when comparing coefficients of decided rows (exact for ±1 coefficients).
SAME = 1e-12


@dataclass
class FactoredProblem:
    """Groups (weights ``weights``), what they reach, the types and the rows over the types.

    ``reach``: groups × blocks, non-zero where the group may land in the block. ``group_tag``: per
    group the tag its types must have, −1 for any. Per type: ``type_block``, ``type_tag`` (≥ 0),
    ``type_label`` (the value of interest, < ``n_labels``) and ``log_base`` (log of its base
    measure; ``None``: 1 each; ``-inf``: impossible). ``pinned``: per group a type it takes with
    certainty, or −1. Blocks of rows are :class:`~ppdm.maxent.problem.LinearBlock` over P(type),
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
        is (as :func:`ppdm.maxent.tree_constraints.decided_rows` for the explicit form).
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

    @property
    def n_cells(self) -> int:
        return len(self.cell_block)

    @classmethod
    def of(cls, problem: FactoredProblem) -> Cells:
        untagged = bool((problem.group_tag < 0).all())
        n_tags = 1 if untagged else int(problem.type_tag.max(initial=-1)) + 1
        key = problem.type_block.astype(np.int64) * max(n_tags, 1) + (0 if untagged else problem.type_tag)
        keys, cell_of_type = np.unique(key, return_inverse=True)
        cell_block, cell_tag = keys // max(n_tags, 1), (np.full(len(keys), -1) if untagged else keys % max(n_tags, 1))
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
    n_rows = A.shape[0]
    coo = sp.coo_matrix(A)
    keep = live[coo.col] & (coo.data != 0)
    r, cell, val = coo.row[keep], cells.cell_of_type[coo.col[keep]], coo.data[keep]
    size = np.bincount(cells.cell_of_type[live], minlength=cells.n_cells)
    # per (row, cell): how many of the cell's types the row holds, and their coefficients
    key = r.astype(np.int64) * cells.n_cells + cell
    order = np.argsort(key, kind="stable")
    key, val = key[order], val[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, dtype=np.intp)
    count = np.diff(np.r_[starts, len(key)])
    lo = np.minimum.reduceat(val, starts) if len(key) else np.zeros(0)
    hi = np.maximum.reduceat(val, starts) if len(key) else np.zeros(0)
    pair_row, pair_cell = key[starts] // cells.n_cells, key[starts] % cells.n_cells
    access = sp.csr_matrix(cells.access, dtype=float)
    n_cells = np.diff(access.indptr)
    # a group that takes more cells than the row touches cannot lie wholly inside it
    widest = reduce_by(np.maximum, access.indices, np.repeat(n_cells, n_cells), cells.n_cells, 0)
    used = widest[pair_cell] > 0
    uniform = (count == size[pair_cell]) & (hi - lo <= SAME * np.abs(hi))
    bad = np.zeros(n_rows, dtype=bool)
    bad[pair_row[~uniform & used]] = True
    touched_cells = np.bincount(pair_row[used], minlength=n_rows)
    bad |= reduce_by(np.maximum, pair_row, widest[pair_cell], n_rows, 0) > touched_cells
    ok = uniform & used & ~bad[pair_row]
    # per (group, row) among the rows left: the group's cells the row holds, all with one coefficient?
    shape = (n_rows, cells.n_cells)
    held = sp.coo_matrix(access @ sp.csr_matrix((np.ones(int(ok.sum())), (pair_row[ok], pair_cell[ok])), shape=shape).T)
    s1 = _at(access @ sp.csr_matrix((lo[ok], (pair_row[ok], pair_cell[ok])), shape=shape).T, held)
    s2 = _at(access @ sp.csr_matrix((lo[ok] ** 2, (pair_row[ok], pair_cell[ok])), shape=shape).T, held)
    n = held.data
    fine = (n == n_cells[held.row]) & (np.abs(s1 * s1 - n * s2) <= SAME * np.maximum(1.0, s1 * s1))
    bad[held.col[~fine]] = True
    value = np.bincount(held.col, weights=weights[held.row] * s1 / np.maximum(n, 1), minlength=n_rows)
    return ~bad, value


def _at(M: sp.spmatrix, pattern: sp.coo_matrix) -> np.ndarray:
    """The entries of ``M`` at the positions of ``pattern`` (0 where ``M`` has none)."""
    coo = sp.coo_matrix(M)
    keys = coo.row.astype(np.int64) * M.shape[1] + coo.col
    order = np.argsort(keys)
    keys, data = keys[order], coo.data[order]
    wanted = pattern.row.astype(np.int64) * M.shape[1] + pattern.col
    if len(keys) == 0:
        return np.zeros(len(wanted))
    pos = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[pos] == wanted, data[pos], 0.0)


@dataclass
class FactoredSolution:
    """The maximum-entropy estimate of a :class:`FactoredProblem` and how it was obtained.

    ``marginal``: groups × labels, P(label | q). ``types``: P(t) per type (pinned groups
    included). ``entropy``: −Σ_q P(q) Σ_t p(t | q) log(p(t | q) / m_t), natural log.
    """

    marginal: np.ndarray
    types: np.ndarray
    entropy: float
    max_violation: float
    iterations: int
    newton_steps: int
    seconds: float
    n_classes: int
    n_rows: int
    status: str = "optimal"
    dual: np.ndarray | None = None
    kkt_residual: float = float("nan")


def solve_factored(problem: FactoredProblem, tol: float = 1e-9, max_iter: int = 5000) -> FactoredSolution:
    """Maximise the entropy subject to the problem's rows; ``tol`` bounds every row's violation.

    Raises :class:`~ppdm.maxent.problem.InfeasibleError` naming rows when the presolve leaves a
    group without any possible type or the best solution found still violates rows.
    """
    start = time.perf_counter()
    red = reduce_factored(problem)
    dual = FactoredDual(red)
    # the Newton systems are small and dense: one BLAS thread each is faster than a contended pool
    with threadpool_limits(limits=1, user_api="blas"):
        result = minimize_dual(dual, len(red.b), tol, max_iter)
    state = result.state
    types = red.pinned_types.copy()
    types[red.types] += state.P  # type: ignore[attr-defined]
    violations = problem.violations(types)
    worst = float(violations.max(initial=0.0))
    if worst > max(tol * 100, 1e-7):
        _, _, _, names = problem.stacked()
        order = np.argsort(-violations)[:10]
        shown = [names[i] for i in order if violations[i] > max(tol * 100, 1e-7)]
        raise InfeasibleError(
            f"the constraints are infeasible or the solver did not converge: the best solution found "
            f"still violates {', '.join(shown)} (worst by {worst:.2e})",
            shown,
        )
    entropy, marginal = entropy_and_marginal(problem, red, dual, state)  # type: ignore[arg-type]
    lam = np.zeros(len(violations))
    lam[red.rows] = result.lam
    return FactoredSolution(
        marginal=marginal,
        types=types,
        entropy=entropy,
        max_violation=worst,
        iterations=result.iterations,
        newton_steps=result.newton_steps,
        seconds=time.perf_counter() - start,
        n_classes=len(red.weights),
        n_rows=len(violations),
        status="optimal" if worst <= tol else "inaccurate",
        dual=lam,
        kkt_residual=kkt_residual_of(red.le, result.lam, state.residual, worst),
    )


def expand(problem: FactoredProblem) -> tuple[MaxEntProblem, np.ndarray]:
    """The same problem over explicit slots (groups × slots, padded): the reference form.

    Returns the :class:`~ppdm.maxent.problem.MaxEntProblem` and the type of every slot (−1 on
    padding). A pinned group's slot of its type gets the row P(q, slot) = P(q).
    """
    cells = problem.cells()
    live = np.flatnonzero(np.isfinite(problem.base))
    live = live[np.argsort(cells.cell_of_type[live], kind="stable")]
    start = np.searchsorted(cells.cell_of_type[live], np.arange(cells.n_cells + 1))
    access = cells.access.tocoo()
    count = start[access.col + 1] - start[access.col]
    per_group = np.bincount(access.row, weights=count, minlength=problem.n_groups).astype(np.intp)
    width = max(int(per_group.max(initial=0)), 1)
    pair = np.repeat(np.arange(access.nnz), count)
    offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    group = access.row[pair]
    slot = np.arange(len(pair)) - (np.cumsum(per_group) - per_group)[group]
    slot_type = np.full((problem.n_groups, width), -1, dtype=np.intp)
    slot_type[group, slot] = live[start[access.col[pair]] + offset]
    valid = slot_type >= 0
    flat = np.flatnonzero(valid.ravel())
    pick = sp.csr_matrix((np.ones(len(flat)), (slot_type.ravel()[flat], flat)), shape=(problem.n_types, slot_type.size))
    log_base = np.where(valid, problem.base[np.maximum(slot_type, 0)], -np.inf)
    explicit = MaxEntProblem(problem.weights, width, log_base=log_base)
    for blk in problem.blocks:
        explicit.add(LinearBlock(blk.name, blk.A @ pick, blk.b, blk.sense, blk.row_names))
    if problem.pinned is not None and (problem.pinned >= 0).any():
        groups = np.flatnonzero(problem.pinned >= 0)
        slots = np.argmax(slot_type[groups] == problem.pinned[groups, None], axis=1)
        A = sp.csr_matrix((np.ones(len(groups)), (np.arange(len(groups)), groups * width + slots)), shape=(len(groups), slot_type.size))
        explicit.add(LinearBlock("pinned", A, problem.weights[groups], "eq", [f"pinned group {g}" for g in groups]))
    return explicit, slot_type
