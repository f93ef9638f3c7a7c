"""What a Forest answers about itself as a Tree does (a tree is a forest of one): what it
publishes, the forest published with less, its leaves, depth and split attributes."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier

from ppdm.errors import PpdmError
from ppdm.learn import ID3Classifier
from ppdm.tree import Disclosure, Forest, Tree, forest_from_sklearn

MEMBERS = ("disclosure", "n_leaves", "depth", "split_attributes")


@pytest.fixture(scope="module")
def nursery_bagged(nursery):
    """Three ID3 trees of different depths on bootstrap samples of 600 Nursery rows, with their multiplicities."""
    frame, roles = nursery
    frame = frame.sample(600, random_state=0).reset_index(drop=True)
    X, y = frame.drop(columns=roles.class_attribute), frame[roles.class_attribute]
    rng = np.random.default_rng(1)
    trees, mult = [], []
    for depth in (2, 4, 3):
        rows = rng.integers(0, len(frame), len(frame))
        trees.append(ID3Classifier(max_depth=depth).fit(X.iloc[rows], y.iloc[rows]).tree_)
        mult.append(np.bincount(rows, minlength=len(frame)))
    return Forest(trees, "mean-proba", multiplicities=mult, algorithm="id3-bagging"), X


@pytest.fixture(scope="module")
def adult_boosted(adult_split):
    """Three rounds of binary gradient boosting on 2,000 Adult rows: an additive forest whose first
    tree publishes class counts and whose others publish labels (placeholders) only."""
    rows = np.arange(2000)
    X, D, y = adult_split.X.iloc[rows], adult_split.D.iloc[rows], adult_split.y.iloc[rows]
    gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(D, y)
    return forest_from_sklearn(gb, X, y=y), X


def _node_attributes(tree: Tree) -> list[str]:
    """Every internal node's split attribute, in node order (duplicates kept)."""
    return [n.split.attribute for n in tree.nodes if not n.is_leaf]


def _published_nodes(tree: Tree) -> list[tuple]:
    """What each node of ``tree`` publishes, comparable across copies."""
    return [
        (n.id, n.label, None if n.counts is None else tuple(n.counts), n.n_samples, n.n_errors, n.split is None)
        for n in tree.nodes
    ]


def test_a_tree_names_each_split_attribute_once_in_order_of_first_appearance(nursery_bagged):
    forest, _ = nursery_bagged
    for tree in forest.trees:
        names = _node_attributes(tree)
        assert tree.split_attributes == tuple(sorted(set(names), key=names.index))
        assert tree.split_attributes[0] == tree.root.split.attribute


def test_a_forest_adds_up_its_trees(nursery_bagged):
    forest, _ = nursery_bagged
    assert forest.n_leaves == sum(len(t.leaves()) for t in forest.trees)
    assert forest.depth == 4 == max(max(n.depth for n in t.nodes) for t in forest.trees)
    names = [a for t in forest.trees for a in _node_attributes(t)]
    assert forest.split_attributes == tuple(sorted(set(names), key=names.index))
    assert len(set(forest.split_attributes)) == len(forest.split_attributes)
    assert forest.split_attributes[0] == forest.trees[0].root.split.attribute
    assert isinstance(forest.split_attributes, tuple) and isinstance(forest.trees[0].split_attributes, tuple)


def test_a_forest_publishes_the_most_any_of_its_trees_does(nursery_bagged):
    forest, _ = nursery_bagged
    assert forest.disclosure is Disclosure.CLASS_COUNTS
    levels = [Disclosure.LABELS, Disclosure.ERROR_RATES, Disclosure.LABELS]
    mixed = Forest([t.published(d) for t, d in zip(forest.trees, levels)], "vote")
    assert mixed.disclosure is Disclosure.ERROR_RATES
    mixed.trees[2].disclosure = Disclosure.CLASS_COUNTS  # read from the trees, not fixed when built
    assert mixed.disclosure is Disclosure.CLASS_COUNTS


