"""The forest solver against the exact face: no type guessed away, bound propagation sound.

The oracle: a linear programme finds every type that no distribution meeting the rows can give
mass (the training data meets them, so a type is such iff it is 0 in the data and no direction
that keeps every row moves mass onto it); with those types at 0 the optimum lies inside, and
Newton's method finds it without chasing anything. The forest solver must land on it. Before the
exact path stopped fixing "vanishing" types at 0, it missed this Adult instance by 1.2e-6 (and a
30,162-row one with ``education`` as the class by 0.38).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.ensemble import RandomForestClassifier

from ppdm.data.datasets import load_adult
from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.maxent.solvers import forest_solve
from ppdm.maxent.solvers.bound_propagation import forced_types
from ppdm.maxent.solvers.face import forced_by_lp
from ppdm.maxent.solvers.factored_presolve import FactoredReduced, reduce_factored
from ppdm.maxent.solvers.forest_solve import ForestSolveOptions
from ppdm.tree import forest_from_sklearn

KNOWN = ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country", "income"]


@pytest.fixture(scope="module")
def education_forest():
    """Ten bootstrap trees with ``education`` (16 classes) as the class, on 2,000 Adult rows."""
    frame, _ = load_adult("train")
    df = frame[[*KNOWN, "education"]].sample(2000, random_state=1).reset_index(drop=True)
    X, y = df[KNOWN], df["education"]
    est = RandomForestClassifier(10, random_state=1, n_jobs=1).fit(pd.get_dummies(X).astype(float), y)
    return forest_type_problem(forest_from_sklearn(est, X, y=y), df, KNOWN, "education")


def _cells(red: FactoredReduced) -> sp.csr_matrix:
    n = len(red.cell_of_type)
    return sp.csr_matrix((np.ones(n), (red.cell_of_type, np.arange(n))), shape=(red.n_cells, n))


def _face(red: FactoredReduced, truth: np.ndarray) -> np.ndarray:
    """Types 0 in every distribution meeting the rows: max Σ_{j ∈ Z} min(D_j, 1) over directions
    D that keep every row and every cell (D_j ≥ 0 where the data has no mass, Z) is reached with
    D_j ≥ 1 exactly on the types some such direction can fill."""
    A = sp.csr_matrix(red.A)
    n = A.shape[1]
    Z = np.flatnonzero(truth <= 1e-15)
    eq = sp.vstack([A, _cells(red)])
    pick = sp.csr_matrix((np.ones(len(Z)), (np.arange(len(Z)), Z)), shape=(len(Z), n))
    lower = np.full(n, -np.inf)
    lower[Z] = 0.0
    res = linprog(
        np.concatenate([np.zeros(n), -np.ones(len(Z))]),
        A_ub=sp.hstack([-pick, sp.identity(len(Z))]), b_ub=np.zeros(len(Z)),
        A_eq=sp.hstack([eq, sp.csr_matrix((eq.shape[0], len(Z)))]), b_eq=np.zeros(eq.shape[0]),
        bounds=np.column_stack([np.concatenate([lower, np.zeros(len(Z))]), np.concatenate([np.full(n, np.inf), np.ones(len(Z))])]),
        method="highs-ds",
    )
    assert res.status == 0
    forced = np.zeros(n, dtype=bool)
    forced[Z[res.x[n:] <= 0.5]] = True
    return forced


def _reduced_truth(problem, types) -> tuple[FactoredReduced, np.ndarray]:
    red = reduce_factored(problem)
    return red, types.truth()[red.types] - red.pinned_types[red.types]


def _on_the_face(problem, types, monkeypatch):
    """The optimum with the oracle's face fixed at 0 and nothing else: the reference."""
    red, truth = _reduced_truth(problem, types)
    face = _face(red, truth)
    original = forest_solve.reduce_factored

    def on_the_face(p, deadline=None):
        out = original(p, deadline)
        out.log_base = np.where(face, -np.inf, out.log_base)
        return out

    with monkeypatch.context() as m:
        m.setattr(forest_solve, "reduce_factored", on_the_face)
        m.setattr(forest_solve, "forced_types", lambda A, b, start, rho, alive: np.zeros(len(alive), dtype=bool))
        reference = forest_solve.solve_forest(problem, tol=1e-12)
    assert reference.status == "optimal"
    return reference


def test_the_solver_lands_on_the_optimum_over_the_exact_face(education_forest, monkeypatch):
    problem, types = education_forest
    ours = forest_solve.solve_forest(problem)
    assert ours.status == "optimal"
    assert np.abs(ours.marginal - _on_the_face(problem, types, monkeypatch).marginal).max() <= 1e-7


