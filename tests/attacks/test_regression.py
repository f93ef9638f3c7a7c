"""The numeric secret of a published regressor: every true value lies in its proved interval, for
every family on Adult (hours-per-week, age) and Bank Loan (Income, CCAvg), for the insider and
under partial knowledge; the JSON, the printed summary and the report say it beside the prior."""

from __future__ import annotations

import json

import pytest
from regressors import REGRESSORS, regression_table

import ppdm
from ppdm.errors import DataError, PpdmError

CASES = [("adult", "hours-per-week"), ("adult", "age"), ("bank", "Income"), ("bank", "CCAvg")]


@pytest.mark.parametrize("family", sorted(REGRESSORS))
@pytest.mark.parametrize("dataset, target", CASES)
def test_every_true_value_lies_in_its_proved_interval(request, dataset, target, family):
    drop = ("income",) if dataset == "adult" else ()  # its one-hot names hold '<', which XGBoost refuses
    table, X, D, y = regression_table(request.getfixturevalue(dataset), target, 600, drop=drop, seed=1)
    _, model = REGRESSORS[family](X, D, y)
    result = ppdm.audit(model, table, ppdm.ThreatModel(sensitive=target, preset="insider"), tolerance=1.0)
    people = result.people()
    truth = y.to_numpy()
    assert ((people["lower"] <= truth) & (truth <= people["upper"])).all()
    summary = result.summary()
    assert summary["truth_inside"] and summary["scope"]["left_out"] == {}
    assert summary["baseline"]["width"] == truth.max() - truth.min()
    assert summary["pinned"] >= summary["baseline"]["pinned"]
    assert (people["width"] <= summary["baseline"]["width"] + 1e-9).all()  # never a weaker attacker than the prior


@pytest.mark.parametrize("family", ["tree", "random-forest", "gradient-boosting", "xgboost"])
def test_the_tight_bounds_are_inside_the_propagated_ones_and_hold_the_truth(adult, family):
    table, X, D, y = regression_table(adult, "hours-per-week", 250, drop=("income",), seed=2)
    _, model = REGRESSORS[family](X, D, y, rounds=3, depth=3)
    threat = ppdm.ThreatModel(sensitive="hours-per-week", preset="insider")
    outer = ppdm.audit(model, table, threat).people()
    tight = ppdm.audit(model, table, threat, exact=True, exact_time_limit=60)
    inner = tight.people()
    truth = y.to_numpy()
    assert ((inner["lower"] <= truth) & (truth <= inner["upper"])).all()
    assert (inner["lower"] >= outer["lower"] - 1e-9).all() and (inner["upper"] <= outer["upper"] + 1e-9).all()
    assert tight.summary()["bounds"] == "linear programme"


@pytest.mark.parametrize("family", ["tree", "random-forest", "hist-gradient-boosting", "lightgbm"])
def test_partial_knowledge_leaves_out_rows_it_cannot_tie_and_stays_sound(adult, family):
    table, X, D, y = regression_table(adult, "age", 600, drop=("income",), seed=3)
    _, model = REGRESSORS[family](X, D, y)
    split = list(model.split_attributes)
    known = [c for c in X.columns if c not in split[:2]]  # two split columns unknown
    partial = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="age", known=known), tolerance=1.0)
    insider = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="age", preset="insider"), tolerance=1.0)
    p, q = partial.people(), insider.people()
    truth = y.to_numpy()
    assert ((p["lower"] <= truth) & (truth <= p["upper"])).all()
    assert (p["width"] >= q["width"] - 1e-9).all()  # less knowledge: never narrower
    assert partial.intervals.details["undecided_paths"] > 0


def test_known_individuals_are_not_targets_and_help(adult):
    table, X, D, y = regression_table(adult, "hours-per-week", 400, drop=("income",), seed=4)
    _, model = REGRESSORS["tree"](X, D, y)
    base = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="hours-per-week", preset="insider"))
    more = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="hours-per-week", preset="insider", known_individuals=tuple(range(100))))
    assert more.summary()["people"] == 300
    assert (more.people()["width"] <= base.people()["width"] + 1e-9).all()


