"""Model k-anonymity (paper 002 §2): spans, bins and the linking attack, for any :class:`Tree`.

A decision tree assigns every tuple of the domain to a *bin*: a leaf together with a class value
(paper 002 §2, "every bin within every leaf constitutes an equivalence class"). An attacker who
knows only the public attributes (quasi-identifiers) of a person cannot route them through a
split on a private attribute, so they consider every branch: the *span* of the person's public
tuple is the set of bins reachable when the private values are varied (Definition 4). People
with the same span cannot be told apart by the model; the linking attack (Definition 5) groups
the training records by span, and the tree is k-anonymous when every group holds at least k
records (Definition 6).

Decisions where the paper leaves room:

* **The class.** If the class attribute is private (the papers' setting) a leaf contributes all
  of its class bins, so a span is a set of leaves. If it is public (listed among the
  quasi-identifiers) the attacker also knows each person's class, and a span is a set of leaves
  together with that class.
* **Private domains.** The private values varied are the tree's attribute domains for categorical
  attributes and the whole real line for numeric ones. Routing is *path-consistent*: a private
  attribute split twice on one path (a value group, then a finer split; ``age <= 40`` then
  ``age <= 30``) only reaches branches compatible with the conditions above, exactly as the
  enumeration of private values does.
* **Empty spans.** Definition 6 speaks of the tuples of the public identifiable table only, so a
  span that no training record has is no breach.

:func:`model_anonymity` is the fast version (index arrays sent down the tree, spans grouped by
hashing); :func:`brute_force_spans` is the deliberately simple reference that enumerates every
combination of private values for every record and routes it with :meth:`Tree.apply`.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.data.roles import Roles, check_columns
from ppdm.errors import DataError
from ppdm.tree.model import Tree, encode_categories
from ppdm.tree.splits import CategoricalSplit, ThresholdSplit

__all__ = [
    "ModelAnonymity", "brute_force_spans", "exposed_tuples", "model_anonymity", "reachable_bins",
]


@dataclass
class ModelAnonymity:
    """The linking attack of paper 002 Definition 5 on a tree and its training records.

    Attributes
    ----------
    spans: each span's leaf ids (sorted tuples); with a public class, ``span_class`` says which
        class the span is about.
    span_class: per span, the class index (public class) or ``None`` (private class).
    span_of: per record, the index of its span.
    population: per span, how many records it holds (``|[S(x_A)]_{T_ID}|``).
    class_counts: ``(n_spans, n_classes)`` true class counts of each span's records, when the
        records' classes are known (``None`` otherwise).
    reach: records × tree nodes, 1 where the record can reach the leaf.
    """

    spans: list[tuple[int, ...]]
    span_class: np.ndarray | None
    span_of: np.ndarray
    population: np.ndarray
    class_counts: np.ndarray | None
    reach: sp.csr_matrix

    @property
    def k(self) -> int:
        """The smallest span population: the k for which the tree is k-anonymous."""
        return int(self.population.min()) if len(self.population) else 0

    @property
    def record_population(self) -> np.ndarray:
        """Per record, the population of its span."""
        return self.population[self.span_of]

    def is_k_anonymous(self, k: int) -> bool:
        return self.k >= k

    @property
    def span_entropy(self) -> np.ndarray:
        """Per span, the entropy (bits) of its records' classes (paper 002 §4.2)."""
        if self.class_counts is None:
            raise DataError("the class of the records is unknown: pass data with the class column")
        c = self.class_counts
        n = c.sum(axis=1, keepdims=True)
        p = np.divide(c, n, out=np.zeros_like(c), where=n > 0)
        logp = np.log2(p, out=np.zeros_like(p), where=p > 0)
        return -(p * logp).sum(axis=1)

    @property
    def l_diversity(self) -> float:
        """The largest ℓ such that every span is entropy ℓ-diverse: 2^(smallest span entropy)."""
        ent = self.span_entropy
        return float(2.0 ** ent.min()) if len(ent) else math.inf

    @property
    def exposed(self) -> np.ndarray:
        """Per record, whether all records of its span share one class (paper 002 §4.2)."""
        if self.class_counts is None:
            raise DataError("the class of the records is unknown: pass data with the class column")
        homogeneous = (self.class_counts > 0).sum(axis=1) <= 1
        return homogeneous[self.span_of]


def _split_attributes(tree: Tree) -> list[str]:
    return sorted({n.split.attribute for n in tree.nodes if n.split is not None})


def _class_is_public(tree: Tree, public: Sequence[str], class_public: bool | None) -> bool:
    return tree.class_attribute in public if class_public is None else bool(class_public)


