"""The Forest model: how trees combine, what each publishes, and ppdm-forest JSON round trips
with errors that name the field at fault."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

from ppdm.errors import PpdmError, TreeFormatError
from ppdm.learn import C45Classifier, ID3Classifier
from ppdm.tree import (
    Disclosure,
    Forest,
    forest_from_dict,
    forest_from_sklearn,
    forest_to_dict,
    load_forest,
    load_tree,
    save_forest,
    save_tree,
    tree_from_dict,
    tree_to_dict,
)


@pytest.fixture(scope="module")
def nursery_vote(nursery):
    """Three ID3 trees on bootstrap samples of Nursery, with their multiplicities."""
    frame, roles = nursery
    X, y = frame.drop(columns=roles.class_attribute), frame[roles.class_attribute]
    rng = np.random.default_rng(0)
    trees, mult = [], []
    for _ in range(3):
        rows = rng.integers(0, len(frame), len(frame))
        trees.append(ID3Classifier(max_depth=3).fit(X.iloc[rows], y.iloc[rows]).tree_)
        mult.append(np.bincount(rows, minlength=len(frame)))
    return Forest(trees, "vote", multiplicities=mult, algorithm="id3-bagging"), X, y


@pytest.fixture(scope="module")
def sklearn_forests(adult_split):
    rows = np.arange(3000)
    X, D, y = adult_split.X.iloc[rows], adult_split.D.iloc[rows], adult_split.y.iloc[rows]
    rf = RandomForestClassifier(3, max_depth=4, random_state=0).fit(D, y)
    gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(D, y)
    return forest_from_sklearn(rf, X, y=y), forest_from_sklearn(gb, X, y=y)


def test_a_vote_forest_predicts_the_majority_of_its_trees(nursery_vote):
    forest, X, _ = nursery_vote
    votes = np.stack([t.predict(X) for t in forest.trees], axis=1)
    proba = forest.predict_proba(X)
    for j, c in enumerate(forest.classes):
        assert np.allclose(proba[:, j], (votes == c).mean(axis=1))
    assert np.array_equal(forest.predict(X), np.asarray(forest.classes, dtype=object)[np.argmax(proba, axis=1)])
    assert forest.known == [frozenset({"labels", "class-counts", "sample-counts"})] * 3
    assert forest.publishes(1) == (Disclosure.CLASS_COUNTS, forest.known[1])
    assert forest.n_records == len(X) and forest.apply(X).shape == (len(X), 3)


def test_what_a_tree_publishes_follows_its_disclosure_and_its_nodes(nursery_vote, sklearn_forests):
    forest, _, _ = nursery_vote
    rates = Forest([t.published("error-rates") for t in forest.trees], "vote")
    assert rates.known[0] == {"labels", "error-rates", "sample-counts"}
    assert Forest([t.published("labels") for t in forest.trees], "vote").known[0] == {"labels"}
    _, gb = sklearn_forests
    assert gb.known[0] == {"class-counts", "sample-counts", "leaf-values"}  # derived from the first tree
    assert gb.known[1] == {"sample-counts", "leaf-values"}  # labels are placeholders in a boosted tree


def test_inconsistent_forests_are_refused(nursery_vote, sklearn_forests):
    forest, _, _ = nursery_vote
    rf, gb = sklearn_forests
    with pytest.raises(PpdmError, match=r"^tree 1 has the classes"):
        Forest([forest.trees[0], rf.trees[0]], "vote")
    with pytest.raises(PpdmError, match="unknown combine 'sum'"):
        Forest(forest.trees, "sum")
    with pytest.raises(PpdmError, match="the logistic link needs 2 classes, the trees have 5"):
        Forest(forest.trees, "additive", link="logistic")
    with pytest.raises(PpdmError, match="link, base_score and outputs belong to additive forests"):
        Forest(forest.trees, "vote", link="softmax")
    with pytest.raises(PpdmError, match=r"tree 0, leaf \d+: an additive forest needs a finite value"):
        Forest(rf.trees, "additive", link="logistic")
    with pytest.raises(PpdmError, match="outputs must give each of the 3 trees a score index below 1"):
        Forest(gb.trees, "additive", link="logistic", outputs=[0, 1, 0])
    with pytest.raises(PpdmError, match="count different numbers of training rows"):
        Forest(forest.trees, "vote", multiplicities=[np.ones(3, int), np.ones(4, int), None])


@pytest.mark.parametrize("which", ["vote", "mean-proba", "additive"])
def test_json_round_trip_keeps_every_prediction_and_claim(which, nursery_vote, sklearn_forests, adult_split, tmp_path):
    forest, X = {
        "vote": (nursery_vote[0], nursery_vote[1]),
        "mean-proba": (sklearn_forests[0], adult_split.X_test),
        "additive": (sklearn_forests[1], adult_split.X_test),
    }[which]
    save_forest(forest, tmp_path / "f.json")
    back = load_forest(tmp_path / "f.json")
    assert forest_to_dict(back) == forest_to_dict(forest)
    assert np.array_equal(back.predict_proba(X), forest.predict_proba(X))
    assert back.known == forest.known and back.combine == which
    assert all(np.array_equal(a, b) for a, b in zip(back.multiplicities, forest.multiplicities, strict=True))


def test_boosted_tree_nodes_keep_values_and_covers_and_old_tree_files_still_load(sklearn_forests, tmp_path, d1):
    _, gb = sklearn_forests
    tree = gb.trees[1]
    save_tree(tree, tmp_path / "t.json")
    back = load_tree(tmp_path / "t.json")
    assert [n.value for n in back.nodes] == [n.value for n in tree.nodes]
    old = tree_to_dict(C45Classifier().fit(d1.drop(columns="Salary"), d1["Salary"]).tree_)
    assert all("value" not in n and "cover" not in n for n in old["nodes"])
    assert all(n.value is None and n.cover is None for n in tree_from_dict(old).nodes)
    broken = copy.deepcopy(tree_to_dict(tree))
    broken["nodes"][0]["cover"] = -1.0
    with pytest.raises(TreeFormatError, match=r"^nodes\[0\]\.cover: expected a non-negative number"):
        tree_from_dict(broken)


def _mutations():
    def leaf_of(d):
        return next(i for i, n in enumerate(d["trees"][0]["nodes"]) if "split" not in n)

    return [
        (lambda d: d.update(format="ppdm-tree"), "format"),
        (lambda d: d.update(version=2), "version"),
        (lambda d: d.update(combine="sum"), "combine"),
        (lambda d: d.update(link="probit"), "link"),
        (lambda d: d.update(base_score=[0.1, 0.2]), "base_score"),
        (lambda d: d.update(base_score=["x"]), "base_score"),
        (lambda d: d.update(trees=[]), "trees"),
        (lambda d: d["trees"][1].update(output=3), "trees[1].output"),
        (lambda d: d["trees"][0].update(known=["labels", "secrets"]), "trees[0].known[1]"),
        (lambda d: d["trees"][0].update(known=["leaf-values"]), "trees[0].known"),
        (lambda d: d["trees"][0].update(disclosure="everything"), "trees[0].disclosure"),
        (lambda d: d["trees"][0].update(multiplicities=[1, -2]), "trees[0].multiplicities"),
        (lambda d: d["trees"][2].update(multiplicities=[1, 1]), "trees[2].multiplicities"),
        (lambda d: d["trees"][0]["nodes"][0]["split"].update(attribute="nope"), "trees[0].nodes[0].split.attribute"),
        (lambda d: d["trees"][0]["nodes"][leaf_of(d)].pop("value"), "trees[0].nodes[2].value"),
        (lambda d: d["trees"][0]["nodes"][1].update(parent=7), "trees[0].nodes[1].parent"),
    ]


@pytest.mark.parametrize("mutate, field", _mutations())
def test_malformed_forest_files_name_the_field(sklearn_forests, mutate, field):
    data = json.loads(json.dumps(forest_to_dict(sklearn_forests[1])))
    mutate(data)
    with pytest.raises(TreeFormatError) as err:
        forest_from_dict(data)
    assert str(err.value).startswith(field), str(err.value)


def test_unreadable_forest_files_are_reported_with_their_path(tmp_path):
    with pytest.raises(TreeFormatError, match="no such forest file"):
        load_forest(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "ppdm-forest", "version": 1, "combine": "vote", "classes": []}')
    with pytest.raises(TreeFormatError, match=r"bad.json: classes: expected at least one class"):
        load_forest(bad)
