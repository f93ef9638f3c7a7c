"""``reconstruct`` against brute force: on tiny forests every dataset is enumerated, and what the
reconstruction proves must hold in all the consistent ones (and, when every candidate was
decided, exactly what holds in all of them)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

from ppdm.errors import DataError, PpdmError
from ppdm.exact import reconstruct as R
from ppdm.exact.reconstruct import match_rows, reconstruct, reconstruction_error
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.sklearn_forest import forest_from_sklearn


# -- tiny instances ------------------------------------------------------------------------------
def _table(rng: np.random.Generator, n: int, binary: int, rich: bool) -> pd.DataFrame:
    cols = {f"b{i}": rng.integers(0, 2, n).astype(bool) for i in range(binary)}
    if rich:
        cols["colour"] = pd.Categorical(rng.choice(["red", "green", "blue"], n), categories=["red", "green", "blue"])
        cols["size"] = rng.integers(0, 3, n)
    cols["y"] = rng.integers(0, 2, n).astype(bool)
    return pd.DataFrame(cols)


def _inputs(table: pd.DataFrame) -> pd.DataFrame:
    X = table.drop(columns=["y"])
    if "colour" in X:
        X = pd.concat([X.drop(columns=["colour"]), pd.get_dummies(X["colour"], prefix="colour").astype(int)], axis=1)
    return X


def _instance(seed: int, n: int, binary: int, trees: int, bootstrap: bool, rich: bool = False):
    rng = np.random.default_rng(seed)
    table = _table(rng, n, binary, rich)
    rf = RandomForestClassifier(n_estimators=trees, bootstrap=bootstrap, max_features=None if trees == 1 else "sqrt", random_state=seed)
    rf.fit(_inputs(table), table["y"])
    return table, forest_from_sklearn(rf, table)


# -- brute force ---------------------------------------------------------------------------------
def _types(forest) -> tuple[list[R._Column], np.ndarray, pd.DataFrame]:
    """Every row the modelled columns can hold: value indices, and a table to route them."""
    columns = R._columns(forest)
    idx = np.array(list(itertools.product(*[range(len(c.values)) for c in columns])), dtype=np.intp)
    frame = {}
    for i, c in enumerate(columns):
        vals = [_point(v) for v in c.values]
        frame[c.name] = pd.Series(np.asarray(vals, dtype=object)[idx[:, i]])
    table = pd.DataFrame(frame)
    for c in columns:
        if c.kind == "order":
            table[c.name] = table[c.name].astype(float)
        else:
            table[c.name] = pd.Categorical(table[c.name], categories=c.values)
    return columns, idx, table


def _point(v):
    if isinstance(v, pd.Interval):
        return v.right if np.isfinite(v.right) else v.left + 1.0
    return v


def _consistent(forest, n: int, identities: bool) -> tuple[list[R._Column], np.ndarray, np.ndarray]:
    """Every consistent dataset as rows of row-type indices (multisets unless ``identities``)."""
    columns, idx, table = _types(forest)
    leaves = forest.apply(table)
    klass = idx[:, -1]
    M = np.stack([np.ones(n, dtype=np.int64) if m is None else m for m in forest.multiplicities])
    combos = itertools.product(range(len(idx)), repeat=n) if identities else itertools.combinations_with_replacement(range(len(idx)), n)
    data = np.array(list(combos), dtype=np.intp)
    ok = np.ones(len(data), dtype=bool)
    for t, tree in enumerate(forest.trees):
        n_cls = len(forest.classes)
        published = np.zeros(tree.n_nodes * n_cls)
        for leaf in tree.leaves():
            published[leaf.id * n_cls : (leaf.id + 1) * n_cls] = np.rint(leaf.counts)
        cell = leaves[:, t] * n_cls + klass
        got = np.zeros((len(data), len(published)))
        for r in range(n):
            np.add.at(got, (np.arange(len(data)), cell[data[:, r]]), M[t, r])
        ok &= (got == published).all(axis=1)
    return columns, idx, data[ok]


def _row_counts(dataset: np.ndarray, n_types: int) -> np.ndarray:
    return np.bincount(dataset, minlength=n_types)


def _type_of(rec: pd.DataFrame, columns, idx: np.ndarray) -> np.ndarray:
    vals = np.column_stack([[c.values.index(v) for v in rec[c.name]] for c in columns])
    lookup = {tuple(row): u for u, row in enumerate(idx)}
    return np.array([lookup[tuple(v)] for v in vals])


def _canonical(dataset: np.ndarray, idx: np.ndarray, columns, forest, M: np.ndarray) -> np.ndarray:
    """The dataset's records in the order the reconstruction sorts them (see ``_deal``)."""
    n_bits = R._n_bits(columns)
    bits = np.zeros((len(dataset), n_bits), dtype=np.int64)
    for c_i, c in enumerate(columns):
        for r, u in enumerate(dataset):
            for j, v in c.equals(int(idx[u, c_i])):
                bits[r, j] = int(v)
            if c.kind == "order":
                bits[r, c.bits] = (np.arange(len(c.bits)) < idx[u, c_i]).astype(int)
    key = bits @ (1 << (n_bits - 1 - np.arange(n_bits)))
    if (M == M[:, :1]).all():
        cells = R._published(forest, columns)[0]
        block = np.array([next(b for b, cell in enumerate(cells) if all(bits[r, j] == v for j, v in cell.lits)) for r in range(len(dataset))])
        return dataset[np.lexsort((key, block))]
    _, group = np.unique(M.T, axis=0, return_inverse=True)
    group = group.ravel()
    out = dataset.copy()
    for g in np.unique(group):
        members = np.flatnonzero(group == g)
        out[members] = dataset[members[np.argsort(key[members], kind="stable")]]
    return out


