"""Leaf attacks and model k-anonymity over a forest: the sound rule on a hand-made forest (no tree
alone is certain, the intersection is; a tree that may not hold a record is left out), and the
forest's spans against the brute-force enumeration of every private value on tiny forests."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from ppdm.attacks import (
    background_knowledge_attack,
    exposed_tuples,
    forest_view,
    homogeneity_attack,
    model_anonymity,
    uniqueness_attack,
)
from ppdm.attacks.core.threat import ThreatModel
from ppdm.errors import AttackError, DataError
from ppdm.tree import Attribute, CategoricalSplit, Forest, Node, Tree, forest_from_sklearn

CLASSES = ("a", "b", "c")
ATTRIBUTES = [Attribute("g", "categorical", ("x", "y", "z")), Attribute("p", "numeric")]


def _tree(groups, left, right) -> Tree:
    nodes = [
        Node(0, None, 0, 0, np.add(left, right).astype(float), CategoricalSplit("g", groups), [1, 2]),
        Node(1, 0, 1, int(np.argmax(left)), np.array(left, dtype=float)),
        Node(2, 0, 1, int(np.argmax(right)), np.array(right, dtype=float)),
    ]
    return Tree(nodes, ATTRIBUTES, CLASSES, "cls")


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame({"g": ["x", "x", "y", "z"], "p": [1.0, 1.0, 1.0, 9.0], "cls": ["a", "a", "b", "c"]})


def _forest(second_draw=(1, 1, 1, 1), first_draw=(1, 1, 1, 1)) -> Forest:
    """Tree 0 puts x, y together (a, a, b) and z alone; tree 1 puts x, z together and y alone."""
    m0, m1 = np.array(first_draw), np.array(second_draw)
    rows = [("x", "a"), ("x", "a"), ("y", "b"), ("z", "c")]

    def counts(draw, members):
        out = np.zeros(3)
        for (g, c), m in zip(rows, draw):
            if g in members:
                out[CLASSES.index(c)] += m
        return out

    t0 = _tree((("x", "y"), ("z",)), counts(m0, "xy"), counts(m0, "z"))
    t1 = _tree((("x", "z"), ("y",)), counts(m1, "xz"), counts(m1, "y"))
    return Forest([t0, t1], "mean-proba", multiplicities=[m0, m1])


def test_the_intersection_is_certain_where_no_tree_alone_is(table):
    result = homogeneity_attack(_forest(), table, ThreatModel(known=["g"]))
    by_group = dict(zip(result.groups.table["g"], range(result.groups.n_groups)))
    x = by_group["x"]
    assert result.certain_groups.all()
    assert result.posterior[x].tolist() == [1.0, 0.0, 0.0]
    assert result.provenance[x] == "tree 0 leaf 1; tree 1 leaf 1"  # both trees are needed
    assert result.provenance[by_group["y"]] == "tree 1 leaf 2"
    assert result.provenance[by_group["z"]] == "tree 0 leaf 2"
    summary = result.summary()
    assert summary["exposed_records"] == 4 and summary["certain_wrong"] == 0
    assert summary["baseline"]["majority_guess"] == "a"


def test_a_tree_that_may_not_hold_a_record_says_nothing_certain_about_it(table):
    # tree 1 never drew the second x: its leaf shows a once and c once, the group x is out of its reach
    out_of_bag = homogeneity_attack(_forest(second_draw=(1, 0, 1, 1)), table, ThreatModel(known=["g"]))
    x = list(out_of_bag.groups.table["g"]).index("x")
    assert not out_of_bag.certain_groups[x] and out_of_bag.summary()["certain_wrong"] == 0
    assert out_of_bag.posterior[x, 2] == 0 and out_of_bag.posterior[x, 1] > 0  # only tree 0 speaks
    # a row drawn twice counts twice, and the rule (positive counts) still holds
    twice = homogeneity_attack(_forest(second_draw=(1, 2, 1, 1)), table, ThreatModel(known=["g"]))
    assert twice.certain_groups.all()
    # unknown draws (a bagged forest without its multiplicities): no tree is known to hold anyone
    unknown = Forest(_forest().trees, "mean-proba")
    nothing = homogeneity_attack(unknown, table, ThreatModel(known=["g"]))
    assert not nothing.certain_groups.any()
    assert nothing.provenance[0] == "no tree known to hold these records"
    assert np.allclose(nothing.posterior, [0.5, 0.25, 0.25])  # the roots' class distribution


def test_uniqueness_and_background_knowledge_over_a_forest(table):
    forest = _forest()
    unique = uniqueness_attack(forest, table, ThreatModel(known=["g"]))
    assert unique.exposed.tolist() == [False, False, True, True]  # y and z are unique and certain
    assert unique.details["single_record_leaves"] == 2
    assert unique.details["records_alone_in_their_leaves"] == 2
    # knowing the y record (class b) empties b from tree 0's x-y leaf: x is now certain from tree 0 alone
    known = table.iloc[[2]]
    result = background_knowledge_attack(forest, table, known, threat=ThreatModel(known=["g"]))
    x = list(result.groups.table["g"]).index("x")
    assert result.provenance[x] == "tree 0 leaf 1"
    assert result.targets.tolist() == [True, True, False, True]
    assert result.details["known_individuals"] == 1 and result.summary()["certain_wrong"] == 0
    with pytest.raises(DataError, match="do not fit the published counts"):
        wrong = table.iloc[[2]].assign(cls="c")
        background_knowledge_attack(forest, table, wrong, threat=ThreatModel(known=["g"]))


def test_forest_attacks_refuse_what_they_cannot_read(table):
    with pytest.raises(DataError, match="multiplicities of 4 training rows, the attacker's table has 3"):
        homogeneity_attack(_forest(second_draw=(1, 0, 1, 1)), table.iloc[:3], ThreatModel(known=["g"]))
    labels = Forest([_tree((("x",), ("y", "z")), [1, 0, 0], [0, 1, 1])], "vote")
    labels.trees[0].disclosure = labels.trees[0].disclosure.parse("labels")
    labels.known[0] = frozenset({"labels"})
    with pytest.raises(AttackError, match="no tree of the forest publishes class counts"):
        homogeneity_attack(labels, table, ThreatModel(known=["g"]))
    with pytest.raises(DataError, match="cannot also be known"):
        homogeneity_attack(_forest(), table, ThreatModel(known=["g"], sensitive="g"))
    # a sensitive input is read through each person's possible values (ppdm.attacks.models.possible)
    on_input = homogeneity_attack(_forest(), table.drop(columns=["p"]), ThreatModel(known=["cls"], sensitive="g"))
    assert on_input.attack == "homogeneity" and on_input.sensitive == "g"


# -- model k-anonymity over a forest ----------------------------------------------------------------
def partition(keys) -> set[frozenset[int]]:
    groups: dict[object, set[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, set()).add(i)
    return {frozenset(g) for g in groups.values()}


def _tiny(seed: int, extra: bool) -> tuple[Forest, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    n = 40
    X = pd.DataFrame({
        "c1": pd.Categorical(rng.choice(["u", "v", "w"], n)),
        "c2": pd.Categorical(rng.choice(["r", "s"], n)),
        "n1": rng.integers(0, 6, n).astype(float),
        "n2": rng.integers(0, 4, n).astype(float),
    })  # fmt: skip
    y = pd.Series(pd.Categorical(rng.choice(["p", "q", "t"], n)), name="cls")
    make = ExtraTreesClassifier if extra else RandomForestClassifier
    est = make(3, max_depth=4, random_state=seed, bootstrap=not extra).fit(pd.get_dummies(X).astype(float), y)
    return forest_from_sklearn(est, X, y=y), X.assign(cls=y)


@pytest.mark.parametrize("seed", range(4))
def test_forest_spans_equal_the_brute_force_ones(seed, brute_force_forest_spans):
    forest, data = _tiny(seed, extra=seed % 2 == 1)
    for r in range(4):
        for public in itertools.combinations(["c1", "c2", "n1", "n2"], r):
            fast = model_anonymity(forest, data, ThreatModel(known=public))
            keys, populations = brute_force_forest_spans(forest, data, list(public))
            assert partition(fast.span_of) == partition(keys), public
            np.testing.assert_array_equal(fast.record_population, populations)
            assert fast.k == populations.min()
            assert all(isinstance(pair, tuple) and len(pair) == 2 for pair in fast.leaves[0])
            classes = {}
            for key, c in zip(keys, data["cls"]):
                classes.setdefault(key, set()).add(c)
            exposed = np.array([len(classes[key]) == 1 for key in keys])
            np.testing.assert_array_equal(fast.exposed, exposed)
            assert exposed_tuples(forest, data, ThreatModel(known=public)) == exposed.mean()


def test_forest_spans_name_tree_and_leaf_and_refine_each_trees_spans():
    forest, data = _tiny(11, extra=False)
    spans = model_anonymity(forest, data, ThreatModel(known=["c1", "n1"]))
    for tree in forest.trees:
        one = Forest([tree], "mean-proba")
        alone = model_anonymity(one, data, ThreatModel(known=["c1", "n1"]))
        assert alone.k >= spans.k  # more trees never merge spans
        # records sharing a forest span share their span in that tree
        assert all(len(set(alone.span_of[spans.span_of == s])) == 1 for s in range(len(spans.leaves)))
    assert {t for span in spans.leaves for t, _ in span} == set(range(forest.n_trees))
    view = forest_view(forest, data, ThreatModel(known=["c1", "n1"]))
    truth = view.true_codes
    assert truth is not None and view.candidates()[view.groups.group_of_record, truth].all()


def test_a_row_drawn_several_times_needs_as_large_a_count(table):
    # tree 0 drew the y record (class b) three times: its x-y leaf shows a twice and b three times;
    # a count of 2 cannot hold a row drawn 3 times, so y is b. Tree 1 never drew it.
    forest = _forest(first_draw=(1, 1, 3, 1), second_draw=(1, 1, 0, 1))
    result = homogeneity_attack(forest, table, ThreatModel(known=["g"]))
    y = list(result.groups.table["g"]).index("y")
    assert result.certain_groups[y] and result.provenance[y] == "tree 0 leaf 1"
    assert result.values[int(result.posterior[y].argmax())] == "b"
    # the x records (drawn once) may still be a or b in tree 0: the intersection with tree 1 decides
    x = list(result.groups.table["g"]).index("x")
    assert result.provenance[x] == "tree 0 leaf 1; tree 1 leaf 1"
    # without the multiplicities a count of 3 may be one row or three: nothing certain
    assert not homogeneity_attack(Forest(forest.trees, "mean-proba"), table, ThreatModel(known=["g"])).certain_groups.any()
