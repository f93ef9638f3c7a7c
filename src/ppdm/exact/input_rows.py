"""What a published regressor says about a numeric *input* of its training records, the target known.

The attacker knows every input of each training record but one numeric column s, and the record's
target y. The trees' thresholds on s cut its domain ``[lo, hi]`` into *cells* (``x <= t`` goes
left, so cell j is ``(t_{j−1}, t_j]``, clipped to the domain); a record's value of s decides, cell
by cell, its leaf in every tree. Records with the same known values, target and multiplicities
are interchangeable (a *group*, :func:`ppdm.maxent.table.forest_types._groups`); the cells that
send a group to the same leaf in every tree form one *block* (a joint leaf, as in
:mod:`ppdm.maxent.table.forest_types`): along a path each split on s keeps a half-line, so a
block's cells are one contiguous range, the same for every group that reaches it.

The unknowns are whole numbers x_{g,b}: how many of group g's records lie in block b (a
*variable*, ``0 ≤ x ≤ n_g``, Σ_b x_{g,b} = n_g). Because y is known, every leaf Λ of every tree
gives two linear rows over them (the same as :mod:`ppdm.exact.target_rows` gives over the
targets, with the records' membership unknown instead of their targets):

* its **count**: Σ_{(g,b) → Λ} m_{g,t} x_{g,b} = N_Λ;
* its **value**: a regression tree or a forest's tree (``"mean"``) publishes the mean target,
  Σ m y_g x_{g,b} = v N_Λ; round t of a squared-error boosted model publishes
  ``v = −η Σ m (F_{t−1} − y) / (N + λ)``, and F_{t−1}, the score before the round, is fixed by
  the block (every earlier leaf), so Σ m (y_g − F_{b,t−1}) x_{g,b} = (v/η)(N + λ), each as the
  interval ``b ± τ`` of the library's precision (:mod:`ppdm.exact.target_rows`).

A tree whose multiplicities the model does not tie to the records, or whose step it hides, gives
no row, with the reason (:class:`~ppdm.maxent.table.forest_types.RoundsUsed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, PpdmError, RoutingLimitError
from ppdm.exact.target_rows import ABSOLUTE, _scores_before, as_forest
from ppdm.maxent.table.forest_types import UNTIED, RoundsUsed, _groups, split_component, unique_rows
from ppdm.tree.forest import Forest, leaf_values
from ppdm.tree.forest_check import weights_of
from ppdm.tree.model import Tree
from ppdm.tree.newton import FLOAT64_TOLERANCE, NewtonStep, newton_step

#: The most (group, cell, tree) routes before refusing (each route is one leaf look-up).
MAX_ROUTES = 200_000_000

#: Relative slack of a count row (counts read from stored weighted sample counts).
COUNT_SLACK = 1e-6


@dataclass
class Cells:
    """The sensitive input's cells: ``lower``/``upper`` their edges within the domain (cell j
    holds ``lower_j < s ≤ upper_j``, the first cell from ``lower_0`` itself), ``route`` a value
    every tree sends as the whole cell, and ``thresholds`` the trees' cut points."""

    thresholds: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    route: np.ndarray

    @property
    def n_cells(self) -> int:
        return len(self.lower)

    @property
    def mid(self) -> np.ndarray:
        return (self.lower + self.upper) / 2.0

    def codes(self, values: np.ndarray) -> np.ndarray:
        """The cell of each value (the values lie in the domain)."""
        cuts = self.upper[:-1]
        return np.searchsorted(cuts, values, side="left").astype(np.intp)


def input_cells(forest: Forest, sensitive: str, domain: tuple[float, float]) -> Cells:
    """The cells every tree's thresholds on ``sensitive`` cut in ``domain`` (module docstring)."""
    component = split_component(forest, sensitive, "sensitive")
    if not component.is_numeric:
        raise PpdmError(
            f"the sensitive input {sensitive!r} is categorical: a regressor's audit proves intervals of a numeric input only"
        )
    t = np.asarray(component.thresholds, dtype=float)
    lo, hi = domain
    inside = t[(t > lo) & (t < hi)]  # thresholds outside the domain cut nothing in it
    lower = np.r_[lo, inside]
    upper = np.r_[inside, hi]
    route = upper.copy()  # x <= t goes left: a cell's upper edge travels with the cell
    return Cells(t, lower, upper, route)


