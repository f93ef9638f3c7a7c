"""One cell per group: a bootstrap forest with the sensitive attribute among its inputs.

Each record's multiplicity vector makes its group the only one to reach its joint leaves (nearly
always: a cell two groups reach is copied into each), so the forest solver joins the group's cells
into one (:mod:`ppdm.maxent.solvers.group_cells`).
The problem is the same: the general driver, on the cells as they were, must give the same
estimate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

from ppdm.data.datasets import load_adult
from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.solvers.factored import solve_factored
from ppdm.maxent.solvers.factored_dual import FactoredDual
from ppdm.maxent.solvers.factored_presolve import reduce_factored
from ppdm.maxent.solvers.forest_solve import ForestSolveOptions, solve_forest
from ppdm.maxent.solvers.group_cells import by_group, copies, exclusive_cells, joined_reference
from ppdm.tree import forest_from_sklearn

COLUMNS = ["age", "education-num", "hours-per-week", "workclass", "race", "sex", "relationship"]


@pytest.fixture(scope="module")
def bootstrap_problem():
    """Eight bootstrap trees of depth 6 on 400 Adult rows, ``relationship`` (six values) sensitive,
    every other input and the class known (the insider)."""
    frame, _ = load_adult("train")
    df = frame[[*COLUMNS, "income"]].sample(400, random_state=3).reset_index(drop=True)
    X = df[COLUMNS]
    est = RandomForestClassifier(8, max_depth=6, random_state=3, n_jobs=1).fit(pd.get_dummies(X).astype(float), df["income"])
    known = [c for c in [*COLUMNS, "income"] if c != "relationship"]
    forest = forest_from_sklearn(est, X, y=df["income"])
    return forest_type_problem(forest, df, known, "relationship", Knowledge(sa=True))


def test_every_cell_is_one_group_s_and_joining_them_keeps_the_rows(bootstrap_problem):
    problem, _ = bootstrap_problem
    red = reduce_factored(problem)
    assert (np.diff(red.access.indptr) > 1).any() and exclusive_cells(red)
    joined = by_group(red)
    assert (np.diff(joined.access.indptr) == 1).all()
    assert sorted(joined.types.tolist()) == sorted(red.types.tolist())
    # the same columns, reordered
    order = np.argsort(red.types)
    back = np.argsort(joined.types)
    assert abs(joined.A[:, back] - red.A[:, order]).max() == 0
    assert np.array_equal(joined.log_base[back], red.log_base[order])


def test_the_forest_solver_agrees_with_the_general_driver(bootstrap_problem):
    problem, types = bootstrap_problem
    forest = solve_forest(problem, feasible=types.truth())
    general = solve_factored(problem)
    assert forest.status == general.status == "optimal"
    assert np.abs(forest.marginal - general.marginal).max() < 1e-6
    assert abs(forest.entropy - general.entropy) < 1e-8 * max(1.0, abs(general.entropy))


def _shared(red):
    """``red`` with group 0 also reaching one of group 1's cells (a cell two groups reach)."""
    red.access = red.access.tolil()
    red.access[0, red.access.rows[1][0]] = 1
    red.access = red.access.tocsr()
    return red


def test_a_cell_two_groups_reach_is_copied_into_each_group_s_cell(bootstrap_problem):
    problem, _ = bootstrap_problem
    red = _shared(reduce_factored(problem))
    assert not exclusive_cells(red)
    cell = red.access.indices[red.access.indptr[1]]
    size = int(red.cell_start[cell + 1] - red.cell_start[cell])
    assert copies(red) == size
    joined = by_group(red)
    assert len(joined.types) == len(red.types) + size
    group0 = slice(joined.cell_start[0], joined.cell_start[1])
    assert set(red.types[red.cell_start[cell] : red.cell_start[cell + 1]]) <= set(joined.types[group0])


def test_a_shared_cell_s_copies_give_the_general_driver_s_estimate(bootstrap_problem):
    """The general dual on the shared cells and the joined problem with their copies are the same
    function: equal values and residuals at any multipliers, and the same optimum."""
    problem, types = bootstrap_problem
    red = _shared(reduce_factored(problem))
    joined = by_group(red)
    lam = np.random.default_rng(0).normal(size=len(red.b))
    a, b = FactoredDual(red).state(lam), FactoredDual(joined).state(lam)
    assert abs(a.value - b.value) < 1e-12 * max(1.0, abs(a.value))
    assert np.abs(a.residual - b.residual).max() < 1e-12
    reference = types.truth()[red.types] - red.pinned_types[red.types]
    carried = joined_reference(red, reference)
    assert carried is not None and np.abs(joined.A @ carried - (red.A @ reference)).max() < 1e-12
    assert np.abs(np.add.reduceat(carried, joined.cell_start[:-1]) - joined.weights).max() < 1e-12


def test_the_forest_solver_runs_when_groups_share_cells():
    """Without bootstrap many groups share cells; copied (``copies`` raised to allow them all), the
    forest driver runs and agrees with the general driver; under the default share it does not."""
    frame, _ = load_adult("train")
    df = frame[[*COLUMNS, "income"]].sample(300, random_state=4).reset_index(drop=True)
    X = df[COLUMNS]
    est = RandomForestClassifier(4, max_depth=4, bootstrap=False, max_features=0.5, random_state=4, n_jobs=1)
    est.fit(pd.get_dummies(X).astype(float), df["income"])
    known = [c for c in [*COLUMNS, "income"] if c != "relationship"]
    problem, types = forest_type_problem(forest_from_sklearn(est, X, y=df["income"]), df, known, "relationship", Knowledge(sa=True))
    red = reduce_factored(problem)
    assert (np.diff(red.access.indptr) > 1).any() and not exclusive_cells(red) and copies(red) > 0.05 * len(red.types)
    general = solve_factored(problem)
    for share, driver in ((1e6, "bounds"), (0.05, "general")):
        seen: list[str] = []
        forest = solve_forest(problem, feasible=types.truth(), options=ForestSolveOptions(copies=share, progress=lambda p, seen=seen: seen.append(p.phase)))
        assert driver in seen and forest.status == general.status == "optimal"
        assert np.abs(forest.marginal - general.marginal).max() < 1e-6
