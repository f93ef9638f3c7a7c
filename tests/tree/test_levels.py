"""Routing every row at once, level by level, lands each record where a walk down the tree does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.splits import CategoricalSplit, ThresholdSplit

COLORS = ("red", "green", "blue", "black")


def _random_tree(rng: np.random.Generator, depth: int) -> Tree:
    """Threshold splits on two numeric columns and value-group splits (some values in no group)
    on a categorical one, random defaults, up to ``depth`` levels."""
    attrs = [Attribute("color", "categorical", COLORS), Attribute("x", "numeric"), Attribute("z", "numeric")]
    nodes: list[Node] = []

    def grow(parent: int | None, level: int) -> int:
        node = Node(len(nodes), parent, level, 0, np.array([1.0, 1.0]))
        nodes.append(node)
        if level < depth and rng.random() < 0.8:
            if rng.random() < 0.4:
                values = list(rng.permutation(COLORS)[: rng.integers(2, 5)])
                cut = int(rng.integers(1, len(values)))
                node.split = CategoricalSplit("color", (tuple(values[:cut]), tuple(values[cut:])), default=int(rng.integers(2)))
            else:
                node.split = ThresholdSplit(str(rng.choice(["x", "z"])), float(rng.normal()), default=int(rng.integers(2)))
            node.children = [grow(node.id, level + 1) for _ in range(2)]
        return node.id

    grow(None, 0)
    return Tree(nodes, attrs, ["n", "y"], class_attribute="y")


def _walk(tree: Tree, row: pd.Series) -> int:
    """One record down the tree, split by split, by the splits' own rules."""
    node = tree.nodes[0]
    while node.split is not None:
        split = node.split
        if isinstance(split, ThresholdSplit):
            value = float(row[split.attribute])
            branch = split.default if np.isnan(value) else (0 if value <= split.threshold else 1)
        else:
            value = row[split.attribute]
            branch = next((i for i, group in enumerate(split.groups) if value in group), split.default)
        node = tree.nodes[node.children[branch]]
    return node.id


@pytest.mark.parametrize("seed", range(10))
def test_every_row_lands_where_a_walk_down_the_tree_takes_it(seed):
    rng = np.random.default_rng(seed)
    tree = _random_tree(rng, depth=6)
    n = 300
    frame = pd.DataFrame({
        "color": rng.choice([*COLORS, "purple", None], size=n),  # an unseen value and a missing one
        "x": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
        "z": rng.normal(size=n),
    })
    assert tree.apply(frame).tolist() == [_walk(tree, row) for _, row in frame.iterrows()]


def test_a_single_leaf_tree_puts_every_row_at_the_root():
    tree = Tree([Node(0, None, 0, 0, np.array([1.0, 1.0]))], [Attribute("x", "numeric")], ["n", "y"], class_attribute="y")
    assert tree.apply(pd.DataFrame({"x": [1.0, 2.0]})).tolist() == [0, 0]


def test_a_forest_routes_its_trees_over_the_columns_stacked_once():
    # trees reading different columns (one only x, one a single leaf) and the forest's columns
    # stacked once in another order: each tree's leaves as its own walk finds them
    from ppdm.tree.forest import Forest

    rng = np.random.default_rng(7)
    trees = [_random_tree(rng, depth=5) for _ in range(4)]
    attrs = list(trees[0].attributes.values())
    root = Node(0, None, 0, 0, np.array([1.0, 1.0]), ThresholdSplit("x", 0.0, default=1), [1, 2])
    only_x = Tree([root, Node(1, 0, 1, 0, np.array([1.0, 0.0])), Node(2, 0, 1, 1, np.array([0.0, 1.0]))], attrs, ["n", "y"], class_attribute="y")
    leaf = Tree([Node(0, None, 0, 0, np.array([1.0, 1.0]))], attrs, ["n", "y"], class_attribute="y")
    forest = Forest([*trees, only_x, leaf], "vote")
    n = 200
    frame = pd.DataFrame({
        "z": rng.normal(size=n),
        "x": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
        "color": rng.choice([*COLORS, "purple", None], size=n),
    })
    want = np.array([[_walk(t, row) for t in forest.trees] for _, row in frame.iterrows()])
    assert np.array_equal(forest.apply(frame), want)


def test_rows_routed_in_chunks_land_where_they_land_routed_at_once(monkeypatch):
    """:data:`~ppdm.tree.levels.CHUNK` rows at a time (here 7, so that chunks end mid-table and the
    last is short): every row where a walk down the tree takes it."""
    from ppdm.tree import levels

    rng = np.random.default_rng(11)
    tree = _random_tree(rng, depth=6)
    n = 100
    frame = pd.DataFrame({
        "color": rng.choice([*COLORS, "purple", None], size=n),
        "x": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
        "z": rng.normal(size=n),
    })
    monkeypatch.setattr(levels, "CHUNK", 7)
    assert tree.apply(frame).tolist() == [_walk(tree, row) for _, row in frame.iterrows()]