def reachable_bins(tree: Tree, data: pd.DataFrame, public: Iterable[str]) -> sp.csr_matrix:
    """Records × tree nodes: the leaves each record can reach when its private values vary.

    Public attributes route a record by its value; a split on a private attribute sends it down
    every branch compatible with the conditions on that attribute higher up the path (paper 002
    §2). Index arrays, not single rows, travel down the tree.
    """
    public_set = set(public)
    encoded = tree.encode(data, strict=True, columns=public_set)
    rows_out: list[np.ndarray] = []
    leaves_out: list[np.ndarray] = []
    stack: list[tuple[int, np.ndarray, dict]] = [(0, np.arange(len(data)), {})]
    while stack:
        node_id, rows, allowed = stack.pop()
        node = tree.nodes[node_id]
        if len(rows) == 0:
            continue
        if node.is_leaf:
            rows_out.append(rows)
            leaves_out.append(np.full(len(rows), node_id, dtype=np.intp))
            continue
        split = node.split
        assert split is not None
        if split.attribute in public_set:
            branch = tree.branch_of(split, encoded[split.attribute][rows])
            for b, child in enumerate(node.children):
                stack.append((child, rows[branch == b], allowed))
            continue
        for b, child in enumerate(node.children):
            narrowed = _narrow(tree, split, b, allowed.get(split.attribute))
            if narrowed is not None:
                stack.append((child, rows, {**allowed, split.attribute: narrowed}))
    r = np.concatenate(rows_out) if rows_out else np.zeros(0, dtype=np.intp)
    c = np.concatenate(leaves_out) if leaves_out else np.zeros(0, dtype=np.intp)
    out = sp.csr_matrix((np.ones(len(r), dtype=np.int8), (r, c)), shape=(len(data), tree.n_nodes))
    out.sum_duplicates()
    out.sort_indices()
    return out


def _narrow(tree: Tree, split: CategoricalSplit | ThresholdSplit, branch: int, allowed: object) -> object | None:
    """The private values still possible after taking ``branch`` (``None``: branch unreachable)."""
    if isinstance(split, ThresholdSplit):
        low, high = allowed if allowed is not None else (-math.inf, math.inf)  # type: ignore[misc]
        low, high = (low, min(high, split.threshold)) if branch == 0 else (max(low, split.threshold), high)
        return (low, high) if low < high else None
    categories = tree.attributes[split.attribute].categories
    goes = split.lookup(categories)[: len(categories)] == branch
    mask = goes if allowed is None else goes & allowed  # type: ignore[operator]
    return mask if mask.any() else None


def _row_keys(reach: sp.csr_matrix, extra: np.ndarray) -> np.ndarray:
    """An id per record such that two records share it iff their reach rows and ``extra`` agree.

    Rows are hashed with two random 64-bit weights per node (wrapping sums) and then checked
    exactly against a representative of their group, so a hash collision can never merge spans.
    """
    rng = np.random.default_rng(20060101)
    n_nodes = reach.shape[1]
    w = rng.integers(0, 2**63, size=(2, n_nodes), dtype=np.uint64)
    nnz = np.diff(reach.indptr)
    keys = [nnz.astype(np.int64), extra.astype(np.int64)]
    for i in range(2):
        vals = w[i][reach.indices]
        sums = np.zeros(reach.shape[0], dtype=np.uint64)
        nonempty = nnz > 0
        if vals.size:
            sums[nonempty] = np.add.reduceat(vals, reach.indptr[:-1][nonempty])
        keys.append(sums.view(np.int64))
    _, first, ids = np.unique(np.column_stack(keys), axis=0, return_index=True, return_inverse=True)
    ids = ids.ravel()
    rep = first[ids]
    pos = np.arange(len(reach.indices)) - np.repeat(reach.indptr[:-1], nnz)
    owner = np.repeat(np.arange(reach.shape[0]), nnz)
    theirs = reach.indices[reach.indptr[rep[owner]] + pos]
    if not np.array_equal(theirs, reach.indices):  # pragma: no cover - needs a 128-bit collision
        raise RuntimeError("span hashing collided; please report this")
    return ids


def _class_codes(tree: Tree, data: pd.DataFrame, column: str) -> np.ndarray:
    codes = encode_categories(data[column], tree.classes)
    bad = codes < 0
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"column {column!r}: value {data[column].iloc[first]!r} (row {first}) is not one of the tree's classes"
        )
    return codes


