"""Text rendering of a tree in the style of the papers' figures (C4.5 / Weka)::

    education = Masters
    |   country = USA: > 50K (2.0/1.0)
    |   country = Canada: <= 50K (4.0/1.0)

A leaf shows its label, then ``(n/errors)`` when error rates are published, then the class
counts when those are.
"""

from __future__ import annotations

from ppdm.tree.disclosure import Disclosure
from ppdm.tree.model import Node, Tree


def _leaf_text(tree: Tree, node: Node) -> str:
    text = str(tree.classes[node.label])
    if tree.disclosure.reveals_rates and node.n_samples is not None:
        e = node.n_errors or 0.0
        text += f" ({node.n_samples:.1f}/{e:.1f})" if e else f" ({node.n_samples:.1f})"
    if tree.disclosure.reveals_counts and node.counts is not None:
        counts = ", ".join(f"{c}: {v:g}" for c, v in zip(tree.classes, node.counts))
        text += f" [{counts}]"
    return text


def render_tree(tree: Tree, disclosure: Disclosure | str | None = None, max_depth: int | None = None) -> str:
    """Render ``tree`` as indented text, showing only what ``disclosure`` reveals (default: the
    tree's own level); subtrees below ``max_depth`` are summarised by their node count."""
    tree = tree.published(disclosure)
    root = tree.root
    if root.is_leaf:
        return ": " + _leaf_text(tree, root)
    lines: list[str] = []
    _render_children(tree, root, 0, lines, max_depth)
    return "\n".join(lines)


def _render_children(tree: Tree, node: Node, level: int, lines: list[str], max_depth: int | None) -> None:
    assert node.split is not None
    indent = "|   " * level
    for branch, child_id in enumerate(node.children):
        child = tree.nodes[child_id]
        head = indent + node.split.describe(branch)
        if child.is_leaf:
            lines.append(f"{head}: {_leaf_text(tree, child)}")
        elif max_depth is not None and level + 1 >= max_depth:
            lines.append(f"{head}: ... ({len(list(tree.descendants(child.id)))} nodes below)")
        else:
            lines.append(head)
            _render_children(tree, child, level + 1, lines, max_depth)
