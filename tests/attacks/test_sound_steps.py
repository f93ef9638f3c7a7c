"""The default audit counts as certain every person the exact audit's fast sound steps prove
(propagation and the LP relaxation over whole counts, run inside the estimate), so its certain
set contains what the proof proves on trees, forests and boosted models, and no certain guess is
wrong on the training table (the truth is one consistent dataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

import ppdm

from families import FAMILIES, small_table

ADULT_FEATURES = ["age", "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "hours-per-week"]


def _audits(model, table: pd.DataFrame, sensitive: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:  # type: ignore[no-untyped-def]
    threat = ppdm.ThreatModel(sensitive=sensitive, preset="insider")
    default = ppdm.audit(model, table, threat)
    proved = ppdm.audit(model, table, threat, exact=True, estimate=False, exact_time_limit=60)
    return default.people(), proved.people(), default.main.details


def _check(default: pd.DataFrame, proved: pd.DataFrame) -> None:
    certain, shown = default["certain"].to_numpy(bool), proved["proved_certain"].to_numpy(bool)
    assert not (shown & ~certain).any(), f"{int((shown & ~certain).sum())} people proved certain but not counted certain"
    assert (default.loc[certain, "guess"] == default.loc[certain, "truth"]).all(), "a certain guess is wrong"


def _tree_table(adult_train, n: int, leaf: int):  # type: ignore[no-untyped-def]
    frame = adult_train[0].iloc[:n].reset_index(drop=True)
    X = pd.get_dummies(frame.drop(columns="income"))
    clf = DecisionTreeClassifier(min_samples_leaf=leaf, random_state=0).fit(X, frame["income"])
    return ppdm.from_estimator(clf, frame), frame


def test_a_tree_counts_the_people_propagation_proves(adult_train) -> None:
    """The README's tree on 3,000 Adult rows: the solver holds some people just below 1 whom the
    count rows force; they are now certain, as the proof says."""
    model, frame = _tree_table(adult_train, 3000, 2)
    default, proved, details = _audits(model, frame, "sex")
    _check(default, proved)
    assert details["sound_steps"]["added_records"] > 0
    assert int(default["certain"].sum()) >= int(proved["proved_certain"].sum()) > 0


def _tree(X, D, y):  # type: ignore[no-untyped-def]
    table = X.assign(**{y.name: y})
    return ppdm.from_estimator(DecisionTreeClassifier(min_samples_leaf=2, random_state=0).fit(D, y), table)


@pytest.mark.parametrize("family", ["tree", "random-forest", "gradient-boosting", "xgboost"])
@pytest.mark.parametrize("name", ["adult", "nursery"])
def test_every_family_counts_every_proved_person(family, name, adult_train, nursery) -> None:  # type: ignore[no-untyped-def]
    """Trees, a forest and boosted models on 800 rows of Adult and Nursery: no person proved
    certain is left uncertain, no certain guess is wrong."""
    frame = adult_train[0] if name == "adult" else nursery[0]
    features, target, sensitive = (ADULT_FEATURES, "income", "sex") if name == "adult" else ([c for c in frame.columns if c != "class"], "class", "health")
    sample, X, D, y = small_table(frame, features, target, 800, seed=3)
    model = _tree(X, D, y) if family == "tree" else FAMILIES[family](X, D, y)
    default, proved, details = _audits(model, sample, sensitive)
    _check(default, proved)
    assert "sound_steps" in details


@pytest.mark.slow
def test_the_readme_example_counts_every_proved_person(adult_train) -> None:
    """README.md, "From Python": the default audit's certain guesses contain the 689 the proof finds."""
    model, frame = _tree_table(adult_train, len(adult_train[0]), 5)
    default, proved, details = _audits(model, frame, "sex")
    _check(default, proved)
    assert int(np.sum(default["certain"])) >= int(proved["proved_certain"].sum())


def test_large_count_problems_skip_the_fast_proof(adult_train) -> None:
    """Above ``SoundStepOptions.pairs`` counts the estimate stands alone and says why (the size rule that
    keeps the fast proof cheap), and the rule counts the variables the proof would build."""
    from ppdm.attacks.models.estimate import SoundStepOptions
    from ppdm.attacks.models.maxent import audit_problem
    from ppdm.exact.build import factored_pairs, n_factored_pairs
    from ppdm.maxent.constraints.tree_constraints import Knowledge
    from ppdm.pipeline.options import AuditOptions

    model, frame = _tree_table(adult_train, 3000, 2)
    threat = ppdm.ThreatModel(sensitive="sex", preset="insider").resolve(frame, model.class_attribute, splits=model.split_attributes)
    problem = audit_problem(model, frame, threat, Knowledge(sa=True), factored=True).problem
    assert n_factored_pairs(problem) == len(factored_pairs(problem)[0])
    fewer = AuditOptions(sound=SoundStepOptions(pairs=n_factored_pairs(problem) - 1))
    audit = ppdm.audit(model, frame, ppdm.ThreatModel(sensitive="sex", preset="insider"), options=fewer)
    assert "skipped" in audit.main.details["sound_steps"]
    enough = AuditOptions(sound=SoundStepOptions(pairs=n_factored_pairs(problem)))
    assert "skipped" not in ppdm.audit(model, frame, ppdm.ThreatModel(sensitive="sex", preset="insider"), options=enough).main.details["sound_steps"]