@dataclass
class LeafEntries:
    """Each (leaf, variable) pair of the rows: its value row, its count row, the variable, the
    multiplicity m and the coefficient per record (y, or y − F for a boosting round)."""

    value_row: np.ndarray
    count_row: np.ndarray
    var: np.ndarray
    m: np.ndarray
    unit: np.ndarray


@dataclass
class InputRows:
    """Rows ``lower ≤ A x ≤ upper`` over the variables x_{g,b} (module docstring).

    Per variable: ``var_group``, ``var_block``, ``first_cell``/``last_cell`` (its cells' range);
    per group: ``groups`` (records, ``target`` y); per block: ``block_weight`` (its group's
    multiplicity in each tree); per row: ``tree`` and ``leaf`` (−1 for a group's own row Σ_b x = n_g)
    and ``kind`` (``"group"``, ``"count"``, ``"value"``). ``true_var``: each record's variable when
    the table holds the input (``true_cell`` its cell); ``known_group``: groups of a known individual.
    """

    cells: Cells
    groups: QIGroups
    target: np.ndarray
    var_group: np.ndarray
    var_block: np.ndarray
    first_cell: np.ndarray
    last_cell: np.ndarray
    block_weight: np.ndarray
    matrix: sp.csr_matrix
    lower: np.ndarray
    upper: np.ndarray
    tree: np.ndarray
    leaf: np.ndarray
    kind: np.ndarray
    rounds: RoundsUsed
    entries: LeafEntries
    true_var: np.ndarray | None
    true_cell: np.ndarray | None
    known_group: np.ndarray | None

    @property
    def n_vars(self) -> int:
        return len(self.var_group)

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """Each variable's box ``[0, n_g]``; a known individual's group sits in its true block."""
        lo = np.zeros(self.n_vars)
        hi = self.groups.counts[self.var_group].astype(float)
        if self.known_group is not None and self.known_group.any():
            assert self.true_var is not None
            first = self.groups.first_rows()
            pinned = self.known_group[self.var_group]
            is_true = np.zeros(self.n_vars, dtype=bool)
            is_true[self.true_var[first[self.known_group]]] = True
            hi[pinned & ~is_true] = 0.0
            lo[pinned & is_true] = hi[pinned & is_true]
        return lo, hi

    def truth(self) -> np.ndarray | None:
        """The records' counts per variable, when the table holds the input."""
        if self.true_var is None:
            return None
        return np.bincount(self.true_var, minlength=self.n_vars).astype(float)

    def violations(self, x: np.ndarray) -> np.ndarray:
        ax = self.matrix @ x
        return np.maximum(self.lower - ax, 0.0) + np.maximum(ax - self.upper, 0.0)