def test_json_summary_and_report(adult, tmp_path):
    table, X, D, y = regression_table(adult, "hours-per-week", 400, drop=("income",), seed=5)
    _, model = REGRESSORS["xgboost"](X, D, y)
    result = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="hours-per-week", preset="insider"), tolerance=2.0, domain=(0, 120))
    text = str(result)
    assert "pinned to within 2:" in text and "prior: 0; its interval [0, 120], width 120" in text
    assert "all 4 boosting rounds read" in text
    result.save(tmp_path / "a.json")
    saved = json.loads((tmp_path / "a.json").read_text())
    assert saved["summary"]["baseline"]["width"] == 120 and len(saved["people"]["lower"]) == 400
    report = result.report(tmp_path / "a.html")
    page = (tmp_path / "a.html").read_text()
    assert "proved interval" in page and "<svg" in page and f"{report['summary']['pinned']:,} of 400 people pinned" in page
    assert (tmp_path / "a.report.json").exists()


def test_bad_inputs_get_one_line_errors(adult):
    table, X, D, y = regression_table(adult, "hours-per-week", 300, drop=("income",), seed=6)
    _, model = REGRESSORS["tree"](X, D, y)
    with pytest.raises(DataError, match=r"row \d+ holds .* outside the declared domain \[0, 50\]"):
        ppdm.audit(model, table, ppdm.ThreatModel(sensitive="hours-per-week", preset="insider"), domain=(0, 50))
    with pytest.raises(PpdmError, match="the sensitive input 'workclass' is categorical"):  # a numeric input is audited (test_regression_input)
        ppdm.audit(model, table, ppdm.ThreatModel(sensitive="workclass", preset="insider"))
    shuffled = table.assign(**{"hours-per-week": table["hours-per-week"].sample(frac=1, random_state=0).to_numpy()})
    with pytest.raises(DataError, match=r"tree 0, leaf \d+: the table's targets miss what the model publishes"):
        ppdm.audit(model, shuffled, ppdm.ThreatModel(sensitive="hours-per-week", preset="insider"))
    with pytest.raises(PpdmError, match="tolerance must be a finite number >= 0"):
        ppdm.audit(model, table, ppdm.ThreatModel(sensitive="hours-per-week", preset="insider"), tolerance=-1.0)
    from sklearn.tree import DecisionTreeClassifier

    rows = adult.sample(300, random_state=0).reset_index(drop=True)[["age", "income"]]
    clf = ppdm.from_estimator(DecisionTreeClassifier(max_depth=2).fit(rows[["age"]], rows["income"]), rows[["age"]], rows["income"])
    with pytest.raises(PpdmError, match="tolerance= and domain= belong to the audit of a regressor"):
        ppdm.audit(clf, rows, ppdm.ThreatModel(sensitive="income", known=["age"]), tolerance=1.0)


def test_people_are_named_by_the_table_s_row_ids_as_in_a_classifier_s_audit(adult):
    """A table with its own integer index (a customer number, or the rows left after a filter):
    a classifier's audit names people by it, a regressor's named them by position, so its rows
    did not join back to the table, nor to the row its missing-value errors named."""
    table, X, D, y = regression_table(adult, "hours-per-week", 300, drop=("income",), seed=6)
    _, model = REGRESSORS["tree"](X, D, y)
    ids = table.set_axis(range(5000, 5000 + 3 * len(table), 3))
    for sensitive in ("hours-per-week", "age"):  # the target, and a numeric input
        audit = ppdm.audit(model, ids, ppdm.ThreatModel(sensitive=sensitive, preset="insider"), time_limit=10)
        people = audit.people()
        assert people["row"].tolist() == ids.index.tolist(), sensitive
        assert (people["truth"].to_numpy() == ids.loc[people["row"], sensitive].to_numpy()).all()
        narrowest = next(line for line in audit.lines() if line.startswith("  row "))
        assert int(narrowest.split()[1].rstrip(":")) in set(ids.index)


def test_dropping_rows_with_missing_values_is_refused_for_a_regressor(adult):
    """A leaf's row sums the targets of every training row in it: with a row dropped no leaf
    could be tied to the table, and the audit proved nothing, saying the tree's rows "may be a
    subsample the model does not store". Refused, as for a forest, naming how many rows."""
    table, X, D, y = regression_table(adult, "hours-per-week", 300, drop=("income",), seed=6)
    _, model = REGRESSORS["tree"](X, D, y)
    holey = table.copy()
    holey.loc[holey.index[4], "hours-per-week"] = float("nan")
    with pytest.raises(DataError, match="missing='drop' would leave out 1 of the 300 training rows"):
        ppdm.audit(model, holey, ppdm.ThreatModel(sensitive="hours-per-week", preset="insider"), missing="drop")
