"""``ppdm audit --model forest.json --exact``: the proved count of a forest, with the baseline."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

from ppdm.data.datasets import load_nursery
from ppdm.tree import forest_from_sklearn, save_forest

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("exact-forest")
    frame, _ = load_nursery()
    frame = frame.sample(300, random_state=0).reset_index(drop=True)
    frame["class"] = frame["class"].cat.remove_unused_categories()
    frame.to_csv(root / "train.csv", index=False)
    frame = pd.read_csv(root / "train.csv")  # the table exactly as the CLI reads it
    X, y = frame[FEATURES], frame["class"]
    rf = RandomForestClassifier(3, max_depth=3, random_state=0, n_jobs=1).fit(pd.get_dummies(X).astype(float), y)
    save_forest(forest_from_sklearn(rf, X, y=y), root / "forest.json")
    return root


def _args(files, *extra):  # type: ignore[no-untyped-def]
    return ["audit", "--model", files / "forest.json", "--data", files / "train.csv", "--sensitive", "health",
            "--known", "parents,has_nurs,form,children,housing,finance,social,class", *extra]


def test_exact_audit_of_a_forest_next_to_the_estimate(run, files):  # type: ignore[no-untyped-def]
    result = run(*_args(files, "--exact", "--exact-time-limit", "30"))
    assert result.exit_code == 0, result.output
    assert "maximum-entropy audit" in result.output
    assert "proved certain:" in result.output and "undecided: 0" in result.output
    assert "baseline: the prior alone proves nobody certain" in result.output
    assert "the maximum-entropy estimate is certain about" in result.output


def test_exact_audit_of_a_forest_alone_as_json(run, files, tmp_path):  # type: ignore[no-untyped-def]
    out = tmp_path / "exact.json"
    result = run(*_args(files, "--exact", "--no-estimate", "--out", out))
    assert result.exit_code == 0, result.output
    assert "proved certain:" in result.output
    payload = json.loads(out.read_text())
    assert payload["summary"]["attack"] == "exact"
    assert payload["summary"]["exact"]["undecided_records"] == 0
    assert payload["summary"]["trees_used"] == 3
    group = payload["groups"][0]
    assert all(lo <= hi <= group["records"] for lo, hi in zip(group["min_count"], group["max_count"]))