def input_rows(
    model: Tree | Forest, table: pd.DataFrame, known: Sequence[str], sensitive: str, domain: tuple[float, float],
    individuals: Sequence[int] = (),
) -> InputRows:  # fmt: skip
    """The rows a regressor publishes over the cells of its input ``sensitive``, for an attacker who
    knows the columns ``known`` (every other input and the target) of every record."""
    forest = as_forest(model)
    target = forest.class_attribute
    missing = [c for c in (*forest.split_attributes, target) if c != sensitive and c not in set(known)]
    if missing:
        raise PpdmError(
            f"a regressor's sensitive input {sensitive!r} is audited for an attacker who knows every other input and the target; "
            f"not known: {', '.join(map(repr, missing))}"
        )
    cells = input_cells(forest, sensitive, domain)
    n = len(table)
    y = table[target].to_numpy(dtype=float)
    weights = [weights_of(forest, t, n) for t in range(forest.n_trees)]
    tied = [w for w in weights if w is not None]
    signature = np.column_stack(tied).astype(np.int64) if tied else np.zeros((n, 0), dtype=np.int64)
    known_cols = list(dict.fromkeys([*[c for c in known if c in table.columns and c != sensitive], target]))
    groups, known_group = _groups(table, known_cols, signature, individuals)
    first = groups.first_rows()
    gy = y[first]
    block_of_gc = _route(forest, groups, sensitive, cells, signature[first])
    var_key = np.column_stack([np.repeat(np.arange(groups.n_groups), cells.n_cells), block_of_gc.ravel()])
    first_var, var_of_gc = unique_rows(var_key)
    var_group, var_block = var_key[first_var, 0].astype(np.intp), var_key[first_var, 1].astype(np.intp)
    cell_of_gc = np.tile(np.arange(cells.n_cells), groups.n_groups)
    n_vars = len(first_var)
    first_cell = np.full(n_vars, cells.n_cells, dtype=np.intp)
    last_cell = np.zeros(n_vars, dtype=np.intp)
    np.minimum.at(first_cell, var_of_gc, cell_of_gc)
    np.maximum.at(last_cell, var_of_gc, cell_of_gc)
    # the leaves and multiplicities of every block, from one representative (group, cell) each
    n_blocks = int(var_block.max()) + 1
    rep_gc = np.zeros(n_blocks, dtype=np.intp)
    rep_gc[block_of_gc.ravel()] = np.arange(block_of_gc.size)
    rep_group, rep_cell = np.divmod(rep_gc, cells.n_cells)
    frame = groups.table.iloc[rep_group].reset_index(drop=True).assign(**{sensitive: cells.route[rep_cell]})
    block_leaves = forest.apply(frame)
    block_weight = np.ones((n_blocks, forest.n_trees), dtype=np.int64)
    tied_at = [t for t, w in enumerate(weights) if w is not None]
    if tied_at:
        block_weight[:, tied_at] = signature[first][rep_group]
    true_var = true_cell = None
    if sensitive in table.columns:
        true_cell = cells.codes(_input_values(table, sensitive, domain))
        true_var = var_of_gc[groups.group_of_record * cells.n_cells + true_cell]
    rows = _rows(forest, block_leaves, block_weight, weights, var_group, var_block, gy, groups.counts, float(np.max(np.abs(y), initial=0.0)))
    matrix, lower, upper, tree, leaf, kind, rounds, entries = rows
    return InputRows(
        cells, groups, gy, var_group, var_block, first_cell, last_cell, block_weight, matrix, lower, upper, tree, leaf, kind,
        rounds, entries, true_var, true_cell, known_group,
    )


def _input_values(table: pd.DataFrame, sensitive: str, domain: tuple[float, float]) -> np.ndarray:
    try:
        values = table[sensitive].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"column {sensitive!r} is the regressor's sensitive input and must be numeric") from None
    lo, hi = domain
    out = ~np.isfinite(values) | (values < lo) | (values > hi)
    if out.any():
        at = int(np.argmax(out))
        raise DataError(f"column {sensitive!r}: row {at} holds {table[sensitive].iloc[at]!r}, outside the domain [{lo:g}, {hi:g}]")
    return values


def _route(forest: Forest, groups: QIGroups, sensitive: str, cells: Cells, signature: np.ndarray) -> np.ndarray:
    """Each (group, cell)'s block (groups × cells): its joint leaf over every tree and its group's
    multiplicities, numbered as they first differ (routed tree by tree, never all trees at once)."""
    n_pairs = groups.n_groups * cells.n_cells
    if n_pairs * forest.n_trees > MAX_ROUTES:
        raise RoutingLimitError.over(
            f"the sensitive input {sensitive!r} has {cells.n_cells} cells for each of {groups.n_groups:,} groups over "
            f"{forest.n_trees} trees: {n_pairs * forest.n_trees:,} leaves to route (at most {MAX_ROUTES:,})",
            n_pairs, MAX_ROUTES,
        )
    pair_group = np.repeat(np.arange(groups.n_groups), cells.n_cells)
    frame = groups.table.iloc[pair_group].reset_index(drop=True)
    frame[sensitive] = np.tile(cells.route, groups.n_groups)
    encoded = forest.encode(frame)
    code = unique_rows(signature)[1][pair_group] if signature.shape[1] else np.zeros(n_pairs, dtype=np.int64)
    code = code.astype(np.int64)
    for tree in forest.trees:
        leaf = tree.apply_encoded(encoded, n_pairs)
        _, code = np.unique(code * tree.n_nodes + leaf, return_inverse=True)
        code = code.ravel().astype(np.int64)
    return code.reshape(groups.n_groups, cells.n_cells)


