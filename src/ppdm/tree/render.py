"""Text rendering of a tree in the style of the papers' figures (C4.5 / Weka)::

    education = Masters
    |   country = USA: > 50K (2.0/1.0)
    |   country = Canada: <= 50K (4.0/1.0)

A leaf shows its label, then ``(n/errors)`` when error rates are published, then the class
counts when those are. With ``ids`` every line ends with the id of the node it leads to
(``[node 7]``), the root's on a line of its own: the ids that audits name in their provenance
("leaf 7") and reports link to.
"""

from __future__ import annotations

from collections.abc import Callable

from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest
from ppdm.tree.model import Node, Tree


def _leaf_text(tree: Tree, node: Node) -> str:
    if node.value is not None:  # a round of a boosted model or a regressor's leaf: its label is no prediction
        return _value_text(node)
    text = str(tree.classes[node.label])
    if tree.disclosure.reveals_rates and node.n_samples is not None:
        e = node.n_errors or 0.0
        text += f" ({node.n_samples:.1f}/{e:.1f})" if e else f" ({node.n_samples:.1f})"
    if tree.disclosure.reveals_counts and node.counts is not None:
        counts = ", ".join(f"{c}: {v:g}" for c, v in zip(tree.classes, node.counts))
        text += f" [{counts}]"
    return text


def _value_text(node: Node) -> str:
    """A leaf that publishes a number (a boosted round's score, a regression tree's mean), with
    its rows when they are published."""
    text = f"value {node.value:.6g}"
    if node.n_samples is not None:
        text += f" ({node.n_samples:g} rows)"
    return text


#: The deepest level indented in full; a deeper line states its depth (a tree thousands of levels
#: deep would otherwise print gigabytes of bars).
INDENT_LEVELS = 40


def _indent(depth: int) -> str:
    if depth <= INDENT_LEVELS:
        return "|   " * depth
    return f"{'|   ' * 2}|.. depth {depth:,} ..{'|   ' * 2}"


def node_tag(node_id: int) -> str:
    """How a rendering names a node: ``[node 7]``."""
    return f"[node {node_id}]"


def render_tree(
    tree: Tree, disclosure: Disclosure | str | None = None, max_depth: int | None = None, ids: bool = False
) -> str:
    """Render ``tree`` as indented text, showing only what ``disclosure`` reveals (default: the
    tree's own level); subtrees below ``max_depth`` are summarised by their node count. With
    ``ids`` each line ends with its node's id (see the module docstring)."""
    return "\n".join(text for _, text in render_lines(tree, disclosure, max_depth, ids))


def render_lines(
    tree: Tree, disclosure: Disclosure | str | None = None, max_depth: int | None = None, ids: bool = False
) -> list[tuple[int, str]]:
    """:func:`render_tree` line by line, each with the id of the node it leads to. A boosted
    round's leaf rows are published beside its values whatever its level says (they are what its
    forest knows, :func:`~ppdm.tree.model.published_quantities`), so such a tree is shown as it is
    unless ``disclosure`` is given."""
    if disclosure is not None or not any(n.value is not None for n in tree.leaves()):
        tree = tree.published(disclosure)
    root = tree.root
    tag = (lambda i: f"  {node_tag(i)}") if ids else (lambda i: "")
    if root.is_leaf:
        return [(root.id, ": " + _leaf_text(tree, root) + tag(root.id))]
    lines: list[tuple[int, str]] = [(root.id, "root" + tag(root.id))] if ids else []
    _render_children(tree, root, 0, lines, max_depth, tag)
    return lines


def _render_children(
    tree: Tree, node: Node, level: int, lines: list[tuple[int, str]], max_depth: int | None, tag: Callable[[int], str]
) -> None:
    """Append the lines below ``node`` in pre-order (an explicit stack: any depth renders)."""
    stack = [(node, level, 0)]
    while stack:
        parent, depth, branch = stack.pop()
        if branch >= len(parent.children):
            continue
        stack.append((parent, depth, branch + 1))
        assert parent.split is not None
        child = tree.nodes[parent.children[branch]]
        head = _indent(depth) + parent.split.describe(branch)
        if child.is_leaf:
            lines.append((child.id, f"{head}: {_leaf_text(tree, child)}{tag(child.id)}"))
        elif max_depth is not None and depth + 1 >= max_depth:
            lines.append((child.id, f"{head}: ... ({len(list(tree.descendants(child.id)))} nodes below){tag(child.id)}"))
        else:
            lines.append((child.id, head + tag(child.id)))
            stack.append((child, depth + 1, 0))


def forest_lines(forest: Forest) -> list[str]:
    """A forest in a few lines: one for the whole (its library, how its trees combine, its size
    and what it publishes), then one per tree (its leaves, depth, split columns and, in a boosted
    model of several classes, the class whose score it adds to). :func:`render_tree` shows one tree."""
    how = {"vote": "trees vote", "mean-proba": "class frequencies averaged", "mean": "leaf values averaged"}
    combine = how.get(forest.combine, f"leaf values added, {forest.link} link")
    target = f"predicting {forest.class_attribute!r}" if not forest.is_regressor else f"regressing {forest.class_attribute!r}"
    lines = [
        f"{forest.algorithm or 'forest'} {target}: {forest.n_trees} trees ({combine}), {forest.n_leaves:,} leaves, "
        f"depth up to {forest.depth}, publishes {_published(forest, 0)}"
    ]
    per_class = forest.combine == "additive" and forest.n_outputs > 1
    for i, tree in enumerate(forest.trees):
        columns = ", ".join(tree.split_attributes) or "no column"
        adds = f", adds to {forest.classes[int(forest.outputs[i])]!r}" if per_class else ""
        differs = "" if _published(forest, i) == _published(forest, 0) else f", publishes {_published(forest, i)}"
        lines.append(f"tree {i}: {tree.n_leaves} leaves, depth {tree.depth}, splits on {columns}{adds}{differs}")
    return lines


def _published(forest: Forest, i: int) -> str:
    """What tree ``i`` publishes, in words (its known per-node quantities)."""
    known = forest.known[i]
    return ", ".join(q for q in ("labels", "class-counts", "error-rates", "sample-counts", "cover", "leaf-values") if q in known) or "its splits"
