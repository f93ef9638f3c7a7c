"""ppdm audit-rules: summary with the NAR counts, the Figure 7(a) table, JSON, one-line errors."""

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from ppdm.cli import main


@pytest.fixture
def example2_csv(tmp_path):
    """Paper 004 Figure 2."""
    path = tmp_path / "d.csv"
    pd.DataFrame({"Education": ["Doctorate", "Doctorate", "Masters"], "Gender": ["Female", "Male", "Female"],
                  "Salary": ["50K+", "50K+", "50K-"]}).to_csv(path, index=False)
    return path


def test_adult_audit_reports_the_papers_counts_and_the_top_k_table(run, tmp_path):
    out, rules_out = tmp_path / "audit.json", tmp_path / "rules.json"
    result = run("audit-rules", "--dataset", "adult", "--sensitive", "income", "--support", "0.1", "--confidence", "0.6",
                 "--top", "3", "--view", "nar-impact", "--out", out, "--rules-out", rules_out)
    assert result.exit_code == 0, result.output
    text = result.output
    assert "110 published rules" in text and "30,162 records in 7,722 QI groups" in text
    assert "766,472 unpublished patterns, 449 generated, 766,023 pruned" in text and "281,014 variables" in text
    assert "Figure 7(a)" in text and "with NAR" in text and "without NAR" in text
    data = json.loads(out.read_text())
    assert data["format"] == "ppdm-attack-result" and len(data["groups"]) == 7722
    assert data["summary"]["nar_generated"] == 449 and 0 < data["summary"]["overall_divergence"] < 0.5
    top = data["top_individuals"]
    assert len(top) == 3 and top[0]["difference"] >= top[1]["difference"] >= top[2]["difference"] > 0
    assert json.loads(rules_out.read_text())["format"] == "ppdm-rules"


def test_example2_from_a_csv_and_a_rules_file(run, example2_csv, tmp_path):
    rules = tmp_path / "rules.json"
    mined = run("audit-rules", "--data", example2_csv, "--sensitive", "Salary", "--support", "0.6", "--confidence", "0.9",
                "--publish", "thresholds", "--rules-out", rules, "--out", tmp_path / "a.json", "--top", "2")
    assert mined.exit_code == 0, mined.output
    groups = json.loads((tmp_path / "a.json").read_text())["groups"]
    third = next(g for g in groups if g["qi"]["Education"] == "Masters")
    assert third["posterior"][1] == pytest.approx(1.0, abs=1e-6) and third["certain"]  # 50K−
    closed = run("audit-rules", "--data", example2_csv, "--sensitive", "Salary", "--rules", rules, "--strict", "closed",
                 "--out", tmp_path / "b.json")  # the file says thresholds only
    assert "thresholds values" in closed.output
    assert closed.exit_code == 0, closed.output
    third = next(g for g in json.loads((tmp_path / "b.json").read_text())["groups"] if g["qi"]["Education"] == "Masters")
    assert third["posterior"][1] == pytest.approx(0.5, abs=1e-6)
    no_nar = run("audit-rules", "--data", example2_csv, "--sensitive", "Salary", "--rules", rules, "--no-nar", "--view", "divergence")
    assert no_nar.exit_code == 0 and "smallest individual divergence" in no_nar.output and "NAR constraints:" not in no_nar.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sensitive", "Salary"], "--support and --confidence"),
        (["--sensitive", "Salry", "--support", "0.5", "--confidence", "0.5"], "Salry"),
        (["--sensitive", "Salary", "--support", "0.5", "--confidence", "0.5", "--quasi-identifiers", "Age"], "'Age'"),
    ],
)
def test_bad_input_is_one_line_with_status_2(run, example2_csv, args, message):
    result = CliRunner().invoke(main, ["audit-rules", "--data", str(example2_csv), *args])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_exact_values_cannot_be_published_from_a_thresholds_only_file(run, example2_csv, tmp_path):
    rules = tmp_path / "rules.json"
    run("audit-rules", "--data", example2_csv, "--sensitive", "Salary", "--support", "0.6", "--confidence", "0.9",
        "--publish", "thresholds", "--rules-out", rules, "--quiet")
    result = CliRunner().invoke(main, ["audit-rules", "--data", str(example2_csv), "--sensitive", "Salary", "--rules", str(rules), "--publish", "exact"])
    assert result.exit_code == 2 and "rules[0].support" in result.output


def test_invalid_rules_file_names_the_field(example2_csv, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "ppdm-rules", "version": 1, "sensitive": "Salary", "values": ["50K+", "50K-"],
                               "quasi_identifiers": ["Education"], "min_support": 0.6, "min_confidence": 2,
                               "rules": []}))
    result = CliRunner().invoke(main, ["audit-rules", "--data", str(example2_csv), "--sensitive", "Salary", "--rules", str(bad)])
    assert result.exit_code == 2 and "min_confidence" in result.output
