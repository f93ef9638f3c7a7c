"""Reconstruct a forest's training set when the attacker knows only the model ("nothing known").

Ferry et al., *Trained Random Forests Completely Reveal your Dataset* (ICML 2024, §4) rebuild the
training set of a scikit-learn random forest from its per-leaf class counts with one CP-SAT
model: every record's attributes are unknowns, each record falls into exactly one leaf of every
tree, and the records each leaf receives must number what the leaf publishes. They return one
dataset. Here the same question is asked exactly (issue 14, "nothing known"): one consistent
dataset, and which of its rows are in *every* dataset consistent with the forest.

The model (one per forest, docs/reconstruction.md):

* **Values as bits.** Per record, a binary attribute is one boolean, a categorical one a one-hot
  block (exactly one true), a numeric one the order bits ``x > t_1 ≥ ... ≥ x > t_k`` over the
  thresholds the trees split it at (a record is known to the interval between two thresholds,
  never closer). The class is one more attribute. Attributes no tree splits on are not modelled:
  nothing published speaks of them (:attr:`Reconstruction.unused`).
* **Paths.** Per record, tree and (leaf, class) with a positive published count, one capture
  boolean; it implies every literal of the leaf's path and the class; exactly one capture per
  record and tree. A record's values satisfy exactly one path of a tree, so the captured leaf is
  the one the record reaches.
* **Counts.** Per tree, leaf and class: Σ multiplicity × capture = the published count. The
  multiplicities are the forest's (bootstrap draws per record in training order, see
  :mod:`ppdm.tree.sklearn_forest`), 1 each when unknown.
* **Symmetry.** Records with the same multiplicities in every tree are interchangeable. When all
  are (no bootstrap), the records are dealt to the (leaf, class) cells of the first tree in
  advance, as many as each cell counts — every dataset can be ordered that way — and, inside a
  cell (or a group of interchangeable records), sorted by their bits read as a binary number.
  Sorting on every bit makes the ordering canonical: each multiset has one ordered form.
* **Propagation** before the search (:func:`_propagate`): a record left one (leaf, class) of a
  tree takes its path; a leaf filled by such records closes to the others; a leaf with just
  enough candidates takes them all. On the anchor it fixes two thirds of the bits.

Proofs (the incremental backbone of issue 14): a reconstructed row seen ``k`` times is a
candidate for "at least ``k`` copies in every consistent dataset"; a cell (record, attribute) of
the canonical order a candidate for "this value in every consistent dataset". Each round asks
CP-SAT for a consistent dataset that breaks at least one remaining candidate (as many as it finds
quickly, starting from the last dataset): each dataset found lowers the copies of the rows it
holds fewer of and drops the cells it changes; infeasibility proves every remaining candidate at
once. When the time budget runs out the remaining candidates
are *undecided*, never proved.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import DataError, InfeasibleError, PpdmError
from ppdm.tree.forest import Forest
from ppdm.tree.splits import Interval, ValueSet

Lit = tuple[int, bool]  # (bit index, value the bit must take)
KEY_BITS = 62  # bits a sort key can hold in CP-SAT's 64-bit integers


@dataclass
class Reconstruction:
    """One training multiset consistent with a forest, and what is proved about it.

    ``data``: the reconstructed records (``None`` when no consistent dataset was found in time),
    one column per attribute some tree splits on, then the class column; a numeric attribute's
    value is the interval (between two split thresholds) a record is known to. ``proved[i]``:
    row ``i`` is in every consistent dataset (as many copies of it as are proved: a row seen
    ``k`` times whose ``j < k`` copies are proved has ``j`` of them marked). ``undecided[i]``:
    neither proved nor shown absent from some consistent dataset before the time ran out.
    ``certain``: per cell of ``data`` (records in the canonical order, see the module
    docstring), whether every consistent dataset holds that value there; ``None`` when not
    computed. ``status``: ``"solved"`` (every candidate decided), ``"time-limit"`` (some
    undecided), ``"unproved"`` (``prove=False``), ``"no-solution"`` (none found in time).
    ``solutions``: consistent datasets seen (the first and those the proof rounds found);
    ``seconds``: wall time of the whole call; ``unused``: attributes no tree splits on.
    """

    data: pd.DataFrame | None
    proved: np.ndarray
    undecided: np.ndarray
    certain: pd.DataFrame | None
    status: str
    solutions: int
    seconds: float
    unused: list[str] = field(default_factory=list)

    @property
    def n_proved(self) -> int:
        return int(self.proved.sum())

    @property
    def n_undecided(self) -> int:
        return int(self.undecided.sum())


# -- values as bits ------------------------------------------------------------------------------
@dataclass
class _Column:
    """One modelled attribute: its bits and the values they encode."""

    name: str
    kind: str  # "constant" | "binary" | "onehot" | "order"
    bits: np.ndarray
    values: list[Any]

    def equals(self, idx: int) -> list[Lit]:
        """Literals that all hold exactly when the value is ``values[idx]``."""
        b = self.bits
        if self.kind == "constant":
            return []
        if self.kind == "binary":
            return [(int(b[0]), idx == 1)]
        if self.kind == "onehot":
            return [(int(b[idx]), True)]
        out = [(int(b[idx - 1]), True)] if idx > 0 else []
        return out + ([(int(b[idx]), False)] if idx < len(b) else [])

    def allowed(self, condition: Any) -> list[Lit] | None:
        """Literals a path condition puts on this column; ``None`` when no value meets it."""
        if self.kind == "order":
            return self._interval(condition)
        ok = [i for i, v in enumerate(self.values) if v in condition.values]
        if not ok:
            return None
        if len(ok) == len(self.values):
            return []
        if len(ok) == 1:
            return self.equals(ok[0])
        return [(int(self.bits[i]), False) for i in range(len(self.values)) if i not in ok]

    def _interval(self, cond: Interval) -> list[Lit] | None:
        cuts = [v.right for v in self.values[:-1]]
        out: list[Lit] = []
        if cond.low > -math.inf:
            out.append((int(self.bits[cuts.index(cond.low)]), True))
        if cond.high < math.inf:
            out.append((int(self.bits[cuts.index(cond.high)]), False))
        return out

    def decode(self, bits: np.ndarray) -> np.ndarray:
        """Value index per record from the records' bits (records × all bits)."""
        own = bits[:, self.bits]
        if self.kind == "constant":
            return np.zeros(len(bits), dtype=np.intp)
        if self.kind == "binary":
            return own[:, 0].astype(np.intp)
        if self.kind == "onehot":
            return np.argmax(own, axis=1)
        return own.sum(axis=1).astype(np.intp)


