"""The exact audit of forests against brute force: every consistent dataset enumerated.

A dataset (an assignment of the unknown columns to the records, known columns fixed) is
consistent with a forest when, routed through every used tree and counted with the tree's
bootstrap multiplicities, its records reproduce what each tree publishes (class counts; or leaf
sizes and error counts; or each non-empty leaf's label as the first class of highest count) and,
when published, the sensitive distribution. The oracle uses only the trees' routing and the
multiplicities, never the audit's rows.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import exact_attack
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.tree import forest_from_sklearn
from ppdm.tree.forest import Forest
from ppdm.tree.model import encode_categories

SETTINGS = settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@st.composite
def tables(draw, low: int = 3, high: int = 5):  # type: ignore[no-untyped-def]
    n = draw(st.integers(low, high))
    col = lambda vals: draw(st.lists(st.sampled_from(vals), min_size=n, max_size=n))  # noqa: E731
    s_values = ["s0", "s1", "s2"][: draw(st.integers(2, 3))]
    return pd.DataFrame({"A": col(["a0", "a1", "a2"]), "B": col(["b0", "b1"]), "S": col(s_values), "Y": col(["n", "y"])})


def forest_of(frame: pd.DataFrame, inputs: list[str], n_trees: int, bootstrap: bool, seed: int = 0, extra: bool = False) -> Forest:
    """A scikit-learn forest over one-hot ``inputs``, imported with its multiplicities."""
    X = frame[inputs].astype("category")
    kind = ExtraTreesClassifier if extra else RandomForestClassifier
    est = kind(n_trees, max_depth=2, bootstrap=bootstrap, max_features="sqrt", random_state=seed, n_jobs=1)
    est.fit(pd.get_dummies(X).astype(float), frame["Y"])
    return forest_from_sklearn(est, X, y=frame["Y"], class_attribute="Y")


def _tree_ok(tree, known: frozenset, leaf: np.ndarray, klass: np.ndarray, weight: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Per dataset (``leaf``, ``klass``: datasets × records), whether the tree's leaves publish
    what it does: every per-node quantity in ``known`` that is linear in the counts (leaf
    values and covers of later boosting rounds are not, and constrain nothing here either)."""
    k, n_d = len(tree.classes), leaf.shape[0]
    key = (np.arange(n_d)[:, None] * tree.n_nodes + leaf) * k + klass
    counts = np.bincount(key.ravel(), weights=np.broadcast_to(weight, leaf.shape).ravel(), minlength=n_d * tree.n_nodes * k)
    counts = np.rint(counts).astype(np.int64).reshape(n_d, tree.n_nodes, k)
    ok = np.ones(n_d, dtype=bool)
    for node in tree.leaves():
        c = counts[:, node.id]
        if "class-counts" in known:
            ok &= (c == np.rint(node.counts)).all(axis=1)
        if "error-rates" in known:
            ok &= (c.sum(axis=1) == round(node.n_samples)) & (c[:, node.label] == round(node.n_samples - node.n_errors))
        if "sample-counts" in known:
            ok &= c.sum(axis=1) == round(node.n_samples)
        if "labels" in known:
            ok &= (c.sum(axis=1) == 0) | (np.argmax(c, axis=1) == node.label)
    return ok


def brute_forest(forest: Forest, frame: pd.DataFrame, threat: ThreatModel, values: tuple):  # type: ignore[no-untyped-def]
    """Per group of known values, min and max count of each sensitive value over every
    assignment of the unknowns that reproduces what every tree publishes."""
    known = list(threat.known)
    inputs = set(forest.attributes)
    unknown = [c for c in ["S", "Y", "A", "B"] if c not in known and (c in (threat.sensitive, "Y") or c in inputs)]
    domains = [values if c == threat.sensitive else forest.classes if c == "Y" else tuple(forest.attributes[c].categories) for c in unknown]
    combos = list(itertools.product(*domains))
    n, m = len(frame), len(combos)
    wide = frame.loc[np.repeat(np.arange(n), m)].reset_index(drop=True)
    for j, c in enumerate(unknown):
        wide[c] = [combo[j] for combo in combos] * n
    pick = np.stack(np.meshgrid(*[np.arange(m)] * n, indexing="ij"), axis=-1).reshape(-1, n)  # datasets × records
    rows = np.arange(n)
    klass = encode_categories(wide["Y"], forest.classes).reshape(n, m)[rows, pick]
    sens = encode_categories(wide[threat.sensitive].astype(str), values).reshape(n, m)[rows, pick]
    ok = np.ones(len(pick), dtype=bool)
    for t, tree in enumerate(forest.trees):
        mult = forest.multiplicities[t]
        weight = np.ones(n) if mult is None else np.asarray(mult, dtype=float)
        leaf = tree.apply(wide).reshape(n, m)[rows, pick]
        ok &= _tree_ok(tree, forest.publishes(t)[1], leaf, klass, weight)
    if threat.sa_published:
        true_sa = np.bincount(encode_categories(frame[threat.sensitive].astype(str), values), minlength=len(values))
        per = np.stack([(sens == v).sum(axis=1) for v in range(len(values))], axis=1)
        ok &= (per == true_sa).all(axis=1)
    assert ok.any()  # the truth is consistent
    keys = _keys(frame, known, forest)
    lo, hi = {}, {}
    for key in pd.unique(keys):
        members = np.flatnonzero((keys == key).to_numpy())
        cnt = np.stack([(sens[ok][:, members] == v).sum(axis=1) for v in range(len(values))], axis=1)
        lo[key], hi[key] = cnt.min(axis=0), cnt.max(axis=0)
    return keys, lo, hi


