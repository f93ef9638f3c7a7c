"""Which leaves a person can land in when the attacker knows only some of their attributes.

Routing a record whose split attributes are all known gives one leaf (``Tree.apply``). When a
node splits on an attribute the attacker does not know (a private attribute, paper 002 §2), the
record may go down several branches: the set of leaves it can reach is its *span* (Definition 4).

Routing is *path-consistent*: an unknown attribute split twice on one path (``age <= 30`` then
``age <= 40``; a value group, then a finer split) only reaches the branches compatible with the
conditions above, exactly as enumerating every value of the unknown attribute and routing each
with ``Tree.apply`` would. The values still possible are an :class:`~ppdm.tree.splits.Interval`
for a numeric attribute (varied over the whole real line) and a boolean mask over the domain for
a categorical one; :func:`narrow` is the one step that updates them when a branch is taken (the
kADET learner's incremental span bookkeeping uses it too).

:func:`reachable_leaves` returns a sparse 0/1 matrix rows × nodes, built by sending index arrays
(not single rows) down the tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.tree.model import Tree
from ppdm.tree.splits import Interval, Scalar, Split, ThresholdSplit

__all__ = ["Possible", "narrow", "reachable_leaves"]

Possible = Interval | np.ndarray
"""The values of an unknown attribute a path still allows: an interval, or a mask over the domain."""


def narrow(split: Split, branch: int, possible: Possible | None, categories: Sequence[Scalar] = ()) -> Possible | None:
    """The values of ``split``'s attribute still possible after taking ``branch``.

    ``possible``: what the path above allows (``None``: nothing known yet, the whole real line or
    the whole domain ``categories``). Returns ``None`` when no value takes the branch: the branch
    is unreachable on this path. Values outside a categorical split's groups take its default
    branch, as :meth:`CategoricalSplit.lookup` says.
    """
    if isinstance(split, ThresholdSplit):
        interval = split.condition(branch)
        if possible is not None:
            interval = possible & interval
        return interval if interval.low < interval.high else None
    goes = split.lookup(categories)[: len(categories)] == branch
    mask = goes if possible is None else goes & possible
    return mask if mask.any() else None


def reachable_leaves(tree: Tree, frame: pd.DataFrame, known: Iterable[str] | None = None) -> sp.csr_matrix:
    """0/1 matrix (rows of ``frame``) × (tree nodes): the leaves each row can reach.

    ``known``: attributes whose values the attacker has (default: every column of ``frame``);
    a known split sends each row down the branch of its value, an unknown one down every branch
    compatible with the path's earlier conditions on the same attribute (paper 002 §2). Each row
    of the result lists its leaves in increasing id order.
    """
    known_set = set(frame.columns if known is None else known)
    encoded = tree.encode(frame, strict=True, columns=known_set)
    rows_out: list[np.ndarray] = []
    leaves_out: list[np.ndarray] = []
    stack: list[tuple[int, np.ndarray, Mapping[str, Possible]]] = [(0, np.arange(len(frame)), {})]
    while stack:
        node_id, rows, possible = stack.pop()
        node = tree.nodes[node_id]
        if len(rows) == 0:
            continue
        if node.is_leaf:
            rows_out.append(rows)
            leaves_out.append(np.full(len(rows), node_id, dtype=np.intp))
            continue
        split = node.split
        assert split is not None
        if split.attribute in known_set:
            branch = tree.branch_of(split, encoded[split.attribute][rows])
            stack.extend((child, rows[branch == b], possible) for b, child in enumerate(node.children))
            continue
        categories = tree.attributes[split.attribute].categories
        for b, child in enumerate(node.children):
            narrowed = narrow(split, b, possible.get(split.attribute), categories)
            if narrowed is not None:
                stack.append((child, rows, {**possible, split.attribute: narrowed}))
    r = np.concatenate(rows_out) if rows_out else np.zeros(0, dtype=np.intp)
    c = np.concatenate(leaves_out) if leaves_out else np.zeros(0, dtype=np.intp)
    out = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(frame), tree.n_nodes))
    out.sort_indices()
    return out
