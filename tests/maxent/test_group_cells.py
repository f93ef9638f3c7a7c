"""One cell per group: a bootstrap forest with the sensitive attribute among its inputs.

Each record's multiplicity vector makes its group the only one to reach its joint leaves, so
the forest solver joins the group's cells into one (:mod:`ppdm.maxent.solvers.group_cells`).
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
from ppdm.maxent.solvers.factored_presolve import reduce_factored
from ppdm.maxent.solvers.forest_solve import solve_forest
from ppdm.maxent.solvers.group_cells import by_group, exclusive_cells
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


def test_a_cell_two_groups_reach_is_not_joined(bootstrap_problem):
    problem, _ = bootstrap_problem
    red = reduce_factored(problem)
    red.access = red.access.tolil()
    red.access[0, red.access.rows[1][0]] = 1  # group 0 now also reaches one of group 1's cells
    red.access = red.access.tocsr()
    assert not exclusive_cells(red)
    with pytest.raises(ValueError, match="several groups"):
        by_group(red)
