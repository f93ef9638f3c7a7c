"""JSON round trips keep every prediction; malformed files name the field at fault."""

import json

import numpy as np
import pytest

from ppdm.errors import TreeFormatError
from ppdm.learn import C45Classifier, ID3Classifier
from ppdm.tree import Disclosure, load_tree, save_tree, tree_from_dict, tree_to_dict


@pytest.fixture
def d1_tree(d1):
    return ID3Classifier(min_samples_split=3).fit(d1.drop(columns="Salary"), d1["Salary"]).tree_


def test_round_trip_keeps_structure_counts_and_predictions(d1, d1_tree, tmp_path):
    path = tmp_path / "tree.json"
    save_tree(d1_tree, path)
    back = load_tree(path)
    assert tree_to_dict(back) == tree_to_dict(d1_tree)
    assert np.array_equal(back.predict(d1), d1_tree.predict(d1))
    assert back.root.candidates == ("Education", "Country", "Gender")
    assert back.criterion == "entropy" and back.algorithm == "id3"


def test_round_trip_on_adult_c45_keeps_every_prediction(adult_train, adult_test, tmp_path):
    train, roles = adult_train
    test, _ = adult_test
    X = train.drop(columns=[roles.class_attribute])
    tree = C45Classifier().fit(X, train[roles.class_attribute]).tree_
    save_tree(tree, tmp_path / "adult.json")
    back = load_tree(tmp_path / "adult.json")
    assert np.array_equal(back.predict(test), tree.predict(test))
    assert np.array_equal(back.apply(test), tree.apply(test))


def test_disclosure_levels_write_only_what_they_reveal(d1_tree):
    labels = tree_to_dict(d1_tree, disclosure="labels")
    rates = tree_to_dict(d1_tree, disclosure=Disclosure.ERROR_RATES)
    counts = tree_to_dict(d1_tree, disclosure="class-counts")
    assert all("counts" not in n and "n_samples" not in n for n in labels["nodes"])
    assert all("counts" not in n and "n_errors" in n for n in rates["nodes"])
    assert all("counts" in n for n in counts["nodes"])
    back = tree_from_dict(rates)
    assert back.disclosure is Disclosure.ERROR_RATES
    assert [n.n_errors for n in back.leaves()] == [n.n_errors for n in d1_tree.leaves()]
    assert all(n.counts is None for n in back.nodes)


def _broken(d1_tree, mutate):
    data = json.loads(json.dumps(tree_to_dict(d1_tree)))
    mutate(data)
    return data


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d.pop("version"), "version"),
        (lambda d: d.update(version=99), "version"),
        (lambda d: d.update(format="other"), "format"),
        (lambda d: d["nodes"][0]["split"].update(attribute="Age"), "nodes[0].split.attribute"),
        (lambda d: d["nodes"][0]["split"]["groups"][0].append("PhD"), "nodes[0].split.groups[0]"),
        (lambda d: d["nodes"][0].update(children=[1]), "nodes[0].children"),
        (lambda d: d["nodes"][1].update(label="rich"), "nodes[1].label"),
        (lambda d: d["nodes"][1].update(counts=[1, -1]), "nodes[1].counts"),
        (lambda d: d["nodes"][2].update(parent=5), "nodes[2].parent"),
        (lambda d: d["attributes"][0].update(kind="ordinal"), "attributes[0].kind"),
        (lambda d: d["nodes"][0]["split"].update(kind="threshold", threshold="abc"), "nodes[0].split.kind"),
    ],
)
def test_malformed_file_names_the_field(d1_tree, mutate, field):
    with pytest.raises(TreeFormatError) as err:
        tree_from_dict(_broken(d1_tree, mutate))
    assert str(err.value).startswith(field + ":")


def test_unreadable_files_are_reported_with_their_path(tmp_path):
    with pytest.raises(TreeFormatError, match="no such tree file"):
        load_tree(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TreeFormatError, match=r"bad.json: not valid JSON \(line 1"):
        load_tree(bad)
