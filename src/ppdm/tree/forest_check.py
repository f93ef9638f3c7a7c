"""Route training rows through every tree of a :class:`Forest` and compare with what it claims.

An importer claims per-node row counts and class counts (``Forest.known``). Given the training
rows (in the order the model was fitted on) and, optionally, their classes, :func:`routed_counts`
counts what reaches each node, each row weighted by the tree's multiplicity, and
:func:`verify_counts` raises :class:`ModelImportError` at the first node whose claim differs:
a wrong split conversion, wrong bootstrap multiplicities, or rows that are not the training rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.errors import ModelImportError, advising
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree


def weights_of(forest: Forest, i: int, n_rows: int) -> np.ndarray | None:
    """Tree ``i``'s multiplicity of each of ``n_rows`` training rows: the known ones, else 1 for
    every row when the tree's root holds exactly ``n_rows`` rows; ``None`` when unknown."""
    m = forest.multiplicities[i]
    if m is not None:
        return m if len(m) == n_rows else None
    root = forest.trees[i].root.n_samples
    return np.ones(n_rows, dtype=np.int64) if root is not None and round(root) == n_rows else None


def routed_counts(
    tree: Tree, leaves: np.ndarray, weights: np.ndarray, labels: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Weighted rows reaching each node of ``tree`` (rows land in ``leaves``), and per class
    (nodes × classes) when ``labels`` (class indices, -1 unknown) are given."""
    rows = _subtree_sums(tree, np.bincount(leaves, weights=weights, minlength=tree.n_nodes)[:, None])[:, 0]
    if labels is None:
        return rows, None
    k = len(tree.classes)
    ok = labels >= 0
    keys = leaves[ok] * k + labels[ok]
    by_class = np.bincount(keys, weights=weights[ok], minlength=tree.n_nodes * k).reshape(-1, k)
    return rows, _subtree_sums(tree, by_class)


def verify_counts(forest: Forest, data: pd.DataFrame, labels: np.ndarray | None = None) -> int:
    """Raise :class:`ModelImportError` unless ``data``'s rows reach every node of every tree in the
    numbers (and, with ``labels``, the class counts) the forest claims; the number of trees checked."""
    leaves = forest.apply(data)
    checked = 0
    for i, tree in enumerate(forest.trees):
        weights = weights_of(forest, i, len(data))
        known = forest.known[i]
        if weights is None or not known & {"sample-counts", "class-counts"}:
            continue
        use = labels if labels is not None and "class-counts" in known else None
        rows, by_class = routed_counts(tree, leaves[:, i], weights, use)
        claimed = np.array([np.nan if n.n_samples is None else n.n_samples for n in tree.nodes])
        wrong = np.abs(claimed - rows) > 1e-6  # NaN (not claimed) compares False
        if by_class is not None:
            wrong |= (np.abs(np.stack([n.counts for n in tree.nodes]) - by_class) > 1e-6).any(axis=1)  # type: ignore[misc]
        if wrong.any():
            first = int(np.flatnonzero(wrong)[0])
            raise advising(ModelImportError(_message(forest, i, first, float(claimed[first]), float(rows[first]), data)), VERIFY_ADVICE, "verify")
        checked += 1
    return checked


def _message(forest: Forest, i: int, node_id: int, claimed: float, here: float, data: pd.DataFrame | None = None) -> str:
    tree = forest.trees[i]
    parent = tree.nodes[node_id].parent
    column = None if parent is None else tree.nodes[parent].split.attribute  # type: ignore[union-attr]
    where = "" if column is None else f"column {column!r} (split of node {parent}): "
    classes = " with other class counts" if abs(claimed - here) <= 1e-6 else ""
    odd = "" if column is None or data is None else _missing_value(data, column)
    if parent is None and classes:  # every row reaches the root: its classes, not their order, differ
        coded = ", ".join(f"{code} as {value!r}" for code, value in enumerate(forest.classes))
        return (
            f"tree {i}: the model records {claimed:g} training row(s) at its root, as the data hold, but other class counts: "
            f"the import reads the model's class codes {coded} (the classes in sorted order): if it was fitted on other codes, "
            f"refit it with these (scikit-learn's LabelEncoder codes them so); else these are not its training rows{VERIFY_ADVICE}"
        )
    return (
        f"tree {i}, {where}the model records {claimed:g} training row(s) at node {node_id}, "
        f"the imported tree routes {here:g} there{classes}{odd}; pass the training rows in the order the "
        f"model was fitted on{VERIFY_ADVICE}"
    )


def _missing_value(data: pd.DataFrame, column: str) -> str:
    """The likelier cause of a count that differs at a split of ``column``: a row with no value
    there (it takes the split's default branch), if any. (A value the model's encoder never saw is
    refused before the counts are compared: :meth:`~ppdm.tree.pipeline.PipelineSteps.check_values`.)"""
    if column not in data.columns:
        return ""
    missing = data[column].isna().to_numpy()
    return f" (row {int(np.flatnonzero(missing)[0])} has no value in {column!r})" if missing.any() else ""


#: The end of the message of :func:`_message`: advice for a Python caller only.
VERIFY_ADVICE = ", or verify=False"


def _subtree_sums(tree: Tree, at_node: np.ndarray) -> np.ndarray:
    """Per-node totals over each node's subtree (children have larger ids than their parent)."""
    out = at_node.astype(float)
    for node in reversed(tree.nodes):
        if node.parent is not None:
            out[node.parent] += out[node.id]
    return out


#: How far a leaf's cover may lie from the training rows' hessians summed there (relative, and in
#: hessian units): float32 covers and scores agree to about 10⁻⁶; a subsample of even 99.9 % of
#: the rows leaves some leaf short by far more.
COVER_RTOL, COVER_ATOL = 1e-4, 1e-3


def rows_once_by_covers(forest: Forest, data: pd.DataFrame) -> bool:
    """Whether every round of the boosted ``forest`` was grown on every row of ``data`` once: each
    leaf's cover (the hessians summed over the rows that reached it) equals the sum of ``data``'s
    rows' hessians there, from the scores before that round. The auditor holds the training rows,
    so this settles what a model file does not say (an XGBoost file has no ``subsample``): rows
    drawn with ``subsample < 1`` or weighted would leave some leaf short of, or past, its cover."""
    from ppdm.tree.newton import newton_step, round_probabilities, tree_rounds

    step = newton_step(forest)
    if isinstance(step, str) or tree_rounds(forest) is None:
        return False
    leaves = forest.apply(data)
    h = step.hessian_scale * (p := round_probabilities(forest, leaves, step.float32)) * (1.0 - p)
    for t, tree in enumerate(forest.trees):
        ids = np.array([leaf.id for leaf in tree.leaves()], dtype=np.intp)
        cover = np.array([np.nan if tree.nodes[i].cover is None else tree.nodes[i].cover for i in ids], dtype=float)
        if np.isnan(cover).any():
            return False
        summed = np.bincount(leaves[:, t], weights=h[:, t], minlength=tree.n_nodes)[ids]
        if not np.allclose(summed, cover, rtol=COVER_RTOL, atol=COVER_ATOL):
            return False
    return True
