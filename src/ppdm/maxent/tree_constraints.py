"""Constraints an attacker derives from a published decision tree (paper 000 §4).

The attacker knows part of every training record (the group q, with known weight P(q)) and
estimates P(u | q) over the rest u (:mod:`ppdm.maxent.unknowns`). Every (q, u) lands in one leaf Λ
and has one class, so what a leaf publishes is linear in the joint probabilities P(q, u):

* **class-count constraints** (class counts published): Σ_{(q,u) → Λ, class c} P(q, u) = n_{Λ,c} / N
  for every leaf and class;
* **rate constraint** (§4.1, error rates published): Σ_{(q,u) → Λ, label class} P(q, u) = (n − e) / N,
  and the leaf size Σ_{(q,u) → Λ} P(q, u) = n / N (implied by the groups in paper 000's setting);
* **label constraints** (§4.1): P(C | Λ) ≥ P(W | Λ) for the label C and every other class W;
* **SA constraints** (§4.3, the sensitive attribute's distribution published):
  Σ_{q, u with sensitive value x} P(q, u) = P(x) for every x but the last;
* **QI constraints** (§4.3, Σ_u p(u | q) = 1) are built into the variables.

In paper 000's setting u is the class and every split attribute is known: each group lands in one
leaf, and these are exactly the paper's rows. A row that the groups alone decide (every cell of
each of its groups in it, with one coefficient) carries no information about u: it is checked
against the groups and dropped.

*Coverage.* The published counts are normally those of the table's own records (``"exact"``).
After pruning Method 1 (paper 003 §4.1) they count a subset of the records that route to each
kept leaf (``"subset"``: rows become ``≥``); when the table misses some training records (rows
dropped for missing values) they count a superset (``"superset"``: rows become ``≤``). Label rows
then no longer describe the table's records and are left out.

Internal-node constraints (§4.2) are nonlinear: :mod:`ppdm.maxent.internal` builds them (paper
000's setting only) and :mod:`ppdm.maxent.nonlinear` solves with them.
Each family can be switched off to reproduce the paper's with/without comparisons.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp

from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, MaxEntError
from ppdm.maxent.attacker_types import AttackerTypes
from ppdm.maxent.factored_problem import FactoredProblem
from ppdm.maxent.problem import LinearBlock, MaxEntProblem
from ppdm.maxent.unknowns import AttackerTable, Component, UnknownDomain, build_slots
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.model import Tree

Coverage = Literal["exact", "subset", "superset"]

#: Records by which a row the groups decide may miss its published value (float counts).
COUNT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Knowledge:
    """Which constraint families the attacker uses (each only if the tree publishes it)."""

    rate: bool = True
    label: bool = True
    sa: bool = False
    internal: bool = False


def paper_table(tree: Tree, groups: QIGroups) -> AttackerTable:
    """Paper 000's attacker: every split attribute is a quasi-identifier, u is the class."""
    unknown = sorted(set(tree.split_attributes) - set(groups.quasi_identifiers))
    if unknown:
        raise MaxEntError(
            f"the tree splits on {', '.join(map(repr, unknown))}, which the attacker does not know: "
            "declare them unknown through a threat model (ppdm.attacks.maxent_attack) instead"
        )
    domain = UnknownDomain((Component(tree.class_attribute, "sensitive", tuple(tree.classes), in_tree=False),))
    leaf, klass, sens, valid, _ = build_slots(tree, groups, domain, class_known=False)
    return AttackerTable(groups, domain, leaf, klass, sens, valid, None, None, False, tree.class_attribute)


def leaf_of_groups(tree: Tree, groups: QIGroups) -> np.ndarray:
    """The leaf every QI group lands in; every split attribute must be a quasi-identifier."""
    return paper_table(tree, groups).leaf[:, 0].copy()


def tree_problem(tree: Tree, groups: QIGroups, knowledge: Knowledge = Knowledge(), sa_distribution: np.ndarray | None = None) -> tuple[MaxEntProblem, np.ndarray]:
    """The maximum-entropy problem of paper 000 for ``tree`` and the attacker's table ``groups``.

    Returns the problem and each group's leaf. ``sa_distribution`` is P(x) when ``knowledge.sa``.
    """
    table = paper_table(tree, groups)
    return table_problem(tree, table, knowledge, sa_distribution), table.leaf[:, 0].copy()


