"""Accuracy of a tree from disguised test data (paper 001 §4.3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.errors import DataError
from ppdm.learn import ID3Classifier
from ppdm.randomize import complement, disguise, estimate_accuracy


def _binary_data(n: int, seed: int) -> pd.DataFrame:
    """A class that depends on three binary attributes, with noise."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, size=(n, 4))
    logit = 1.5 * x[:, 0] - 2.0 * x[:, 1] * x[:, 2] + 0.5 * x[:, 3] - 0.3
    y = rng.random(n) < 1 / (1 + np.exp(-logit))
    cols = {f"x{i}": pd.Categorical.from_codes(x[:, i], categories=["f", "t"]) for i in range(4)}
    return pd.DataFrame({**cols, "y": pd.Categorical.from_codes(y.astype(int), categories=["neg", "pos"])})


def _multi_data(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = rng.integers(0, 4, n)
    y = (rng.random(n) < np.where(a == 2, 0.8, 0.25) + 0.05 * b).astype(int)
    return pd.DataFrame(
        {
            "a": pd.Categorical.from_codes(a, categories=["r", "g", "b"]),
            "b": pd.Categorical.from_codes(b, categories=list("wxyz")),
            "y": pd.Categorical.from_codes(y, categories=["neg", "pos"]),
        }
    )


def _tree(df: pd.DataFrame):
    return ID3Classifier(max_depth=3).fit(df.drop(columns="y"), df["y"]).tree_


@pytest.mark.parametrize("theta", [0.7, 0.8, 0.25])
def test_estimate_is_unbiased_on_synthetic_binary_data(theta):
    tree = _tree(_binary_data(4000, seed=0))
    test = _binary_data(2000, seed=1)
    true = float(np.mean(tree.predict(test) == test["y"].to_numpy(dtype=object)))
    estimates = np.array([estimate_accuracy(tree, disguise(test, theta, random_state=r), theta) for r in range(200)])
    se = estimates.std(ddof=1) / np.sqrt(len(estimates))
    assert abs(estimates.mean() - true) < 4 * se + 1e-3
    # the naive accuracy on disguised data is biased towards 1/2 (or beyond, for θ < 1/2)
    naive = np.mean([np.mean(tree.predict(g) == g["y"].to_numpy(dtype=object)) for g in (disguise(test, theta, random_state=r) for r in range(20))])
    assert abs(naive - true) > abs(estimates.mean() - true) + 0.01


def test_complement_and_leaf_estimators_agree_on_binary_data():
    tree = _tree(_binary_data(3000, seed=2))
    g = disguise(_binary_data(1500, seed=3), 0.7, random_state=4)
    assert estimate_accuracy(tree, g, 0.7, method="complement") == pytest.approx(estimate_accuracy(tree, g, 0.7, method="leaves"), abs=1e-12)


def test_theta_one_and_zero_give_the_exact_accuracy():
    tree = _tree(_binary_data(3000, seed=2))
    test = _binary_data(1500, seed=3)
    true = float(np.mean(tree.predict(test) == test["y"].to_numpy(dtype=object)))
    assert estimate_accuracy(tree, test, 1.0) == pytest.approx(true)
    assert estimate_accuracy(tree, complement(test), 0.0) == pytest.approx(true)


def test_undisguised_class_is_left_alone():
    tree = _tree(_binary_data(3000, seed=5))
    test = _binary_data(3000, seed=6)
    true = float(np.mean(tree.predict(test) == test["y"].to_numpy(dtype=object)))
    attrs = ["x0", "x1", "x2", "x3"]
    est = np.mean([estimate_accuracy(tree, disguise(test, 0.8, columns=attrs, random_state=r), 0.8, columns=attrs) for r in range(100)])
    assert est == pytest.approx(true, abs=0.01)


def test_estimate_is_unbiased_on_multi_valued_data():
    tree = _tree(_multi_data(4000, seed=0))
    test = _multi_data(2000, seed=1)
    true = float(np.mean(tree.predict(test) == test["y"].to_numpy(dtype=object)))
    estimates = np.array([estimate_accuracy(tree, disguise(test, 0.75, random_state=r), 0.75) for r in range(100)])
    se = estimates.std(ddof=1) / np.sqrt(len(estimates))
    assert abs(estimates.mean() - true) < 4 * se + 1e-3
    with pytest.raises(DataError, match="complement"):
        estimate_accuracy(tree, test, 0.75, method="complement")


def test_errors_name_the_problem():
    tree = _tree(_binary_data(500, seed=0))
    with pytest.raises(DataError, match="'y'"):
        estimate_accuracy(tree, _binary_data(10, 1).drop(columns="y"), 0.7)
    with pytest.raises(DataError, match="method"):
        estimate_accuracy(tree, _binary_data(10, 1), 0.7, method="guess")