def test_the_linear_programme_finds_the_exact_face(education_forest):
    """The library's programme (pivot columns, no cell rows) against the oracle's (every type and
    cell), from the presolved problem and from what bound propagation leaves."""
    problem, types = education_forest
    red, truth = _reduced_truth(problem, types)
    face = _face(red, truth)
    alive = np.isfinite(red.log_base)
    assert (forced_by_lp(red.A, red.cell_of_type, alive, truth) == face & alive).all()
    rho = np.bincount(red.access.indices, weights=red.weights, minlength=red.n_cells)
    propagated = forced_types(sp.csr_matrix(red.A), red.b, red.cell_start, rho, alive)
    rest = forced_by_lp(red.A, red.cell_of_type, alive & ~propagated, truth)
    assert rest.sum() > 0  # the programme proves what propagation cannot
    assert ((rest | propagated) == face & alive).all()
    assert truth[rest].sum() == 0.0


def test_a_method_that_fails_hands_over_to_the_next(education_forest, monkeypatch):
    from ppdm.maxent.solvers import face as face_module

    problem, types = education_forest
    red, truth = _reduced_truth(problem, types)
    used = []

    def flaky(*args, method, **kwargs):
        used.append(method)
        if method == "highs-ds":  # as HiGHS' "model status unknown"
            return type("Result", (), {"status": 4, "x": None})()
        return linprog(*args, method=method, **kwargs)

    monkeypatch.setattr(face_module, "linprog", flaky)
    alive = np.isfinite(red.log_base)
    assert (forced_by_lp(red.A, red.cell_of_type, alive, truth) == _face(red, truth) & alive).all()
    assert used == ["highs-ds", "highs-ipm"]


def test_the_methods_share_one_time_limit(education_forest, monkeypatch):
    """A method that spends the budget without an answer leaves the next one nothing."""
    from ppdm.maxent.solvers import face as face_module

    problem, types = education_forest
    red, truth = _reduced_truth(problem, types)
    clock = [0.0]
    used = []

    def slow(*args, method, options, **kwargs):
        used.append((method, options["time_limit"]))
        clock[0] += 10.0  # spends the whole budget, then fails otherwise than by the time limit
        return type("Result", (), {"status": 4, "x": None})()

    monkeypatch.setattr(face_module, "linprog", slow)
    monkeypatch.setattr(face_module.time, "perf_counter", lambda: clock[0])
    alive = np.isfinite(red.log_base)
    assert forced_by_lp(red.A, red.cell_of_type, alive, truth, time_limit=10.0) is None
    assert used == [("highs-ds", 10.0)]


def test_the_linear_programme_refuses_a_point_that_is_not_feasible():
    A = sp.csr_matrix(np.array([[0, 1, 0, 1]], dtype=float))
    cells = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match="leaves cell 1 empty"):
        forced_by_lp(A, cells, np.ones(4, dtype=bool), np.array([0.0, 0.5, 0.0, 0.0]))
    with pytest.raises(ValueError, match="fills type 1, which is marked forced"):
        forced_by_lp(A, cells, np.array([True, False, True, True]), np.array([0.0, 0.5, 0.5, 0.0]))


def test_bound_propagation_forces_only_types_of_the_face(education_forest):
    problem, types = education_forest
    red, truth = _reduced_truth(problem, types)
    rho = np.bincount(red.access.indices, weights=red.weights, minlength=red.n_cells)
    forced = forced_types(sp.csr_matrix(red.A), red.b, red.cell_start, rho, np.isfinite(red.log_base))
    assert forced.sum() > 0
    assert truth[forced].sum() == 0.0  # the data is one distribution meeting the rows
    assert not (forced & ~_face(red, truth)).any()


def test_bound_propagation_follows_a_decided_record_into_the_next_leaf():
    """Records a, b, c with two classes each (types a0 a1 b0 b1 c0 c1), mass 1 each. Tree 1's leaf
    {a, b} has one record of class 1; tree 2's leaf {b} has one; tree 3's leaf {b, c} has one.
    Tree 2 decides b is class 1; then a and c must be class 0: a1, b0 and c1 carry nothing."""
    A = sp.csr_matrix(np.array([
        [0, 1, 0, 1, 0, 0],  # tree 1: class-1 count of {a, b}
        [0, 0, 0, 1, 0, 0],  # tree 2: class-1 count of {b}
        [0, 0, 0, 1, 0, 1],  # tree 3: class-1 count of {b, c}
    ], dtype=float))
    forced = forced_types(A, np.ones(3), np.array([0, 2, 4, 6]), np.ones(3), np.ones(6, dtype=bool))
    assert forced.tolist() == [False, True, True, False, False, True]


