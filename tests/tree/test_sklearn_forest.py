"""scikit-learn forests: bootstrap multiplicities as scikit-learn redraws them, counts that are
row counts, first-tree class counts of gradient boosting, and clear refusals."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from threadpoolctl import threadpool_limits

from ppdm.errors import ModelImportError
from ppdm.tree import forest_from_sklearn
from ppdm.tree.sklearn_forest import bootstrap_multiplicities


@pytest.fixture(scope="module")
def adult(adult_split):
    """A 6,000-row sample of Adult's training rows: enough for every case, fast to fit."""
    rows = np.random.default_rng(5).choice(len(adult_split.X), 6000, replace=False)
    X = adult_split.X.iloc[rows].reset_index(drop=True)
    D = adult_split.D.iloc[rows].reset_index(drop=True)
    y = adult_split.y.iloc[rows].reset_index(drop=True)
    return X, D, y


@pytest.mark.parametrize("max_samples", [None, 0.3, 2500])
def test_multiplicities_reproduce_every_nodes_weighted_count(adult, max_samples):
    # scikit-learn's own routing and its per-node weighted counts are the oracle: the rows drawn
    # for a tree, weighted by their multiplicities, must give every node's weighted count
    X, D, y = adult
    est = RandomForestClassifier(5, max_depth=6, max_samples=max_samples, random_state=3).fit(D, y)
    for est_tree, m in zip(est.estimators_, bootstrap_multiplicities(est), strict=True):
        sk = est_tree.tree_
        path = est_tree.decision_path(D.to_numpy(dtype=np.float32))
        assert np.allclose(path.T @ m, sk.weighted_n_node_samples)
        assert np.array_equal(path.T @ (m > 0), sk.n_node_samples)
    assert m.sum() == {None: len(X), 0.3: 1800, 2500: 2500}[max_samples]


def test_class_weights_are_refused_unless_they_only_steer_the_draw(adult, claims_hold):
    X, D, y = adult
    # scikit-learn 1.9 draws the bootstrap with the class weights as probabilities: counts stay row counts
    est = RandomForestClassifier(4, max_depth=5, class_weight="balanced", random_state=0).fit(D, y)
    forest = forest_from_sklearn(est, X, y=y)
    assert claims_hold(forest, X, y.cat.codes.to_numpy()) == (4, 4)
    for weights in ("balanced_subsample", "balanced"):
        est = RandomForestClassifier(3, max_depth=3, class_weight=weights, bootstrap=weights == "balanced_subsample", random_state=0)
        with pytest.raises(ModelImportError, match=r"^tree 0: .* its rows were weighted \(class_weight or sample_weight\)"):
            forest_from_sklearn(est.fit(D, y), X, y=y)


def test_the_check_names_the_split_that_routes_rows_elsewhere(adult):
    X, D, y = adult
    est = RandomForestClassifier(3, max_depth=4, random_state=0).fit(D, y)
    shuffled = X.sample(frac=1.0, random_state=0).reset_index(drop=True)  # not the fitted order
    with pytest.raises(ModelImportError, match=r"^tree 0, column '[^']+' \(split of node \d+\): the model records"):
        forest_from_sklearn(est, shuffled, y=y)
    forest_from_sklearn(est, shuffled, y=y, verify=False)


def test_gradient_boosting_first_tree_reveals_its_class_counts(adult):
    # value = Σ(y − p0) / Σ p0(1 − p0) per leaf, p0 the prior: n1 = n (p0 + value p0 (1 − p0))
    X, D, y = adult
    est = GradientBoostingClassifier(n_estimators=3, max_depth=3, random_state=0).fit(D, y)
    forest = forest_from_sklearn(est, X, y=y)
    first = forest.trees[0]
    leaves = est.estimators_[0, 0].apply(D.to_numpy(dtype=np.float32))
    positives = np.bincount(leaves, weights=(y == ">50K").to_numpy(dtype=float), minlength=first.n_nodes)
    for node in first.leaves():
        assert node.counts[1] == positives[node.id]
    assert forest.known[0] >= {"class-counts", "sample-counts", "leaf-values"}
    assert "class-counts" not in forest.known[1]
    assert forest.multiplicities[0] is not None and (forest.multiplicities[0] == 1).all()


