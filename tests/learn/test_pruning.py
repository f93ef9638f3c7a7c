import pytest

from ppdm.errors import DataError
from ppdm.learn import ID3Classifier
from ppdm.learn.pruning import added_errors, error_based_prune


@pytest.mark.parametrize(
    "n, e, expected_total",
    [
        # Quinlan (1993), §4.2: U_25%(0, 6) = 0.206, U_25%(0, 9) = 0.143, U_25%(0, 1) = 0.750
        (6, 0, 6 * 0.206),
        (9, 0, 9 * 0.143),
        (1, 0, 0.750),
    ],
)
def test_pessimistic_error_matches_c45_book(n, e, expected_total):
    assert e + added_errors(n, e, 0.25) == pytest.approx(expected_total, abs=0.02)


def test_pessimistic_error_with_errors_uses_normal_approximation():
    # Book: U_25%(1, 16) = 0.157 by the exact binomial; C4.5's code approximates it (≈ 0.155).
    assert (1 + added_errors(16, 1, 0.25)) / 16 == pytest.approx(0.157, abs=0.003)
    # more errors, more pessimism; a smaller confidence level prunes more
    assert added_errors(16, 2, 0.25) > added_errors(16, 1, 0.25)
    assert added_errors(16, 1, 0.1) > added_errors(16, 1, 0.25)


def test_empty_leaf_adds_no_error():
    assert added_errors(0, 0, 0.25) == 0.0


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5])
def test_confidence_outside_the_open_unit_interval_is_refused(d2, confidence):
    tree = ID3Classifier().fit(d2[["Age", "Education"]], d2["Salary"]).tree_
    with pytest.raises(DataError, match="confidence"):
        error_based_prune(tree, confidence)
