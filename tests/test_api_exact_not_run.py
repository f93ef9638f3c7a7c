"""``ppdm.audit(..., exact=True)`` on a forest whose exact table is too large to route: the
estimate and all else measured are kept, nothing is proved, and every output says why the exact
audit did not run (``details["exact_not_run"]``)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

import ppdm
from ppdm.errors import DataError, RoutingLimitError

from loan_table import loan_table

COLUMNS = ["Age", "Income", "ZIP Code", "Family", "CCAvg", "Education"]
#: Four unknown split columns (Education, ZIP Code, Income, CCAvg): over a million cells per group.
THREAT = ppdm.ThreatModel(sensitive="Education", known=["Age", "Family"], class_known=True)


@pytest.fixture(scope="module")
def loan() -> tuple[ppdm.Forest, pd.DataFrame]:
    data = loan_table()
    table = data[[*COLUMNS, "Personal Loan"]]
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(data[COLUMNS], data["Personal Loan"])
    return ppdm.from_estimator(rf, table), table


@pytest.fixture(scope="module")
def audited(loan) -> ppdm.Audit:
    model, table = loan
    return ppdm.audit(model, table, THREAT, exact=True)


def test_the_estimate_is_kept_and_the_exact_audit_says_why_it_did_not_run(audited):
    assert audited.proved is None and audited.estimate is not None
    why = audited.estimate.details["exact_not_run"]
    note = audited.estimate.details["note"]  # the pooled estimate's, short: the table's size is in its details, said once
    assert "leaves to route" in audited.estimate.details["note_details"] and "leaves to route" not in why + note
    assert why.startswith("exact audit not run: it would route the same table the joint estimate found too large to build")
    assert "declare more columns known" in why  # what to do instead
    assert "trees=range(" not in why  # one tree alone is too large: no subset of trees is offered
    assert audited.summary()["exact_not_run"] == why
    assert "exact" not in audited.summary()
    assert "baseline" in audited.summary()  # the estimate against the prior, measured as without exact=True
    printed = str(audited)
    assert why in printed and "exact audit (" not in printed and "proved certain" not in printed
    assert not any(line.startswith("exact audit:") for line in audited.target_lines())
    assert "proved_certain" not in audited.people().columns


def test_the_json_report_and_release_record_carry_the_reason(audited, tmp_path):
    why = audited.estimate.details["exact_not_run"]
    audited.save(tmp_path / "audit.json")
    payload = json.loads((tmp_path / "audit.json").read_text())
    assert payload["summary"]["exact_not_run"] == why and "exact" not in payload
    report = audited.report(tmp_path / "audit.html")
    assert [a["attack"] for a in report["attacks"]] == ["maxent"] and report["reconciled"] is None
    html = (tmp_path / "audit.html").read_text()
    verdict = html[html.index('id="verdict"') : html.index('id="advice"')]
    assert "exact audit not run: it would route the same table" in verdict
    assert why in audited.release_record()["reasons"]


def test_the_exact_audit_alone_still_raises(loan):
    model, table = loan
    with pytest.raises(RoutingLimitError, match="leaves to route"):
        ppdm.audit(model, table, THREAT, exact=True, estimate=False)


def test_bad_input_still_raises_with_exact(loan):
    model, table = loan
    with pytest.raises(DataError, match="'Personal Loan'"):
        ppdm.audit(model, table.assign(**{"Personal Loan": 7}), THREAT, exact=True)


@pytest.mark.parametrize(("per_tree", "offered"), [(10**9, None), (40_000_000, 1), (3_000_000, 13)])
def test_a_subset_of_trees_is_offered_only_when_it_fits(per_tree, offered):
    """The refusal's advice is an option that works: ``--trees 0:k`` with ``k`` trees within the
    cap, or none when one tree alone is over it."""
    from ppdm.errors import RoutingLimitError
    from ppdm.maxent.table.forest_types import MAX_ROUTED

    advice = RoutingLimitError.over("routes", per_tree, MAX_ROUTED, instead="declare more columns known").advice
    assert advice.startswith("declare more columns known")
    if offered is None:
        assert "--trees" not in advice
    else:
        assert f"--trees 0:{offered}, trees=range({offered})" in advice and offered * per_tree <= MAX_ROUTED


def test_the_whole_refusal_is_given_when_the_estimate_does_not_say_it():
    from ppdm.errors import RoutingLimitError
    from ppdm.pipeline.prove import not_run as _not_run

    why = RoutingLimitError("the forest's unknown split attributes 'a' (3 cells) make 3 cells …: 90 leaves to route (at most 40)", "declare more columns known")
    assert _not_run(why, "") == f"exact audit not run: {why}"
    assert _not_run(why, f"an approximate estimate ({why.cause})").endswith("too large to build; declare more columns known")
