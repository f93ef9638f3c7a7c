"""The exact audit's fast sound steps (``ppdm.exact.solve.sound_bounds``: propagation and the LP
step, no integer search) against every consistent dataset of tiny count problems, enumerated:
what they prove certain or impossible holds in every dataset, and the full search proves it too."""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from count_problems import problems
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.exact.problem import CountProblem, CountRows
from ppdm.exact.solve import exact_bounds, sound_bounds

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


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
