"""A forest's maximum-entropy problem as a factor graph: the trees are the factors, nothing enumerated.

:mod:`ppdm.maxent.table.forest_types` lists, per group q of known values, every joint leaf its
unknown cells u can reach: the product of every tree's partition, exponential in the number of
trees. The dual's distribution needs none of it. With one multiplier per row, each tree's rows
(:mod:`ppdm.maxent.constraints.leaf_rows`) see a record only through the leaf it lands in and its
class, so the multipliers of tree t sum to one energy per (leaf, class), Θ_t[Λ, c], and

    P(u, c | q) ∝ exp(−Σ_t m_t(q) Θ_t[leaf_t(q, u), c] − θ_SA[sensitive value])

over the cells u of the unknown split columns (base measure: one per cell, as the explicit table
counts them): a Gibbs distribution whose factors are the trees, each over the columns it splits on
(paper 000 §3's maximum entropy, dual form). This module holds what that distribution and its
rows need, in arrays: the groups and their multiplicities, every split column as integer *codes*
(the known ones fixed per group; a numeric code is the interval of the union of every tree's
thresholds, :func:`~ppdm.maxent.table.forest_types.forest_thresholds`, so ``x <= t`` is
``code <= cut``), the trees flattened into one node array, and the rows over the virtual variables
(tree, leaf, class): row r's value is ``A[r] @ N`` where N[Λ, c] = Σ_q P(q) m_t(q) P(leaf_t = Λ,
c | q). Only the trees that publish a row are factors; the others change nothing.

The solver that samples it is :mod:`ppdm.maxent.solvers.sampled`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError
from ppdm.maxent.constraints.leaf_rows import LeafRows
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.rows.problem import LinearBlock
from ppdm.maxent.table.forest_types import forest_table, forest_thresholds
from ppdm.maxent.table.unknowns import Component, UnknownDomain
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree, encode_categories
from ppdm.tree.splits import ThresholdSplit


@dataclass
class FlatTrees:
    """Trees as one node array (node ids offset per tree: tree i's node n is ``offset[i] + n``).

    ``attr``: the split column of each node (index into :attr:`ForestFactors.attributes`, −1 at a
    leaf); ``cut``: a numeric split sends ``code > cut`` right; ``lut``: a categorical split's row of
    ``branch`` (−1 for numeric), whose column ``code`` is the branch of that code (the last column:
    values outside the categories, the default branch); ``child``: node × branch → node;
    ``first``: per node and column, the first node on its root path (itself excluded) that splits on
    the column, −1 when none does (then the column does not move a record out of the node).
    """

    offset: np.ndarray
    attr: np.ndarray
    cut: np.ndarray
    lut: np.ndarray
    branch: np.ndarray
    child: np.ndarray
    first: np.ndarray

    @property
    def n_nodes(self) -> int:
        return len(self.attr)

    @property
    def roots(self) -> np.ndarray:
        return self.offset[:-1]

    def route(self, codes: np.ndarray, rows: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """The leaf that row ``rows[i]`` of ``codes`` reaches from node ``nodes[i]`` (vectorised)."""
        nodes = nodes.copy()
        active = np.flatnonzero(self.attr[nodes] >= 0)
        while len(active):
            n = nodes[active]
            nodes[active] = self.child[n, self.take(n, codes[rows[active], self.attr[n]])]
            active = active[self.attr[nodes[active]] >= 0]
        return nodes

    def take(self, nodes: np.ndarray, code: np.ndarray) -> np.ndarray:
        """The branch each node sends ``code`` down."""
        lut = self.lut[nodes]
        out = (code > self.cut[nodes]).astype(np.intp)
        cat = lut >= 0
        if cat.any():
            out[cat] = self.branch[lut[cat], code[cat]]
        return out


@dataclass
class ForestFactors:
    """The factor form of a forest's audit (see the module docstring).

    ``trees``: the forest's trees that are factors (publish rows), in order; ``mult``: groups ×
    factors, how often each factor counts a record of the group; ``attributes``: the split columns
    of the factors, ``n_codes`` their codes (a categorical one's last code: outside its
    categories), ``unknown`` which ones the attacker does not know, ``codes``: groups × columns
    (−1 where unknown); ``sens_attr``: the sensitive column's index when a factor splits on it
    (−1 otherwise); ``group_class``: each group's known class (−1: unknown). ``A``, ``b``, ``le``:
    the factors' rows over (node, class) (``A``: rows × nodes·k), minus what the fully known
    individuals (``known_group``, pinned to ``true_*``) contribute; ``row_names`` name them. ``sa``:
    the published distribution of the sensitive cells (``None``: not published).
    ``true_codes``, ``true_class``, ``true_sens``: per record, when the data holds every column.
    """

    forest: Forest
    groups: QIGroups
    domain: UnknownDomain
    class_known: bool
    trees: np.ndarray
    mult: np.ndarray
    attributes: list[str]
    n_codes: np.ndarray
    unknown: np.ndarray
    codes: np.ndarray
    sens_attr: int
    group_class: np.ndarray
    flat: FlatTrees
    A: sp.csr_matrix
    b: np.ndarray
    le: np.ndarray
    row_names: list[str]
    sa: np.ndarray | None
    left_out: list[int]
    known_group: np.ndarray | None = None
    true_codes: np.ndarray | None = None
    true_class: np.ndarray | None = None
    true_sens: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return len(self.forest.classes)

    @property
    def class_attribute(self) -> str:
        return self.forest.class_attribute

    @property
    def sens_is_class(self) -> bool:
        return self.domain.sensitive.name == self.forest.class_attribute

    def true_sensitive(self) -> np.ndarray | None:
        return self.true_sens

    def true_marginal(self) -> np.ndarray | None:
        if self.true_sens is None:
            return None
        return self.groups.value_counts(self.true_sens, self.domain.sensitive.size) / self.groups.counts[:, None]

    def leaf_counts(self, codes: np.ndarray, klass: np.ndarray, weight: np.ndarray, mult: np.ndarray) -> np.ndarray:
        """N (nodes × classes): ``weight``-weighted counts of rows of ``codes`` with class ``klass``
        by the leaf they reach in each factor, each counted ``mult`` (rows × factors) times."""
        rows = np.repeat(np.arange(len(codes)), len(self.trees))
        leaves = self.flat.route(codes, rows, np.tile(self.flat.roots, len(codes)))
        k = self.n_classes
        key = leaves * k + np.repeat(klass, len(self.trees))
        return np.bincount(key, weights=np.repeat(weight, len(self.trees)) * mult.ravel(), minlength=self.flat.n_nodes * k)

    def truth_rows(self) -> np.ndarray | None:
        """The rows' values on the records themselves (``None`` without every column in the data)."""
        if self.true_codes is None or self.true_class is None:
            return None
        n = self.groups.n_records
        mult = self.mult[self.groups.group_of_record]
        pinned = self.known_group[self.groups.group_of_record] if self.known_group is not None else np.zeros(n, dtype=bool)
        w = self.groups.record_weights if self.groups.record_weights is not None else np.ones(n)
        keep = ~pinned
        N = self.leaf_counts(self.true_codes[keep], self.true_class[keep], w[keep] / n, mult[keep])
        return np.asarray(self.A @ N)

    def provenance(self) -> list[str]:
        text = f"estimated over {len(self.trees)} trees' leaves, unknown columns sampled"
        return [text] * self.groups.n_groups


def forest_factors(
    forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str, knowledge: Knowledge = Knowledge(),
    individuals: Sequence[int] = (),
) -> ForestFactors:
    """The factor form of the audit of ``forest`` on ``data`` by an attacker knowing ``known``.

    The attacker's table is the explicit estimate's (:func:`~ppdm.maxent.table.forest_types.forest_table`:
    groups of known values and multiplicity vectors); ``knowledge`` selects the rows (rates,
    labels, the SA distribution); ``individuals``: rows the attacker fully knows.
    """
    if knowledge.internal:
        raise DataError("internal-node constraints are built for a single tree, not for a forest")
    known = list(known)
    table = forest_table(forest, data, known, sensitive, individuals)
    domain, weights, used, groups, known_group = table.domain, table.weights, table.used, table.groups, table.known_group
    k = len(forest.classes)
    blocks, factors = _factor_rows(forest, np.flatnonzero(used), groups.n_records, knowledge)
    trees = [forest.trees[t] for t in factors]
    attributes = list(dict.fromkeys(a for t in trees for a in t.split_attributes))
    comps = {c.name: c for c in domain.components}
    flat, n_codes = _flatten(forest, trees, attributes, comps)
    A, b, le, names = _stack(blocks, flat, k)
    first = groups.first_rows()
    unknown = np.array([a not in known for a in attributes], dtype=bool)
    codes = np.full((groups.n_groups, len(attributes)), -1, dtype=np.int32)
    for i, a in enumerate(attributes):
        if not unknown[i]:
            codes[:, i] = _codes(forest, a, comps.get(a), groups.table[a], n_codes[i])
    sens = domain.sensitive
    sens_attr = attributes.index(sens.name) if sens.name in attributes else -1
    out = ForestFactors(
        forest, groups, domain, table.class_known, factors, weights[first][:, factors], attributes, n_codes, unknown, codes,
        sens_attr, table.group_class, flat, A, b, le, names, None, table.left_out, known_group,
    )
    _add_truth(out, data)
    if knowledge.sa:
        if out.true_sens is None:
            raise DataError("SA constraints need the sensitive column in the data (its distribution is published)")
        out.sa = np.bincount(out.true_sens, weights=groups.record_weights, minlength=sens.size) / groups.n_records
    _pin(out)
    return out


def _no_decision(A: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(A.shape[0], dtype=bool), np.zeros(A.shape[0])


def _factor_rows(forest: Forest, used: np.ndarray, n_records: int, knowledge: Knowledge) -> tuple[list[tuple[int, list[LinearBlock]]], np.ndarray]:
    """Each used tree's rows over its own (node, class) pairs, and the trees that have any."""
    k = len(forest.classes)
    out: list[tuple[int, list[LinearBlock]]] = []
    factors: list[int] = []
    for t in used.tolist():
        tree = forest.trees[t]
        leaves = np.array([n.id for n in tree.leaves()], dtype=np.intp)
        cols = (np.repeat(leaves, k) * k + np.tile(np.arange(k), len(leaves))).astype(np.intp)
        rows = LeafRows(
            tree, cols, np.repeat(leaves, k), np.tile(np.arange(k), len(leaves)), tree.n_nodes * k, n_records,
            _no_decision, forest.known[t], index=t,
        ).blocks(knowledge.rate, knowledge.label)
        if rows:
            out.append((len(factors), rows))
            factors.append(t)
    return out, np.array(factors, dtype=np.intp)


def _stack(blocks: list[tuple[int, list[LinearBlock]]], flat: FlatTrees, k: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, list[str]]:
    """Every factor's rows over the global (node, class) pairs."""
    mats, bs, les, names = [], [], [], []
    n_var = flat.n_nodes * k
    for i, rows in blocks:
        shift = int(flat.offset[i]) * k
        for blk in rows:
            coo = blk.A.tocoo()
            mats.append(sp.csr_matrix((coo.data, (coo.row, coo.col + shift)), shape=(blk.n_rows, n_var)))
            bs.append(blk.b)
            les.append(np.full(blk.n_rows, blk.sense == "le"))
            names += blk.row_names
    if not mats:
        return sp.csr_matrix((0, n_var)), np.zeros(0), np.zeros(0, dtype=bool), []
    return sp.csr_matrix(sp.vstack(mats)), np.concatenate(bs), np.concatenate(les), names


def _flatten(forest: Forest, trees: list[Tree], attributes: list[str], comps: dict[str, Component]) -> tuple[FlatTrees, np.ndarray]:
    """The factors as one node array over the column codes (see :class:`FlatTrees`)."""
    index = {a: i for i, a in enumerate(attributes)}
    cuts = {a: forest_thresholds(forest, a) for a in attributes if not forest.attributes[a].is_categorical}
    n_codes = np.array([
        len(cuts[a]) + 1 if a in cuts else len(forest.attributes[a].categories) + 1 for a in attributes
    ], dtype=np.intp)
    sizes = [t.n_nodes for t in trees]
    offset = np.r_[0, np.cumsum(sizes)].astype(np.intp)
    n = int(offset[-1])
    width = max([len(nd.children) for t in trees for nd in t.nodes] + [2])
    attr = np.full(n, -1, dtype=np.intp)
    cut = np.zeros(n, dtype=np.intp)
    lut = np.full(n, -1, dtype=np.intp)
    child = np.zeros((n, width), dtype=np.intp)
    luts: list[np.ndarray] = []
    parent = np.full(n, -1, dtype=np.intp)
    max_codes = int(n_codes.max(initial=2))
    for i, tree in enumerate(trees):
        base = int(offset[i])
        for node in tree.nodes:
            g = base + node.id
            if node.split is None:
                continue
            a = node.split.attribute
            attr[g] = index[a]
            child[g, : len(node.children)] = base + np.asarray(node.children)
            parent[base + np.asarray(node.children)] = g
            if isinstance(node.split, ThresholdSplit):
                cut[g] = int(np.searchsorted(cuts[a], node.split.threshold))
            else:
                row = np.full(max_codes, node.split.default, dtype=np.intp)
                row[: n_codes[index[a]]] = node.split.lookup(forest.attributes[a].categories)
                lut[g] = len(luts)
                luts.append(row)
    branch = np.vstack(luts) if luts else np.zeros((0, max_codes), dtype=np.intp)
    first = _first_split(attr, parent, offset, len(attributes))
    return FlatTrees(offset, attr, cut, lut, branch, child, first), n_codes


def _first_split(attr: np.ndarray, parent: np.ndarray, offset: np.ndarray, n_attr: int) -> np.ndarray:
    """Per node and column, the first node above it (root first) that splits on the column, or −1;
    parents precede children within each tree, so one pass in node order fills it."""
    n = len(attr)
    first = np.full((n, n_attr), -1, dtype=np.int32)
    for g in range(n):
        p = parent[g]
        if p < 0:
            continue
        first[g] = first[p]
        a = attr[p]
        if first[g, a] < 0:
            first[g, a] = p
    return first


def _codes(forest: Forest, name: str, comp: Component | None, column: pd.Series, n_codes: int) -> np.ndarray:
    """The codes of a column's values (numeric: the interval of every tree's thresholds; categorical:
    the category, ``n_codes − 1`` outside them)."""
    attr = forest.attributes[name]
    if attr.is_categorical:
        codes = encode_categories(column, attr.categories)
        return np.where(codes < 0, n_codes - 1, codes).astype(np.int32)
    thresholds = comp.thresholds if comp is not None and comp.thresholds is not None else forest_thresholds(forest, name)
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    if np.isnan(values).any():
        first = int(np.flatnonzero(np.isnan(values))[0])
        raise DataError(f"column {name!r}: value {column.iloc[first]!r} is not a number")
    return np.searchsorted(thresholds, values, side="left").astype(np.int32)


def _add_truth(out: ForestFactors, data: pd.DataFrame) -> None:
    """Every record's codes, class and sensitive cell, when the data holds them all."""
    forest, comps = out.forest, out.domain.components
    if not all(c.name in data.columns for c in comps) or not all(a in data.columns for a in out.attributes):
        if out.known_group is not None:
            raise DataError("known individuals need their full records in the data (every unknown column)")
        return
    codes = np.empty((len(data), len(out.attributes)), dtype=np.int32)
    for i, a in enumerate(out.attributes):
        codes[:, i] = _codes(forest, a, next((c for c in comps if c.name == a), None), data[a], int(out.n_codes[i]))
    klass = encode_categories(data[forest.class_attribute], forest.classes)
    if (klass < 0).any():
        first = int(np.flatnonzero(klass < 0)[0])
        raise DataError(f"column {forest.class_attribute!r}: value {data[forest.class_attribute].iloc[first]!r} (row {first}) is not one of the forest's classes")
    out.true_codes, out.true_class = codes, klass
    out.true_sens = out.domain.sensitive.codes(data[out.domain.sensitive.name])


def _pin(out: ForestFactors) -> None:
    """Move what the fully known individuals contribute to the rows into their right-hand sides."""
    if out.known_group is None or not out.known_group.any():
        return
    assert out.true_codes is not None and out.true_class is not None
    n = out.groups.n_records
    rec = out.known_group[out.groups.group_of_record]
    mult = out.mult[out.groups.group_of_record]
    N = out.leaf_counts(out.true_codes[rec], out.true_class[rec], np.full(int(rec.sum()), 1.0 / n), mult[rec])
    out.b = out.b - np.asarray(out.A @ N)
