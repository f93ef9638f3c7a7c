"""``ppdm attack`` on forests: ppdm-forest JSON, XGBoost JSON and LightGBM text (with the training
table as --data), provenance naming tree and leaf, and one-line errors with exit status 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

from ppdm.tree import forest_from_sklearn, save_forest

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


@pytest.fixture(scope="module")
def folder(tmp_path_factory, nursery):
    """A Nursery subset (train.csv, in fitting order), a bootstrap random forest of it, and
    XGBoost / LightGBM models of its binary version (binary.csv)."""
    out = tmp_path_factory.mktemp("forests")
    frame, _ = nursery
    rows = frame.sample(800, random_state=3).reset_index(drop=True)
    rows["class"] = rows["class"].cat.remove_unused_categories()
    rows.to_csv(out / "train.csv", index=False)
    X, y = rows.drop(columns="class"), rows["class"]
    D = pd.get_dummies(X).astype(float)
    rf = RandomForestClassifier(4, max_depth=5, random_state=2, n_jobs=1).fit(D, y)
    save_forest(forest_from_sklearn(rf, X, y=y), out / "forest.json")
    rows.iloc[[0, 1]].to_csv(out / "known.csv", index=False)
    binary = X.assign(verdict=np.where(y == "priority", "priority", "other"))  # not separable by one attribute
    binary.to_csv(out / "binary.csv", index=False)
    codes = (binary["verdict"] == "priority").astype(int)
    xgb.XGBClassifier(n_estimators=3, max_depth=3, n_jobs=1).fit(D, codes).get_booster().save_model(out / "model.xgb.json")
    lgb.LGBMClassifier(n_estimators=3, num_leaves=8, verbose=-1, n_jobs=1).fit(D, codes).booster_.save_model(out / "model.lgb.txt")
    (out / "rows.csv").write_text("a,b\n1,2\n")
    (out / "garbage.json").write_text("this is no model")
    return out


def test_attack_on_a_ppdm_forest_names_tree_and_leaf(run, folder):
    out = folder / "result.json"
    result = run("attack", "--model", folder / "forest.json", "--data", folder / "train.csv", "--out", out, "--top", "3")
    assert result.exit_code == 0, result.output
    assert "homogeneity attack on 'class'" in result.output and "trees with class counts" in result.output
    assert "tree " in result.output.split("riskiest QI groups")[1]
    data = json.loads(out.read_text())
    assert data["summary"]["trees"] == 4 and data["summary"]["certain_wrong"] == 0
    assert all(g["provenance"].startswith(("tree ", "no tree")) for g in data["groups"])
    assert data["summary"]["exposed_records"] > 0


@pytest.mark.parametrize(
    "kind, shown",
    [("uniqueness", "records alone in their leaves"), ("background", "known individuals"), ("reconstruction", "certain after subtraction")],
)
def test_the_other_leaf_attacks_on_a_forest(run, folder, kind, shown):
    extra = ["--known", folder / "known.csv"] if kind == "background" else []
    result = run("attack", "--tree", folder / "forest.json", "--data", folder / "train.csv", "--attack", kind, *extra)
    assert result.exit_code == 0, result.output
    assert shown in result.output


@pytest.mark.parametrize("model", ["model.xgb.json", "model.lgb.txt"])
def test_attack_on_library_files_with_the_training_table(run, folder, model, tmp_path):
    out = tmp_path / "r.json"
    result = run("attack", "--model", folder / model, "--data", folder / "binary.csv", "--sensitive", "verdict", "--out", out)
    assert result.exit_code == 0, result.output
    assert "homogeneity attack on 'verdict'" in result.output
    summary = json.loads(out.read_text())["summary"]
    assert summary["trees_with_class_counts"] == 1  # the first tree's counts, derived from its statistics
    assert summary["certain_wrong"] == 0 and summary["exposed_records"] > 0


@pytest.mark.parametrize("model", ["model.xgb.json", "model.lgb.txt"])
def test_a_library_file_s_sensitive_input_is_not_taken_for_its_class(run, folder, model, tmp_path):
    """--sensitive names the secret, which may be an input: the class is --class or found in the
    table (the secret once stood for the class, and the counts of 'health' did not match)."""
    out = tmp_path / "r.json"
    result = run("attack", "--model", folder / model, "--data", folder / "binary.csv", "--sensitive", "health", "--out", out)
    assert result.exit_code == 0, result.output
    assert "homogeneity attack on 'health'" in result.output
    assert json.loads(out.read_text())["summary"]["certain_wrong"] == 0
    named = run("attack", "--model", folder / model, "--data", folder / "binary.csv", "--sensitive", "health", "--class", "verdict")
    assert named.exit_code == 0, named.output
    wrong = run("attack", "--model", folder / model, "--data", folder / "binary.csv", "--class", "nowhere")
    assert wrong.exit_code == 2 and "'nowhere' is not a column" in wrong.output


def test_homogeneity_on_a_sensitive_input(run, folder, tmp_path):
    out = tmp_path / "r.json"
    result = run("attack", "--model", folder / "forest.json", "--data", folder / "train.csv", "--sensitive", "parents", "--out", out)
    assert result.exit_code == 0, result.output
    assert "homogeneity attack on 'parents'" in result.output
    summary = json.loads(out.read_text())["summary"]
    assert summary["method"] == "arc consistency" and summary["certain_wrong"] == 0


@pytest.mark.parametrize(
    "model, table, extra, message",
    [
        ("garbage.json", "train.csv", [], "garbage.json: neither JSON"),
        ("nowhere.json", "train.csv", [], "nowhere.json: no such model file"),
        ("forest.json", "train.csv", ["--sensitive", "parents", "--attack", "uniqueness"], "homogeneity attack reads each person's possible"),
        ("model.xgb.json", "rows.csv", [], "model.xgb.json: "),
        ("model.lgb.txt", "train.csv", ["--sensitive", "class"], "model.lgb.txt: "),
        ("forest.json", "known.csv", [], "multiplicities of 800 training rows, the attacker's table has 2"),
        ("forest.json", "train.csv", ["--attack", "background"], "needs --known"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, folder, model, table, extra, message):
    result = run("attack", "--model", folder / model, "--data", folder / table, *extra)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert result.output.strip().count("\n") == 0


def test_audit_of_a_forest_stops_at_its_time_limit_with_progress(run, folder, tmp_path):
    out = tmp_path / "audit.json"
    known = "parents,has_nurs,form,children,housing,finance,social"
    result = run(
        "audit", "--model", folder / "forest.json", "--data", folder / "train.csv", "--sensitive", "health", "--known", known,
        "--class-known", "--time-limit", "0", "--progress", "--out", out,
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())["summary"]
    assert summary["status"] in ("inaccurate", "optimal")
    assert "\nsolving: " in "\n" + result.stderr and " s of 0 s" in result.stderr  # the solve's phase and its time limit
    if summary["status"] == "inaccurate":  # said in words, not only by the status
        assert "the time limit ended the solve" in result.output and "only proved certainties count as certain" in result.output


def test_the_cli_default_forest_budget_is_the_library_s():
    from ppdm.attacks.models.explicit import FOREST_SECONDS
    from ppdm.cli.audit import FOREST_SECONDS as CLI_SECONDS

    assert CLI_SECONDS == FOREST_SECONDS
