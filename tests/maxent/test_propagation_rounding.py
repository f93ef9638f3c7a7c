"""Bound propagation in floating point stays sound: rounding never tightens a bound past the truth.

Without widening each step by a bound on its rounding, errors compounded about fivefold a round
over a bagged forest's rows (multiplicities up to 8): after 20 rounds the forest solver's forced
types held training records, and the face's linear programme then failed on the training data.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.ensemble import RandomForestClassifier

from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.solvers.bound_propagation import _row_bounds, forced_types
from ppdm.maxent.solvers.factored_presolve import reduce_factored
from ppdm.maxent.solvers.forest_solve import ForestDual
from ppdm.maxent.solvers.group_cells import by_group, joined_reference
from ppdm.tree import forest_from_sklearn


def _exact_row_bounds(A: sp.csr_matrix, lower: np.ndarray, upper: np.ndarray, L: np.ndarray, U: np.ndarray) -> tuple[list[Fraction], list[Fraction]]:
    """The same bounds as :func:`_row_bounds`, in exact rational arithmetic on the same floats."""
    lows, highs = [], []
    for i in range(A.shape[0]):
        cols, vals = A.indices[A.indptr[i] : A.indptr[i + 1]], A.data[A.indptr[i] : A.indptr[i + 1]]
        f = [Fraction(float(a)) for a in vals]
        least = sum(a * Fraction(float(L[j])) if a > 0 else a * Fraction(float(U[j])) for a, j in zip(f, cols))
        most = sum(a * Fraction(float(U[j])) if a > 0 else a * Fraction(float(L[j])) for a, j in zip(f, cols))
        room_up, room_down = Fraction(float(upper[i])) - least, most - Fraction(float(lower[i]))
        for a, j in zip(f, cols):
            up, down = (room_up, room_down) if a > 0 else (room_down, room_up)
            lows.append(Fraction(float(U[j])) - down / abs(a))
            highs.append(Fraction(float(L[j])) + up / abs(a))
    return lows, highs


def test_every_float_bound_holds_the_exact_one() -> None:
    rng = np.random.default_rng(0)
    for _ in range(40):
        n_rows, n_vars = 6, 9
        dense = rng.integers(-3, 9, (n_rows, n_vars)) * (rng.random((n_rows, n_vars)) < 0.6)
        A = sp.csr_matrix(dense.astype(float))
        L = rng.random(n_vars) / 7
        U = L + rng.random(n_vars) / 3
        x = L + (U - L) * rng.random(n_vars)
        lower = A @ x - rng.random(n_rows) / 11
        upper = A @ x + rng.random(n_rows) / 13
        rows = np.flatnonzero(np.diff(A.indptr))
        low, high, _ = _row_bounds(A, lower, upper, rows, L, U, exact=False)
        exact_low, exact_high = _exact_row_bounds(A[rows], lower[rows], upper[rows], L, U)
        assert all(Fraction(float(lo)) <= e for lo, e in zip(low, exact_low))
        assert all(Fraction(float(hi)) >= e for hi, e in zip(high, exact_high))


def test_whole_counts_propagate_exactly() -> None:
    """In records (whole numbers, whole coefficients) nothing is widened: a bound reaching 0 is 0."""
    A = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    low, high, _ = _row_bounds(A, np.array([3.0, 2.0]), np.array([3.0, 2.0]), np.array([0, 1]), np.array([3.0, 0.0, 2.0]), np.array([3.0, 5.0, 5.0]), exact=False)
    assert high.tolist() == [3.0, 0.0, 0.0, 2.0] and low.tolist() == [-2.0, 0.0, -3.0, -3.0]


def test_a_bagged_forest_s_forced_types_hold_no_training_record(adult_train) -> None:  # type: ignore[no-untyped-def]
    """2,000 Adult rows, 100 bootstrap trees of depth 8, every input known but ``marital-status``:
    the groups share cells, joined per group as the forest solver does; propagation then ran 50
    rounds and forced 10 types that hold a training record."""
    frame = adult_train[0].drop(columns=["fnlwgt"]).sample(frac=1.0, random_state=0).iloc[:2000].reset_index(drop=True)
    features = [c for c in frame.columns if c != "income"]
    X = np.column_stack([frame[c].cat.codes.to_numpy(float) if isinstance(frame[c].dtype, pd.CategoricalDtype) else frame[c].to_numpy(float) for c in features])
    est = RandomForestClassifier(100, max_depth=8, random_state=0, n_jobs=1).fit(X, frame["income"].astype(str))
    ordinal = {c: list(frame[c].cat.categories) for c in features if isinstance(frame[c].dtype, pd.CategoricalDtype)}
    forest = forest_from_sklearn(est, frame[features], feature_names=features, y=frame["income"].astype(str), ordinal_categories=ordinal, class_attribute="income")
    known = [f for f in features if f != "marital-status"] + ["income"]
    problem, types = forest_type_problem(forest, frame, known, "marital-status", Knowledge(sa=True))
    red = reduce_factored(problem)
    truth = types.truth()
    assert truth is not None
    joined = by_group(red)
    held = joined_reference(red, truth[red.types] - red.pinned_types[red.types])
    assert held is not None
    dual = ForestDual(joined, 300.0)
    forced = forced_types(sp.csr_matrix(joined.A), joined.b, joined.cell_start, dual.rho, np.isfinite(dual.log_base))
    assert forced.sum() > 100  # propagation proves something: the check is not vacuous
    assert held[forced].max(initial=0.0) == 0.0  # habit 1: the training data meets every row, so no forced type holds it
