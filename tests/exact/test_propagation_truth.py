"""Bound propagation is never falsely certain (one implementation,
:mod:`ppdm.maxent.solvers.bound_propagation`, shared by the exact search and the estimate): on Adult
and Nursery, for a tree and a forest, the training records' own counts lie within every integer
bound :func:`ppdm.exact.propagate.propagate` proves, and no type the records hold is among the
types :func:`~ppdm.maxent.solvers.bound_propagation.forced_types` fixes at 0 (the records meet
every row: they are one consistent dataset)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.exact.build import factored_counts
from ppdm.exact.propagate import propagate
from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.maxent.solvers.bound_propagation import forced_types
from ppdm.maxent.solvers.factored_presolve import reduce_factored
from ppdm.tree.forest import as_forest

from families import FAMILIES, small_table

ADULT_FEATURES = ["age", "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "hours-per-week"]


def _problem(name: str, family: str, adult_train, nursery):  # type: ignore[no-untyped-def]
    """800 rows, the class sensitive, every input known: each group's records share one leaf per tree."""
    frame = adult_train[0] if name == "adult" else nursery[0]
    features, target = (ADULT_FEATURES, "income") if name == "adult" else ([c for c in frame.columns if c != "class"], "class")
    sample, X, D, y = small_table(frame, features, target, 800, seed=3)
    if family == "tree":
        model = ppdm.from_estimator(DecisionTreeClassifier(min_samples_leaf=2, random_state=0).fit(D, y), sample)
    else:
        model = FAMILIES[family](X, D, y)
    return forest_type_problem(as_forest(model), sample, features, target)


@pytest.mark.parametrize("family", ["tree", "random-forest"])
@pytest.mark.parametrize("name", ["adult", "nursery"])
def test_the_truth_lies_within_every_propagated_bound(name, family, adult_train, nursery) -> None:  # type: ignore[no-untyped-def]
    problem, types = _problem(name, family, adult_train, nursery)
    counts, _, truth = factored_counts(problem, types.groups.counts, types.groups.group_of_record, types.true_type)
    assert truth is not None
    lo, hi = propagate(counts.var_group, counts.sizes, [(r.A, r.b, r.sense, r.strict, r.row_names) for r in counts.rows])
    assert ((lo <= truth) & (truth <= hi)).all()
    assert (hi < counts.sizes[counts.var_group]).any()  # propagation proves something: the check is not vacuous

    red = reduce_factored(problem)
    assert (np.diff(red.access.indptr) == 1).all()  # one cell per group: the forest solver's propagation applies
    held = types.truth()[red.types] - red.pinned_types[red.types]
    rho = np.bincount(red.access.indices, weights=red.weights, minlength=red.n_cells)
    forced = forced_types(sp.csr_matrix(red.A), red.b, red.cell_start, rho, np.isfinite(red.log_base))
    assert held[forced].sum() == 0.0
    if family != "tree" or name == "nursery":
        assert forced.any()