def _keys(frame: pd.DataFrame, known: list[str], forest: Forest) -> pd.Series:
    """A record's group: its known values and its multiplicity in every tree."""
    parts = [frame[c].astype(str) for c in known]
    parts += [pd.Series(np.asarray(mult).astype(str), index=frame.index) for mult in forest.multiplicities if mult is not None]
    if not parts:
        return pd.Series([""] * len(frame), index=frame.index)
    out = parts[0]
    for p in parts[1:]:
        out = out + "|" + p
    return out


def compare(result, keys: pd.Series, lo: dict, hi: dict) -> None:  # type: ignore[no-untyped-def]
    first = np.zeros(result.groups.n_groups, dtype=int)
    first[result.groups.group_of_record[::-1]] = np.arange(result.groups.n_records)[::-1]
    seen = set()
    for g in range(result.groups.n_groups):
        key = keys.iloc[first[g]]
        assert key not in seen  # groups are exactly (known values, multiplicities)
        seen.add(key)
        assert result.bounds["min"][g].tolist() == lo[key].tolist(), (g, key)
        assert result.bounds["max"][g].tolist() == hi[key].tolist(), (g, key)
        n = result.groups.counts[g]
        assert bool(result.certain_groups[g]) == bool((lo[key] == n).any())
        assert result.bounds["max"][g].tolist() == hi[key].tolist()
    assert not result.bounds["undecided"].any()


CASES = [
    # (sensitive, known, forest inputs, sa published)
    ("Y", ["A", "B"], ["A", "B"], False),
    ("S", ["A", "B", "Y"], ["A", "B", "S"], False),
    ("S", ["A", "Y"], ["A", "B", "S"], True),
    ("S", ["A", "B"], ["A", "S"], False),
]


