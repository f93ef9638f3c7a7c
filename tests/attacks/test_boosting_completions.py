"""Every boosting round under partial knowledge, read per completion (:mod:`ppdm.attacks.models.boosting_partial`).

On tiny tables (3 rounds, every family) the enumerated completions give the explicit joint
table's maximum-entropy answer; on Adult and Nursery, with 3 unknown split columns, the training
records meet every row of every round (the truth is feasible) for all four families, and no one
is certain of a wrong value.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from ppdm.attacks.core.scope import scope_of
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.boosting_partial import completions_attack
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.errors import DataError
from ppdm.maxent.table.boosting_completions import check_truth_rows, completion_rows, truth_rows
from ppdm.maxent.table.forest_types import tree_weights
from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost

from families import small_table, tiny_table

FAMILIES = ("xgboost", "lightgbm", "hist-gradient-boosting", "gradient-boosting")


ROUNDS = 3


def _model(family: str, X: pd.DataFrame, D: pd.DataFrame, y: pd.Series, rounds: int = ROUNDS, depth: int = 2):  # type: ignore[no-untyped-def]
    """A boosted model of ``family`` (depth 2) and its import."""
    codes = y.cat.codes.to_numpy()
    if family == "xgboost":
        xgb = pytest.importorskip("xgboost")
        est = xgb.XGBClassifier(n_estimators=rounds, max_depth=depth, learning_rate=0.5, min_child_weight=0.5, n_jobs=1).fit(D, codes)
        return forest_from_xgboost(est, X, y=y)
    if family == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        est = lgb.LGBMClassifier(n_estimators=rounds, max_depth=depth, num_leaves=2**depth, min_child_samples=3, verbose=-1, n_jobs=1).fit(D, codes)
        return forest_from_lightgbm(est, X, list(D.columns), y=y)
    proto = (
        GradientBoostingClassifier(n_estimators=rounds, max_depth=depth, learning_rate=0.5, random_state=1)
        if family == "gradient-boosting"
        else HistGradientBoostingClassifier(max_iter=rounds, max_depth=depth, min_samples_leaf=3, learning_rate=0.5, early_stopping=False, random_state=1)
    )
    with threadpool_limits(1):
        return forest_from_sklearn(proto.fit(D, y), X, y=y)


@pytest.mark.parametrize("family", FAMILIES)
def test_enumerated_completions_agree_with_the_explicit_table(family: str) -> None:
    frame, X, D, y = tiny_table(3, n=48)
    forest = _model(family, X, D, y)
    threat = ThreatModel(sensitive="a", known=("c",), sa_published=True)
    explicit = maxent_attack(forest, frame, threat=threat, prove=False)
    resolved = threat.resolve(frame, forest.class_attribute, splits=forest.split_attributes)
    mine = completions_attack(forest, frame, resolved)
    assert mine.details["method"] == "completions (enumerated)"
    assert scope_of(mine.details).whole  # every round read
    # the same maximum-entropy answer, to the ridge's pull on rows met to a fraction of a record
    a = explicit.posterior[explicit.groups.group_of_record]
    b = mine.posterior[mine.groups.group_of_record]
    assert np.abs(a - b).max() < 0.02, (family, np.abs(a - b).max())
    assert mine.details["max_violation_records"] < 0.5


def _three_unknown(frame: pd.DataFrame, forest) -> None:  # type: ignore[no-untyped-def]
    """The attacker misses the three categorical split columns with the fewest values (the first
    one sensitive) and knows every other column the model splits on."""
    categorical = [c for c in forest.split_attributes if forest.attributes[c].is_categorical]
    unknown = sorted(categorical, key=lambda c: (len(forest.attributes[c].categories), c))[:3]
    assert len(unknown) == 3
    known = tuple(c for c in forest.split_attributes if c not in unknown)
    threat = ThreatModel(sensitive=unknown[0], known=known, sa_published=True).resolve(frame, forest.class_attribute, splits=forest.split_attributes)
    r = completions_attack(forest, frame, threat)  # checks every row on the records first: raises if the truth misses one
    assert r.details["method"] == "completions (enumerated)"
    assert scope_of(r.details).whole
    assert r.details["max_violation_records"] < 1.0
    sure = r.certain_groups[r.groups.group_of_record]
    assert (r.predicted()[sure] == r.true_codes[sure]).all()  # no wrong certainty


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_truth_feasible_on_adult_with_three_unknown_split_columns(family: str, adult_train: tuple) -> None:
    features = ["age", "education", "marital-status", "relationship", "race", "sex", "hours-per-week"]
    frame, X, D, y = small_table(adult_train[0], features, "income", 1500, seed=1)
    _three_unknown(frame, _model(family, X, D, y, rounds=8, depth=4))


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_truth_feasible_on_nursery_with_three_unknown_split_columns(family: str, nursery: tuple) -> None:
    table = nursery[0]
    frame, X, D, y = small_table(table, [c for c in table.columns if c != "class"], "class", 1500, seed=2)
    y = y.cat.remove_unused_categories()
    _three_unknown(frame.assign(**{"class": y}), _model(family, X, D, y, rounds=4, depth=4))  # multiclass: one tree per class and round


def test_a_table_that_is_not_the_training_data_is_refused() -> None:
    frame, X, D, y = tiny_table(4, n=48)
    forest = _model("xgboost", X, D, y)
    _, used = tree_weights(forest, len(frame))
    rows = completion_rows(forest, len(frame), used)
    mult = np.ones((len(frame), forest.n_trees))
    check_truth_rows(rows, truth_rows(rows, forest, frame, mult, None))
    flipped = frame.assign(y=pd.Categorical(np.where(frame["y"] == "yes", "no", "yes"), categories=frame["y"].cat.categories))
    with pytest.raises(DataError, match="contradicts what the model publishes"):
        check_truth_rows(rows, truth_rows(rows, forest, flipped, mult, None))


def test_sampled_completions_say_they_are_approximate() -> None:
    """Past ``enumerate`` the completions are drawn leaf by leaf of the first tree: the answer is
    approximate, with standard errors and the rows' violation, near the enumerated one."""
    from ppdm.attacks.models.boosting_partial import CompletionOptions

    frame, X, D, y = tiny_table(5, n=60)
    forest = _model("xgboost", X, D, y)
    threat = ThreatModel(sensitive="a", known=("c",), sa_published=True).resolve(frame, forest.class_attribute, splits=forest.split_attributes)
    whole = completions_attack(forest, frame, threat)
    drawn = completions_attack(forest, frame, threat, CompletionOptions(enumerate=0, budget=400))
    assert drawn.details["method"] == "completions (sampled)"
    assert drawn.details["status"] == "approximate" and "approximate" in drawn.details["note"]
    assert drawn.details["max_std_error"] > 0 and drawn.std_error is not None
    assert scope_of(drawn.details).whole
    a = whole.posterior[whole.groups.group_of_record]
    b = drawn.posterior[drawn.groups.group_of_record]
    assert np.abs(a - b).max() < 0.15


