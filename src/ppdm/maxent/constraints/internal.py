"""Internal-node constraints (paper 000 §4.2): the split a node shows was the best one.

At an internal node with attribute prefix Λ the learner chose attribute T because its expected
impurity was no larger than any other candidate's: E(Λ, T) ≤ E(Λ, W) for every W in Ψ − {T}
(inequality 3). With the attacker's QI table every branch of every candidate split is a known set
of QI groups, with known size n_i = P(branch), and its class masses m_{i,x} = Σ_{q ∈ branch} P(q, x)
are linear in the variables. Multiplying (3) by P(Λ):

* Gini (equation 4): n_i · (1 − Σ_x (m_ix / n_i)²) per branch, so the constraint reads
  Σ_{i ∈ W} Σ_x m_ix² / n_i − Σ_{j ∈ T} Σ_x m_jx² / n_j ≤ 0;
* entropy: n_i log n_i − Σ_x m_ix log m_ix per branch.

Both are differences of convex functions: the constraints are nonconvex, and solutions are local
optima (said so in every report). Which alternatives a node had:

* a multiway node (ID3): the multiway split on every other candidate attribute;
* a binary node (a threshold, or a value group as scikit-learn makes them): every other binary
  split of every candidate attribute, the chosen attribute included: each threshold between
  consecutive values present at the node for a numeric attribute, each value against the rest for
  a categorical one.

An alternative that the chosen split refines can never beat it (impurity is concave), so it is
dropped before solving.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.data.qigroups import QIGroups
from ppdm.errors import MaxEntError
from ppdm.tree.model import Tree, encode_categories
from ppdm.tree.splits import CategoricalSplit

MIN_MASS = 1e-300


@dataclass
class InternalBlock:
    """Constraints c_j(P) = Σ_k coef[j, k] · F(m_k) + const_j ≤ 0 over branch masses m_k."""

    kind: Literal["gini", "entropy"]
    parts: sp.csr_matrix  # parts × groups, 1 where a group is in the part (a branch)
    part_size: np.ndarray  # P(part)
    coef: sp.csr_matrix  # constraints × parts
    const: np.ndarray
    names: list[str] = field(default_factory=list)
    node_weight: np.ndarray | None = None  # P(Λ) of each constraint's node, a natural scale for c_j

    @property
    def n_constraints(self) -> int:
        return self.coef.shape[0]

    def masses(self, joint: np.ndarray) -> np.ndarray:
        """m_k,x for every part, from the joint P(q, x) (groups × values)."""
        return np.asarray(self.parts @ joint)

    def _f(self, m: np.ndarray) -> np.ndarray:
        if self.kind == "gini":
            return -(m * m).sum(axis=1) / self.part_size
        logm = np.log(np.maximum(m, MIN_MASS))
        return -(m * logm).sum(axis=1)

    def _df(self, m: np.ndarray, size: np.ndarray) -> np.ndarray:
        if self.kind == "gini":
            return -2.0 * m / size[:, None]
        return -(np.log(np.maximum(m, MIN_MASS)) + 1.0)

    def values(self, joint: np.ndarray) -> np.ndarray:
        """c_j(P) for every constraint (≤ 0 when it holds)."""
        return np.asarray(self.coef @ self._f(self.masses(joint))).ravel() + self.const

    def jacobian(self, joint: np.ndarray, rows: np.ndarray | None = None) -> sp.csr_matrix:
        """∂c_j / ∂P(q, x) for the constraints ``rows`` (default all): rows × (groups · values)."""
        n_values = joint.shape[1]
        coef = self.coef if rows is None else self.coef[rows]
        used = np.unique(coef.indices)
        parts = self.parts[used]
        df = self._df(np.asarray(parts @ joint), self.part_size[used])  # used parts × values
        coo = parts.tocoo()
        r = np.repeat(coo.row, n_values)
        cols = (coo.col[:, None] * n_values + np.arange(n_values)).ravel()
        per_part = sp.csr_matrix((df[coo.row].ravel(), (r, cols)), shape=(len(used), self.parts.shape[1] * n_values))
        return sp.csr_matrix(coef[:, used] @ per_part)


def _node_groups(tree: Tree, leaf_of_group: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """For every internal node: the groups below it and the branch each of them took."""
    below: dict[int, list[tuple[np.ndarray, int]]] = {n.id: [] for n in tree.internal_nodes()}
    order = np.argsort(leaf_of_group, kind="stable")
    bounds = np.searchsorted(leaf_of_group[order], np.arange(tree.n_nodes + 1))
    for leaf in tree.leaves():
        members = order[bounds[leaf.id] : bounds[leaf.id + 1]]
        if len(members):
            for parent, branch in tree.path(leaf.id):
                below[parent.id].append((members, branch))
    out = {}
    for node_id, pieces in below.items():
        if pieces:
            members = np.concatenate([m for m, _ in pieces])
            branches = np.concatenate([np.full(len(m), b) for m, b in pieces])
            order = np.argsort(members, kind="stable")
            out[node_id] = (members[order], branches[order])
    return out


def _codes(tree: Tree, table: pd.DataFrame, attribute: str) -> np.ndarray:
    attr = tree.attributes[attribute]
    if attr.is_categorical:
        return encode_categories(table[attribute], attr.categories).astype(float)
    return table[attribute].to_numpy(dtype=float)


def _alternatives(tree: Tree, node_id: int, codes: dict[str, np.ndarray], members: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The alternative partitions of a node's groups (labels per member), named."""
    node = tree.nodes[node_id]
    split = node.split
    assert split is not None
    multiway = isinstance(split, CategoricalSplit) and split.is_multiway and split.n_branches > 2
    out: list[tuple[str, np.ndarray]] = []
    for attribute in node.candidates:
        if attribute not in codes:
            continue
        v = codes[attribute][members]
        categorical = tree.attributes[attribute].is_categorical
        if multiway:
            if attribute != split.attribute:
                out.append((f"{attribute}", np.unique(v, return_inverse=True)[1].ravel()))
            continue
        values = np.unique(v)
        if categorical:
            out += [(f"{attribute} = {tree.attributes[attribute].categories[int(c)]}", (v == c).astype(np.intp)) for c in values]
        else:
            out += [(f"{attribute} <= {t:g}", (v > t).astype(np.intp)) for t in (values[:-1] + values[1:]) / 2]
    return out


