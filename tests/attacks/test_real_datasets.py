"""Homogeneity and uniqueness counts from the published tree alone agree with a direct count of
the training data routed through the tree (paper 003, Tables 5–6 quantities)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from ppdm.attacks import homogeneity_attack, homogeneous_leaves, single_record_leaves, uniqueness_attack
from ppdm.data.datasets import load_bank_loan
from ppdm.tree import tree_from_sklearn

BANK_LOAN = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"


def _datasets(adult_train, nursery):
    out = {"adult": adult_train, "nursery": nursery}
    if BANK_LOAN.exists():
        out["loan"] = load_bank_loan(BANK_LOAN)
    return out


@pytest.mark.parametrize("name", ["nursery", "loan", "adult"])
@pytest.mark.parametrize("depth", [3, 7])
def test_counts_from_tree_match_training_data(name, depth, adult_train, nursery):
    data = _datasets(adult_train, nursery)
    if name not in data:
        pytest.skip("Bank Personal Loan copy not found beside the repository")
    frame, roles = data[name]
    features = list(roles.quasi_identifiers)
    train, _ = train_test_split(frame, test_size=0.2, random_state=depth)
    X = train[features]
    est = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(pd.get_dummies(X), train[roles.class_attribute])
    tree = tree_from_sklearn(est, X, class_attribute=roles.class_attribute)
    published = tree.published("class-counts")

    # direct count: route the training rows, look at their true classes
    leaf = tree.apply(X)
    y = train[roles.class_attribute].to_numpy()
    per_leaf = pd.crosstab(leaf, y)
    homogeneous = per_leaf[(per_leaf > 0).sum(axis=1) == 1]
    leaves, users = homogeneous_leaves(published)
    assert sorted(leaves.tolist()) == sorted(homogeneous.index.tolist())
    assert users == homogeneous.to_numpy().sum()
    assert sorted(single_record_leaves(published).tolist()) == sorted(per_leaf.index[per_leaf.sum(axis=1) == 1].tolist())

    result = homogeneity_attack(published, train)
    assert result.summary()["exposed_records"] == users
    # every exposed person is exposed correctly
    assert (result.predicted()[result.exposed] == result.true_codes[result.exposed]).all()
    unique = uniqueness_attack(published, train)
    group_sizes = unique.groups.counts[unique.groups.group_of_record]
    assert np.array_equal(unique.exposed, (group_sizes == 1) & result.exposed)
