"""Structured provenance: every audit of a tree or forest gives each group the (tree, leaf) pairs
it can reach as arrays (``AttackResult.leaf_pairs``), equal to routing the group's records through
each tree, and the JSON carries them per group."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import RandomForestClassifier
from threadpoolctl import threadpool_limits

from ppdm.attacks import homogeneity_attack, reconstruction_attack
from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import exact_attack
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.learn import ID3Classifier
from ppdm.tree import Tree, forest_from_sklearn
from ppdm.tree.leaf_pairs import LeafPairs
from ppdm.tree.routing import reachable_leaves

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


# -- the structure ---------------------------------------------------------------------------------


def test_triples_are_sorted_and_deduplicated_per_group():
    pairs = LeafPairs.from_triples([1, 0, 1, 1, 2, 1], [1, 0, 0, 1, 0, 0], [4, 3, 9, 4, 5, 2], n_groups=4)
    assert pairs.offsets.tolist() == [0, 1, 4, 5, 5]
    assert [pairs.of(g) for g in range(4)] == [[(0, 3)], [(0, 2), (0, 9), (1, 4)], [(0, 5)], []]
    assert pairs.leaves_in_tree().tolist() == [1, 2, 2, 1, 1]  # group 1 reaches two leaves of tree 0
    assert pairs.n_trees == 2 and pairs.group.tolist() == [0, 1, 1, 1, 2]
    assert LeafPairs.from_lists(pairs.to_lists()) == pairs
    tree, leaf, incidence = pairs.incidence()
    assert list(zip(tree.tolist(), leaf.tolist())) == [(0, 2), (0, 3), (0, 5), (0, 9), (1, 4)]
    assert incidence.toarray().tolist() == [[0, 1, 0, 0, 0], [1, 0, 0, 1, 1], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0]]


def test_spans_and_joint_leaves_give_the_same_pairs():
    span0 = sp.csr_matrix(np.array([[0, 1, 1], [0, 0, 1]]))
    span1 = sp.csr_matrix(np.array([[0, 0, 0, 1], [1, 0, 0, 0]]))
    from_spans = LeafPairs.from_spans([span0, span1])
    assert from_spans.to_lists() == [[[0, 1], [0, 2], [1, 3]], [[0, 2], [1, 0]]]
    blocks = np.array([[1, 3], [2, 3], [2, 0]])  # joint leaves (leaf in tree 0, leaf in tree 1)
    reach = sp.csr_matrix(np.array([[1, 1, 0], [0, 0, 1]]))
    assert LeafPairs.from_reach(reach, blocks) == from_spans
    assert LeafPairs.from_reach(reach, np.array([5, 7, 7])).to_lists() == [[[0, 5], [0, 7]], [[0, 7]]]


@pytest.mark.parametrize("bad", [[[[0, 1, 2]]], [[["0", 1]]], [[[0.5, 1]]], [[[0, -1]]], [[0]]])
def test_bad_json_pairs_are_refused_in_one_line(bad):
    with pytest.raises(ValueError, match="leaf pairs"):
        LeafPairs.from_lists(bad)


# -- the attacks -------------------------------------------------------------------------------------


def _expected(trees: list[Tree], data: pd.DataFrame, known: list[str], group_of_record: np.ndarray, n_groups: int) -> set:
    """Every (group, tree, leaf) that routing the group's records through each tree gives: the
    record's leaf (``apply``) when every split attribute is known, else every leaf reachable with
    the unknown attributes free."""
    out = set()
    for t, tree in enumerate(trees):
        splits = {n.split.attribute for n in tree.nodes if n.split is not None}
        if splits <= set(known):
            records, leaves = np.arange(len(data)), tree.apply(data)
        else:
            coo = reachable_leaves(tree, data[known], known=known).tocoo()
            records, leaves = coo.row, coo.col
        out |= set(zip(group_of_record[records].tolist(), [t] * len(records), leaves.tolist()))
    return out


def _triples(result: AttackResult) -> set:
    pairs = result.leaf_pairs
    assert pairs is not None and pairs.n_groups == result.groups.n_groups
    return set(zip(pairs.group.tolist(), pairs.tree.tolist(), pairs.leaf.tolist()))


@pytest.fixture(scope="module")
def nursery_forest(nursery):
    frame, roles = nursery
    data = frame.sample(400, random_state=1).reset_index(drop=True)[[*FEATURES, roles.class_attribute]]
    data[roles.class_attribute] = data[roles.class_attribute].cat.remove_unused_categories()
    X, y = data[FEATURES], data[roles.class_attribute]
    with threadpool_limits(1):
        rf = RandomForestClassifier(6, max_depth=4, random_state=0, n_jobs=1).fit(pd.get_dummies(X).astype(float), y)
    return forest_from_sklearn(rf, X, y=y), data, roles.class_attribute


def _json_round_trip(result: AttackResult) -> None:
    data = json.loads(json.dumps(result.to_dict()))
    assert LeafPairs.from_lists([g["leaf_pairs"] for g in data["groups"]]) == result.leaf_pairs
    assert all(isinstance(g["provenance"], str) for g in data["groups"])


@pytest.mark.parametrize("known", [FEATURES, FEATURES[:-2]], ids=["every split known", "two unknown"])
def test_a_forest_maxent_audit_names_the_leaves_its_groups_reach_in_every_tree(nursery_forest, known):
    forest, data, cls = nursery_forest
    result = maxent_attack(forest, data, threat=ThreatModel(sensitive=cls, known=tuple(known)))
    groups = result.groups
    assert _triples(result) == _expected(list(forest.trees), data, known, groups.group_of_record, groups.n_groups)
    assert set(result.leaf_pairs.tree.tolist()) == set(range(forest.n_trees))
    assert (result.leaf_pairs.leaves_in_tree() > 1).any() == (known != FEATURES)  # unknown splits widen the span
    _json_round_trip(result)


@pytest.mark.parametrize("known", [FEATURES, FEATURES[:-2]], ids=["every split known", "two unknown"])
def test_forest_leaf_attacks_name_the_leaves_of_every_tree(nursery_forest, known):
    forest, data, _ = nursery_forest
    for result in (homogeneity_attack(forest, data, ThreatModel(known=known)), reconstruction_attack(forest, data, ThreatModel(known=known))):
        groups = result.groups
        assert _triples(result) == _expected(list(forest.trees), data, known, groups.group_of_record, groups.n_groups)
        assert (result.leaf_pairs.leaves_in_tree() > 1).any() == (known != FEATURES)
        _json_round_trip(result)


def test_an_exact_forest_audit_names_the_leaves_too(nursery_forest):
    _, data, cls = nursery_forest
    small = data.iloc[:150].reset_index(drop=True)
    X = small[FEATURES]
    with threadpool_limits(1):
        rf = RandomForestClassifier(3, max_depth=3, random_state=0, n_jobs=1).fit(pd.get_dummies(X).astype(float), small[cls])
    forest = forest_from_sklearn(rf, X, y=small[cls])
    result = exact_attack(forest, small, threat=ThreatModel(sensitive=cls, known=tuple(FEATURES)), time_limit=60)
    groups = result.groups
    assert _triples(result) == _expected(list(forest.trees), small, FEATURES, groups.group_of_record, groups.n_groups)
    assert result.provenance[0] in ("proved certain", "proved not certain", "undecided")  # the text stays for display
    _json_round_trip(result)


@pytest.fixture(scope="module")
def nursery_tree(nursery):
    frame, roles = nursery
    data = frame.sample(600, random_state=2).reset_index(drop=True)[[*FEATURES, roles.class_attribute]]
    tree = ID3Classifier(max_depth=4).fit(data[FEATURES], data[roles.class_attribute]).tree_
    tree.class_attribute = roles.class_attribute
    return tree, data, roles.class_attribute


@pytest.mark.parametrize("factored", [False, True], ids=["slots", "factored"])
@pytest.mark.parametrize("known", [FEATURES, FEATURES[1:]], ids=["every split known", "parents unknown"])
def test_a_tree_audit_names_tree_0_and_the_leaves_of_its_span(nursery_tree, known, factored):
    tree, data, cls = nursery_tree
    result = maxent_attack(tree, data, threat=ThreatModel(sensitive=cls, known=tuple(known)), factored=factored)
    groups = result.groups
    assert _triples(result) == _expected([tree], data, known, groups.group_of_record, groups.n_groups)
    assert (result.leaf_pairs.tree == 0).all()
    assert (result.leaf_pairs.leaves_in_tree() > 1).any() == (known != FEATURES)
    _json_round_trip(result)


def test_tree_leaf_attacks_name_tree_0(nursery_tree):
    tree, data, _ = nursery_tree
    known = FEATURES[1:]
    result = homogeneity_attack(tree, data, ThreatModel(known=known))
    groups = result.groups
    assert _triples(result) == _expected([tree], data, known, groups.group_of_record, groups.n_groups)
    _json_round_trip(result)