def model_anonymity(
    tree: Tree,
    data: pd.DataFrame,
    roles: Roles | Sequence[str],
    class_public: bool | None = None,
) -> ModelAnonymity:
    """Each record's span and every span's population: the linking attack of paper 002 §2.

    ``data``: the training records (the public identifiable table, Definition 3); ``roles``: the
    quasi-identifiers (public attributes), as :class:`Roles` or a list of column names. Every other
    attribute the tree splits on is private. ``class_public``: whether the attacker knows each
    person's class (default: whether the class attribute is a quasi-identifier). When ``data``
    holds the class column, per-span class counts (for ℓ-diversity and exposed tuples) are kept.
    """
    public = list(roles.quasi_identifiers if isinstance(roles, Roles) else roles)
    used_public = [a for a in _split_attributes(tree) if a in public]
    check_columns(data, used_public)
    is_public = _class_is_public(tree, public, class_public)
    has_class = tree.class_attribute in data.columns
    if is_public and not has_class:
        raise DataError(f"the class {tree.class_attribute!r} is public but missing from the data")
    y = _class_codes(tree, data, tree.class_attribute) if has_class else None
    reach = reachable_bins(tree, data, public)
    extra = y if is_public and y is not None else np.zeros(len(data), dtype=np.intp)
    span_of = _row_keys(reach, extra)
    n_spans = int(span_of.max()) + 1 if len(span_of) else 0
    first = np.full(n_spans, -1, dtype=np.intp)
    first[span_of[::-1]] = np.arange(len(span_of))[::-1]
    spans = [tuple(int(v) for v in reach.indices[reach.indptr[r] : reach.indptr[r + 1]]) for r in first]
    population = np.bincount(span_of, minlength=n_spans)
    class_counts = None
    if y is not None:
        k = len(tree.classes)
        class_counts = np.bincount(span_of * k + y, minlength=n_spans * k).reshape(n_spans, k).astype(float)
    span_class = extra[first] if is_public else None
    return ModelAnonymity(spans, span_class, span_of, population, class_counts, reach)


def exposed_tuples(tree: Tree, data: pd.DataFrame, roles: Roles | Sequence[str], class_public: bool | None = None) -> float:
    """Share of training records whose span is class-homogeneous (paper 002 §4.2, Figure 6).

    For such a record the attacker infers the class with certainty from the linking attack.
    """
    result = model_anonymity(tree, data, roles, class_public)
    return float(result.exposed.mean()) if len(result.span_of) else 0.0


# -- the deliberately simple reference ---------------------------------------------------------


def _private_choices(tree: Tree, attribute: str) -> list[object]:
    """Values that reach every region of a private attribute: its domain, or one number per
    interval between the tree's thresholds on it."""
    attr = tree.attributes[attribute]
    if attr.is_categorical:
        return list(attr.categories)
    cuts = sorted({n.split.threshold for n in tree.nodes if isinstance(n.split, ThresholdSplit) and n.split.attribute == attribute})
    if not cuts:
        return [0.0]
    inner = [(a + b) / 2 for a, b in zip(cuts, cuts[1:])]
    return [cuts[0] - 1.0, *cuts, *inner, cuts[-1] + 1.0]


def brute_force_spans(
    tree: Tree,
    data: pd.DataFrame,
    roles: Roles | Sequence[str],
    class_public: bool | None = None,
) -> tuple[list[tuple], np.ndarray]:
    """Reference for :func:`model_anonymity`: enumerate every combination of private values.

    For each combination, every record's private columns are overwritten with it and the record
    is routed by :meth:`Tree.apply`; a record's span is the set of leaves it reached (with its
    class when the class is public). Returns each record's span key and each record's span
    population. Exponential in the number of private attributes: for tests only.
    """
    public = list(roles.quasi_identifiers if isinstance(roles, Roles) else roles)
    private = [a for a in _split_attributes(tree) if a not in public]
    n = len(data)
    reached: list[set[int]] = [set() for _ in range(n)]
    base = data.reset_index(drop=True).copy()
    for combo in itertools.product(*[_private_choices(tree, a) for a in private]):
        frame = base.copy()
        for attribute, value in zip(private, combo):
            frame[attribute] = value
        for i, leaf in enumerate(tree.apply(frame)):
            reached[i].add(int(leaf))
    is_public = _class_is_public(tree, public, class_public)
    labels = list(base[tree.class_attribute]) if is_public else [None] * n
    keys = [(tuple(sorted(s)), label) for s, label in zip(reached, labels)]
    sizes = Counter(keys)
    return keys, np.array([sizes[key] for key in keys])
