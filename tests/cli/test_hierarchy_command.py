"""ppdm hierarchy writes a starting hierarchy that ppdm train --hierarchies accepts; bad inputs are
one line with exit status 2."""

import json

import pytest
import yaml


def test_round_trip_on_nursery(run, tmp_path):
    path = tmp_path / "nursery.yaml"
    written = run("hierarchy", "--dataset", "nursery", "--column", "health", "--column", "finance", "--out", path)
    assert written.exit_code == 0, written.output
    data = yaml.safe_load(path.read_text())["hierarchies"]
    assert data["health"] == {"kind": "categorical", "tree": {"ANY": ["not_recom", "priority", "recommended"]}}
    trained = run("train", "--dataset", "nursery", "--k", "30", "--hierarchies", path, "--algorithm", "id3", "--out", tmp_path / "t.json")
    assert trained.exit_code == 0, trained.output
    assert "kADET-ID3" in trained.output and "asked k = 30" in trained.output


def test_numbers_get_nested_quantile_intervals_in_json(run, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("income,y\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(1, 101)))
    path = tmp_path / "h.json"
    assert run("hierarchy", "--data", table, "--column", "income", "--bins", "4", "--out", path).exit_code == 0
    tree = json.loads(path.read_text())["hierarchies"]["income"]["tree"]
    assert tree["range"] == ["-inf", "inf"]
    assert [c["range"] for c in tree["children"]] == [["-inf", 50.5], [50.5, "inf"]]
    assert [g["range"] for c in tree["children"] for g in c["children"]] == [["-inf", 25.75], [25.75, 50.5], [50.5, 75.25], [75.25, "inf"]]
    trained = run("train", "--data", table, "--class-attribute", "y", "--k", "10", "--hierarchies", path, "--algorithm", "id3",
                  "--out", tmp_path / "t.json", "-q")
    assert trained.exit_code == 0, trained.output


def test_printed_yaml_quotes_values_yaml_would_read_as_booleans(run, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("smoker,y\nyes,a\nno,b\nyes,b\n")
    printed = run("hierarchy", "--data", table, "--column", "smoker")
    assert printed.exit_code == 0 and "ANY: ['no', 'yes']" in printed.output
    (tmp_path / "h.yaml").write_text(printed.output)
    trained = run("train", "--data", table, "--class-attribute", "y", "--k", "1", "--hierarchies", tmp_path / "h.yaml",
                  "--algorithm", "id3", "--test-size", "0", "--out", tmp_path / "t.json", "-q")
    assert trained.exit_code == 0, trained.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["hierarchy", "--dataset", "nursery", "--column", "helth"], "unknown column 'helth'"),
        (["hierarchy", "--dataset", "nursery"], "Missing option '--column'"),
        (["hierarchy", "--dataset", "nursery", "--data", "t.csv", "--column", "health"], "exactly one of"),
        (["hierarchy", "--dataset", "nursery", "--column", "health", "--bins", "1"], "1 is not in the range x>=2"),
        (["hierarchy", "--dataset", "nursery", "--column", "health", "--out", "h.txt"], "unknown hierarchy file extension '.txt'"),
        (["hierarchy", "--dataset", "nursery", "--column", "health", "--out", "no/h.yaml"], "the directory no does not exist"),
        (["train", "--dataset", "nursery", "--k", "5", "--hierarchies", "numeric.yaml", "--out", "x.json"],
         "the numeric hierarchy of 'health' would be ignored: the column holds text"),
        (["train", "--data", "t.csv", "--class-attribute", "y", "--k", "5", "--hierarchies", "categorical.yaml", "--out", "x.json"],
         "column 'income' holds numbers but its hierarchy is categorical"),
        (["train", "--data", "t.csv", "--class-attribute", "y", "--k", "5", "--hierarchies", "broken.yaml", "--out", "x.json"],
         "invalid YAML at line 3"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text("income,y\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(40)))
    (tmp_path / "numeric.yaml").write_text("hierarchies:\n  health: {kind: numeric, cuts: [[1]]}\n")
    (tmp_path / "categorical.yaml").write_text("hierarchies:\n  income: {kind: categorical, tree: {ANY: [1, 2]}}\n")
    (tmp_path / "broken.yaml").write_text("hierarchies:\n  income: {kind: [\n")
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert result.output.strip().count("\n") == 0 and "Traceback" not in result.output


def test_adult_uses_its_bundled_hierarchies(run, tmp_path):
    result = run("train", "--dataset", "adult", "--k", "100", "--algorithm", "id3", "--out", tmp_path / "t.json")
    assert result.exit_code == 0, result.output
    assert "kADET-ID3 on 30,162 rows × 8 attributes" in result.output
    assert "smallest span: 103 rows (asked k = 100); 6.4% of the rows" in result.output  # docs/kanonymity.md
