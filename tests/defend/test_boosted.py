"""The defense search over boosted models (XGBoost on Nursery, scikit-learn gradient boosting on
Adult; small subsets): candidates with fewer rounds, shallower trees, a larger minimum leaf
(``min_child_weight``, ``min_samples_leaf``) and the model answering labels or scores only; the
chosen model, audited again on its own, meets the target."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier

import ppdm
from ppdm.attacks.baselines.likelihood import black_box_attacks
from ppdm.data.datasets import load_adult, load_nursery
from ppdm.defend.candidates import Grids
from ppdm.defend.targets import Evidence, parse_target

GRIDS = Grids(n_estimators=(1, 3), max_depth=(2,), min_samples_leaf=(20,), epsilon=(1.0,), dp_depth=(3,), dp_trees=(3,))
FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def nursery_xgboost():
    xgboost = pytest.importorskip("xgboost")
    frame, _ = load_nursery()
    frame = frame[frame["class"].isin(["priority", "spec_prior", "not_recom"])].sample(300, random_state=0).reset_index(drop=True)
    frame["class"] = frame["class"].cat.remove_unused_categories()
    D = pd.get_dummies(frame[FEATURES]).astype(float)
    est = xgboost.XGBClassifier(n_estimators=6, max_depth=4, n_jobs=1, random_state=0).fit(D, frame["class"].cat.codes)
    return frame, ppdm.from_estimator(est, frame, class_attribute="class")


def _reaudited(model, frame, threat, target):  # type: ignore[no-untyped-def]
    """The target's measures of ``model`` audited on its own (the front door's estimate)."""
    audit = ppdm.audit(model, frame, threat)
    return target.values(Evidence.from_results(audit.results))


def test_an_xgboost_model_is_defended_by_retraining_it_with_less(nursery_xgboost):
    frame, model = nursery_xgboost
    threat, target = ppdm.ThreatModel(sensitive="health", preset="insider"), parse_target("certain=0,confident=45%@0.9")
    result = ppdm.defend(model, frame, threat, target, families=["retrain"], grids=GRIDS, progress=False, test_size=0)  # no held-out split: the input model as it is
    labels = set(result.frontier["label"])
    assert {"XGBClassifier n_estimators=1", "XGBClassifier n_estimators=3", "XGBClassifier max_depth=2", "XGBClassifier min_child_weight=20"} <= labels
    assert result.chosen is not None and result.chosen.algorithm == "xgboost"
    retrained = result.frontier[result.frontier["family"] == "retrain"]
    assert (retrained["status"] == "audited").all(), retrained[["label", "status"]].to_string()
    chosen = result.chosen_row()
    values = _reaudited(result.chosen, frame, threat, target)
    assert target.meets(values) and values["certain"] == chosen["certain"]
    assert abs(values["confident"] - chosen["confident"]) < 1e-9


def test_a_boosted_model_can_answer_labels_or_scores_only(nursery_xgboost):
    frame, model = nursery_xgboost
    threat, target = ppdm.ThreatModel(sensitive="health", preset="insider"), parse_target("certain=0,confident=100%@0.9")
    result = ppdm.defend(model, frame, threat, target, families=["publish-less"], grids=GRIDS, progress=False, test_size=0)  # no held-out split: the input model as it is
    rows = result.frontier.set_index("label")
    for output in ("label", "score"):
        row = rows.loc[f"publish predicted {output}s only"]
        assert row["status"] == "audited" and row["publish"] == f"predicted {output}s only"
        values = list(frame["health"].cat.categories)
        resolved = threat.resolve(frame, "class", splits=model.split_attributes)
        evidence = Evidence.from_results(black_box_attacks(model, frame, resolved, tuple(values), output))
        assert target.values(evidence)["confident"] == pytest.approx(row["confident"])
    assert rows.loc["publish predicted labels only", "accuracy"] == rows.loc["unprotected (input model)", "accuracy"]  # the same predictions


@pytest.mark.filterwarnings("ignore::ppdm.errors.UninformativeKnowledgeWarning")
def test_scikit_learn_gradient_boosting_on_adult_is_defended():
    frame, _ = load_adult("train")
    columns = ["age", "education", "sex", "hours-per-week", "income"]
    frame = frame[columns].sample(400, random_state=1).reset_index(drop=True)
    X = pd.get_dummies(frame[["age", "education", "hours-per-week"]]).astype(float)
    gb = GradientBoostingClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, frame["income"])
    model = ppdm.from_estimator(gb, frame, class_attribute="income")
    threat, target = ppdm.ThreatModel(sensitive="education", preset="insider"), parse_target("certain=0,confident=30%@0.9")
    result = ppdm.defend(model, frame, threat, target, families=["retrain"], grids=GRIDS, progress=False, test_size=0)  # no held-out split: the input model as it is
    assert {"GradientBoostingClassifier n_estimators=1", "GradientBoostingClassifier min_samples_leaf=20"} <= set(result.frontier["label"])
    assert result.chosen is not None
    assert target.meets(_reaudited(result.chosen, frame, threat, target))


def test_the_truth_satisfies_an_xgboost_model_whose_leaves_fall_below_min_child_weight():
    """XGBoost values a leaf whose hessian sum is below ``min_child_weight`` 0, not its Newton
    step: such leaves give no row, and the real records satisfy every row that is left."""
    xgboost = pytest.importorskip("xgboost")
    frame = load_nursery()[0].sample(600, random_state=0).reset_index(drop=True)  # 'very_recom': 15 rows, a small hessian sum
    frame["class"] = frame["class"].cat.remove_unused_categories()
    D = pd.get_dummies(frame[FEATURES]).astype(float)
    est = xgboost.XGBClassifier(n_estimators=3, max_depth=2, min_child_weight=20, n_jobs=1, random_state=0).fit(D, frame["class"].cat.codes)
    model = ppdm.from_estimator(est, frame, class_attribute="class")
    assert any(n.value == 0.0 for t in model.trees for n in t.leaves())  # some leaves fell below the floor
    audit = ppdm.audit(model, frame, ppdm.ThreatModel(sensitive="health", preset="insider"))
    assert audit.estimate.details["status"] == "optimal" and audit.estimate.details["max_violation"] < 1e-6
