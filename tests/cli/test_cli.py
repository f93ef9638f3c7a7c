"""The ppdm command: happy paths, and one-line errors with exit status 2 on bad input."""

import json

import pytest


def test_datasets_lists_bundled_data_with_license(run):
    result = run("datasets")
    assert result.exit_code == 0
    assert "adult" in result.output and "nursery" in result.output and "CC BY 4.0" in result.output
    assert "10.24432/C5XW20" in result.output


def test_train_then_show(run, tmp_path):
    out = tmp_path / "tree.json"
    result = run("train", "--dataset", "nursery", "--algorithm", "c45", "--out", out)
    assert result.exit_code == 0, result.output
    assert "test accuracy" in result.output
    data = json.loads(out.read_text())
    assert data["format"] == "ppdm-tree" and data["class_attribute"] == "class"
    shown = run("show", out, "--disclosure", "error-rates", "--max-depth", "2")
    assert shown.exit_code == 0
    assert "health = not_recom: not_recom (" in shown.output


def test_train_on_a_csv_with_labels_only(run, tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("a,b,y\n" + "\n".join(f"{i % 3},{'xy'[i % 2]},{'pq'[(i // 2) % 2]}" for i in range(40)) + "\n")
    out = tmp_path / "t.json"
    result = run("train", "--data", csv, "--class-attribute", "y", "--algorithm", "id3", "--disclosure", "labels", "--out", out, "--quiet")
    assert result.exit_code == 0 and result.output == ""
    assert all("counts" not in n for n in json.loads(out.read_text())["nodes"])
    refused = run("show", out, "--disclosure", "class-counts")
    assert refused.exit_code == 2 and "holds only labels" in refused.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["show", "nowhere.json"], "nowhere.json: no such tree file"),
        (["train", "--dataset", "mnist", "--out", "x.json"], "unknown dataset 'mnist'"),
        (["train", "--dataset", "adult", "--data", "a.csv", "--out", "x.json"], "exactly one of"),
        (["train", "--dataset", "adult", "--class-attribute", "wealth", "--out", "x.json"], "'wealth'"),
        (["train", "--dataset", "nursery", "--attributes", "parents,pets", "--out", "x.json"], "'pets'"),
        (["train", "--data", "missing.csv", "--class-attribute", "y", "--out", "x.json"], "missing.csv"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert result.output.strip().count("\n") == 0


def test_empty_and_wrongly_typed_tables(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.csv").write_text("a,b,y\n")
    result = run("train", "--data", "empty.csv", "--class-attribute", "y", "--out", "x.json")
    assert result.exit_code == 2 and "no data rows" in result.output
    (tmp_path / "num.csv").write_text("a,y\n1,p\n2,q\n3,p\n")
    result = run("train", "--data", "num.csv", "--class-attribute", "y", "--algorithm", "id3", "--out", "x.json")
    assert result.exit_code == 2 and "categorical" in result.output
    (tmp_path / "bad.json").write_text('{"format": "ppdm-tree", "version": "one"}')
    result = run("show", "bad.json")
    assert result.exit_code == 2 and "version: expected an integer" in result.output


@pytest.fixture
def nursery_files(run, tmp_path, nursery):
    frame, _ = nursery
    frame.to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[[5, 6]].to_csv(tmp_path / "known.csv", index=False)
    assert run("train", "--dataset", "nursery", "--test-size", "0", "--out", tmp_path / "tree.json", "-q").exit_code == 0
    return tmp_path


def test_attack_prints_summary_and_writes_result(run, nursery_files):
    out = nursery_files / "result.json"
    result = run("attack", "--tree", nursery_files / "tree.json", "--data", nursery_files / "train.csv", "--sensitive", "class", "--out", out)
    assert result.exit_code == 0, result.output
    assert "homogeneity attack on 'class'" in result.output and "exposed records" in result.output
    data = json.loads(out.read_text())
    assert data["format"] == "ppdm-attack-result"
    assert len(data["groups"]) == 12960 and abs(sum(data["groups"][0]["posterior"]) - 1) < 1e-9
    assert data["summary"]["exposed_records"] == sum(g["exposed_records"] for g in data["groups"])


def test_attack_background(run, nursery_files):
    tree, table = nursery_files / "tree.json", nursery_files / "train.csv"
    result = run("attack", "--tree", tree, "--data", table, "--attack", "background", "--known", nursery_files / "known.csv")
    assert result.exit_code == 0, result.output
    assert "known individuals" in result.output


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--sensitive", "health", "--attack", "reconstruction"], "homogeneity attack reads each person"),
        (["--attack", "background"], "needs --known"),
        (["--quasi-identifiers", "parents,pets"], "'pets'"),
    ],
)
def test_attack_bad_input_is_one_line(run, nursery_files, extra, message):
    result = run("attack", "--tree", nursery_files / "tree.json", "--data", nursery_files / "train.csv", *extra)
    assert result.exit_code == 2, result.output
    assert message in result.output and result.output.strip().count("\n") == 0


def test_attack_on_a_labels_only_tree(run, nursery_files, tmp_path):
    run("train", "--dataset", "nursery", "--disclosure", "labels", "--out", tmp_path / "l.json", "-q")
    result = run("attack", "--tree", tmp_path / "l.json", "--data", nursery_files / "train.csv")
    assert result.exit_code == 2 and "labels only" in result.output


def test_audit_trains_and_audits(run, tmp_path):
    out = tmp_path / "audit.json"
    result = run("audit", "--dataset", "nursery", "--sensitive", "class", "--max-depth", "3", "--out", out)
    assert result.exit_code == 0, result.output
    assert "overall divergence" in result.output and "riskiest QI groups" in result.output
    data = json.loads(out.read_text())
    assert data["summary"]["attack"] == "maxent" and len(data["groups"]) == 12960


def test_audit_of_a_given_tree_and_table(run, nursery_files):
    result = run("audit", "--tree", nursery_files / "tree.json", "--data", nursery_files / "train.csv", "--sensitive", "class", "--publish", "labels", "--top", "0")
    assert result.exit_code == 0, result.output
    assert "label" in result.output
    assert "learns nothing from this tree" in " ".join(result.output.split())  # labels only: uniform


def test_audit_with_internal_constraints_and_a_time_limit(run, tmp_path):
    out = tmp_path / "audit.json"
    result = run("audit", "--dataset", "nursery", "--sensitive", "class", "--max-depth", "2", "--internal", "--time-limit", "60", "--out", out)
    assert result.exit_code == 0, result.output
    assert "learns nothing" not in result.output
    details = json.loads(out.read_text())["summary"]
    assert details["constraint_rows"]["internal"] > 0 and details["status"] in ("local optimum", "time limit")


def test_audit_bad_input(run, nursery_files):
    result = run("audit", "--dataset", "nursery", "--sensitive", "pets")
    assert result.exit_code == 2 and "'pets'" in result.output
    result = run("audit", "--sensitive", "class")
    assert result.exit_code == 2 and "--dataset NAME" in result.output
