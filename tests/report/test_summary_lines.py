"""The summary's lines say what each number is of: the portfolio line names each attacker so that
two of the same name stay apart (one kept to the values the estimate leaves possible is marked
'within the estimate'; it once printed "the prior's majority guess 0.9980" beside "0.8960 for the
prior alone"), a joined group's leaves say whose they are, and a sensitive column read in the
model's intervals says a guess is of an interval."""

from __future__ import annotations

from ppdm.report.summary import baseline_extra_lines


def test_a_kept_attacker_is_marked_beside_the_same_attacker_unkept() -> None:
    portfolio = {
        "maxent": 0.9995, "the Bayes rule within the maxent's possible values": 0.998, "Bayes rule": 0.896,
        "prior's majority guess within the maxent's possible values": 0.998,
    }  # fmt: skip
    (line,) = baseline_extra_lines({"portfolio": portfolio, "reported_attacker": "maxent"})
    assert "Bayes rule within the estimate 0.9980" in line and "Bayes rule 0.8960" in line
    assert "majority guess within the estimate 0.9980" in line
    assert line.endswith("'within the estimate': a simpler attacker kept to the values the estimate leaves possible)")


def test_a_joined_groups_provenance_says_which_attacker_each_part_is() -> None:
    import numpy as np

    from ppdm.attacks.baselines.portfolio import _joined_texts

    ours, theirs = ["leaves 24, 27", "leaves 7, 9"], ["leaves 3, 5, 6", "leaves 7, 9"]
    kept = _joined_texts(ours, theirs, np.array([0, 1]), np.array([0, 1]), pool=False)
    assert kept == ["leaves 3, 5, 6, kept to leaves 24, 27", "leaves 7, 9"]  # the same leaves said once
    assert _joined_texts(ours, theirs, np.array([0]), np.array([0]), pool=True) == ["leaves 3, 5, 6, pooled with leaves 24, 27"]


def test_a_sensitive_column_read_in_intervals_says_so() -> None:
    from types import SimpleNamespace

    from ppdm.report.summary import interval_note

    cut = SimpleNamespace(sensitive="Education", values=("Education <= 1.5", "Education > 1.5"),
                          details={"value_names": {"Education <= 1.5": "1", "Education > 1.5": "2 or 3"}})  # fmt: skip
    assert interval_note(cut) == (  # type: ignore[arg-type]
        "'Education' is read in the intervals the model's thresholds cut (1 | 2 or 3): a guess, a certainty and the prior's "
        "accuracy are of an interval, not of one value"
    )
    each = SimpleNamespace(sensitive="Education", values=(1, 2, 3), details={})
    assert interval_note(each) == ""  # type: ignore[arg-type]


def test_a_boosted_model_is_said_to_publish_its_rounds_leaf_values() -> None:
    """A boosted model's later rounds publish leaf values, not class counts: the report's threat
    sentences and "published" line say so (they said "each leaf's number of training rows of every class")."""
    from ppdm.report.audited import threat_facts
    from ppdm.report.threat_words import publish_words, threat_sentences

    line = "threat model: attacker knows age; class known; wants 'education'; model publishes class-counts"
    said = threat_sentences(line, boosted=True)["sentences"]
    assert "The published model reveals each round's leaf values" in " ".join(said)  # type: ignore[arg-type]
    assert threat_sentences(line)["sentences"][-1] == "The published model reveals each leaf's number of training rows of every class."  # type: ignore[index]
    attack = {"threat": {"line": line, "spec": None}, "quasi_identifiers": ["age"], "values": ["a", "b"], "sensitive": "education", "summary": {}}
    published = next(f["text"] for f in threat_facts(attack, {"combine": "additive"}) if f["label"] == "published")
    assert published == publish_words("class-counts", boosted=True) and published.startswith("each round's leaf values")
