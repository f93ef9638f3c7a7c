"""The exact audit's fast sound steps (``ppdm.exact.solve.sound_bounds``: propagation and the LP
step, no integer search) against every consistent dataset of tiny count problems, enumerated:
what they prove certain or impossible holds in every dataset, and the full search proves it too."""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.exact.problem import CountProblem, CountRows
from ppdm.exact.solve import exact_bounds, sound_bounds

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@st.composite
def problems(draw):  # type: ignore[no-untyped-def]
    """A few groups (1–3 records, two labels), a dataset and rows it meets (equalities with small
    whole coefficients, ≤ rows with some slack)."""
    n_groups = draw(st.integers(2, 4))
    sizes = np.array(draw(st.lists(st.integers(1, 3), min_size=n_groups, max_size=n_groups)))
    x = np.zeros(2 * n_groups, dtype=np.int64)
    for g in range(n_groups):
        k = draw(st.integers(0, int(sizes[g])))
        x[2 * g], x[2 * g + 1] = k, sizes[g] - k
    problem = CountProblem(sizes, np.repeat(np.arange(n_groups), 2), np.tile([0, 1], n_groups), 2)
    n_rows = draw(st.integers(1, 4))
    A = np.array(draw(st.lists(st.lists(st.sampled_from([0, 0, 1, 1, 2, -1]), min_size=2 * n_groups, max_size=2 * n_groups), min_size=n_rows, max_size=n_rows)))
    le = np.array(draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)))
    b = A @ x + le * np.array(draw(st.lists(st.integers(0, 2), min_size=n_rows, max_size=n_rows)))
    if (~le).any():
        problem.add(CountRows("eq", sp.csr_matrix(A[~le]), b[~le], "eq"))
    if le.any():
        problem.add(CountRows("le", sp.csr_matrix(A[le]), b[le], "le"))
    return problem, x


def _every_dataset(problem: CountProblem) -> np.ndarray:
    """Every consistent dataset's (groups, labels) counts, stacked."""
    out = []
    for ks in itertools.product(*[range(int(s) + 1) for s in problem.sizes]):
        x = np.ravel([[k, s - k] for k, s in zip(ks, problem.sizes)]).astype(np.int64)
        if problem.satisfied(x):
            out.append(problem.group_label(x))
    return np.array(out)


@SETTINGS
@given(problems(), st.booleans(), st.booleans())
def test_sound_steps_prove_only_what_every_dataset_shows(case, with_truth, with_interior) -> None:  # type: ignore[no-untyped-def]
    problem, x = case
    every = _every_dataset(problem)
    interior = every.mean(axis=0) / problem.sizes[:, None] if with_interior else None  # a point of the hull
    fast = sound_bounds(problem, x if with_truth else None, interior)
    assert (fast.min_lo <= every.min(axis=0)).all() and (fast.max_hi >= every.max(axis=0)).all()
    full = exact_bounds(problem, truth=x, method="search")
    assert not (fast.certain & ~full.certain).any()
    assert not (fast.impossible & ~full.impossible).any()


def test_sound_steps_prove_a_leaf_by_propagation() -> None:
    """Two groups of one record share a leaf holding one record of label 0; the second group can
    only take label 1 (its label-0 count is absent), so propagation proves the first holds 0."""
    problem = CountProblem(np.array([1, 1]), np.array([0, 0, 1]), np.array([0, 1, 1]), 2)
    problem.add(CountRows("class-count", sp.csr_matrix(np.array([[1, 0, 0], [0, 1, 1]])), np.array([1, 1]), "eq"))
    fast = sound_bounds(problem)
    assert fast.certain.tolist() == [[True, False], [False, True]]
