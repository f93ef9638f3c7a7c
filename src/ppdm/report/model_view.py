"""The published model as the report shows it: every node on one line with its id.

A tree is rendered as ``ppdm show`` prints it (:func:`ppdm.tree.render.render_lines`, the
papers' C4.5 / Weka style of paper 000 Figure 1), each line ending with ``[node N]`` and carrying
an anchor (``node-N``; ``tree-T-node-N`` in a forest), so a leaf named anywhere in the report
(a person's leaves, the per-leaf table, the exposure plot: all drawn from the results' leaf
pairs) links to its line. Each leaf also
gets its rule (the conditions of its path) and what the file publishes about it.
"""

from __future__ import annotations

from typing import Any

from ppdm.tree.forest import Forest
from ppdm.tree.model import Node, Tree
from ppdm.tree.render import render_lines


def anchor(node_id: int, tree_index: int | None = None) -> str:
    """The HTML id of a node's line: ``node-7``, or ``tree-2-node-7`` in a forest."""
    return f"node-{node_id}" if tree_index is None else f"tree-{tree_index}-node-{node_id}"


def published_leaf(tree: Tree, node: Node, known: frozenset[str] | None = None) -> str:
    """What the file publishes about a leaf: its label, then rows/errors and class counts if
    published; a tree of a forest (``known``: the quantities its file holds,
    :attr:`Forest.known <ppdm.tree.forest.Forest>`) also its leaf value, cover and row count,
    and no label where the label is a placeholder (boosting)."""
    if known is None:
        known = frozenset({"labels"})
    parts = []
    if "labels" in known:
        parts.append(str(tree.classes[node.label]))
    if "leaf-values" in known and node.value is not None:
        parts.append(f"value {node.value:+.4g}")
    if "cover" in known and node.cover is not None:
        parts.append(f"cover {node.cover:.4g}")
    text = ", ".join(parts)
    if tree.disclosure.reveals_rates and node.n_samples is not None and "labels" in known:
        text += f", {node.n_samples:g} rows, {node.n_errors or 0:g} misclassified"
    elif "sample-counts" in known and node.n_samples is not None:
        text += f"{', ' if text else ''}{node.n_samples:g} rows"
    if tree.disclosure.reveals_counts and node.counts is not None:
        text += " (" + ", ".join(f"{c}: {v:g}" for c, v in zip(tree.classes, node.counts)) + ")"
    return text


def tree_view(tree: Tree, tree_index: int | None = None, known: frozenset[str] | None = None) -> dict[str, Any]:
    """One tree: its rendered lines (id, anchor, text) and, per leaf, its rule and what is
    published (``known``: a forest's tree's quantities, see :func:`published_leaf`)."""
    domains = tree.domains()
    lines = [
        {"id": node_id, "anchor": anchor(node_id, tree_index), "text": text, "leaf": tree.nodes[node_id].is_leaf}
        for node_id, text in render_lines(tree, ids=True)
    ]
    prefixes = tree.prefixes()
    leaves = {
        str(node.id): {
            "rule": prefixes[node.id].describe(domains),
            "published": published_leaf(tree, node, known),
            "anchor": anchor(node.id, tree_index),
        }
        for node in tree.leaves()
    }
    return {
        "index": tree_index,
        "nodes": tree.n_nodes,
        "leaves": tree.n_leaves,
        "depth": tree.depth,
        "lines": lines,
        "leaf_info": leaves,
    }


def model_view(model: Tree | Forest) -> dict[str, Any]:
    """The model's summary and every tree's view (see :func:`tree_view`)."""
    trees = list(model.trees)
    single = model is trees[0]  # a Tree is a forest of one: its own only tree
    known = None if single else getattr(model, "known", None)
    views = [tree_view(t, None if single else i, None if known is None else known[i]) for i, t in enumerate(trees)]
    kind, extra = ("tree", {}) if single else ("forest", {"combine": getattr(model, "combine", None), "link": getattr(model, "link", None)})
    first = trees[0]
    return {
        "kind": kind,
        "algorithm": getattr(model, "algorithm", None) or first.algorithm,
        "class_attribute": first.class_attribute,
        "classes": [str(c) for c in first.classes],
        "disclosure": first.disclosure.value,
        "criterion": first.criterion,
        "training_rows": model.n_training_records,
        "trees": views,
        **extra,
    }