def _refines(chosen: np.ndarray, alternative: np.ndarray) -> bool:
    """Whether every branch of ``chosen`` lies inside one branch of ``alternative``."""
    pairs = np.unique(np.stack([chosen, alternative]), axis=1)
    return pairs.shape[1] == len(np.unique(chosen))


def internal_constraints(tree: Tree, groups: QIGroups, leaf_of_group: np.ndarray) -> InternalBlock | None:
    """The internal-node constraints of ``tree`` over the attacker's QI groups (None if there are none)."""
    kind = {"gini": "gini", "entropy": "entropy"}.get(tree.criterion or "")
    if kind is None:
        raise MaxEntError(
            f"internal-node constraints are derived for the Gini and entropy criteria (paper 000 §4.2), "
            f"not for {tree.criterion!r}"
        )
    weights = groups.weights
    codes = {a: _codes(tree, groups.table, a) for a in tree.attributes if a in groups.table.columns}
    builder = _Builder(weights, kind)
    for node_id, (members, chosen) in _node_groups(tree, leaf_of_group).items():
        chosen_parts = None
        for name, alternative in _alternatives(tree, node_id, codes, members):
            if _refines(chosen, alternative):
                continue
            if chosen_parts is None:
                chosen_parts = builder.parts_of(members, chosen)
            label = f"internal(node {node_id}: {tree.nodes[node_id].split.attribute} over {name})"  # type: ignore[union-attr]
            builder.constraint(chosen_parts, builder.parts_of(members, alternative), label)
    return builder.block(len(weights))


class _Builder:
    def __init__(self, weights: np.ndarray, kind: str) -> None:
        self.weights, self.kind = weights, kind
        self.part_rows: list[np.ndarray] = []
        self.sizes: list[float] = []
        self.coef: list[tuple[int, int, float]] = []
        self.const: list[float] = []
        self.names: list[str] = []
        self.node_weight: list[float] = []

    def parts_of(self, members: np.ndarray, labels: np.ndarray) -> list[int]:
        ids = []
        for label in np.unique(labels):
            groups = members[labels == label]
            self.part_rows.append(groups)
            self.sizes.append(float(self.weights[groups].sum()))
            ids.append(len(self.part_rows) - 1)
        return ids

    def constraint(self, chosen: list[int], alternative: list[int], name: str) -> None:
        j = len(self.const)
        self.coef += [(j, k, 1.0) for k in chosen] + [(j, k, -1.0) for k in alternative]
        const = 0.0
        if self.kind == "entropy":
            nlogn = lambda ks: sum(self.sizes[k] * np.log(self.sizes[k]) for k in ks)  # noqa: E731
            const = nlogn(chosen) - nlogn(alternative)
        self.const.append(const)
        self.names.append(name)
        self.node_weight.append(sum(self.sizes[k] for k in chosen))

    def block(self, n_groups: int) -> InternalBlock | None:
        if not self.const:
            return None
        rows = np.concatenate([np.full(len(g), k) for k, g in enumerate(self.part_rows)])
        cols = np.concatenate(self.part_rows)
        parts = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(self.part_rows), n_groups))
        r, c, v = zip(*self.coef)
        coef = sp.csr_matrix((v, (r, c)), shape=(len(self.const), len(self.part_rows)))
        return InternalBlock(self.kind, parts, np.array(self.sizes), coef, np.array(self.const), self.names, np.array(self.node_weight))  # type: ignore[arg-type]