def _columns(forest: Forest) -> list[_Column]:
    """The attributes some tree splits on, in the forest's order, then the class."""
    thresholds: dict[str, set[float]] = {}
    for tree in forest.trees:
        for node in tree.internal_nodes():
            split = node.split
            thresholds.setdefault(split.attribute, set())
            if split.kind == "threshold":
                thresholds[split.attribute].add(float(split.threshold))
    out: list[_Column] = []
    n_bits = 0
    for name, attr in forest.attributes.items():
        if name not in thresholds:
            continue
        if attr.is_categorical:
            if thresholds[name]:
                raise PpdmError(f"attribute {name!r} is categorical but a tree splits it at a threshold")
            values = list(attr.categories)
        else:
            cuts = sorted(thresholds[name])
            edges = [-math.inf, *cuts, math.inf]
            values = [pd.Interval(lo, hi, closed="right") for lo, hi in itertools.pairwise(edges)]
        column, n_bits = _column(name, values, "order" if not attr.is_categorical else None, n_bits)
        out.append(column)
    klass, _ = _column(forest.class_attribute, list(forest.classes), None, n_bits)
    return out + [klass]


def _column(name: str, values: list[Any], kind: str | None, start: int) -> tuple[_Column, int]:
    if not values:
        raise PpdmError(f"attribute {name!r} has no value to reconstruct")
    if kind is None:
        kind = "constant" if len(values) == 1 else "binary" if len(values) == 2 else "onehot"
    width = {"constant": 0, "binary": 1, "onehot": len(values)}.get(kind, len(values) - 1)
    return _Column(name, kind, np.arange(start, start + width), values), start + width


