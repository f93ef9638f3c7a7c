"""The honest baselines: the model-free attacker fitted on a reference sample and the control on
people outside the training set (ppdm.attacks.reference, ppdm.audit(reference=, holdout=))."""

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


def test_the_model_free_attacker_beats_a_weak_estimate_and_the_audit_says_so(adult_split):
    train, reference, _ = adult_split
    tree = _tree(train, "income", max_depth=4)
    threat = ppdm.ThreatModel(sensitive="relationship", preset="census", class_known=True)
    audit = ppdm.audit(tree, train, threat, reference=reference)
    ref = audit.estimate.details["reference"]
    ours = audit.estimate.summary()["attacker_accuracy"]
    # sex and marital status say much of relationship: the data alone beat a shallow tree's estimate
    assert ref["accuracy"] > ours and ref["model_adds"] < 0
    assert "the model adds -" in str(audit)


def test_bad_reference_and_holdout_are_one_line(adult_split, tmp_path):
    train, reference, holdout = adult_split
    tree = _tree(train, "income", max_depth=3)
    threat = ppdm.ThreatModel(sensitive="race", known=("age", "sex"))
    with pytest.raises(DataError, match="'sex'"):
        ppdm.audit(tree, train, threat, reference=reference.drop(columns=["sex"]))
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
