"""Membership audit of a published rule set (issue 27: a rule's support counts who was trained on)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks.membership.audit import MembershipOptions, membership_attack
from ppdm.errors import DataError
from ppdm.exact.membership import ProofOptions
from ppdm.maxent.solvers.bernoulli import BernoulliOptions
from ppdm.rules.mining import mine_rules

from oracles import brute_force_membership_maxent, feasible_memberships

ADULT_QIS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]


def _population(frame: pd.DataFrame, seed: int, n: int) -> tuple[pd.DataFrame, np.ndarray]:
    sample = frame.sample(n, random_state=seed).reset_index(drop=True)
    member = np.random.default_rng(seed).random(n) < 0.5
    return sample, member


@pytest.mark.parametrize("publish", ["exact", "thresholds"])
@pytest.mark.parametrize("which", ["adult", "nursery"])
def test_truth_feasible_and_no_proof_wrong(which, publish, adult_train, nursery):
    frame, roles = adult_train if which == "adult" else nursery
    qis = ADULT_QIS if which == "adult" else [c for c in frame.columns if c != roles.class_attribute]
    sample, member = _population(frame, 1, 1500)
    rules = mine_rules(sample[member], qis, roles.class_attribute, 0.05, 0.5).published(publish)
    assert len(rules) > 5
    result = membership_attack(rules, sample.assign(member=member), truth="member", options=MembershipOptions(proof=ProofOptions(time_limit=5)))
    s = result.summary()
    assert result.rows.truth_violations(member).size == 0  # habit 1: the real training set meets every row
    assert s["wrong_proved_members"] == 0 and s["wrong_proved_non_members"] == 0
    assert s["auc"] >= 0.5 - 0.02  # never below the model-free attacker's
    assert result.rows.A.shape[0] == (2 if publish == "exact" else 1) * len(rules) + 1  # every rule counts someone
    assert result.details["estimate_converged"] and "note" not in result.details, result.details  # exact supports: Newton's dual


def _tiny(seed: int, n: int = 12) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["u", "v"], n), "s": rng.choice(["n", "p"], n)})
    member = np.zeros(n, dtype=bool)
    member[rng.choice(n, n // 2, replace=False)] = True
    return frame, member


@pytest.mark.parametrize("seed", range(5))
def test_proofs_are_the_brute_force_backbone(seed):
    frame, member = _tiny(seed)
    for publish in ("exact", "thresholds"):
        rules = mine_rules(frame[member], ["a", "b"], "s", 0.15, 0.4).published(publish)
        if not len(rules):
            continue
        result = membership_attack(rules, frame.assign(member=member), truth="member")
        feasible = feasible_memberships(result.rows)
        assert (feasible == member).all(axis=1).any()  # the truth is among the consistent training sets
        assert result.details["proof_settled"]
        np.testing.assert_array_equal(result.state == 1, feasible.min(axis=0) == 1, err_msg=publish)
        np.testing.assert_array_equal(result.state == 0, feasible.max(axis=0) == 0, err_msg=publish)


@pytest.mark.parametrize("seed", range(3))
def test_estimate_is_the_brute_force_maxent(seed):
    frame, member = _tiny(seed, n=9)
    rules = mine_rules(frame[member], ["a", "b"], "s", 0.2, 0.4)
    if not len(rules):
        pytest.skip("no rule at these thresholds")
    result = membership_attack(rules, frame.assign(member=member), truth="member")
    np.testing.assert_allclose(result.probability, brute_force_membership_maxent(result.rows, result.state), atol=2e-3)


def test_a_rule_matching_as_many_candidates_as_its_support_proves_them():
    frame = pd.DataFrame({"a": ["x", "x", "y", "y", "y", "z"], "s": ["p", "p", "n", "n", "p", "n"]})
    member = np.array([True, True, True, False, True, False])
    rules = mine_rules(frame[member], ["a"], "s", 0.3, 0.9)  # a=x ⇒ s=p: 2 of 4 members, both candidates of it
    result = membership_attack(rules, frame.assign(member=member), truth="member")
    assert (result.state[:2] == 1).all()


def test_refusals_name_what_is_wrong(adult_train):
    frame, roles = adult_train
    sample, member = _population(frame, 2, 400)
    rules = mine_rules(sample[member], ["sex", "race"], roles.class_attribute, 0.05, 0.5)
    population = sample.assign(member=member)
    with pytest.raises(DataError, match="lacks column 'race'"):
        membership_attack(rules, population.drop(columns=["race"]))
    with pytest.raises(DataError, match="n_records"):
        membership_attack(replace(rules, n_records=None), population)
    rounded = replace(rules, rules=[replace(r, support=round(r.support, 2)) for r in rules.rules])
    with pytest.raises(DataError, match=r"rules\[\d+\].*rounded"):
        membership_attack(rounded, population)
    with pytest.raises(DataError, match="sensitive value"):
        membership_attack(rules, population, class_known=False)
    with pytest.raises(DataError, match="does not hold every training record"):
        membership_attack(rules, population[~member])


def test_the_quasi_newton_dual_agrees_with_newtons():
    """Past ``dense_rows`` rows the dual goes by L-BFGS-B: the same maximum-entropy answer."""
    frame, member = _tiny(1, n=9)
    rules = mine_rules(frame[member], ["a", "b"], "s", 0.2, 0.4)
    newton = membership_attack(rules, frame.assign(member=member), truth="member").probability
    options = MembershipOptions(solver=BernoulliOptions(dense_rows=0))
    quasi = membership_attack(rules, frame.assign(member=member), truth="member", options=options).probability
    np.testing.assert_allclose(quasi, newton, atol=2e-3)
