"""A target against the model-free baseline: what the model adds beyond a population sample
(``lift_over_reference<=X``, issue 26)."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.cli import main
from ppdm.defend import defend
from ppdm.defend.candidates import Grids
from ppdm.defend.targets import LiftOverReference, parse_target

THREAT = ppdm.ThreatModel(sensitive="occupation", preset="insider")  # a deep tree adds 0.037 beyond the sample here


@pytest.fixture(scope="module")
def split(adult_train):
    frame = adult_train[0].sample(6000, random_state=0).reset_index(drop=True)
    for c in frame.columns:
        if isinstance(frame[c].dtype, pd.CategoricalDtype):
            frame[c] = frame[c].astype(str)
    return frame.iloc[:3000].reset_index(drop=True), frame.iloc[3000:].reset_index(drop=True)


def test_parse():
    target = parse_target("certain=0,lift_over_reference<=0.02")
    assert isinstance(target.measures[1], LiftOverReference) and target.needs_reference
    assert target.to_text() == "certain=0,lift_over_reference<=0.02"
    with pytest.raises(ppdm.PpdmError, match="lift_over_reference: the accuracy lift must be in"):
        parse_target("lift=2")


def test_the_chosen_model_adds_little_beyond_the_population_sample(split):
    train, reference = split
    X = pd.get_dummies(train.drop(columns=["income"]))
    tree = ppdm.from_estimator(DecisionTreeClassifier(random_state=0).fit(X, train["income"]), train)  # grown until pure
    grids = Grids(max_depth=(2, 4), min_samples_leaf=(200,))
    result = defend(tree, train, THREAT, "lift_over_reference<=0.01", reference=reference, families=["retrain", "publish-less"], grids=grids, progress=False)
    frame = result.frontier
    unprotected = frame.iloc[0]
    assert unprotected["lift_over_reference"] > 0.01 and not unprotected["meets_target"]
    row = result.chosen_row()
    assert row["meets_target"] and row["lift_over_reference"] <= 0.01
    again = ppdm.audit(result.chosen, result.train, THREAT, reference=reference).estimate.details["reference"]
    assert again["model_adds"] == pytest.approx(row["lift_over_reference"], abs=1e-9)
    with pytest.raises(ppdm.PpdmError, match="give reference="):
        defend(tree, train, THREAT, "lift_over_reference<=0.01", progress=False)
    with pytest.raises(ppdm.PpdmError, match="reference= is read by lift_over_reference only"):
        defend(tree, train, THREAT, "certain=0", reference=reference, progress=False)


def test_the_cli_needs_the_reference_for_the_lift(split, tmp_path):
    train, reference = split
    X = pd.get_dummies(train.drop(columns=["income"]))
    tree = ppdm.from_estimator(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, train["income"]), train)
    ppdm.tree.model_files.save_model(tree, tmp_path / "tree.json")
    train.to_csv(tmp_path / "train.csv", index=False)
    reference.to_csv(tmp_path / "ref.csv", index=False)
    args = ["defend", "--model", str(tmp_path / "tree.json"), "--data", str(tmp_path / "train.csv"), "--sensitive", "occupation",
            "--preset", "insider", "--target", "lift_over_reference<=0.5", "--families", "publish-less"]  # fmt: skip
    bad = CliRunner().invoke(main, args)
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1 and "--reference" in bad.output
    ok = CliRunner().invoke(main, [*args, "--reference", str(tmp_path / "ref.csv")])
    assert ok.exit_code == 0, ok.output
