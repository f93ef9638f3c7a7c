"""Estimating true proportions from disguised data (paper 001 §4.2, equations 3, and beyond binary)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.errors import NotIdentifiableError, PpdmError
from ppdm.randomize import (
    apply_channel,
    clip_and_renormalise,
    disguise,
    estimate_conjunction,
    estimate_proportion,
    estimate_table,
    indicator_lie,
    invert,
    lie_matrix,
)


def test_equations_3_by_hand():
    # P(E) = 0.3 and P(Ē) = 0.1 at θ = 0.8 give P*(E) = 0.26 and P*(Ē) = 0.14
    assert estimate_proportion(0.26, 0.14, 0.8) == pytest.approx(0.3)
    assert estimate_proportion(0.14, 0.26, 0.8) == pytest.approx(0.1)
    assert estimate_proportion(0.1, 0.3, 0.0) == pytest.approx(0.3)  # θ = 0: everybody lied


def test_theta_one_half_is_not_identifiable_and_the_error_is_a_ppdm_error():
    with pytest.raises(NotIdentifiableError, match="0.5"):
        estimate_proportion(0.2, 0.2, 0.5)
    with pytest.raises(PpdmError):
        invert(np.ones((2, 2)), 0.5, [lie_matrix(2), lie_matrix(2)])
    # one three-valued attribute is not identifiable at θ = 1/3 (reports uniform), fine at 0.5
    with pytest.raises(NotIdentifiableError):
        invert(np.ones(3), 1 / 3, [lie_matrix(3)])
    assert np.allclose(invert(apply_channel(np.array([1.0, 2.0, 3.0]), 0.5, [lie_matrix(3)]), 0.5, [lie_matrix(3)]), [1, 2, 3])
    # record scheme: a combination of attributes can be singular below 1/2 (0.1 + 0.9·(−1/3)(−1/3)(−1) = 0)
    lies = [lie_matrix(4), lie_matrix(4), lie_matrix(2)]
    with pytest.raises(NotIdentifiableError, match="0.1"):
        invert(np.ones((4, 4, 2)), 0.1, lies)
    x = np.random.default_rng(0).random((4, 4, 2))
    assert np.allclose(invert(apply_channel(x, 0.1, lies, "attribute"), 0.1, lies, "attribute"), x)


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(2, 4), min_size=1, max_size=4),
    theta=st.sampled_from([0.0, 0.1, 0.3, 0.45, 0.55, 0.7, 0.9, 1.0]),
    scheme=st.sampled_from(["record", "attribute"]),
    seed=st.integers(0, 10_000),
    truthful=st.integers(0, 3),
)
def test_invert_undoes_the_channel_along_every_axis(sizes, theta, scheme, seed, truthful):
    x = np.random.default_rng(seed).random(sizes)
    lies = [None if i == truthful else lie_matrix(k) for i, k in enumerate(sizes)]
    try:
        back = invert(apply_channel(x, theta, lies, scheme), theta, lies, scheme)
    except NotIdentifiableError:
        return
    assert np.allclose(back, x, atol=1e-9)


def test_channel_matches_the_dense_kronecker_matrix_on_a_small_tensor():
    rng = np.random.default_rng(4)
    x = rng.random((3, 2, 4))
    lies = [lie_matrix(3), indicator_lie(5, 2), lie_matrix(4)]
    lied = lies[0]
    for lie in lies[1:]:
        lied = np.kron(lied, lie)
    dense = 0.7 * np.eye(24) + 0.3 * lied
    assert np.allclose(apply_channel(x, 0.7, lies).ravel(), dense @ x.ravel())
    assert np.allclose(invert(x, 0.7, lies).ravel(), np.linalg.solve(dense, x.ravel()))


def test_binary_record_inversion_is_exact_at_theta_zero_and_one():
    x = np.arange(8.0).reshape(2, 2, 2)
    lies = [lie_matrix(2)] * 3
    assert np.array_equal(invert(x, 1.0, lies), x)
    assert np.array_equal(invert(x, 0.0, lies), x[::-1, ::-1, ::-1])


def test_clip_and_renormalise():
    assert np.allclose(clip_and_renormalise(np.array([0.7, 0.5, -0.2]), 1.0), [0.7 / 1.2, 0.5 / 1.2, 0])
    assert np.array_equal(clip_and_renormalise(np.array([3.0, 5.0])), [3.0, 5.0])  # nothing to do
    assert np.array_equal(clip_and_renormalise(np.array([-3.0, 1.0])), [0.0, 0.0])  # size estimate < 0


def _synthetic(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Records from a known joint distribution over three attributes (4 × 3 × 2 cells)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(24)).reshape(4, 3, 2)
    cells = rng.choice(24, size=n, p=p.ravel())
    a, b, c = np.unravel_index(cells, (4, 3, 2))
    df = pd.DataFrame(
        {
            "a": pd.Categorical.from_codes(a, categories=list("pqrs")),
            "b": pd.Categorical.from_codes(b, categories=["lo", "mid", "hi"]),
            "c": pd.Categorical.from_codes(c, categories=["no", "yes"]),
        }
    )
    return df, p


def _estimator_sd(p: np.ndarray, theta: float, n: int, lies: list) -> np.ndarray:
    """Exact standard deviation of each cell of the linear estimator M⁻¹ p̂* (multinomial p̂*)."""
    dense = lies[0]
    for lie in lies[1:]:
        dense = np.kron(dense, lie)
    m = theta * np.eye(dense.shape[0]) + (1 - theta) * dense
    p_star = m @ p.ravel()
    cov_star = (np.diag(p_star) - np.outer(p_star, p_star)) / n
    inv = np.linalg.inv(m)
    return np.sqrt(np.diag(inv @ cov_star @ inv.T)).reshape(p.shape)


@pytest.mark.parametrize("theta", [0.75, 0.2])
def test_multi_valued_cells_are_recovered_within_sampling_error(theta):
    n = 200_000
    df, p = _synthetic(n, seed=7)
    disguised = disguise(df, theta, random_state=8)
    estimate = estimate_table(disguised, ["a", "b", "c"], theta, clip=False).to_numpy().reshape(4, 3, 2)
    sd = _estimator_sd(p, theta, n, [lie_matrix(4), lie_matrix(3), lie_matrix(2)])
    # records drawn from p and then disguised are a multinomial sample from p* = M p, so sd is
    # the estimator's exact sampling error; 5 sd per cell (24 cells): false alarm rate < 1e-4
    assert (np.abs(estimate - p) <= 5 * sd).all(), np.abs(estimate - p) / sd
    # the naive reading of the disguised data is far off
    naive = disguised.value_counts(["a", "b", "c"], normalize=True, sort=False).to_numpy().reshape(4, 3, 2)
    assert np.abs(naive - p).max() > 10 * sd.max()


def test_estimate_table_is_a_distribution_when_clipped_and_labelled_by_domain_values():
    df, _ = _synthetic(5000, seed=1)
    table = estimate_table(disguise(df, 0.6, random_state=2), ["a", "b"], 0.6)
    assert table.sum() == pytest.approx(1.0) and (table >= 0).all()
    assert table.index.names == ["a", "b"] and table.index[0] == ("p", "lo")


def test_a_conjunction_is_the_matching_marginal_of_the_table():
    df, _ = _synthetic(30_000, seed=3)
    disguised = disguise(df, 0.7, random_state=4)
    table = estimate_table(disguised, ["a", "b", "c"], 0.7, clip=False)
    for a, c in itertools.product("pqrs", ["no", "yes"]):
        expected = table.xs((a, c), level=("a", "c")).sum()
        assert estimate_conjunction(disguised, {"a": a, "c": c}, 0.7, clip=False) == pytest.approx(expected)
    both = table.xs("yes", level="c").loc[["p", "q"]].sum()
    assert estimate_conjunction(disguised, {"a": ["p", "q"], "c": "yes"}, 0.7, clip=False) == pytest.approx(both)


def test_binary_conjunction_is_equations_3_with_the_complement():
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({k: pd.Categorical.from_codes(rng.integers(0, 2, n), categories=[0, 1]) for k in ["A1", "A2", "A3"]})
    g = disguise(df, 0.8, random_state=1)
    e = (g["A1"] == 1) & (g["A2"] == 1) & (g["A3"] == 0)
    e_bar = (g["A1"] == 0) & (g["A2"] == 0) & (g["A3"] == 1)
    by_hand = (0.8 * e.mean() - 0.2 * e_bar.mean()) / 0.6
    assert estimate_conjunction(g, {"A1": 1, "A2": 1, "A3": 0}, 0.8, clip=False) == pytest.approx(by_hand)
    # an undisguised class enters both E and Ē unchanged (§4.2)
    g2 = disguise(df, 0.8, columns=["A1", "A2"], random_state=1)
    e = (g2["A1"] == 1) & (g2["A2"] == 0) & (g2["A3"] == 0)
    e_bar = (g2["A1"] == 0) & (g2["A2"] == 1) & (g2["A3"] == 0)
    by_hand = (0.8 * e.mean() - 0.2 * e_bar.mean()) / 0.6
    assert estimate_conjunction(g2, {"A1": 1, "A2": 0, "A3": 0}, 0.8, columns=["A1", "A2"], clip=False) == pytest.approx(by_hand)
