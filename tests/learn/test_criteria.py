import numpy as np
import pytest

from ppdm.errors import PpdmError
from ppdm.learn.criteria import entropy, expected_impurity, get_criterion, gini, split_information


def test_entropy_and_gini_known_values():
    assert entropy(np.array([1, 1])) == pytest.approx(1.0)
    assert entropy(np.array([4, 0])) == 0.0
    assert entropy(np.array([0, 0])) == 0.0
    assert entropy(np.array([1, 3])) == pytest.approx(0.811278, abs=1e-6)
    assert gini(np.array([1, 1])) == pytest.approx(0.5)
    assert gini(np.array([0, 0])) == 0.0
    assert gini(np.array([2, 1, 1])) == pytest.approx(1 - (0.25 + 1 / 16 + 1 / 16))


def test_vectorised_over_candidates_matches_one_by_one():
    rng = np.random.default_rng(0)
    children = rng.integers(0, 9, size=(5, 4, 3)).astype(float)
    parent = children[0].sum(axis=0)
    for name in ("entropy", "gini", "gain_ratio"):
        crit = get_criterion(name)
        together = crit.gain(parent, children)
        one_by_one = [float(crit.gain(children[i].sum(0), children[i])) for i in range(5)]
        assert np.allclose(together[0], one_by_one[0])
        assert together.shape == (5,)


def test_information_gain_of_paper_000_d1_root():
    # Education splits D1 into Masters (4 <=50K, 2 >50K) and Doctorate (1, 4).
    children = np.array([[4, 2], [1, 4]], dtype=float)
    crit = get_criterion("entropy")
    expected = entropy(np.array([5, 6])) - (6 / 11 * entropy(np.array([4, 2])) + 5 / 11 * entropy(np.array([1, 4])))
    assert crit.gain(children.sum(0), children) == pytest.approx(expected)
    assert expected_impurity(children, entropy) == pytest.approx(6 / 11 * 0.918296 + 5 / 11 * 0.721928, abs=1e-5)
    ratio = get_criterion("gain_ratio")
    assert ratio.score(crit.gain(children.sum(0), children), split_information(children)) == pytest.approx(
        expected / entropy(np.array([6, 5]))
    )


def test_unknown_criterion_is_named():
    with pytest.raises(PpdmError, match="'bogus'"):
        get_criterion("bogus")
