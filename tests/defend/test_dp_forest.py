"""The ε-DP forest baseline: random trees sharing one budget ε, every record counted once per tree."""

import numpy as np
import pandas as pd
import pytest

from ppdm.errors import NotFittedError, PpdmError
from ppdm.learn.dp_forest import DPRandomForestClassifier
from ppdm.tree import forest_from_dict, forest_to_dict


def test_the_trees_share_the_budget_and_count_every_record_once(table):
    X, y = table
    model = DPRandomForestClassifier(epsilon=50.0, n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    forest = forest_from_dict(forest_to_dict(model.forest_))
    assert forest.n_trees == 5 and forest.combine == "mean-proba" and forest.algorithm == "dp-random-forest"
    assert forest.params == {"epsilon": 50.0, "n_estimators": 5, "max_depth": 3}
    assert all((m == 1).all() and len(m) == len(X) for m in forest.multiplicities)
    assert forest.class_attribute == "c"
    # each tree's noise has scale n_estimators / ε = 0.1: roots hold the table's size within a few records
    for tree in forest.trees:
        assert abs(tree.root.counts.sum() - len(X)) < 5
    # the trees' structures differ (independent draws)
    assert len({tuple(str(n.split) for n in t.nodes) for t in forest.trees}) > 1
    assert (model.predict(X) == y.to_numpy()).mean() > 0.5


def test_more_trees_mean_more_noise_per_tree(table):
    X, y = table
    few = DPRandomForestClassifier(epsilon=1.0, n_estimators=1, max_depth=0, random_state=1).fit(X, y).forest_
    many = DPRandomForestClassifier(epsilon=1.0, n_estimators=50, max_depth=0, random_state=1).fit(X, y).forest_
    truth = np.bincount(pd.Categorical(y, categories=few.classes).codes, minlength=2)
    err_few = np.abs(few.trees[0].root.counts - truth).mean()
    err_many = np.mean([np.abs(t.root.counts - truth).mean() for t in many.trees])
    assert err_few < 5 < err_many  # noise of scale 1/ε against 50/ε per tree


@pytest.mark.parametrize(
    ("params", "message"),
    [({"n_estimators": 0}, "n_estimators must be a positive integer"), ({"epsilon": 0}, "epsilon must be a positive number")],
)
def test_bad_parameters(table, params, message):
    X, y = table
    with pytest.raises(PpdmError, match=message):
        DPRandomForestClassifier(**params).fit(X, y)


def test_predict_before_fit():
    with pytest.raises(NotFittedError):
        DPRandomForestClassifier().predict(pd.DataFrame({"a": [1]}))