def test_a_forest_published_with_less_publishes_it_in_every_tree(nursery_bagged):
    forest, X = nursery_bagged
    rates = forest.published(Disclosure.ERROR_RATES)
    assert rates is not forest and rates.disclosure is Disclosure.ERROR_RATES
    assert all(t.disclosure is Disclosure.ERROR_RATES for t in rates.trees)
    for before, after in zip(forest.trees, rates.trees):
        assert all(n.counts is None for n in after.nodes)
        assert [n.n_samples for n in after.nodes] == [n.n_samples for n in before.nodes]
        assert [n.n_errors for n in after.nodes] == [n.n_errors for n in before.nodes]
    assert all(n.counts is not None for t in forest.trees for n in t.nodes)  # the forest itself is unchanged
    assert rates.combine == forest.combine and rates.algorithm == forest.algorithm
    assert all(np.array_equal(a, b) for a, b in zip(rates.multiplicities, forest.multiplicities))
    # without class frequencies a mean-proba forest predicts by its trees' votes
    votes = Forest(forest.trees, "vote").predict_proba(X)
    assert np.allclose(rates.predict_proba(X), votes)
    labels = rates.published("labels")  # a level's value works too
    assert labels.disclosure is Disclosure.LABELS and all(n.n_samples is None for t in labels.trees for n in t.nodes)


def test_trees_that_publish_no_more_are_kept_and_so_is_a_forest_none_of_whose_trees_does(nursery_bagged):
    forest, _ = nursery_bagged
    assert forest.published(None) is forest
    assert forest.published(Disclosure.CLASS_COUNTS) is forest
    mixed = Forest([forest.trees[0].published("labels"), forest.trees[1]], "vote")
    rates = mixed.published(Disclosure.ERROR_RATES)
    assert rates.trees[0] is mixed.trees[0] and rates.trees[1] is not mixed.trees[1]
    assert [t.disclosure for t in rates.trees] == [Disclosure.LABELS, Disclosure.ERROR_RATES]
    assert mixed.published(Disclosure.LABELS).trees[0] is mixed.trees[0]


def test_a_forest_cannot_be_published_with_more_than_its_trees_hold(nursery_bagged):
    forest, _ = nursery_bagged
    rates = forest.published(Disclosure.ERROR_RATES)
    message = "the forest's trees publish error-rates at most: they cannot be audited as publishing class-counts"
    with pytest.raises(PpdmError) as raised:
        rates.published(Disclosure.CLASS_COUNTS)
    assert str(raised.value) == message
    labels = forest.published(Disclosure.LABELS)
    with pytest.raises(PpdmError, match="publish labels at most: they cannot be audited as publishing error-rates"):
        labels.published("error-rates")
    with pytest.raises(PpdmError, match="unknown disclosure"):
        forest.published("everything")


def test_an_additive_forest_published_with_less_keeps_how_its_trees_add_up(adult_boosted):
    forest, X = adult_boosted
    assert [t.disclosure for t in forest.trees] == [Disclosure.CLASS_COUNTS, Disclosure.LABELS, Disclosure.LABELS]
    assert forest.disclosure is Disclosure.CLASS_COUNTS
    rates = forest.published(Disclosure.ERROR_RATES)
    assert [t.disclosure for t in rates.trees] == [Disclosure.ERROR_RATES, Disclosure.LABELS, Disclosure.LABELS]
    assert rates.trees[1] is forest.trees[1] and rates.trees[2] is forest.trees[2]
    assert rates.combine == "additive" and rates.link == forest.link
    assert np.array_equal(rates.base_score, forest.base_score) and np.array_equal(rates.outputs, forest.outputs)
    assert [n.value for t in rates.trees for n in t.nodes] == [n.value for t in forest.trees for n in t.nodes]
    assert np.array_equal(rates.decision_function(X), forest.decision_function(X))


@pytest.mark.parametrize("which", range(3))
def test_a_forest_of_one_answers_as_its_tree_does(nursery_bagged, which):
    tree = nursery_bagged[0].trees[which]
    one = Forest([tree], "vote")
    for name in MEMBERS:
        assert getattr(one, name) == getattr(tree, name), name
        assert callable(getattr(one, name)) is callable(getattr(tree, name)) is False, name
    assert callable(one.published) and callable(tree.published)
    for level in Disclosure:
        as_forest = one.published(level)
        assert as_forest.disclosure is tree.published(level).disclosure is level
        assert _published_nodes(as_forest.trees[0]) == _published_nodes(tree.published(level))
        for name in MEMBERS[1:]:
            assert getattr(as_forest, name) == getattr(tree.published(level), name)
