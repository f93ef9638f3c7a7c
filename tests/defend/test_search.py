"""The defense search on a subset of Adult in paper 000's setting: the chosen model meets the
target when audited again on its own, nothing is dropped, inputs are checked."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from ppdm.attacks import homogeneity_attack
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.data.hierarchy import adult_hierarchies
from ppdm.defend import DEFAULT_TARGET, defend, parse_target
from ppdm.defend.candidates import (
    FAMILIES,
    Grids,
    Learner,
    encode_for_sklearn,
    interleave,
    learner_for,
    publish_less_candidates,
)
from ppdm.errors import DataError, PpdmError
from ppdm.learn import ID3Classifier
from ppdm.tree import Disclosure

QI = ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country", "income"]
THREAT = ThreatModel(known=tuple(QI), publish="error-rates")


@pytest.fixture(scope="module")
def adult_education():
    from ppdm.data.datasets import load_adult

    train, _ = load_adult("train", sensitive="education", class_attribute="education")
    test, _ = load_adult("test", sensitive="education", class_attribute="education")
    train = train[QI + ["education"]].sample(n=4000, random_state=0).reset_index(drop=True)
    test = test[QI + ["education"]].sample(n=2000, random_state=0).reset_index(drop=True)
    tree = ID3Classifier(min_samples_leaf=2).fit(train[QI], train["education"]).tree_
    tree.class_attribute = "education"
    return train, test, tree


@pytest.fixture(scope="module")
def searched(adult_education):
    train, test, tree = adult_education
    return defend(train, THREAT, DEFAULT_TARGET, model=tree, test=test, grids=Grids.small(), hierarchies=adult_hierarchies(), progress=False)


def test_the_chosen_model_meets_the_target_when_audited_again(searched, adult_education):
    train, _, _ = adult_education
    assert searched.chosen is not None and searched.chosen.disclosure is Disclosure.ERROR_RATES
    maxent = maxent_attack(searched.chosen, train, threat=THREAT)
    leaves = homogeneity_attack(searched.chosen, train, ThreatModel(known=QI))
    certain = maxent.exposed_right() | leaves.exposed_right()
    confidence = np.maximum(maxent.confidence_in_truth(), leaves.confidence_in_truth())
    assert certain.sum() == 0
    assert (confidence >= 0.9 - 1e-9).mean() <= 0.01
    row = searched.chosen_row()
    assert row["meets_target"] and row["certain"] == 0


def test_the_frontier_holds_every_candidate_and_the_choice_is_the_most_accurate(searched):
    frame = searched.frontier
    assert frame.iloc[0]["family"] == "unprotected" and not frame.iloc[0]["meets_target"]
    assert set(frame["family"]) == {"unprotected", "pruning-1", "pruning-2", "retrain", "kadet", "publish-less", "dp"}
    assert (frame["status"] == "audited").all()
    meeting = frame[frame["meets_target"]]
    assert searched.chosen_row()["accuracy"] == meeting["accuracy"].max()
    assert frame["pareto"].any() and searched.accuracy_on == "test"
    # publishing labels only: the maximum-entropy attacker learns nothing (uniform estimate)
    labels = frame[frame["label"] == "publish labels"].iloc[0]
    assert labels["certain"] == 0 and labels["audits"] in ("maxent", "maxent+portfolio")
    # the DP baseline is not audited by maximum entropy (its counts are noisy)
    assert set(frame.loc[frame["family"] == "dp", "audits"]) == {"homogeneity"}


def test_frontier_records_for_the_plot(searched, tmp_path):
    path = tmp_path / "frontier.json"
    searched.save_frontier(path)
    records = json.loads(path.read_text(encoding="utf-8"))
    assert len(records) == len(searched.frontier)
    assert list(records[0])[:4] == ["label", "accuracy", "risk", "meets_target"]
    assert sum(r["chosen"] for r in records) == 1
    assert isinstance(records[1]["params"], dict)
    assert {r["risk_measure"] for r in records} == {"certain"}


def test_time_budget_reports_what_it_did_not_reach(adult_education):
    train, _, tree = adult_education
    result = defend(train, THREAT, model=tree, families=["pruning", "publish-less"], grids=Grids.small(), time_budget=1e-9, progress=False)
    assert result.chosen is None
    assert len(result.unfinished) == len(result.frontier) == 1 + 2 * 3 + 1  # error rates published: labels is the one level below
    assert result.accuracy_on == "held-out"  # no test rows: a share of the data was held out


@pytest.mark.filterwarnings("ignore::ppdm.errors.UninformativeKnowledgeWarning")
def test_auditors_are_pluggable_and_failures_are_kept(adult_education):
    train, _, tree = adult_education

    def refuses_kadet(tree, data, threat, noisy):
        if tree.algorithm.startswith("kadet"):
            raise PpdmError("this audit does not do kADET")

    def everyone_certain(tree, data, threat, noisy):
        result = maxent_attack(tree, data, threat=threat)
        result.posterior = np.eye(result.posterior.shape[1])[result.posterior.argmax(axis=1)]
        result.exposed = np.ones(result.groups.n_records, dtype=bool)
        return result

    result = defend(
        train, THREAT, "certain=0", model=tree, families=["kadet", "publish-less"], grids=Grids(k=(5,), l=()),
        auditors=[refuses_kadet, everyone_certain], progress=False,
    )
    frame = result.frontier.set_index("label")
    assert frame.loc["kADET k=5", "status"] == "failed: this audit does not do kADET"
    assert result.chosen is None and not frame["meets_target"].any()


def test_span_target_and_risk_axis(adult_education):
    train, _, tree = adult_education
    result = defend(train, THREAT, "span=20,certain=0", model=tree, families=["kadet"], grids=Grids(k=(5, 50), l=()), risk="span", progress=False)
    frame = result.frontier.set_index("label")
    assert frame.loc["kADET k=50", "span"] >= 50 and frame.loc["kADET k=50", "risk"] == frame.loc["kADET k=50", "span"]
    assert result.frontier.iloc[0]["span"] < 20  # the input model
    assert result.chosen_label in ("kADET k=50", "kADET k=5") and frame.loc[result.chosen_label, "span"] >= 20


def test_a_scikit_learn_tree_is_retrained_with_its_own_settings(adult_education):
    train, test, _ = adult_education
    X = encode_for_sklearn(train[QI])
    est = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=3, random_state=0).fit(X, train["education"])
    result = defend(
        train, THREAT, model=est, class_attribute="education", test=test, families=["retrain", "pruning"],
        grids=Grids.small(), progress=False,
    )
    frame = result.frontier
    assert (frame["status"] == "audited").all(), frame["status"].tolist()
    assert frame["label"].str.startswith("DecisionTreeClassifier max_depth=").any()
    assert result.chosen is not None and result.chosen.algorithm == "sklearn"


def test_a_scikit_learn_tree_splitting_on_few_columns_is_retrained_on_all_it_saw(adult_education):
    train, _, _ = adult_education
    X = encode_for_sklearn(train[QI])
    est = DecisionTreeClassifier(min_samples_leaf=1500, random_state=0).fit(X, train["education"])
    result = defend(train, THREAT, model=est, class_attribute="education", families=["retrain"], grids=Grids(max_depth=(), min_samples_leaf=(50,)), progress=False)
    original, retrained = result.frontier.iloc[0], result.frontier.iloc[1]
    assert original["leaves"] <= 3 and retrained["status"] == "audited" and retrained["leaves"] > original["leaves"]


def test_training_from_data_alone(adult_education):
    train, _, _ = adult_education
    result = defend(train, THREAT, "certain=0", class_attribute="education", families=["publish-less"], progress=False)
    assert result.frontier.iloc[0]["leaves"] > 10 and result.chosen_label is not None


def test_learner_for_a_tree_and_the_family_order(adult_education):
    _, _, tree = adult_education
    assert isinstance(learner_for(tree).estimator, ID3Classifier)
    assert [c.label for c in publish_less_candidates(tree, Disclosure.CLASS_COUNTS)] == ["publish error-rates", "publish labels"]
    assert interleave([[1, 2, 3], ["a"]]) == [1, "a", 2, 3]
    assert not Learner(ID3Classifier()).is_sklearn


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"data": "table.csv"}, DataError, "must be a pandas DataFrame"),
        ({"data": pd.DataFrame()}, DataError, "no rows"),
        ({"model": None}, PpdmError, "give a model, or class_attribute"),
        ({"model": None, "class_attribute": "nope"}, DataError, "class column 'nope'"),
        ({"families": ["prune"]}, PpdmError, "unknown candidate family 'prune'"),
        ({"families": []}, PpdmError, "no candidate family"),
        ({"risk": "span"}, PpdmError, "no measure 'span'"),
        ({"time_budget": 0}, PpdmError, "time_budget must be positive"),
        ({"model": object()}, PpdmError, "cannot defend a object"),
        ({"threat": ThreatModel(sensitive="age")}, DataError, "sensitive column 'age'"),
        ({"test": pd.DataFrame({"x": [1]})}, DataError, "lacks the class column"),
    ],
)
def test_bad_inputs(adult_education, kwargs, error, message):
    train, _, tree = adult_education
    args = {"data": train, "threat": THREAT, "model": tree, "families": ["publish-less"], "progress": False, **kwargs}
    data = args.pop("data")
    with pytest.raises(error, match=message):
        defend(data, **args)


@pytest.mark.filterwarnings("ignore::ppdm.errors.UninformativeKnowledgeWarning")
def test_a_forest_is_defended_with_forest_candidates(adult_education):
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.tree import Forest

    train, _, _ = adult_education
    forest = RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(encode_for_sklearn(train[QI]), train["education"])
    result = defend(train, THREAT, "certain=0", model=forest, class_attribute="education", families=["publish-less"], progress=False)
    assert list(result.frontier["label"]) == ["unprotected (input model, fitted again on the training part)", "publish labels"]
    assert isinstance(result.chosen, Forest) and result.chosen_label == "publish labels"


def test_families_default_and_target_text():
    assert FAMILIES == ("pruning", "retrain", "kadet", "publish-less", "dp")
    assert parse_target(DEFAULT_TARGET).describe() == "nobody certain, ≤ 1 % at confidence ≥ 0.9"


def test_encoding_for_a_scikit_learn_estimator_follows_its_feature_names():
    X = pd.DataFrame({"a": pd.Categorical(["x", "y", "x"]), "n": [1.0, 2.0, 3.0], "o": pd.Categorical(["p", "q", "q"])})
    encoded = encode_for_sklearn(X, ["a_y", "n", "o"])
    assert encoded["a_y"].tolist() == [0.0, 1.0, 0.0]
    assert encoded["n"].tolist() == [1.0, 2.0, 3.0]
    assert encoded["o"].tolist() == [0.0, 1.0, 1.0]  # ordinal codes in the category order
    assert list(encode_for_sklearn(X).columns) == ["n", "a_x", "a_y", "o_p", "o_q"]


def test_the_progress_bar_runs(adult_education, capsys):
    train, _, tree = adult_education
    result = defend(train, THREAT, "certain=0", model=tree, families=["publish-less"], progress=True)
    assert result.chosen_label == "publish labels"
