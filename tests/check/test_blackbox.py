"""The black-box attacks in the checker (issue 46, deliverable 3): any classifier ppdm cannot read
white-box, and a model known by its scores files, gets membership evidence (the strongest of
the confidence attack, LiRA and RMIA, its control on held-out rows, no model) and attribute
evidence (model inversion and outputs as features, beside the imputation baseline) in its
recommendation; an overfit model is not released under the default policy, a well-regularised one
is; approximate evidence (the confidence attack alone) is not met unless the policy counts it;
every finding and policy validates against the shipped schemas."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from schema_check import validate
from sklearn.feature_selection import SelectKBest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, StandardScaler

from ppdm.attacks.membership.blackbox import BlackboxOptions
from ppdm.check import check_model
from ppdm.check.blackbox_membership import sampling_margin
from ppdm.check.policy import load_policy, policy_schema
from ppdm.check.recommend import RELEASE
from ppdm.metrics.membership import membership_advantage

CLASS = "target"
FOUR = BlackboxOptions(shadows=4)
#: The structural rules relaxed (kNN's family too, below): membership decides what they would.
RELAXED = {
    "structural": {"min_group_size": 1, "min_residual_dof": 0, "zeros_disclosive": False, "max_generalisation_gap": 1, "hyperparameter_rules": False, "beat_majority": False},
    "membership": {"max_advantage": 0.2},
}


def overfit():
    return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(64, 64), alpha=0.0, max_iter=600, random_state=0))


def regularised():
    """Two output levels of one binned input, a strong penalty: nothing to memorise."""
    return make_pipeline(SelectKBest(k=1), KBinsDiscretizer(n_bins=3, encode="onehot-dense"), LogisticRegression(C=0.1))


def _check(model, data, policy=None, **kw):
    Xtr, ytr, train, test = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unconverged MLP is what overfitting looks like here
        model.fit(Xtr, ytr)
        return check_model(model, train, class_attribute=CLASS, holdout=test, policy=policy, membership=kw.pop("membership", FOUR), **kw)


@pytest.fixture(scope="module")
def over(noisy_cancer):
    """The overfit MLP's check under the default policy, with the attribute audit of ``texture``."""
    return _check(overfit(), noisy_cancer, sensitive="texture")


def _schema_valid(result):
    from ppdm.report.record import schema

    finding = schema()["$defs"]["finding"]
    data = result.to_dict()
    for f in data["findings"]:
        validate(f, finding)
    validate(data["policy"]["policy"], policy_schema())
    for reason in data["recommendation"]["reasons"]:
        assert isinstance(reason, str) and reason


def test_the_advantage_is_the_best_thresholds_tpr_minus_fpr():
    rng = np.random.default_rng(1)
    truth = rng.random(60) < 0.5
    score = np.round(rng.random(60) + 0.4 * truth, 1)  # ties
    best = max(((score >= t) & truth).sum() / truth.sum() - ((score >= t) & ~truth).sum() / (~truth).sum() for t in np.unique(score))
    assert membership_advantage(truth, score) == pytest.approx(max(best, 0.0))
    assert membership_advantage(truth, np.zeros(60)) == 0.0
    assert np.isnan(membership_advantage(np.ones(4, bool), np.arange(4.0)))
    assert sampling_margin(398, 171) == pytest.approx(np.sqrt(np.log(80) / 796) + np.sqrt(np.log(80) / 342))


@pytest.mark.parametrize("which", ["logistic", "mlp"])
def test_a_model_read_black_box_gets_membership_evidence_beside_its_baselines(noisy_cancer, over, which):
    result = over if which == "mlp" else _check(make_pipeline(StandardScaler(), LogisticRegression(C=0.1)), noisy_cancer)
    finding = result.finding("membership")
    assert finding.strength == "estimated" and finding.limit == 0.2 and finding.state in ("passed", "failed")
    assert "control" in finding.evidence and "no model 0" in finding.evidence and "sampling margin" in finding.evidence
    assert finding.line() in result.recommendation.reasons
    rows = result.attacks["membership"]
    assert [r["attack"] for r in rows] == ["confidence", "lira-offline", "lira-online", "rmia-offline", "rmia-online"]
    assert finding.value == pytest.approx(max(r["advantage"] for r in rows))  # never weaker than any attack in the table
    assert all(r["control_advantage"] is not None and r["control_auc"] is not None for r in rows)
    _schema_valid(result)


def test_an_overfit_model_is_not_released_and_a_regularised_one_is(noisy_cancer, over):
    assert over.finding("membership").state == "failed" and over.decision != RELEASE
    assert over.finding("membership").line() in over.recommendation.conditions and "membership" in over.recommendation.reasons[0]
    knn = _check(KNeighborsClassifier(n_neighbors=1), noisy_cancer, policy=load_policy({**RELAXED, "reject": []}))
    assert knn.finding("membership").state == "failed" and knn.decision != RELEASE
    calm = _check(regularised(), noisy_cancer)
    assert calm.decision == RELEASE, calm.lines()
    assert calm.finding("membership").state == "passed" and calm.finding("membership").value < 0.2
    for r in (over, knn, calm):
        _schema_valid(r)


