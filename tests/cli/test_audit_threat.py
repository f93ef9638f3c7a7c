"""``ppdm audit`` under a declared threat model: any sensitive column, any known columns, class
known or not, on trees from ppdm and from scikit-learn, with the baseline next to every number."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from ppdm.data.datasets import load_nursery
from ppdm.learn import C45Classifier
from ppdm.tree import save_tree, tree_from_sklearn


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Nursery as a CSV, a ppdm C4.5 tree and a scikit-learn tree (class counts), a labels-only copy."""
    root = tmp_path_factory.mktemp("threat")
    frame, _ = load_nursery()
    frame = frame.sample(3000, random_state=0).reset_index(drop=True)
    frame.to_csv(root / "train.csv", index=False)
    features = [c for c in frame.columns if c != "class"]
    ppdm_tree = C45Classifier(max_depth=4).fit(frame[features], frame["class"]).tree_
    ppdm_tree.class_attribute = "class"
    save_tree(ppdm_tree, root / "ppdm.json")
    save_tree(ppdm_tree, root / "labels.json", disclosure="labels")
    X = np.column_stack([frame[c].cat.codes for c in features])
    est = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, frame["class"])
    save_tree(tree_from_sklearn(est, frame[features], feature_names=features, class_attribute="class"), root / "sk.json")
    return root


@pytest.mark.parametrize("tree", ["ppdm.json", "sk.json"])
@pytest.mark.parametrize(
    "args",
    [
        ["--sensitive", "health", "--known", "parents,has_nurs,form"],  # a sensitive input, class unknown
        ["--sensitive", "health", "--known", "parents,has_nurs,form,class"],  # class known by listing it
        ["--sensitive", "health", "--known", "parents,has_nurs,form", "--class-known"],
        ["--sensitive", "class", "--known", "parents,health"],  # the class, split attributes unknown
        ["--sensitive", "finance", "--preset", "insider"],
    ],
)
def test_audit_any_sensitive_column(run, files, tree, args):
    out = files / f"out-{tree}-{'_'.join(args).replace(',', '+')}.json"  # one file per case: a second write would say it replaces
    result = run("audit", "--tree", files / tree, "--data", files / "train.csv", *args, "--out", out, "--top", 1)
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.startswith("threat model") and "wants" in first
    assert "for the prior alone (always guessing" in result.output
    summary = json.loads(out.read_text())["summary"]
    assert summary["attacker_accuracy"] >= summary["baseline"]["accuracy"] - 0.002
    assert summary["certain_right"] == summary["confidence_in_true_value"][">=1"]
    if "class" in args[-1] or "--class-known" in args or "insider" in args:
        assert "class known" in first


def test_audit_through_a_threat_file(run, files):
    threat = files / "threat.yaml"
    threat.write_text("sensitive: health\nknown: [parents, has_nurs, class]\nknown_individuals: [0, 1]\nsa_published: true\n")
    out = files / "from-file.json"
    result = run("audit", "--tree", files / "ppdm.json", "--data", files / "train.csv", "--threat", threat, "--out", out)
    assert result.exit_code == 0, result.output
    assert "2 individuals fully known" in result.output.splitlines()[0]
    summary = json.loads(out.read_text())["summary"]
    assert summary["targets"] == 2998 and summary["threat_model"].startswith("threat model")


def test_flags_override_the_threat_file(run, files):
    threat = files / "threat2.yaml"
    threat.write_text("sensitive: health\nknown: [parents]\n")
    result = run("audit", "--tree", files / "ppdm.json", "--data", files / "train.csv", "--threat", threat, "--sensitive", "finance", "--top", 0)
    assert result.exit_code == 0, result.output
    assert "wants 'finance'" in result.output.splitlines()[0]


def test_labels_only_file_is_audited_with_its_note(run, files):
    result = run("audit", "--tree", files / "labels.json", "--data", files / "train.csv", "--sensitive", "class", "--known", "parents,health", "--top", 0)
    assert result.exit_code == 0, result.output
    assert "model publishes labels" in result.output and "learns nothing" in result.output


