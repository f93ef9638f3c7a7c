"""A regressor's report from ``ppdm report`` (issue 25): drawn from its audit's JSON, drawn again
from its own JSON byte for byte, and refused in one line with what it cannot take."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sklearn.tree import DecisionTreeRegressor

import ppdm
from ppdm.attacks.models.regression import IntervalResult
from ppdm.cli import main

COLUMNS = ["age", "education-num", "capital-gain", "hours-per-week"]


@pytest.fixture(scope="module")
def audited(adult_train, tmp_path_factory):
    frame, _ = adult_train
    table = frame.sample(1500, random_state=0).reset_index(drop=True)[COLUMNS]
    est = DecisionTreeRegressor(max_depth=6, random_state=0).fit(table[COLUMNS[:-1]], table["hours-per-week"])
    model = ppdm.from_estimator(est, table, class_attribute="hours-per-week")
    audit = ppdm.audit(model, table, ppdm.ThreatModel(preset="insider", sensitive="hours-per-week"), tolerance=2)
    folder = tmp_path_factory.mktemp("regression")
    audit.save(folder / "audit.json")
    audit.report(folder / "first.html")
    return audit, folder


def test_the_audit_json_reads_back_as_the_same_result(audited):
    audit, folder = audited
    again = IntervalResult.from_dict(json.loads((folder / "audit.json").read_text()))
    assert again.summary() == audit.intervals.summary()  # what was read too (its scope is in the JSON's details)


def test_ppdm_report_draws_a_regressor_s_page_from_its_audit_and_again(audited):
    audit, folder = audited
    run = CliRunner().invoke(main, ["report", str(folder / "audit.json"), "--out", str(folder / "from_audit.html")])
    assert run.exit_code == 0, run.output
    page = (folder / "from_audit.html").read_text()
    assert f"{audit.intervals.summary()['pinned']:,} of" in page and "<svg" in page
    assert (folder / "from_audit.report.json").exists()
    run = CliRunner().invoke(main, ["report", str(folder / "first.report.json"), "--out", str(folder / "again.html")])
    assert run.exit_code == 0, run.output
    assert (folder / "again.html").read_text() == (folder / "first.html").read_text()


@pytest.mark.parametrize(
    "extra, message",
    [(["--target", "certain=0"], "leave out --target"), (["--pdf", "x.pdf"], "leave out --pdf")],
)
def test_what_a_regressor_s_report_cannot_take_is_one_line(audited, extra, message):
    _, folder = audited
    run = CliRunner().invoke(main, ["report", str(folder / "audit.json"), "--out", str(folder / "x.html"), *extra])
    assert run.exit_code == 2 and len(run.output.strip().splitlines()) == 1 and message in run.output, run.output
    run = CliRunner().invoke(main, ["report", str(folder / "audit.json"), "--out", str(folder / "audit.json")])
    assert run.exit_code == 2 and len(run.output.strip().splitlines()) == 1
