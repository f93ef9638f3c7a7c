"""The exact audit against brute force: every consistent dataset enumerated on tiny instances.

A dataset is consistent when its records, routed through the published tree, reproduce what the
tree publishes (class counts; or leaf sizes and error counts; or each non-empty leaf's label as
the first class of highest count) and, when published, the sensitive values' distribution; for
rule sets, when mining it with the same thresholds gives the same rules (and supports). The
oracle only uses the tree's routing and the miner, never the audit's rows.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import exact_attack
from ppdm.exact import SearchOptions
from ppdm.learn import ID3Classifier
from ppdm.rules import mine_rules
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.model import encode_categories

SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@st.composite
def tables(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(3, 5))
    a = draw(st.lists(st.sampled_from(["a0", "a1", "a2"]), min_size=n, max_size=n))
    b = draw(st.lists(st.sampled_from(["b0", "b1"]), min_size=n, max_size=n))
    s = draw(st.lists(st.sampled_from(["s0", "s1", "s2"][: draw(st.integers(2, 3))]), min_size=n, max_size=n))
    y = draw(st.lists(st.sampled_from(["n", "y"]), min_size=n, max_size=n))
    return pd.DataFrame({"A": a, "B": b, "S": s, "Y": y})


def _tree(frame: pd.DataFrame, inputs: list[str], depth: int):  # type: ignore[no-untyped-def]
    model = ID3Classifier(max_depth=depth).fit(frame[inputs], frame["Y"])
    model.tree_.class_attribute = "Y"
    return model.tree_


def _published_ok(tree, counts: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Per dataset (``counts``: datasets × nodes × classes), whether the leaves publish what the tree does."""
    ok = np.ones(counts.shape[0], dtype=bool)
    for node in tree.leaves():
        c = counts[:, node.id]
        if tree.disclosure is Disclosure.CLASS_COUNTS:
            ok &= (c == np.rint(node.counts)).all(axis=1)
        elif tree.disclosure is Disclosure.ERROR_RATES:
            ok &= (c.sum(axis=1) == round(node.n_samples)) & (c[:, node.label] == round(node.n_samples - node.n_errors))
        else:
            ok &= (c.sum(axis=1) == 0) | (np.argmax(c, axis=1) == node.label)
    return ok


def _brute_tree(tree, frame: pd.DataFrame, threat: ThreatModel, values: tuple):  # type: ignore[no-untyped-def]
    """Per record group (known columns), min and max count of each sensitive value, over every
    assignment of the unknown columns to the records that reproduces what is published."""
    known = list(threat.known)
    unknown = [c for c in ["S", "Y", "A", "B"] if c not in known and (c in (threat.sensitive, "Y") or c in tree.attributes)]
    domains = [values if c == threat.sensitive else tree.classes if c == "Y" else tuple(tree.attributes[c].categories) for c in unknown]
    combos = list(itertools.product(*domains))
    n, m = len(frame), len(combos)
    # every record under every combination of its unknowns, routed once
    wide = frame.loc[np.repeat(np.arange(n), m)].reset_index(drop=True)
    for j, c in enumerate(unknown):
        wide[c] = [combo[j] for combo in combos] * n
    leaf = tree.apply(wide).reshape(n, m)
    klass = encode_categories(wide["Y"], tree.classes).reshape(n, m)
    sens = encode_categories(wide[threat.sensitive], values).reshape(n, m)
    pick = np.stack(np.meshgrid(*[np.arange(m)] * n, indexing="ij"), axis=-1).reshape(-1, n)  # datasets × records
    rows = np.arange(n)
    d_leaf, d_class, d_sens = leaf[rows, pick], klass[rows, pick], sens[rows, pick]
    k, n_d = len(tree.classes), len(pick)
    key = (np.arange(n_d)[:, None] * tree.n_nodes + d_leaf) * k + d_class
    counts = np.bincount(key.ravel(), minlength=n_d * tree.n_nodes * k).reshape(n_d, tree.n_nodes, k)
    ok = _published_ok(tree, counts)
    if threat.sa_published:
        true_sa = np.bincount(encode_categories(frame[threat.sensitive], values), minlength=len(values))
        per = np.stack([(d_sens == v).sum(axis=1) for v in range(len(values))], axis=1)
        ok &= (per == true_sa).all(axis=1)
    assert ok.any()  # the truth is consistent
    keys = frame[known].astype(str).agg("|".join, axis=1) if known else pd.Series([""] * n)
    return keys, *_minmax(keys, d_sens[ok], len(values))


