"""What θ protects: posterior confidence and local-differential-privacy ε."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ppdm.randomize import channel_matrix, ldp_epsilon, posterior, posterior_confidence, record_ldp_epsilon, record_posterior


@pytest.mark.parametrize("theta", [0.1, 0.3, 0.45, 0.55, 0.7, 0.9])
def test_binary_epsilon_is_log_of_the_odds(theta):
    assert ldp_epsilon(theta) == pytest.approx(abs(math.log(theta / (1 - theta))))
    assert ldp_epsilon(theta) == pytest.approx(ldp_epsilon(1 - theta))  # θ and 1 − θ protect equally


def test_k_ary_epsilon_and_its_extremes():
    assert ldp_epsilon(0.7, k=4) == pytest.approx(math.log(0.7 * 3 / 0.3))
    assert ldp_epsilon(0.25, k=4) == 0.0  # uniform reports: nothing learnt, and not invertible
    assert ldp_epsilon(1.0) == math.inf and ldp_epsilon(0.0) == math.inf
    assert np.allclose(channel_matrix(0.7, 3).sum(axis=0), 1.0)


def test_posterior_confidence():
    assert posterior_confidence(0.8) == pytest.approx(0.8)  # uniform prior
    assert posterior_confidence(0.2) == pytest.approx(0.8)
    assert posterior_confidence(0.5) == pytest.approx(0.5)
    assert posterior_confidence(1.0) == 1.0
    # a skewed prior: after seeing "yes" the adversary believes yes with θπ / (θπ + (1 − θ)(1 − π))
    post = posterior(0.7, prior=[0.9, 0.1])
    assert post[1, 1] == pytest.approx(0.7 * 0.1 / (0.7 * 0.1 + 0.3 * 0.9))
    assert posterior_confidence(0.7, prior=[0.9, 0.1]) >= 0.9


def test_record_level_privacy():
    assert record_ldp_epsilon(0.7, [2, 2, 2], scheme="attribute") == pytest.approx(3 * math.log(0.7 / 0.3))
    assert record_ldp_epsilon(0.7, [2], scheme="record") == pytest.approx(math.log(0.7 / 0.3))
    assert record_ldp_epsilon(0.7, [2, 2], scheme="record") == math.inf
    assert record_posterior(0.7, 0.01, 0.01) == pytest.approx(0.7)
    assert record_posterior(0.7, 0.001, 0.1) < 0.1
