"""A model known only by its outputs (issue 46: "a CSV of predicted probabilities for models built
elsewhere"): the checks of its outputs give what the same checks give on the fitted model; the
rules that need the model itself are "not checked", never passed; a bad scores file is refused in
one line naming its row or column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from ppdm.check import check_model
from ppdm.check.recommend import CONDITIONAL
from ppdm.check.scores import UNMEASURED
from ppdm.errors import DataError

CLASS = "target"
OUTPUT_RULES = ("min_group_size", "class_disclosure", "small_groups", "generalisation_gap", "beat_majority")
MODEL_RULES = ("family", "residual_dof", "hyperparameters")


def _scores(model, X):
    return pd.DataFrame(model.predict_proba(X), columns=[str(c) for c in model.classes_])


def _both(model, cancer, policy="acro"):
    """The check of the fitted ``model`` and the check of its outputs alone."""
    Xtr, ytr, train, test = cancer
    model.fit(Xtr, ytr)
    full = check_model(model, train, class_attribute=CLASS, holdout=test, policy=policy)
    held = _scores(model, test[Xtr.columns])
    outputs = check_model(None, train, class_attribute=CLASS, holdout=test, policy=policy, scores=_scores(model, Xtr), holdout_scores=held)
    return full, outputs


@pytest.mark.parametrize(
    "model",
    [LogisticRegression(max_iter=5000), DecisionTreeClassifier(max_depth=3, random_state=0), DummyClassifier(strategy="prior")],
    ids=["logistic", "tree", "majority"],
)
def test_the_outputs_alone_give_the_checks_of_the_outputs_as_the_model_does(cancer, model):
    full, outputs = _both(model, cancer)
    assert outputs.classes["outputs"] == full.classes["outputs"]  # the same groups of equal probability vectors
    for rule in OUTPUT_RULES:
        mine, theirs = outputs.finding(rule), full.finding(rule)
        if rule in ("generalisation_gap", "beat_majority") or "structure" not in full.classes:
            assert (mine.state, mine.value, mine.evidence) == (theirs.state, theirs.value, theirs.evidence), rule
    if "structure" in full.classes:  # a tree's leaves refine its outputs: never fewer records flagged
        for rule in ("min_group_size", "small_groups"):
            assert (outputs.finding(rule).people or 0) <= (full.finding(rule).people or 0)
    assert outputs.facts["family"] == "unknown" and outputs.facts["parameters"] is None and not outputs.facts["white_box"]


def test_the_rules_that_need_the_model_are_not_checked_and_keep_it_conditional(cancer):
    """The fitted logistic regression passes the family, degrees-of-freedom and hyperparameter
    rules; known by its outputs alone they are "not checked" (never passed) and conditions of its release."""
    full, outputs = _both(LogisticRegression(max_iter=5000), cancer)
    for rule in MODEL_RULES:
        assert full.finding(rule).state == "passed", full.finding(rule).line()
        finding = outputs.finding(rule)
        assert finding.state == "not checked" and finding.strength == "none" and UNMEASURED in finding.evidence
        assert finding.line() in outputs.recommendation.conditions
    assert outputs.decision == CONDITIONAL and all(rule in outputs.recommendation.reasons[0] for rule in MODEL_RULES)
    assert outputs.to_dict()["model"]["parameters_counted"] == UNMEASURED


def test_zeros_in_the_outputs_are_a_class_disclosure_and_the_majority_model_is_not_released(cancer):
    _, tree = _both(DecisionTreeClassifier(random_state=0), cancer)
    zeros = tree.finding("class_disclosure")
    assert zeros.state == "failed" and zeros.people == tree.classes["outputs"]["people_with_zeros"] > 0
    _, flat = _both(DummyClassifier(strategy="prior"), cancer)
    assert flat.finding("beat_majority").state == "failed" and flat.decision == CONDITIONAL
    assert "no better than the majority class" in flat.recommendation.reasons[0]


def test_without_held_out_rows_the_gap_is_not_checked(cancer):
    Xtr, ytr, train, _ = cancer
    model = LogisticRegression(max_iter=5000).fit(Xtr, ytr)
    result = check_model(None, train, class_attribute=CLASS, scores=_scores(model, Xtr))
    assert result.finding("generalisation_gap").state == result.finding("beat_majority").state == "not checked"


def _bad(frame: pd.DataFrame, case: str) -> pd.DataFrame:
    bad = frame.copy()
    if case == "rows":
        return bad.iloc[:-1]
    if case == "more":  # read no further than one row past the count
        return pd.concat([bad, bad], ignore_index=True)
    if case == "column":
        return bad.rename(columns={"1": "yes"})
    if case == "one":
        return bad[["0"]]
    if case == "range":
        bad.iloc[3] = [1.5, -0.5]
    elif case == "sum":
        bad.iloc[4] = [0.5, 0.6]
    elif case == "nan":
        bad.iloc[5, 0] = np.nan
    return bad


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("rows", "397 rows of probabilities for 398 training rows"),
        ("more", "more than 398 rows of probabilities for 398 training rows"),
        ("column", "column 'yes' is not a class of 'target'"),
        ("missing", "no column for the class '2' of 'target'"),
        ("one", "one column per class, at least two (it has 1)"),
        ("range", "column '0', row 3: 1.5 is not a probability in [0, 1]"),
        ("sum", "row 4: the probabilities sum to 1.1, not 1 (within 1e-06)"),
        ("nan", "column '0', row 5: nan is not a probability in [0, 1]"),
    ],
)
def test_a_bad_scores_table_is_refused_in_one_line_naming_its_row_or_column(cancer, tmp_path, case, said):
    Xtr, ytr, train, _ = cancer
    scores = _scores(LogisticRegression(max_iter=5000).fit(Xtr, ytr), Xtr)
    path = tmp_path / "scores.csv"
    _bad(scores, case).to_csv(path, index=False)
    if case == "missing":  # a third class in the training table, with no column
        train = train.assign(**{CLASS: np.where(np.arange(len(train)) == 0, 2, train[CLASS])})
    with pytest.raises(DataError) as caught:
        check_model(None, train, class_attribute=CLASS, scores=path)
    message = str(caught.value)
    assert said in message and "\n" not in message and str(path) in message, message


def test_scores_and_a_model_or_held_out_rows_without_their_scores_are_refused(cancer):
    Xtr, ytr, train, test = cancer
    model = LogisticRegression(max_iter=5000).fit(Xtr, ytr)
    scores = _scores(model, Xtr)
    with pytest.raises(DataError, match="not both"):
        check_model(model, train, class_attribute=CLASS, scores=scores)
    with pytest.raises(DataError, match="need their scores"):
        check_model(None, train, class_attribute=CLASS, holdout=test, scores=scores)
    with pytest.raises(DataError, match="training rows too"):
        check_model(model, train, class_attribute=CLASS, holdout=test, holdout_scores=scores)