def _minmax(keys: pd.Series, sens: np.ndarray, n_values: int) -> tuple[dict, dict]:
    lo, hi = {}, {}
    for key in pd.unique(keys):
        rows = np.flatnonzero((keys == key).to_numpy())
        cnt = np.stack([(sens[:, rows] == v).sum(axis=1) for v in range(n_values)], axis=1)
        lo[key], hi[key] = cnt.min(axis=0), cnt.max(axis=0)
    return lo, hi


def _compare(result, keys: pd.Series, lo: dict, hi: dict) -> None:  # type: ignore[no-untyped-def]
    first = np.zeros(result.groups.n_groups, dtype=int)
    first[result.groups.group_of_record[::-1]] = np.arange(result.groups.n_records)[::-1]
    for g in range(result.groups.n_groups):
        key = keys.iloc[first[g]]
        assert result.bounds["min"][g].tolist() == lo[key].tolist(), (g, key)
        assert result.bounds["max"][g].tolist() == hi[key].tolist(), (g, key)
        n = result.groups.counts[g]
        assert bool(result.certain_groups[g]) == bool((lo[key] == n).any())
    assert not result.bounds["undecided"].any()


CASES = [
    # (sensitive, known, tree inputs, sa published)
    ("Y", ["A", "B"], ["A", "B"], False),
    ("Y", ["A"], ["A", "B"], False),
    ("Y", ["A", "B"], ["A", "B"], True),
    ("S", ["A", "B", "Y"], ["A", "B", "S"], False),
    ("S", ["A", "B", "Y"], ["A", "B", "S"], True),
    ("S", ["A", "B"], ["A", "S"], False),
    ("S", ["A"], ["A", "B", "S"], True),
]


