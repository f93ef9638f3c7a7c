"""Constraints an attacker derives from a published forest: every tree's rows in one problem.

Paper 000 §4's rows for one tree (:mod:`ppdm.maxent.tree_constraints`) are linear in P(q, u);
over a :class:`~ppdm.tree.forest.Forest` every (q, u) lands in one leaf of every tree, so each
tree adds its own rows over the same variables, laid out over the types of a
:class:`~ppdm.maxent.forest_types.ForestTypes` (joint leaf, class, sensitive cell). A type's
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

Rows the groups alone decide are checked against the groups (a table that contradicts the model
raises, naming tree and leaf) and dropped. Leaf values and covers of later boosting rounds are
not linear in P(q, u) (each record's gradient depends on its own score) and give no rows.

:func:`forest_type_problem` returns the problem and the attacker's table, the pair that any
audit of a forest (maximum entropy, exact bounds) starts from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.errors import DataError, MaxEntError
from ppdm.maxent.factored_problem import FactoredProblem
from ppdm.maxent.forest_types import ForestTypes, forest_types
from ppdm.maxent.problem import LinearBlock
from ppdm.maxent.tree_constraints import COUNT_TOLERANCE, Knowledge, _sa_rows, check_decided
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
) -> tuple[FactoredProblem, ForestTypes]:
    """The maximum-entropy problem of a forest and the attacker's table it is over.

    ``knowledge.sa`` takes the sensitive distribution of ``data`` as published; ``individuals``
    are rows the attacker fully knows (pinned groups). Internal-node constraints (§4.2) are not
    built for forests.
    """
    if knowledge.internal:
        raise MaxEntError("internal-node constraints are built for a single tree, not for a forest")
    types = forest_types(forest, data, known, sensitive, individuals)
    sa = None
    if knowledge.sa:
        sa = types.sensitive_distribution()
        if sa is None:
            raise DataError("SA constraints need the sensitive column in the data (its distribution is published)")
    return forest_problem(types, knowledge, sa, progress), types


def forest_problem(
    types: ForestTypes, knowledge: Knowledge = Knowledge(), sa_distribution: np.ndarray | None = None, progress: Progress | None = None,
) -> FactoredProblem:
    """Every used tree's rows (and the SA rows) over the types of ``types``."""
    problem = types.problem()
    decide = _decider(types, problem)
    trees = np.flatnonzero(types.used)
    for done, t in enumerate(trees, start=1):
        for block in _TreeRows(types, int(t), decide).blocks(knowledge):
            problem.add(block)
        if progress is not None:
            progress(done, len(trees))
    if knowledge.sa:
        n = types.n_types
        problem.add(_sa_rows(types.type_sens, np.arange(n), n, types.domain.sensitive, sa_distribution))
    return problem


Decide = Callable[[sp.csr_matrix], "tuple[np.ndarray, np.ndarray]"]


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


