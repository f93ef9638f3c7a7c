"""Root cause 10: messages. Each names the real culprit in the command line's own words: a wrong
separator as a wrong separator, a huge value cut so that its row and column stay on the line, the
command's own options (never a Python argument), a model by its kind, a YAML list as a list."""

from __future__ import annotations

import json

import pandas as pd
import pytest


@pytest.mark.parametrize("command", ["audit", "train", "disguise", "attack", "hierarchy", "audit-rules"])
def test_a_wrong_separator_is_called_so(world, refuse, tmp_path, command):
    args = {
        "audit": ["audit", "--tree", world.tree, "--data", world.data, "--sep", ";", "-q"],
        "train": ["train", "--data", world.data, "--sep", ";", "--class-attribute", "class", "--out", tmp_path / "t.json", "-q"],
        "disguise": ["disguise", "--data", world.data, "--sep", ";", "--theta", "0.8", "--out", tmp_path / "d.csv", "-q"],
        "attack": ["attack", "--model", world.tree, "--data", world.data, "--sep", "|"],
        "hierarchy": ["hierarchy", "--data", world.data, "--sep", "tab", "--column", "parents"],
        "audit-rules": ["audit-rules", "--data", world.data, "--sep", ";", "--sensitive", "class", "--rules", world.rules, "-q"],
    }[command]
    refuse(args, "the header reads as one column", "the separator looks wrong (try --sep ',')")


def test_a_tab_separated_file_read_with_commas_is_called_so(world, refuse, tmp_path):
    path = tmp_path / "tabs.csv"
    pd.read_csv(world.data).to_csv(path, sep="\t", index=False)
    refuse(["audit", "--tree", world.tree, "--data", path, "--sep", ",", "-q"], "tabs.csv", "the separator looks wrong (try --sep '\\t')")


def test_a_200_kb_cell_keeps_its_row_and_column_on_a_short_line(world, refuse, tmp_path):
    frame = pd.read_csv(world.data)
    frame["parents"] = frame["parents"].astype(object)
    frame.loc[7, "parents"] = "p" * 200_000
    path = tmp_path / "wide.csv"
    frame.to_csv(path, index=False)
    refuse(["audit", "--tree", world.tree, "--data", path, "-q"], "column 'parents'", "more characters", "(row 7)")


def test_a_200_kb_name_in_a_threat_file_is_a_short_line(world, tmp_path):
    from click.testing import CliRunner

    from ppdm.cli import main

    threat = tmp_path / "threat.yaml"
    threat.write_text("sensitive: " + "x" * 300_000 + "\n")
    result = CliRunner().invoke(main, ["audit", "--tree", str(world.tree), "--data", str(world.data), "--threat", str(threat), "-q"])
    assert result.exit_code == 2 and len(result.stderr) < 800 and "more characters" in result.stderr and "\n" not in result.stderr.strip()


@pytest.mark.parametrize(
    "command, option",
    [("audit", "--class"), ("attack", "--class"), ("defend", "--class-attribute")],
)
def test_an_ambiguous_class_column_names_the_commands_own_option(world, refuse, needs, tmp_path, command, option):
    frame = pd.read_csv(world.train)
    frame["class_copy"] = frame["class"]
    path = tmp_path / "two-classes.csv"
    frame.to_csv(path, index=False)
    args = {"audit": ["audit", "--model", needs("xgb"), "--data", path, "-q"], "attack": ["attack", "--model", needs("xgb"), "--data", path],
            "defend": ["defend", "--model", needs("xgb"), "--data", path, "-q"]}[command]
    refuse(args, f"name the class column of the table ({option})", "columns ['class', 'class_copy'] all have as many values")


@pytest.mark.parametrize("model", ["xgb", "lgb"])
def test_rows_that_are_not_the_training_rows_get_no_python_advice(world, needs, tmp_path, model):
    from click.testing import CliRunner

    from ppdm.cli import main

    frame = pd.read_csv(world.train)
    path = tmp_path / "same-size.csv"
    pd.concat([frame.iloc[:250], frame.iloc[:50]]).to_csv(path, index=False)
    result = CliRunner().invoke(main, ["audit", "--model", str(needs(model)), "--data", str(path), "-q"])
    line = result.stderr.strip()
    assert result.exit_code == 2 and "pass the training rows in the order the model was fitted on" in line
    assert "verify" not in line and "=False" not in line, line


def test_a_sample_is_declared_with_the_commands_option(world, refuse, tmp_path):
    path = tmp_path / "half.csv"
    pd.read_csv(world.data).head(150).to_csv(path, index=False)
    refuse(["audit", "--tree", world.tree, "--data", path, "-q"], "declare the table a sample (--sample)")


def test_a_model_without_column_names_gets_no_python_advice(world, refuse, needs, tmp_path):
    doc = json.loads(needs("xgb").read_text())
    doc["learner"]["feature_names"] = []
    path = tmp_path / "unnamed.xgb.json"
    path.write_text(json.dumps(doc))
    refuse(["audit", "--model", path, "--data", world.train, "-q"], "unnamed.xgb.json: the model has 27 input columns, 0 names known")


def test_defending_a_forest_of_unknown_origin_gets_no_python_advice(world, tmp_path):
    from click.testing import CliRunner

    from ppdm.cli import main

    doc = world.json("forest")
    doc["algorithm"] = "home-made-forest"  # no learner to retrain it (boosted models are defended: tests/defend/test_boosted.py)
    path = tmp_path / "home.json"
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(main, ["defend", "--model", str(path), "--data", str(world.train), "-q"])
    line = result.stderr.strip()
    assert result.exit_code == 2 and "cannot defend a home-made-forest forest: the search retrains scikit-learn random forests" in line
    assert "learner=" not in line


@pytest.mark.parametrize(
    "text, needle",
    [
        ("sensitive: [class, parents]\n", "'sensitive' must be one name, got ['class', 'parents']"),
        ("sensitive: {a: 1}\n", "'sensitive' must be one name"),
        ("sensitive: !!binary aGVsbG8=\n", "'sensitive' must be one name, got b'hello'"),
        ("known: [[parents]]\n", "known[0] must be a column name, got ['parents']"),
        ("known: [null]\n", "known[0] must be a column name, got None"),
        ("known: []\n", "'known' lists no column"),
        ("publish: [labels]\n", "'publish' must be one name"),
        ("0\n", "expected a mapping of keys"),
        ("false\n", "expected a mapping of keys"),
        ("known_individuals: [1, 1]\n", "known_individuals: row 1 is listed twice"),
        ("known_individuals: [1.5]\n", "'known_individuals' must be a list of row numbers"),
        ("sa_published: maybe\n", "'sa_published' must be true or false, got 'maybe'"),
        ("sensitive: cl\x00ass\n", "is not allowed in YAML text"),
        ("known: !!python/object/apply:os.system [ls]\n", "could not determine a constructor"),
    ],
)
def test_a_threat_file_value_of_the_wrong_shape_is_named_as_written(world, refuse, tmp_path, text, needle):
    threat = tmp_path / "threat.yaml"
    threat.write_text(text)
    refuse(["audit", "--tree", world.tree, "--data", world.data, "--threat", threat, "-q"], "threat.yaml", needle)
