"""The grower on the papers' toy tables and, by property tests, on random small tables."""

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.learn import C45Classifier, ID3Classifier
from ppdm.learn.counts import ExactCounts
from ppdm.learn.criteria import get_criterion
from ppdm.learn.encoding import encode_table
from ppdm.learn.grower import Grower, StoppingRules


def leaf_paths(tree):
    return {tree.prefix(leaf.id).describe(tree.domains()): (leaf.n_samples, leaf.n_errors) for leaf in tree.leaves()}


def test_id3_reproduces_paper_000_figure_1(d1):
    # Figure 1(b): Education at the root; Masters split by Country, Masters-Canada by Gender,
    # Doctorate by Gender. Two-record nodes stay leaves (min_samples_split=3), as in the figure.
    X, y = d1.drop(columns="Salary"), d1["Salary"]
    tree = ID3Classifier(min_samples_split=3).fit(X, y).tree_
    assert tree.root.split.attribute == "Education"
    assert leaf_paths(tree) == {
        "Education = Masters ∧ Country = USA": (2, 1),
        "Education = Masters ∧ Country = Canada ∧ Gender = Female": (2, 1),
        "Education = Masters ∧ Country = Canada ∧ Gender = Male": (2, 0),
        "Education = Doctorate ∧ Gender = Female": (3, 0),
        "Education = Doctorate ∧ Gender = Male": (2, 1),
    }
    # L4 of the figure: "> 50K" with no error, holding two q5 and one q7 records.
    l4 = [leaf for leaf in tree.leaves() if tree.prefix(leaf.id).describe() == "Education = Doctorate ∧ Gender = Female"][0]
    assert tree.classes[l4.label] == ">50K"
    # The attacker of paper 000 §4.2 knows which attributes were weighed at each internal node.
    assert tree.root.candidates == ("Education", "Country", "Gender")
    assert tree.criterion == "entropy"


def test_id3_reproduces_paper_000_figure_2b(d2):
    X, y = d2.drop(columns="Salary"), d2["Salary"]
    tree = ID3Classifier(min_samples_split=3).fit(X, y).tree_
    assert tree.root.split.attribute == "Age"
    assert leaf_paths(tree) == {"Age = MiddleAge": (2, 0), "Age = Senior": (2, 1), "Age = Youth": (2, 0)}
    # Unlimited, ID3 separates the two seniors by Education.
    assert ID3Classifier().fit(X, y).tree_.n_leaves == 4


def test_empty_branch_gets_parent_majority_label():
    X = pd.DataFrame({"a": pd.Categorical(["x", "x", "y", "y"], categories=["x", "y", "z"])})
    tree = ID3Classifier().fit(X, ["p", "p", "q", "q"]).tree_
    z_leaf = tree.nodes[tree.root.children[2]]
    assert z_leaf.n_samples == 0 and z_leaf.label == tree.root.label


def test_best_first_builder_builds_same_full_tree(d1):
    X, y = d1.drop(columns="Salary"), d1["Salary"]
    depth_first = ID3Classifier().fit(X, y).tree_
    best_first = ID3Classifier(builder="best-first").fit(X, y).tree_
    assert sorted(leaf_paths(depth_first).items()) == sorted(leaf_paths(best_first).items())
    two_leaves = ID3Classifier(builder="best-first", max_leaf_nodes=2).fit(X, y).tree_
    assert two_leaves.n_leaves == 2


# -- property tests on random tables -------------------------------------------------------------
@st.composite
def tables(draw):
    n = draw(st.integers(1, 40))
    n_cat = draw(st.integers(0, 3))
    n_num = draw(st.integers(0 if n_cat else 1, 2))
    data = {}
    for i in range(n_cat):
        k = draw(st.integers(1, 4))
        data[f"c{i}"] = pd.Categorical(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), categories=range(k))
    for i in range(n_num):
        data[f"n{i}"] = np.array(draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), dtype=float)
    y = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    return pd.DataFrame(data), y


def check_partition_and_counts(tree, X, y):
    leaf_of_row = tree.apply(X)
    # every row lands in a leaf, and each leaf holds exactly its counted rows
    assert all(tree.nodes[i].is_leaf for i in np.unique(leaf_of_row))
    y_codes = np.searchsorted(np.asarray(tree.classes, dtype=object).astype(str), np.asarray(y).astype(str))
    for leaf in tree.leaves():
        rows = leaf_of_row == leaf.id
        assert np.array_equal(np.bincount(y_codes[rows], minlength=len(tree.classes)), leaf.counts)
    # counts add up from the leaves to the root
    for node in tree.internal_nodes():
        assert np.allclose(sum(tree.nodes[c].counts for c in node.children), node.counts)
    assert tree.root.counts.sum() == len(y)


@settings(max_examples=60, deadline=None)
@given(tables(), st.sampled_from(["entropy", "gini", "gain_ratio"]))
def test_c45_leaves_partition_training_rows(table, criterion):
    X, y = table
    model = C45Classifier(criterion=criterion, prune=False, min_samples_leaf=1, min_samples_split=2).fit(X, y)
    check_partition_and_counts(model.tree_, X, y)
    check_partition_and_counts(C45Classifier(criterion=criterion).fit(X, y).tree_, X, y)


@settings(max_examples=60, deadline=None)
@given(tables(), st.sampled_from(["entropy", "gini"]), st.sampled_from(["depth-first", "best-first"]))
def test_grower_leaves_partition_training_rows(table, criterion, builder):
    X, y = table
    table_ = encode_table(X, y)
    grower = Grower(
        ExactCounts(table_), table_.attributes, get_criterion(criterion), list(table_.classes),
        stopping=StoppingRules(), builder=builder,
    )
    tree = grower.grow()
    check_partition_and_counts(tree, X, y)
