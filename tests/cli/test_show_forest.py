"""``ppdm show`` of a forest or boosted model: one line per tree, ``--tree N`` prints one tree;
a library's file (XGBoost, LightGBM) is named with its training table (``--data``)."""

from __future__ import annotations

import pytest

from forest_files import nursery_forest_files


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Nursery (300 rows), a 4-tree random forest as ppdm-forest JSON and a 3-round XGBoost model."""
    root = tmp_path_factory.mktemp("show-forest")
    frame, D = nursery_forest_files(root, rows=300, trees=4, depth=3)
    xgboost = pytest.importorskip("xgboost")
    codes = frame["class"].astype("category").cat.codes.to_numpy()
    xgboost.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1).fit(D, codes).save_model(root / "model.xgb.json")
    return root


def test_a_forest_is_shown_one_line_per_tree(run, files):
    shown = run("show", files / "forest.json")
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].startswith("sklearn-random-forest predicting 'class': 4 trees (class frequencies averaged)")
    assert [line.split(":")[0] for line in lines[1:]] == ["tree 0", "tree 1", "tree 2", "tree 3"]
    assert all("leaves, depth" in line and "splits on" in line for line in lines[1:])


def test_one_tree_of_a_forest_is_printed_with_its_node_ids(run, files):
    shown = run("show", files / "forest.json", "--tree", "2", "--disclosure", "error-rates")
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[1].startswith("tree 2:") and lines[2] == "root  [node 0]"
    assert "[node 1]" in shown.output and "[not_recom:" not in shown.output  # error rates only: no class counts


def test_a_boosted_model_shows_each_rounds_class_and_leaf_values(run, files):
    shown = run("show", files / "model.xgb.json", "--data", files / "train.csv")
    assert shown.exit_code == 0, shown.output
    assert "xgboost predicting 'class'" in shown.output and "softmax link" in shown.output
    assert "tree 0:" in shown.output and "adds to 'not_recom'" in shown.output
    one = run("show", files / "model.xgb.json", "--data", files / "train.csv", "--tree", "1")
    assert one.exit_code == 0, one.output
    leaves = [line for line in one.output.splitlines() if ": value " in line]
    assert leaves and all("rows)" in line for line in leaves[:1])  # the score and the rows of the first round's leaves


@pytest.mark.parametrize(
    "args, needle",
    [
        (["forest.json", "--tree", "4"], "forest.json holds trees 0 to 3"),
        (["model.xgb.json"], "model.xgb.json: an xgboost-json model numbers its input columns: add --data"),
    ],
)
def test_show_refuses_in_one_line(run, files, args, needle):
    shown = run("show", *[files / a if a.endswith(".json") else a for a in args])
    assert shown.exit_code == 2
    assert needle in shown.output and len(shown.output.strip().splitlines()) == 1
