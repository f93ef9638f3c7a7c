"""``ppdm check`` (issue 46): a researcher's .skops model, its data and a policy → the
recommendation, the check's JSON and a bundle whose manifest hashes every file; bad input ends
with one line and exit status 2; no output over an input."""

from __future__ import annotations

import hashlib
import json

import pytest
from schema_check import validate
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from ppdm.check.policy import policy_schema


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    skops = pytest.importorskip("skops.io")
    folder = tmp_path_factory.mktemp("check")
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:, :6]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    Xtr.assign(target=ytr.to_numpy()).to_csv(folder / "train.csv", index=False)
    Xte.assign(target=yte.to_numpy()).to_csv(folder / "test.csv", index=False)
    skops.dump(DecisionTreeClassifier(max_depth=3, random_state=0).fit(Xtr, ytr), folder / "model.skops")
    (folder / "policy.yaml").write_text("name: our TRE\nextends: acro\nstructural:\n  min_group_size: 5\n", encoding="utf-8")
    return folder


def test_a_check_prints_one_recommendation_and_writes_its_json_and_bundle(run, files, tmp_path):
    out, bundle = tmp_path / "check.json", tmp_path / "release"
    result = run("check", files / "model.skops", "--data", files / "train.csv", "--class", "target", "--holdout", files / "test.csv",
                 "--policy", files / "policy.yaml", "--out", out, "--bundle", bundle)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "policy 'our TRE'" in result.output and "→ release with conditions" in result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["policy"]["sha256"] == hashlib.sha256((files / "policy.yaml").read_bytes()).hexdigest()
    validate(data["policy"]["policy"], policy_schema())
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    names = {f["name"]: f for f in manifest["files"]}
    assert set(names) == {"model.skops", "check.json", "report.txt"}
    for name, entry in names.items():
        assert hashlib.sha256((bundle / name).read_bytes()).hexdigest() == entry["sha256"]
    assert (bundle / "model.skops").read_bytes() == (files / "model.skops").read_bytes()
    assert not any(p.name.endswith(".csv") for p in bundle.iterdir())  # no training data in the release folder
    again = run("check", files / "model.skops", "--data", files / "train.csv", "--class", "target", "--bundle", bundle, "-q")
    assert again.exit_code == 0  # a bundle folder is rewritten by the next bundle


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--class", "nope"], "no class column 'nope'"),
        (["--class", "target", "--policy", "lenient"], "neither a preset"),
        (["--class", "target", "--out", "{train}"], "input"),
        (["--class", "target", "--bundle", "{folder}"], "not a file of this bundle"),
        (["--class", "target", "--policy", "{bad}"], "unknown key 'safe_threshold'"),
    ],
)
def test_bad_input_ends_with_one_line_and_status_2(run, files, extra, said):
    (files / "bad.yaml").write_text("structural:\n  safe_threshold: 10\n", encoding="utf-8")
    args = [a.format(train=files / "train.csv", folder=files, bad=files / "bad.yaml") for a in extra]
    result = run("check", files / "model.skops", "--data", files / "train.csv", *args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0], result.output


def test_a_file_that_is_not_a_model_is_refused_in_one_line(run, files):
    result = run("check", files / "train.csv", "--data", files / "train.csv", "--class", "target")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1


def test_audit_takes_the_policy_and_writes_the_bundle_of_model_record_and_report(run, tmp_path):
    from small_nursery import FEATURES, small_nursery, small_tree

    from ppdm.tree import save_tree

    frame = small_nursery(1, rows=300)
    tree = small_tree(frame)
    tree.class_attribute = "class"
    save_tree(tree, tmp_path / "tree.json")
    frame.to_csv(tmp_path / "train.csv", index=False)
    bundle = tmp_path / "release"
    args = ["audit", "--model", tmp_path / "tree.json", "--data", tmp_path / "train.csv", "--sensitive", "class", "--known", ",".join(FEATURES)]
    result = run(*args, "--policy", "strict", "--record", tmp_path / "record.json", "--bundle", bundle, "-q")
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "record.json").read_text(encoding="utf-8"))
    assert record["policy"]["name"] == "strict" and record["target"]["text"] == "certain=0,confident=0.005@0.8"
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    assert {f["name"] for f in manifest["files"]} == {"tree.json", "release_record.json"} and manifest["policy"]["name"] == "strict"
    for entry in manifest["files"]:
        assert hashlib.sha256((bundle / entry["name"]).read_bytes()).hexdigest() == entry["sha256"]
    both = run(*args, "--policy", "strict", "--target", "certain=0")
    assert both.exit_code == 2 and "not both" in both.output
    over = run(*args, "--bundle", tmp_path)
    assert over.exit_code == 2 and "not a file of this bundle" in over.output


