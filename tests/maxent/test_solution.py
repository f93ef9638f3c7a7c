"""Every maximum-entropy solver returns the one Solution type, and every dual meets the one protocol.

The entry points (explicit slots, factored form, forests, internal-node constraints) fill the
same common fields and the estimate of their form; the forest's dual, read through the interface
the general Newton driver reads, is the factored dual of the same problem and is minimised by that
driver to the forest solver's answer.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import RandomForestClassifier

from ppdm.data.qigroups import QIGroups
from ppdm.learn import ID3Classifier
from ppdm.maxent import LinearBlock, MaxEntProblem
from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.maxent.constraints.internal import internal_constraints
from ppdm.maxent.constraints.tree_constraints import tree_problem
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.solvers import FactoredSolution, Solution, solve_factored, solve_forest, solve_linear, solve_with_internal
from ppdm.maxent.solvers.bound_propagation import forced_types
from ppdm.maxent.solvers.dual import minimize_dual
from ppdm.maxent.solvers.factored_dual import FactoredDual
from ppdm.maxent.solvers.factored_presolve import reduce_factored
from ppdm.maxent.solvers.forest_solve import ForestDual, ForestSolveOptions
from ppdm.maxent.solvers.solution import INACCURATE, INTERNAL_VIOLATED, ITERATION_LIMIT, LOCAL_OPTIMUM, OPTIMAL, TIME_LIMIT
from ppdm.tree import forest_from_sklearn

STATUSES = {OPTIMAL, INACCURATE, LOCAL_OPTIMUM, ITERATION_LIMIT, TIME_LIMIT, INTERNAL_VIOLATED}


@pytest.fixture(scope="module")
def forest_problem(nursery):
    """Three shallow trees over 400 nursery rows, every feature known: one joint leaf per group."""
    frame, roles = nursery
    df = frame.sample(400, random_state=0).reset_index(drop=True)
    features = [c for c in df.columns if c != roles.class_attribute]
    X, y = df[features], df[roles.class_attribute]
    est = RandomForestClassifier(3, max_depth=4, random_state=0, n_jobs=1).fit(pd.get_dummies(X).astype(float), y)
    return forest_type_problem(forest_from_sklearn(est, X, y=y), df, features, roles.class_attribute)


def _explicit() -> MaxEntProblem:
    problem = MaxEntProblem(np.array([0.25, 0.25, 0.5]), 2)
    problem.add(LinearBlock("rate", sp.csr_matrix([[1.0, 0, 1, 0, 0, 0]]), [0.3], "eq"))
    problem.add(LinearBlock("label", sp.csr_matrix([[0, 0, 0, 0, -1.0, 1]]), [0.0], "le"))
    return problem


def _factored() -> FactoredProblem:
    problem = FactoredProblem([0.5, 0.5], sp.csr_matrix(np.ones((2, 2))), [-1, -1], [0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 0, 1], 2)
    problem.add(LinearBlock("rate", sp.csr_matrix([[1.0, 0, 0, 0]]), [0.3], "eq", ["rate(leaf 0)"]))
    return problem


def _internal(d2):
    tree = ID3Classifier(min_samples_split=3).fit(d2[["Age", "Education"]], d2["Salary"]).tree_.published("error-rates")
    groups = QIGroups.from_frame(d2, ["Age", "Education"])
    problem, leaf = tree_problem(tree, groups)
    return problem, internal_constraints(tree, groups, leaf)


def _common_fields_filled(solution: Solution) -> None:
    assert type(solution) is Solution
    assert solution.status in STATUSES
    assert math.isfinite(solution.entropy) and math.isfinite(solution.max_violation) and solution.seconds >= 0
    assert solution.iterations >= 0 and solution.newton_steps >= 0 and solution.n_classes > 0 and solution.n_rows > 0


def test_every_entry_point_returns_the_one_solution_type(forest_problem, d2):
    assert FactoredSolution is Solution  # the old name of the factored result
    explicit = solve_linear(_explicit())
    internal = solve_with_internal(*_internal(d2))
    factored = solve_factored(_factored())
    problem, types = forest_problem
    forest = solve_forest(problem, feasible=types.truth())
    for solution in (explicit, internal, factored, forest):
        _common_fields_filled(solution)
    for solution in (explicit, internal):  # explicit slots: p(x | q), nothing factored
        assert solution.p.ndim == 2 and solution.p.shape[0] > 0 and np.allclose(solution.p.sum(axis=1), 1.0)
        assert solution.marginal.size == 0 and solution.types.size == 0 and solution.face == ""
    assert internal.status == LOCAL_OPTIMUM
    for solution in (explicit, factored, forest):  # the convex solvers: multipliers, KKT residual
        assert solution.status == OPTIMAL and solution.dual is not None and len(solution.dual) == solution.n_rows
        assert solution.kkt_residual <= 1e-9
    for solution in (factored, forest):  # factored: P(label | q) and P(t), no explicit p
        assert solution.p.size == 0
        assert solution.marginal.shape[0] > 0 and np.allclose(solution.marginal.sum(axis=1), 1.0)
        assert solution.types.ndim == 1 and solution.types.sum() == pytest.approx(1.0)
    assert forest.face.startswith("bound propagation")  # the forest path, not the general driver's
    assert factored.face == ""


def test_the_forest_dual_is_the_factored_dual_through_the_one_interface(forest_problem):
    problem, _ = forest_problem
    red = reduce_factored(problem)
    assert (np.diff(red.access.indptr) == 1).all()  # one cell per group: the forest's dual applies
    forest, factored = ForestDual(red, ForestSolveOptions().underflow), FactoredDual(red)
    lam = np.random.default_rng(0).normal(size=len(red.b))
    ours, theirs = forest.state(lam), factored.state(lam)
    assert forest._rows()[0].A.nnz < sp.csr_matrix(red.A).nnz  # the forest dual works on centred rows, the factored on the rows
    assert ours.value == pytest.approx(theirs.value, rel=1e-12)
    assert np.allclose(ours.residual, theirs.residual, atol=1e-12)
    assert np.allclose(forest.fun_and_grad(lam)[1], factored.fun_and_grad(lam)[1], atol=1e-12)
    for rows in (np.arange(len(red.b)), np.arange(0, len(red.b), 3)):
        H = forest.hessian(ours, rows)
        reference = factored.hessian(theirs, rows)
        assert np.allclose(H.toarray(), reference.toarray() if sp.issparse(reference) else reference, atol=1e-12)
    full = forest.hessian(ours).toarray()
    v = np.random.default_rng(1).normal(size=len(red.b))
    assert np.allclose(forest.hess_vec(ours, v), full @ v, atol=1e-12)
    assert np.allclose(forest.hess_diag(ours), np.diag(full), atol=1e-12)
    assert np.array_equal(forest.project(lam), lam)  # equality rows: the multipliers are free



def test_the_forest_duals_diagonal_stays_exact_after_its_squared_rows_are_kept(forest_problem):
    """hess_diag forms A ∘ A once per dual: at a second point it is still the formed Hessian's
    diagonal, and rows holding duplicate entries are squared after summing them."""
    problem, _ = forest_problem
    red = reduce_factored(problem)
    dual = ForestDual(red, ForestSolveOptions().underflow)
    rng = np.random.default_rng(2)
    for _ in range(2):
        state = dual.state(rng.normal(size=len(red.b)))
        assert np.allclose(dual.hess_diag(state), np.diag(dual.hessian(state).toarray()), atol=1e-12)
    A = sp.csr_matrix(red.A)
    halves = sp.csr_matrix((np.repeat(A.data / 2, 2), np.repeat(A.indices, 2), A.indptr * 2), shape=A.shape)  # each entry as two halves
    assert not halves.has_canonical_format and np.allclose(halves.toarray(), A.toarray())
    twin = ForestDual(red, ForestSolveOptions().underflow)
    twin.A, twin.AT = halves, sp.csr_matrix(halves.T)
    lam = rng.normal(size=len(red.b))
    assert np.allclose(twin.hess_diag(twin.state(lam)), dual.hess_diag(dual.state(lam)), atol=1e-12)

def test_the_general_driver_minimises_the_forest_dual_to_the_forest_solvers_answer(forest_problem):
    problem, _ = forest_problem
    red = reduce_factored(problem)
    dual = ForestDual(red, ForestSolveOptions().underflow)
    dual.log_base[forced_types(sp.csr_matrix(red.A), red.b, red.cell_start, dual.rho, np.isfinite(dual.log_base))] = -np.inf
    result = minimize_dual(dual, len(red.b), 1e-9)
    assert result.converged
    types = red.pinned_types.copy()
    types[red.types] += result.state.P
    assert np.abs(types - solve_forest(problem).types).max() <= 1e-7