# -- what the forest publishes -----------------------------------------------------------------
@dataclass
class _Cell:
    """A (leaf, class) of one tree with a positive count, and the literals a record in it meets."""

    lits: list[Lit]
    count: int


def _published(forest: Forest, columns: list[_Column]) -> list[list[_Cell]]:
    """Per tree its (leaf, class) cells; raises when a tree does not publish class counts."""
    by_name = {c.name: c for c in columns}
    klass = columns[-1]
    out = []
    for i, tree in enumerate(forest.trees):
        if "class-counts" not in forest.known[i]:
            raise PpdmError(f"tree {i} does not publish per-leaf class counts: reconstruction needs them")
        cells = []
        for leaf in tree.leaves():
            path = _path_literals(tree.prefix(leaf.id).conditions, by_name)
            counts = np.asarray(leaf.counts, dtype=float)
            if np.abs(counts - np.rint(counts)).max(initial=0.0) > 1e-6:
                raise DataError(f"tree {i}, leaf {leaf.id}: class counts {counts.tolist()} are not whole numbers")
            for c, n in enumerate(np.rint(counts).astype(int)):
                if n == 0:
                    continue
                if path is None:
                    raise InfeasibleError(f"tree {i}, leaf {leaf.id}: no value meets its path, yet it counts {n} record(s)", [f"tree {i}"])
                cells.append(_Cell(path + klass.equals(c), int(n)))
        out.append(cells)
    return out


def _path_literals(conditions: dict[str, ValueSet | Interval], by_name: dict[str, _Column]) -> list[Lit] | None:
    lits: list[Lit] = []
    for name, cond in conditions.items():
        got = by_name[name].allowed(cond)
        if got is None:
            return None
        lits += got
    return lits


def _multiplicities(forest: Forest, n_records: int | None, cells: list[list[_Cell]]) -> np.ndarray:
    """Trees × records: how many times each tree counted each record."""
    known = [m for m in forest.multiplicities if m is not None]
    if len(known) == forest.n_trees:
        M = np.stack(known)
        if n_records is not None and n_records != M.shape[1]:
            raise DataError(f"n_records={n_records}, but the forest's multiplicities count {M.shape[1]} training rows")
        return M
    if known:
        raise PpdmError("the forest knows the multiplicities of some trees only: give them for every tree or none")
    totals = [sum(c.count for c in tree) for tree in cells]
    n = totals[0] if n_records is None else n_records
    for i, total in enumerate(totals):
        if total != n:
            raise DataError(
                f"tree {i} counts {total} training rows, not {n}: without the forest's multiplicities "
                "every tree must count every row once"
            )
    return np.ones((forest.n_trees, n), dtype=np.int64)


# -- the CP-SAT model --------------------------------------------------------------------------
@dataclass
class _Model:
    """The reconstruction model and what the proof rounds need of it."""

    model: Any
    x: list[list[Any]]  # records × bits
    n_bits: int
    block: np.ndarray  # per record, its interchangeable group (-1: alone)
    canonical: bool


def _lit(var: Any, value: bool) -> Any:
    return var if value else var.Not()