def table_problem(
    tree: Tree,
    table: AttackerTable,
    knowledge: Knowledge = Knowledge(),
    sa_distribution: np.ndarray | None = None,
    coverage: Coverage = "exact",
) -> MaxEntProblem:
    """The maximum-entropy problem over P(u | q) for ``tree`` under ``table``'s threat model."""
    rows = _LeafRows.of_slots(tree, table, coverage)
    problem = MaxEntProblem(table.groups.weights, table.n_slots, log_base=_log_base(table))
    for block in rows.blocks(knowledge):
        problem.add(block)
    if knowledge.sa:
        problem.add(_sa_block(table, sa_distribution))
    return problem


def type_problem(
    tree: Tree,
    types: AttackerTypes,
    knowledge: Knowledge = Knowledge(),
    sa_distribution: np.ndarray | None = None,
    coverage: Coverage = "exact",
) -> FactoredProblem:
    """:func:`table_problem` in factored form: the same rows, over the types of ``types``."""
    problem = types.problem()
    n = types.n_types
    rows = _LeafRows(tree, np.arange(n), types.type_leaf, types.type_class, n, types.groups.n_records, coverage, problem.decided_rows)
    for block in rows.blocks(knowledge):
        problem.add(block)
    if knowledge.sa:
        problem.add(_sa_rows(types.type_sens, np.arange(n), n, types.domain.sensitive, sa_distribution))
    return problem


def _log_base(table: AttackerTable) -> np.ndarray | None:
    """The base measure of the slots (log cells per slot; -inf on padding), or None if uniform."""
    if table.log_base is not None:
        return table.log_base
    return None if table.valid.all() else np.where(table.valid, 0.0, -np.inf)


