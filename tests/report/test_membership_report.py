"""The report's membership section: the ROC curve on log-log axes, what is proved, the riskiest
leaves and the verdict beside the baseline, all agreeing with the membership audit."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.attacks.core.target import parse_target
from ppdm.attacks.membership.audit import membership_attack
from ppdm.errors import ReportError
from ppdm.metrics.membership import tpr_at_fpr
from ppdm.report import build_report, render_html
from ppdm.report.membership import axis_floor, membership_verdict, roc_curve
from ppdm.tree import tree_from_sklearn

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def deep(nursery):
    """A depth-unlimited tree on a random half of 1,500 Nursery candidates, and its membership audit."""
    frame, _ = nursery
    population = frame.sample(1500, random_state=1).reset_index(drop=True)
    member = np.random.default_rng(1).random(len(population)) < 0.5
    train = population[member].reset_index(drop=True)
    est = DecisionTreeClassifier(random_state=0).fit(pd.get_dummies(train[FEATURES]).astype(float), train["class"])
    tree = tree_from_sklearn(est, train[FEATURES], y=train["class"])
    return tree, population, member, membership_attack(tree, population, truth=member)


@pytest.fixture(scope="module")
def report(deep):
    tree, _, _, result = deep
    return build_report([], tree, membership=result)


def test_the_section_agrees_with_the_audit(deep, report):
    _, _, member, result = deep
    section = report["membership"]
    s = result.summary()
    assert section["summary"]["proved_members"] == s["proved_members"] > 0
    assert section["summary"]["wrong_proved_members"] == 0
    assert sorted(section["proved_member_rows"]) == sorted(result.row_ids[result.state == 1].tolist())
    roc = section["roc"]
    fpr, tpr = np.array(roc["fpr"]), np.array(roc["tpr"])
    assert (np.diff(fpr) >= 0).all() and (np.diff(tpr) >= -1e-12).all() and tpr[-1] == 1.0
    for f in (0.001, 0.01):  # the sampled curve is the summary's rate where it is read
        at = int(np.searchsorted(fpr, f))
        assert abs(fpr[at] - f) < 1e-9 and tpr[at] == pytest.approx(s[f"tpr@{f:.1%}".replace(".0%", "%")], abs=1e-6)
    assert tpr[0] == pytest.approx(tpr_at_fpr(member, result.probability, 0.0), abs=1e-6)


def test_the_riskiest_leaves_come_first_and_link_to_the_model(deep, report):
    tree, _, _, result = deep
    leaves = report["membership"]["leaves"]
    proving = [r["proves_members"] for r in leaves]
    assert proving[0] and proving == sorted(proving, reverse=True)  # cells whose count alone proves come first
    for r in leaves:
        if r["proves_members"]:
            assert r["proved_members"] == r["candidates"]  # every candidate reaching it is proved
    anchors = {line["anchor"] for line in report["model"]["trees"][0]["lines"]}
    assert {r["anchor"] for r in leaves} <= anchors
    assert all(r["cell"] in tree.classes or r["cell"] == "every class" for r in leaves)


def test_the_verdict_puts_the_proofs_beside_the_baseline(report):
    v = report["membership"]["verdict"]
    assert v["level"] == "fails"
    assert "proved members" in v["headline"] and "never wrong: none of them outside the training set" in v["headline"]
    assert "member share" in v["headline"]
    assert any("TPR equals FPR" in line for line in v["lines"])
    assert any("members_proved=0" in step for step in report["advice"])


def test_verdict_levels():
    base = {"proved_members": 0, "proved_non_members": 3, "undecided": 97, "candidates": 100, "baseline_member_share": 0.5}
    assert membership_verdict(base)["level"] == "unknown"  # no truth: the TPR cannot be checked
    assert membership_verdict({**base, "proved_members": 1})["level"] == "fails"
    measured = {**base, "auc": 0.55, "tpr@1%": 0.015, "tpr@0.1%": 0.001, "wrong_proved_members": 0}
    assert membership_verdict(measured)["level"] == "meets"
    assert membership_verdict({**measured, "tpr@1%": 0.05})["level"] == "fails"
    assert membership_verdict({**measured, "proved_members": 2}, parse_target("members_proved=2,mia_tpr@1%<=0.02"))["level"] == "meets"


def test_the_page_is_self_contained_and_draws_log_log_axes(report):
    page = render_html(report)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I)
    assert "<link" not in page and "url(" not in page
    assert 'id="membership"' in page and 'href="#membership"' in page and 'id="verdict"' in page
    roc = page.split('<svg id="fig-membership-roc"')[1].split("</svg>")[0]
    for tick in ("0.1 %", "1 %", "10 %", "100 %"):
        assert f">{tick}<" in roc
    assert "(log scale)" in roc and 'data-series="baseline"' in roc and 'data-series="roc"' in roc
    for r in report["membership"]["leaves"]:
        assert f'href="#{r["anchor"]}"' in page and f'id="{r["anchor"]}"' in page
    assert page.count('id="threat"') == 1


def test_without_the_truth_the_spread_of_p_member_is_drawn(deep):
    tree, population, _, _ = deep
    result = membership_attack(tree, population)
    report = build_report([], tree, membership=result)
    assert report["membership"]["roc"] is None and report["membership"]["verdict"]["level"] == "fails"
    assert "each proof holds in every training set" in report["membership"]["verdict"]["headline"]
    page = render_html(report)
    assert 'id="fig-membership-p"' in page and "fig-membership-roc" not in page


def test_roc_curve_and_floor():
    truth = np.array([True, True, True, False, False, False, False])
    score = np.array([1.0, 0.9, 0.2, 0.9, 0.3, 0.1, 0.0])
    roc = roc_curve(truth, score, points=5)
    assert len(roc["fpr"]) == 1 + 3 * 5 + 1
    assert roc["fpr"][0] == 0.0 and roc["tpr"][0] == pytest.approx(1 / 3)  # one member above every non-member
    assert roc["tpr"][-1] == 1.0 and roc["floor"] == 1e-3
    assert axis_floor(20_000, 25_000) == 1e-5 and axis_floor(10, 3) == 1e-3 and axis_floor(2_000, 1_000) == 1e-4


def test_a_report_of_an_attack_and_a_membership_audit(deep, audit):
    tree, _, threat, result = audit
    report = build_report([result], tree, threat, membership=deep[3])
    page = render_html(report)
    assert 'id="membership-verdict"' in page and 'id="membership-threat"' in page and page.count('id="verdict"') == 1


def test_a_membership_section_needs_a_membership_audit(audit):
    tree, _, threat, result = audit
    with pytest.raises(ReportError, match="MembershipResult"):
        build_report([result], tree, threat, membership=result)


def test_the_front_door_writes_the_report(deep, tmp_path):
    tree, population, member, _ = deep
    audit = ppdm.audit(tree, membership=population.assign(member=member))
    data = audit.report(tmp_path / "m.html")
    assert data["membership"]["summary"]["candidates"] == len(population)
    assert (tmp_path / "m.html").read_text().count("<svg") >= 1 and (tmp_path / "m.report.json").exists()


def test_the_first_card_gives_the_target_in_words_as_the_verdict_does(report):
    """A membership audit alone: its first card showed the target as code
    ("members_proved<=0,mia_tpr@1%<=0.02") above a verdict giving it in words."""
    target = next(f["text"] for f in report["audited"] if f["label"] == "target")
    assert target == report["membership"]["target"]["describe"] and "<=" not in target


def test_the_roc_labels_do_not_overlap(deep, report):
    from ppdm.report.membership_plots import CHAR, LINE, place_apart

    page = render_html(report)
    labels = re.findall(r'<text x="([\d.]+)" y="([\d.]+)"[^>]*font-size="11"[^>]*>([^<]*(?:FPR|no false positive))</text>', page)
    assert len(labels) >= 2
    boxes = [(float(x), float(y), text) for x, y, text in labels]
    for i, (x, y, t) in enumerate(boxes):
        for px, py, pt in boxes[:i]:
            assert not (x < px + CHAR * len(pt) and px < x + CHAR * len(t) and abs(y - py) < LINE), (t, pt)
    # two marks at the same height get labels a line apart, the second below the first
    (a, b) = place_apart([(80, 100, "3.2 % of members with no false positive", "r"), (80, 104, "TPR 5.4 % at 0.1 % FPR", "o")], 20, 400)
    assert a[1] == 100 and b[1] >= 100 + LINE


def test_the_membership_headings_name_no_internal_codes(report):
    page = render_html(report)
    headings = re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>", page)
    assert headings
    for heading in headings:
        assert not re.search(r"\b[a-z]+_[a-z_@%0-9]+\b|\bmaxent\b", heading), heading
    nobody = membership_verdict({**report["membership"]["summary"], "proved_members": 0}, parse_target("members_proved=0"))
    assert nobody["headline"].startswith("None of the 1,500 candidates is proved a member")


def test_the_curve_s_marks_are_its_own_attack_s_rates():
    """The ROC curve draws the strongest attack's scores; its marks read that attack's rates (a
    new user saw 'TPR 1.1 % at 0.1 % FPR', RMIA's rate, on the count ratio's curve, which reached
    0.38 % there), the higher rate another attack reaches said beside it, and 'proved members
    among them' only where some are proved."""
    from ppdm.report.membership import roc_curve
    from ppdm.report.membership_plots import roc_figure

    rng = np.random.default_rng(0)
    truth = rng.random(2000) < 0.4
    roc = roc_curve(truth, truth + rng.normal(0, 0.3, 2000))
    rows = [{"attack": "count-ratio", "tpr@0.1%": 0.0038, "tpr@1%": 0.048}, {"attack": "rmia-online", "tpr@0.1%": 0.011, "tpr@1%": 0.030}]
    summary = {"attacks": rows, "strongest": "count-ratio", "tpr@0.1%": 0.011, "tpr@1%": 0.048, "proved_members": 0,
               "reached_by": {"tpr@0.1%": "rmia-online", "tpr@1%": "count-ratio"}}
    svg = roc_figure(roc, summary, "roc")
    assert "TPR 0.38 % at 0.1 % FPR; 1.1 % by rmia-online" in svg and "TPR 4.8 % at 1 % FPR<" in svg
    assert "no false positive" in svg and "proved members among them" not in svg
    assert "proved members among them" in roc_figure(roc, {**summary, "proved_members": 3}, "roc")
