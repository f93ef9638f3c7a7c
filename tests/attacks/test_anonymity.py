"""Model k-anonymity (paper 002 §2): the fast span computation against the brute-force reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.leaf.anonymity import exposed_tuples, model_anonymity
from ppdm.errors import DataError
from ppdm.learn import C45Classifier, ID3Classifier
from ppdm.tree import Tree, tree_from_sklearn

from oracles import partition


@pytest.fixture(scope="module")
def check_against_brute_force(brute_force_spans):
    """``check(tree, data, public, class_public)``: the fast spans equal the brute-force ones."""

    def check(tree: Tree, data: pd.DataFrame, public: list[str], class_public: bool | None = None) -> None:
        fast = model_anonymity(tree, data, ThreatModel(known=public), class_public)
        keys, populations = brute_force_spans(tree, data, public, class_public)
        assert partition(fast.span_of) == partition(keys)
        np.testing.assert_array_equal(fast.record_population, populations)
        for i in range(len(data)):
            assert fast.leaves[fast.span_of[i]] == keys[i][0]
        assert fast.k == populations.min()

    return check


def test_table1_tree_has_the_two_spans_of_figure_1(mortgage, check_against_brute_force):
    # Figure 1: Sports Car (private) at the root, Marital Status (public) under "Yes".
    X, y = mortgage[["Marital Status", "Sports Car"]], mortgage["Loan Risk"]
    tree = ID3Classifier().fit(X, y).tree_
    data = mortgage.drop(columns="Name")
    result = model_anonymity(tree, data, ThreatModel(known=["Marital Status"], sensitive="Loan Risk"))
    names = mortgage["Name"].to_numpy()
    groups = {frozenset(names[result.span_of == s]) for s in range(len(result.leaves))}
    assert groups == {frozenset({"John", "Ben", "Laura"}), frozenset({"Lisa", "Robert", "Anna"})}
    no_leaf = [n.id for n in tree.leaves() if tree.prefix(n.id).describe() == "Sports Car = No"][0]
    assert all(no_leaf in span and len(span) == 2 for span in result.leaves)
    assert result.k == 3
    check_against_brute_force(tree, data, ["Marital Status"])
    # Anna's span holds 2 bad and 1 good record: not class-homogeneous, nobody is exposed.
    assert exposed_tuples(tree, data, ThreatModel(known=["Marital Status"])) == 0.0


def test_everything_public_means_spans_are_leaves_and_a_public_class_splits_them(mortgage, check_against_brute_force):
    X, y = mortgage[["Marital Status", "Sports Car"]], mortgage["Loan Risk"]
    tree = ID3Classifier().fit(X, y).tree_
    data = mortgage.drop(columns="Name")
    result = model_anonymity(tree, data, ThreatModel(known=["Marital Status", "Sports Car"]))
    np.testing.assert_array_equal(result.span_of, pd.factorize(tree.apply(data))[0])
    public_class = model_anonymity(tree, data, ThreatModel(known=["Marital Status", "Sports Car"]), class_public=True)
    assert public_class.k == 1  # the Unmarried/Yes leaf holds one good and one bad record
    check_against_brute_force(tree, data, ["Marital Status", "Sports Car"], class_public=True)


def test_private_attribute_split_twice_on_a_path_is_routed_consistently(check_against_brute_force):
    # c (private) splits into {u, v} | {w}, then {u, v} again into u | v | w: the last branch
    # ("w" under "{u, v}") is unreachable, whatever the person's private value.
    from ppdm.tree import Attribute, CategoricalSplit, Node

    nodes = [
        Node(0, None, 0, 0, np.array([3.0, 3.0]), CategoricalSplit("c", (("u", "v"), ("w",))), [1, 2]),
        Node(1, 0, 1, 0, np.array([2.0, 2.0]), CategoricalSplit("c", (("u",), ("v",), ("w",))), [3, 4, 5]),
        Node(2, 0, 1, 1, np.array([1.0, 1.0]), CategoricalSplit("g", (("m",), ("f",))), [6, 7]),
        Node(3, 1, 2, 0, np.array([1.0, 0.0])),
        Node(4, 1, 2, 1, np.array([1.0, 2.0])),
        Node(5, 1, 2, 0, np.array([0.0, 0.0])),
        Node(6, 2, 2, 0, np.array([1.0, 0.0])),
        Node(7, 2, 2, 1, np.array([0.0, 1.0])),
    ]
    attrs = [Attribute("c", "categorical", ("u", "v", "w")), Attribute("g", "categorical", ("m", "f"))]
    tree = Tree(nodes, attrs, ["p", "q"], class_attribute="y")
    data = pd.DataFrame({"c": list("uvwuvw"), "g": list("mmmfff"), "y": list("pqpqpq")})
    result = model_anonymity(tree, data, ThreatModel(known=["g"]))
    assert sorted(result.leaves) == [(3, 4, 6), (3, 4, 7)]
    check_against_brute_force(tree, data, ["g"])
    # with a numeric private attribute split twice the same way
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(18, 70, 300).astype(float), "zip": rng.choice(["a", "b"], 300)})
    frame["y"] = np.where((frame.age > 30) & (frame.age <= 50) & (frame.zip == "a"), "yes", "no")
    tree = C45Classifier(prune=False).fit(frame[["age", "zip"]], frame["y"]).tree_
    assert sum(n.split is not None and n.split.attribute == "age" for n in tree.nodes) >= 2
    for public in (["zip"], ["age"], []):
        check_against_brute_force(tree, frame, public)


def test_model_anonymity_reads_imported_scikit_learn_trees(adult_train, check_against_brute_force):
    frame, _ = adult_train
    sample = frame.sample(2000, random_state=1).reset_index(drop=True)
    cols = ["age", "education-num", "hours-per-week", "capital-gain"]
    est = DecisionTreeClassifier(max_depth=4, random_state=0).fit(sample[cols], sample["income"])
    tree = tree_from_sklearn(est, sample[cols].assign(income=sample["income"]))
    check_against_brute_force(tree, sample, ["age", "hours-per-week"])


def test_missing_public_column_is_named(mortgage):
    X, y = mortgage[["Marital Status", "Sports Car"]], mortgage["Loan Risk"]
    tree = ID3Classifier().fit(X, y).tree_
    with pytest.raises(DataError, match="Marital Status"):
        model_anonymity(tree, mortgage.drop(columns=["Marital Status"]), ThreatModel(known=["Marital Status"]))


@st.composite
def random_table(draw):
    n = draw(st.integers(6, 40))
    n_attrs = draw(st.integers(1, 4))
    columns = {}
    for j in range(n_attrs):
        if draw(st.booleans()):
            values = draw(st.lists(st.sampled_from(["u", "v", "w"]), min_size=n, max_size=n))
            columns[f"c{j}"] = pd.Categorical(values, categories=["u", "v", "w"])
        else:
            columns[f"n{j}"] = np.array(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)), dtype=float)
    columns["y"] = draw(st.lists(st.sampled_from(["p", "q"]), min_size=n, max_size=n))
    frame = pd.DataFrame(columns)
    public = [c for c in frame.columns[:-1] if draw(st.booleans())]
    return frame, public, draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(random_table())
def test_fast_spans_equal_brute_force_on_random_tables(check_against_brute_force, case):
    frame, public, class_public = case
    X, y = frame.drop(columns="y"), frame["y"]
    if y.nunique() < 2:
        return
    tree = C45Classifier(prune=False, min_samples_split=2, min_samples_leaf=1).fit(X, y).tree_
    check_against_brute_force(tree, frame, public, class_public)
