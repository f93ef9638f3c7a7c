"""A numeric input of a published regressor as the secret, its target known (issue 25): every true
value lies in its proved interval for every family on Adult (age, hours-per-week) and Bank Loan
(Income, CCAvg); the integer programmes' intervals equal brute force on tiny tables and lie inside
the propagated ones; a person alone in a leaf is pinned; the JSON reads back."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from regressors import REGRESSORS, regression_table
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

import ppdm
from ppdm.attacks.models.regression import IntervalResult
from ppdm.errors import DataError, PpdmError
from ppdm.exact.input_rows import input_cells
from ppdm.exact.target_rows import as_forest

# (dataset, target, sensitive input)
CASES = [("adult", "hours-per-week", "age"), ("adult", "age", "hours-per-week"), ("bank", "Mortgage", "Income"), ("bank", "Mortgage", "CCAvg")]


@pytest.mark.parametrize("family", sorted(REGRESSORS))
@pytest.mark.parametrize("dataset, target, sensitive", CASES)
def test_every_true_input_lies_in_its_proved_interval(request, dataset, target, sensitive, family):
    drop = ("income",) if dataset == "adult" else ()
    table, X, D, y = regression_table(request.getfixturevalue(dataset), target, 400, drop=drop, seed=1)
    _, model = REGRESSORS[family](X, D, y)
    result = ppdm.audit(model, table, ppdm.ThreatModel(sensitive=sensitive, preset="insider"), tolerance=5.0)
    people = result.people()
    truth = table[sensitive].to_numpy(dtype=float)
    assert ((people["lower"] <= truth) & (truth <= people["upper"])).all()
    summary = result.summary()
    assert summary["secret"] == "input" and summary["truth_inside"] and summary["scope"]["left_out"] == {}
    assert summary["baseline"]["width"] == truth.max() - truth.min()
    assert summary["pinned"] >= summary["baseline"]["pinned"]
    assert (people["width"] <= summary["baseline"]["width"] + 1e-9).all()  # never a weaker attacker than the prior
    assert ((people["lower"] <= people["estimate"]) & (people["estimate"] <= people["upper"])).all()


@pytest.mark.parametrize("family", ["tree", "random-forest", "gradient-boosting", "xgboost"])
def test_the_integer_programmes_tighten_inside_the_propagated_bounds_and_hold_the_truth(adult, family):
    table, X, D, y = regression_table(adult, "hours-per-week", 150, drop=("income",), seed=2)
    _, model = REGRESSORS[family](X, D, y, rounds=2, depth=3)
    threat = ppdm.ThreatModel(sensitive="age", preset="insider")
    outer = ppdm.audit(model, table, threat).people()
    tight = ppdm.audit(model, table, threat, exact=True, exact_time_limit=120)
    inner = tight.people()
    truth = table["age"].to_numpy(dtype=float)
    assert ((inner["lower"] <= truth) & (truth <= inner["upper"])).all()
    assert (inner["lower"] >= outer["lower"]).all() and (inner["upper"] <= outer["upper"]).all()
    assert tight.summary()["bounds"] == "integer programme"


# -- brute force on tiny tables ------------------------------------------------------------------


def _tiny(seed: int, n: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "s": rng.integers(1, 9, n).astype(float), "a": rng.integers(0, 3, n).astype(float), "y": rng.integers(0, 4, n).astype(float),
    })  # fmt: skip


def _brute(model, table: pd.DataFrame, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """Per record the lowest and highest cell edge over every assignment of cells to the records
    that reproduces every leaf's count and value (recomputed from the completed table alone)."""
    forest = as_forest(model)
    lo, hi = float(table["s"].min()), float(table["s"].max())
    cells = input_cells(forest, "s", (lo, hi))
    n, k = len(table), cells.n_cells
    y = table["y"].to_numpy()
    low, high = np.full(n, np.inf), np.full(n, -np.inf)
    for assign in itertools.product(range(k), repeat=n):
        frame = table.assign(s=cells.route[list(assign)])
        leaves = forest.apply(frame)
        score = np.full(n, forest.base_score[0]) if forest.combine == "additive" else None
        ok = True
        for t, tree in enumerate(forest.trees):
            for leaf in tree.leaves():
                inside = leaves[:, t] == leaf.id
                if inside.sum() != leaf.n_samples:
                    ok = False
                    break
                if not inside.any():
                    continue
                if score is None:
                    ok = abs(y[inside].mean() - leaf.value) <= 1e-9 * max(1.0, abs(leaf.value))
                else:  # Friedman's LS_Boost: the leaf holds η times the mean residual
                    ok = abs(eta * (y[inside] - score[inside]).mean() - leaf.value) <= 1e-9 * max(1.0, abs(leaf.value))
                if not ok:
                    break
            if not ok:
                break
            if score is not None:
                score = score + np.array([tree.nodes[i].value for i in leaves[:, t]])
        if ok:
            a = np.array(assign)
            low = np.minimum(low, cells.lower[a])
            high = np.maximum(high, cells.upper[a])
    return low, high


