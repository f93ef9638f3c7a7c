"""Integer bound propagation (ppdm.exact.propagate), freed-groups datasets (ppdm.exact.freed) and
datasets from pairs of record moves (ppdm.exact.pairs) against every consistent dataset of tiny
count problems, enumerated."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from count_problems import problems
from hypothesis import HealthCheck, given, settings

from ppdm.exact.freed import FreedGroups
from ppdm.exact.pairs import PairMoves, PairSettings
from ppdm.exact.problem import CountProblem, CountRows
from ppdm.exact.propagate import COUNTS, propagate

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _every_dataset(problem: CountProblem) -> list[np.ndarray]:
    ranges = [range(int(s) + 1) for s in problem.sizes]
    out = []
    for ks in itertools.product(*ranges):
        x = np.ravel([[k, s - k] for k, s in zip(ks, problem.sizes)]).astype(np.int64)
        if problem.satisfied(x):
            out.append(x)
    return out


def _rows(problem: CountProblem) -> list:
    return [(r.A, r.b, r.sense, r.strict, r.row_names) for r in problem.rows]


@given(problems())
@SETTINGS
def test_propagated_bounds_hold_in_every_consistent_dataset(case) -> None:  # type: ignore[no-untyped-def]
    problem, x = case
    lo, hi = propagate(problem.var_group, problem.sizes, _rows(problem))
    datasets = _every_dataset(problem)
    assert any(np.array_equal(d, x) for d in datasets)
    for d in datasets:
        assert (lo <= d).all() and (d <= hi).all()


@given(problems())
@SETTINGS
def test_freed_datasets_are_consistent_and_move_the_target(case) -> None:  # type: ignore[no-untyped-def]
    problem, x = case
    freed = FreedGroups(problem.var_group, problem.sizes, _rows(problem), x)
    datasets = _every_dataset(problem)
    for g in range(problem.n_groups):
        if x[2 * g] == 0:
            continue
        target = np.array([2 * g])  # value 0 of group g, asked to drop
        y = freed.change(freed.alike(g, problem.n_groups), target, True, [np.array([2 * h]) for h in range(problem.n_groups) if h != g], None)
        possible = any(d[2 * g] < x[2 * g] for d in datasets)
        if y is None:
            assert not possible  # every group freed: the solve is the whole question
            continue
        assert problem.satisfied(y) and y[2 * g] < x[2 * g]


@given(problems())
@SETTINGS
def test_pair_datasets_are_consistent_and_refute_only_what_brute_force_does(case) -> None:  # type: ignore[no-untyped-def]
    problem, x = case
    families = np.arange(sum(r.n_rows for r in problem.rows))  # every row its own family
    moves = PairMoves(problem.var_group, _rows(problem), families, x, settings=PairSettings(distance=2))
    datasets = _every_dataset(problem)
    for v in range(problem.n_vars):
        weight = np.zeros(problem.n_vars)
        weight[v] = 1.0
        y = moves.dataset(weight, None)
        if y is None:
            continue
        assert problem.satisfied(y)
        assert any(np.array_equal(d, y) for d in datasets)


def _leaf_rows(n_trees: int, rng: np.random.Generator, n_groups: int) -> tuple[CountProblem, np.ndarray]:
    """Singleton groups with a class each, and per tree the class-1 count of every leaf (a random
    partition of the groups): the insider's rows under boosting rounds, in miniature."""
    y = rng.integers(0, 2, n_groups)
    var_group = np.repeat(np.arange(n_groups), 2)
    var_label = np.tile([0, 1], n_groups)
    problem = CountProblem(np.ones(n_groups, dtype=np.int64), var_group, var_label, 2)
    x = np.ravel(np.c_[1 - y, y]).astype(np.int64)
    for t in range(n_trees):
        leaf = rng.integers(0, 3, n_groups)
        A = sp.csr_matrix((np.ones(n_groups), (leaf, 2 * np.arange(n_groups) + 1)), shape=(3, 2 * n_groups))
        problem.add(CountRows(f"tree {t}", A, A @ x, "eq"))
    return problem, x


def test_every_pair_dataset_of_leaf_rows_is_one_brute_force_finds() -> None:
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(30):
        problem, x = _leaf_rows(3, rng, 9)
        moves = PairMoves(problem.var_group, _rows(problem), np.repeat(np.arange(3), 3), x, settings=PairSettings(distance=2))
        y = moves.dataset((x > 0).astype(float), None)  # any record leaving its class
        if y is None:
            continue
        found += 1
        assert not np.array_equal(y, x)
        assert any(np.array_equal(d, y) for d in _every_dataset(problem))
    assert found > 0


