"""Integer bound propagation (ppdm.exact.propagate) and freed-groups datasets (ppdm.exact.freed)
against every consistent dataset of tiny count problems, enumerated."""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.exact.freed import FreedGroups
from ppdm.exact.problem import CountProblem, CountRows
from ppdm.exact.propagate import propagate

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@st.composite
def problems(draw):  # type: ignore[no-untyped-def]
    """A few groups (1–3 records, 2 variables each), a known dataset, and rows it meets: equalities
    with 0/1 or small whole coefficients and ≤ rows with some slack."""
    n_groups = draw(st.integers(2, 4))
    sizes = np.array(draw(st.lists(st.integers(1, 3), min_size=n_groups, max_size=n_groups)))
    var_group = np.repeat(np.arange(n_groups), 2)
    var_label = np.tile([0, 1], n_groups)
    x = np.zeros(2 * n_groups, dtype=np.int64)
    for g in range(n_groups):
        k = draw(st.integers(0, int(sizes[g])))
        x[2 * g], x[2 * g + 1] = k, sizes[g] - k
    problem = CountProblem(sizes, var_group, var_label, 2)
    n_rows = draw(st.integers(1, 4))
    A = np.array(draw(st.lists(st.lists(st.sampled_from([0, 0, 1, 1, 2, -1]), min_size=2 * n_groups, max_size=2 * n_groups), min_size=n_rows, max_size=n_rows)))
    le = np.array(draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)))
    b = A @ x + le * np.array(draw(st.lists(st.integers(0, 2), min_size=n_rows, max_size=n_rows)))
    if (~le).any():
        problem.add(CountRows("eq", sp.csr_matrix(A[~le]), b[~le], "eq"))
    if le.any():
        problem.add(CountRows("le", sp.csr_matrix(A[le]), b[le], "le"))
    return problem, x


def _every_dataset(problem: CountProblem) -> list[np.ndarray]:
    ranges = [range(int(s) + 1) for s in problem.sizes]
    out = []
    for ks in itertools.product(*ranges):
        x = np.ravel([[k, s - k] for k, s in zip(ks, problem.sizes)]).astype(np.int64)
        if problem.satisfied(x):
            out.append(x)
    return out


def _rows(problem: CountProblem) -> list:
    return [(r.A, r.b, r.sense, r.strict, r.row_names) for r in problem.rows]


@given(problems())
@SETTINGS
def test_propagated_bounds_hold_in_every_consistent_dataset(case) -> None:  # type: ignore[no-untyped-def]
    problem, x = case
    lo, hi = propagate(problem.var_group, problem.sizes, _rows(problem))
    datasets = _every_dataset(problem)
    assert any(np.array_equal(d, x) for d in datasets)
    for d in datasets:
        assert (lo <= d).all() and (d <= hi).all()


@given(problems())
@SETTINGS
def test_freed_datasets_are_consistent_and_move_the_target(case) -> None:  # type: ignore[no-untyped-def]
    problem, x = case
    freed = FreedGroups(problem.var_group, problem.sizes, _rows(problem), x)
    datasets = _every_dataset(problem)
    for g in range(problem.n_groups):
        if x[2 * g] == 0:
            continue
        target = np.array([2 * g])  # value 0 of group g, asked to drop
        y = freed.change(freed.alike(g, problem.n_groups), target, True, [np.array([2 * h]) for h in range(problem.n_groups) if h != g], None)
        possible = any(d[2 * g] < x[2 * g] for d in datasets)
        if y is None:
            assert not possible  # every group freed: the solve is the whole question
            continue
        assert problem.satisfied(y) and y[2 * g] < x[2 * g]
