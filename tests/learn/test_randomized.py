"""RR-ID3 (paper 001 §4.2): ID3 on counts estimated from randomized-response data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from ppdm.data.datasets import load_adult
from ppdm.errors import DataError, NotIdentifiableError, PpdmError
from ppdm.learn import EstimatedCounts, ExactCounts, ID3Classifier, RandomizedResponseTreeClassifier
from ppdm.learn.encoding import encode_table
from ppdm.learn.randomized import PathState
from ppdm.randomize import MedianBinarizer, complement, disguise
from ppdm.tree.splits import CategoricalSplit

CATEGORICAL = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]


@pytest.fixture(scope="module")
def adult_binary() -> pd.DataFrame:
    """Paper 001 §5.1: the first 10,000 Adult records, every attribute binarized at the median."""
    train, _ = load_adult("train")
    train = train.iloc[:10_000].reset_index(drop=True)
    return MedianBinarizer().fit_transform(train)


def _same_tree(a, b) -> None:
    assert a.n_nodes == b.n_nodes
    for x, y in zip(a.nodes, b.nodes):
        assert (x.parent, x.label, x.children, x.split) == (y.parent, y.label, y.children, y.split)
        assert np.array_equal(x.counts, y.counts)


def _xy(df: pd.DataFrame):
    return df.drop(columns="income"), df["income"]


def test_theta_one_and_zero_build_exactly_plain_id3s_tree_on_adult(adult_binary):
    X, y = _xy(adult_binary)
    plain = ID3Classifier().fit(X, y).tree_
    at_one = RandomizedResponseTreeClassifier(theta=1.0).fit(*_xy(disguise(adult_binary, 1.0, random_state=0))).tree_
    flipped = disguise(adult_binary, 0.0, random_state=0)
    assert flipped.equals(complement(adult_binary))
    at_zero = RandomizedResponseTreeClassifier(theta=0.0).fit(*_xy(flipped)).tree_
    assert plain.n_nodes > 1000
    _same_tree(plain, at_one)
    _same_tree(plain, at_zero)


def test_theta_one_builds_id3s_tree_with_multi_valued_attributes():
    train, _ = load_adult("train")
    df = train.iloc[:3000][CATEGORICAL + ["income"]]
    X, y = _xy(df)
    plain = ID3Classifier(max_depth=3).fit(X, y).tree_
    rr = RandomizedResponseTreeClassifier(theta=1.0, max_depth=3).fit(X, y).tree_
    _same_tree(plain, rr)


def test_theta_one_half_is_refused(adult_binary):
    with pytest.raises(NotIdentifiableError, match="0.5"):
        RandomizedResponseTreeClassifier(theta=0.5).fit(*_xy(adult_binary.iloc[:500]))
    assert issubclass(NotIdentifiableError, PpdmError)


def _node_path(source: EstimatedCounts, table, branches: list[tuple[int, int]]):
    state = source.root()
    for attr_index, value in branches:
        attr = table.attributes[attr_index]
        split = CategoricalSplit(attr.name, tuple((c,) for c in attr.categories))
        state = source.children(state, split)[value]
    return state


def test_complement_and_indicator_paths_count_the_same(adult_binary):
    g = disguise(adult_binary.iloc[:4000], 0.7, random_state=3)
    table = encode_table(*_xy(g))
    fast, general = EstimatedCounts(table, 0.7), EstimatedCounts(table, 0.7)
    general._complement = False
    assert fast._complement
    names = [a.name for a in table.attributes]
    for path in ([], [(0, 1)], [(0, 1), (5, 0), (9, 1)]):
        s_fast, s_gen = _node_path(fast, table, path), _node_path(general, table, path)
        assert np.allclose(fast.class_counts(s_fast), general.class_counts(s_gen))
        assert np.allclose(fast.categorical_tables(s_fast, names), general.categorical_tables(s_gen, names))


def test_estimated_counts_are_unbiased_for_multi_valued_attributes():
    train, _ = load_adult("train")
    df = train.iloc[:5000][["race", "relationship", "sex", "income"]]
    exact_table = encode_table(*_xy(df))
    exact = ExactCounts(exact_table)
    node = exact.children(exact.root(), CategoricalSplit("sex", (("Female",), ("Male",))))[1]
    truth = exact.categorical_tables(node, ["race", "relationship"])
    estimates = []
    for r in range(30):
        g = disguise(df, 0.8, random_state=r)
        source = EstimatedCounts(encode_table(*_xy(g)), 0.8)
        assert not source._complement
        state = source.children(source.root(), CategoricalSplit("sex", (("Female",), ("Male",))))[1]
        estimates.append(source.categorical_tables(state, ["race", "relationship"]))
    mean = np.mean(estimates, axis=0)
    se = np.std(estimates, axis=0, ddof=1) / np.sqrt(len(estimates))
    big = truth > 100  # clipping biases nearly-empty cells upwards; large cells are unbiased
    assert (np.abs(mean - truth)[big] < 4 * se[big] + 1).all()


def test_rr_tree_is_close_to_id3_at_high_theta_and_uses_estimated_counts(adult_binary):
    X, y = _xy(adult_binary)
    train_x, train_y = X.iloc[:7000], y.iloc[:7000]
    test_x, test_y = X.iloc[7000:], y.iloc[7000:]
    plain = ID3Classifier(min_samples_split=50).fit(train_x, train_y)
    g = disguise(adult_binary.iloc[:7000], 0.8, random_state=1)
    rr = RandomizedResponseTreeClassifier(theta=0.8, min_samples_split=50).fit(*_xy(g))
    assert rr.tree_.root.split.attribute == plain.tree_.root.split.attribute
    assert rr.score(test_x, test_y) > plain.score(test_x, test_y) - 0.02
    assert rr.noise_factor_ == pytest.approx(1 / 0.6**2)
    assert not np.array_equal(rr.tree_.root.counts, plain.tree_.root.counts)
    assert rr.tree_.algorithm == "rr-id3"


def test_scikit_learn_conventions(adult_binary):
    est = RandomizedResponseTreeClassifier(theta=0.7, max_depth=2)
    assert est.get_params()["theta"] == 0.7
    again = clone(est)
    assert again.get_params() == est.get_params()
    X, y = _xy(disguise(adult_binary.iloc[:2000], 0.7, random_state=0))
    assert est.fit(X, y) is est
    assert set(est.predict(X.iloc[:5])) <= set(est.classes_)
    assert est.predict_proba(X.iloc[:5]).shape == (5, 2)
    assert not hasattr(again, "tree_")


def test_bad_input_is_reported(adult_binary):
    X, y = _xy(adult_binary.iloc[:200])
    with pytest.raises(DataError, match="'age2'.*numeric"):
        RandomizedResponseTreeClassifier(theta=0.7).fit(X.assign(age2=np.arange(200.0)), y)
    with pytest.raises(DataError, match="'nope'"):
        RandomizedResponseTreeClassifier(theta=0.7, disguised=["nope"]).fit(X, y)
    with pytest.raises(PpdmError, match="theta"):
        RandomizedResponseTreeClassifier(theta=1.2).fit(X, y)
    with pytest.raises(PpdmError, match="scheme"):
        RandomizedResponseTreeClassifier(theta=0.7, scheme="other").fit(X, y)


def test_child_counts_read_off_the_parent_tables_equal_counting_again(adult_binary):
    g = disguise(adult_binary.iloc[:3000], 0.6, random_state=1)
    table = encode_table(*_xy(g))
    source = EstimatedCounts(table, 0.6)
    names = [a.name for a in table.attributes]
    root = source.root()
    source.categorical_tables(root, names)
    attr = table.attributes[3]
    split = CategoricalSplit(attr.name, tuple((c,) for c in attr.categories))
    for child in source.children(root, split):
        assert child.counts is not None
        recounted = PathState(child.path, child.rows, child.comp)
        assert np.array_equal(source.class_counts(child), source.class_counts(recounted))