class _LeafRows:
    """The leaf rows of one tree over some variables: the leaf and class each variable falls in.

    The variables are the slots P(q, slot) of an :class:`AttackerTable` (:meth:`of_slots`) or the
    types P(t) of an :class:`AttackerTypes` (:func:`type_problem`); ``decide`` finds the rows the
    groups' weights alone decide (:func:`decided_rows`).
    """

    def __init__(
        self, tree: Tree, cols: np.ndarray, leaf: np.ndarray, klass: np.ndarray, n_var: int, n_total: int,
        coverage: Coverage, decide: Callable[[sp.csr_matrix], tuple[np.ndarray, np.ndarray]],
    ) -> None:
        self.tree = tree
        self.coverage = coverage
        self.k = len(tree.classes)
        self.n_total = n_total
        self.n_var = n_var
        self.cols = cols
        self.leaf = leaf
        self.klass = klass
        self.leaves = np.unique(self.leaf)  # reachable leaves, in id order
        self.row_of_leaf = np.full(tree.n_nodes, -1)
        self.row_of_leaf[self.leaves] = np.arange(len(self.leaves))
        self.label = tree.leaf_labels()
        self.decide = decide
        self._check_unreached()

    @classmethod
    def of_slots(cls, tree: Tree, table: AttackerTable, coverage: Coverage) -> _LeafRows:
        possible = table.valid if table.log_base is None else table.valid & np.isfinite(table.log_base)
        cols = np.flatnonzero(possible.ravel())
        weights, slots_per_group = table.groups.weights, possible.sum(axis=1)
        return cls(
            tree, cols, table.leaf.ravel()[cols], table.klass.ravel()[cols], table.leaf.size, table.groups.n_records,
            coverage, lambda A: decided_rows(A, weights, slots_per_group),
        )

    def _check_unreached(self) -> None:
        reached = set(self.leaves.tolist())
        unreached = [n for n in self.tree.leaves() if n.id not in reached and (n.n_samples or 0) > 0]
        if unreached and self.coverage != "superset":
            n = unreached[0]
            raise DataError(
                f"the table does not match the tree: leaf {n.id} publishes {n.n_samples:g} records, "
                "but no record of the table can reach it"
            )

    def blocks(self, knowledge: Knowledge) -> list[LinearBlock]:
        out: list[LinearBlock] = []
        disclosure = self.tree.disclosure
        if disclosure.reveals_rates:
            sizes = self._informative(self._size_block())  # checks the sizes the groups decide
        if knowledge.rate and disclosure is Disclosure.CLASS_COUNTS:
            out.append(self._counts_block())  # the sizes are sums of these rows
        elif knowledge.rate and disclosure is Disclosure.ERROR_RATES:
            out.append(self._rate_block())
            out.append(sizes)
        if knowledge.label and self.k > 1 and self.coverage == "exact":
            out.append(self._label_block())
        return [b for b in (self._informative(b) for b in out) if b.n_rows]


    def _sense(self, A: sp.csr_matrix, b: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, Literal["eq", "le"]]:
        if self.coverage == "exact":
            return A, b, "eq"
        if self.coverage == "superset":
            return A, b, "le"
        return -A, -b, "le"

    def _block(self, name: str, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n_rows: int, b: np.ndarray, names: list[str]) -> LinearBlock:
        A = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, self.n_var))
        A, b, sense = self._sense(A, b)
        return LinearBlock(name, A, b, sense, names)

    def _counts_block(self) -> LinearBlock:
        counts = np.stack([self.tree.nodes[i].counts for i in self.leaves])
        rows = self.row_of_leaf[self.leaf] * self.k + self.klass
        names = [f"count(leaf {i}, {c})" for i in self.leaves for c in self.tree.classes]
        return self._block("class-count", rows, self.cols, np.ones(len(rows)), len(self.leaves) * self.k, counts.ravel() / self.n_total, names)

    def _rate_block(self) -> LinearBlock:
        nodes = [self.tree.nodes[i] for i in self.leaves]
        correct = np.array([n.n_samples - n.n_errors for n in nodes])
        hit = self.klass == self.label[self.leaf]
        rows = self.row_of_leaf[self.leaf][hit]
        names = [
            f"rate(leaf {n.id}: P({self.tree.classes[self.label[n.id]]}) = {c / max(n.n_samples, 1e-300):.4g})"
            for n, c in zip(nodes, correct)
        ]
        return self._block("rate", rows, self.cols[hit], np.ones(len(rows)), len(self.leaves), correct / self.n_total, names)

    def _size_block(self) -> LinearBlock:
        sizes = np.array([self.tree.nodes[i].n_samples for i in self.leaves], dtype=float)
        rows = self.row_of_leaf[self.leaf]
        names = [f"size(leaf {i}: {s:g} records)" for i, s in zip(self.leaves, sizes)]
        return self._block("size", rows, self.cols, np.ones(len(rows)), len(self.leaves), sizes / self.n_total, names)

    def _label_block(self) -> LinearBlock:
        """Σ_{(q,u)→Λ, W} P(q, u) − Σ_{(q,u)→Λ, C} P(q, u) ≤ 0 for every leaf Λ with label C, class W ≠ C."""
        k = self.k
        lab = self.label[self.leaf]
        base = self.row_of_leaf[self.leaf] * (k - 1)
        is_label = self.klass == lab
        # a variable of the label class enters all k − 1 rows of its leaf with −1 ...
        minus_rows = (base[is_label][:, None] + np.arange(k - 1)).ravel()
        minus_cols = np.repeat(self.cols[is_label], k - 1)
        # ... one of another class W enters the row (C, W) with +1
        other = ~is_label
        plus_rows = base[other] + self.klass[other] - (self.klass[other] > lab[other])
        rows = np.concatenate([plus_rows, minus_rows])
        cols = np.concatenate([self.cols[other], minus_cols])
        vals = np.concatenate([np.ones(len(plus_rows)), -np.ones(len(minus_rows))])
        A = sp.csr_matrix((vals, (rows, cols)), shape=(len(self.leaves) * (k - 1), self.n_var))
        names = [
            f"label(leaf {i}: P({self.tree.classes[self.label[i]]}) >= P({self.tree.classes[w]}))"
            for i in self.leaves for w in range(k) if w != self.label[i]
        ]
        return LinearBlock("label", A, np.zeros(A.shape[0]), "le", names)

    def _informative(self, block: LinearBlock) -> LinearBlock:
        """Drop the rows the groups alone decide, after checking them against the groups."""
        constant, value = self.decide(block.A)
        if not constant.any():
            return block
        check_decided(block, constant, value, self.n_total, "tree")
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


def _sa_block(table: AttackerTable, sa_distribution: np.ndarray | None) -> LinearBlock:
    """Σ_q Σ_{slots with sensitive value x} P(q, slot) = P(x) for every sensitive value x but the last."""
    cols = np.flatnonzero(table.valid.ravel())
    return _sa_rows(table.sens.ravel()[cols], cols, table.leaf.size, table.domain.sensitive, sa_distribution)


def _sa_rows(x: np.ndarray, cols: np.ndarray, n_var: int, sensitive: Component, sa_distribution: np.ndarray | None) -> LinearBlock:
    """The SA rows over variables ``cols`` of sensitive cells ``x``."""
    k = sensitive.size
    if sa_distribution is None or len(sa_distribution) != k:
        raise MaxEntError(f"SA constraints need the distribution of the {k} sensitive values")
    keep = x < k - 1
    A = sp.csr_matrix((np.ones(int(keep.sum())), (x[keep], cols[keep])), shape=(k - 1, n_var))
    names = [f"sa(P({c}))" for c in sensitive.cells[:-1]]
    return LinearBlock("sa", A, np.asarray(sa_distribution, dtype=float)[:-1], "eq", names)
