"""One target from the defense search to the re-audit, the report and the release record
(issue 29, deliverables 1 and 6), through the command line: a forest defended against a target of
the user's, audited again on the rows it was fitted on, is judged against that same target and
reported "target met"; ``ppdm report`` judges against the target the audit (or the search) was
run with; bad input ends in one line, exit 2."""

import json

import pytest
from schema_check import validate

from cli_output import one_line_error
from forest_files import NURSERY_FEATURES, nursery_forest_files

KNOWN = ",".join(NURSERY_FEATURES)
TARGET = "certain=0,confident=5%@0.9"


@pytest.fixture(scope="module")
def defended(tmp_path_factory):
    """A 3-tree forest on 600 Nursery rows, defended against TARGET (the search's outputs)."""
    from click.testing import CliRunner

    from ppdm.cli import main

    root = tmp_path_factory.mktemp("target29")
    nursery_forest_files(root, rows=600, trees=3, depth=4)
    result = CliRunner().invoke(main, [str(a) for a in (
        "defend", "--model", root / "forest.json", "--data", root / "train.csv", "--known", KNOWN, "--quick", "--target", TARGET,
        "--families", "retrain,publish-less", "--out", root / "chosen.json", "--frontier", root / "frontier.json", "--train-out", root / "fitted.csv",
    )], catch_exceptions=False)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "target: nobody certain, ≤ 5 % at confidence ≥ 0.9" in result.output and "(25 %, stratified by 'class', seed 0)" in result.output
    assert f"--target '{'certain=0,confident=0.05@0.9'}' --frontier {root / 'frontier.json'}" in result.output  # how to audit it again
    return root


def test_the_defended_forest_is_reported_target_met_against_the_search_target(run, defended, tmp_path):
    records = json.loads((defended / "frontier.json").read_text(encoding="utf-8"))
    assert {r["target"] for r in records} == {"certain=0,confident=0.05@0.9"} and {r["accuracy_on"] for r in records} == {"held-out"}
    chosen = next(r for r in records if r["chosen"])
    result = run(
        "audit", "--model", defended / "chosen.json", "--data", defended / "fitted.csv", "--known", KNOWN, "--target", TARGET,
        "--frontier", defended / "frontier.json", "--out", tmp_path / "after.json", "--report", tmp_path / "after.html",
        "--record", tmp_path / "release.json",
    )
    assert result.exit_code == 0, result.output
    assert "Target (nobody certain, ≤ 5 % at confidence ≥ 0.9): met." in result.output
    saved = json.loads((tmp_path / "after.json").read_text(encoding="utf-8"))
    assert saved["target"]["text"] == "certain=0,confident=0.05@0.9" and saved["target"]["given"]
    report = json.loads((tmp_path / "after.report.json").read_text(encoding="utf-8"))
    assert report["target"]["text"] == "certain=0,confident=0.05@0.9"
    assert [a["verdict"]["level"] for a in report["attacks"]] == ["meets"]
    page = (tmp_path / "after.html").read_text(encoding="utf-8")
    assert "target met" in page and "Target: nobody certain, ≤ 5 % at confidence ≥ 0.9." in page and 'id="release"' in page
    record = json.loads((tmp_path / "release.json").read_text(encoding="utf-8"))
    from ppdm.report.record import schema

    validate(record, schema())
    defended_model = chosen["family"] != "unprotected"
    assert record["decision"] == ("release the defended model" if defended_model else "release")
    assert {i["role"] for i in record["inputs"]} == {"model", "data", "frontier"}
    assert record["defense"]["chosen"] == chosen["label"] and record["defense"]["held_out"]["rows"] == 150

    # ppdm report reads the target from the audit's JSON: the same verdict without --target
    again = run("report", tmp_path / "after.json", "--model", defended / "chosen.json", "--frontier", defended / "frontier.json",
                "--out", tmp_path / "again.html")  # fmt: skip
    assert again.exit_code == 0, again.output
    assert "target: nobody certain, ≤ 5 % at confidence ≥ 0.9 (certain=0,confident=0.05@0.9)" in again.output
    assert json.loads((tmp_path / "again.report.json").read_text())["attacks"][0]["verdict"]["level"] == "meets"
    # an explicit --target wins, and is printed
    strict = run("report", tmp_path / "after.json", "--target", "certain=0,confident=0@0.5", "--out", tmp_path / "strict.html")
    assert strict.exit_code == 0 and "target: nobody certain, ≤ 0 % at confidence ≥ 0.5" in strict.output


def test_without_a_target_the_audit_takes_the_search_target_from_the_frontier(run, defended, tmp_path):
    result = run(
        "audit", "--model", defended / "chosen.json", "--data", defended / "fitted.csv", "--known", KNOWN,
        "--frontier", defended / "frontier.json", "--out", tmp_path / "after.json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "after.json").read_text())["target"]["text"] == "certain=0,confident=0.05@0.9"
    plain = run("audit", "--model", defended / "chosen.json", "--data", defended / "fitted.csv", "--known", KNOWN, "--out", tmp_path / "plain.json")
    assert plain.exit_code == 0, plain.output
    saved = json.loads((tmp_path / "plain.json").read_text())["target"]
    assert saved["text"] == "certain=0,confident=0.01@0.9" and not saved["given"]  # the default, stored as such
    # a report of the default-target audit with the search's frontier judges against the search's target
    report = run("report", tmp_path / "plain.json", "--frontier", defended / "frontier.json", "--out", tmp_path / "r.html")
    assert report.exit_code == 0 and "(certain=0,confident=0.05@0.9)" in report.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "certain=0,bogus=1"], "target: unknown measure 'bogus'"),
        (["--target", "confident=5%"], "confident takes SHARE@CONFIDENCE"),
        (["--record", "{root}/train.csv"], "train.csv"),
        (["--record", "{out}/r.json", "--out", "{out}/r.json"], "r.json"),
    ],
)
def test_bad_input_is_one_line(run, defended, tmp_path, args, message):
    args = [a.format(root=defended, out=tmp_path) for a in args]
    result = run("audit", "--model", defended / "forest.json", "--data", defended / "train.csv", "--known", KNOWN, *args)
    one_line_error(result, message)


def test_a_report_of_audits_against_other_targets_is_refused(run, defended, tmp_path):
    result = run(
        "audit", "--model", defended / "chosen.json", "--data", defended / "fitted.csv", "--known", KNOWN, "--target", "certain=3",
        "--out", tmp_path / "other.json",
    )
    assert result.exit_code == 0, result.output
    refused = run("report", tmp_path / "other.json", "--frontier", defended / "frontier.json", "--out", tmp_path / "r.html")
    one_line_error(refused, "the audit was run against 'certain=3' but the defense search against 'certain=0,confident=0.05@0.9'")


def test_without_train_out_the_next_step_does_not_name_the_rows_the_audit_refuses(run, defended, tmp_path):
    """With rows held out, the chosen model is fitted on the others: "next: ppdm audit ... --data
    train.csv" named a table the audit refuses (600 records, the model trained on 450)."""
    result = run(
        "defend", "--model", defended / "forest.json", "--data", defended / "train.csv", "--known", KNOWN, "--quick", "--target", TARGET,
        "--families", "publish-less", "--out", tmp_path / "chosen.json",
    )
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("next:"))
    assert f"--data {defended / 'train.csv'}" not in line
    assert "--data FITTED_ROWS.csv (the 450 rows the candidates were fitted on: write them with --train-out)" in line