def _build(columns: list[_Column], cells: list[list[_Cell]], M: np.ndarray) -> _Model:
    """The model. A record whose fixed bits leave it one (leaf, class) of a tree gets no capture
    boolean there: it is in that cell, which counts it."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    n_bits = _n_bits(columns)
    n = M.shape[1]
    x = [[model.new_bool_var(f"x{r}_{j}") for j in range(n_bits)] for r in range(n)]
    for col in columns:
        for r in range(n):
            _structure(model, col, x[r])
    fixed, block = _deal(cells, M, n_bits)
    fixed, allowed = _propagate(columns, cells, M, fixed)
    for r in range(n):
        for j in np.flatnonzero(fixed[r] >= 0):
            model.add(x[r][j] == int(fixed[r, j]))
    for t, tree in enumerate(cells):
        _tree(model, tree, M[t], x, fixed, allowed[t])
    canonical = _sort(model, x, block, n_bits)
    return _Model(model, x, n_bits, block, canonical)


def _n_bits(columns: list[_Column]) -> int:
    return max((int(c.bits[-1]) + 1 for c in columns if len(c.bits)), default=0)


def _structure(model: Any, col: _Column, bits: list[Any]) -> None:
    if col.kind == "onehot":
        model.add_exactly_one([bits[j] for j in col.bits])
    elif col.kind == "order":
        for lo, hi in itertools.pairwise(col.bits):
            model.add_implication(bits[hi], bits[lo])


def _deal(cells: list[list[_Cell]], M: np.ndarray, n_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Bits fixed per record (-1 free) and its interchangeable group (-1 when alone).

    When every record has the same multiplicities, records are dealt to the first counting
    tree's (leaf, class) cells in order; each cell is a group. Otherwise records with equal
    multiplicity columns form a group and nothing is fixed.
    """
    n = M.shape[1]
    fixed = np.full((n, n_bits), -1, dtype=np.int8)
    same = (M == M[:, :1]).all()
    if not same:
        _, inverse, sizes = np.unique(M.T, axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.ravel()
        return fixed, np.where(sizes[inverse] > 1, inverse, -1)
    block = np.full(n, -1, dtype=np.intp)
    counting = np.flatnonzero(M[:, 0] > 0)
    if not len(counting):
        return fixed, np.zeros(n, dtype=np.intp)
    t, m = int(counting[0]), int(M[counting[0], 0])
    r = 0
    for b, cell in enumerate(cells[t]):
        k, rest = divmod(cell.count, m)
        if rest or r + k > n:
            raise InfeasibleError(f"tree {t}: a leaf counts {cell.count} rows, not a multiple of {m} within {n} records", [f"tree {t}"])
        for j, v in cell.lits:
            fixed[r : r + k, j] = int(v)
        block[r : r + k] = b
        r += k
    if r != n:
        raise InfeasibleError(f"tree {t} counts {r * m} rows, the forest has {n} records × {m}", [f"tree {t}"])
    return fixed, block


def _tree(model: Any, cells: list[_Cell], m: np.ndarray, x: list[list[Any]], fixed: np.ndarray, allowed: np.ndarray) -> None:
    """Capture booleans of one tree: path implications, one leaf per record, the counts.

    ``allowed`` (records × cells) is what propagation left each record (:func:`_propagate`).
    """
    counted = np.flatnonzero(m > 0)
    capture: list[list[Any]] = [[] for _ in cells]
    weights: list[list[int]] = [[] for _ in cells]
    settled = np.zeros(len(cells), dtype=np.int64)
    for r in counted:
        where = np.flatnonzero(allowed[r])
        if len(where) == 1:
            settled[where[0]] += m[r]
            free = [_lit(x[r][j], v) for j, v in cells[where[0]].lits if fixed[r, j] < 0]
            if free:
                model.add_bool_and(free)
            continue
        options = []
        for i in where:
            z = model.new_bool_var("")
            free = [_lit(x[r][j], v) for j, v in cells[i].lits if fixed[r, j] < 0]  # fixed ones hold (allowed)
            if free:
                model.add_bool_and(free).only_enforce_if(z)
            capture[i].append(z)
            weights[i].append(int(m[r]))
            options.append(z)
        model.add_exactly_one(options)
    for i, cell in enumerate(cells):
        model.add(sum(w * z for w, z in zip(weights[i], capture[i])) == cell.count - int(settled[i]))


def _propagate(
    columns: list[_Column], cells: list[list[_Cell]], M: np.ndarray, fixed: np.ndarray, rounds: int = 100
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Bits and cells every consistent dataset forces, by propagation before any search.

    Per tree, each counted record may enter only the cells its fixed bits allow. Repeated to a
    fixpoint: a record left one cell takes that cell's literals; a cell already filled by the
    records left nothing else is closed to the others; a cell whose possible records are just
    enough must take them all; one-hot blocks and order bits pass fixed values on. Every step
    keeps every consistent dataset, so nothing is lost (issue 14's sound shortcuts).
    """
    fixed = fixed.copy()
    lits = [_literal_matrix(tree, fixed.shape[1], t) for t, tree in enumerate(cells)]
    counts = [np.array([c.count for c in tree], dtype=np.int64) for tree in cells]
    allowed = [np.ones((M.shape[1], len(c)), dtype=bool) for c in cells]
    for _ in range(rounds):
        before = int((fixed >= 0).sum()), sum(int(a.sum()) for a in allowed)
        for t in range(len(cells)):
            allowed[t] &= _compatible(lits[t], fixed)
            allowed[t][M[t] == 0] = False
            _close(counts[t], M[t], allowed[t], t)
            _take(lits[t], M[t], allowed[t], fixed, t)
        _pass_on(columns, fixed)
        if (int((fixed >= 0).sum()), sum(int(a.sum()) for a in allowed)) == before:
            break
    return fixed, allowed


def _literal_matrix(cells: list[_Cell], n_bits: int, t: int) -> np.ndarray:
    """Cells × bits: the value each cell's literals give a bit (-1: none)."""
    out = np.full((len(cells), n_bits), -1, dtype=np.int8)
    for i, cell in enumerate(cells):
        for j, v in cell.lits:
            if out[i, j] == 1 - int(v):
                raise InfeasibleError(f"tree {t}: a leaf counting {cell.count} record(s) has a path no value meets", [f"tree {t}"])
            out[i, j] = int(v)
    return out


def _compatible(lits: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """Records × cells: whether a record's fixed bits allow the cell's literals (two products)."""
    clash = (fixed == 1).astype(np.int32) @ (lits == 0).T.astype(np.int32)
    clash += (fixed == 0).astype(np.int32) @ (lits == 1).T.astype(np.int32)
    return clash == 0


def _close(counts: np.ndarray, m: np.ndarray, allowed: np.ndarray, t: int) -> None:
    """Count rules of one tree's cells, in place on ``allowed`` (records × cells)."""
    alone = allowed & (allowed.sum(axis=1) == 1)[:, None]
    least, most = m @ alone, m @ allowed
    bad = np.flatnonzero((least > counts) | (most < counts))
    if len(bad):
        i = int(bad[0])
        raise InfeasibleError(
            f"tree {t}: a leaf counts {counts[i]} record(s) of its class, but {least[i]}-{most[i]} can reach it", [f"tree {t}"]
        )
    full = least == counts
    allowed &= ~(full[None, :] & ~alone)
    must = allowed & ((most == counts) & ~full)[None, :]
    bound = must.any(axis=1)
    allowed[bound] = must[bound]


def _take(lits: np.ndarray, m: np.ndarray, allowed: np.ndarray, fixed: np.ndarray, t: int) -> None:
    """Records left one cell take its literals (in place on ``fixed``)."""
    n_open = allowed.sum(axis=1)
    stuck = np.flatnonzero((n_open == 0) & (m > 0))
    if len(stuck):
        raise InfeasibleError(f"tree {t}: record {int(stuck[0])} can reach no leaf of its class", [f"tree {t}"])
    rows = np.flatnonzero(n_open == 1)
    given = lits[np.argmax(allowed[rows], axis=1)]
    fixed[rows] = np.where(given >= 0, given, fixed[rows])


def _pass_on(columns: list[_Column], fixed: np.ndarray) -> None:
    """Fixed values through one-hot blocks and order bits (in place)."""
    for col in columns:
        own = fixed[:, col.bits]
        if col.kind == "onehot":
            hot = (own == 1).any(axis=1)
            own[hot[:, None] & (own < 0)] = 0
            last = ((own == 0).sum(axis=1) == own.shape[1] - 1) & (own < 0).any(axis=1)
            own[last[:, None] & (own < 0)] = 1
        elif col.kind == "order":
            ones = np.maximum.accumulate((own[:, ::-1] == 1), axis=1)[:, ::-1]
            zeros = np.maximum.accumulate(own == 0, axis=1)
            own[ones & (own < 0)] = 1
            own[zeros & (own < 0)] = 0
        fixed[:, col.bits] = own


def _sort(model: Any, x: list[list[Any]], block: np.ndarray, n_bits: int) -> bool:
    """Sort each group's records by their bits; ``True`` when the order is canonical (every bit in the key)."""
    width = min(n_bits, KEY_BITS)

    def key(r: int) -> Any:
        return sum((1 << (width - 1 - j)) * x[r][j] for j in range(width))

    for g in np.unique(block[block >= 0]):
        members = np.flatnonzero(block == g)
        for a, b in itertools.pairwise(members):
            model.add(key(int(a)) <= key(int(b)))
    return n_bits <= KEY_BITS


# -- solving and proving -----------------------------------------------------------------------
def _solve(model: Any, x: list[list[Any]], seconds: float, workers: int, seed: int) -> tuple[str, list[np.ndarray]]:
    """``("feasible", datasets)``, ``("infeasible", [])`` or ``("unknown", [])``; a dataset is records × bits.

    With an objective (the proof rounds), every improving solution is kept — each is a
    consistent dataset and refutes what it breaks — and the search stops once it has gone on
    for half as long as its first solution took (at least a second).

    Only the verdicts and the solutions are used: the domains CP-SAT reports as tightened
    (``fill_tightened_domains_in_response``) excluded feasible solutions on tiny forests even with
    ``keep_all_feasible_solutions_in_presolve``, so they prove nothing here.
    """
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(seconds, 0.01)
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    solver.parameters.linearization_level = 0  # the LP relaxation of path implications is weak and slow
    keeper = _keeper(solver, x) if model.has_objective() else None
    try:
        status = solver.solve(model, keeper)
    finally:
        if keeper is not None:
            keeper.cancel()
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        found = keeper.found if keeper is not None else []
        last = np.array([[solver.value(v) for v in row] for row in x], dtype=np.int8).reshape(len(x), -1)
        return "feasible", found or [last]  # the callback saw the last solution too
    if status == cp_model.INFEASIBLE:
        return "infeasible", []
    if status == cp_model.MODEL_INVALID:
        raise PpdmError(f"the reconstruction model is invalid: {model.validate()}")
    return "unknown", []


def _keeper(solver: Any, x: list[list[Any]]) -> Any:
    """A solution callback that keeps every dataset found and stops the search a while after the first."""
    from ortools.sat.python import cp_model

    class Keeper(cp_model.CpSolverSolutionCallback):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[np.ndarray] = []
            self._start = time.perf_counter()
            self._timer: threading.Timer | None = None

        def on_solution_callback(self) -> None:
            bits = [[self.value(v) for v in row] for row in x]
            self.found.append(np.array(bits, dtype=np.int8).reshape(len(x), -1))
            if self._timer is None:
                wait = max(1.0, 0.5 * (time.perf_counter() - self._start))
                self._timer = threading.Timer(wait, solver.stop_search)
                self._timer.daemon = True
                self._timer.start()

        def cancel(self) -> None:
            if self._timer is not None:
                self._timer.cancel()

    return Keeper()


@dataclass
class _Candidates:
    """What is still to prove: copies per distinct row, and the cells of the canonical order."""

    rows: np.ndarray  # distinct rows × bits
    slots: list[np.ndarray]  # per distinct row, the records holding it in the first solution
    copies: np.ndarray  # per distinct row, the copies not yet disproved
    values: np.ndarray | None  # records × columns, value indices of the first solution
    open_cells: np.ndarray | None  # records × columns: not yet disproved

    def done(self) -> bool:
        return not (self.copies > 0).any() and (self.open_cells is None or not self.open_cells.any())


def _candidates(bits: np.ndarray, columns: list[_Column], canonical: bool) -> _Candidates:
    rows, inverse = np.unique(bits, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    slots = [np.flatnonzero(inverse == u) for u in range(len(rows))]
    values = _value_indices(columns, bits)
    cells = np.ones(values.shape, dtype=bool) if canonical else None
    return _Candidates(rows, slots, np.array([len(s) for s in slots]), values if canonical else None, cells)


def _value_indices(columns: list[_Column], bits: np.ndarray) -> np.ndarray:
    return np.column_stack([c.decode(bits) for c in columns])


def _query(m: _Model, cand: _Candidates, columns: list[_Column], hint: np.ndarray) -> tuple[Any, list[list[Any]]]:
    """The model plus: some remaining row has fewer copies, or some remaining cell another value.

    The objective asks for as many of them at once as the search finds; the last dataset found
    (``hint``) is where the search starts.
    """
    q = m.model.clone()
    x = [[q.get_bool_var_from_proto_index(v.Index()) for v in row] for row in m.x]
    for r, row in enumerate(x):
        for j, v in enumerate(row):
            q.add_hint(v, int(hint[r, j]))
    dealt = (m.block >= 0).all() and len(np.unique(m.block)) > 1
    broken = []
    for u in np.flatnonzero(cand.copies > 0):
        slots = np.flatnonzero(m.block == m.block[cand.slots[u][0]]) if dealt else range(len(x))
        equal = []
        for r in slots:
            e = q.new_bool_var("")
            q.add_bool_or([_lit(x[r][j], not bool(v)) for j, v in enumerate(cand.rows[u])] + [e])
            equal.append(e)
        d = q.new_bool_var("")
        q.add(sum(equal) <= int(cand.copies[u]) - 1).only_enforce_if(d)
        broken.append(d)
    if cand.open_cells is not None:
        for r, c in zip(*np.nonzero(cand.open_cells)):
            broken += [_lit(x[r][j], not v) for j, v in columns[c].equals(int(cand.values[r, c]))]
    q.add_bool_or(broken)
    q.maximize(sum(broken))
    return q, x


def _refute(cand: _Candidates, bits: np.ndarray, columns: list[_Column]) -> None:
    """Lower the candidates a newly found consistent dataset contradicts."""
    for u in np.flatnonzero(cand.copies > 0):
        held = int((bits == cand.rows[u]).all(axis=1).sum())
        cand.copies[u] = min(cand.copies[u], held)
    if cand.open_cells is not None:
        cand.open_cells &= _value_indices(columns, bits) == cand.values


def _prove(
    m: _Model, cand: _Candidates, columns: list[_Column], bits: np.ndarray, deadline: float, workers: int, seed: int
) -> tuple[str, int]:
    """Backbone rounds from the first dataset ``bits`` until every candidate is decided or the time is up.

    Returns the status and the number of further datasets found.
    """
    found = 0
    last = bits
    while not cand.done():
        if deadline <= time.perf_counter():
            return "time-limit", found
        q, x = _query(m, cand, columns, last)
        left = deadline - time.perf_counter()
        if left <= 0:
            return "time-limit", found
        status, got = _solve(q, x, left, workers, seed)
        if status == "infeasible":
            return "solved", found
        if not got:
            return "time-limit", found
        found += len(got)
        for dataset in got:
            _refute(cand, dataset, columns)
        last = got[-1]
    return "solved", found


# -- the public entry --------------------------------------------------------------------------
def reconstruct(
    forest: Forest,
    n_records: int | None = None,
    *,
    time_limit: float = 60.0,
    num_workers: int = 2,
    random_seed: int = 0,
    prove: bool = True,
) -> Reconstruction:
    """Rebuild a training multiset from ``forest`` alone and prove which rows every consistent dataset holds.

    The attacker knows only the forest (Ferry et al., ICML 2024, §4; issue 14, "nothing known"):
    its trees, their per-leaf class counts and, when the forest carries them, how many times each
    tree drew each training record (:attr:`Forest.multiplicities`). ``n_records``: the number of
    training records when the forest has no multiplicities (default: the first tree's count,
    every tree counting each record once). ``time_limit``: seconds for everything (finding a
    dataset, then the proof rounds); ``num_workers``: CP-SAT threads; ``prove=False`` stops after
    the first dataset. Raises :class:`InfeasibleError` when no dataset reproduces the counts.
    """
    start = time.perf_counter()
    deadline = start + time_limit
    if forest.combine == "additive":
        raise PpdmError("an additive (boosted) forest publishes scores, not the class counts reconstruction needs")
    columns = _columns(forest)
    cells = _published(forest, columns)
    M = _multiplicities(forest, n_records, cells)
    m = _build(columns, cells, M)
    unused = [a for a in forest.attributes if a not in {c.name for c in columns}]
    status, got = _solve(m.model, m.x, deadline - time.perf_counter(), num_workers, random_seed)
    bits = got[0] if got else None
    if status == "infeasible":
        raise InfeasibleError("no dataset reproduces the forest's per-leaf class counts", [f"{forest.n_trees} trees"])
    n = M.shape[1]
    if bits is None:
        none = np.zeros(n, dtype=bool)
        return Reconstruction(None, none, ~none, None, "no-solution", 0, time.perf_counter() - start, unused)
    cand = _candidates(bits, columns, m.canonical)
    first = cand.copies.copy()
    status, found = _prove(m, cand, columns, bits, deadline, num_workers, random_seed) if prove else ("unproved", 0)
    proved, undecided = _row_flags(cand, first, status, n)
    certain = None
    if cand.open_cells is not None and status != "unproved":
        flags = cand.open_cells & (status == "solved")
        certain = pd.DataFrame(flags, columns=[c.name for c in columns])
    data = _decode(columns, bits)
    return Reconstruction(data, proved, undecided, certain, status, found + 1, time.perf_counter() - start, unused)


def _row_flags(cand: _Candidates, first: np.ndarray, status: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per record: proved (one of a row's proved copies) and undecided (still a candidate at the end)."""
    proved = np.zeros(n, dtype=bool)
    undecided = np.zeros(n, dtype=bool)
    flag = proved if status == "solved" else undecided
    for u, slots in enumerate(cand.slots):
        flag[slots[: cand.copies[u]]] = True
    return proved, undecided


def _decode(columns: list[_Column], bits: np.ndarray) -> pd.DataFrame:
    idx = _value_indices(columns, bits)
    frame = {c.name: pd.Series(np.asarray(c.values + [None], dtype=object)[idx[:, i]]) for i, c in enumerate(columns)}
    return pd.DataFrame(frame).infer_objects()


# -- reconstruction error ----------------------------------------------------------------------
def match_rows(reconstructed: pd.DataFrame, truth: pd.DataFrame, columns: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pair reconstructed rows with true rows at the fewest wrong values (Ferry et al. §5).

    Returns, per true row, the index of its reconstructed row and the number of ``columns``
    (default: the columns both tables have) where the two disagree. A numeric value is right
    when it lies in the reconstructed interval; a missing reconstructed value is always wrong.
    The pairing is a minimum-cost perfect matching (:func:`scipy.optimize.linear_sum_assignment`).
    """
    from scipy.optimize import linear_sum_assignment

    if len(reconstructed) != len(truth):
        raise DataError(f"{len(reconstructed)} reconstructed rows against {len(truth)} true rows")
    names = [c for c in reconstructed.columns if c in truth.columns] if columns is None else list(columns)
    for name in names:
        for frame, what in ((reconstructed, "reconstructed"), (truth, "true")):
            if name not in frame.columns:
                raise DataError(f"column {name!r} is missing from the {what} rows")
    cost = sum(_mismatch(reconstructed[name], truth[name]) for name in names)
    cost = np.asarray(cost, dtype=np.int64).reshape(len(reconstructed), len(truth))
    rec, tru = linear_sum_assignment(cost)
    pick = np.empty(len(truth), dtype=np.intp)
    pick[tru] = rec
    return pick, cost[pick, np.arange(len(truth))]


def reconstruction_error(reconstructed: pd.DataFrame, truth: pd.DataFrame, columns: Sequence[str] | None = None) -> float:
    """Share of wrong values after :func:`match_rows` (Ferry et al.'s reconstruction error)."""
    names = [c for c in reconstructed.columns if c in truth.columns] if columns is None else list(columns)
    _, wrong = match_rows(reconstructed, truth, names)
    return float(wrong.sum()) / max(len(truth) * len(names), 1)


def _mismatch(rec: pd.Series, tru: pd.Series) -> np.ndarray:
    """Reconstructed rows × true rows: 1 where the values disagree."""
    values = rec.to_numpy(dtype=object)
    if any(isinstance(v, pd.Interval) for v in values):
        left = np.array([v.left if isinstance(v, pd.Interval) else np.nan for v in values], dtype=float)
        right = np.array([v.right if isinstance(v, pd.Interval) else np.nan for v in values], dtype=float)
        t = pd.to_numeric(tru, errors="coerce").to_numpy(dtype=float)
        return ~((t[None, :] > left[:, None]) & (t[None, :] <= right[:, None]))
    codes, _ = pd.factorize(pd.concat([pd.Series(values), pd.Series(tru.to_numpy(dtype=object))], ignore_index=True))
    a, b = codes[: len(values)], codes[len(values) :]
    return (a[:, None] != b[None, :]) | (a[:, None] < 0)
