"""``ppdm audit --exact``: the proved count next to the estimate, alone, as JSON, and bad inputs."""

from __future__ import annotations

import json

import pytest

from ppdm.data.datasets import load_nursery
from ppdm.learn import C45Classifier
from ppdm.tree import save_tree


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("exact")
    frame, _ = load_nursery()
    frame = frame.sample(2000, random_state=1).reset_index(drop=True)
    frame.to_csv(root / "train.csv", index=False)
    features = [c for c in frame.columns if c != "class"]
    tree = C45Classifier(max_depth=4).fit(frame[features], frame["class"]).tree_
    tree.class_attribute = "class"
    save_tree(tree, root / "tree.json")
    return root


def _args(files, *extra):  # type: ignore[no-untyped-def]
    return ["audit", "--tree", files / "tree.json", "--data", files / "train.csv", "--sensitive", "health",
            "--known", "parents,has_nurs,form,children,housing,finance,social,class", "--no-sa", *extra]


def test_exact_next_to_the_estimate(run, files):  # type: ignore[no-untyped-def]
    result = run(*_args(files, "--exact"))
    assert result.exit_code == 0, result.output
    assert "maximum-entropy audit" in result.output
    assert "proved certain:" in result.output and "undecided: 0" in result.output
    assert "baseline: the prior alone proves nobody certain" in result.output


def test_exact_alone_as_json(run, files, tmp_path):  # type: ignore[no-untyped-def]
    out = tmp_path / "exact.json"
    result = run(*_args(files, "--exact", "--no-estimate", "--out", out))
    assert result.exit_code == 0, result.output
    assert "maximum-entropy audit" not in result.output
    payload = json.loads(out.read_text())
    assert payload["summary"]["attack"] == "exact"
    assert payload["summary"]["exact"]["undecided_records"] == 0
    assert "baseline" in payload["summary"]
    group = payload["groups"][0]
    assert {"min_count", "max_count", "undecided"} <= set(group)
    assert all(lo <= hi <= group["records"] for lo, hi in zip(group["min_count"], group["max_count"]))


def test_both_in_one_json(run, files, tmp_path):  # type: ignore[no-untyped-def]
    out = tmp_path / "both.json"
    result = run(*_args(files, "--exact", "--exact-time-limit", "30", "--out", out, "--quiet"))
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    # the estimate, within what the exact audit leaves possible when it rules something out
    assert payload["summary"]["attack"].startswith("maxent") and payload["exact"]["summary"]["attack"] == "exact"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--no-estimate"], "--no-estimate leaves nothing to do"),
        (["--exact-time-limit", "5"], "--exact-time-limit needs --exact"),
        (["--exact", "--exact-time-limit", "0"], "--exact-time-limit"),
        (["--exact", "--exact-time-limit", "soon"], "--exact-time-limit"),
    ],
)
def test_bad_inputs(run, files, extra, message):  # type: ignore[no-untyped-def]
    result = run(*_args(files, *extra))
    assert result.exit_code == 2
    assert message in result.output


def test_a_saved_exact_audit_makes_a_report_again(run, files, tmp_path):  # type: ignore[no-untyped-def]
    """`ppdm report` of what `ppdm audit --exact --out` wrote: refused with "min_count: expected
    a whole number", though the audit writes each group's proved count of every value."""
    out, page = tmp_path / "both.json", tmp_path / "again.html"
    assert run(*_args(files, "--exact", "--exact-time-limit", "30", "--out", out, "--quiet")).exit_code == 0
    result = run("report", out, "--model", files / "tree.json", "--out", page, "--quiet")
    assert result.exit_code == 0, result.output
    again = json.loads(page.with_suffix(".report.json").read_text())
    assert [a["attack"] for a in again["attacks"]][-1] == "exact" and again["reconciled"] is not None
    payload = json.loads(out.read_text())
    payload["exact"]["groups"][0]["min_count"] = 2  # not one count per value
    out.write_text(json.dumps(payload))
    bad = run("report", out, "--out", page)
    assert bad.exit_code == 2 and "min_count: expected a whole number >= 0 for each of the" in bad.output