ARGS = ["--class", "target", "--sensitive", "target"]


@pytest.mark.slow
def test_check_with_a_sensitive_column_joins_the_white_box_audit_with_its_proof(run, files, tmp_path):
    out = tmp_path / "tree.json"
    result = run("check", files / "model.skops", "--data", files / "train.csv", *ARGS, "--exact", "--out", out, "-q")
    assert result.exit_code == 0, result.output
    attribute = next(f for f in json.loads(out.read_text(encoding="utf-8"))["findings"] if f["rule"] == "attribute")
    assert attribute["state"] in ("passed", "failed") and "exact (proved)" in attribute["evidence"]


def test_check_with_a_sensitive_column_runs_the_black_box_attribute_audit_on_a_model_read_black_box(run, files, tmp_path):
    from sklearn.linear_model import LogisticRegression

    args = ["--data", files / "train.csv", *ARGS]
    import pandas as pd
    import skops.io

    train = pd.read_csv(files / "train.csv")
    skops.io.dump(LogisticRegression(max_iter=3000).fit(train.drop(columns="target"), train["target"]), tmp_path / "lr.skops")
    out = tmp_path / "lr.json"
    assert run("check", tmp_path / "lr.skops", *args, "--out", out, "-q").exit_code == 0
    attribute = next(f for f in json.loads(out.read_text(encoding="utf-8"))["findings"] if f["rule"] == "attribute")
    assert attribute["state"] != "not checked" and "model inversion (the model's prediction)" in attribute["evidence"] and "baseline (the prior" in attribute["evidence"]


@pytest.mark.parametrize("kind", ["logistic", "mlp", "scores"])
def test_a_skops_logistic_regression_an_mlp_and_a_scores_file_get_membership_evidence_with_its_baseline(run, files, tmp_path, kind):
    import pandas as pd
    import skops.io
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ppdm.report.record import schema

    train, test = pd.read_csv(files / "train.csv"), pd.read_csv(files / "test.csv")
    X, y = train.drop(columns="target"), train["target"]
    net = MLPClassifier(hidden_layer_sizes=(8,), alpha=1.0, max_iter=300, random_state=0)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1) if kind != "mlp" else net).fit(X, y)
    out = tmp_path / "check.json"
    args = ["--data", files / "train.csv", "--class", "target", "--holdout", files / "test.csv", "--shadows", "4", "--out", out, "-q"]
    if kind == "scores":
        pd.DataFrame(model.predict_proba(X), columns=["0", "1"]).to_csv(tmp_path / "s.csv", index=False)
        pd.DataFrame(model.predict_proba(test.drop(columns="target")), columns=["0", "1"]).to_csv(tmp_path / "h.csv", index=False)
        result = run("check", "--scores", tmp_path / "s.csv", "--holdout-scores", tmp_path / "h.csv", *args)
    else:
        skops.io.dump(model, tmp_path / "model.skops")
        result = run("check", tmp_path / "model.skops", *args)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    membership = next(f for f in data["findings"] if f["rule"] == "membership")
    assert membership["strength"] == ("approximate" if kind == "scores" else "estimated") and membership["limit"] == 0.2
    assert "baseline: the same attack on held-out rows alone (control)" in membership["evidence"]
    assert any(r.startswith("membership: ") for r in data["recommendation"]["reasons"])
    attacks = data["attacks"]["membership"]
    assert len(attacks) == (1 if kind == "scores" else 5) and all(r["control_advantage"] is not None for r in attacks)
    for finding in data["findings"]:
        validate(finding, schema()["$defs"]["finding"])
    validate(data["policy"]["policy"], policy_schema())


def test_a_skops_mlp_knn_and_svm_are_read_and_an_untrusted_type_refused(files, tmp_path):
    import pandas as pd
    import skops.io
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC

    from ppdm.check import check_model
    from ppdm.check.model import read_checked
    from ppdm.errors import ModelImportError

    train = pd.read_csv(files / "train.csv")
    X, y = train.drop(columns="target"), train["target"]
    for model in (MLPClassifier(hidden_layer_sizes=(4,), max_iter=20, random_state=0), KNeighborsClassifier(), SVC()):
        path = tmp_path / f"{type(model).__name__}.skops"
        skops.io.dump(model.fit(X, y), path)
        assert check_model(path, train, class_attribute="target").model.name == type(model).__name__
    skops.io.dump({"model": SVC().fit(X, y), "odd": pd.Timedelta(1)}, tmp_path / "odd.skops")
    with pytest.raises(ModelImportError, match="does not load"):
        read_checked(tmp_path / "odd.skops", train, "target")


