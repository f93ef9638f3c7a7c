"""scikit-learn ``Pipeline`` / ``ColumnTransformer`` models read back onto the table's own
columns: one-hot (column == category), ordinal (category sets) and monotone scalers (thresholds
moved back). The truth is feasible: the real training rows, routed through the translated
splits, reach every node in the numbers (and classes) the model recorded, on Adult and Nursery."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    RobustScaler,
    StandardScaler,
)
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.data.datasets import load_adult, load_nursery
from ppdm.errors import ModelImportError
from ppdm.tree import Forest, Tree
from ppdm.tree.forest_check import verify_counts
from ppdm.tree.splits import ThresholdSplit


@pytest.fixture(scope="module")
def adult():
    frame, _ = load_adult("train")
    frame = frame.sample(1500, random_state=2).reset_index(drop=True)
    X = frame.drop(columns="income")
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    return frame, X, frame["income"], categorical, numeric


@pytest.fixture(scope="module")
def nursery():
    frame, _ = load_nursery()
    frame = frame.sample(1500, random_state=2).reset_index(drop=True)
    frame["class"] = frame["class"].cat.remove_unused_categories()
    return frame, frame.drop(columns="class"), frame["class"]


def _feasible(model: Tree | Forest, frame: pd.DataFrame) -> None:
    """The training rows reach every node of every tree in the numbers (and classes) the model says."""
    forest = model if isinstance(model, Forest) else Forest([model], "vote")
    labels = pd.Index(forest.classes, dtype=object).get_indexer(frame[forest.class_attribute].astype(object))
    assert verify_counts(forest, frame, labels) == forest.n_trees


SCALERS = [StandardScaler(), MinMaxScaler(), MaxAbsScaler(), RobustScaler()]


@pytest.mark.parametrize("scaler", SCALERS, ids=lambda s: type(s).__name__)
def test_a_forest_over_one_hot_and_scaled_adult_columns_is_read_back_exactly(adult, scaler):
    frame, X, y, categorical, numeric = adult
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), categorical), ("num", scaler, numeric)])
    pipe = Pipeline([("prep", prep), ("rf", RandomForestClassifier(5, max_depth=6, random_state=0))]).fit(X, y)
    model = ppdm.from_estimator(pipe, frame)
    np.testing.assert_array_equal(model.predict(frame), pipe.predict(X))
    _feasible(model, frame)
    thresholds = [(n.split.attribute, n.split.threshold) for t in model.trees for n in t.nodes if isinstance(n.split, ThresholdSplit)]
    assert thresholds
    for column, t in thresholds:  # on the table's scale: within (or just beside) the column's range
        low, high = X[column].min(), X[column].max()
        assert low - 1 <= t <= high, (column, t)


def test_a_tree_after_an_ordinal_encoder_and_passthrough_is_read_back_on_adult(adult):
    frame, X, y, categorical, numeric = adult
    prep = ColumnTransformer([("ord", OrdinalEncoder(), categorical)], remainder="passthrough")
    pipe = make_pipeline(prep, DecisionTreeClassifier(min_samples_leaf=5, random_state=0)).fit(X, y)
    model = ppdm.from_estimator(pipe, frame)
    assert isinstance(model, Tree) and set(model.split_attributes) & set(categorical)
    np.testing.assert_array_equal(model.predict(frame), pipe.predict(X))
    _feasible(model, frame)


def test_boosting_after_a_scaler_alone_is_read_back_on_adult(adult):
    frame, X, y, _, numeric = adult
    pipe = make_pipeline(StandardScaler(), HistGradientBoostingClassifier(max_iter=5, max_depth=3, random_state=0)).fit(X[numeric], y)
    model = ppdm.from_estimator(pipe, frame, class_attribute="income")
    np.testing.assert_array_equal(model.predict(frame), pipe.predict(X[numeric]))
    _feasible(model, frame)


@pytest.mark.parametrize("encoder", ["onehot", "ordinal"])
def test_a_forest_over_encoded_nursery_columns_is_read_back_exactly(nursery, encoder):
    frame, X, y = nursery
    step = OneHotEncoder() if encoder == "onehot" else OrdinalEncoder()
    pipe = Pipeline([("prep", ColumnTransformer([("enc", step, list(X.columns))])), ("rf", RandomForestClassifier(4, max_depth=5, random_state=0))])
    pipe.fit(X, y)
    model = ppdm.from_estimator(pipe, frame)
    np.testing.assert_array_equal(model.predict(frame), pipe.predict(X))
    _feasible(model, frame)


def test_a_step_that_cannot_be_read_back_is_named(adult):
    frame, X, y, _, numeric = adult
    poly = make_pipeline(PolynomialFeatures(2), DecisionTreeClassifier(max_depth=2)).fit(X[numeric], y)
    with pytest.raises(ModelImportError, match=r"pipeline step 'polynomialfeatures' \(PolynomialFeatures\) changes the values"):
        ppdm.from_estimator(poly, frame)
    late = Pipeline([("prep", ColumnTransformer([("pass", "passthrough", numeric)])), ("scale", StandardScaler()), ("tree", DecisionTreeClassifier(max_depth=2))])
    late.fit(X, y)
    with pytest.raises(ModelImportError, match=r"pipeline step 'scale' \(StandardScaler\) scales the output of an earlier step"):
        ppdm.from_estimator(late, frame)


def test_the_last_step_alone_says_where_its_feature_names_are(adult):
    frame, X, y, categorical, numeric = adult
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), categorical)], remainder="passthrough")
    pipe = make_pipeline(prep, DecisionTreeClassifier(max_depth=3, random_state=0)).fit(X, y)
    with pytest.raises(ModelImportError, match=r"pipeline\[:-1\]\.get_feature_names_out\(\)"):
        ppdm.from_estimator(pipe[-1], frame)
    names = list(pipe[:-1].get_feature_names_out())
    alone = ppdm.from_estimator(pipe[-1], frame, feature_names=names)
    np.testing.assert_array_equal(alone.predict(frame), pipe.predict(X))


def test_a_pipeline_saved_with_skops_is_read_by_load_model(adult, tmp_path):
    sio = pytest.importorskip("skops.io")
    frame, X, y, categorical, numeric = adult
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), categorical), ("num", StandardScaler(), numeric)])
    pipe = Pipeline([("prep", prep), ("rf", RandomForestClassifier(3, max_depth=4, random_state=0))]).fit(X, y)
    sio.dump(pipe, tmp_path / "pipe.skops")
    model = ppdm.load_model(tmp_path / "pipe.skops", frame)
    np.testing.assert_array_equal(model.predict(frame), pipe.predict(X))
    _feasible(model, frame)


def test_a_scaled_trees_thresholds_read_back_are_the_unscaled_trees(adult):
    """A tree's splits do not change under an increasing affine scaler: read back, its thresholds
    are the midpoints the same tree fitted on the raw columns has (not float noise around them)."""
    frame, X, y, _, numeric = adult
    columns = ["age", "hours-per-week", "capital-gain"]
    scaled = make_pipeline(StandardScaler(), DecisionTreeClassifier(max_depth=4, random_state=0)).fit(X[columns], y)
    raw = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[columns], y)
    read, plain = ppdm.from_estimator(scaled, frame), ppdm.from_estimator(raw, frame)
    assert [n.split for n in read.nodes] == [n.split for n in plain.nodes]


@pytest.mark.parametrize("encoder", ["onehot", "ordinal"])
def test_a_value_the_pipelines_encoder_never_saw_is_named(nursery, encoder):
    """The encoders were fitted on the training rows: a table holding a value they never saw is
    not the training table. It was read as a category of its own and audited (a new user's
    Nursery table with 'Convenient' for 'convenient' in one row)."""
    from ppdm.errors import DataError

    frame, X, y = nursery
    step = OneHotEncoder(handle_unknown="ignore") if encoder == "onehot" else OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    pipe = Pipeline([("prep", ColumnTransformer([("enc", step, list(X.columns))])), ("rf", RandomForestClassifier(4, max_depth=5, random_state=0))])
    pipe.fit(X, y)
    odd = frame.astype({"housing": object})
    odd.loc[10, "housing"] = "Convenient"
    with pytest.raises(DataError, match="column 'housing', row 10: 'Convenient' is not one of the categories the pipeline's encoder was fitted on"):
        ppdm.from_estimator(pipe, odd)


@pytest.mark.parametrize("grouping", [{"min_frequency": 300}, {"max_categories": 2}])
def test_infrequent_categories_grouped_by_the_encoder_are_read_back_exactly(nursery, grouping):
    """``column_infrequent_sklearn`` is ``column in {the encoder's infrequent categories}``: the
    tree and the forest predict as the pipeline, over every category of the table, and the
    training rows reach every node in the counts the model recorded."""
    frame, X, y = nursery
    for last, columns in ((DecisionTreeClassifier(min_samples_leaf=5, random_state=0), None), (RandomForestClassifier(4, max_depth=6, random_state=0), list(X.columns))):
        step = OneHotEncoder(**grouping) if columns is None else ColumnTransformer([("enc", OneHotEncoder(**grouping), columns)])
        pipe = make_pipeline(step, last).fit(X, y)
        encoder = step if columns is None else step.named_transformers_["enc"]
        grouped = [c for c, values in zip(X.columns, encoder.infrequent_categories_) if values is not None]
        assert grouped  # the case under test: some column's categories are grouped
        model = ppdm.from_estimator(pipe, frame)
        np.testing.assert_array_equal(model.predict(frame), pipe.predict(X))
        for column in grouped:
            assert set(model.attributes[column].categories) == set(X[column].dropna().unique())
        _feasible(model, frame)


def test_an_ordinal_encoder_grouping_infrequent_categories_is_named(nursery):
    frame, X, y = nursery
    pipe = make_pipeline(OrdinalEncoder(min_frequency=300), DecisionTreeClassifier(max_depth=4, random_state=0)).fit(X, y)
    with pytest.raises(ModelImportError, match=r"pipeline step 'ordinalencoder' \(OrdinalEncoder\) groups the infrequent categories of column '\w+'"):
        ppdm.from_estimator(pipe, frame)
