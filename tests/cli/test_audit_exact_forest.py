"""``ppdm audit --model forest.json --exact``: the proved count of a forest, with the baseline."""

from __future__ import annotations

import json

import pytest

from forest_files import nursery_forest_files

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("exact-forest")
    nursery_forest_files(root, rows=300, trees=3, depth=3)
    return root


def _args(files, *extra):  # type: ignore[no-untyped-def]
    return ["audit", "--model", files / "forest.json", "--data", files / "train.csv", "--sensitive", "health",
            "--known", "parents,has_nurs,form,children,housing,finance,social,class", *extra]


def test_exact_audit_of_a_forest_next_to_the_estimate(run, files):  # type: ignore[no-untyped-def]
    result = run(*_args(files, "--exact", "--exact-time-limit", "30"))
    assert result.exit_code == 0, result.output
    assert "maximum-entropy audit" in result.output
    assert "proved certain:" in result.output and "undecided: 0" in result.output
    assert "baseline: the prior alone proves nobody certain" in result.output
    assert "the maximum-entropy estimate is certain about" in result.output


def test_exact_audit_of_a_forest_alone_as_json(run, files, tmp_path):  # type: ignore[no-untyped-def]
    out = tmp_path / "exact.json"
    result = run(*_args(files, "--exact", "--no-estimate", "--out", out))
    assert result.exit_code == 0, result.output
    assert "proved certain:" in result.output
    payload = json.loads(out.read_text())
    assert payload["summary"]["attack"] == "exact"
    assert payload["summary"]["exact"]["undecided_records"] == 0
    assert payload["summary"]["scope"]["read"] == payload["summary"]["scope"]["trees"] == 3
    group = payload["groups"][0]
    assert all(lo <= hi <= group["records"] for lo, hi in zip(group["min_count"], group["max_count"]))


def test_the_exact_audit_reports_its_progress(run, files):  # type: ignore[no-untyped-def]
    result = run(*_args(files, "--exact", "--no-estimate", "--progress"))
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith(("proving: ", "solving: ")) for line in lines) and lines[-1].startswith("proving: ")
    assert "groups proved certain" in lines[-1] and " s of 300" in lines[-1]
    quiet = run(*_args(files, "--exact", "--no-estimate", "--no-progress"))
    assert quiet.stderr == ""


def test_the_library_calls_back_with_the_search_s_progress():  # type: ignore[no-untyped-def]
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    import ppdm
    from ppdm.data.datasets import load_nursery

    frame = load_nursery()[0].sample(300, random_state=0).reset_index(drop=True)
    frame["class"] = frame["class"].cat.remove_unused_categories()
    X = pd.get_dummies(frame[FEATURES]).astype(float)
    rf = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, frame["class"])
    heard = []
    threat = ppdm.ThreatModel(sensitive="health", preset="insider")
    audit = ppdm.audit(ppdm.from_estimator(rf, frame), frame, threat, exact=True, estimate=False, exact_progress=heard.append)
    assert heard and heard[0].phase in ("first dataset", "certainty") and heard[-1].components == 0
    assert audit.proved.details["exact"]["method"] != "network"  # the integer search ran
    assert heard[-1].open == 0  # finished: every group proved certain or refuted
    assert all(p.time_limit == 300.0 and p.seconds >= 0 for p in heard)


def test_an_exact_audit_too_large_to_route_keeps_the_estimate_and_says_why(run, tmp_path):  # type: ignore[no-untyped-def]
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.tree import forest_from_sklearn, save_forest

    from loan_table import loan_table

    columns = ["Age", "Income", "ZIP Code", "Family", "CCAvg", "Education"]
    data = loan_table()[[*columns, "Personal Loan"]]
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(data[columns], data["Personal Loan"])
    save_forest(forest_from_sklearn(rf, data[columns], y=data["Personal Loan"]), tmp_path / "forest.json")
    data.to_csv(tmp_path / "train.csv", index=False)
    out, html = tmp_path / "audit.json", tmp_path / "audit.html"
    result = run("audit", "--model", tmp_path / "forest.json", "--data", tmp_path / "train.csv", "--sensitive", "Education",
                 "--known", "Age,Family,Personal Loan", "--exact", "--out", out, "--report", html)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "maximum-entropy estimate of 'Education'" in result.output  # the pooled estimate, kept
    assert "exact audit not run: it would route the same table" in result.output and "declare more columns known" in result.output
    assert "proved certain:" not in result.output
    assert json.loads(out.read_text())["summary"]["exact_not_run"].startswith("exact audit not run:")
    assert "exact audit not run: it would route the same table" in html.read_text()
