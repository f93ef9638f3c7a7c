"""Cycles of record moves (ppdm.exact.cycles): every dataset built is consistent, and cycles
longer than the paired moves refute what those cannot."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import tree_count_problem
from ppdm.exact.cycles import MoveCycles, refute
from ppdm.exact.moves import paired_moves
from ppdm.exact.problem import CountProblem, CountRows
from ppdm.learn import ID3Classifier


def _three_cycle() -> tuple[CountProblem, np.ndarray]:
    """Three one-record groups over cells c0, c1, c2 and values 0, 1, 2, both published: group
    i holds (c_i, value i) and may take (c_{i+1}, value i+1). Only all three moving together keep
    every count: no one or two moves do."""
    var_group = np.repeat(np.arange(3), 2)
    var_label = np.array([0, 1, 1, 2, 2, 0])
    cell = np.array([0, 1, 1, 2, 2, 0])
    cells = sp.csr_matrix((np.ones(6), (cell, np.arange(6))), shape=(3, 6))
    values = sp.csr_matrix((np.ones(6), (var_label, np.arange(6))), shape=(3, 6))
    problem = CountProblem(np.ones(3), var_group, var_label, 3)
    problem.add(CountRows("cells", cells, np.ones(3), "eq")).add(CountRows("values", values, np.ones(3), "eq"))
    return problem, np.array([1, 0, 1, 0, 1, 0])


def _rows(problem: CountProblem) -> list:
    return [(r.A, r.b, r.sense, r.strict, r.row_names) for r in problem.rows]


def test_a_three_cycle_refutes_what_paired_moves_cannot() -> None:
    problem, x = _three_cycle()
    assert problem.satisfied(x)
    assert paired_moves(problem.var_group, _rows(problem), x, x > 0) == []
    cycles = MoveCycles(problem.var_group, _rows(problem), x)
    found = refute(cycles, np.arange(6), problem.var_label, problem.var_group, problem.var_label, np.array([0, 2, 4]), certain=True)
    assert found
    for y in found:
        assert problem.satisfied(y)
        assert np.array_equal(y, [0, 1, 0, 1, 0, 1])


def test_no_cycle_no_dataset() -> None:
    problem, x = _three_cycle()
    problem.var_label = problem.var_label.copy()
    # group 2 may no longer return to (c0, value 0): its second variable joins its first pattern
    problem.rows[0].A = sp.csr_matrix(np.array([[1, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]))
    problem.rows[1].A = sp.csr_matrix(np.array([[1, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]))
    problem.var_label = np.array([0, 1, 1, 2, 2, 2])
    cycles = MoveCycles(problem.var_group, _rows(problem), x)
    found = refute(cycles, np.arange(6), problem.var_label, problem.var_group, problem.var_label, np.array([0, 2]), certain=True)
    assert found == []


@st.composite
def _tables(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(4, 9))
    pick = lambda values: draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))  # noqa: E731
    return pd.DataFrame({"A": pick(["a0", "a1", "a2"]), "B": pick(["b0", "b1"]), "S": pick(["s0", "s1", "s2"]), "Y": pick(["n", "y"])})


@pytest.mark.parametrize("publish", ["class-counts", "error-rates", "labels"])
@pytest.mark.parametrize("known", [("A", "Y"), ("A", "B", "Y"), ("A",)])
@given(frame=_tables(), depth=st.integers(1, 3))
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_every_dataset_built_is_consistent(publish: str, known: tuple[str, ...], frame: pd.DataFrame, depth: int) -> None:
    """A tree with the sensitive value as an input, its distribution published: every dataset the
    cycles build meets every row and refutes the candidate it was built for."""
    model = ID3Classifier(max_depth=depth).fit(frame[["A", "B", "S"]], frame["Y"])
    model.tree_.class_attribute = "Y"
    threat = ThreatModel(sensitive="S", known=known, publish=publish, sa_published=True).resolve(frame, "Y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem, _, truth = tree_count_problem(model.tree_.published(publish), frame, threat)
    assert truth is not None
    key = problem.var_group.astype(np.int64) * problem.n_labels + problem.var_label
    pairs, var_pair = np.unique(key, return_inverse=True)
    pair_group, pair_label = pairs // problem.n_labels, pairs % problem.n_labels
    held = problem.group_label(truth)[pair_group, pair_label]
    cycles = MoveCycles(problem.var_group, _rows(problem), truth)
    for certain, cand in ((True, held == problem.sizes[pair_group]), (False, held == 0)):
        for y in refute(cycles, var_pair, problem.var_label, pair_group, pair_label, np.flatnonzero(cand), certain):
            assert problem.satisfied(y)
            moved = problem.group_label(y)[pair_group, pair_label]
            assert ((moved != held) & cand).any()
