"""The first card of a report: what was audited, read from the audit's own details."""

import pytest
from sklearn.ensemble import RandomForestClassifier

import ppdm
from ppdm.attacks.core.scope import Scope
from ppdm.report.audited import rows_words, trees_words

from loan_table import FEATURES, loan_table


def _read(**kw):
    return {"scope": Scope(**kw).to_json()}


def test_rounds_left_out_are_counted_with_their_reason():
    summary = _read(trees=100, per_round=1, left_out={"no leaf's records are decided by the known columns": list(range(1, 100))})
    text = trees_words(None, summary)
    assert text.startswith("1 of 100 boosting rounds read; left out: 99 because no leaf's records are decided by the known columns.")
    assert "lower bound" in text
    assert trees_words(None, _read(trees=20, per_round=1)) == "all 20 boosting rounds read (the leaf values of every round)."
    asked = _read(trees=3, per_round=1, asked="trees 0:3 of 20 (a lower bound ...)")
    assert trees_words(None, asked) == "3 boosting rounds read (the leaf values of every round). The audit was asked for trees 0:3 of 20 (a lower bound ...)."


def test_rows_of_how_many_and_those_left_out():
    view = {"training_rows": 5000.0}
    assert rows_words(view, {"records": 4990, "targets": 4990, **_read(records=4990, dropped_rows=10)}) == (
        "4,990 rows audited, of the 5,000 the model was trained on; 10 more left out for missing values: the model's counts still count "
        "them, so they are read as upper bounds and what the audit finds is a lower bound; fill the values in to audit every row"
    )
    assert rows_words({"training_rows": None}, {"records": 600, "targets": 590}).endswith("; 10 of them known individuals, not targets")


@pytest.mark.filterwarnings("ignore::ppdm.errors.UninformativeKnowledgeWarning")
def test_a_forest_audited_on_some_of_its_trees_says_so():
    data = loan_table()
    est = RandomForestClassifier(10, max_depth=3, random_state=0, n_jobs=1).fit(data[FEATURES], data["Personal Loan"])
    forest = ppdm.from_estimator(est, data[FEATURES], data["Personal Loan"])
    threat = ppdm.ThreatModel(sensitive="Education", known=("Age", "Income", "Family", "CCAvg"), class_known=True)
    audit = ppdm.audit(forest, data, threat, trees="0:3")
    from ppdm.report import build_report

    facts = {f["label"]: f["text"] for f in build_report(audit.results, audit.model, audit.threat)["audited"]}
    # the 3 asked for, not "all 3 trees read" beside "of 10": a part of the model, not all of it
    assert facts["trees"].startswith("3 trees read. The audit was asked for trees 0:3 of 10 (a lower bound"), facts["trees"]
    assert facts["model"].startswith("scikit-learn random forest predicting 'Personal Loan': 3 trees")
