"""Every attack result next to what the prior alone gives; wrong certain guesses are not exposures;
pruned trees audit with the truth feasible."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from ppdm.attacks import homogeneity_attack
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import audit_problem, maxent_attack
from ppdm.data.datasets import load_adult
from ppdm.defend import collapse_small_children, remove_small_leaves
from ppdm.metrics.baseline import CERTAINTY_TOL, at_least, disclosure_summary, wilson_interval
from ppdm.tree import tree_from_sklearn


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_one_tolerance_for_certain():
    assert at_least(np.array([1 - CERTAINTY_TOL / 2]), 1.0).all()
    assert not at_least(np.array([1 - 10 * CERTAINTY_TOL]), 1.0).any()


def test_disclosure_summary_against_the_prior():
    posterior = np.array([[1.0, 0.0], [1.0, 0.0], [0.2, 0.8], [0.5, 0.5]])
    truth = np.array([0, 1, 1, 0])  # the second certain guess is wrong
    prior = np.array([0.75, 0.25])
    s = disclosure_summary(posterior, truth, prior, ("a", "b"))
    assert s["attacker_accuracy"] == 0.75 and s["baseline"]["accuracy"] == 0.5
    assert s["baseline"]["majority_guess"] == "a"
    assert s["lift"]["difference"] == pytest.approx(0.25) and s["lift"]["ratio"] == pytest.approx(1.5)
    assert s["certain_right"] == 1 and s["certain_wrong"] == 1
    assert s["confidence_in_true_value"][">=1"] == 1
    # the prior holds the two 'a' people at 0.75: >= 0.5 for them, not for the 'b' people
    assert s["prior_alone"][">=0.5"] == 2 and s["confidence_in_true_value"][">=0.5"] == 3
    assert s["beyond_prior"][">=0.5"] == 1 and s["beyond_prior"][">=0.8"] == 2


@pytest.fixture(scope="module")
def adult_tree():
    frame, _ = load_adult("train")
    features = ["age", "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "hours-per-week"]
    X = np.column_stack([frame[c].cat.codes if isinstance(frame[c].dtype, pd.CategoricalDtype) else frame[c] for c in features])
    est = DecisionTreeClassifier(random_state=0, min_samples_leaf=1).fit(X, frame["income"])
    return frame, features, tree_from_sklearn(est, frame[features], feature_names=features, class_attribute="income")


def test_wrong_certain_guesses_after_method_1_are_not_exposures(adult_tree):
    frame, features, tree = adult_tree
    pruned = remove_small_leaves(tree, 5)
    result = homogeneity_attack(pruned, frame)
    s = result.summary()
    # records of removed leaves now land in pure leaves of another class: claimed, but wrong
    assert s["exposed_wrong"] > 0
    claimed = int((result.exposed & result.targets).sum())
    assert s["exposed_records"] + s["exposed_wrong"] == claimed
    assert s["certain_wrong"] > 0 and s["certain_right"] == s["confidence_in_true_value"][">=1"]


@pytest.mark.parametrize("method, coverage", [(remove_small_leaves, "subset"), (collapse_small_children, "exact")])
@pytest.mark.parametrize("sensitive", ["income", "sex"])
def test_pruned_trees_audit_with_the_truth_feasible(adult_tree, method, coverage, sensitive):
    frame, features, tree = adult_tree
    pruned = method(tree, 10)
    known = tuple(c for c in features if c != sensitive) + (() if sensitive == "income" else ("income",))
    threat = ThreatModel(sensitive=sensitive, known=known).resolve(frame, "income")
    audit = audit_problem(pruned, frame, threat, check=False, factored=False)
    assert audit.coverage == coverage
    p = audit.table.truth() / audit.table.groups.weights[:, None]
    assert audit.problem.violations(p).max() <= 1e-9
    result = maxent_attack(pruned, frame, threat=threat)
    assert result.details["max_violation"] <= 1e-8
    s = result.summary()
    assert s["attacker_accuracy"] >= s["baseline"]["accuracy"] - 0.002


def test_a_near_tie_goes_to_the_prior_not_to_solver_noise():
    from ppdm.metrics.baseline import TIE_TOL, best_guess

    noisy = np.array([[0.5 + TIE_TOL / 10, 0.5 - TIE_TOL / 10], [0.5 - TIE_TOL / 10, 0.5 + TIE_TOL / 10], [0.2, 0.8]])
    assert best_guess(noisy, prior=np.array([0.3, 0.7])).tolist() == [1, 1, 1]
    assert best_guess(noisy).tolist() == [0, 0, 1]  # no prior: the first value of a tie
    assert best_guess(noisy, prior=np.array([0.9, 0.1])).tolist() == [0, 0, 1]  # a clear winner beats the prior
