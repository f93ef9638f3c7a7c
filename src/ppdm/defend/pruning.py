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
    """The kept part of a subtree as ``(old id, [(branch, kept child), ...])``, or None if removed
    (children before their parent, with an explicit stack: a tree of any depth)."""
    kept: dict[int, _Kept | None] = {}
    stack = [(node_id, False)]
    while stack:
        nid, expanded = stack.pop()
        node = tree.nodes[nid]
        if node.is_leaf:
            kept[nid] = None if node.counts.sum() <= s else (nid, [])  # type: ignore[union-attr]
        elif not expanded:
            stack.append((nid, True))
            stack.extend((c, False) for c in node.children)
        else:
            children = [(b, sub) for b, c in enumerate(node.children) if (sub := kept.pop(c)) is not None]
            kept[nid] = None if not children else children[0][1] if len(children) == 1 else (nid, children)
    return kept[node_id]


def _renumber(tree: Tree, sub: _Kept, parent: int | None, depth: int, out: list[Node]) -> np.ndarray:
    """Append the pruned subtree to ``out`` (parents before children, depth first); return its
    counts. An explicit stack: a tree of any depth."""
    branches: dict[int, list[int]] = {}
    olds: dict[int, int] = {}
    stack: list[tuple[_Kept, int | None, int]] = [(sub, parent, depth)]
    first = len(out)
    while stack:
        (old_id, children), up, level = stack.pop()
        node = copy.copy(tree.nodes[old_id])
        node.id, node.parent, node.depth = len(out), up, level
        out.append(node)
        if up is not None and up >= first:
            out[up].children.append(node.id)
        if children:
            node.children = []
            branches[node.id], olds[node.id] = [b for b, _ in children], old_id
            stack.extend((child, node.id, level + 1) for _, child in reversed(children))
    for node in reversed(out[first:]):  # children before parents: their counts are final
        if node.id not in branches:
            assert node.counts is not None  # _prune keeps only leaves with counts
            continue
        below = [out[c].counts for c in node.children]
        total = np.sum([c for c in below if c is not None], axis=0)
        node.split = _keep_branches(tree.nodes[olds[node.id]], branches[node.id], out, node)
        node.counts = total
        node.label = int(np.argmax(total))
    return out[first].counts  # type: ignore[return-value]


def _keep_branches(old: Node, kept: list[int], out: list[Node], node: Node) -> Split | None:
    split = old.split
    if not isinstance(split, CategoricalSplit) or len(kept) == len(old.children):
        return split
    sizes = [out[c].counts.sum() for c in node.children]  # type: ignore[union-attr]
    default = int(np.argmax(sizes))
    groups = [list(split.groups[b]) for b in kept]
    return CategoricalSplit(split.attribute, tuple(tuple(g) for g in groups), default)
