"""The one path-consistent routing of the attacker's view (paper 002 §2, Definition 4)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks import homogeneity_attack, model_anonymity
from ppdm.attacks.core.threat import ThreatModel
from ppdm.tree import Attribute, CategoricalSplit, Interval, Node, ThresholdSplit, Tree
from ppdm.tree.routing import narrow, reachable_leaves


def age_twice_tree() -> Tree:
    """``age <= 30`` at the root, ``age <= 40`` again below its left branch, ``zip`` on the right.

    Leaf 4 (``age <= 30 ∧ age > 40``) is on no person's path, whatever their age.
    """
    nodes = [
        Node(0, None, 0, 0, np.array([4.0, 2.0]), ThresholdSplit("age", 30.0), [1, 2]),
        Node(1, 0, 1, 0, np.array([2.0, 0.0]), ThresholdSplit("age", 40.0), [3, 4]),
        Node(2, 0, 1, 0, np.array([2.0, 2.0]), CategoricalSplit("zip", (("a",), ("b",))), [5, 6]),
        Node(3, 1, 2, 0, np.array([2.0, 0.0])),
        Node(4, 1, 2, 0, np.array([0.0, 0.0])),
        Node(5, 2, 2, 0, np.array([2.0, 0.0])),
        Node(6, 2, 2, 1, np.array([0.0, 2.0])),
    ]
    attrs = [Attribute("age", "numeric"), Attribute("zip", "categorical", ("a", "b"))]
    return Tree(nodes, attrs, ["no", "yes"], class_attribute="y")


@pytest.fixture
def people() -> pd.DataFrame:
    return pd.DataFrame(
        {"age": [25.0, 28.0, 35.0, 50.0, 45.0, 60.0], "zip": list("aaabbb"), "y": ["no", "no", "no", "no", "yes", "yes"]}
    )


def leaf_sets(reach) -> list[tuple[int, ...]]:
    return [tuple(int(v) for v in reach.indices[reach.indptr[r] : reach.indptr[r + 1]]) for r in range(reach.shape[0])]


def test_an_unknown_attribute_split_twice_only_reaches_compatible_branches(people, brute_force_spans):
    tree = age_twice_tree()
    reach = reachable_leaves(tree, people, known=["zip"])
    # The routing that sent a record down every branch of an unknown split also reached leaf 4,
    # although no age is both <= 30 and > 40.
    everything_below = [(3, 4, 5)] * 3 + [(3, 4, 6)] * 3
    path_consistent = [(3, 5)] * 3 + [(3, 6)] * 3
    assert leaf_sets(reach) == path_consistent != everything_below
    assert (np.diff(reach.indptr) < np.array([len(s) for s in everything_below])).all()
    keys, _ = brute_force_spans(tree, people, ["zip"])
    assert [key[0] for key in keys] == path_consistent
    assert sorted(model_anonymity(tree, people, ThreatModel(known=["zip"])).leaves) == [(3, 5), (3, 6)]


def test_the_leaf_attacks_see_the_path_consistent_span(people):
    tree = age_twice_tree()
    result = homogeneity_attack(tree, people, ThreatModel(known=["zip"]))
    assert sorted(set(result.provenance)) == ["leaves 3, 5", "leaves 3, 6"]


def test_with_every_split_attribute_known_each_row_reaches_its_leaf(people):
    tree = age_twice_tree()
    reach = reachable_leaves(tree, people, known=["age", "zip"])
    assert (np.diff(reach.indptr) == 1).all()
    np.testing.assert_array_equal(reach.indices, tree.apply(people))


def test_narrow_intersects_the_path_conditions():
    left = narrow(ThresholdSplit("age", 30.0), 0, None)
    assert left == Interval(-math.inf, 30.0)
    assert narrow(ThresholdSplit("age", 40.0), 1, left) is None  # age <= 30 and age > 40
    assert narrow(ThresholdSplit("age", 20.0), 1, left) == Interval(20.0, 30.0)
    categories = ("u", "v", "w")
    group = narrow(CategoricalSplit("c", (("u", "v"), ("w",))), 0, None, categories)
    np.testing.assert_array_equal(group, [True, True, False])
    finer = CategoricalSplit("c", (("u",), ("v",), ("w",)))
    np.testing.assert_array_equal(narrow(finer, 1, group, categories), [False, True, False])
    assert narrow(finer, 2, group, categories) is None  # w is not in {u, v}
