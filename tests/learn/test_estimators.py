"""Accuracy of the learners on the real datasets (the foundation issue's acceptance points)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from ppdm.errors import DataError, NotFittedError
from ppdm.learn import C45Classifier, ID3Classifier
from ppdm.tree import tree_to_dict


def _xy(frame, roles, columns=None):
    X = frame.drop(columns=[roles.class_attribute])
    return (X if columns is None else X[columns]), frame[roles.class_attribute]


def test_c45_on_adult_all_14_attributes(adult_train, adult_test):
    (train, roles), (test, _) = adult_train, adult_test
    X, y = _xy(train, roles)
    assert X.shape == (30162, 14)
    model = C45Classifier().fit(X, y)
    X_test, y_test = _xy(test, roles)
    assert model.score(X_test, y_test) >= 0.845
    assert model.tree_.n_leaves < model.unpruned_tree_.n_leaves


def test_id3_on_adult_categorical_attributes(adult_train, adult_test):
    (train, roles), (test, _) = adult_train, adult_test
    categorical = [c for c in train.columns if c != roles.class_attribute and train[c].dtype == "category"]
    assert len(categorical) == 8
    model = ID3Classifier().fit(*_xy(train, roles, categorical))
    assert model.score(*_xy(test, roles, categorical)) >= 0.80


def test_c45_on_nursery_80_20(nursery):
    frame, roles = nursery
    X, y = _xy(frame, roles)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    assert C45Classifier().fit(X_train, y_train).score(X_test, y_test) >= 0.95


def test_sklearn_estimator_contract(d1):
    X, y = d1.drop(columns="Salary"), d1["Salary"]
    model = ID3Classifier(max_depth=1)
    assert model.get_params()["max_depth"] == 1
    with pytest.raises(NotFittedError):
        model.predict(X)
    assert model.fit(X, y) is model
    assert list(model.classes_) == ["<=50K", ">50K"]
    assert model.tree_.depth == 1
    twin = clone(model).fit(X, y)
    assert tree_to_dict(twin.tree_) == tree_to_dict(model.tree_)
    assert model.predict_proba(X).shape == (11, 2)
    assert np.allclose(model.predict_proba(X).sum(axis=1), 1)


def test_bad_input_gets_clear_errors(adult_train):
    frame, roles = adult_train
    with pytest.raises(DataError, match="column 'age' is numeric"):
        ID3Classifier().fit(frame[["age", "sex"]], frame["income"])
    X = frame[["age", "sex"]].copy()
    X.loc[3, "age"] = np.nan
    with pytest.raises(DataError, match="column 'age' has 1 missing value"):
        C45Classifier().fit(X, frame["income"])
    with pytest.raises(DataError, match="one label per row"):
        C45Classifier().fit(frame[["age"]], frame["income"][:10])
    with pytest.raises(DataError, match="no rows"):
        C45Classifier().fit(frame[["age"]].iloc[:0], [])
    model = C45Classifier(max_depth=2).fit(frame[["age", "sex"]], frame["income"])
    with pytest.raises(DataError, match="'sex'"):
        model.predict(frame[["age"]])