def test_bound_propagation_leaves_an_undecided_leaf_alone():
    A = sp.csr_matrix(np.array([[0, 1, 0, 1]], dtype=float))  # {a, b}: one of class 1
    forced = forced_types(A, np.ones(1), np.array([0, 2, 4]), np.ones(2), np.ones(4, dtype=bool))
    assert not forced.any()


class _TailDual:
    """A dual whose value e^{−λ} falls forever along d = 1 (a type that carries no mass)."""

    def state(self, lam: np.ndarray) -> forest_solve.ForestState:
        value = float(np.exp(-lam[0]))
        return forest_solve.ForestState(value, residual=np.array([value]), w=np.ones(1), P=np.ones(1))  # ∇D = −value


def test_a_stall_is_judged_by_the_best_violation_not_by_a_spike():
    options = ForestSolveOptions(face_after=12, face_window=10)
    flat = [1e-5] * 12
    assert forest_solve._stalled(flat, options)
    assert not forest_solve._stalled(flat[:11], options)  # too early
    spiked = [1e-5, 7e-5] + [2e-5] * 9 + [6e-6]  # its ends are 12x apart, its best only 1.7x
    assert forest_solve._stalled(spiked, options)
    assert not forest_solve._stalled([1e-5] * 2 + [1e-7] * 10, options)


def test_an_exact_step_is_doubled_while_the_dual_falls():
    lam = np.zeros(1)
    state = _TailDual().state(lam)
    d = np.ones(1)
    max_expand = ForestSolveOptions().max_expand
    plain = forest_solve._line_search(_TailDual(), lam, state, d)  # type: ignore[arg-type]
    longer = forest_solve._line_search(_TailDual(), lam, state, d, max_expand)  # type: ignore[arg-type]
    assert plain[0][0] == 1.0
    assert longer[0][0] == max_expand


def test_an_exact_run_that_stalls_falls_back_to_the_guess_and_says_so(education_forest):
    problem, _ = education_forest
    calls = {"n": 0}
    direction = forest_solve.newton_direction

    def stalled_at_first(dual, state, eta, exact, options, *held):  # no progress for the first max_newton steps
        calls["n"] += 1
        return (np.zeros_like(state.residual), 0) if calls["n"] <= 40 else direction(dual, state, eta, exact, options, *held)

    result = forest_solve.solve_forest(problem, options=ForestSolveOptions(max_newton=40, max_newton_cg=40, direction=stalled_at_first))
    assert calls["n"] > 40
    assert result.status == "inaccurate"  # rows met, but zeros guessed
    assert result.max_violation <= 1e-9
    assert "guessed: " in result.face


def test_a_stalled_chase_asks_the_linear_programme_and_lands_on_the_optimum(education_forest, monkeypatch):
    """Given the data (a distribution meeting every row), a chase that stalls gets the exact face
    from the linear programme and finishes without a guess, on the oracle's optimum."""
    problem, types = education_forest
    reference = _on_the_face(problem, types, monkeypatch)
    calls = {"n": 0}
    direction = forest_solve.newton_direction

    def stalled_at_first(dual, state, eta, exact, options, *held):
        calls["n"] += 1
        return (np.zeros_like(state.residual), 0) if calls["n"] <= 12 else direction(dual, state, eta, exact, options, *held)

    options = ForestSolveOptions(max_newton=40, max_newton_cg=40, face_after=12, direction=stalled_at_first)
    result = forest_solve.solve_forest(problem, feasible=types.truth(), options=options)
    assert result.status == "optimal"
    assert "linear programme" in result.face and "guessed" not in result.face
    assert int(result.face.split("linear programme: ")[1].split()[0]) > 0
    assert np.abs(result.marginal - reference.marginal).max() <= 1e-7


#: Every Hessian too large to factorise: the solver's conjugate-gradient path.
CONJUGATE_GRADIENTS_ONLY = ForestSolveOptions(exact_nnz=-1.0, precondition_nnz=-1.0, factor_nnz=-1.0)


def test_conjugate_gradients_guess_nothing_when_the_data_is_given(education_forest, monkeypatch):
    """On the conjugate-gradient path (forced here) the data's feasible point replaces the guess."""
    problem, types = education_forest
    reference = _on_the_face(problem, types, monkeypatch)
    result = forest_solve.solve_forest(problem, feasible=types.truth(), options=CONJUGATE_GRADIENTS_ONLY)
    assert result.status == "optimal", result.face
    assert "linear programme: " in result.face and "guessed" not in result.face
    assert np.abs(result.marginal - reference.marginal).max() <= 1e-6
    guessing = forest_solve.solve_forest(problem, options=CONJUGATE_GRADIENTS_ONLY)
    assert "guessed: " in guessing.face and guessing.status == "inaccurate"


