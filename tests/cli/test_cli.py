"""The ppdm command: happy paths, and one-line errors with exit status 2 on bad input."""

import json

import pytest
from click.testing import CliRunner

from ppdm.cli import main


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return invoke


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
