"""Fixtures of the defense tests."""

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def table():
    """2,000 rows: a categorical and a numeric input, a binary class that follows both."""
    rng = np.random.default_rng(0)
    n = 2000
    X = pd.DataFrame({"a": pd.Categorical(rng.choice(list("xyz"), n)), "b": rng.normal(size=n)})
    y = pd.Series(np.where((X["a"] == "x") | (X["b"] > 1), "yes", "no"), name="c")
    return X, y