def _rows(
    forest: Forest, block_leaves: np.ndarray, block_weight: np.ndarray, weights: list[np.ndarray | None], var_group: np.ndarray,
    var_block: np.ndarray, gy: np.ndarray, counts: np.ndarray, magnitude: float,
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, RoundsUsed, LeafEntries]:  # fmt: skip
    """The group rows, then each used tree's count and value rows (module docstring)."""
    n_vars, n_groups = len(var_group), len(counts)
    additive = forest.combine == "additive"
    step: NewtonStep | str = newton_step(forest) if additive else NewtonStep(1.0, 0.0, 1.0, tolerance=FLOAT64_TOLERANCE)
    rounds = RoundsUsed(forest.n_trees)
    values = [leaf_values(t) for t in forest.trees]
    scores = _scores_before(forest, block_leaves, values, step) if additive and isinstance(step, NewtonStep) else None
    rows, cols, data = [var_group], [np.arange(n_vars)], [np.ones(n_vars)]
    lower, upper = [counts.astype(float)], [counts.astype(float)]
    tree_of, leaf_of, kind = [np.full(n_groups, -1)], [np.full(n_groups, -1)], [np.full(n_groups, "group", dtype=object)]
    offset = n_groups
    entries: list[tuple[np.ndarray, ...]] = []
    for t, tree in enumerate(forest.trees):
        if isinstance(step, str):
            rounds.leave_out(t, step)
            continue
        if weights[t] is None:
            rounds.leave_out(t, UNTIED)
            continue
        ids = np.array([node.id for node in tree.leaves()], dtype=np.intp)
        size = np.array([np.nan if tree.nodes[i].n_samples is None else float(tree.nodes[i].n_samples) for i in ids])
        usable = ~np.isnan(size)
        v = values[t][ids]
        if additive and step.min_hessian > 0:  # valued exactly 0: maybe below the hessian floor, no step
            usable &= v != 0.0
        if not usable.any():
            rounds.leave_out(t, "no leaf publishes its rows")
            continue
        rounds.used.append(t)
        position = np.full(tree.n_nodes, -1, dtype=np.intp)
        position[ids[usable]] = np.arange(int(usable.sum()))
        m = block_weight[var_block, t].astype(float)
        at = position[block_leaves[var_block, t]]
        take = (at >= 0) & (m > 0)
        k = int(usable.sum())
        N, v = size[usable], v[usable]
        if additive:
            assert scores is not None and isinstance(step, NewtonStep)
            f = scores[var_block, t]
            bias = float(scores[0, 0]) if t == 0 and step.biased_first_round else 0.0
            r = (v - bias) / step.learning_rate
            coef = m * (gy[var_group] - f)
            b = r * (N + step.l2)
            widest = np.zeros(k)
            np.maximum.at(widest, at[take], np.abs(f[take]) + magnitude)
            tol = step.tolerance * (N * widest + np.abs(r) * (N + step.l2))
        else:
            coef = m * gy[var_group]
            b = v * N
            tol = step.tolerance * N * (magnitude + np.abs(v))
        tol = tol + ABSOLUTE * np.maximum(1.0, np.abs(b))
        count_slack = COUNT_SLACK * np.maximum(N, 1.0)
        for j, (c, rhs, slack, name) in enumerate(((m, N, count_slack, "count"), (coef, b, tol, "value"))):
            rows.append(offset + j * k + at[take])
            cols.append(np.flatnonzero(take))
            data.append(c[take])
            lower.append(rhs - slack)
            upper.append(rhs + slack)
            tree_of.append(np.full(k, t))
            leaf_of.append(ids[usable])
            kind.append(np.full(k, name, dtype=object))
        where = np.flatnonzero(take)
        unit = coef[where] / m[where]
        entries.append((offset + k + at[where], offset + at[where], where, m[where], unit))
        offset += 2 * k
    matrix = sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(offset, n_vars))
    return (
        matrix, np.concatenate(lower), np.concatenate(upper), np.concatenate(tree_of).astype(np.intp),
        np.concatenate(leaf_of).astype(np.intp), np.concatenate(kind), rounds, _entries(entries),
    )  # fmt: skip


def _entries(parts: list[tuple[np.ndarray, ...]]) -> LeafEntries:
    if not parts:
        empty = np.zeros(0, dtype=np.intp)
        return LeafEntries(empty, empty, empty, np.zeros(0), np.zeros(0))
    value_row, count_row, var, m, unit = (np.concatenate(p) for p in zip(*parts))
    return LeafEntries(value_row.astype(np.intp), count_row.astype(np.intp), var.astype(np.intp), m, unit)
