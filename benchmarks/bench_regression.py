"""The numeric secret of a 100-round boosted regressor (issue 25, part 2): the insider on UCI Adult.

Run: ``PYTHONPATH=src python benchmarks/bench_regression.py [--cases xgb100 hgb100] [--people 3] [--target hours-per-week]``
(XGBoost needs its extra); ``--cases --input-cases tree8 rf10 xgb20 --inputs age`` audits a
numeric *input* instead, the target known (below).

Setting: all 30,162 training rows, ``fnlwgt`` and ``income`` dropped; the model predicts
``--target`` (default ``hours-per-week``) from the other columns, one-hot encoded; the attacker
knows every other column (the ``insider`` preset) and wants the target. Models, 2 threads:
``xgb100`` XGBoost ``reg:squarederror``, 100 rounds of depth 6; ``hgb100`` scikit-learn
``HistGradientBoostingRegressor``, ``max_iter=100, max_depth=6, early_stopping=False``.

ppdm: ``ppdm.audit(model, table, insider, tolerance=1)`` (fit and import excluded): every round's
leaves as rows over the targets, each person's proved interval by bound propagation. Columns:
``rows``, ``audit s``, ``pinned`` (interval at most 1 wide), ``mean width`` (the prior's:
``prior width``, the column's range), ``truth inside``.

Peer: an independent linear programme built from the library alone (no ppdm code): its leaf of
every row per round (XGBoost ``pred_leaf``; for HistGradientBoosting, whose
leaves are not exposed, the rows sharing the round's increment of ``staged_predict``, a leaf or a
union of leaves with one value to 10⁻⁹, which λ = 0 keeps exact) and its scores before each round, one
variable per person in the column's range, per round and leaf
``Σ y = Σ F_{m−1} + (v/η)(N + λ)`` (± the float32 precision), and for each of ``--people`` sampled
persons min and max y_i by scipy's HiGHS (interior point). ``peer s`` is its time per person times
30,162 (extrapolated), ``×`` peer s / audit s; ``sound`` whether ppdm's interval holds the LP's on
every sampled person, ``width ppdm / LP`` their mean widths there (propagation's interval is an
outer bound of the LP's tight one).

Input cases (``--input-cases``): the same table, the model predicts ``--target``; the attacker
knows every other column, the target included, and wants the input (``--inputs``, default
``age``). ``tree8``: ``DecisionTreeRegressor(max_depth=8)``; ``rf10``: ``RandomForestRegressor(10,
max_depth=8)`` (bootstrap: every tree's multiplicities redrawn from its seed); ``xgb20``: XGBoost
20 rounds of depth 6. Columns: the input's ``cells`` (between every tree's thresholds), the
``groups`` of interchangeable records, ``audit s`` (with ``bounds s``, the proved intervals
alone: the rest is the maximum-entropy estimate), ``pinned`` to within ``--tolerance`` beside the
prior's width (the column's range; the prior pins nobody), the estimate and its mean absolute
error beside the prior's centre's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import linprog

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_boosting_rounds import markdown

CASES = ("xgb100", "hgb100")

#: A numeric input as the secret, the target known (``--input-cases``): model, its size.
INPUT_CASES = ("tree8", "rf10", "xgb20")


def table(target: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.Series]:
    from ppdm.data.datasets import load_adult

    df, _ = load_adult("train")
    df = df.drop(columns=["fnlwgt", "income"]).reset_index(drop=True)
    df[target] = df[target].astype(float)
    X = df.drop(columns=target)
    return df, X, pd.get_dummies(X).astype(float), df[target]


def fit(case: str, X: pd.DataFrame, D: pd.DataFrame, y: pd.Series):  # type: ignore[no-untyped-def]
    """The library model and its ppdm import."""
    import ppdm

    if case == "xgb100":
        from xgboost import XGBRegressor

        est = XGBRegressor(n_estimators=100, max_depth=6, n_jobs=2).fit(D, y)
        return est, ppdm.from_estimator(est, X, y)
    if case == "hgb100":
        from sklearn.ensemble import HistGradientBoostingRegressor
        from threadpoolctl import threadpool_limits

        with threadpool_limits(2):
            est = HistGradientBoostingRegressor(max_iter=100, max_depth=6, early_stopping=False, random_state=0).fit(D, y)
        return est, ppdm.from_estimator(est, X, y)
    raise ValueError(case)


def library_rounds(case: str, est, D: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:  # type: ignore[no-untyped-def]
    """Straight from the library: per row and round a leaf id, the round's increment (the leaf
    value) and the score before the round; λ and η."""
    if case == "xgb100":
        from xgboost import DMatrix

        booster = est.get_booster()
        dm = DMatrix(D)
        leaves = booster.predict(dm, pred_leaf=True).astype(np.int64)
        base = float(json.loads(booster.save_raw(raw_format="json"))["learner"]["learner_model_param"]["base_score"].strip("[]"))
        before = np.column_stack([booster.predict(dm, output_margin=True, iteration_range=(0, m)) if m else np.full(len(D), base, np.float32) for m in range(leaves.shape[1])])
        after = np.column_stack([before[:, 1:], booster.predict(dm, output_margin=True)])
        config = json.loads(booster.save_config())["learner"]["gradient_booster"]["tree_train_param"]
        return leaves, (after - before).astype(float), before.astype(float), float(config["lambda"]), float(config["eta"])
    if case == "hgb100":
        staged = np.column_stack(list(est.staged_predict(D)))
        before = np.column_stack([np.full(len(D), float(np.ravel(est._baseline_prediction)[0])), staged[:, :-1]])
        increment = staged - before
        # (F + v) − F rounds a leaf's value differently per row: a leaf is the rows whose increment agrees to 10⁻⁹
        leaves = np.column_stack([np.unique(np.round(increment[:, m], 9), return_inverse=True)[1] for m in range(staged.shape[1])])
        return leaves, increment, before, float(est.l2_regularization), float(est.learning_rate)
    raise ValueError(case)


def peer_lp(case: str, est, D: pd.DataFrame, y: np.ndarray, people: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """Seconds per person and, per sampled person, the LP's min and max of y_i."""
    leaves, increment, before, lam, eta = library_rounds(case, est, D)
    n, rounds = leaves.shape
    lo, hi = float(y.min()), float(y.max())
    rows, rhs, tol = [], [], []
    for m in range(rounds):
        _, leaf_of = np.unique(leaves[:, m], return_inverse=True)
        size = np.bincount(leaf_of).astype(float)
        r = np.bincount(leaf_of, weights=increment[:, m]) / size / eta
        rows.append(sp.csr_matrix((np.ones(n), (leaf_of, np.arange(n))), shape=(len(size), n)))
        rhs.append(np.bincount(leaf_of, weights=before[:, m]) + r * (size + lam))
        tol.append(1e-6 * (np.bincount(leaf_of, weights=np.abs(before[:, m]) + max(abs(lo), abs(hi))) + np.abs(r) * (size + lam)) + 1e-9)
    A, b, t = sp.vstack(rows).tocsr(), np.concatenate(rhs), np.concatenate(tol)
    assert np.all(np.abs(A @ y - b) <= t), "the truth must meet the peer's rows"
    A_ub, b_ub = sp.vstack([A, -A]).tocsr(), np.concatenate([b + t, -(b - t)])
    start = time.perf_counter()
    ends = []
    for i in people:
        c = np.zeros(n)
        c[i] = 1.0
        low = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=(lo, hi), method="highs-ipm").fun
        high = -linprog(-c, A_ub=A_ub, b_ub=b_ub, bounds=(lo, hi), method="highs-ipm").fun
        ends.append((low, high))
    arr = np.array(ends)
    return (time.perf_counter() - start) / len(people), arr[:, 0], arr[:, 1]


