"""Thresholds are printed at the data's precision: the float32 arithmetic of the library that
learned them is taken off, and the printed rule routes every value of the data as the split does."""

import math
import re

import numpy as np

from ppdm.tree.boosting import below_float32
from ppdm.tree.splits import Interval, ThresholdSplit, float32_decimal


def test_float32_noise_is_taken_off():
    midpoint = (float(np.float32(2.8)) + float(np.float32(2.9))) / 2  # scikit-learn: 2.850000023841858
    assert ThresholdSplit("CCAvg", midpoint).describe(0) == "CCAvg <= 2.85"
    assert ThresholdSplit("CCAvg", midpoint).describe(1) == "CCAvg > 2.85"
    below = below_float32(89.0)  # XGBoost's Income < 89: 88.99999618530272
    assert ThresholdSplit("Income", below).describe(0) == "Income < 89"
    assert ThresholdSplit("Income", below).describe(1) == "Income >= 89"
    assert Interval(below_float32(2.0), midpoint).describe("x") == "2 <= x <= 2.85"


def test_a_decimal_stays_and_a_precise_threshold_keeps_8_digits():
    for t, text in ((1.5, "x <= 1.5"), (30.0, "x <= 30"), (1e-05, "x <= 1e-05"), (2.95, "x <= 2.95"), (0.123456789012, "x < 0.12345679")):
        assert ThresholdSplit("x", t).describe(0) == text
    assert float32_decimal(math.inf) == math.inf


def test_the_printed_rule_routes_the_data_as_the_split():
    """Data at one decimal, thresholds as scikit-learn (float32 midpoints) and XGBoost (x < c) store
    them: the text's comparison sends every data value to the split's branch."""
    values = np.round(np.arange(0.0, 12.0, 0.1), 1)
    ops = {"<=": np.less_equal, "<": np.less, ">": np.greater, ">=": np.greater_equal}
    for a, b in zip(values[:-1], values[1:]):
        for t in ((float(np.float32(a)) + float(np.float32(b))) / 2, below_float32(float(np.float32(b)))):
            split = ThresholdSplit("x", t)
            left = split.branch(values.astype(np.float32).astype(float)) == 0
            for branch, side in ((0, left), (1, ~left)):
                op, number = re.fullmatch(r"x (<=|<|>=|>) (\S+)", split.describe(branch)).groups()
                assert (ops[op](values, float(number)) == side).all(), (t, split.describe(branch))