def test_the_file_publishes_class_counts_and_is_audited_so(run, files):
    result = run("audit", "--tree", files / "ppdm.json", "--data", files / "train.csv", "--sensitive", "class", "--known", "parents,health", "--top", 0)
    assert "model publishes class-counts" in result.output and "class-count" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sensitive", "health", "--known", "parents,nope"], "'nope'"),
        (["--sensitive", "health", "--known", "health,parents"], "cannot also be known"),
        (["--sensitive", "class", "--class-known"], "is the sensitive column"),
        (["--sensitive", "health", "--known-individuals", "1,x"], "'x' is not a row number"),
        (["--sensitive", "health", "--known-individuals", "999999"], "outside the table"),
        (["--sensitive", "health", "--preset", "census"], "no demographic column"),
    ],
)
def test_bad_threat_models_are_one_line_and_exit_2(run, files, args, message):
    result = run("audit", "--tree", files / "ppdm.json", "--data", files / "train.csv", *args)
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1


def test_auditing_more_than_the_file_holds_is_refused(run, files):
    result = run("audit", "--tree", files / "labels.json", "--data", files / "train.csv", "--sensitive", "class", "--publish", "class-counts")
    assert result.exit_code == 2 and "publishes labels only" in result.output


def test_missing_values_error_drop_and_count(run, files):
    frame = pd.read_csv(files / "train.csv")
    frame.loc[[4, 9], "parents"] = None
    path = files / "missing.csv"
    frame.to_csv(path, index=False)
    base = ["audit", "--tree", files / "ppdm.json", "--data", path, "--sensitive", "health", "--known", "parents,class", "--top", 0]
    refused = run(*base)
    assert refused.exit_code == 2 and "'parents'" in refused.output and "4, 9" in refused.output
    out = files / "dropped.json"
    dropped = run(*base, "--missing", "drop", "--out", out)
    assert dropped.exit_code == 0, dropped.output
    assert "2,998 rows audited (2 more left out for missing values: the model's counts still count them, so they are read as upper bounds" in dropped.output
    payload = json.loads(out.read_text())
    rows = sorted(r for g in payload["groups"] for r in g["rows"])
    assert 4 not in rows and 9 not in rows and rows[-1] == 2999 and len(rows) == 2998  # the file's row numbers
    assert payload["summary"]["coverage"] == "superset"


def test_missing_values_advise_as_value_only_for_a_column_the_tree_does_not_split_on(run, files):
    """``--missing as-value`` on a split column fails ("'(missing)' not in the tree's domain"): it
    is advised only where it works."""
    from ppdm.tree import load_tree

    splits = load_tree(files / "ppdm.json").split_attributes
    split, other = splits[0], next(c for c in ("finance", "social", "form", "children", "housing") if c not in splits)
    frame = pd.read_csv(files / "train.csv")
    frame.loc[[4, 9], [split, other]] = None
    path = files / "holes.csv"
    frame.to_csv(path, index=False)
    base = ["audit", "--tree", files / "ppdm.json", "--data", path, "--sensitive", "class", "--top", 0]
    on_split = run(*base, "--known", split)
    assert on_split.exit_code == 2 and f"column {split!r}: 2 missing value(s)" in on_split.output
    assert "--missing drop, or fill them in: the model splits on it" in on_split.output and "as-value" not in on_split.output
    assert run(*base, "--known", split, "--missing", "drop").exit_code == 0
    frame[split] = pd.read_csv(files / "train.csv")[split]  # the holes in the other column only
    frame.to_csv(path, index=False)
    kept = run(*base, "--known", other)
    assert kept.exit_code == 2 and f"column {other!r}" in kept.output and "(use --missing drop or --missing as-value)" in kept.output
    assert run(*base, "--known", other, "--missing", "as-value").exit_code == 0


def test_a_table_that_contradicts_the_tree_is_one_line(run, files):
    frame = pd.read_csv(files / "train.csv")
    frame["class"] = frame["class"].sample(frac=1, random_state=1).to_numpy()
    path = files / "shuffled.csv"
    frame.to_csv(path, index=False)
    result = run("audit", "--tree", files / "ppdm.json", "--data", path, "--sensitive", "health", "--known", "parents", "--top", 0)
    assert result.exit_code == 2 and "contradicts" in result.output


def test_an_identifier_column_is_left_out_of_the_insider_with_a_printed_note(run, files, tmp_path):
    frame = pd.read_csv(files / "train.csv")
    frame.insert(0, "ID", np.arange(len(frame)) + 10_000)
    frame.to_csv(tmp_path / "with_id.csv", index=False)
    result = run("audit", "--tree", files / "ppdm.json", "--data", tmp_path / "with_id.csv", "--sensitive", "finance", "--preset", "insider", "--class-known")
    assert result.exit_code == 0, result.output
    assert "(not ID: an identifier)" in result.output.splitlines()[0]
    assert "note: 'ID' is left out of what the attacker knows: unique per row (an identifier)" in result.output
