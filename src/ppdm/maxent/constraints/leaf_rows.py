"""The rows one tree's leaves publish, over the attacker's variables (paper 000 §4.1, §4.3).

One builder for a tree audited alone and for every tree of a forest. Each variable (a slot
P(q, slot), or a type P(t) of the factored form) lands in one leaf Λ of the tree and has one
class; it enters the tree's rows with a coefficient m, its multiplicity in the tree (1 for a
tree alone or without bootstrap, 0 out of bag). What the tree publishes
(:func:`ppdm.tree.forest.published_quantities`) decides the rows, nothing invented:

* ``class-counts``: Σ_{→Λ, class c} m P = n_{Λ,c} / N per leaf and class (the last class's row of
  a leaf whose size the groups decide is left out: the size minus the other rows implies it, and
  keeping it would make the dual's Hessian singular);
* ``error-rates``: the rate row Σ_{→Λ, label} m P = (n − e) / N and the size row Σ_{→Λ} m P = n / N;
* ``sample-counts`` alone (boosting rounds): the size row;
* ``labels`` when no counts say more: P(C | Λ) ≥ P(W | Λ) for the label C and every other class W.

Rows the groups alone decide are checked against the groups (a table that contradicts the model
raises, naming the row) and dropped. *Coverage* (a tree alone): the published counts are those
of the table's records (``"exact"``), of a subset of them (``"subset"``, after pruning Method 1:
rows become ≥) or of a superset (``"superset"``, training rows missing from the table: ≤); label
rows then no longer describe the table's records and are left out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import scipy.sparse as sp

from ppdm.errors import DataError, MaxEntError
from ppdm.maxent.rows.problem import LinearBlock
from ppdm.maxent.table.unknowns import Component
from ppdm.tree.model import Tree

Coverage = Literal["exact", "subset", "superset"]

#: Records by which a row the groups decide may miss its published value (float counts).
COUNT_TOLERANCE = 1e-6

#: The rows the groups alone decide, and their value: ``decide(A) -> (decided, value)``.
Decide = Callable[[sp.csr_matrix], "tuple[np.ndarray, np.ndarray]"]


class LeafRows:
    """The rows of one tree over ``n_var`` variables (see the module docstring).

    ``cols``: the variables that land in the tree (with ``leaf``, ``klass`` and ``coef`` each);
    ``n_total``: the records the published counts are shares of; ``publishes``: what the tree
    publishes; ``index``: the tree's place in its forest (``None``: a tree alone, and the rows'
    names say "leaf 4" rather than "tree 2 leaf 4").
    """

    def __init__(
        self, tree: Tree, cols: np.ndarray, leaf: np.ndarray, klass: np.ndarray, n_var: int, n_total: float, decide: Decide,
        publishes: frozenset[str], *, coef: np.ndarray | None = None, coverage: Coverage = "exact", index: int | None = None,
    ) -> None:
        self.tree, self.cols, self.leaf, self.klass = tree, cols, leaf, klass
        self.n_var, self.n_total, self.decide, self.publishes = n_var, n_total, decide, publishes
        self.coef = np.ones(len(cols)) if coef is None else np.asarray(coef, dtype=float)
        self.coverage, self.index = coverage, index
        self.k = len(tree.classes)
        self.leaves = np.unique(leaf)  # reachable leaves, in id order
        self.row_of_leaf = np.full(tree.n_nodes, -1)
        self.row_of_leaf[self.leaves] = np.arange(len(self.leaves))
        self.label = tree.leaf_labels()
        prefix = "" if index is None else f"tree {index} "
        self.leaf_names = [f"{prefix}leaf {i}" for i in self.leaves.tolist()]  # the rows' names, per reachable leaf
        self._sizes_decided: tuple[np.ndarray, np.ndarray] | None = None
        self._check_unreached()

    # -- naming -------------------------------------------------------------------------------
    def _leaf(self, i: int) -> str:
        return f"leaf {i}" if self.index is None else f"tree {self.index} leaf {i}"

    def _model(self) -> str:
        return "tree" if self.index is None else "forest"

    def _check_unreached(self) -> None:
        if self.coverage == "superset":  # training rows missing from the table may be the ones there
            return
        reached = set(self.leaves.tolist())
        for node in self.tree.leaves():
            if node.id not in reached and (node.n_samples or 0) > COUNT_TOLERANCE:
                raise DataError(
                    f"the table does not match the {self._model()}: {self._leaf(node.id)} publishes {node.n_samples:g} "
                    "records, but no record of the table can reach it"
                )

    # -- the rows -------------------------------------------------------------------------------
    def blocks(self, rate: bool = True, label: bool = True) -> list[LinearBlock]:
        """The informative rows: counts or rates with sizes (``rate``), labels (``label``)."""
        publishes, out = self.publishes, []
        sizes = None
        if "class-counts" in publishes or "error-rates" in publishes:
            sizes = self._informative(self._size(), self._decided_sizes())  # checks the sizes the groups decide
        if rate and "class-counts" in publishes:
            out.append(self._counts_but_implied())
        elif rate and sizes is not None and "error-rates" in publishes:
            out += [self._rate(), sizes]
        elif "sample-counts" in publishes and "class-counts" not in publishes:
            out.append(self._size())
        counted = rate and "class-counts" in publishes  # class counts imply the labels
        if label and "labels" in publishes and not counted and self.k > 1 and self.coverage == "exact":
            out.append(self._labels())
        return [b for b in (self._informative(b) for b in out) if b.n_rows]

    def _block(self, family: str, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n_rows: int, b: np.ndarray, names: list[str]) -> LinearBlock:
        A = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, self.n_var))
        name = family if self.index is None else f"{family} tree {self.index}"
        if self.coverage == "exact":
            return LinearBlock(name, A, b, "eq", names)
        if self.coverage == "superset":
            return LinearBlock(name, A, b, "le", names)
        return LinearBlock(name, -A, -b, "le", names)

    def _counts(self) -> LinearBlock:
        counts = np.stack([self.tree.nodes[i].counts for i in self.leaves])
        rows = self.row_of_leaf[self.leaf] * self.k + self.klass
        names = [f"count({leaf}, {c})" for leaf in self.leaf_names for c in self.tree.classes]
        return self._block("class-count", rows, self.cols, self.coef, len(self.leaves) * self.k, counts.ravel() / self.n_total, names)

    def _counts_but_implied(self) -> LinearBlock:
        """The class-count rows, without the last class's row of each leaf whose size the groups
        decide (checked in :meth:`blocks`): the size minus the other rows implies it."""
        counts = self._counts()
        if self.k < 2 or self.coverage != "exact":
            return counts
        decided, _ = self._decided_sizes()
        drop = np.zeros(counts.n_rows, dtype=bool)
        drop[np.flatnonzero(decided) * self.k + self.k - 1] = True
        keep = np.flatnonzero(~drop)
        return LinearBlock(counts.name, counts.A[keep], counts.b[keep], counts.sense, [counts.row_names[i] for i in keep])

    def _rate(self) -> LinearBlock:
        nodes = [self.tree.nodes[i] for i in self.leaves]
        correct = np.array([n.n_samples - n.n_errors for n in nodes], dtype=float)
        hit = self.klass == self.label[self.leaf]
        names = [
            f"rate({leaf}: P({self.tree.classes[self.label[n.id]]}) = {c / max(n.n_samples or 0.0, 1e-300):.4g})"
            for leaf, n, c in zip(self.leaf_names, nodes, correct)
        ]
        return self._block("rate", self.row_of_leaf[self.leaf][hit], self.cols[hit], self.coef[hit], len(self.leaves), correct / self.n_total, names)

    def _size(self) -> LinearBlock:
        sizes = np.array([self.tree.nodes[i].n_samples for i in self.leaves], dtype=float)
        names = [f"size({leaf}: {s:g} records)" for leaf, s in zip(self.leaf_names, sizes)]
        return self._block("size", self.row_of_leaf[self.leaf], self.cols, self.coef, len(self.leaves), sizes / self.n_total, names)

    def _labels(self) -> LinearBlock:
        """Σ_{W} m P − Σ_{C} m P ≤ 0 per leaf with label C and other class W (paper 000 §4.1)."""
        k, lab = self.k, self.label[self.leaf]
        base = self.row_of_leaf[self.leaf] * (k - 1)
        is_label = self.klass == lab
        # a variable of the label class enters all k − 1 rows of its leaf with −m, one of another
        # class W the row (C, W) with +m
        minus_rows = (base[is_label][:, None] + np.arange(k - 1)).ravel()
        other = ~is_label
        plus_rows = base[other] + self.klass[other] - (self.klass[other] > lab[other])
        rows = np.concatenate([plus_rows, minus_rows])
        cols = np.concatenate([self.cols[other], np.repeat(self.cols[is_label], k - 1)])
        vals = np.concatenate([self.coef[other], -np.repeat(self.coef[is_label], k - 1)])
        classes = [str(c) for c in self.tree.classes]
        names = [
            f"label({leaf}: P({classes[self.label[i]]}) >= P({classes[w]}))"
            for leaf, i in zip(self.leaf_names, self.leaves.tolist()) for w in range(k) if w != self.label[i]
        ]
        A = sp.csr_matrix((vals, (rows, cols)), shape=(len(self.leaves) * (k - 1), self.n_var))
        name = "label" if self.index is None else f"label tree {self.index}"
        return LinearBlock(name, A, np.zeros(A.shape[0]), "le", names)

    def _decided_sizes(self) -> tuple[np.ndarray, np.ndarray]:
        """The size rows the groups decide and their values (:attr:`decide` of :meth:`_size`), once."""
        if self._sizes_decided is None:
            self._sizes_decided = self.decide(self._size().A)
        return self._sizes_decided

    def _informative(self, block: LinearBlock, decided: tuple[np.ndarray, np.ndarray] | None = None) -> LinearBlock:
        """Drop the rows the groups alone decide (``decided``: already found), after checking them
        against the groups."""
        constant, value = self.decide(block.A) if decided is None else decided
        if not constant.any():
            return block
        check_decided(block, constant, value, self.n_total, self._model())
        keep = np.flatnonzero(~constant)
        return LinearBlock(block.name, block.A[keep], block.b[keep], block.sense, [block.row_names[i] for i in keep])


def check_decided(block: LinearBlock, constant: np.ndarray, value: np.ndarray, n_total: float, model: str = "tree") -> None:
    """Refuse a table whose groups alone decide a row of ``block`` at another value than published.

    ``constant``: the rows decided; ``value``: what the groups give them (shares of ``n_total``
    records); ``model`` names what publishes the rows in the error.
    """
    slack = value[constant] - block.b[constant]
    bad = np.abs(slack) if block.sense == "eq" else np.maximum(slack, 0.0)
    tol = COUNT_TOLERANCE / n_total
    if (bad > tol).any():
        r = int(np.flatnonzero(constant)[np.argmax(bad > tol)])
        raise DataError(
            f"the table contradicts what the {model} publishes: {block.row_names[r]} holds for "
            f"{abs(block.b[r]) * n_total:g} records, the table's records give {abs(value[r]) * n_total:g}"
        )


def decided_rows(A: sp.csr_matrix, weights: np.ndarray, slots_per_group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``A`` (over P(q, slot)) whose value the groups' weights alone decide, and that value.

    A row is decided when, for every group it touches, it holds every possible slot of the group
    with one and the same coefficient a: its value is then Σ a · P(q) whatever p(· | q) is.
    """
    coo = A.tocoo()
    n_groups = len(weights)
    width = A.shape[1] // max(n_groups, 1)
    if coo.nnz == 0:
        return np.ones(A.shape[0], dtype=bool), np.zeros(A.shape[0])
    group = coo.col // width
    key = coo.row.astype(np.int64) * n_groups + group
    order = np.argsort(key, kind="stable")
    key, vals = key[order], coo.data[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    count = np.diff(np.r_[starts, len(key)])
    lo, hi = np.minimum.reduceat(vals, starts), np.maximum.reduceat(vals, starts)
    pair_row, pair_group = key[starts] // n_groups, key[starts] % n_groups
    pair_ok = (count == slots_per_group[pair_group]) & (lo == hi)
    bad_rows = np.zeros(A.shape[0], dtype=bool)
    bad_rows[pair_row[~pair_ok]] = True
    value = np.bincount(pair_row, weights=lo * weights[pair_group], minlength=A.shape[0])
    return ~bad_rows, value


def sa_rows(x: np.ndarray, cols: np.ndarray, n_var: int, sensitive: Component, sa_distribution: np.ndarray | None) -> LinearBlock:
    """Σ over the variables of sensitive value x = P(x), for every x but the last (paper 000 §4.3);
    ``x``: the sensitive cell of each of the variables ``cols``."""
    k = sensitive.size
    if sa_distribution is None or len(sa_distribution) != k:
        raise MaxEntError(f"SA constraints need the distribution of the {k} sensitive values")
    keep = x < k - 1
    A = sp.csr_matrix((np.ones(int(keep.sum())), (x[keep], cols[keep])), shape=(k - 1, n_var))
    names = [f"sa(P({c}))" for c in sensitive.cells[:-1]]
    return LinearBlock("sa", A, np.asarray(sa_distribution, dtype=float)[:-1], "eq", names)
