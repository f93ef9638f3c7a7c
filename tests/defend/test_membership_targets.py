"""Membership targets of the defense search (issue 27): parsed from text, measured by the membership
audit of every candidate over the training rows and a non-member sample, and the choice meets the
target when audited again; refused with one line without the sample."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.attacks.membership.audit import membership_attack
from ppdm.defend import MembersProved, MiaTpr, parse_target
from ppdm.defend.candidates import Grids
from ppdm.defend.membership import dp_tpr_bound, membership_population
from ppdm.defend.pruning import remove_small_leaves
from ppdm.errors import DataError, PpdmError
from ppdm.tree import tree_from_sklearn

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]
TARGET = "members_proved=0,mia_tpr@1%<=0.02"


@pytest.fixture(scope="module")
def split(nursery):
    """A random half of 3,000 Nursery people trains a depth-unlimited tree; the other half never met it."""
    frame, _ = nursery
    population = frame.sample(3000, random_state=0).reset_index(drop=True)
    member = np.random.default_rng(0).random(len(population)) < 0.5
    train, others = population[member].reset_index(drop=True), population[~member].reset_index(drop=True)
    est = DecisionTreeClassifier(random_state=0).fit(pd.get_dummies(train[FEATURES]).astype(float), train["class"])
    return tree_from_sklearn(est, train[FEATURES], y=train["class"]), train, others


def _candidates(train, others):
    return pd.concat([train.assign(member=True), others.assign(member=False)], ignore_index=True)


def test_targets_parse_and_print_back():
    target = parse_target(TARGET)
    assert target.measures == (MembersProved(0), MiaTpr(0.02, 0.01))
    assert [m.name for m in target.measures] == ["members_proved", "mia_tpr@1%"]
    assert parse_target(target.to_text()) == target and target.needs_membership and not target.needs_attacks
    assert parse_target("mia_tpr@0.1%=2%").measures == (MiaTpr(0.02, 0.001),)
    assert parse_target("certain=0,members_proved<=3").needs_attacks


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mia_tpr<=0.02", "takes a false-positive rate"),
        ("members_proved=0.5", "whole number"),
        ("mia_tpr@1%<=1.5", "must be in [0, 1]"),
        ("span<=5", "lower limit"),
    ],
)
def test_bad_membership_targets_say_what_is_wrong(text, message):
    with pytest.raises(PpdmError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_target(text)


def test_a_membership_target_needs_the_non_members(split):
    tree, train, others = split
    with pytest.raises(PpdmError, match="members_proved is a membership measure: give membership="):
        ppdm.defend(tree, train, None, TARGET)
    with pytest.raises(PpdmError, match="read by membership measures only"):
        ppdm.defend(tree, train, None, "certain=0", membership=others)
    with pytest.raises(DataError, match="lacks column 'health'"):
        ppdm.defend(tree, train, None, TARGET, membership=others.drop(columns=["health"]))


def test_the_non_member_sample_keeps_its_non_members(split):
    _, train, others = split
    population = membership_population(train, _candidates(train, others), [*FEATURES, "class"])
    assert population.n_members == len(train) and len(population.candidates) == len(train) + len(others)


def test_the_deep_tree_fails_and_the_choice_meets_the_target_when_audited_again(split):
    tree, train, others = split
    result = ppdm.defend(
        tree, train, None, TARGET, membership=others, families=["pruning", "retrain", "publish-less", "dp"], grids=Grids.small(),
        progress=False,
    )
    frame = result.frontier.set_index("label")
    unprotected = result.frontier.iloc[0]
    assert unprotected["members_proved"] > 0 and not unprotected["meets_target"]
    assert frame.loc["publish labels", "status"].startswith("failed: labels only")  # not measured, never chosen
    dp = frame[frame["family"] == "dp"]
    assert (dp["members_proved"] == 0).all() and (dp["mia_tpr@1%"] == [dp_tpr_bound(1.0, 0.01)] * len(dp)).all()
    assert result.chosen is not None and result.chosen_label != unprotected["label"]
    # the chosen model was fitted on the training part (the held-out rows measured its accuracy): its members are those rows
    again = ppdm.audit(result.chosen, membership=_candidates(result.train, others)).summary()
    assert again["proved_members"] == 0 and again["wrong_proved_members"] == 0 and again["tpr@1%"] <= 0.02
    chosen = frame.loc[result.chosen_label]
    assert chosen["members_proved"] == again["proved_members"] and chosen["mia_tpr@1%"] == pytest.approx(again["tpr@1%"])


def test_method_1_keeps_the_truth_feasible(split):
    """Method 1 deletes its removed leaves' records from the counts, yet they reach a sibling leaf:
    the counts are then lower bounds raised by the records removed, and the truth meets them."""
    tree, train, others = split
    pruned = remove_small_leaves(tree, 5)
    assert pruned.removed_records > 0
    population = _candidates(train, others)
    result = membership_attack(pruned, population.drop(columns=["member"]), truth=population["member"].to_numpy())
    summary = result.summary()
    assert summary["wrong_proved_members"] == 0 and summary["wrong_proved_non_members"] == 0


def test_the_dp_bound():
    assert dp_tpr_bound(1.0, 0.01) == pytest.approx(math.e * 0.01)
    assert dp_tpr_bound(0.0, 0.3) == pytest.approx(0.3)  # ε = 0: no test beats guessing
    assert dp_tpr_bound(10.0, 0.5) == pytest.approx(1 - math.exp(-10) * 0.5)


def test_every_candidate_is_measured_at_least_as_the_confidence_attack(split):
    """The search's membership evidence is never weaker than the simplest attacker: it runs the
    confidence attack on each candidate's answers (said in its source, the frontier's audits), and
    at each false-positive rate its TPR is at least that attack's. (On a complete population the
    counts' estimate already ranks each leaf's cells by their member share, so it leads here.)"""
    from ppdm.attacks.membership.blackbox import BlackboxOptions, blackbox_membership
    from ppdm.attacks.membership.stand_in import PublishedClassifier
    from ppdm.defend.candidates import Candidate
    from ppdm.defend.membership import membership_evidence
    from ppdm.metrics.membership import tpr_at_fpr

    tree, train, others = split
    population = membership_population(train, others, [*FEATURES, "class"])
    for leaves in (1, 5, 20):
        model = remove_small_leaves(tree, leaves) if leaves > 1 else tree
        evidence = membership_evidence(model, population, Candidate(f"min leaf {leaves}", "pruning", {"min_leaf": leaves}, lambda m=model: m))
        found = blackbox_membership(
            PublishedClassifier(model), population.candidates[FEATURES], population.candidates["class"].to_numpy(), truth=population.truth,
            options=BlackboxOptions(attacks=("confidence",)),
        )
        assert evidence.source == "membership+confidence"
        for fpr in (0.001, 0.01, 0.1):
            assert evidence.tpr_at(fpr) >= tpr_at_fpr(population.truth, found.scores["confidence"], fpr) - 1e-12
