"""``ppdm audit --model model.json --xgboost-config config.json``: an XGBoost JSON model file does not
say whether its rounds subsampled the rows, so without the training configuration only the first
round is tied to the training rows; with it (``subsample=1``) every round is read."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import ppdm
from ppdm.errors import ModelImportError
from ppdm.tree.model_files import save_model

xgboost = pytest.importorskip("xgboost")

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def files(tmp_path_factory, nursery):
    frame, _ = nursery
    root = tmp_path_factory.mktemp("xgboost-config")
    train = frame[frame["class"] != "recommend"].sample(800, random_state=0).reset_index(drop=True)
    train["class"] = train["class"].astype(str)
    D = pd.get_dummies(train[FEATURES]).astype(float)
    y = train["class"].astype("category").cat.codes
    model = xgboost.XGBClassifier(n_estimators=4, max_depth=3, subsample=1.0).fit(D, y)
    model.save_model(root / "model.json")
    (root / "config.json").write_text(model.get_booster().save_config())
    train.to_csv(root / "train.csv", index=False)
    return root


def test_the_configuration_reads_every_round(run, files, tmp_path):
    """An attacker who knows four columns: without the configuration the first round alone (the
    verdict "not judged", the reason naming the option); with it every round, and a verdict."""
    args = ["audit", "--model", files / "model.json", "--data", files / "train.csv", "--known", "parents,has_nurs,form,health", "--sensitive", "finance"]
    first = run(*args)
    assert first.exit_code == 0, first.output
    assert "4 of 16 boosting trees" in first.output and "save_config()" in first.output and "not judged" in first.output
    every = run(*args, "--xgboost-config", files / "config.json", "--record", tmp_path / "record.json")
    assert every.exit_code == 0, every.output
    assert "all 16 boosting trees" in every.output and "not judged" not in every.output
    record = json.loads((tmp_path / "record.json").read_text())
    assert "config.json" in json.dumps(record)  # the configuration is among the files the record cites


def test_the_configuration_is_xgboosts_only(files, tmp_path):
    frame = pd.read_csv(files / "train.csv")
    ppdm.load_model(files / "model.json", frame, config=files / "config.json")  # a path, as the command line gives it
    forest = ppdm.load_model(files / "model.json", frame)
    save_model(forest, tmp_path / "ppdm.json")
    with pytest.raises(ModelImportError, match="XGBoost's; this is a ppdm-forest model"):
        ppdm.load_model(tmp_path / "ppdm.json", frame, config=files / "config.json")


def test_the_membership_road_says_where_the_configuration_goes(run, files):
    result = run("audit", "--membership", "--model", files / "model.json", "--population", files / "train.csv", "--xgboost-config", files / "config.json")
    assert result.exit_code == 2 and "ppdm.load_model(MODEL, candidates, config=CONFIG)" in result.output
