"""Pruning defenses of paper 003 §4.1 keep trees valid; Method 2 on Adult (Table 7)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from ppdm.attacks import homogeneous_leaves
from ppdm.defend import collapse_small_children, remove_small_leaves
from ppdm.errors import PpdmError
from ppdm.learn import ID3Classifier
from ppdm.tree import tree_from_dict, tree_from_sklearn, tree_to_dict

PAPER_GRID = [5, 10, 20, 30, 40, 50]


def assert_valid(tree, X):
    back = tree_from_dict(tree_to_dict(tree))  # the JSON validator checks parents, children, splits
    assert back.n_nodes == tree.n_nodes
    for node in tree.internal_nodes():
        assert len(node.children) == node.split.n_branches >= 2
        assert np.allclose(sum(tree.nodes[c].counts for c in node.children), node.counts)
        assert node.label == int(np.argmax(node.counts))
    leaves = tree.apply(X)
    assert all(tree.nodes[i].is_leaf for i in np.unique(leaves))


@pytest.fixture(scope="module")
def adult_depth7(adult_train):
    frame, roles = adult_train
    features = list(roles.quasi_identifiers)
    train, test = train_test_split(frame, test_size=0.2, random_state=0)
    dummies = pd.get_dummies(train[features])
    est = DecisionTreeClassifier(max_depth=7, random_state=0).fit(dummies, train["income"])
    tree = tree_from_sklearn(est, train[features], class_attribute="income")
    return tree, train[features], test[features], test["income"].to_numpy()


@pytest.mark.parametrize("s", PAPER_GRID)
def test_both_methods_keep_the_tree_valid(adult_depth7, s):
    tree, X, X_test, _ = adult_depth7
    for method in (remove_small_leaves, collapse_small_children):
        pruned = method(tree, s)
        assert_valid(pruned, X_test)
        assert pruned.n_leaves <= tree.n_leaves
    # Method 2 leaves no node with a child of n <= s
    pruned = collapse_small_children(tree, s)
    assert all(pruned.nodes[c].counts.sum() > s for n in pruned.internal_nodes() for c in n.children)
    # Method 1 leaves no leaf of n <= s, and deletes exactly the removed leaves' records
    pruned = remove_small_leaves(tree, s)
    assert all(leaf.counts.sum() > s for leaf in pruned.leaves())
    removed = sum(leaf.counts.sum() for leaf in tree.leaves() if leaf.counts.sum() <= s)
    assert pruned.root.counts.sum() == tree.root.counts.sum() - removed


def test_method_2_at_s10_lowers_exposure_at_little_accuracy_cost(adult_depth7):
    tree, _, X_test, y_test = adult_depth7
    pruned = collapse_small_children(tree, 10)
    assert homogeneous_leaves(pruned)[1] < homogeneous_leaves(tree)[1]
    before = (tree.predict(X_test) == y_test).mean()
    after = (pruned.predict(X_test) == y_test).mean()
    assert abs(before - after) <= 0.005


def test_method_1_on_a_multiway_tree_merges_removed_values_into_a_branch(d1):
    tree = ID3Classifier().fit(d1.drop(columns="Salary"), d1["Salary"]).tree_
    pruned = remove_small_leaves(tree, 1)
    assert_valid(pruned, d1)
    assert all(leaf.counts.sum() > 1 for leaf in pruned.leaves())


def test_pruning_everything_is_an_error(d1):
    tree = ID3Classifier().fit(d1.drop(columns="Salary"), d1["Salary"]).tree_
    with pytest.raises(PpdmError, match="whole tree"):
        remove_small_leaves(tree, 100)
    assert collapse_small_children(tree, 100).n_nodes == 1
    with pytest.raises(PpdmError, match="class counts"):
        collapse_small_children(tree.published("labels"), 5)