# -- soundness by brute force -----------------------------------------------------------------
CASES = [(s, n, b, t, False) for s, (n, b, t) in enumerate(itertools.product((3, 4), (3, 4), (1, 2, 3)))]
CASES += [(50 + s, 5, 3, t, False) for s, t in enumerate((2, 3))]
CASES += [(100 + s, n, 3, t, True) for s, (n, t) in enumerate(itertools.product((3, 4), (1, 2, 3)))]


@pytest.mark.parametrize("seed,n,binary,trees,bootstrap", CASES)
def test_proved_rows_and_cells_hold_in_every_consistent_dataset(seed, n, binary, trees, bootstrap):
    table, forest = _instance(seed, n, binary, trees, bootstrap)
    columns, idx, consistent = _consistent(forest, n, identities=bootstrap)
    res = reconstruct(forest, time_limit=20)
    assert res.status == "solved"
    truth = _type_of(table, columns, idx)
    truth_key = truth if bootstrap else np.sort(truth)
    assert any((d == truth_key).all() for d in consistent), "the true training set is consistent"
    rec = _type_of(res.data, columns, idx)
    rec_key = rec if bootstrap else np.sort(rec)
    assert any((d == rec_key).all() for d in consistent), "the reconstruction is consistent"
    # rows: proved copies == min over consistent datasets, capped by the copies reconstructed
    counts = np.array([_row_counts(d, len(idx)) for d in consistent])
    least = counts.min(axis=0)
    for u in np.unique(rec):
        held = rec == u
        assert res.proved[held].sum() == min(held.sum(), least[u])
    # cells: certain exactly where every consistent dataset's canonical order agrees
    M = R._multiplicities(forest, None, R._published(forest, columns))
    canon = np.array([_canonical(d, idx, columns, forest, M) for d in consistent])
    values = idx[canon]  # datasets × records × columns
    agree = (values == values[:1]).all(axis=0)
    mine = _canonical(rec, idx, columns, forest, M)
    assert (mine == rec).all(), "the reconstruction comes in the canonical order"
    assert res.certain is not None
    np.testing.assert_array_equal(res.certain.to_numpy(), agree)
    assert not res.undecided.any()


@pytest.mark.parametrize("seed", range(8))
def test_categorical_and_numeric_attributes(seed):
    table, forest = _instance(200 + seed, 3, 1, 2, False, rich=True)
    columns, idx, consistent = _consistent(forest, 3, identities=False)
    res = reconstruct(forest, time_limit=20)
    assert res.status == "solved"
    rec = np.sort(_type_of(res.data, columns, idx))
    assert any((d == rec).all() for d in consistent)
    truth = np.sort(_type_of_values(table, columns, idx))
    assert any((d == truth).all() for d in consistent)
    least = np.array([_row_counts(d, len(idx)) for d in consistent]).min(axis=0)
    for u in np.unique(rec):
        assert res.proved[_type_of(res.data, columns, idx) == u].sum() == min((rec == u).sum(), least[u])


def _type_of_values(table: pd.DataFrame, columns, idx) -> np.ndarray:
    """Row types of true rows (numeric values placed in their intervals)."""
    frame = {}
    for c in columns:
        if c.kind == "order":
            frame[c.name] = [next(v for v in c.values if x in v) for x in table[c.name]]
        else:
            frame[c.name] = list(table[c.name])
    return _type_of(pd.DataFrame(frame), columns, idx)


