"""How split values read in every output: a 32-bit threshold by its shortest spelling."""

from ppdm.tree.splits import ThresholdSplit


def test_a_float32_threshold_reads_as_written():
    split = ThresholdSplit("CCAvg", 2.950000047683716)  # scikit-learn's float32 of 2.95
    assert split.describe(0) == "CCAvg <= 2.95" and split.describe(1) == "CCAvg > 2.95"
    assert ThresholdSplit("x", 0.1).describe(0) == "x <= 0.1"  # a float64 value is left as Python spells it
    assert ThresholdSplit("age", 40.0).describe(1) == "age > 40"
