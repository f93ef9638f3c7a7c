import numpy as np
import pandas as pd

from ppdm.learn import ID3Classifier
from ppdm.tree import CategoricalSplit, Disclosure, Interval, Node, Prefix, ThresholdSplit, Tree, ValueSet, collapse, render_tree
from ppdm.tree.model import Attribute


def small_tree():
    """age <= 30 → leaf A; age > 30 → sex = F: B, sex = M: A."""
    attrs = [Attribute("age", "numeric"), Attribute("sex", "categorical", ("F", "M"))]
    nodes = [
        Node(0, None, 0, 0, np.array([5.0, 3.0]), ThresholdSplit("age", 30.0, default=1), [1, 2], ("age", "sex")),
        Node(1, 0, 1, 0, np.array([3.0, 0.0])),
        Node(2, 0, 1, 1, np.array([2.0, 3.0]), CategoricalSplit("sex", (("F",), ("M",)), default=0), [3, 4], ("age", "sex")),
        Node(3, 2, 2, 1, np.array([0.0, 3.0])),
        Node(4, 2, 2, 0, np.array([2.0, 0.0])),
    ]
    return Tree(nodes, attrs, ["A", "B"], class_attribute="y", criterion="gini", algorithm="manual")


def test_apply_predict_and_unknown_values():
    tree = small_tree()
    X = pd.DataFrame({"age": [20, 40, 40, 50, np.nan], "sex": ["M", "F", "M", "X", "F"]})
    assert tree.apply(X).tolist() == [1, 3, 4, 3, 3]  # unknown "X" and NaN age go to the default branch
    assert tree.predict(X).tolist() == ["A", "B", "A", "B", "B"]
    assert np.allclose(tree.predict_proba(X)[0], [1, 0])


def test_leaf_distributions_are_the_counts_shares_or_the_label_where_none_are_published():
    tree = small_tree()
    assert np.allclose(tree.leaf_distributions(), [[5 / 8, 3 / 8], [1, 0], [0.4, 0.6], [0, 1], [1, 0]])
    tree.nodes[3].counts = np.zeros(2)  # an empty leaf answers its label
    tree.nodes[1].counts = None  # a node without counts too
    assert np.allclose(tree.leaf_distributions()[[1, 3]], [[1, 0], [0, 1]])
    assert np.allclose(tree.published("labels").leaf_distributions(), np.eye(2)[tree.leaf_labels()])


def test_prefix_is_the_path_predicate():
    tree = small_tree()
    p = tree.prefix(3)
    assert p.conditions == {"age": Interval(30.0, np.inf), "sex": ValueSet(frozenset({"F"}))}
    assert p.describe() == "age > 30 ∧ sex = F"
    X = pd.DataFrame({"age": [20, 40, 40], "sex": ["F", "F", "M"]})
    assert p.mask(X).tolist() == [False, True, False]
    # conditions on the same attribute intersect along a path
    q = Prefix({"age": Interval(-np.inf, 50)}) & Prefix({"age": Interval(30, np.inf)})
    assert q.conditions["age"] == Interval(30, 50)


def test_published_views_hide_counts():
    tree = small_tree()
    rates = tree.published(Disclosure.ERROR_RATES)
    assert rates.nodes[2].counts is None and rates.nodes[2].n_samples == 5 and rates.nodes[2].n_errors == 2
    labels = tree.published("labels")
    assert labels.nodes[2].n_samples is None and labels.nodes[2].label == 1
    assert tree.nodes[2].counts is not None  # the original is untouched


def test_render_in_the_papers_style(d1):
    tree = ID3Classifier(min_samples_split=3).fit(d1.drop(columns="Salary"), d1["Salary"]).tree_
    text = render_tree(tree, disclosure="error-rates")
    assert "Education = Doctorate\n|   Gender = Female: >50K (3.0)\n|   Gender = Male: <=50K (2.0/1.0)" in text
    assert "(" not in render_tree(tree, disclosure="labels")
    assert "[<=50K: 2, >50K: 0]" in render_tree(tree)


def test_collapse_keeps_counts_consistent():
    tree = collapse(small_tree(), [2])
    assert tree.n_nodes == 3 and tree.n_leaves == 2
    assert np.array_equal(tree.nodes[2].counts, [2.0, 3.0]) and tree.nodes[2].is_leaf
    assert tree.predict(pd.DataFrame({"age": [40], "sex": ["M"]})).tolist() == ["B"]


def test_a_value_outside_the_domain_is_named_at_its_row_label_with_its_count():
    """The strict encoding (routing) and the pipeline's domain check say the same: the column,
    the value, the row as the table labels it, and how many rows hold such values."""
    import pytest

    from ppdm.errors import DataError

    tree = small_tree()
    X = pd.DataFrame({"age": [20, 40, 41], "sex": ["M", "X", "X"]}, index=[100, 101, 102])
    with pytest.raises(DataError, match=r"column 'sex': value 'X' \(row 101\) is not in the tree's domain for this attribute \(2 such row\(s\)\)"):
        tree.encode(X, strict=True)