def _scores(model, X):
    return pd.DataFrame(model.predict_proba(X), columns=[str(c) for c in model.classes_])


def test_a_scores_file_gets_the_confidence_attack_alone_approximate_unless_it_breaks_the_limit(noisy_cancer):
    Xtr, ytr, train, test = noisy_cancer
    calm = regularised().fit(Xtr, ytr)
    result = check_model(None, train, class_attribute=CLASS, holdout=test, scores=_scores(calm, Xtr), holdout_scores=_scores(calm, test[Xtr.columns]))
    finding = result.finding("membership")
    assert finding.state == "not checked" and finding.strength == "approximate" and "confidence attack alone" in finding.evidence
    assert [r["attack"] for r in result.attacks["membership"]] == ["confidence"] and "control" in finding.evidence
    counted = load_policy({"evidence": {"approximate_counts": True}, "membership": {"max_advantage": 0.2}})
    again = check_model(None, train, class_attribute=CLASS, holdout=test, scores=_scores(calm, Xtr), holdout_scores=_scores(calm, test[Xtr.columns]), policy=counted)
    assert again.finding("membership").state == "passed" and again.finding("membership").strength == "approximate"
    knn = KNeighborsClassifier(n_neighbors=1).fit(Xtr, ytr)
    broken = check_model(None, train, class_attribute=CLASS, holdout=test, scores=_scores(knn, Xtr), holdout_scores=_scores(knn, test[Xtr.columns]))
    assert broken.finding("membership").state == "failed" and broken.finding("membership").value > 0.2
    for r in (result, again, broken):
        _schema_valid(r)


def test_without_held_out_rows_or_with_the_attacks_off_membership_is_not_checked(noisy_cancer):
    Xtr, ytr, train, _ = noisy_cancer
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1)).fit(Xtr, ytr)
    alone = check_model(model, train, class_attribute=CLASS)
    assert alone.finding("membership").state == "not checked" and "held-out" in alone.finding("membership").evidence
    off = _check(make_pipeline(StandardScaler(), LogisticRegression(C=0.1)), noisy_cancer, membership=False)
    assert off.finding("membership").state == "not checked" and off.decision != RELEASE
    acro = _check(make_pipeline(StandardScaler(), LogisticRegression(C=0.1)), noisy_cancer, policy="acro")
    assert all(f.rule != "membership" for f in acro.findings) and "membership" not in acro.attacks


def test_a_tpr_limit_reads_the_strongest_attack_at_the_policys_fpr(noisy_cancer):
    strict = load_policy({"membership": {"tpr_at_fpr": {"fpr": 0.05, "tpr": 0.06}}})
    result = _check(KNeighborsClassifier(n_neighbors=1), noisy_cancer, policy=strict)
    finding = result.finding("membership")
    rows = result.attacks["membership"]
    assert finding.state == "failed" and finding.value == pytest.approx(max(r["tpr@policy"] for r in rows)) and finding.limit == 0.06
    thin = load_policy({"membership": {"tpr_at_fpr": {"fpr": 0.001, "tpr": 1.0}}})  # 171 held-out rows: 0.17 of one in the budget
    assert _check(regularised(), noisy_cancer, policy=thin).finding("membership").strength == "approximate"


def test_the_attribute_audit_of_a_model_read_black_box_beside_the_imputation_baseline(noisy_cancer, over):
    calm = _check(regularised(), noisy_cancer, sensitive="texture")
    finding = calm.finding("attribute")
    assert finding.state == "passed" and finding.strength == "estimated" and "model inversion" in finding.evidence and "baseline (imputation" in finding.evidence
    rows = calm.attacks["attribute"]
    assert [r["attack"] for r in rows[:2]] == ["model inversion", "outputs as features (ART black-box)"] and rows[-1]["baseline"]
    assert all(r["certain"] == 0 for r in rows)  # a black-box rule proves nobody's value
    assert over.finding("attribute").state == "failed" and over.finding("attribute").line() in over.recommendation.reasons
    Xtr, ytr, train, test = noisy_cancer
    model = overfit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Xtr, ytr)
    scored = check_model(None, train, class_attribute=CLASS, holdout=test, scores=_scores(model, Xtr), holdout_scores=_scores(model, test[Xtr.columns]), sensitive="texture")
    assert [r["attack"] for r in scored.attacks["attribute"]][0] == "outputs as features (ART black-box)"  # no inversion without the model
    assert scored.finding("attribute").strength in ("approximate", "estimated")
    wide = _check(regularised(), noisy_cancer, sensitive="mean radius")
    assert wide.finding("attribute").state == "not checked" and "distinct values" in wide.finding("attribute").evidence
    for r in (calm, over, scored, wide):
        _schema_valid(r)
