"""A forest imported with class labels other than those it was fitted on: one line that says so."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

from ppdm.errors import ModelImportError
from ppdm.tree import forest_from_sklearn


def test_labels_the_forest_was_not_fitted_with_are_named():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 5, 200), "b": rng.normal(size=200)})
    y = pd.Series(np.where(X["a"] > 2, "yes", "no"), name="y")
    est = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(ModelImportError, match=r"hold 1 \(row 0\), not one of the classes the forest was fitted on \('no', 'yes'\)"):
        forest_from_sklearn(est, X, y=pd.Series((y == "yes").astype(int), name="y"))
    assert forest_from_sklearn(est, X, y=y).n_trees == 3
