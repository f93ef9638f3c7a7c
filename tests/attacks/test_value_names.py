"""A numeric sensitive column's intervals named by the data's values they hold."""

import numpy as np
import pandas as pd

from ppdm.attacks.core.value_names import data_value_names


def test_intervals_are_named_by_the_values_in_them():
    column = pd.Series([1, 2, 3, 1, 3, 2])
    codes = np.array([0, 1, 1, 0, 1, 1])
    assert data_value_names(("Education <= 1.5", "Education > 1.5"), codes, column) == {"Education <= 1.5": "1", "Education > 1.5": "2 or 3"}


def test_many_values_by_their_range_and_nothing_for_categories():
    ages = pd.Series([18, 25, 33, 47, 64, 70])
    assert data_value_names(("age <= 65.5", "age > 65.5"), np.array([0, 0, 0, 0, 0, 1]), ages) == {"age <= 65.5": "18 to 64", "age > 65.5": "70"}
    assert data_value_names(("a", "b"), np.array([0, 1]), pd.Series(["a", "b"])) == {}
    assert data_value_names(("1", "2"), np.array([0, 1]), pd.Series([1, 2])) == {}  # already named so


def test_an_interval_no_row_falls_in_says_so():
    """Two trees' thresholds 2 and 2.5 over whole numbers: the cell between them holds no value."""
    column = pd.Series([1, 2, 3, 4])
    names = ("Family <= 2", "2 < Family <= 2.5", "Family > 2.5")
    assert data_value_names(names, np.array([0, 0, 2, 2]), column) == {
        "Family <= 2": "1 or 2", "2 < Family <= 2.5": "2 < Family <= 2.5 (no audited row's value)", "Family > 2.5": "3 or 4",
    }
