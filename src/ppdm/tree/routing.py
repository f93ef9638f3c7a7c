"""Which leaves a person can land in when the attacker knows only some of their attributes.

Routing a record whose split attributes are all known gives one leaf (``Tree.apply``). When a
node splits on an attribute the attacker does not know (a private attribute, paper 002 §2), the
record may go down every branch: the set of leaves it can reach is its *span*. Returned as a
sparse 0/1 matrix rows × leaves, built by sending index arrays (not single rows) down the tree.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.tree.model import Tree


def reachable_leaves(tree: Tree, frame: pd.DataFrame, known: Iterable[str] | None = None) -> sp.csr_matrix:
    """0/1 matrix (rows of ``frame``) × (tree nodes): the leaves each row can reach.

    ``known``: attributes whose values the attacker has (default: every column of ``frame``);
    a split on any other attribute sends the row down every branch.
    """
    known_set = set(frame.columns if known is None else known)
    encoded = tree.encode(frame, strict=True, columns=known_set)
    rows_out: list[np.ndarray] = []
    leaves_out: list[np.ndarray] = []
    stack: list[tuple[int, np.ndarray]] = [(0, np.arange(len(frame)))]
    while stack:
        node_id, rows = stack.pop()
        node = tree.nodes[node_id]
        if len(rows) == 0:
            continue
        if node.is_leaf:
            rows_out.append(rows)
            leaves_out.append(np.full(len(rows), node_id))
            continue
        assert node.split is not None
        if node.split.attribute not in known_set:
            stack.extend((child, rows) for child in node.children)
            continue
        branch = tree.branch_of(node.split, encoded[node.split.attribute][rows])
        for b, child in enumerate(node.children):
            stack.append((child, rows[branch == b]))
    r = np.concatenate(rows_out) if rows_out else np.zeros(0, dtype=np.intp)
    c = np.concatenate(leaves_out) if leaves_out else np.zeros(0, dtype=np.intp)
    return sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(frame), tree.n_nodes))
