"""The words a person reads: counts agree with their nouns, headings name no internal codes, a
single tree's long leaf list is cut readably, and the attacker's known individuals are never
listed as the riskiest groups."""

import re

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.learn import ID3Classifier
from ppdm.report import build_report, render_html
from ppdm.report.summary import _short, audit_lines, baseline_lines, riskiest_lines
from ppdm.report.verdict import verdict
from ppdm.report.words import attack_title, attacker_words, counted, people, records, trees


def test_counts_agree_with_their_nouns():
    assert [people(0), people(1), people(2), people(1000)] == ["0 people", "1 person", "2 people", "1,000 people"]
    assert [records(1), records(3), trees(1), trees(2)] == ["1 record", "3 records", "1 tree", "2 trees"]
    assert counted(1, "more leaf") == "1 more leaf" and counted(2, "more leaf") == "2 more leaves"


def test_headings_name_no_method_codes():
    assert attacker_words("maxent within the exact audit's possible values") == "maximum-entropy estimate within the exact audit's possible values"
    assert attacker_words("the Bayes rule within the maxent's possible values") == "the Bayes rule within the maximum-entropy estimate's possible values"
    assert "maxent" not in attack_title("maxent knowing only no column", "race")
    assert attack_title("exact", "race") == "Exact audit: what it infers about 'race'"


def test_a_single_trees_long_leaf_list_is_cut_readably():
    leaves = "leaves " + ", ".join(str(i) for i in range(1000, 1100))
    short = _short(leaves)
    assert short.startswith("leaves 1000, 1001") and "; …" not in short and ", ;" not in short
    assert re.search(r"… \(\d+ more leaves\)$", short) and len(short) < 160
    assert _short("tree 0 " + leaves + "; tree 1 leaf 3").endswith("(1 more tree)")


@pytest.fixture(scope="module")
def known_audit():
    """A table whose rows 0 and 1 are alone in their groups and certain: the attacker holds them."""
    rng = np.random.default_rng(1)
    n = 200
    a = rng.choice(["y", "z"], size=n)
    s = np.where(rng.random(n) < 0.5, "p", "q")
    a[:2], s[:2] = "x", "p"  # a pure leaf of two people
    frame = pd.DataFrame({"a": a, "s": s}).astype("category")
    tree = ID3Classifier().fit(frame[["a"]], frame["s"]).tree_
    tree.class_attribute = "s"
    threat = ThreatModel(sensitive="s", known=("a",), known_individuals=(0, 1))
    return tree, frame, threat, maxent_attack(tree, frame, threat=threat)


def test_known_individuals_are_not_the_riskiest_groups(known_audit):
    tree, frame, threat, result = known_audit
    assert result.summary()["certain_right"] == 0
    lines = riskiest_lines(result, 5)
    assert "2 known individuals the attacker already holds left out" in lines[0]
    assert not any("a=x" in line for line in lines[1:])  # the group of the two held rows is not listed
    assert not any("confidence 1.00" in line for line in lines[1:])


def test_printout_and_verdict_say_one_person(audit):
    tree, frame, threat, result = audit
    one = {**result.summary(), "certain_records": 1, "certain_right": 1, "certain_wrong": 0}
    one["confidence_in_true_value"] = {**one["confidence_in_true_value"], ">=0.9": 1}
    text = "\n".join(baseline_lines(one)) + "\n".join(verdict(one)["lines"])
    assert "certain guesses: 1 person (" in text and "1 person (" in text
    assert not re.search(r"\b1 (people|records|trees|candidates)\b", text)
    page = "\n".join(audit_lines(result, None)) + render_html(build_report([result], tree, threat))
    assert not re.search(r"\b1 (people|records|trees|candidates)\b", page)


def test_no_internal_names_in_headings(audit):
    tree, frame, threat, result = audit
    page = render_html(build_report([result], tree, threat))
    for heading in re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>", page):
        assert "maxent" not in heading and not re.search(r"\b[a-z]+_[a-z_]+\b", heading), heading


def test_a_confidence_short_of_certain_never_reads_one():
    from ppdm.report.summary import shown_confidence

    assert shown_confidence(1.0) == "1.00" and shown_confidence(0.996) == "0.99" and shown_confidence(0.5) == "0.50"


def test_a_boosted_model_is_said_to_publish_leaf_values():
    """Boosted trees publish leaf values; only the first round's give class counts (the card said
    'publishing class-counts' of a 30-round HistGradientBoosting)."""
    from ppdm.report.audited import model_words

    view = {"algorithm": "HistGradientBoostingClassifier", "kind": "forest", "trees": [{"leaves": 4}] * 3, "combine": "additive",
            "link": "logistic", "disclosure": "class-counts", "class_attribute": "y"}
    said = model_words(view)
    assert "publishing leaf values" in said and "the first round's give class-counts" in said
    assert model_words({**view, "combine": "average"}).endswith("publishing class-counts")
