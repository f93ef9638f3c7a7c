"""The ε-DP random tree baseline: structure independent of the records, noise of scale 1/ε."""

import numpy as np
import pytest

from ppdm.errors import PpdmError
from ppdm.learn.dp_tree import DPRandomTreeClassifier
from ppdm.tree import tree_from_dict, tree_to_dict


def test_structure_does_not_depend_on_the_records(table):
    X, y = table
    one = DPRandomTreeClassifier(epsilon=1, max_depth=4, bounds={"b": (-5, 5)}, random_state=3).fit(X, y).tree_
    other = DPRandomTreeClassifier(epsilon=1, max_depth=4, bounds={"b": (-5, 5)}, random_state=3).fit(X.iloc[::-1].iloc[:500], y.iloc[::-1].iloc[:500]).tree_
    assert [n.split for n in one.nodes] == [n.split for n in other.nodes]


def test_counts_are_noisy_consistent_and_the_tree_valid(table):
    X, y = table
    model = DPRandomTreeClassifier(epsilon=100.0, max_depth=3, random_state=0).fit(X, y)
    tree = tree_from_dict(tree_to_dict(model.tree_))
    assert tree.n_leaves <= 8 and tree.algorithm == "dp-random" and tree.class_attribute == "c"
    for node in tree.internal_nodes():
        assert np.allclose(sum(tree.nodes[c].counts for c in node.children), node.counts)
    # at ε = 100 the noise is tiny: the root count is the table's size within a few records
    assert abs(tree.root.counts.sum() - len(X)) < 10
    assert (model.predict(X) == y.to_numpy()).mean() > 0.5


def test_noise_scale_is_one_over_epsilon(table):
    X, y = table
    errors = []
    for seed in range(20):
        tree = DPRandomTreeClassifier(epsilon=0.5, max_depth=0, random_state=seed).fit(X, y).tree_
        true = np.array([(y == c).sum() for c in tree.classes], dtype=float)
        errors.append(tree.root.counts - true)
    # Laplace(1/ε = 2): mean absolute deviation 2 (clipping at 0 does not bite on counts of ~1000)
    assert 1.2 < np.abs(errors).mean() < 2.8


@pytest.mark.parametrize(("params", "message"), [({"epsilon": 0}, "epsilon"), ({"max_depth": -1}, "max_depth")])
def test_bad_parameters(table, params, message):
    with pytest.raises(PpdmError, match=message):
        DPRandomTreeClassifier(**params).fit(*table)
