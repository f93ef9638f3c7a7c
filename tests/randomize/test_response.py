"""disguise (paper 001 §4.1), complement, and the §5.1 preprocessing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.errors import DataError, PpdmError
from ppdm.randomize import MedianBinarizer, QuantileBinner, complement, disguise


@pytest.fixture
def binary() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 4000
    return pd.DataFrame(
        {
            "a": pd.Categorical.from_codes(rng.integers(0, 2, n), categories=["no", "yes"]),
            "b": rng.integers(0, 2, n).astype(bool),
            "c": np.where(rng.random(n) < 0.3, "x", "y"),
            "cls": pd.Categorical.from_codes(rng.integers(0, 2, n), categories=["-", "+"]),
        }
    )


@pytest.fixture
def multi() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    n = 20000
    return pd.DataFrame(
        {
            "u": pd.Categorical.from_codes(rng.integers(0, 4, n), categories=list("pqrs")),
            "v": pd.Categorical.from_codes(rng.integers(0, 3, n), categories=["lo", "mid", "hi"]),
        }
    )


def test_theta_one_keeps_and_theta_zero_complements_every_binary_value(binary):
    pd.testing.assert_frame_equal(disguise(binary, 1.0, random_state=3), binary)
    flipped = disguise(binary, 0.0, random_state=3)
    pd.testing.assert_frame_equal(flipped, complement(binary))
    assert (flipped["a"].astype(str) != binary["a"].astype(str)).all()
    assert (flipped["b"] != binary["b"]).all()
    assert flipped.dtypes.equals(binary.dtypes)


def test_record_scheme_lies_on_every_attribute_at_once_with_rate_one_minus_theta(binary):
    out = disguise(binary, 0.7, random_state=5)
    changed = np.column_stack([(out[c].astype(str) != binary[c].astype(str)).to_numpy() for c in binary.columns])
    assert (changed.all(axis=1) | ~changed.any(axis=1)).all()  # all or nothing
    rate = changed[:, 0].mean()
    assert abs(rate - 0.3) < 4 * np.sqrt(0.3 * 0.7 / len(binary))


def test_attribute_scheme_draws_one_coin_per_attribute(binary):
    out = disguise(binary, 0.7, random_state=5, scheme="attribute")
    changed = np.column_stack([(out[c].astype(str) != binary[c].astype(str)).to_numpy() for c in binary.columns])
    assert not (changed.all(axis=1) | ~changed.any(axis=1)).all()
    assert np.allclose(changed.mean(axis=0), 0.3, atol=4 * np.sqrt(0.21 / len(binary)))


def test_columns_left_out_are_untouched_and_result_is_deterministic(binary):
    a = disguise(binary, 0.6, columns=["a", "b"], random_state=11)
    b = disguise(binary, 0.6, columns=["a", "b"], random_state=11)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_series_equal(a["cls"], binary["cls"])
    pd.testing.assert_series_equal(a["c"], binary["c"])
    assert not a.equals(disguise(binary, 0.6, columns=["a", "b"], random_state=12))


def test_a_multi_valued_liar_reports_another_value_uniformly(multi):
    out = disguise(multi, 0.0, random_state=2)
    for c in multi.columns:
        assert (out[c] != multi[c]).all()  # θ = 0: everyone lies, never the true value
    # from true value "p", the three other values are equally likely
    reported = out.loc[multi["u"] == "p", "u"].value_counts(normalize=True)
    assert reported["p"] == 0
    n = int((multi["u"] == "p").sum())
    assert np.allclose(reported[["q", "r", "s"]], 1 / 3, atol=4 * np.sqrt((1 / 3) * (2 / 3) / n))


def test_disguise_rejects_bad_input_naming_the_culprit(binary):
    with pytest.raises(PpdmError, match="theta"):
        disguise(binary, 1.5)
    with pytest.raises(DataError, match="'zz'"):
        disguise(binary, 0.7, columns=["zz"])
    with pytest.raises(DataError, match="'f'.*binarize"):
        disguise(binary.assign(f=np.linspace(0, 1, len(binary))), 0.7)
    with pytest.raises(DataError, match="'one'"):
        disguise(binary.assign(one="same"), 0.7)
    with pytest.raises(DataError, match="'c'.*row 3"):
        disguise(binary.assign(c=binary["c"].where(binary.index != 3)), 0.7)
    with pytest.raises(DataError, match="'.*' has 3 values"):
        complement(pd.DataFrame({"t": pd.Categorical(["a", "b", "c"])}))


def test_median_binarizer_learns_cuts_on_train_and_applies_them_to_test():
    train = pd.DataFrame(
        {
            "age": [20, 30, 40, 50, 60],
            "gain": [0, 0, 0, 0, 100],
            "edu": pd.Categorical(["a", "b", "b", "c", "d"], categories=list("abcd")),
            "sex": pd.Categorical(["F", "M", "M", "F", "M"]),
        }
    )
    b = MedianBinarizer().fit(train)
    out = b.transform(train)
    assert list(out["age"].astype(str)) == ["<=40", "<=40", "<=40", ">40", ">40"]
    assert list(out["gain"].astype(str)) == ["<=0", "<=0", "<=0", "<=0", ">0"]
    assert list(out["edu"].cat.categories) == ["a..b", "c..d"]  # cumulative shares .2 .6 .8: cut after "b"
    pd.testing.assert_series_equal(out["sex"], train["sex"])  # already binary
    test = pd.DataFrame({"age": [10, 99], "gain": [5, 0], "edu": ["d", "a"], "sex": ["F", "M"]})
    assert list(b.transform(test)["age"].astype(str)) == ["<=40", ">40"]
    assert list(b.transform(test)["edu"].astype(str)) == ["c..d", "a..b"]
    # a median equal to the maximum still gives two non-empty sides
    z = MedianBinarizer().fit_transform(pd.DataFrame({"z": [0, 1, 1, 1]}))["z"].astype(str)
    assert list(z) == ["<1", ">=1", ">=1", ">=1"]


def test_quantile_binner_makes_categorical_bins():
    df = pd.DataFrame({"x": np.arange(100.0)})
    out = QuantileBinner(n_bins=4).fit_transform(df)
    assert out["x"].cat.categories.size == 4
    assert out["x"].value_counts().min() >= 24