@pytest.mark.parametrize("publish", ["class-counts", "error-rates", "labels"])
@pytest.mark.parametrize("case", range(len(CASES)))
@given(frame=tables(), depth=st.integers(1, 2))
@SETTINGS
def test_tree_bounds_equal_brute_force(publish: str, case: int, frame: pd.DataFrame, depth: int) -> None:
    sensitive, known, inputs, sa = CASES[case]
    tree = _tree(frame, inputs, depth)
    threat = ThreatModel(sensitive=sensitive, known=tuple(known), publish=publish, sa_published=sa).resolve(frame, "Y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = exact_attack(tree, frame, threat=threat)
    keys, lo, hi = _brute_tree(tree.published(publish), frame, threat, tuple(result.values))
    _compare(result, keys, lo, hi)


@pytest.mark.parametrize("engine", ["cp-sat", "milp"])
@pytest.mark.parametrize("case", [3, 5, 6])
@given(frame=tables(), depth=st.integers(1, 2))
@SETTINGS
def test_certainty_detail_settles_certain_and_impossible_values_exactly(engine: str, case: int, frame: pd.DataFrame, depth: int) -> None:
    """``detail="certainty"`` on the integer search: who is certain equals brute force; every
    minimum and maximum is a sound interval around the exact one."""
    sensitive, known, inputs, sa = CASES[case]
    tree = _tree(frame, inputs, depth)
    threat = ThreatModel(sensitive=sensitive, known=tuple(known), sa_published=sa).resolve(frame, "Y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = exact_attack(tree, frame, threat=threat, method="search", detail="certainty", options=SearchOptions(engine=engine))
    keys, lo, hi = _brute_tree(tree, frame, threat, tuple(result.values))
    first = np.zeros(result.groups.n_groups, dtype=int)
    first[result.groups.group_of_record[::-1]] = np.arange(result.groups.n_records)[::-1]
    for g in range(result.groups.n_groups):
        key, n = keys.iloc[first[g]], result.groups.counts[g]
        mins, maxs = result.bounds["min"][g], result.bounds["max"][g]
        assert bool(result.certain_groups[g]) == bool((lo[key] == n).any()), (g, key)
        assert (mins <= lo[key]).all() and (maxs >= hi[key]).all(), (g, key)  # the rest: sound
    assert not result.bounds["undecided"].any()


@pytest.mark.parametrize("method", ["network", "search"])
@given(frame=tables())
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_network_and_search_agree_with_brute_force(method: str, frame: pd.DataFrame) -> None:
    """The flow path and the CP-SAT path on the same network rows (one tree, class counts)."""
    tree = _tree(frame, ["A", "B", "S"], 2)
    threat = ThreatModel(sensitive="S", known=("A", "Y"), publish="class-counts", sa_published=False).resolve(frame, "Y")
    result = exact_attack(tree, frame, threat=threat, method=method)
    assert result.details["exact"]["method"] == ("network" if method == "network" else "cp-sat")
    keys, lo, hi = _brute_tree(tree, frame, threat, tuple(result.values))
    _compare(result, keys, lo, hi)


def _brute_rules(rules, frame: pd.DataFrame, qis: list[str]):  # type: ignore[no-untyped-def]
    values = tuple(rules.values)

    def seen(rule_set):  # type: ignore[no-untyped-def]
        return {(r.antecedent, r.consequent, round(r.support * len(frame)) if rules.publish == "exact" else None) for r in rule_set.rules}

    published = seen(rules)
    keep = []
    datasets = np.array(list(itertools.product(range(len(values)), repeat=len(frame))))
    for choice in datasets:
        trial = frame.assign(S=[values[i] for i in choice])
        keep.append(seen(mine_rules(trial, qis, "S", rules.min_support, rules.min_confidence, values=values)) == published)
    keys = frame[qis].astype(str).agg("|".join, axis=1)
    return keys, *_minmax(keys, datasets[np.array(keep)], len(values))


@pytest.mark.parametrize("publish", ["exact", "thresholds"])
@given(frame=tables(), support=st.sampled_from([0.2, 0.3, 0.4]), confidence=st.sampled_from([0.5, 0.6, 0.8]))
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_rule_set_bounds_equal_brute_force(publish: str, frame: pd.DataFrame, support: float, confidence: float) -> None:
    values = tuple(sorted(frame["S"].unique()))
    rules = mine_rules(frame, ["A", "B"], "S", support, confidence, values=values).published(publish)
    result = exact_attack(rules, frame)
    keys, lo, hi = _brute_rules(rules, frame, ["A", "B"])
    _compare(result, keys, lo, hi)


#: Every component goes to HiGHS branch and bound (``ppdm.exact.milp``), however small.
MILP_EVERYWHERE = SearchOptions(engine="auto", milp_min_vars=0)


@pytest.mark.parametrize("publish", ["class-counts", "error-rates", "labels"])
@pytest.mark.parametrize("case", [1, 2, 4, 6])
@given(frame=tables(), depth=st.integers(1, 2))
@SETTINGS
def test_milp_tree_bounds_equal_brute_force(publish: str, case: int, frame: pd.DataFrame, depth: int) -> None:
    """The branch-and-bound engine, strict label rows included, against every consistent dataset."""
    sensitive, known, inputs, sa = CASES[case]
    tree = _tree(frame, inputs, depth)
    threat = ThreatModel(sensitive=sensitive, known=tuple(known), publish=publish, sa_published=sa).resolve(frame, "Y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = exact_attack(tree, frame, threat=threat, method="search", options=MILP_EVERYWHERE)
    assert result.details["exact"]["components"] == 0 or result.details["exact"]["method"] == "milp"
    keys, lo, hi = _brute_tree(tree.published(publish), frame, threat, tuple(result.values))
    _compare(result, keys, lo, hi)


@pytest.mark.parametrize("publish", ["exact", "thresholds"])
@given(frame=tables(), support=st.sampled_from([0.2, 0.3, 0.4]), confidence=st.sampled_from([0.5, 0.6, 0.8]))
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_milp_rule_set_bounds_equal_brute_force(publish: str, frame: pd.DataFrame, support: float, confidence: float) -> None:
    values = tuple(sorted(frame["S"].unique()))
    rules = mine_rules(frame, ["A", "B"], "S", support, confidence, values=values).published(publish)
    result = exact_attack(rules, frame, options=MILP_EVERYWHERE)
    keys, lo, hi = _brute_rules(rules, frame, ["A", "B"])
    _compare(result, keys, lo, hi)


#: Branch and bound on every component, no record moves, and the neighbourhood search after
#: every dataset branch and bound finds.
LOCAL_EVERYWHERE = SearchOptions(engine="auto", milp_min_vars=0, stall=10**9, record_moves=False)


@pytest.mark.parametrize("publish", ["exact", "thresholds"])
@given(frame=tables(), support=st.sampled_from([0.2, 0.3, 0.4]), confidence=st.sampled_from([0.5, 0.6, 0.8]))
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_neighbourhood_search_keeps_rule_set_bounds_exact(publish: str, frame: pd.DataFrame, support: float, confidence: float) -> None:
    values = tuple(sorted(frame["S"].unique()))
    rules = mine_rules(frame, ["A", "B"], "S", support, confidence, values=values).published(publish)
    result = exact_attack(rules, frame, options=LOCAL_EVERYWHERE)
    keys, lo, hi = _brute_rules(rules, frame, ["A", "B"])
    _compare(result, keys, lo, hi)


@pytest.mark.parametrize("publish", ["class-counts", "labels"])
@pytest.mark.parametrize("case", [2, 4, 6])
@given(frame=tables(), depth=st.integers(1, 2))
@SETTINGS
def test_neighbourhood_search_keeps_tree_bounds_exact(publish: str, case: int, frame: pd.DataFrame, depth: int) -> None:
    sensitive, known, inputs, sa = CASES[case]
    tree = _tree(frame, inputs, depth)
    threat = ThreatModel(sensitive=sensitive, known=tuple(known), publish=publish, sa_published=sa).resolve(frame, "Y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = exact_attack(tree, frame, threat=threat, method="search", options=LOCAL_EVERYWHERE)
    keys, lo, hi = _brute_tree(tree.published(publish), frame, threat, tuple(result.values))
    _compare(result, keys, lo, hi)


@pytest.mark.parametrize("case", [3, 4, 6])
@given(frame=tables(), depth=st.integers(1, 2))
@SETTINGS
def test_freed_groups_and_propagation_keep_tree_certainty_exact(case: int, frame: pd.DataFrame, depth: int) -> None:
    """With the freed-groups stage on (two and four groups freed) after propagation and the
    cycles: who is certain still equals brute force, every bound sound."""
    sensitive, known, inputs, sa = CASES[case]
    tree = _tree(frame, inputs, depth)
    threat = ThreatModel(sensitive=sensitive, known=tuple(known), sa_published=sa).resolve(frame, "Y")
    options = SearchOptions(freed_groups=True, freed_sizes=(2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = exact_attack(tree, frame, threat=threat, method="search", detail="certainty", options=options)
    keys, lo, hi = _brute_tree(tree, frame, threat, tuple(result.values))
    first = np.zeros(result.groups.n_groups, dtype=int)
    first[result.groups.group_of_record[::-1]] = np.arange(result.groups.n_records)[::-1]
    for g in range(result.groups.n_groups):
        key, n = keys.iloc[first[g]], result.groups.counts[g]
        assert bool(result.certain_groups[g]) == bool((lo[key] == n).any()), (g, key)
        assert (result.bounds["min"][g] <= lo[key]).all() and (result.bounds["max"][g] >= hi[key]).all(), (g, key)
    assert not result.bounds["undecided"].any()
