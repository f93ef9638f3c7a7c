"""The active part of a forest problem: cells with one live type and the rows only they reach
leave the Newton system, without changing the Hessian, the rows met or the answer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import RandomForestClassifier

from ppdm.data.datasets import load_adult
from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.maxent.solvers import forest_solve
from ppdm.maxent.solvers.bound_propagation import forced_types
from ppdm.maxent.solvers.factored_presolve import reduce_factored
from ppdm.maxent.solvers.fixed_cells import active_part
from ppdm.maxent.solvers.forest_solve import ForestDual, ForestSolveOptions
from ppdm.tree import forest_from_sklearn

KNOWN = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]


@pytest.fixture(scope="module")
def income_forest():
    """Twenty bootstrap trees of depth 8 with ``income`` as the class on 2,000 Adult rows (the
    shape of the 100-tree benchmark: nearly every record pinned to one class)."""
    frame, _ = load_adult("train")
    df = frame[[*KNOWN, "income"]].sample(2000, random_state=2).reset_index(drop=True)
    X, y = df[KNOWN], df["income"]
    est = RandomForestClassifier(20, max_depth=8, random_state=2, n_jobs=1).fit(pd.get_dummies(X).astype(float), y)
    return forest_type_problem(forest_from_sklearn(est, X, y=y), df, KNOWN, "income")


def _propagated(problem):
    red = reduce_factored(problem)
    full = ForestDual(red, 300.0)
    full.log_base[forced_types(sp.csr_matrix(red.A), red.b, red.cell_start, full.rho, np.isfinite(full.log_base))] = -np.inf
    return red, full


def test_the_part_keeps_every_cell_with_a_choice_and_the_rows_left_out_are_met(income_forest):
    problem, types = income_forest
    red, full = _propagated(problem)
    part = active_part(red, full.log_base)
    live = np.isfinite(full.log_base)
    per_cell = np.bincount(red.cell_of_type, weights=live.astype(float), minlength=red.n_cells)
    assert part.red.n_cells == int((per_cell >= 2).sum()) > 0
    assert 0 < len(part.rows) < len(red.b)  # some rows reach fixed cells only
    assert (np.diff(part.red.cell_start) >= 2).all()
    left_out = np.setdiff1d(np.arange(len(red.b)), part.rows)
    assert np.abs((red.A @ part.fixed - red.b)[left_out]).max() <= 1e-9  # their residual is 0 whatever λ
    truth = types.truth()[red.types] - red.pinned_types[red.types]
    assert np.abs(part.red.A @ truth[part.types] - part.red.b).max() <= 1e-9  # the truth meets the part's rows


def test_the_part_has_the_whole_hessian(income_forest):
    problem, _ = income_forest
    red, full = _propagated(problem)
    part = active_part(red, full.log_base)
    sub = ForestDual(part.red, 300.0)
    rng = np.random.default_rng(0)
    lam = np.zeros(len(red.b))
    lam[part.rows] = rng.standard_normal(len(part.rows))
    whole = full.hessian(full.state(lam)).toarray()
    ours = sub.hessian(sub.state(lam[part.rows])).toarray()
    scale = np.abs(whole).max()
    assert np.abs(whole[np.ix_(part.rows, part.rows)] - ours).max() <= 1e-12 * scale
    others = np.setdiff1d(np.arange(len(red.b)), part.rows)
    assert np.abs(whole[others]).max(initial=0.0) <= 1e-12 * scale  # only rounding where fixed cells cancel


def test_reusing_a_factorisation_lands_where_factorising_every_step_does(income_forest):
    problem, types = income_forest
    every = forest_solve.solve_forest(problem, feasible=types.truth(), options=ForestSolveOptions(reuse_cg=0))
    reused = forest_solve.solve_forest(problem, feasible=types.truth())
    assert every.status == reused.status == "optimal"
    assert every.max_violation <= 1e-9 and reused.max_violation <= 1e-9
    assert np.abs(every.marginal - reused.marginal).max() <= 1e-6