@pytest.mark.parametrize("bootstrap", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
@given(frame=tables(), n_trees=st.integers(1, 3), seed=st.integers(0, 3))
@SETTINGS
def test_forest_bounds_equal_brute_force(bootstrap: bool, case: int, frame: pd.DataFrame, n_trees: int, seed: int) -> None:
    sensitive, known, inputs, sa = CASES[case]
    forest = forest_of(frame, inputs, n_trees, bootstrap, seed)
    threat = ThreatModel(sensitive=sensitive, known=tuple(known), sa_published=sa).resolve(frame, "Y")
    _equal_to_brute_force(forest, frame, threat)


@pytest.mark.parametrize("publish", ["error-rates", "labels"])
@given(frame=tables(), n_trees=st.integers(1, 3), bootstrap=st.booleans())
@SETTINGS
def test_forest_publish_levels_equal_brute_force(publish: str, frame: pd.DataFrame, n_trees: int, bootstrap: bool) -> None:
    """Trees audited as publishing less than their class counts (extra trees)."""
    forest = forest_of(frame, ["A", "B", "S"], n_trees, bootstrap, extra=True)
    threat = ThreatModel(sensitive="S", known=("A", "B", "Y"), publish=publish).resolve(frame, "Y")
    _equal_to_brute_force(forest, frame, threat)


@pytest.mark.parametrize("case", [1, 2, 3])
@given(frame=tables(), n_trees=st.integers(1, 3))
@SETTINGS
def test_boosted_forest_bounds_equal_brute_force(case: int, frame: pd.DataFrame, n_trees: int) -> None:
    """A gradient-boosted model: the first tree's class counts, every tree's sample counts."""
    from sklearn.ensemble import GradientBoostingClassifier

    sensitive, known, inputs, sa = CASES[case]
    if frame["Y"].nunique() < 2:
        return  # one class: nothing to boost
    X = frame[inputs].astype("category")
    est = GradientBoostingClassifier(n_estimators=n_trees, max_depth=2, random_state=0).fit(pd.get_dummies(X).astype(float), frame["Y"])
    forest = forest_from_sklearn(est, X, y=frame["Y"], class_attribute="Y")
    assert forest.combine == "additive"
    threat = ThreatModel(sensitive=sensitive, known=tuple(known), sa_published=sa).resolve(frame, "Y")
    _equal_to_brute_force(forest, frame, threat)


@pytest.mark.parametrize("bootstrap", [False, True])
@given(frame=tables(6, 12), n_trees=st.integers(1, 3), known_class=st.booleans())
@SETTINGS
def test_where_the_forest_estimate_is_certain_the_exact_audit_proves_it(bootstrap: bool, frame: pd.DataFrame, n_trees: int, known_class: bool) -> None:
    forest = forest_of(frame, ["A", "B", "S"], n_trees, bootstrap)
    threat = ThreatModel(sensitive="S", known=("A", "B", "Y") if known_class else ("A", "B"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimate = maxent_attack(forest, frame, threat=threat)
        proved = exact_attack(forest, frame, threat=threat)
    assert np.array_equal(estimate.groups.group_of_record, proved.groups.group_of_record)
    assert not (estimate.certain_groups & ~proved.certain_groups).any()
    assert not proved.bounds["undecided"].any()


def _truth_inside(result) -> None:  # type: ignore[no-untyped-def]
    counts = result.groups.value_counts(result.true_codes, len(result.values))
    assert (result.bounds["min"] <= counts).all() and (counts <= result.bounds["max"]).all()
    mine = result.certain_groups[result.groups.group_of_record]
    assert (result.predicted()[mine] == result.true_codes[mine]).all()


def _nursery_forest(nursery, n: int, n_trees: int, depth: int, bootstrap: bool):  # type: ignore[no-untyped-def]
    frame, _ = nursery
    frame = frame.sample(n, random_state=2).reset_index(drop=True)
    frame["class"] = frame["class"].cat.remove_unused_categories()
    inputs = [c for c in frame.columns if c != "class"]
    X = frame[inputs]
    est = RandomForestClassifier(n_trees, max_depth=depth, bootstrap=bootstrap, random_state=0, n_jobs=1)
    forest = forest_from_sklearn(est.fit(pd.get_dummies(X).astype(float), frame["class"]), X, y=frame["class"], class_attribute="class")
    threats = (
        ThreatModel(sensitive="class", known=tuple(c for c in inputs if c != "health")),
        ThreatModel(sensitive="health", known=(*[c for c in inputs if c != "health"], "class")),
    )
    return frame, forest, threats


@pytest.mark.parametrize("bootstrap", [False, True])
def test_the_truth_is_feasible_on_nursery_forests(nursery, bootstrap: bool) -> None:  # type: ignore[no-untyped-def]
    """The real records lie inside every proved bound (class sensitive with health unknown;
    health sensitive as an input, the class known), whatever the budget leaves undecided."""
    frame, forest, threats = _nursery_forest(nursery, 300, 3, 3, bootstrap)
    for threat in threats:
        result = exact_attack(forest, frame, threat=threat, time_limit=2)
        _truth_inside(result)
        assert result.details["trees_used"] == 3


@pytest.mark.slow
@pytest.mark.parametrize("bootstrap", [False, True])
def test_the_truth_is_feasible_on_larger_nursery_forests(nursery, bootstrap: bool) -> None:  # type: ignore[no-untyped-def]
    frame, forest, threats = _nursery_forest(nursery, 1000, 5, 5, bootstrap)
    for threat in threats:
        _truth_inside(exact_attack(forest, frame, threat=threat, time_limit=20))


def _equal_to_brute_force(forest, frame: pd.DataFrame, threat: ThreatModel) -> None:
    """The exact audit's bounds equal the brute force's over the forest as audited."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = exact_attack(forest, frame, threat=threat)
    keys, lo, hi = brute_forest(forest.published(threat.publish), frame, threat, tuple(result.values))
    compare(result, keys, lo, hi)
