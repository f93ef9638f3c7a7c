"""Reconstruction by propagation: people found certain are taken out of every tree's counts and the
rest read again; on a hand-made forest the rounds are those worked out by hand, and on real
forests nobody is made certain of a wrong class."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from ppdm.attacks import homogeneity_attack, reconstruction_attack
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.leaf.leaves import forest_view
from ppdm.attacks.leaf.reconstruction import propagate
from ppdm.tree import Attribute, CategoricalSplit, Forest, Node, Tree, forest_from_sklearn

ATTRIBUTES = [Attribute("g", "categorical", ("x", "y", "z"))]


def _tree(groups, left, right) -> Tree:
    nodes = [
        Node(0, None, 0, 0, np.add(left, right).astype(float), CategoricalSplit("g", groups), [1, 2]),
        Node(1, 0, 1, int(np.argmax(left)), np.array(left, dtype=float)),
        Node(2, 0, 1, int(np.argmax(right)), np.array(right, dtype=float)),
    ]
    return Tree(nodes, ATTRIBUTES, ("a", "b"), "cls")


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame({"g": ["x", "y", "z", "z"], "cls": ["a", "b", "b", "a"]})


def test_taking_out_a_certain_person_makes_a_neighbour_certain(table):
    # tree 1 shows y alone (b); tree 0 puts x with y (a once, b once): without y, x is a.
    forest = Forest(
        [_tree((("x", "y"), ("z",)), [1, 1], [1, 1]), _tree((("y",), ("x", "z")), [0, 1], [2, 1])],
        "mean-proba",
        multiplicities=[np.ones(4, dtype=np.int64)] * 2,
    )
    assert homogeneity_attack(forest, table).certain_groups.tolist() == [False, True, False]
    result = reconstruction_attack(forest, table)
    assert result.certain_groups.tolist() == [True, True, False]  # z holds an a and a b: never certain
    assert result.provenance[0] == "tree 0 leaf 1 (round 1: after taking out the people found certain)"
    assert result.details["certain_after_subtraction"] == 1 and result.details["rounds"] == 1
    assert result.summary()["certain_wrong"] == 0
    _, found = propagate(forest_view(forest, table))
    assert found.tolist() == [1, 0, -1]
    # a bootstrap forest whose draws are unknown subtracts nothing and is certain of nobody
    assert not reconstruction_attack(Forest(forest.trees, "mean-proba"), table).certain_groups.any()


def test_a_single_tree_is_a_forest_of_one(table):
    tree = _tree((("x", "y"), ("z",)), [1, 1], [1, 1])
    result = reconstruction_attack(tree, table)
    assert not result.certain_groups.any() and result.details["trees"] == 1


@pytest.mark.parametrize("bootstrap", [True, False])
def test_reconstruction_never_makes_a_wrong_class_certain(bootstrap, adult_train, nursery):
    for frame, roles in (adult_train, nursery):
        rows = frame.sample(1000, random_state=9).reset_index(drop=True).drop(columns=["fnlwgt"], errors="ignore")
        cls = roles.class_attribute
        rows[cls] = rows[cls].cat.remove_unused_categories()
        X = rows.drop(columns=cls)
        make = RandomForestClassifier if bootstrap else ExtraTreesClassifier
        est = make(8, max_depth=8, bootstrap=bootstrap, random_state=3, n_jobs=1).fit(pd.get_dummies(X).astype(float), rows[cls])
        forest = forest_from_sklearn(est, X, y=rows[cls])
        for threat in (None, ThreatModel(known=list(X.columns[:5]))):
            view = forest_view(forest, rows, threat)
            possible, found = propagate(view)
            assert possible.all(axis=1)[view.groups.group_of_record, view.true_codes].all()  # the truth is feasible
            summary = reconstruction_attack(forest, rows, threat).summary()
            assert summary["certain_wrong"] == 0 and summary["exposed_wrong"] == 0
            if threat is None:
                assert (found > 0).any()  # the rounds add people the published counts alone leave open