@pytest.mark.parametrize("family", ["xgboost", "hist-gradient-boosting"])
def test_multiclass_enumerated_completions_agree_with_the_explicit_table(family: str) -> None:
    """A softmax model (one tree per class and round): the same answer as the explicit joint table."""
    frame, X, D, y = tiny_table(6, n=60)
    score = frame["a"].cat.codes.to_numpy() + frame["b"].cat.codes.to_numpy()
    y = pd.Series(pd.Categorical(np.select([score < 2, score < 4], ["lo", "mid"], "hi")), name="y")
    frame = frame.assign(y=y)
    forest = _model(family, X, D, y)
    assert forest.n_outputs == 3
    threat = ThreatModel(sensitive="a", known=("c",), sa_published=True)
    explicit = maxent_attack(forest, frame, threat=threat, prove=False)
    mine = completions_attack(forest, frame, threat.resolve(frame, forest.class_attribute, splits=forest.split_attributes))
    assert scope_of(mine.details).whole
    a = explicit.posterior[explicit.groups.group_of_record]
    b = mine.posterior[mine.groups.group_of_record]
    assert np.abs(a - b).max() < 0.02, (family, np.abs(a - b).max())


def test_completions_drawn_among_a_reference_sample_say_they_are_approximate() -> None:
    """With a reference sample the completions are its rows' (weighed by their frequency) and the
    first tree's stratified draws: every round read, the answer approximate and saying so, near
    the enumerated one; nobody certain of a wrong value."""
    from ppdm.attacks.models.boosting_partial import CompletionOptions

    frame, X, D, y = tiny_table(5, n=60)
    forest = _model("xgboost", X, D, y)
    threat = ThreatModel(sensitive="a", known=("c",), sa_published=True).resolve(frame, forest.class_attribute, splits=forest.split_attributes)
    whole = completions_attack(forest, frame, threat)
    reference, _, _, _ = tiny_table(7, n=200)
    drawn = completions_attack(forest, frame, threat, CompletionOptions(enumerate=0, budget=400), reference=reference)
    assert drawn.details["method"] == "completions (sampled)"
    assert drawn.details["status"] == "approximate" and "approximate" in drawn.details["note"]
    assert scope_of(drawn.details).whole and drawn.details["reference_completions"] > 0
    a = whole.posterior[whole.groups.group_of_record]
    b = drawn.posterior[drawn.groups.group_of_record]
    assert np.abs(a - b).max() < 0.2, np.abs(a - b).max()
    sure = drawn.certain_groups[drawn.groups.group_of_record]
    assert (drawn.predicted()[sure] == drawn.true_codes[sure]).all()
    with pytest.raises(DataError, match="reference sample lacks"):
        completions_attack(forest, frame, threat, CompletionOptions(enumerate=0, budget=400), reference=reference.drop(columns=["a"]))