def test_a_programme_that_does_not_finish_leaves_the_guess_and_says_so(education_forest, monkeypatch):
    problem, types = education_forest
    monkeypatch.setattr(forest_solve, "forced_by_lp", lambda *args: None)  # out of time
    result = forest_solve.solve_forest(problem, feasible=types.truth(), options=CONJUGATE_GRADIENTS_ONLY)
    assert "linear programme: did not finish" in result.face and "guessed: " in result.face
    assert result.status == "inaccurate"


def test_a_feasible_point_that_misses_a_row_is_refused(education_forest):
    problem, types = education_forest
    shifted = types.truth().copy()
    shifted[np.flatnonzero(shifted)[0]] += 0.01
    with pytest.raises(ValueError, match="does not meet the problem"):
        forest_solve.solve_forest(problem, feasible=shifted)


def test_the_forced_types_come_with_a_checked_certificate():
    """D₁ + D₂ = 0 with D ≥ 0 forces both: y = −1 proves it (r = 1 on each), y = 0 does not; the
    programme's own duals prove it too."""
    from ppdm.maxent.solvers.face import _certified, _free

    moves = sp.csr_matrix(np.array([[1.0, 1.0]]))
    signed = np.array([True, True])
    assert _certified(moves, signed, np.array([True, True]), np.array([-1.0]))
    assert not _certified(moves, signed, np.array([True, True]), np.array([0.0]))
    assert not _free(moves, signed, 60.0).any()
    free = _free(sp.csr_matrix(np.array([[1.0, -1.0]])), signed, 60.0)  # D₁ = D₂ ≥ 0: both can move
    assert free.all()


def test_the_certificate_takes_a_dual_a_little_short_of_one_and_nothing_weaker():
    """r = −movesᵀ y > 0 on a signed column proves it empty; HiGHS's tolerance leaves r a few 10⁻⁷
    short of 1 when y is large, which is still a proof, while r ≤ 0 is none."""
    from ppdm.maxent.solvers.face import _certified

    moves = sp.csr_matrix(np.array([[1.0, -1.0], [0.0, 2.0]]))
    signed, forced = np.array([True, True]), np.array([True, True])
    y_exact = np.linalg.solve(moves.T.toarray(), -np.ones(2))  # r = 1 on both
    assert _certified(moves, signed, forced, y_exact)
    assert _certified(moves, signed, forced, y_exact * (1 - 3e-7))  # as HiGHS returns it
    assert not _certified(moves, signed, forced, np.linalg.solve(moves.T.toarray(), -np.array([1.0, 0.0])))  # r = 0 proves nothing
    assert not _certified(moves, signed, forced, np.linalg.solve(moves.T.toarray(), -np.array([1.0, -1e-3])))  # r < 0: not dual feasible


def test_under_a_time_limit_the_linear_programme_gets_its_share_and_the_chase_goes_on_after_it(education_forest, monkeypatch):
    """A fake clock: each Newton direction takes 1 s, the programme all it is given (then fails).
    It is given at most ``face_share`` of the time left, and its time does not count as a Newton
    step's: the chase goes on after it until the deadline, instead of stopping at once."""
    problem, types = education_forest
    clock = [0.0]
    given = []
    calls = {"n": 0}
    direction = forest_solve.newton_direction

    def timed(dual, state, eta, exact, options, *held):
        calls["n"] += 1
        clock[0] += 1.0
        return (np.zeros_like(state.residual), 0) if calls["n"] <= 12 else direction(dual, state, eta, exact, options, *held)

    def no_face(*args):
        given.append(args[-1])
        clock[0] += args[-1]
        return None

    monkeypatch.setattr(forest_solve, "forced_by_lp", no_face)
    monkeypatch.setattr(forest_solve.time, "perf_counter", lambda: clock[0])
    options = ForestSolveOptions(max_newton=400, face_after=12, time_limit=100.0, direction=timed)
    result = forest_solve.solve_forest(problem, tol=1e-30, feasible=types.truth(), options=options)
    assert len(given) == 1 and given[0] <= options.face_share * (100.0 - 12.0)
    assert calls["n"] >= 12 + 20  # steps after the programme, not a stop at once
    assert clock[0] <= 100.0 and result.status == "inaccurate"