@pytest.mark.parametrize("family", ["tree", "forest", "boosting"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_integer_programmes_equal_brute_force_and_propagation_holds_it(family, seed):
    table = _tiny(seed)
    X = table[["s", "a"]]
    if family == "tree":
        est = DecisionTreeRegressor(max_depth=3, random_state=seed).fit(X, table["y"])
    elif family == "forest":
        est = RandomForestRegressor(2, max_depth=2, bootstrap=False, max_features=1, random_state=seed).fit(X, table["y"])
    else:
        est = GradientBoostingRegressor(n_estimators=2, max_depth=2, learning_rate=0.5, random_state=seed).fit(X, table["y"])
    model = ppdm.from_estimator(est, table, class_attribute="y")
    if "s" not in model.split_attributes:
        pytest.skip("the model does not split on s")
    low, high = _brute(model, table, getattr(est, "learning_rate", 1.0))
    threat = ppdm.ThreatModel(sensitive="s", known=("a", "y"))
    exact = ppdm.audit(model, table, threat, exact=True).people()
    sound = ppdm.audit(model, table, threat).people()
    np.testing.assert_allclose(exact["lower"], low)
    np.testing.assert_allclose(exact["upper"], high)
    assert (sound["lower"] <= low).all() and (sound["upper"] >= high).all()


def test_the_integer_programmes_report_their_progress():
    """One report per group tried (what ppdm audit --progress prints): the programmes take minutes
    on a few hundred people, which once passed without a line."""
    table = _tiny(0, n=12)
    model = ppdm.from_estimator(DecisionTreeRegressor(max_depth=3, random_state=0).fit(table[["s", "a"]], table["y"]), table, class_attribute="y")
    reports: list = []
    audit = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="s", known=("a", "y")), exact=True, exact_progress=reports.append)
    assert reports and {r.phase for r in reports} == {"interval ends"}
    assert [r.components for r in reports] == list(range(reports[0].total)) and reports[0].total == audit.intervals.details["exact_open"]


def test_a_person_alone_in_a_leaf_is_pinned_to_its_cells():
    # record 0 is the only one with s above 60; its target (90) is nobody else's
    table = pd.DataFrame({
        "s": [80.0, 20, 25, 30, 35, 40, 45, 50], "a": [1.0, 0, 1, 0, 1, 0, 1, 0], "y": [90.0, 10, 12, 11, 10, 12, 11, 10],
    })  # fmt: skip
    est = DecisionTreeRegressor(max_depth=1).fit(table[["s", "a"]], table["y"])
    model = ppdm.from_estimator(est, table, class_attribute="y")
    result = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="s", known=("a", "y")), tolerance=31.0)
    people = result.people()
    threshold = est.tree_.threshold[0]
    assert people.loc[0, "lower"] == pytest.approx(threshold) and people.loc[0, "upper"] == 80.0
    assert bool(people.loc[0, "pinned"]) and not people.loc[1:, "pinned"].any()
    np.testing.assert_allclose(people.loc[1:, "upper"], threshold)  # the others are not in record 0's leaf
    assert people.loc[0, "estimate"] == pytest.approx((threshold + 80.0) / 2)


def test_json_round_trip_keeps_the_estimate(adult, tmp_path):
    table, X, D, y = regression_table(adult, "hours-per-week", 300, drop=("income",), seed=4)
    _, model = REGRESSORS["random-forest"](X, D, y)
    audit = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="age", preset="insider"), tolerance=3.0)
    audit.save(tmp_path / "a.json")
    again = IntervalResult.from_dict(json.loads((tmp_path / "a.json").read_text()))
    summary = audit.intervals.summary()
    assert again.summary() == summary  # what was read too (its scope is in the JSON's details) and summary["estimate"] == "maximum-entropy posterior mean"
    np.testing.assert_allclose(again.estimate, audit.intervals.estimate)
    report = audit.report(tmp_path / "a.html")
    page = (tmp_path / "a.html").read_text()
    assert "maximum-entropy posterior mean" in page and f"{report['summary']['pinned']:,} of 300 people pinned" in page


def test_known_individuals_are_not_targets_and_never_widen(adult):
    table, X, D, y = regression_table(adult, "hours-per-week", 300, drop=("income",), seed=5)
    _, model = REGRESSORS["tree"](X, D, y)
    base = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="age", preset="insider"))
    more = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="age", preset="insider", known_individuals=tuple(range(100))))
    assert more.summary()["people"] == 200
    assert (more.people()["width"] <= base.people()["width"] + 1e-9).all()


def test_what_is_not_audited_is_one_line(adult):
    table, X, D, y = regression_table(adult, "hours-per-week", 300, drop=("income",), seed=6)
    _, model = REGRESSORS["tree"](X, D, y)
    other = next(c for c in model.split_attributes if c != "age")
    with pytest.raises(PpdmError, match=f"not known: '{other}'"):
        ppdm.audit(model, table, ppdm.ThreatModel(sensitive="age", known=tuple(c for c in table.columns if c not in ("age", other))))
    if "workclass" in model.attributes:
        with pytest.raises(PpdmError, match="'workclass' is categorical"):
            ppdm.audit(model, table, ppdm.ThreatModel(sensitive="workclass", preset="insider"))
    with pytest.raises(DataError, match=r"outside the declared domain \[30, 90\]"):
        ppdm.audit(model, table, ppdm.ThreatModel(sensitive="age", preset="insider"), domain=(30, 90))
