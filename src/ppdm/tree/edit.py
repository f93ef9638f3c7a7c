"""Structural edits of a tree that keep it valid: turning internal nodes into leaves.

Turning a node into a leaf discards its subtree (paper 002 §3.3: "undoing a split"; C4.5's
subtree replacement; paper 003 §4.1 Method 2). The new leaf keeps the node's training counts,
which are the sums of the discarded leaves' counts, so published counts stay consistent.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from ppdm.tree.model import Node, Tree


def collapse(tree: Tree, node_ids: Iterable[int]) -> Tree:
    """A new tree in which every node of ``node_ids`` is a leaf; ids are renumbered in order."""
    cut = set(node_ids)
    removed: set[int] = set()
    for node_id in sorted(cut):
        if node_id not in removed:
            removed.update(d.id for d in tree.descendants(node_id))
    kept = [n for n in tree.nodes if n.id not in removed]
    new_id = {n.id: i for i, n in enumerate(kept)}
    nodes: list[Node] = []
    for old in kept:
        node = copy.copy(old)
        node.id = new_id[old.id]
        node.parent = None if old.parent is None else new_id[old.parent]
        if old.id in cut:
            node.split, node.children, node.candidates, node.score = None, [], (), None
        else:
            node.children = [new_id[c] for c in old.children]
        nodes.append(node)
    return Tree(
        nodes,
        list(tree.attributes.values()),
        tree.classes,
        class_attribute=tree.class_attribute,
        criterion=tree.criterion,
        algorithm=tree.algorithm,
        disclosure=tree.disclosure,
        removed_records=tree.removed_records,
    )
