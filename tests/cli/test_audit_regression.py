"""``ppdm audit --model`` of a regressor's file: the proved intervals printed with the pinned
count beside the prior's, ``--tolerance``, ``--domain``, ``--out`` JSON and ``--report``; one line
and exit status 2 on bad input."""

from __future__ import annotations

import json

import pytest
from regressors import regression_table

from ppdm.data.datasets import load_adult


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    xgb = pytest.importorskip("xgboost")
    root = tmp_path_factory.mktemp("regression-cli")
    frame, _ = load_adult("train")
    table, X, D, y = regression_table(frame, "hours-per-week", 500, drop=("income",), seed=7)
    table.to_csv(root / "train.csv", index=False)
    xgb.XGBRegressor(n_estimators=5, max_depth=3, n_jobs=1).fit(D, y).save_model(root / "model.json")
    return root


def test_audit_prints_intervals_and_writes_json_and_report(run, files):
    out, page = files / "a.json", files / "a.html"
    result = run(
        "audit", "--model", files / "model.json", "--data", files / "train.csv", "--sensitive", "hours-per-week", "--preset", "insider",
        "--tolerance", "2", "--out", out, "--report", page,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "pinned to within 2:" in result.output and "(prior: 0; its interval [" in result.output
    assert "all 5 boosting rounds read" in result.output
    assert json.loads(out.read_text())["summary"]["tolerance"] == 2
    assert "people pinned to within 2" in page.read_text()


def test_bad_domain_is_one_line_exit_2(run, files):
    result = run("audit", "--model", files / "model.json", "--data", files / "train.csv", "--sensitive", "hours-per-week", "--preset", "insider", "--domain", "0-100")
    assert result.exit_code == 2 and "--domain '0-100': write the prior's interval as LO,HI" in result.output
    result = run("audit", "--model", files / "model.json", "--data", files / "train.csv", "--sensitive", "hours-per-week", "--preset", "insider", "--domain", "0,50")
    assert result.exit_code == 2 and "outside the declared domain [0, 50]" in result.output


def test_a_numeric_input_as_the_secret_end_to_end(run, files):
    out, page, again = files / "input.json", files / "input.html", files / "input-again.html"
    result = run(
        "audit", "--model", files / "model.json", "--data", files / "train.csv", "--sensitive", "age", "--preset", "insider",
        "--tolerance", "5", "--out", out, "--report", page,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "proved interval of 'age' for 500 people" in result.output and "pinned to within 5:" in result.output
    assert "every true value inside its interval" in result.output
    saved = json.loads(out.read_text())
    assert saved["summary"]["secret"] == "input" and saved["summary"]["tolerance"] == 5 and saved["summary"]["truth_inside"]
    assert "people pinned to within 5" in page.read_text()
    drawn = run("report", out, "--out", again)
    assert drawn.exit_code == 0, drawn.output
    assert f"{saved['summary']['pinned']:,} of 500 people pinned" in again.read_text()


def test_the_exact_audit_of_a_numeric_input_shows_its_progress(run, files):
    """--exact on a numeric input runs integer programmes for minutes: --progress shows them (it
    once printed nothing until the end)."""
    result = run(
        "audit", "--model", files / "model.json", "--data", files / "train.csv", "--sensitive", "age", "--preset", "insider",
        "--exact", "--exact-time-limit", "2", "--progress",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "proving: each group's interval ends by integer programmes; 0 of " in result.stderr