def test_subsampled_boosting_counts_in_bag_rows_with_unknown_multiplicities(adult):
    X, D, y = adult
    est = GradientBoostingClassifier(n_estimators=3, max_depth=3, subsample=0.5, random_state=0).fit(D, y)
    forest = forest_from_sklearn(est, X, y=y)
    assert forest.multiplicities == [None] * 3
    first = forest.trees[0]
    assert first.root.n_samples == 3000 and first.root.counts.sum() == 3000  # in-bag rows, whole class counts
    with threadpool_limits(1):
        hist = HistGradientBoostingClassifier(max_iter=3, early_stopping=True, validation_fraction=0.2, random_state=0)
        forest = forest_from_sklearn(hist.fit(D, y), X, y=y)
    assert forest.multiplicities == [None] * forest.n_trees
    assert forest.trees[0].root.n_samples == 4800


def test_unsupported_models_are_refused_with_their_reason(adult):
    X, D, y = adult
    with pytest.raises(ModelImportError, match="RandomForestRegressor: expected a fitted RandomForestClassifier"):
        forest_from_sklearn(RandomForestRegressor(2).fit(D, (y == ">50K").astype(float)), X)
    with pytest.raises(ModelImportError, match="is not fitted"):
        forest_from_sklearn(RandomForestClassifier(), X)
    with pytest.raises(ModelImportError, match="loss='exponential': only the log-loss"):
        forest_from_sklearn(GradientBoostingClassifier(n_estimators=2, loss="exponential").fit(D, y), X, y=y)
    native = X[["age", "sex"]]
    with threadpool_limits(1):
        hist = HistGradientBoostingClassifier(max_iter=2, categorical_features="from_dtype").fit(native, y)
    with pytest.raises(ModelImportError, match="categorical features: encode them"):
        forest_from_sklearn(hist, X, y=y)


@pytest.mark.parametrize("bootstrap", [False, True])
def test_missing_numeric_values_go_where_scikit_learn_sends_them(tmp_path, bootstrap):
    # scikit-learn >= 1.3 learns per node where NaN goes (and splits NaN from all other values
    # with threshold +inf); the import must follow it, pass its own count check and save as JSON
    import pandas as pd

    from ppdm.tree import load_forest, save_forest

    r = np.random.default_rng(5)
    X = pd.DataFrame({"a": r.choice(["x", "y", "z"], 300), "num": r.normal(size=300).round(1)})
    X.loc[r.choice(300, 40, replace=False), "num"] = np.nan
    y = pd.Series(np.where(X["num"].isna() ^ (r.random(300) < 0.2), "yes", "no"), name="target")
    D = pd.get_dummies(X).astype(float)
    est = RandomForestClassifier(3, max_depth=3, bootstrap=bootstrap, random_state=0).fit(D, y)
    forest = forest_from_sklearn(est, X, y=y, verify=True)
    assert (forest.predict(X) == est.predict(D)).all()
    save_forest(forest, tmp_path / "forest.json")
    assert (load_forest(tmp_path / "forest.json").predict(X) == est.predict(D)).all()


def test_values_float32_rounds_onto_a_threshold_go_where_scikit_learn_sends_them():
    # scikit-learn compares float32 copies: 2.1 rounds down onto an extra tree's threshold
    # 2.0999999046 and goes left, although 2.1 > 2.0999999046 in float64
    import pandas as pd
    from sklearn.ensemble import ExtraTreesClassifier

    r = np.random.default_rng(5)
    X = pd.DataFrame({"a": r.choice(["x", "y", "z"], 400), "num": r.normal(size=400).round(1)})
    X.loc[r.choice(400, 40, replace=False), "num"] = np.nan
    y = pd.Series(np.where(X["num"].isna() ^ (r.random(400) < 0.2), "yes", "no"), name="target")
    y[r.random(400) < 0.3] = "maybe"
    D = pd.get_dummies(X).astype(float)
    est = ExtraTreesClassifier(4, max_depth=4, random_state=0).fit(D, y)
    assert np.isclose(est.estimators_[1].tree_.threshold[24], 2.1) and float(np.float32(2.1)) < 2.1
    forest = forest_from_sklearn(est, X, y=y, verify=True)
    assert (forest.predict(X) == est.predict(D)).all()