def run(case: str, n_people: int, target: str) -> dict[str, object]:
    import ppdm

    df, X, D, y = table(target)
    est, model = fit(case, X, D, y)
    threat = ppdm.ThreatModel(preset="insider", sensitive=target)
    t = time.perf_counter()
    result = ppdm.audit(model, df, threat, tolerance=1.0)
    audit_s = time.perf_counter() - t
    s = result.summary()
    people_view = result.people()
    width = people_view["width"].to_numpy()
    rng = np.random.default_rng(0)
    narrow = np.flatnonzero(width < s["baseline"]["width"])
    people = np.unique(np.r_[rng.choice(len(df), max(n_people - n_people // 2, 1), replace=False), rng.choice(narrow, n_people // 2, replace=False) if len(narrow) and n_people > 1 else []]).astype(int)
    print(f"# {case}: audit {audit_s:.1f} s, {s['pinned']:,} pinned; the peer's LPs for {len(people)} people", flush=True)
    per_person, lp_lo, lp_hi = peer_lp(case, est, D, y.to_numpy(), people)
    ours_lo, ours_hi = people_view["lower"].to_numpy()[people], people_view["upper"].to_numpy()[people]
    peer_s = per_person * len(df)
    return {
        "case": case, "rows": result.intervals.details["rows"], "rounds used": s["scope"]["read"], "audit s": round(audit_s, 2),
        "pinned": s["pinned"], "mean width": round(s["mean_width"], 2), "prior width": s["baseline"]["width"],
        "truth inside": s["truth_inside"], "peer s (extrapolated)": round(peer_s, 1), "×": round(peer_s / audit_s, 1),
        "sound": bool(np.all(ours_lo <= lp_lo + 1e-6) and np.all(ours_hi >= lp_hi - 1e-6)),
        "width ppdm / LP": f"{np.mean(ours_hi - ours_lo):.2f} / {np.mean(lp_hi - lp_lo):.2f}",
    }  # fmt: skip


def fit_input(case: str, X: pd.DataFrame, D: pd.DataFrame, y: pd.Series):  # type: ignore[no-untyped-def]
    """The models of the input cases: a tree of depth 8, 10 trees of depth 8, 20 XGBoost rounds of depth 6."""
    from threadpoolctl import threadpool_limits

    import ppdm

    if case == "tree8":
        from sklearn.tree import DecisionTreeRegressor

        est = DecisionTreeRegressor(max_depth=8, random_state=0).fit(D, y)
    elif case == "rf10":
        from sklearn.ensemble import RandomForestRegressor

        with threadpool_limits(2):
            est = RandomForestRegressor(10, max_depth=8, random_state=0, n_jobs=2).fit(D, y)
    elif case == "xgb20":
        from xgboost import XGBRegressor

        est = XGBRegressor(n_estimators=20, max_depth=6, n_jobs=2).fit(D, y)
    else:
        raise ValueError(case)
    return est, ppdm.from_estimator(est, X, y)


def run_input(case: str, target: str, sensitive: str, tolerance: float) -> dict[str, object]:
    """A numeric input ``sensitive`` as the secret, the target known: the audit's time, who is
    pinned to within ``tolerance`` beside the prior (the column's range), the estimate's error."""
    import ppdm

    df, X, D, y = table(target)
    _, model = fit_input(case, X, D, y)
    t = time.perf_counter()
    result = ppdm.audit(model, df, ppdm.ThreatModel(preset="insider", sensitive=sensitive), tolerance=tolerance)
    audit_s = time.perf_counter() - t
    s, d = result.summary(), result.intervals.details
    return {
        "case": f"{case}: {sensitive} (target {target})", "cells": d["cells"], "groups": d["groups"], "audit s": round(audit_s, 1),
        "bounds s": round(audit_s - d.get("estimate_seconds", 0.0), 1), "pinned": s["pinned"], "tolerance": tolerance,
        "mean width": round(s["mean_width"], 2), "prior width": s["baseline"]["width"], "truth inside": s["truth_inside"],
        "estimate": s["estimate"], "MAE": round(s["mean_abs_error"], 2), "prior's MAE": round(s["baseline"]["mean_abs_error"], 2),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", choices=CASES, default=list(CASES))
    parser.add_argument("--people", type=int, default=3)
    parser.add_argument("--target", default="hours-per-week")
    parser.add_argument("--input-cases", nargs="*", choices=INPUT_CASES, default=[], help="also a numeric input as the secret, the target known")
    parser.add_argument("--inputs", nargs="+", default=["age"], help="the inputs audited by --input-cases (target: --target)")
    parser.add_argument("--tolerance", type=float, default=1.0, help="pinned: a proved interval at most this wide (--input-cases)")
    args = parser.parse_args()
    print(f"# {platform.platform()}, python {sys.version.split()[0]}, load {os.getloadavg()[0]:.2f} (1 min)")
    results = []
    for case in args.cases:
        results.append(run(case, args.people, args.target))
        print(results[-1], flush=True)
    if results:
        print(markdown(results))
    inputs = []
    for case in args.input_cases:
        for sensitive in args.inputs:
            inputs.append(run_input(case, args.target, sensitive, args.tolerance))
            print(inputs[-1], flush=True)
    if inputs:
        print(markdown(inputs))
    print(f"# load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
