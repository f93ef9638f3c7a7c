"""What a first-time user meets: a fast start, a full command list, and one-line errors (exit 2)."""

import json
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import ppdm.data.datasets
from ppdm.cli import DISCLOSURES, main
from ppdm.tree import Disclosure

from cli_output import one_line_error as _one_line_error

HEAVY = ("numpy", "pandas", "scipy", "sklearn", "rich", "ppdm.tree", "ppdm.attacks", "ppdm.learn", "ppdm.maxent")


def test_the_cli_module_imports_no_heavy_library():
    code = f"import sys, ppdm.cli; print(' '.join(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == []


def test_disclosure_choices_are_the_library_levels_in_order():
    assert DISCLOSURES == tuple(d.value for d in Disclosure)


def test_help_lists_every_command_with_its_whole_description(run):
    result = run("--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for name, command in main.commands.items():
        assert f"{name} {' '.join(command.help.split())}" in text
    assert "..." not in result.output.split("Commands:")[1]


@pytest.mark.parametrize("content", [pickle.dumps({"rules": [1, 2]}), bytes(range(256)) * 8])
def test_a_binary_rules_file_is_not_a_text_file(run, tmp_path, content):
    (tmp_path / "d.csv").write_text("a,s\nx,p\ny,q\n")
    (tmp_path / "rules.pkl").write_bytes(content)
    result = run("audit-rules", "--data", tmp_path / "d.csv", "--sensitive", "s", "--rules", tmp_path / "rules.pkl")
    _one_line_error(result, "rules.pkl: not a text file")


def test_error_text_is_printed_literally(run, tmp_path):
    (tmp_path / "d.csv").write_text("a,s\nx,p\ny,\nz,\nw,q\n")
    result = run("audit-rules", "--data", tmp_path / "d.csv", "--sensitive", "s", "--support", "0.1", "--confidence", "0.5")
    _one_line_error(result, "sensitive column 's' has missing values at row(s) [1, 2]")
    result = run("audit", "--dataset", "nursery", "--sensitive", "[bold]pets")
    _one_line_error(result, "'[bold]pets'")


@pytest.mark.parametrize(
    "args, message",
    [
        (["show", "{dir}"], "is a directory, not a tree file"),
        (["audit", "--tree", "{dir}", "--data", "{dir}", "--sensitive", "class"], "is a directory, not a tree file"),
        (["attack", "--tree", "{tree}", "--data", "{dir}"], "is a directory, not a CSV file"),
        (["audit-rules", "--data", "{dir}", "--sensitive", "s"], "is a directory, not a CSV file"),
        (["audit-rules", "--data", "{csv}", "--sensitive", "s", "--rules", "{dir}"], "is a directory, not a rules file"),
        (["audit-rules", "--data", "{csv}", "--sensitive", "s", "--rules", "{dir}/none.json"], "none.json: no such rules file"),
    ],
)
def test_a_directory_given_as_a_file_is_named_a_directory(run, tmp_path, args, message):
    (tmp_path / "folder").mkdir()
    (tmp_path / "d.csv").write_text("a,s\nx,p\ny,q\n")
    assert run("train", "--data", tmp_path / "d.csv", "--class-attribute", "s", "--test-size", "0", "--out", tmp_path / "t.json", "-q").exit_code == 0
    paths = {"dir": tmp_path / "folder", "csv": tmp_path / "d.csv", "tree": tmp_path / "t.json"}
    _one_line_error(run(*(a.format(**paths) for a in args)), message)


@pytest.mark.parametrize(
    "args",
    [
        ["train", "--dataset", "nursery", "--out", "{out}"],
        ["attack", "--tree", "t.json", "--dataset", "nursery", "--out", "{out}"],
        ["audit", "--dataset", "nursery", "--sensitive", "class", "--out", "{out}"],
        ["audit-rules", "--dataset", "nursery", "--sensitive", "class", "--support", "0.1", "--confidence", "0.5", "--out", "{out}"],
        ["audit-rules", "--dataset", "nursery", "--sensitive", "class", "--support", "0.1", "--confidence", "0.5", "--rules-out", "{out}"],
    ],
)
def test_an_output_into_a_missing_directory_fails_before_any_work(run, tmp_path, monkeypatch, args):
    def no_work(*args, **kwargs):
        raise AssertionError("the data was loaded before the output path was checked")

    monkeypatch.setattr(ppdm.data.datasets, "load_dataset", no_work)
    monkeypatch.setattr(ppdm.data.datasets, "load_csv", no_work)
    out = tmp_path / "missing" / "result.json"
    result = run(*(a.format(out=out) for a in args))
    _one_line_error(result, f"{out}: cannot write it, the directory {out.parent} does not exist")


def test_an_output_that_is_a_directory_is_refused(run, tmp_path):
    result = run("audit", "--dataset", "nursery", "--sensitive", "class", "--out", tmp_path)
    _one_line_error(result, "is a directory; give a file name to write")


def test_audit_json_rows_join_back_to_the_csv(run, tmp_path, nursery):
    frame, _ = nursery
    frame.to_csv(tmp_path / "train.csv", index=False)
    assert run("train", "--dataset", "nursery", "--max-depth", "2", "--test-size", "0", "--out", tmp_path / "t.json", "-q").exit_code == 0
    out = tmp_path / "audit.json"
    result = run("audit", "--tree", tmp_path / "t.json", "--data", tmp_path / "train.csv", "--sensitive", "class", "--out", out, "-q")
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    csv = pd.read_csv(tmp_path / "train.csv")
    assert sorted(r for g in data["groups"] for r in g["rows"]) == list(range(len(csv)))
    assert all(len(g["rows"]) == g["records"] for g in data["groups"])
    group_of_row = np.empty(len(csv), dtype=int)
    for i, g in enumerate(data["groups"]):
        group_of_row[g["rows"]] = i
    qis = data["quasi_identifiers"]
    joined = pd.DataFrame([g["qi"] for g in data["groups"]]).iloc[group_of_row].reset_index(drop=True)
    assert joined[qis].equals(csv[qis])


def test_an_earlier_output_is_replaced_out_loud(run, tmp_path):
    """Nothing is overwritten silently: an output file that exists is named before any work."""
    out = tmp_path / "hierarchies.json"
    first = run("hierarchy", "--dataset", "nursery", "--column", "parents", "--out", out)
    assert first.exit_code == 0 and "replaced" not in first.output
    again = run("hierarchy", "--dataset", "nursery", "--column", "parents", "--out", out)
    assert again.exit_code == 0
    assert f"{out}: replaced the earlier file" in again.output


@pytest.mark.parametrize("command", ["audit", "attack", "train", "defend", "show"])
def test_the_class_column_is_named_the_same_way_everywhere(run, command):
    """``--class`` and ``--class-attribute`` are one option on every command that takes a class column."""
    text = " ".join(run(command, "--help").output.split())
    assert "--class, --class-attribute" in text or "--class-attribute, --class" in text