@pytest.fixture(scope="module")
def scored(files):
    """A logistic regression built "elsewhere": its predicted probabilities on the training and
    held-out rows, written as the researcher would hand them over."""
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    train, test = pd.read_csv(files / "train.csv"), pd.read_csv(files / "test.csv")
    model = LogisticRegression(max_iter=3000).fit(train.drop(columns="target"), train["target"])
    for name, table in (("scores.csv", train), ("held_scores.csv", test)):
        pd.DataFrame(model.predict_proba(table.drop(columns="target")), columns=model.classes_).to_csv(files / name, index=False)
    return files


def test_a_model_known_by_its_scores_is_checked_and_bundled_by_the_scores_hash(run, scored, tmp_path):
    out, bundle = tmp_path / "check.json", tmp_path / "release"
    result = run("check", "--scores", scored / "scores.csv", "--data", scored / "train.csv", "--class", "target", "--holdout", scored / "test.csv",
                 "--holdout-scores", scored / "held_scores.csv", "--sensitive", "target", "--out", out, "--bundle", bundle)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "→ release with conditions" in result.output and "residual_dof: not checked (none): not measured: only the model's outputs" in result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    states = {f["rule"]: f["state"] for f in data["findings"]}
    assert states["family"] == states["residual_dof"] == states["hyperparameters"] == "not checked"
    attribute = next(f for f in data["findings"] if f["rule"] == "attribute")  # the outputs as features alone: no inversion without the model
    assert attribute["strength"] == "approximate" and "outputs as features" in attribute["evidence"] and "model inversion" not in attribute["evidence"]
    assert states["generalisation_gap"] in ("passed", "failed") and states["beat_majority"] == "passed"
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    assert {p.name for p in bundle.iterdir()} == {"check.json", "report.txt", "manifest.json"}  # no scores (per training row) copied
    hashes = {r["role"]: r["sha256"] for r in manifest["referenced"]}
    for role, name in (("scores", "scores.csv"), ("holdout_scores", "held_scores.csv")):
        assert hashes[role] == hashlib.sha256((scored / name).read_bytes()).hexdigest() == data["model"]["outputs_only"][role]["sha256"]
    assert [f["name"] for f in manifest["files"]] == ["check.json", "report.txt"]


def _write_bad(folder, case):
    import numpy as np
    import pandas as pd

    scores = pd.read_csv(folder / "scores.csv")
    if case == "rows":
        scores = scores.iloc[:10]
    elif case == "column":
        scores = scores.rename(columns={"1": "benign"})
    elif case == "range":
        scores.iloc[2] = [-0.1, 1.1]
    elif case == "sum":
        scores.iloc[7] = [0.2, 0.2]
    elif case == "nan":
        scores.iloc[9, 1] = np.nan
    path = folder / f"bad_{case}.csv"
    scores.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("rows", "10 rows of probabilities for 398 training rows"),
        ("column", "column 'benign' is not a class of 'target'"),
        ("range", "column '0', row 2: -0.1 is not a probability in [0, 1]"),
        ("sum", "row 7: the probabilities sum to 0.4, not 1"),
        ("nan", "column '1', row 9: nan is not a probability in [0, 1]"),
        ("empty", "not a CSV of predicted probabilities"),
        ("both", "one of them"),
        ("neither", "one of them"),
        ("held", "need their scores"),
    ],
)
def test_a_bad_scores_file_ends_with_one_line_and_status_2(run, scored, case, said):
    data = ["--data", scored / "train.csv", "--class", "target"]
    if case == "empty":
        (scored / "empty.csv").write_text("", encoding="utf-8")
        args = ["--scores", scored / "empty.csv", *data]
    elif case == "both":
        args = [scored / "model.skops", "--scores", scored / "scores.csv", *data]
    elif case == "neither":
        args = data
    elif case == "held":
        args = ["--scores", scored / "scores.csv", *data, "--holdout", scored / "test.csv"]
    else:
        args = ["--scores", _write_bad(scored, case), *data]
    result = run("check", *args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0], result.output
