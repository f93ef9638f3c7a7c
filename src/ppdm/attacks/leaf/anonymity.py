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
  of its class bins, so a span is a set of leaves. If it is public (the threat model's
  ``class_known``: the class among the known columns) the attacker also knows each person's class, and a span is a set of leaves
  together with that class.
* **Private domains.** The private values varied are the tree's attribute domains for categorical
  attributes and the whole real line for numeric ones. Routing is path-consistent
  (:func:`ppdm.tree.routing.reachable_leaves`): a private attribute split twice on one path only
  reaches branches compatible with the conditions above.
* **Empty spans.** Definition 6 speaks of the tuples of the public identifiable table only, so a
  span that no training record has is no breach.

:func:`model_anonymity` sends index arrays down the tree and groups the records' spans by
hashing; the result is a :class:`~ppdm.tree.spans.Spans`, the type the kADET learner reports too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.attacks.core.threat import ThreatModel, checked_threat
from ppdm.data.qigroups import group_codes
from ppdm.data.roles import check_columns
from ppdm.errors import DataError
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree, encode_categories
from ppdm.tree.routing import reachable_leaves
from ppdm.tree.spans import Spans

__all__ = ["exposed_tuples", "model_anonymity", "span_ids"]


def span_ids(reach: sp.csr_matrix) -> np.ndarray:
    """An id per row of ``reach`` (sorted indices) such that two rows share it iff they reach the same nodes."""
    return _row_keys(reach, np.zeros(reach.shape[0], dtype=np.intp))


def _reach(model: Tree | Forest, data: pd.DataFrame, public: Sequence[str]) -> tuple[sp.csr_matrix, list[tuple[int, int]] | None]:
    """Rows × nodes (of every tree, side by side) each record can reach, and each column's (tree,
    node) (``None`` for a single tree: its columns are its node ids).

    A forest routes each distinct combination of the public split attributes once, through every
    tree, and hands its rows to the records that have it.
    """
    if isinstance(model, Tree):
        return reachable_leaves(model, data, known=public), None
    used = [a for a in sorted(model.split_attributes) if a in public]
    codes, table = group_codes(data, used)
    blocks = [reachable_leaves(tree, table, known=used) for tree in model.trees]
    columns = [(t, n) for t, tree in enumerate(model.trees) for n in range(tree.n_nodes)]
    reach = sp.hstack(blocks, format="csr")[codes]
    reach.sort_indices()
    return reach, columns


def _span_leaves(reach: sp.csr_matrix, rows: np.ndarray, columns: list[tuple[int, int]] | None) -> Sequence[tuple]:
    """The leaves of each of ``rows`` of ``reach``: node ids, or ``(tree, leaf)`` pairs given each column's."""
    if columns is None:
        return [tuple(int(v) for v in reach.indices[reach.indptr[r] : reach.indptr[r + 1]]) for r in rows]
    return ForestSpanLeaves(reach, rows, columns)


class ForestSpanLeaves(Sequence[tuple[tuple[int, int], ...]]):
    """Each forest span's ``(tree, leaf)`` pairs, built when asked for: a forest's spans can hold
    thousands of leaves each, and most reports read only a few spans."""

    def __init__(self, reach: sp.csr_matrix, rows: np.ndarray, columns: list[tuple[int, int]]) -> None:
        self._reach, self._rows = reach, rows
        self._trees, self._nodes = (np.array(part, dtype=np.int64) for part in zip(*columns))

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> tuple[tuple[int, int], ...]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[tuple[int, int], ...]]: ...
    def __getitem__(self, i: int | slice) -> tuple[tuple[int, int], ...] | list[tuple[tuple[int, int], ...]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        r = self._rows[i]
        cols = self._reach.indices[self._reach.indptr[r] : self._reach.indptr[r + 1]]
        return tuple(zip(self._trees[cols].tolist(), self._nodes[cols].tolist()))


def _class_is_public(tree: Tree | Forest, public: Sequence[str], class_public: bool | None) -> bool:
    return tree.class_attribute in public if class_public is None else bool(class_public)


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


def _class_codes(tree: Tree | Forest, data: pd.DataFrame, column: str) -> np.ndarray:
    codes = encode_categories(data[column], tree.classes)
    bad = codes < 0
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"column {column!r}: value {data[column].iloc[first]!r} (row {first}) is not one of the tree's classes"
        )
    return codes


def model_anonymity(
    tree: Tree | Forest,
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
    class_public: bool | None = None,
) -> Spans:
    """Each record's span and every span's population: the linking attack of paper 002 §2.

    ``data``: the training records (the public identifiable table, Definition 3); ``threat``: the
    attacker (:class:`~ppdm.attacks.core.threat.ThreatModel`, resolved against ``data``): the columns
    they know are the public attributes, every other attribute the tree splits on is private
    (default: every column but the class is known). ``class_public``: whether the attacker knows
    each person's class (default: the threat model's ``class_known``). When ``data`` holds
    the class column, per-span class counts (for ℓ-diversity and exposed tuples) are kept.

    Over a :class:`Forest`, a record's span is its set of reachable leaves in every tree: records
    whose sets agree in every tree cannot be told apart by the model (varying the private values
    jointly over the trees gives the same grouping: a leaf a record can reach is reached for the
    same private values by every record that can reach it). ``Spans.leaves`` then holds
    ``(tree, leaf)`` pairs.
    """
    public = _public(tree, data, checked_threat("model_anonymity", threat))
    return _spans(tree, data, public, class_public)


def _public(model: Tree | Forest, data: pd.DataFrame, threat: ThreatModel | None) -> list[str]:
    """The columns the attacker knows: the threat model's (the class among them when it is known)."""
    return list((threat or ThreatModel()).resolve(data, model.class_attribute, splits=model.split_attributes).known or ())


def _spans(tree: Tree | Forest, data: pd.DataFrame, public: list[str], class_public: bool | None) -> Spans:
    used_public = [a for a in sorted(tree.split_attributes) if a in public]
    check_columns(data, used_public)
    is_public = _class_is_public(tree, public, class_public)
    has_class = tree.class_attribute in data.columns
    if is_public and not has_class:
        raise DataError(f"the class {tree.class_attribute!r} is public but missing from the data")
    y = _class_codes(tree, data, tree.class_attribute) if has_class else None
    reach, columns = _reach(tree, data, public)
    extra = y if is_public and y is not None else np.zeros(len(data), dtype=np.intp)
    span_of = _row_keys(reach, extra)
    n_spans = int(span_of.max()) + 1 if len(span_of) else 0
    first = np.full(n_spans, -1, dtype=np.intp)
    first[span_of[::-1]] = np.arange(len(span_of))[::-1]
    leaves = _span_leaves(reach, first, columns)
    population = np.bincount(span_of, minlength=n_spans)
    class_counts = None
    if y is not None:
        k = len(tree.classes)
        class_counts = np.bincount(span_of * k + y, minlength=n_spans * k).reshape(n_spans, k).astype(float)
    span_class = extra[first] if is_public else None
    return Spans(leaves, span_class, span_of, population, class_counts)


def exposed_tuples(
    tree: Tree | Forest,
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
    class_public: bool | None = None,
) -> float:
    """Share of training records whose span is class-homogeneous (paper 002 §4.2, Figure 6).

    For such a record the attacker infers the class with certainty from the linking attack.
    ``threat`` and ``class_public`` as for :func:`model_anonymity`.
    """
    public = _public(tree, data, checked_threat("exposed_tuples", threat))
    return _spans(tree, data, public, class_public).exposed_share
