"""A forest's per-tree maximum-entropy estimates pooled (ppdm.attacks.models.pooled): the
fallback of ``ppdm.audit`` when the joint table is too large to enumerate."""

from __future__ import annotations

import numpy as np
import pytest

import ppdm
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.attacks.models.pooled import pooled_forest_attack, pooling_trees
from ppdm.attacks.models.possible import possible_values
from ppdm.errors import AttackError

from families import FAMILIES

ADULT_KNOWN = ("sex", "race", "education", "relationship")
NURSERY_KNOWN = ("parents", "has_nurs", "form")


def _pooled(forest, data, sensitive, known):
    threat = ppdm.ThreatModel(sensitive=sensitive, known=known, sa_published=True).resolve(data, forest.class_attribute)
    pv = possible_values(forest, data, list(threat.known), sensitive)
    return pooled_forest_attack(forest, data, threat, possible=pv.possible), pv


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_truth_is_never_ruled_out_and_every_certain_person_is_right(family, adult_small, nursery_small):
    for (data, X, D, y), sensitive, known in ((adult_small, "marital-status", ADULT_KNOWN), (nursery_small, "health", NURSERY_KNOWN)):
        forest = FAMILIES[family](X, D, y)
        if not pooling_trees(forest, len(data)):
            with pytest.raises(AttackError, match="publishes its own class counts"):
                _pooled(forest, data, sensitive, known)
            continue
        result, pv = _pooled(forest, data, sensitive, known)
        P = result.posterior[result.groups.group_of_record]
        truth = result.true_codes
        assert (P[np.arange(len(truth)), truth] > 0).all(), family
        certain = result.exposed
        assert (P[certain].argmax(axis=1) == truth[certain]).all()
        assert certain.sum() >= (pv.certain & result.targets).sum()  # at least what possible values prove
        assert result.details["status"] == "approximate"
        prior = np.bincount(truth).max() / len(truth)
        assert result.summary()["attacker_accuracy"] >= prior - 0.002, family


def test_a_forest_of_one_tree_pools_to_that_tree_s_estimate(adult_small):
    from sklearn.ensemble import RandomForestClassifier

    from families import sklearn_family

    data, X, D, y = adult_small
    forest = sklearn_family(RandomForestClassifier(1, max_depth=5, bootstrap=False, max_features=None, random_state=0))(X, D, y)
    threat = ppdm.ThreatModel(sensitive="marital-status", known=ADULT_KNOWN, sa_published=True).resolve(data, forest.class_attribute)
    pooled = pooled_forest_attack(forest, data, threat)
    alone = maxent_attack(forest.trees[0], data, threat=threat)
    P = pooled.posterior[pooled.groups.group_of_record]
    A = alone.posterior[alone.groups.group_of_record]
    assert np.abs(P - A).max() < 1e-9


def test_the_gap_to_the_joint_estimate_where_it_can_be_enumerated(adult_small):
    """Measured, not zero: the pooled estimate reads each tree exactly but not their intersection
    (docs/ensembles.md gives the table). Where the enumeration fits, ppdm.audit uses it."""
    data, X, D, y = adult_small
    forest = FAMILIES["extra-trees"](X, D, y)
    known = ("age", "sex", "race", "education", "workclass", "occupation")
    threat = ppdm.ThreatModel(sensitive="marital-status", known=known, sa_published=True).resolve(data, forest.class_attribute)
    joint = maxent_attack(forest, data, threat=threat)
    pooled, _ = _pooled(forest, data, "marital-status", known)
    J = joint.posterior[joint.groups.group_of_record]
    P = pooled.posterior[pooled.groups.group_of_record]
    assert np.abs(J - P).mean() < 0.06
    assert (J.argmax(axis=1) == P.argmax(axis=1)).mean() > 0.8
    audited = ppdm.audit(forest, data, ppdm.ThreatModel(sensitive="marital-status", known=known, sa_published=True)).estimate
    assert audited.details.get("method") != "pooled"  # the joint table fits: the exact estimate is reported


def test_the_audit_answers_a_forest_too_large_to_enumerate_with_the_pooled_estimate(adult_small):
    data, X, D, y = adult_small
    forest = FAMILIES["random-forest"](X, D, y)
    threat = ppdm.ThreatModel(sensitive="marital-status", known=ADULT_KNOWN, sa_published=True)
    with pytest.raises(ppdm.errors.RoutingLimitError):
        maxent_attack(forest, data, threat=threat)
    audit = ppdm.audit(forest, data, threat)
    est = audit.estimate
    assert est.details["method"] == "pooled" and est.details["status"] == "approximate"
    assert "an approximate estimate: the joint maximum-entropy table is too large" in est.details["note"] and "declare more" not in est.details["note"]
    text = str(audit)
    assert "approximate" in text and f"all {est.details['trees_pooled']} trees read" in text
    assert est.summary()["attacker_accuracy"] > est.summary()["baseline"]["accuracy"]
    people = audit.people()
    assert len(people) == len(data) and np.allclose(people.filter(like="P(").sum(axis=1), 1.0)


@pytest.mark.parametrize("family", ["random-forest", "random-forest-no-bootstrap", "gradient-boosting"])
def test_a_numeric_sensitive_input_is_pooled_over_the_forest_s_cells(family, adult_small):
    """Trees cut a numeric column at different thresholds, or not at all (then its values are the
    cells): each tree's posterior is spread over the forest's cells before pooling."""
    data, X, D, y = adult_small
    forest = FAMILIES[family](X, D, y)
    result, pv = _pooled(forest, data, "age", ADULT_KNOWN)
    assert result.values == pv.values
    P = result.posterior[result.groups.group_of_record]
    truth = result.true_codes
    assert (P[np.arange(len(truth)), truth] > 0).all(), family
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    prior = np.bincount(truth).max() / len(truth)
    assert result.summary()["attacker_accuracy"] >= prior - 0.002, family
