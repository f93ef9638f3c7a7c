"""``ppdm audit --model``: forests from scikit-learn (ppdm-forest JSON), XGBoost JSON and LightGBM
text files, the format detected from the content, and one line with exit status 2 on bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from forest_files import nursery_forest_files

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Nursery (300 rows) as a CSV; a bootstrap random forest as ppdm-forest JSON; XGBoost and
    LightGBM models of the same rows in their own file formats (when installed)."""
    root = tmp_path_factory.mktemp("forest-cli")
    frame, D = nursery_forest_files(root, rows=300, trees=4, depth=4)
    y = frame["class"]
    codes = y.astype("category").cat.codes.to_numpy()
    try:
        import xgboost

        xgboost.XGBClassifier(n_estimators=3, max_depth=3, n_jobs=1).fit(D, codes).save_model(root / "model.xgb.json")
    except ImportError:
        pass
    try:
        import lightgbm

        est = lightgbm.LGBMClassifier(n_estimators=3, max_depth=3, num_leaves=8, verbose=-1, n_jobs=1).fit(D, codes)
        est.booster_.save_model(root / "model.lgb.txt")
    except ImportError:
        pass
    (root / "binary.bin").write_bytes(b"\x80\x04\x95\x00\xff\xfe")
    (root / "other.json").write_text('{"hello": 1}')
    return root


@pytest.mark.parametrize("option", ["--model", "--tree"])
def test_audit_a_forest_file(run, files, option):
    out = files / f"forest{option}.json"
    result = run(
        "audit", option, files / "forest.json", "--data", files / "train.csv", "--sensitive", "class",
        "--known", ",".join(FEATURES), "--out", out, "--top", 2,
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("threat model")
    assert "tree 0 leaf" in result.output  # provenance names tree and leaf
    summary = json.loads(out.read_text())["summary"]
    assert summary["attacker_accuracy"] >= summary["baseline"]["accuracy"] - 0.002


@pytest.mark.parametrize("model", ["model.xgb.json", "model.lgb.txt"])
def test_audit_boosted_model_files(run, files, model):
    if not (files / model).exists():
        pytest.skip(f"{model}: library not installed")
    result = run(
        "audit", "--model", files / model, "--data", files / "train.csv", "--class", "class", "--sensitive", "health",
        "--known", "parents,has_nurs,form,children", "--top", 1, "--out", files / f"{model}.out.json",
    )
    assert result.exit_code == 0, result.output
    assert "wants 'health'" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "model.xgb.json", "--class", "nope"], "'nope'"),
        (["--model", "binary.bin"], "never pickles"),
        (["--model", "other.json"], "not a model file ppdm reads"),
        (["--model", "missing.json"], "no such model file"),
        (["--model", "forest.json", "--tree", "forest.json"], "not both"),
    ],
)
def test_bad_model_files_are_one_line_and_exit_2(run, files, args, message):
    if "model.xgb.json" in args and not (files / "model.xgb.json").exists():
        pytest.skip("xgboost not installed")
    args = [files / a if a.endswith((".json", ".bin")) else a for a in args]
    result = run("audit", *args, "--data", files / "train.csv", "--sensitive", "class")
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1, result.output


def test_a_forest_audit_against_the_wrong_rows_is_refused(run, files):
    frame = pd.read_csv(files / "train.csv").iloc[::-1]
    path = files / "reversed.csv"
    frame.to_csv(path, index=False)
    result = run("audit", "--model", files / "forest.json", "--data", path, "--sensitive", "class", "--known", ",".join(FEATURES))
    assert result.exit_code == 2 and "contradicts" in result.output, result.output


def test_progress_over_the_trees_is_shown_with_progress_only(run, files):
    args = ("audit", "--model", files / "forest.json", "--data", files / "train.csv", "--sensitive", "class", "--known", ",".join(FEATURES))
    shown = run(*args, "--progress")
    assert shown.exit_code == 0, shown.output
    assert "building each tree's rows; " in shown.stderr and " trees" in shown.stderr
    assert run(*args).stderr == ""  # not a terminal under the test runner
    assert run(*args, "--progress", "--quiet").stderr == ""


def test_dropping_rows_a_forest_counted_is_refused_saying_so(run, files):
    """The forest's multiplicities count every training row: ``--missing drop`` cannot audit a
    subset, and the message says that (not that the rows are out of order)."""
    frame = pd.read_csv(files / "train.csv")
    frame.loc[[3, 17], FEATURES[0]] = None
    path = files / "holes.csv"
    frame.to_csv(path, index=False)
    args = ("audit", "--model", files / "forest.json", "--data", path, "--sensitive", "class", "--known", ",".join(FEATURES))
    result = run(*args, "--missing", "drop")
    assert result.exit_code == 2 and "would leave out 2 of the 300 training rows" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