# -- behaviour and errors ----------------------------------------------------------------------
def test_time_budget_leaves_rows_undecided_never_proved():
    _, forest = _instance(7, 4, 3, 2, False)
    res = reconstruct(forest, time_limit=0.0)
    assert res.status in ("no-solution", "time-limit")
    assert not res.proved.any() and res.undecided.all()
    assert res.certain is None or not res.certain.to_numpy().any()


def test_unproved_mode_and_unused_attributes():
    _, forest = _instance(3, 4, 4, 1, False)
    res = reconstruct(forest, prove=False)
    assert res.status == "unproved" and not res.proved.any() and res.undecided.all()
    split_on = {n.split.attribute for t in forest.trees for n in t.internal_nodes()}
    assert set(res.unused) == set(forest.attributes) - split_on
    assert list(res.data.columns) == [c for c in forest.attributes if c in split_on] + ["y"]


def test_refusals_name_what_is_missing():
    _, forest = _instance(1, 4, 3, 2, False)
    with pytest.raises(DataError, match="n_records=5"):
        reconstruct(forest, n_records=5)
    forest.trees[1].disclosure = Disclosure.LABELS
    forest.known[1] = frozenset({"labels"})
    with pytest.raises(PpdmError, match="tree 1 does not publish per-leaf class counts"):
        reconstruct(forest)


def test_forest_without_multiplicities_counts_each_record_once():
    _, forest = _instance(5, 4, 3, 2, False)
    forest.multiplicities = [None] * forest.n_trees
    res = reconstruct(forest, time_limit=20)
    assert len(res.data) == 4 and res.status == "solved"
    with pytest.raises(DataError, match="tree 0 counts 4 training rows, not 6"):
        reconstruct(forest, n_records=6)


def test_error_is_the_share_of_wrong_values_after_the_best_matching():
    truth = pd.DataFrame({"a": [True, False, True], "b": ["x", "y", "y"]})
    rec = pd.DataFrame({"a": [False, True, True], "b": ["y", "x", "x"]})
    pick, wrong = match_rows(rec, truth)
    assert sorted(pick) == [0, 1, 2] and wrong.sum() == 1
    assert reconstruction_error(rec, truth) == pytest.approx(1 / 6)
    intervals = pd.DataFrame({"v": [pd.Interval(0.5, 2.5), pd.Interval(-np.inf, 0.5)]})
    assert reconstruction_error(intervals, pd.DataFrame({"v": [0, 2]})) == 0.0
    with pytest.raises(DataError, match="2 reconstructed rows against 3"):
        match_rows(intervals, truth)


def _bench():
    """benchmarks/bench_reconstruct.py as a module (registered: its dataclass needs it)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_reconstruct.py"
    spec = importlib.util.spec_from_file_location("bench_reconstruct", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_reconstruct"] = bench
    spec.loader.exec_module(bench)
    return bench


def test_draft_paper_columns_read_as_one_categorical_and_flags():
    """The benchmark's reading of DRAFT's binarized Adult (its column names, one education group):
    ppdm imports the forest over that table, counts checked, and the table reads back as the inputs."""
    bench = _bench()
    rng = np.random.default_rng(0)
    edu = ["Assoc", "Bachelors", "HS-grad", "Masters_Doctorate", "School_Prof-School", "Some-college"]
    n = 12
    X = pd.DataFrame({"age_high": rng.integers(0, 2, n), "capital_gain_>0": rng.integers(0, 2, n)})
    for i, v in enumerate(edu):
        X[f"education_{v}"] = (np.arange(n) % len(edu) == i).astype(int)
    X["occupation_Sales"] = rng.integers(0, 2, n)
    y = pd.Series(rng.integers(0, 2, n), name="income")
    rf = RandomForestClassifier(n_estimators=3, bootstrap=False, random_state=0).fit(X, y)
    table = bench.paper_table(X, y)
    assert list(table["education"].cat.categories) == edu
    forest_from_sklearn(rf, table, prefix_sep="_", class_attribute="income", verify=True)
    assert bench.paper_inputs(table, list(X.columns)).equals(X.astype(bool))


@pytest.mark.slow
def test_anchor_adult_100_records_100_trees_is_rebuilt_and_proved():
    """One seed of benchmarks/bench_reconstruct.py (Ferry et al.'s setting): error 0, every row proved."""
    from ppdm.data.datasets import load_dataset

    bench = _bench()
    data, forest = bench.instance(bench.binarize(load_dataset("adult")[0]), 0, 100, 100)
    res = reconstruct(forest, time_limit=120, num_workers=2)
    assert reconstruction_error(bench.dummies(res.data), bench.dummies(data)) <= 0.001
    assert res.status == "solved" and res.n_proved == 100
