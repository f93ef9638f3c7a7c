"""Constraints an attacker derives from a published decision tree (paper 000 §4).

The attacker knows the QI part of every training record, so each QI group lands in one leaf (its
attribute prefix Λ, §4) and P(q) is known; P(X | Λ) = Σ_{q ∈ Λ} P(X | q) P(q) / P(Λ) (equation 1).
From a leaf with label C, n records and e errors:

* **rate constraint** (§4.1, when error rates are published): P(C | Λ) = 1 − e / n, written on the
  joint probabilities as Σ_{q ∈ Λ} P(q, C) = (n − e) / N;
* **class-count constraints** (when the full class counts are published): one such row per class;
* **label constraints** (§4.1): P(C | Λ) ≥ P(W | Λ) for every other class W;
* **SA constraints** (§4.3, when the sensitive attribute's distribution is published):
  Σ_q P(q, x) = P(x) for every x but the last (the last follows from the others);
* **QI constraints** (§4.3, Σ_x p(x | q) = 1) are built into the variables.

Internal-node constraints (§4.2) are nonlinear: :mod:`ppdm.maxent.internal` builds them and
:mod:`ppdm.maxent.nonlinear` solves with them.
Each family can be switched off to reproduce the paper's with/without comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, MaxEntError
from ppdm.maxent.problem import LinearBlock, MaxEntProblem
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.model import Tree
from ppdm.tree.routing import reachable_leaves


@dataclass(frozen=True)
class Knowledge:
    """Which constraint families the attacker uses (each only if the tree publishes it)."""

    rate: bool = True
    label: bool = True
    sa: bool = False
    internal: bool = False


def leaf_of_groups(tree: Tree, groups: QIGroups) -> np.ndarray:
    """The leaf every QI group lands in; every split attribute must be a quasi-identifier."""
    unknown = sorted({n.split.attribute for n in tree.nodes if n.split is not None} - set(groups.quasi_identifiers))
    if unknown:
        raise MaxEntError(
            f"the tree splits on {', '.join(map(repr, unknown))}, which the attacker does not know: "
            "the maximum-entropy audit needs every split attribute among the quasi-identifiers"
        )
    span = reachable_leaves(tree, groups.table, known=groups.quasi_identifiers)
    return span.indices[span.indptr[:-1]].astype(np.intp)


def _check_leaf_sizes(tree: Tree, groups: QIGroups, leaf: np.ndarray) -> None:
    routed = np.bincount(leaf, weights=groups.counts, minlength=tree.n_nodes)
    for node in tree.leaves():
        n = node.n_samples
        if n is not None and abs(n - routed[node.id]) > 1e-6:
            raise DataError(
                f"the attacker's table does not match the tree: leaf {node.id} publishes {n:g} records, "
                f"the table routes {routed[node.id]:g} there"
            )


def _rows(row: np.ndarray, col: np.ndarray, val: np.ndarray, n_rows: int, n_cols: int) -> sp.csr_matrix:
    return sp.csr_matrix((val, (row, col)), shape=(n_rows, n_cols))


def tree_problem(tree: Tree, groups: QIGroups, knowledge: Knowledge = Knowledge(), sa_distribution: np.ndarray | None = None) -> tuple[MaxEntProblem, np.ndarray]:
    """The maximum-entropy problem of paper 000 for ``tree`` and the attacker's table ``groups``.

    Returns the problem and each group's leaf. ``sa_distribution`` is P(x) when ``knowledge.sa``.
    """
    leaf = leaf_of_groups(tree, groups)
    _check_leaf_sizes(tree, groups, leaf)
    k = len(tree.classes)
    problem = MaxEntProblem(groups.weights, k)
    n_total = groups.n_records
    leaves = np.unique(leaf)  # non-empty leaves, in id order
    row_of_leaf = np.full(tree.n_nodes, -1)
    row_of_leaf[leaves] = np.arange(len(leaves))
    label = tree.leaf_labels()
    q = np.arange(groups.n_groups)
    n_var = problem.n_variables
    if knowledge.rate and tree.disclosure is Disclosure.CLASS_COUNTS:
        counts = np.stack([tree.nodes[i].counts for i in leaves])  # type: ignore[misc]
        rows = (row_of_leaf[leaf][:, None] * k + np.arange(k)).ravel()
        cols = (q[:, None] * k + np.arange(k)).ravel()
        A = _rows(rows, cols, np.ones(len(rows)), len(leaves) * k, n_var)
        names = [f"count(leaf {i}, {c})" for i in leaves for c in tree.classes]
        problem.add(LinearBlock("class-count", A, counts.ravel() / n_total, "eq", names))
    elif knowledge.rate and tree.disclosure is Disclosure.ERROR_RATES:
        correct = np.array([tree.nodes[i].n_samples - tree.nodes[i].n_errors for i in leaves])  # type: ignore[operator]
        A = _rows(row_of_leaf[leaf], q * k + label[leaf], np.ones(len(q)), len(leaves), n_var)
        names = [f"rate(leaf {i}: P({tree.classes[label[i]]}) = {correct[j] / tree.nodes[i].n_samples:.4g})" for j, i in enumerate(leaves)]  # type: ignore[operator]
        problem.add(LinearBlock("rate", A, correct / n_total, "eq", names))
    if knowledge.label and k > 1:
        problem.add(_label_block(tree, leaf, leaves, row_of_leaf, label, k, n_var))
    if knowledge.sa:
        if sa_distribution is None or len(sa_distribution) != k:
            raise MaxEntError(f"SA constraints need the distribution of the {k} sensitive values")
        cols = (q[:, None] * k + np.arange(k - 1)).ravel()
        rows = np.tile(np.arange(k - 1), len(q))
        A = _rows(rows, cols, np.ones(len(rows)), k - 1, n_var)
        names = [f"sa(P({c}))" for c in tree.classes[:-1]]
        problem.add(LinearBlock("sa", A, np.asarray(sa_distribution, dtype=float)[:-1], "eq", names))
    return problem, leaf


def _label_block(tree: Tree, leaf: np.ndarray, leaves: np.ndarray, row_of_leaf: np.ndarray, label: np.ndarray, k: int, n_var: int) -> LinearBlock:
    """Σ_{q∈Λ} P(q, W) − P(q, C) ≤ 0 for every leaf Λ with label C and every other class W."""
    others = np.array([[w for w in range(k) if w != c] for c in range(k)])  # (k, k-1)
    q = np.arange(len(leaf))
    lab = label[leaf]
    row = (row_of_leaf[leaf][:, None] * (k - 1) + np.arange(k - 1))  # (G, k-1)
    plus_cols = q[:, None] * k + others[lab]
    minus_cols = np.repeat((q * k + lab)[:, None], k - 1, axis=1)
    rows = np.concatenate([row.ravel(), row.ravel()])
    cols = np.concatenate([plus_cols.ravel(), minus_cols.ravel()])
    vals = np.concatenate([np.ones(row.size), -np.ones(row.size)])
    A = _rows(rows, cols, vals, len(leaves) * (k - 1), n_var)
    names = [
        f"label(leaf {i}: P({tree.classes[label[i]]}) >= P({tree.classes[w]}))" for i in leaves for w in others[label[i]]
    ]
    return LinearBlock("label", A, np.zeros(A.shape[0]), "le", names)