class _TreeRows:
    """The rows of tree ``t`` over the types (coefficient: the type's multiplicity in tree t)."""

    def __init__(self, types: ForestTypes, t: int, decide: Decide) -> None:
        self.t = t
        self.tree = types.forest.trees[t]
        self.decide = decide
        self.k = len(self.tree.classes)
        self.n_total = types.groups.n_records
        coef = types.block_weight[types.type_block, t].astype(float)
        self.cols = np.flatnonzero(coef > 0)
        self.coef = coef[self.cols]
        self.leaf = types.block_leaves[types.type_block[self.cols], t]
        self.klass = types.type_class[self.cols]
        self.n_var = types.n_types
        self.leaves = np.unique(self.leaf)
        self.row_of_leaf = np.full(self.tree.n_nodes, -1)
        self.row_of_leaf[self.leaves] = np.arange(len(self.leaves))
        self.label = self.tree.leaf_labels()
        self.known = types.forest.known[t]
        self._check_unreached()

    def _check_unreached(self) -> None:
        reached = set(self.leaves.tolist())
        for node in self.tree.leaves():
            if node.id not in reached and (node.n_samples or 0) > COUNT_TOLERANCE:
                raise DataError(
                    f"the table does not match the forest: tree {self.t} leaf {node.id} publishes {node.n_samples:g} "
                    "records, but no record of the table can reach it"
                )

    def blocks(self, knowledge: Knowledge) -> list[LinearBlock]:
        known = self.known
        out: list[LinearBlock] = []
        if knowledge.rate and "class-counts" in known:
            out.append(self._counts_but_implied())
        elif knowledge.rate and "error-rates" in known:
            out += [self._rate(), self._size()]
        elif "sample-counts" in known:
            out.append(self._size())
        if knowledge.label and "labels" in known and "class-counts" not in known and self.k > 1:
            out.append(self._labels())
        return [b for b in (self._informative(b) for b in out) if b.n_rows]

    def _block(self, family: str, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n_rows: int, b: np.ndarray, names: list[str], sense: str = "eq") -> LinearBlock:
        A = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, self.n_var))
        return LinearBlock(f"{family} tree {self.t}", A, b, sense, names)  # type: ignore[arg-type]

    def _counts(self) -> LinearBlock:
        counts = np.stack([self.tree.nodes[i].counts for i in self.leaves])
        rows = self.row_of_leaf[self.leaf] * self.k + self.klass
        names = [f"count(tree {self.t} leaf {i}, {c})" for i in self.leaves for c in self.tree.classes]
        return self._block("class-count", rows, self.cols, self.coef, len(self.leaves) * self.k, counts.ravel() / self.n_total, names)

    def _counts_but_implied(self) -> LinearBlock:
        """The class-count rows, without the last class's row of each leaf whose size the groups
        decide (checked here): it is the size minus the other rows, and leaving it in would make
        the dual's Hessian singular."""
        counts = self._counts()
        if self.k < 2:
            return counts
        decided = self._check_decided(self._size())  # raises when a decided size contradicts the table
        drop = np.zeros(counts.n_rows, dtype=bool)
        drop[np.flatnonzero(decided) * self.k + self.k - 1] = True
        keep = np.flatnonzero(~drop)
        return LinearBlock(counts.name, counts.A[keep], counts.b[keep], "eq", [counts.row_names[i] for i in keep])

    def _rate(self) -> LinearBlock:
        nodes = [self.tree.nodes[i] for i in self.leaves]
        correct = np.array([n.n_samples - n.n_errors for n in nodes], dtype=float)
        hit = self.klass == self.label[self.leaf]
        names = [f"rate(tree {self.t} leaf {n.id}: {c:g} of {n.n_samples:g} correct)" for n, c in zip(nodes, correct)]
        return self._block("rate", self.row_of_leaf[self.leaf][hit], self.cols[hit], self.coef[hit], len(self.leaves), correct / self.n_total, names)

    def _size(self) -> LinearBlock:
        sizes = np.array([self.tree.nodes[i].n_samples for i in self.leaves], dtype=float)
        names = [f"size(tree {self.t} leaf {i}: {s:g} records)" for i, s in zip(self.leaves, sizes)]
        return self._block("size", self.row_of_leaf[self.leaf], self.cols, self.coef, len(self.leaves), sizes / self.n_total, names)

    def _labels(self) -> LinearBlock:
        """Σ_{W} m P − Σ_{C} m P ≤ 0 per leaf with label C and other class W (paper 000 §4.1)."""
        k, lab = self.k, self.label[self.leaf]
        base = self.row_of_leaf[self.leaf] * (k - 1)
        is_label = self.klass == lab
        minus_rows = (base[is_label][:, None] + np.arange(k - 1)).ravel()
        other = ~is_label
        plus_rows = base[other] + self.klass[other] - (self.klass[other] > lab[other])
        rows = np.concatenate([plus_rows, minus_rows])
        cols = np.concatenate([self.cols[other], np.repeat(self.cols[is_label], k - 1)])
        vals = np.concatenate([self.coef[other], -np.repeat(self.coef[is_label], k - 1)])
        names = [
            f"label(tree {self.t} leaf {i}: P({self.tree.classes[self.label[i]]}) >= P({self.tree.classes[w]}))"
            for i in self.leaves for w in range(k) if w != self.label[i]
        ]
        return self._block("label", rows, cols, vals, len(self.leaves) * (k - 1), np.zeros(len(names)), names, "le")

    def _informative(self, block: LinearBlock) -> LinearBlock:
        """Drop the rows the groups alone decide, after checking them against the groups."""
        constant = self._check_decided(block)
        if not constant.any():
            return block
        keep = np.flatnonzero(~constant)
        return LinearBlock(block.name, block.A[keep], block.b[keep], block.sense, [block.row_names[i] for i in keep])

    def _check_decided(self, block: LinearBlock) -> np.ndarray:
        """The rows of ``block`` the groups decide, each checked against the groups' value."""
        constant, value = self.decide(block.A)
        if constant.any():
            check_decided(block, constant, value, self.n_total, "forest")
        return constant
