"""The maximum-entropy builders' rows, over whole counts (the same rows feed both solvers).

:func:`from_factored` takes a tree audit laid out over slot types
(:class:`~ppdm.maxent.rows.factored_problem.FactoredProblem`, paper 000 §4 under a threat model): a
variable per (group, type) the group may take. :func:`from_joint` takes a problem over P(q, x)
(:class:`~ppdm.maxent.rows.problem.MaxEntProblem`, e.g. paper 004's AR/NAR rows): a variable per
(group, value). Rows are scaled by the number of records N and checked to be whole.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import numpy as np
import scipy.sparse as sp

from ppdm.errors import DataError
from ppdm.exact.problem import CountProblem, CountRows, whole_rows
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.rows.problem import LinearBlock, MaxEntProblem


def factored_pairs(problem: FactoredProblem) -> tuple[np.ndarray, np.ndarray]:
    """``(group, type)`` of every pair a group may take (its reachable cells' live types; a
    pinned group only its pinned type), sorted by group then type."""
    cells = problem.cells()
    live = np.isfinite(problem.base)
    types = np.flatnonzero(live)
    order = np.argsort(cells.cell_of_type[types], kind="stable")
    types = types[order]
    cell_of = cells.cell_of_type[types]
    first = np.searchsorted(cell_of, np.arange(cells.n_cells + 1))
    access = sp.csr_matrix(cells.access).tocoo()
    g, c = access.row.astype(np.intp), access.col.astype(np.intp)
    count = first[c + 1] - first[c]
    group = np.repeat(g, count)
    start = np.repeat(first[c] - (np.cumsum(count) - count), count)
    ttype = types[start + np.arange(int(count.sum()))]
    if problem.pinned is not None and (problem.pinned >= 0).any():
        pinned = problem.pinned[group]
        keep = (pinned < 0) | (pinned == ttype)
        group, ttype = group[keep], ttype[keep]
    order = np.lexsort((ttype, group))
    return group[order], ttype[order]


def n_factored_pairs(problem: FactoredProblem) -> int:
    """How many count variables :func:`factored_pairs` gives (at most: pinned groups keep one),
    without building them: per group, the live types of the cells it reaches."""
    cells = problem.cells()
    live = np.flatnonzero(np.isfinite(problem.base))
    per_cell = np.bincount(cells.cell_of_type[live], minlength=cells.n_cells)
    return int(per_cell[sp.csr_matrix(cells.access).indices].sum())


def from_factored(problem: FactoredProblem, sizes: np.ndarray, blocks: list[LinearBlock] | None = None) -> tuple[CountProblem, np.ndarray]:
    """The count problem of a factored tree audit and each variable's type.

    ``sizes``: records per group. ``blocks`` (default: the problem's own) are rows over types.
    """
    group, ttype = factored_pairs(problem)
    out = CountProblem(sizes, group, problem.type_label[ttype], problem.n_labels)
    n = int(np.asarray(sizes).sum())
    for blk in problem.blocks if blocks is None else blocks:
        out.add(whole_rows(blk.name, blk.A[:, ttype], blk.b, blk.sense, blk.row_names, n))
    return out, ttype


#: How label rows read a leaf's label: ``"first"`` under the tree's tie rule (the first class of
#: highest count wins, as argmax), ``"any"`` as the paper's ≥ rows.
Ties = Literal["first", "any"]


def factored_counts(
    problem: FactoredProblem, sizes: np.ndarray, group_of_record: np.ndarray, true_type: np.ndarray | None,
    blocks: list[LinearBlock] | None = None, ties: Ties = "first",
) -> tuple[CountProblem, np.ndarray, np.ndarray | None]:
    """The count problem of factored rows (``blocks``, default the problem's own) with label rows
    under the model's tie rule, each variable's type, and the records' counts (``None`` without
    ``true_type``, each record's type; ``group_of_record`` its group). When the records do not
    meet the tie rule the label rows fall back to the paper's ≥ rows; when they meet neither,
    :class:`~ppdm.errors.DataError`."""
    counts, ttype = from_factored(problem, sizes, blocks)
    if ties == "first":
        counts.rows = [strict_ties(r, problem.type_tag[ttype]) if _is_label(r) else r for r in counts.rows]
    truth = None
    if true_type is not None:
        truth = truth_counts(counts.var_group, ttype, group_of_record, true_type)
        if truth is not None and ties == "first" and not counts.satisfied(truth):
            # the model's labels do not follow argmax ties: fall back to the paper's ≥ rows
            counts.rows = [replace(r, strict=None) if _is_label(r) else r for r in counts.rows]
            if not counts.satisfied(truth):
                raise DataError("the table's own records do not reproduce the published model (audit it against its training records)")
    counts.truth = truth
    return counts, ttype, truth


def _is_label(rows: CountRows) -> bool:
    return rows.name == "label" or rows.name.startswith("label tree ")


def from_joint(problem: MaxEntProblem, sizes: np.ndarray) -> CountProblem:
    """The count problem of rows over P(q, x): a variable per group and possible value."""
    possible = np.ones((problem.n_groups, problem.n_values), dtype=bool)
    if problem.impossible is not None:
        possible &= ~problem.impossible
    cols = np.flatnonzero(possible.ravel())
    out = CountProblem(sizes, cols // problem.n_values, cols % problem.n_values, problem.n_values)
    n = int(np.asarray(sizes).sum())
    for blk in problem.blocks:
        out.add(whole_rows(blk.name, blk.A[:, cols], blk.b, blk.sense, blk.row_names, n))
    return out


def truth_counts(var_group: np.ndarray, var_key: np.ndarray, record_group: np.ndarray, record_key: np.ndarray) -> np.ndarray | None:
    """The records' counts per variable (variables sorted by (group, key)); ``None`` if some record
    falls on no variable."""
    n_keys = int(max(var_key.max(initial=0), record_key.max(initial=0))) + 1
    keys = var_group.astype(np.int64) * n_keys + var_key
    wanted = record_group.astype(np.int64) * n_keys + record_key
    order = np.argsort(keys, kind="stable")
    pos = np.searchsorted(keys[order], wanted)
    pos = np.minimum(pos, max(len(keys) - 1, 0))
    if not len(keys) or not np.array_equal(keys[order][pos], wanted):
        return None
    return np.bincount(order[pos], minlength=len(keys)).astype(np.int64)


def strict_ties(rows: CountRows, var_class: np.ndarray) -> CountRows:
    """Label rows ``count(W) − count(C) ≤ 0`` made strict where the tree's tie rule (the first
    class of highest count wins, as ``argmax``) says so: a class W listed before the label C must
    have fewer records, unless the leaf holds no record of C at all (an empty leaf takes its
    label from elsewhere; the row then still says count(W) ≤ 0)."""
    coo = rows.A.tocoo()
    w = np.full(rows.n_rows, -1)
    c = np.full(rows.n_rows, -1)
    pos, neg = coo.data > 0, coo.data < 0
    w[coo.row[pos]] = var_class[coo.col[pos]]
    c[coo.row[neg]] = var_class[coo.col[neg]]
    strict = (w >= 0) & (c >= 0) & (w < c)
    return CountRows(rows.name, rows.A, rows.b, rows.sense, rows.row_names, strict=strict)
