"""Every boosting round against brute force on tiny instances: every assignment of the unknowns
enumerated, kept when each round's published leaf values are the Newton step its records take.

The oracle shares nothing with the rows' builder: it routes the candidate records with
``Forest.apply``, scores them with the forest of the rounds before (``Forest.decision_function``),
recomputes every leaf's value from its records' gradients and hessians with the library's
formula, and compares it with the published value. The insider's exact bounds must equal it;
with an unknown split attribute (rows with real coefficients, read by the estimate only) the
exact bounds must contain it and the estimate may be certain only where brute force is.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import exact_attack
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.tree import forest_from_sklearn, forest_from_xgboost
from ppdm.tree.forest import Forest, leaf_values
from ppdm.tree.newton import NewtonStep, newton_step


def _table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n).astype(float)
    b = rng.choice(["b0", "b1"], n)
    y = np.where(rng.random(n) < 0.25 + 0.15 * a, "y", "n")
    if len(set(y)) < 2:
        y[:2] = ["n", "y"]
    return pd.DataFrame({"A": a, "B": pd.Categorical(b, ["b0", "b1"]), "Y": pd.Categorical(y, ["n", "y"])})


def _gb(frame: pd.DataFrame) -> Forest:
    X = frame[["A", "B"]]
    est = GradientBoostingClassifier(n_estimators=3, max_depth=2, learning_rate=0.5, random_state=0).fit(pd.get_dummies(X).astype(float), frame["Y"])
    return forest_from_sklearn(est, X, y=frame["Y"])


def _hgb(frame: pd.DataFrame) -> Forest:
    X = frame[["A", "B"]]
    est = HistGradientBoostingClassifier(max_iter=3, max_depth=2, min_samples_leaf=1, learning_rate=0.5, l2_regularization=0.7, early_stopping=False)
    est.fit(pd.get_dummies(X).astype(float), frame["Y"])
    return forest_from_sklearn(est, X, y=frame["Y"])


def _xgb(frame: pd.DataFrame) -> Forest:
    xgb = pytest.importorskip("xgboost")
    X = frame[["A", "B"]]
    est = xgb.XGBClassifier(n_estimators=3, max_depth=2, learning_rate=0.5, min_child_weight=0, base_score=0.5, n_jobs=1)
    est.fit(pd.get_dummies(X).astype(float), frame["Y"].cat.codes.to_numpy())
    return forest_from_xgboost(est, X, y=frame["Y"])


FAMILIES = {"gradient-boosting": _gb, "hist-gradient-boosting": _hgb, "xgboost": _xgb}


def _consistent(forest: Forest, frames: list[pd.DataFrame]) -> np.ndarray:
    """Per candidate table, whether every round's leaf values are its records' Newton step (and
    the published row counts and covers theirs)."""
    step = newton_step(forest)
    assert isinstance(step, NewtonStep)
    ok = np.ones(len(frames), dtype=bool)
    for d, frame in enumerate(frames):
        X, y = frame[["A", "B"]], (frame["Y"] == forest.classes[1]).to_numpy(dtype=float)
        leaves = forest.apply(X)
        for j, tree in enumerate(forest.trees):
            before = Forest(forest.trees[:j], "additive", link="logistic", base_score=forest.base_score) if j else None
            score = before.decision_function(X)[:, 0] if before is not None else np.full(len(X), forest.base_score[0])
            p = 1.0 / (1.0 + np.exp(-score))
            G = np.bincount(leaves[:, j], weights=p - y, minlength=tree.n_nodes)
            H = np.bincount(leaves[:, j], weights=p * (1 - p), minlength=tree.n_nodes)
            n = np.bincount(leaves[:, j], minlength=tree.n_nodes)
            for node in tree.leaves():
                v = -step.learning_rate * G[node.id] / (H[node.id] + step.l2) if n[node.id] else 0.0
                ok[d] &= abs(v - leaf_values(tree)[node.id]) <= 1e-5 * (1 + abs(v))
                if node.n_samples is not None:
                    ok[d] &= n[node.id] == round(node.n_samples)
                if node.cover is not None and "cover" in forest.known[j]:
                    ok[d] &= abs(H[node.id] - node.cover) <= 1e-5 * (1 + node.cover)
    return ok


def _brute(forest: Forest, frame: pd.DataFrame, unknown: list[str], group_of: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the min and max count of class ``y`` over every consistent assignment of ``unknown``."""
    domains = {"Y": ["n", "y"], "B": ["b0", "b1"]}
    combos = list(itertools.product(*[domains[c] for c in unknown]))
    frames = []
    for choice in itertools.product(range(len(combos)), repeat=len(frame)):
        cand = frame.copy()
        for k, c in enumerate(unknown):
            cand[c] = pd.Categorical([combos[i][k] for i in choice], domains[c])
        frames.append(cand)
    ok = _consistent(forest, frames)
    assert ok[[i for i, f in enumerate(frames) if f.equals(frame)][0]]  # the truth is consistent
    counts = np.array([np.bincount(group_of, weights=(f["Y"] == "y").to_numpy(float), minlength=n_groups) for f in frames])[ok]
    return counts.min(axis=0), counts.max(axis=0)


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_insiders_exact_bounds_are_brute_force_over_every_round(family, seed):
    frame = _table(seed, 9)
    forest = FAMILIES[family](frame)
    threat = ThreatModel(sensitive="Y", known=("A", "B"))
    proved = exact_attack(forest, frame, threat)
    assert proved.details["rounds"]["used"] == 3
    g = proved.groups
    lo, hi = _brute(forest, frame, ["Y"], g.group_of_record, g.n_groups)
    assert np.array_equal(proved.bounds["min"][:, 1], lo) and np.array_equal(proved.bounds["max"][:, 1], hi)
    estimate = maxent_attack(forest, frame, threat)
    sure = estimate.posterior.max(axis=1) >= 1 - 1e-9
    brute_sure = (lo == g.counts) | (hi == 0)
    assert not (sure & ~brute_sure).any()


@pytest.mark.parametrize("family", list(FAMILIES))
def test_with_an_unknown_split_attribute_the_bounds_contain_brute_force(family):
    frame = _table(5, 6)
    forest = FAMILIES[family](frame)
    if "B" not in forest.split_attributes:
        pytest.skip("the model does not split on B")
    threat = ThreatModel(sensitive="Y", known=("A",))
    proved = exact_attack(forest, frame, threat)
    g = proved.groups
    lo, hi = _brute(forest, frame, ["Y", "B"], g.group_of_record, g.n_groups)
    assert (proved.bounds["min"][:, 1] <= lo).all() and (proved.bounds["max"][:, 1] >= hi).all()
    estimate = maxent_attack(forest, frame, threat)
    sure = estimate.posterior.max(axis=1) >= 1 - 1e-9
    assert not (sure & ~((lo == g.counts) | (hi == 0))).any()
