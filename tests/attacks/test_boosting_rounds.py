"""Every boosting round as rows: the truth meets every round's rows on Adult and Nursery for every
boosting library (binary and softmax), every round is used unless the model hides its step, and
the audit says how many rounds it read and why the rest were not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

import ppdm
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import exact_attack
from ppdm.errors import DataError
from ppdm.maxent.constraints.boosting_rows import REAL_ROWS
from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost
from ppdm.tree.newton import NewtonStep, first_rounds, newton_step

from families import small_table

ROUNDS = 6


@pytest.fixture(scope="module")
def adult_boost(adult_train):
    frame, roles = adult_train
    features = ["age", "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "hours-per-week"]
    return small_table(frame, features, roles.class_attribute, 2000)


@pytest.fixture(scope="module")
def nursery_boost(nursery):
    frame, roles = nursery
    return small_table(frame, [c for c in frame.columns if c != roles.class_attribute], roles.class_attribute, 1500)


def _xgboost(X, D, y, **kw):
    xgb = pytest.importorskip("xgboost")
    est = xgb.XGBClassifier(n_estimators=ROUNDS, max_depth=3, learning_rate=0.3, n_jobs=1, **kw).fit(D, y.cat.codes.to_numpy())
    return forest_from_xgboost(est, X, y=y)


def _xgboost_file(X, D, y, tmp_path=None):
    """The model file alone: no training configuration, so λ and η are solved from the trees and
    whether rows were subsampled is checked on the covers."""
    xgb = pytest.importorskip("xgboost")
    est = xgb.XGBClassifier(n_estimators=ROUNDS, max_depth=3, learning_rate=0.3, n_jobs=1).fit(D, y.cat.codes.to_numpy())
    return forest_from_xgboost(bytes(est.get_booster().save_raw(raw_format="json")), X, list(D.columns), y=y)


def _lightgbm(X, D, y, **kw):
    lgb = pytest.importorskip("lightgbm")
    est = lgb.LGBMClassifier(n_estimators=ROUNDS, max_depth=3, num_leaves=8, min_child_samples=5, verbose=-1, n_jobs=1, **kw)
    est.fit(D, y.cat.codes.to_numpy())
    return forest_from_lightgbm(est, X, list(D.columns), y=y)


def _sklearn(prototype):
    def fit(X, D, y, **kw):
        est = clone(prototype).set_params(**kw)
        with threadpool_limits(1):
            est.fit(D, y)
        return forest_from_sklearn(est, X, y=y)

    return fit


FAMILIES = {
    "xgboost": _xgboost,
    "xgboost-file": _xgboost_file,
    "lightgbm": _lightgbm,
    "gradient-boosting": _sklearn(GradientBoostingClassifier(n_estimators=ROUNDS, max_depth=2, random_state=1)),
    "hist-gradient-boosting": _sklearn(HistGradientBoostingClassifier(max_iter=ROUNDS, max_depth=3, early_stopping=False, random_state=1)),
}


def _first_round_biased(forest) -> int:
    """LightGBM's first round carries boost_from_average's starting score in its leaf values."""
    step = newton_step(forest)
    return forest.n_outputs if isinstance(step, NewtonStep) and step.biased_first_round else 0


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("dataset", ["adult", "nursery"])
def test_the_truth_meets_every_rounds_rows_and_every_round_is_used(family, dataset, request):
    table, X, D, y = request.getfixturevalue(f"{dataset}_boost")
    forest = FAMILIES[family](X, D, y)
    assert forest.n_trees == ROUNDS * forest.n_outputs
    features = list(X.columns)
    # the insider (every input known, the class sensitive); two and three unknown split attributes; a sensitive input, the class known
    for known, sensitive in ((features, y.name), (features[2:], y.name), (features[3:], y.name), ([*features[1:], y.name], features[0])):
        problem, types = forest_type_problem(forest, table, known, sensitive)
        truth = types.truth()
        assert truth is not None
        assert (problem.violations(truth) * len(table)).max(initial=0.0) <= 1e-6, (family, known)
        rounds = types.rounds
        assert rounds is not None and not rounds.real or known != features
        first_tree_counted = "class-counts" in forest.known[0]
        biased = 0 if first_tree_counted else _first_round_biased(forest)
        if family == "xgboost-file":  # the file does not say it; the training rows' hessians matched every cover on import
            assert "no row subsampled" in forest.params["rows_once"]
        assert len(rounds.used) == forest.n_trees - biased, rounds.left_out
        names = {b.name.rsplit(" tree ", 1)[0] for b in problem.blocks}
        if known == features:  # every leaf's records are decided: whole class counts, no real row
            assert "round-count" in names and not any(b.name.startswith(REAL_ROWS) for b in problem.blocks)
        elif sensitive == y.name:
            assert "leaf-value" in names


def test_the_insider_of_every_round_is_certain_of_more_people_than_of_the_first_tree(adult_boost):
    table, X, D, y = adult_boost
    forest = _xgboost(X, D, y)
    first = first_rounds(forest, 1)
    threat = ThreatModel(preset="insider", sensitive=y.name)
    every, one = ppdm.audit(forest, table, threat), ppdm.audit(first, table, threat)
    assert every.estimate.summary()["certain_records"] > one.estimate.summary()["certain_records"]
    assert every.estimate.details["rounds"]["used"] == ROUNDS
    assert f"all {ROUNDS} boosting rounds read" in str(every)


def test_the_exact_audit_reads_every_insider_round_and_stays_sound(adult_boost):
    table, X, D, y = adult_boost
    forest = _xgboost(X, D, y)
    threat = ThreatModel(preset="insider", sensitive=y.name)
    proved = exact_attack(forest, table, threat, time_limit=60)
    assert any(name.startswith("round-count tree ") for name in proved.details["rows"])
    codes = y.cat.codes.to_numpy()
    certain = proved.certain_groups[proved.groups.group_of_record]
    held = proved.bounds["min"][proved.groups.group_of_record, codes] > 0
    assert held[certain].all()  # every proved-certain person holds the proved value
    assert certain.sum() >= 1


@pytest.mark.parametrize(
    "family, setting, reason",
    [
        ("xgboost", {"reg_alpha": 0.5}, "reg_alpha"),
        ("xgboost", {"max_delta_step": 1.0}, "max_delta_step"),
        ("lightgbm", {"reg_alpha": 0.5}, "lambda_l1"),
        ("lightgbm", {"boosting_type": "goss"}, "GOSS"),
        ("gradient-boosting", {"subsample": 0.7}, "unknown multiplicities"),
        ("gradient-boosting", {}, "no class counts"),
        ("hist-gradient-boosting", {"class_weight": "balanced"}, "class_weight"),
    ],
)
def test_a_round_is_left_out_only_for_what_the_model_hides_and_the_audit_says_why(family, setting, reason, adult_boost, tmp_path):
    table, X, D, y = adult_boost
    forest = FAMILIES[family](X, D, y, **setting)
    if reason == "no class counts":  # a model of one subsampled round and of rounds that saw every row
        subsampled = FAMILIES[family](X, D, y, subsample=0.7)
        forest = ppdm.tree.Forest(
            [subsampled.trees[0], *forest.trees[1:]], "additive", link="logistic", base_score=forest.base_score,
            multiplicities=[None, *forest.multiplicities[1:]], params=forest.params,
        )  # fmt: skip
        reason = "unknown multiplicities"
    elif "subsample" in setting:  # no round saw every row: nothing to audit
        with pytest.raises(DataError, match="no tree's counts can be tied to the table's records"):
            ppdm.audit(forest, table, ThreatModel(preset="insider", sensitive=y.name))
        return
    threat = ThreatModel(preset="insider", sensitive=y.name)
    audit = ppdm.audit(forest, table, threat)
    details = audit.estimate.details
    assert details["rounds"]["used"] < forest.n_trees and any(reason in r for r in details["rounds"]["left_out"])
    assert reason in str(audit)  # the printed summary
    audit.report(tmp_path / "r.html")
    verdict = (tmp_path / "r.html").read_text().split('id="verdict"')[1].split("</section>")[0]
    assert "boosting rounds read" in verdict and reason in verdict  # the verdict's caveat


def test_a_forest_file_keeps_the_newton_step(adult_boost, tmp_path):
    from ppdm.tree import load_forest, save_forest

    table, X, D, y = adult_boost
    forest = _lightgbm(X, D, y)
    save_forest(forest, tmp_path / "f.json")
    again = load_forest(tmp_path / "f.json")
    assert newton_step(again) == newton_step(forest)
    _, types = forest_type_problem(again, table, list(X.columns), y.name)
    assert types.rounds is not None and len(types.rounds.used) == forest.n_trees


def test_every_round_of_a_hundred_is_read_exactly_on_the_full_adult_insider(adult_train):
    """Round-count rows come out whole on 30,162 records and 40 rounds of depth 4 (float32 gradients)."""
    xgb = pytest.importorskip("xgboost")
    frame, roles = adult_train
    table = frame.drop(columns="fnlwgt").reset_index(drop=True)
    X = table.drop(columns=roles.class_attribute)
    D = pd.get_dummies(X).astype(float)
    y = table[roles.class_attribute]
    est = xgb.XGBClassifier(n_estimators=40, max_depth=4, n_jobs=2).fit(D, y.cat.codes.to_numpy())
    forest = forest_from_xgboost(est, X, y=y)
    problem, types = forest_type_problem(forest, table, list(X.columns), y.name)
    assert types.rounds is not None and len(types.rounds.used) == 40
    assert (problem.violations(types.truth()) * len(table)).max() <= 1e-6
    assert np.isclose(problem.blocks[-1].b * len(table), np.rint(problem.blocks[-1].b * len(table))).all()


def test_a_model_fitted_on_rows_it_does_not_name_is_refused_saying_so(adult_boost):
    """Histogram boosting holds out rows for early stopping (its default above 10,000 rows):
    the refusal said "pass the training rows the model was fitted on" to a user who had, so it
    now says how many rows the trees count and why the model cannot say which."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    table, X, D, y = adult_boost
    est = HistGradientBoostingClassifier(max_iter=3, early_stopping=True, validation_fraction=0.1, n_iter_no_change=50, random_state=0).fit(D, y)
    forest = ppdm.from_estimator(est, table)
    with pytest.raises(DataError, match=r"the trees count \d[\d,]* of them.*early stopping") as why:
        ppdm.audit(forest, table, ThreatModel(preset="insider", sensitive=y.name))
    assert f"{len(table):,}" in str(why.value)


def test_a_bagged_lightgbm_file_is_refused_naming_the_bagging():
    """LightGBM with bagging over 569 rows: each tree counts its own bag, which the file does not
    store; the refusal says how many rows the trees count and why (it said "pass the training rows
    the model was fitted on" to a user who had, as every tree counts a different number)."""
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.integers(0, 5, 569).astype(float), "b": rng.integers(0, 3, 569).astype(float)})
    table["y"] = (table.a + rng.normal(0, 1, 569) > 2).astype(int)
    est = lightgbm.LGBMClassifier(n_estimators=5, num_leaves=4, bagging_fraction=0.7, bagging_freq=1, verbose=-1).fit(table[["a", "b"]], table.y)
    forest = ppdm.from_estimator(est, table)
    with pytest.raises(DataError, match=r"the trees count [\d,]+ to [\d,]+ of them .*\(bagging, subsample < 1\).*bagging_fraction=1"):
        ppdm.audit(forest, table, ThreatModel(preset="insider", sensitive="b"))
