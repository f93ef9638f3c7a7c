"""The honest baselines: the model-free attacker fitted on a reference sample and the control on
people outside the training set (ppdm.attacks.baselines.reference, ppdm.audit(reference=, holdout=))."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.cli import main
from ppdm.errors import DataError


@pytest.fixture(scope="module")
def adult_split(adult_train):
    frame = adult_train[0].sample(9000, random_state=0).reset_index(drop=True)
    for c in frame.columns:
        if isinstance(frame[c].dtype, pd.CategoricalDtype):
            frame[c] = frame[c].astype(str)
    return frame.iloc[:4000].reset_index(drop=True), frame.iloc[4000:7000], frame.iloc[7000:]


def _tree(train: pd.DataFrame, target: str, **params):  # type: ignore[no-untyped-def]
    X = train.drop(columns=[target])
    clf = DecisionTreeClassifier(random_state=0, **params).fit(pd.get_dummies(X), train[target])
    return ppdm.from_estimator(clf, train)


def test_nothing_to_learn_gives_no_lift_over_the_reference(adult_split):
    train, reference, holdout = (f.copy() for f in adult_split)
    rng = np.random.default_rng(0)
    for f in (train, reference, holdout):  # a sensitive column independent of everything
        f["secret"] = rng.choice(["a", "b", "c"], len(f), p=[0.5, 0.3, 0.2])
    tree = _tree(train, "income", max_depth=6)
    threat = ppdm.ThreatModel(sensitive="secret", known=("age", "sex", "race", "education"), class_known=True)
    audit = ppdm.audit(tree, train, threat, reference=reference, holdout=holdout)
    ref, control = audit.estimate.details["reference"], audit.estimate.details["control"]
    assert abs(ref["model_adds"]) < 0.03
    assert abs(ref["accuracy"] - 0.5) < 0.03  # the imputation attacker finds nothing beyond the majority
    assert audit.reference is not None and audit.reference.summary()["records"] == len(train)
    assert abs(control["members"]["accuracy"] - control["non_members"]["accuracy"]) < 0.05
    lines = str(audit)
    assert "model-free attacker" in lines and "control:" in lines


def test_a_memorising_model_shows_a_large_membership_share(adult_split):
    train, reference, holdout = adult_split
    tree = _tree(train, "income")  # grown until its leaves are pure: it memorises
    threat = ppdm.ThreatModel(sensitive="income", preset="insider")
    audit = ppdm.audit(tree, train, threat, holdout=holdout)
    control = audit.estimate.details["control"]
    assert control["members"]["accuracy"] > 0.95
    assert control["non_members"]["accuracy"] < 0.9
    assert control["membership_share"] > 0.5
    lo, hi = control["membership_share_ci95"]
    assert lo <= control["membership_share"] <= hi


def test_the_model_free_attacker_beats_a_weak_estimate_and_the_audit_reports_the_stronger(adult_split):
    train, reference, _ = adult_split
    tree = _tree(train, "income", max_depth=4)
    threat = ppdm.ThreatModel(sensitive="relationship", preset="census", class_known=True)
    audit = ppdm.audit(tree, train, threat, reference=reference)
    ref, portfolio = audit.estimate.details["reference"], audit.estimate.details["portfolio"]
    # sex and marital status say much of relationship: the data alone beat a shallow tree's estimate ...
    assert portfolio["imputation"] > portfolio["maxent"]
    # ... so the audit reports the attacker holding both, never weaker than the data alone
    ours = audit.estimate.summary()["attacker_accuracy"]
    assert audit.estimate.details["reported_attacker"] != "maxent"
    assert ours >= ref["accuracy"] and ref["model_adds"] >= 0
    assert ours == max(portfolio.values())
    assert "reported: the strongest attacker measured" in str(audit)


def test_the_reported_attacker_is_never_weaker_than_a_simpler_one_over_a_grid(adult_split, nursery):
    """Habit 2 over models, sensitive columns and known columns: the audit with a reference sample
    reports at least the model-free attacker's accuracy, the prior's and the model-only estimate's,
    and every person it calls certain is right."""
    train, reference, _ = adult_split
    frame = nursery[0].sample(frac=1.0, random_state=1).reset_index(drop=True)
    half = len(frame) // 2
    cases = [
        (train, reference, "income", "marital-status", ("age", "sex", "race"), 6),
        (train, reference, "income", "relationship", ("age", "sex", "marital-status"), 8),
        (train, reference, "income", "education", ("age", "race"), None),
        (frame.iloc[:half].reset_index(drop=True), frame.iloc[half:], nursery[1].class_attribute, "health", ("parents", "has_nurs"), 5),
    ]
    for data, sample, target, sensitive, known, depth in cases:
        tree = _tree(data, target, max_depth=depth)
        audit = ppdm.audit(tree, data, ppdm.ThreatModel(sensitive=sensitive, known=known), reference=sample)
        est = audit.estimate
        reported = est.summary()["attacker_accuracy"]
        assert reported >= max(est.details["portfolio"].values()) - 1e-12, (sensitive, est.details["portfolio"])
        assert reported >= est.summary()["baseline"]["accuracy"] - 0.002
        certain = est.certain_groups[est.groups.group_of_record] & est.targets
        assert (est.predicted()[certain] == est.true_codes[certain]).all()


def test_outputs_known_feed_the_reference_attacker(adult_split, tmp_path):
    train, reference, _ = adult_split
    tree = _tree(train, "marital-status", max_depth=8)  # the model predicts the secret: its label says much
    blind = ppdm.ThreatModel(sensitive="marital-status", known=("age", "sex"))
    seen = ppdm.ThreatModel(sensitive="marital-status", known=("age", "sex"), outputs="label")
    without = ppdm.audit(tree, train, blind, reference=reference).reference
    with_label = ppdm.audit(tree, train, seen, reference=reference)
    assert with_label.reference.summary()["attacker_accuracy"] > without.summary()["attacker_accuracy"] + 0.05
    assert with_label.estimate.details["reference"]["outputs"] == "label"
    assert "sees each person's predicted label" in with_label.estimate.details["threat_model"]
    scored = ppdm.audit(tree, train, ppdm.ThreatModel(sensitive="marital-status", known=("age", "sex"), outputs="score"), reference=reference)
    assert scored.reference.summary()["attacker_accuracy"] >= without.summary()["attacker_accuracy"]
    alone = ppdm.audit(tree, train, seen).estimate  # the estimate reads the label itself: leaves predicting it
    assert alone.summary()["attacker_accuracy"] >= ppdm.audit(tree, train, blind).estimate.summary()["attacker_accuracy"]
    with pytest.raises(DataError, match="the reference sample: .*column 'education' is missing"):
        ppdm.audit(tree, train, seen, reference=reference.drop(columns=["education"]))
    with pytest.raises(ppdm.PpdmError, match="outputs must be one of label, score"):
        ppdm.ThreatModel(outputs="proba")
    ppdm.tree.model_files.save_model(tree, tmp_path / "tree.json")
    train.to_csv(tmp_path / "train.csv", index=False)
    reference.to_csv(tmp_path / "ref.csv", index=False)
    args = ["audit", "--model", str(tmp_path / "tree.json"), "--data", str(tmp_path / "train.csv"), "--sensitive", "marital-status", "--known", "age,sex"]
    ok = CliRunner().invoke(main, [*args, "--reference", str(tmp_path / "ref.csv"), "--outputs-known", "label"])
    assert ok.exit_code == 0, ok.output
    assert "sees each person's predicted label" in ok.output and "reported: the strongest attacker measured" in ok.output
    alone = CliRunner().invoke(main, [*args, "--outputs-known", "label"])  # the estimate reads them without a reference
    assert alone.exit_code == 0, alone.output
    assert "sees each person's predicted label" in alone.output


def test_bad_reference_and_holdout_are_one_line(adult_split, tmp_path):
    train, reference, holdout = adult_split
    tree = _tree(train, "income", max_depth=3)
    threat = ppdm.ThreatModel(sensitive="race", known=("age", "sex"))
    with pytest.raises(DataError, match="the reference sample lacks column 'sex'"):
        ppdm.audit(tree, train, threat, reference=reference.drop(columns=["sex"]))
    with pytest.raises(DataError, match="the holdout lacks column 'race'"):  # which table, not only which column
        ppdm.audit(tree, train, threat, holdout=holdout.drop(columns=["race"]))
    odd = holdout.assign(race="Martian")
    with pytest.raises(DataError, match="the holdout: column 'race' holds 'Martian'"):
        ppdm.audit(tree, train, threat, holdout=odd)
    ppdm.tree.model_files.save_model(tree, tmp_path / "tree.json")
    train.to_csv(tmp_path / "train.csv", index=False)
    reference.drop(columns=["sex"]).to_csv(tmp_path / "ref.csv", index=False)
    holdout.to_csv(tmp_path / "hold.csv", index=False)
    args = ["audit", "--model", str(tmp_path / "tree.json"), "--data", str(tmp_path / "train.csv"), "--sensitive", "race", "--known", "age,sex"]
    bad = CliRunner().invoke(main, [*args, "--reference", str(tmp_path / "ref.csv")])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1 and "'sex'" in bad.output
    ok = CliRunner().invoke(main, [*args, "--holdout", str(tmp_path / "hold.csv")])
    assert ok.exit_code == 0, ok.output
    assert "control: the same guesses on 2,000 people outside the training set" in ok.output


def test_a_numeric_column_read_in_intervals_is_placed_in_them():
    """The audit reads a numeric sensitive column the trees split on in intervals (``e <= 1.5``):
    a reference's or holdout's raw values go to the interval their audited records span; a value
    in a gap between spans goes nowhere."""
    from ppdm.attacks.baselines.reference import value_codes

    values = ("e <= 1.5", "1.5 < e <= 3.5", "e > 3.5")
    audited = pd.Series([1, 1, 2, 3, 5, 6])
    codes = np.array([0, 0, 1, 1, 2, 2])
    got = value_codes(pd.Series([0, 1, 2, 3, 3.2, 4.5, 5, 9, np.nan]), values, audited, codes)
    assert got.tolist() == [0, 0, 1, 1, -1, -1, 2, 2, -1]  # 3.2 and 4.5: between the spans [2, 3] and [5, 6]
    assert value_codes(pd.Series(["e <= 1.5"]), values, audited, codes).tolist() == [0]  # by name first
    assert value_codes(pd.Series([1, 2]), values).tolist() == [-1, -1]  # without the audited values: by name only


def test_the_reference_and_the_holdout_work_on_a_numeric_sensitive_column(adult_split):
    """A numeric sensitive column the tree splits on: the model-free attacker and the control
    (it was "0 usable rows" and "holds 13, not one of the audit's values")."""
    train, reference, holdout = adult_split
    tree = _tree(train, "income", max_depth=4)
    assert "education-num" in tree.split_attributes
    threat = ppdm.ThreatModel(sensitive="education-num", known=("age", "sex", "hours-per-week", "income"))
    audit = ppdm.audit(tree, train, threat, reference=reference, holdout=holdout, progress=False)
    details = audit.estimate.details
    assert details["reference"]["accuracy"] > 0 and details["control"]["non_members"]["people"] == len(holdout)


def test_a_holdout_that_is_the_reference_sample_is_refused_when_the_imputation_is_reported(adult_split):
    """The model-free attacker's training people are no control (its accuracy on them is its
    training accuracy: a Bank Loan trial came out right for 99.2 % of them)."""
    train, reference, _ = adult_split
    tree = _tree(train, "income", max_depth=2)
    threat = ppdm.ThreatModel(sensitive="relationship", known=("age", "sex", "marital-status"))
    audit = ppdm.audit(tree, train, threat, reference=reference, progress=False)
    assert "imputation" in audit.estimate.details["reported_attacker"]  # the case this guards
    with pytest.raises(DataError, match="the holdout is the reference sample"):
        ppdm.audit(tree, train, threat, reference=reference, holdout=reference.copy(), progress=False)
