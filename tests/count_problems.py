"""Tiny count problems for the exact audit's property tests: a few groups, a dataset and rows it meets."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

from ppdm.exact.problem import CountProblem, CountRows


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
