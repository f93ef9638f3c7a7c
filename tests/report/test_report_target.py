"""The report judges against one target (issue 29, deliverable 1): the one given, else the one the
audit was run with (stored in its JSON), else the defense search's; a measure the audit does not
measure leaves the verdict "not measured", never "target met"; a confidence level the summary did
not count is counted from the per-person view."""

import json

import pytest

import ppdm
from ppdm.attacks.core.target import parse_target
from ppdm.errors import ReportError
from ppdm.learn import ID3Classifier
from ppdm.report import build_report
from ppdm.report.build import report_target

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def audited(nursery):
    frame, _ = nursery
    table = frame.sample(800, random_state=2).reset_index(drop=True)
    tree = ID3Classifier(max_depth=3).fit(table[FEATURES], table["class"]).tree_
    tree.class_attribute = "class"
    return tree, table, ppdm.audit(tree, table, ppdm.ThreatModel(known=FEATURES), target="certain=0,confident=50%@0.95")


def test_the_audit_stores_its_target_and_the_report_reads_it(audited):
    tree, _, audit = audited
    saved = json.loads(json.dumps(audit.to_dict()))
    assert saved["target"]["text"] == "certain=0,confident=0.5@0.95" and saved["target"]["given"]
    assert ">=0.95" in saved["summary"]["confidence_in_true_value"]  # the target's level is counted
    report = build_report([saved], tree)
    assert report["target"]["text"] == "certain=0,confident=0.5@0.95"
    verdict = report["attacks"][0]["verdict"]
    assert verdict["lines"][-1].startswith("Target (nobody certain, ≤ 50 % at confidence ≥ 0.95):")


def test_a_level_the_summary_did_not_count_is_counted_from_the_people(audited):
    tree, _, audit = audited
    saved = audit.to_dict()
    report = build_report([saved], tree, target="certain=1000,confident=100%@0.85")
    summary = report["attacks"][0]["summary"]
    people = audit.people()
    held = int(((people["confidence_in_truth"] >= 0.85 - 1e-9) & people["target"]).sum())
    assert summary["confidence_in_true_value"][">=0.85"] == held
    assert report["attacks"][0]["verdict"]["level"] == "meets"


def test_a_measure_the_audit_does_not_measure_is_never_met(audited):
    tree, _, audit = audited
    report = build_report([audit.to_dict()], tree, target="certain=100000,span=2")
    assert report["attacks"][0]["verdict"]["level"] == "unknown"
    assert "span not measured by this audit" in report["attacks"][0]["verdict"]["lines"][-1]
    assert report["release"]["decision"] == "do not release"


def test_which_target_a_report_takes():
    default = {"target": parse_target("certain=0,confident=0.01@0.9").to_dict(given=False)}
    chosen = {"target": parse_target("certain=2").to_dict()}
    frontier = [{"label": "x", "accuracy": 0.9, "risk": 0.0, "target": "certain=0,confident=0.05@0.9"}]
    assert report_target("certain=5", [chosen], frontier) == (parse_target("certain=5"), True)
    assert report_target(None, [chosen], None)[0].to_text() == "certain=2"
    assert report_target(None, [default], frontier)[0].to_text() == "certain=0,confident=0.05@0.9"  # the search's, not a default
    assert report_target(None, [default], None) == (parse_target("certain=0,confident=0.01@0.9"), False)
    with pytest.raises(ReportError, match="the audit was run against 'certain=2' but the defense search against"):
        report_target(None, [chosen], frontier)


def test_counts_of_people_are_written_with_thousands_separators():
    """A count in the target line and the record's reasons reads as every other count of the
    report: "certain 6,579", and a limit of a million as "1,000,000", never "1e+06"."""
    from ppdm.attacks.core.target import parse_target
    from ppdm.report.verdict import format_value

    target = parse_target("certain=1000000,members_proved=2500")
    assert [m.describe() for m in target.measures] == ["at most 1,000,000 people certain", "at most 2,500 people proved a member"]
    certain = target.measures[0]
    assert format_value(certain, 6579.0) == "6,579" and format_value(certain, 2.5) == "2.5"
