"""A forest audit through the factored dual's sparse Hessian: the insider of issue 43 (every input
but ``marital-status`` known, the class not) over bootstrap trees, where groups share a few joint
leaves and the general Newton driver forms the Hessian's group term by sparse products. Its
posteriors equal cvxpy + Clarabel's on the same problem over explicit slots, and the training data
meets every row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

from ppdm.data.datasets import load_adult
from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.solvers import factored_dual
from ppdm.maxent.solvers.factored import expand
from ppdm.maxent.solvers.forest_solve import solve_forest
from ppdm.tree import forest_from_sklearn

from oracles import clarabel_slots

COLUMNS = ["age", "education-num", "hours-per-week", "workclass", "race", "sex", "marital-status"]


@pytest.fixture(scope="module")
def insider_problem():
    """Four bootstrap trees of depth 3 on 120 Adult rows; ``marital-status`` (seven values) sensitive."""
    frame, _ = load_adult("train")
    df = frame[[*COLUMNS, "income"]].sample(120, random_state=5).reset_index(drop=True)
    X = df[COLUMNS]
    est = RandomForestClassifier(4, max_depth=3, random_state=5, n_jobs=1).fit(pd.get_dummies(X).astype(float), df["income"])
    forest = forest_from_sklearn(est, X, y=df["income"])
    known = [c for c in COLUMNS if c != "marital-status"]
    return forest_type_problem(forest, df, known, "marital-status", Knowledge(sa=True))


def test_the_truth_meets_every_row(insider_problem):
    problem, types = insider_problem
    assert problem.violations(types.truth()).max() <= 1e-12


def test_the_sparse_hessian_audit_equals_clarabel(insider_problem, monkeypatch):
    problem, types = insider_problem
    calls = []
    real = factored_dual.FactoredDual.group_term
    monkeypatch.setattr(factored_dual.FactoredDual, "group_term", lambda self, *a: calls.append(1) or real(self, *a))
    ours = solve_forest(problem, tol=1e-9, feasible=types.truth())
    assert ours.status == "optimal" and calls  # the general driver, through the sparse group term
    explicit, slot_type = expand(problem)
    p = clarabel_slots(explicit)
    reference = np.zeros_like(ours.marginal)
    valid = slot_type >= 0
    rows = np.broadcast_to(np.arange(problem.n_groups)[:, None], slot_type.shape)
    np.add.at(reference, (rows[valid], problem.type_label[slot_type[valid]]), p[valid])
    assert np.abs(ours.marginal - reference).max() <= 1e-5
