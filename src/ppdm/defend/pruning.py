"""Post-training pruning against uniqueness and homogeneity attacks (paper 003 §4.1).

With ``s = k − 1`` both methods aim at a tree whose leaves each hold more than ``s`` records, in
the spirit of k-anonymity:

* **Method 1** (:func:`remove_small_leaves`, Figure 5): leaves with ``n ≤ s`` are removed and
  their records deleted from the published counts. A node left with one branch is replaced by
  that branch's subtree (its test no longer separates anything); a multiway node that keeps two
  or more branches keeps its split, and the values of removed branches go to its largest
  remaining branch. So a record whose leaf was removed is predicted by the sibling subtree that
  took its parent's place. A node all of whose leaves are removed is removed too.
* **Method 2** (:func:`collapse_small_children`, Figure 6): a node with at least one child of
  ``n ≤ s`` becomes a leaf (its subtree is discarded, its counts kept); repeated until no node
  has such a child.

Both return a new, valid :class:`~ppdm.tree.Tree` whose published counts add up from the leaves
to the root. They work on any tree with class counts: learned by ppdm or imported from
scikit-learn.
"""

from __future__ import annotations

import copy

import numpy as np

from ppdm.errors import PpdmError
from ppdm.tree.edit import collapse
from ppdm.tree.model import Node, Tree
from ppdm.tree.splits import CategoricalSplit, Split


def _check(tree: Tree, s: float) -> None:
    if s < 0:
        raise PpdmError(f"the pruning threshold s must be non-negative, got {s}")
    if any(n.counts is None for n in tree.nodes):
        raise PpdmError("pruning needs the tree's training class counts (a tree with class-counts disclosure)")


def collapse_small_children(tree: Tree, s: float) -> Tree:
    """Method 2: make every node with a child of ``n ≤ s`` a leaf, until none is left."""
    _check(tree, s)
    while True:
        targets = [
            n.id for n in tree.internal_nodes() if any(tree.nodes[c].counts.sum() <= s for c in n.children)  # type: ignore[union-attr]
        ]
        if not targets:
            return tree
        tree = collapse(tree, targets)


def remove_small_leaves(tree: Tree, s: float) -> Tree:
    """Method 1: remove leaves with ``n ≤ s`` (see the module docstring for what stays valid)."""
    _check(tree, s)
    kept = _prune(tree, 0, s)
    if kept is None:
        raise PpdmError(f"every leaf holds at most s = {s} records: Method 1 would remove the whole tree")
    nodes: list[Node] = []
    _renumber(tree, kept, None, 0, nodes)
    removed = float(tree.nodes[0].counts.sum() - nodes[0].counts.sum())  # type: ignore[union-attr]
    return Tree(
        nodes, list(tree.attributes.values()), tree.classes, class_attribute=tree.class_attribute,
        criterion=tree.criterion, algorithm=tree.algorithm, disclosure=tree.disclosure,
        removed_records=tree.removed_records + removed,
    )


_Kept = tuple[int, list[tuple[int, "_Kept"]]]
"""The kept part of a subtree: ``(old id, [(branch, kept child), ...])``."""


def _prune(tree: Tree, node_id: int, s: float) -> _Kept | None:
    """The kept part of a subtree as ``(old id, [(branch, kept child), ...])``, or None if removed."""
    node = tree.nodes[node_id]
    if node.is_leaf:
        return None if node.counts.sum() <= s else (node_id, [])  # type: ignore[union-attr]
    children = [(b, sub) for b, c in enumerate(node.children) if (sub := _prune(tree, c, s)) is not None]
    if not children:
        return None
    if len(children) == 1:
        return children[0][1]
    return (node_id, children)


def _renumber(tree: Tree, sub: _Kept, parent: int | None, depth: int, out: list[Node]) -> np.ndarray:
    """Append the pruned subtree to ``out`` (parents before children); return its counts."""
    old_id, children = sub
    old = tree.nodes[old_id]
    node = copy.copy(old)
    node.id, node.parent, node.depth = len(out), parent, depth
    out.append(node)
    if not children:
        assert node.counts is not None  # _prune keeps only leaves with counts
        return node.counts
    node.children = []
    total = np.zeros(len(tree.classes))
    for _, child in children:
        node.children.append(len(out))
        total = total + _renumber(tree, child, node.id, depth + 1, out)
    node.split = _keep_branches(old, [b for b, _ in children], out, node)
    node.counts = total
    node.label = int(np.argmax(total))
    return total


def _keep_branches(old: Node, kept: list[int], out: list[Node], node: Node) -> Split | None:
    split = old.split
    if not isinstance(split, CategoricalSplit) or len(kept) == len(old.children):
        return split
    sizes = [out[c].counts.sum() for c in node.children]  # type: ignore[union-attr]
    default = int(np.argmax(sizes))
    groups = [list(split.groups[b]) for b in kept]
    return CategoricalSplit(split.attribute, tuple(tuple(g) for g in groups), default)
