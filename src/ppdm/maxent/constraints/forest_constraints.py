"""Constraints an attacker derives from a published forest: every tree's rows in one problem.

Paper 000 §4's rows for one tree (:mod:`ppdm.maxent.constraints.tree_constraints`) are linear in P(q, u);
over a :class:`~ppdm.tree.forest.Forest` every (q, u) lands in one leaf of every tree, so each
tree adds its own rows over the same variables, laid out over the types of a
:class:`~ppdm.maxent.table.forest_types.ForestTypes` (joint leaf, class, sensitive cell). A type's
coefficient in tree t's rows is the multiplicity m_t with which tree t counts its records (1
without bootstrap, 0 out of bag). What a tree contributes is what ``forest.publishes(t)`` says
it publishes, nothing invented:

* ``class-counts``: Σ_{t → Λ, class c} m_t P(t) = n_{Λ,c} / N per leaf Λ and class c
  (scikit-learn forests; the first tree of a binary log-loss boosted model);
* ``error-rates``: the rate row Σ_{t → Λ, label} m_t P(t) = (n − e) / N and the size row;
* ``sample-counts`` (without classes): the size row Σ_{t → Λ} m_t P(t) = n / N (every tree of
  scikit-learn and LightGBM boosting): informative about unknown split attributes only;
* ``labels`` (vote and mean-proba forests, when no counts say more): the label rows
  P(C | Λ) ≥ P(W | Λ). An additive forest's labels are placeholders: no rows;
* the SA rows (§4.3) once for the whole forest when the sensitive distribution is published.

* ``leaf-values`` of a boosted model's rounds after the first: the Newton step each leaf's value
  took, linear in P(q, u) because the attacker computes each type's score before the round
  (:mod:`ppdm.maxent.constraints.boosting_rows`): class-count rows where the groups decide the
  leaf's records, leaf-value and cover rows (intervals at the file's precision) where not.

Rows the groups alone decide are checked against the groups (a table that contradicts the model
raises, naming tree and leaf) and dropped.

:func:`forest_type_problem` returns the problem and the attacker's table, the pair that any
audit of a forest (maximum entropy, exact bounds) starts from.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.errors import DataError, MaxEntError
from ppdm.maxent.constraints.boosting_rows import boosting_rows
from ppdm.maxent.constraints.leaf_rows import Decide, LeafRows, sa_rows
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.table.forest_types import ForestTypes, forest_types
from ppdm.tree.forest import Forest

#: Called after each tree's rows are built with (trees done, trees in all).
Progress = Callable[[int, int], None]


def forest_type_problem(
    forest: Forest,
    data: pd.DataFrame,
    known: Sequence[str],
    sensitive: str,
    knowledge: Knowledge = Knowledge(),
    individuals: Sequence[int] = (),
    progress: Progress | None = None,
    outputs: str | None = None,
    deadline: float | None = None,
    max_routed: int | None = None,
) -> tuple[FactoredProblem, ForestTypes]:
    """The maximum-entropy problem of a forest and the attacker's table it is over.

    ``knowledge.sa`` takes the sensitive distribution of ``data`` as published; ``individuals``
    are rows the attacker fully knows (pinned groups); ``outputs``: the forest's answer about each
    person the attacker sees (``"label"``, ``"score"``; :mod:`ppdm.maxent.table.outputs`).
    Internal-node constraints (§4.2) are not built for forests. ``deadline``: see :func:`forest_problem`;
    ``max_routed``: the table's cap on routes (:func:`~ppdm.maxent.table.forest_types.forest_types`).
    """
    if knowledge.internal:
        raise MaxEntError("internal-node constraints are built for a single tree, not for a forest")
    types = forest_types(forest, data, known, sensitive, individuals, outputs, max_routed)
    sa = None
    if knowledge.sa:
        sa = types.sensitive_distribution()
        if sa is None:
            raise DataError("SA constraints need the sensitive column in the data (its distribution is published)")
    return forest_problem(types, knowledge, sa, progress, deadline), types


def forest_problem(
    types: ForestTypes, knowledge: Knowledge = Knowledge(), sa_distribution: np.ndarray | None = None, progress: Progress | None = None,
    deadline: float | None = None,
) -> FactoredProblem:
    """Every used tree's rows, every boosting round's leaf-value rows (and the SA rows) over the
    types of ``types``; ``types.rounds`` says which trees of a boosted model gave rows.

    ``deadline`` (a ``time.perf_counter()`` reading; forests whose trees are not added up): no
    tree's rows are built after it. The trees not reached are left out (``types.used`` false,
    ``types.unread``): the problem then holds fewer rows, a weaker attacker whose answer is a
    lower bound on what the forest discloses, and the audit says so. Boosting rounds are always
    all read (a later round's rows depend on the earlier ones)."""
    problem = types.problem()
    decide = _decider(types, problem)
    trees = np.flatnonzero(types.used)
    cut = deadline if types.forest.combine != "additive" else None
    for done, t in enumerate(trees, start=1):
        if cut is not None and done > 1 and time.perf_counter() >= cut:
            types.unread = [int(u) for u in trees[done - 1:]]
            types.used[trees[done - 1:]] = False
            break
        for block in _tree_rows(types, int(t), decide).blocks(knowledge.rate, knowledge.label):
            problem.add(block)
        if progress is not None:
            progress(done, len(trees))
    rows, types.rounds = boosting_rows(types, decide)
    for block in rows:
        problem.add(block)
    if knowledge.sa:
        n = types.n_types
        problem.add(sa_rows(types.type_sens, np.arange(n), n, types.domain.sensitive, sa_distribution))
    return problem


def _decider(types: ForestTypes, problem: FactoredProblem) -> Decide:
    """The rows the groups alone decide (:meth:`FactoredProblem.decided_rows`), in O(nnz) when
    every group reaches one joint leaf and takes all its types (paper 000's setting): a row is
    decided when it holds every type of each block it touches with one coefficient."""
    reach = types.reach
    one_block = bool((np.diff(reach.indptr) == 1).all()) and bool((types.group_class < 0).all()) and problem.pinned is None
    if not one_block:
        return problem.decided_rows
    block_mass = np.bincount(reach.indices, weights=types.groups.weights, minlength=types.n_blocks)
    size = np.bincount(types.type_block, minlength=types.n_blocks)

    def decide(A: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        coo = A.tocoo()
        n_rows = A.shape[0]
        key = coo.row.astype(np.int64) * types.n_blocks + types.type_block[coo.col]
        order = np.argsort(key, kind="stable")
        key, val = key[order], coo.data[order]
        if len(key) == 0:
            return np.ones(n_rows, dtype=bool), np.zeros(n_rows)
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        count = np.diff(np.r_[starts, len(key)])
        lo, hi = np.minimum.reduceat(val, starts), np.maximum.reduceat(val, starts)
        row, block = key[starts] // types.n_blocks, key[starts] % types.n_blocks
        whole = (count == size[block]) & (hi - lo <= 1e-12 * np.abs(hi))
        bad = np.zeros(n_rows, dtype=bool)
        bad[row[~whole]] = True
        value = np.bincount(row, weights=lo * block_mass[block], minlength=n_rows)
        return ~bad, value

    return decide


def _tree_rows(types: ForestTypes, t: int, decide: Decide) -> LeafRows:
    """Tree ``t``'s rows over the types (coefficient: the type's multiplicity in tree ``t``)."""
    coef = types.block_weight[types.type_block, t].astype(float)
    cols = np.flatnonzero(coef > 0)
    return LeafRows(
        types.forest.trees[t], cols, types.block_leaves[types.type_block[cols], t], types.type_class[cols], types.n_types,
        types.groups.n_records, decide, types.forest.known[t], coef=coef[cols], index=t,
    )
