"""tree_from_sklearn agrees with scikit-learn on every Adult test row, and says so when it cannot."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from ppdm.errors import DataError, ModelImportError, UnseenValueWarning
from ppdm.tree import CategoricalSplit, ThresholdSplit, load_tree, save_tree, tree_from_sklearn


@pytest.fixture(scope="module")
def adult(adult_train, adult_test):
    train, roles = adult_train
    test, _ = adult_test
    features = [c for c in train.columns if c != roles.class_attribute]
    return train[features], train[roles.class_attribute], test[features]


@pytest.mark.parametrize("max_depth", [3, 7, None])
def test_one_hot_import_agrees_on_every_adult_test_row(adult, max_depth, tmp_path):
    X, y, X_test = adult
    dummies = pd.get_dummies(X)
    dummies_test = pd.get_dummies(X_test).reindex(columns=dummies.columns, fill_value=False)
    est = DecisionTreeClassifier(max_depth=max_depth, random_state=0).fit(dummies, y)
    tree = tree_from_sklearn(est, X, y=y)
    assert np.array_equal(tree.predict(X_test), est.predict(dummies_test))
    assert np.array_equal(tree.apply(X_test), est.apply(dummies_test))
    assert tree.criterion == "gini" and tree.algorithm == "sklearn"
    # class counts are sklearn's, and the leaves add up to the training set
    assert sum(leaf.counts.sum() for leaf in tree.leaves()) == len(X)
    save_tree(tree, tmp_path / "t.json")
    assert np.array_equal(load_tree(tmp_path / "t.json").predict(X_test), est.predict(dummies_test))


def test_ordinal_import_agrees_on_every_adult_test_row(adult):
    X, y, X_test = adult
    cats = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    enc = OrdinalEncoder(categories=[list(X[c].cat.categories) for c in cats])
    encoded = X.copy()
    encoded[cats] = enc.fit_transform(X[cats])
    encoded_test = X_test.copy()
    encoded_test[cats] = enc.transform(X_test[cats])
    est = DecisionTreeClassifier(max_depth=8, criterion="entropy", random_state=0).fit(encoded, y)
    tree = tree_from_sklearn(est, X, y=y)
    assert np.array_equal(tree.predict(X_test), est.predict(encoded_test))
    assert tree.criterion == "entropy"
    kinds = {type(n.split) for n in tree.internal_nodes()}
    assert kinds == {CategoricalSplit, ThresholdSplit}


def test_untraceable_feature_is_named(adult):
    X, y, _ = adult
    est = DecisionTreeClassifier(max_depth=1).fit(pd.DataFrame({"mystery": X["age"]}), y)
    with pytest.raises(DataError, match="'mystery'"):
        tree_from_sklearn(est, X)
    with pytest.raises(DataError, match="not a fitted"):
        tree_from_sklearn(DecisionTreeClassifier(), X)


def test_missing_values_follow_scikit_learn():
    # Adult with its missing values kept: a missing category gives all-zero dummies, so
    # scikit-learn sends it to the "not this value" side of every one-hot split.
    from sklearn.model_selection import train_test_split

    from ppdm.data.datasets import load_adult

    train, roles = load_adult("train", drop_missing=False)
    test, _ = load_adult("test", drop_missing=False)
    frame = pd.concat([train, test], ignore_index=True)
    features = list(roles.quasi_identifiers)
    fit_rows, held_out = train_test_split(frame, test_size=0.2, random_state=8)
    dummies = pd.get_dummies(fit_rows[features])
    dummies_out = pd.get_dummies(held_out[features]).reindex(columns=dummies.columns, fill_value=False)
    est = DecisionTreeClassifier(max_depth=7, random_state=8).fit(dummies, fit_rows["income"])
    tree = tree_from_sklearn(est, fit_rows[features], class_attribute="income")
    assert held_out[features].isna().any(axis=1).sum() > 500
    assert np.array_equal(tree.predict(held_out[features]), est.predict(dummies_out))


def test_a_regression_tree_is_refused_with_a_clear_error(adult):
    X, y, _ = adult
    est = DecisionTreeRegressor(max_depth=2).fit(X[["age"]], (y == ">50K").astype(float))
    with pytest.raises(ModelImportError, match=r"^DecisionTreeRegressor predicts numbers, not classes: only decision tree classifiers"):
        tree_from_sklearn(est, X, class_attribute="income")


def test_ordinal_codes_in_an_order_of_ones_own_are_caught_on_the_training_rows(adult):
    # OrdinalEncoder with a custom category order: the import cannot see the order; given the
    # training rows it sees that they do not reach the nodes scikit-learn recorded.
    X, y, X_test = adult
    cats = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    order = {c: list(X[c].cat.categories)[::-1] for c in cats}
    enc = OrdinalEncoder(categories=[order[c] for c in cats])
    encoded, encoded_test = X.copy(), X_test.copy()
    encoded[cats] = enc.fit_transform(X[cats])
    encoded_test[cats] = enc.transform(X_test[cats])
    est = DecisionTreeClassifier(max_depth=8, random_state=0).fit(encoded, y)
    with pytest.raises(ModelImportError) as err:
        tree_from_sklearn(est, X, y=y)
    message = str(err.value)
    assert "\n" not in message
    column = message.split("'")[1]
    assert message.startswith(f"column {column!r} (split of node ") and column in cats
    assert f"pass ordinal_categories={{{column!r}: " in message
    # the check was right: imported without the order, the tree disagrees with scikit-learn
    unchecked = tree_from_sklearn(est, X, y=y, verify=False)
    assert (unchecked.predict(X) != est.predict(encoded)).any()
    tree = tree_from_sklearn(est, X, y=y, ordinal_categories=order)
    assert np.array_equal(tree.predict(X_test), est.predict(encoded_test))


def test_the_check_needs_the_training_rows(adult):
    X, y, X_test = adult
    dummies = pd.get_dummies(X)
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(dummies, y)
    tree_from_sklearn(est, X_test, class_attribute="income")  # other rows: imported, not checked
    with pytest.raises(ModelImportError, match=r"^the data are not the estimator's training rows \(15060 rows here, 30162 in training"):
        tree_from_sklearn(est, X_test, class_attribute="income", verify=True)
    with pytest.raises(ModelImportError, match="y holds 3 class values but the data have 30162 rows"):
        tree_from_sklearn(est, X, y=y[:3])


def test_the_class_attribute_is_inferred_or_asked_for():
    X = pd.DataFrame({"age": [20.0, 30.0, 40.0, 50.0], "zip": ["a", "b", "a", "b"]})
    y = pd.Series(["no", "no", "yes", "yes"], name="rich")
    est = DecisionTreeClassifier().fit(X[["age"]], y)
    assert tree_from_sklearn(est, X, y=y).class_attribute == "rich"
    assert tree_from_sklearn(est, X.assign(label=y.to_numpy())).class_attribute == "label"
    assert tree_from_sklearn(est, X, y=y, class_attribute="wealth").class_attribute == "wealth"
    with pytest.raises(ModelImportError, match=r"^pass class_attribute \(or y as a named Series\): the estimator's classes are \['no', 'yes'\] and no column"):
        tree_from_sklearn(est, X)
    with pytest.raises(ModelImportError, match=r"columns \['a', 'b'\] all hold them"):
        tree_from_sklearn(est, X.assign(a=y.to_numpy(), b=y.to_numpy()))


def test_a_value_no_dummy_column_names_is_named_in_the_routing_error():
    """A category the estimator never saw goes to every dummy's 'not this value' side; the error
    the counts give names it, its column and row (not only the split it upsets)."""
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"w": rng.choice(["a", "b", "c"], n), "x": rng.integers(0, 5, n), "v": rng.choice(["p", "q"], n)})
    y = pd.Series(np.where((df["w"] == "a") | (df["x"] > 2), "yes", "no"), name="y")
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(pd.get_dummies(df).astype(float), y)
    bad = df.copy()
    bad.loc[7, "w"] = "zzz"
    with pytest.raises(ModelImportError, match=r"column 'w' holds 'zzz' \(row 7\), which none of the model's one-hot inputs names"):
        with pytest.warns(UnseenValueWarning, match="'zzz'"):
            tree_from_sklearn(est, bad, y=y, verify=True)


def test_no_warning_when_the_encoding_dropped_each_column_s_first_category():
    rng = np.random.default_rng(1)
    n = 300
    df = pd.DataFrame({"w": rng.choice(["a", "b", "c"], n), "v": rng.choice(["p", "q"], n)})
    y = pd.Series(np.where(df["w"] == "a", "yes", "no"), name="y")
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(pd.get_dummies(df, drop_first=True).astype(float), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenValueWarning)
        tree_from_sklearn(est, df, y=y)
    # three rows of a category the training rows never held, beside the dropped baseline: they are named
    seen, labels = df[df["w"] != "c"].reset_index(drop=True), y[df["w"] != "c"].reset_index(drop=True)
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(pd.get_dummies(seen, drop_first=True).astype(float), labels)
    table = pd.concat([seen, df[df["w"] == "c"].head(3)], ignore_index=True)
    with pytest.warns(UnseenValueWarning, match=r"holds 'c' \(row \d+\).*\(3 such row\(s\)\)"):
        tree_from_sklearn(est, table, y=pd.concat([labels, y[df["w"] == "c"].head(3)], ignore_index=True), verify=False)


def test_the_routing_error_does_not_call_a_dropped_baseline_unseen():
    """Under drop_first each column's baseline category has no dummy: a routing error over rows
    that are not the training rows says so without claiming the baseline was never seen."""
    rng = np.random.default_rng(2)
    n = 300
    df = pd.DataFrame({"w": rng.choice(["a", "b", "c"], n), "v": rng.choice(["p", "q"], n)})
    y = pd.Series(np.where(df["w"] == "b", "yes", "no"), name="y")
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(pd.get_dummies(df, drop_first=True).astype(float), y)
    other = df.sample(frac=1.0, replace=True, random_state=3).reset_index(drop=True)
    with pytest.raises(ModelImportError) as caught:
        tree_from_sklearn(est, other, y=y, verify=True)
    assert "never saw" not in str(caught.value) and "column 'w'" in str(caught.value)


def test_a_numeric_code_one_hot_encoded_by_get_dummies_is_read_as_categories():
    """``pd.get_dummies(columns=["Family", "Education"])`` names ``Family_1`` ... on integer columns:
    those columns are read as categories, the training rows route as scikit-learn sent them, and a
    dummy for a value no row holds is named as such (not as a name of the wrong shape)."""
    from loan_table import loan_table

    table = loan_table(800, seed=3).drop(columns=["ID", "ZIP Code"])
    X = pd.get_dummies(table.drop(columns="Personal Loan"), columns=["Family", "Education"])
    est = DecisionTreeClassifier(min_samples_leaf=10, random_state=0).fit(X, table["Personal Loan"])
    tree = tree_from_sklearn(est, table, verify=True)
    assert tree.attributes["Family"].categories == (1, 2, 3, 4) and tree.attributes["Education"].categories == (1, 2, 3)
    assert tree.attributes["Income"].kind == "numeric"
    np.testing.assert_array_equal(tree.predict(table), est.predict(X))
    with pytest.raises(ModelImportError, match=r"feature 'Family_4' names the value '4' of column 'Family', which no row of the data holds"):
        tree_from_sklearn(est, table[table["Family"] != 4], verify=False)


@pytest.fixture(scope="module")
def nursery_rows():
    from ppdm.data.datasets import load_nursery

    frame, _ = load_nursery()
    return frame.sample(1_200, random_state=5).reset_index(drop=True).astype({"class": object})


def test_dummies_named_with_another_separator_are_traced(nursery_rows):
    features = [c for c in nursery_rows.columns if c != "class"]
    dummies = pd.get_dummies(nursery_rows[features], prefix_sep="=")
    est = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(dummies, nursery_rows["class"])
    tree = tree_from_sklearn(est, nursery_rows, verify=True)  # 'has_nurs=less_proper' is not 'has_nurs=less' + '_proper'
    np.testing.assert_array_equal(tree.predict(nursery_rows), est.predict(dummies))


def test_a_weighted_tree_is_refused_at_import(nursery_rows):
    features = [c for c in nursery_rows.columns if c != "class"]
    dummies = pd.get_dummies(nursery_rows[features])
    for fit in ({"class_weight": "balanced"}, {}):
        weights = None if fit else np.r_[2.0, np.ones(len(dummies) - 1)]
        est = DecisionTreeClassifier(min_samples_leaf=5, random_state=0, **fit).fit(dummies, nursery_rows["class"], sample_weight=weights)
        with pytest.raises(ModelImportError, match=r"fitted with sample_weight or class_weight \(node \d+ holds [\d,.]+ weighted records and [\d,]+ rows\)"):
            tree_from_sklearn(est, nursery_rows)


def test_a_missing_value_is_named_in_the_routing_error(nursery_rows):
    features = [c for c in nursery_rows.columns if c != "class"]
    est = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(pd.get_dummies(nursery_rows[features]), nursery_rows["class"])
    split = tree_from_sklearn(est, nursery_rows).root.split
    column, hot = split.attribute, split.groups[1 - split.default]  # type: ignore[union-attr]
    holed = nursery_rows.copy()
    holed.loc[holed.index[holed[column].isin(hot)][:3], column] = None  # rows the dummy's 1 sent the other way
    with pytest.raises(ModelImportError, match=rf"column '{column}' has 3 missing value\(s\), first at row \d+, which the model routes as holding no value"):
        tree_from_sklearn(est, holed)


def test_the_encoded_inputs_given_as_the_data_are_named(nursery_rows):
    features = [c for c in nursery_rows.columns if c != "class"]
    dummies = pd.get_dummies(nursery_rows[features])
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(dummies, nursery_rows["class"])
    with pytest.raises(ModelImportError, match=r"no column of the data holds them \(the data are the model's inputs alone: give the training table with its class column"):
        tree_from_sklearn(est, dummies)