def test_two_pairs_undoing_each_other_in_one_tree_are_found() -> None:
    """j1 (class 1) and k1 (class 0) differ only in tree 0 (leaves 0 and 1), j2 and k2 the other
    way round: j1, j2 down and k1, k2 up keeps every leaf's count, and only that move does."""
    leaves = np.array([[0, 0], [1, 0], [1, 1], [0, 1]])  # j1, k1, j2, k2: (tree 0, tree 1)
    y = np.array([1, 0, 1, 0])
    n = len(y)
    problem = CountProblem(np.ones(n, dtype=np.int64), np.repeat(np.arange(n), 2), np.tile([0, 1], n), 2)
    x = np.ravel(np.c_[1 - y, y]).astype(np.int64)
    for t in range(2):
        A = sp.csr_matrix((np.ones(n), (leaves[:, t], 2 * np.arange(n) + 1)), shape=(2, 2 * n))
        problem.add(CountRows(f"tree {t}", A, A @ x, "eq"))
    moves = PairMoves(problem.var_group, _rows(problem), np.repeat(np.arange(2), 2), x, settings=PairSettings(distance=1))
    weight = np.zeros(2 * n)
    weight[1] = 1.0  # j1 leaving class 1
    z = moves.dataset(weight, None)
    assert z is not None and problem.satisfied(z)
    assert z.reshape(n, 2)[:, 1].tolist() == [0, 1, 0, 1]


@given(problems())
@SETTINGS
def test_freed_most_datasets_are_consistent(case) -> None:  # type: ignore[no-untyped-def]
    problem, x = case
    freed = FreedGroups(problem.var_group, problem.sizes, _rows(problem), x)
    datasets = _every_dataset(problem)
    for v in range(problem.n_vars):
        weight = np.zeros(problem.n_vars)
        weight[v] = 1.0
        y = freed.most(np.arange(problem.n_groups), weight, None)
        if y is None:
            assert not any(d[v] < x[v] for d in datasets)  # every group freed: the whole question
            continue
        assert problem.satisfied(y) and y[v] < x[v]


@given(problems())
@SETTINGS
def test_search_with_pairs_first_proves_exactly_the_certain_values(case) -> None:  # type: ignore[no-untyped-def]
    """The pair stage ahead of every other refutation: nothing it refutes is certain, and the
    search still settles certainty exactly."""
    from ppdm.exact.options import SearchOptions
    from ppdm.exact.solve import exact_bounds

    problem, x = case
    options = SearchOptions(record_moves=False, swap_pairs=True, pair_distances=(1, 2), pair_min_people=0)
    bounds = exact_bounds(problem, truth=x, method="search", detail="certainty", options=options)
    datasets = np.array(_every_dataset(problem))
    values = datasets.reshape(len(datasets), problem.n_groups, 2)
    certain = (values.min(axis=0) == problem.sizes[:, None]).any(axis=1)
    assert np.array_equal(bounds.certain_groups, certain)


def _every_row_rounds(var_group: np.ndarray, sizes: np.ndarray, rows: list, rounds: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """The reference: every round reads every row (Jacobi), dense, straight from the module's rule."""
    n = len(var_group)
    A = np.vstack([np.eye(len(sizes), dtype=np.int64)[:, var_group]] + [np.asarray(sp.csr_matrix(r[0]).todense(), dtype=np.int64) for r in rows])
    b = np.concatenate([np.asarray(sizes, dtype=np.int64)] + [np.asarray(r[1], dtype=np.int64) for r in rows])
    eq = np.concatenate([np.ones(len(sizes), bool)] + [np.full(len(r[1]), r[2] == "eq") for r in rows])
    lo, hi = np.zeros(n, dtype=np.int64), np.asarray(sizes, dtype=np.int64)[var_group]
    for _ in range(rounds):
        new_lo, new_hi = lo.copy(), hi.copy()
        for i, j in zip(*np.nonzero(A)):
            a = A[i, j]
            least = sum(A[i, k] * (lo[k] if A[i, k] > 0 else hi[k]) for k in np.flatnonzero(A[i])) - a * (lo[j] if a > 0 else hi[j])
            most = sum(A[i, k] * (hi[k] if A[i, k] > 0 else lo[k]) for k in np.flatnonzero(A[i])) - a * (hi[j] if a > 0 else lo[j])
            up, down = b[i] - least, (b[i] - most if eq[i] else None)  # a x in [down, up]
            if a > 0:
                new_hi[j] = min(new_hi[j], up // a)
                new_lo[j] = new_lo[j] if down is None else max(new_lo[j], -(-down // a))
            else:
                new_lo[j] = max(new_lo[j], -(-up // a))
                new_hi[j] = new_hi[j] if down is None else min(new_hi[j], down // a)
        if np.array_equal(new_lo, lo) and np.array_equal(new_hi, hi):
            break
        lo, hi = new_lo, new_hi
        if (lo > hi).any():
            break
    return lo, hi


@given(problems())
@SETTINGS
def test_rounds_over_the_moved_rows_give_the_every_row_rounds(case) -> None:  # type: ignore[no-untyped-def]
    problem, _ = case
    rows = _rows(problem)
    want = _every_row_rounds(problem.var_group, problem.sizes, rows)
    for chunk in (COUNTS.chunk, 3):  # 3 entries: rows read in several runs a round
        got = propagate(problem.var_group, problem.sizes, rows, options=replace(COUNTS, chunk=chunk))
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
