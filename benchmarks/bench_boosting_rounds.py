"""Every boosting round audited (issue 25): a 100-round classifier on UCI Adult, the insider.

Run: ``PYTHONPATH=src python benchmarks/bench_boosting_rounds.py [--cases xgb100 lgb100] [--people 20]``
(XGBoost and LightGBM need their extras).

Setting: all 30,162 training rows; the attacker knows every other column (the ``insider``
preset), ``income`` is the sensitive attribute (the class). Models: ``xgb100`` XGBoost, 100
rounds of depth 6; ``lgb100`` LightGBM, 100 rounds, ``max_depth=6, num_leaves=64``; both on the
one-hot encoded columns, 2 threads.

ppdm: ``ppdm.audit`` (the maximum-entropy audit, every round's leaf values as class-count rows;
fit and import excluded), once with every round and once with the first tree only (what it read
before issue 25). Columns: ``rows``, ``audit s``, ``certain`` (people whose income the estimate
is certain of), and the same for the first tree.

Peer: an independent linear programme built from the library alone (its own leaf indices,
``pred_leaf``, and margins before each round, ``iteration_range`` / ``num_iteration``; no ppdm
code): one variable y_i ∈ [0, 1] per person, per round and leaf Σ y_i = Σ p_i + r (H + λ) rounded,
and for each of ``--people`` sampled persons min and max y_i by scipy's HiGHS (interior point, faster than its
dual simplex here); ``peer s`` is its
time per person times 30,162 (extrapolated), ``×`` peer s / audit s, ``agree`` whether every
sampled person the estimate is certain of is pinned by the LP too (the estimate's certainty is the
relaxation's: it must be).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import linprog

CASES = ("xgb100", "lgb100")
CLASS = "income"


def table() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, np.ndarray]:
    from ppdm.data.datasets import load_adult

    df, _ = load_adult("train")
    df = df.drop(columns="fnlwgt").reset_index(drop=True)
    X = df.drop(columns=CLASS)
    return df, X, pd.get_dummies(X).astype(float), df[CLASS].cat.codes.to_numpy()


def fit(case: str, X: pd.DataFrame, D: pd.DataFrame, codes: np.ndarray, y: pd.Series):  # type: ignore[no-untyped-def]
    """The library model and its ppdm import."""
    from ppdm.tree import forest_from_lightgbm, forest_from_xgboost

    if case == "xgb100":
        from xgboost import XGBClassifier

        est = XGBClassifier(n_estimators=100, max_depth=6, n_jobs=2).fit(D, codes)
        return est, forest_from_xgboost(est, X, y=y)
    from lightgbm import LGBMClassifier

    est = LGBMClassifier(n_estimators=100, max_depth=6, num_leaves=64, verbose=-1, n_jobs=2).fit(D, codes)
    return est, forest_from_lightgbm(est, X, list(D.columns), y=y)


def library_rounds(case: str, est, D: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:  # type: ignore[no-untyped-def]
    """Straight from the library: per row and round the leaf index, the leaf value and the margin
    before the round; λ and η."""
    if case == "xgb100":
        import json

        booster = est.get_booster()
        leaves = booster.predict(_dmatrix(D), pred_leaf=True).astype(np.int64)
        trees = json.loads(booster.save_raw(raw_format="json"))["learner"]["gradient_booster"]["model"]["trees"]
        value = np.column_stack([np.asarray(t["split_conditions"], dtype=np.float64)[leaves[:, m]] for m, t in enumerate(trees)])
        margins = np.column_stack([booster.predict(_dmatrix(D), output_margin=True, iteration_range=(0, m)) if m else np.full(len(D), _base(booster)) for m in range(len(trees))])
        config = json.loads(booster.save_config())["learner"]["gradient_booster"]["tree_train_param"]
        return leaves, value, margins, float(config["lambda"]), float(config["eta"])
    booster = est.booster_
    leaves = booster.predict(D, pred_leaf=True).astype(np.int64)
    value = np.column_stack([np.array([booster.get_leaf_output(m, int(leaf)) for leaf in range(leaves[:, m].max() + 1)])[leaves[:, m]] for m in range(leaves.shape[1])])
    margins = np.column_stack([booster.predict(D, raw_score=True, num_iteration=m) if m else np.zeros(len(D)) for m in range(leaves.shape[1])])
    params = booster.params
    return leaves, value, margins, float(params.get("lambda_l2", params.get("reg_lambda", 0.0))), float(params.get("learning_rate", 0.1))


def _dmatrix(D: pd.DataFrame):  # type: ignore[no-untyped-def]
    from xgboost import DMatrix

    return DMatrix(D)


def _base(booster) -> float:  # type: ignore[no-untyped-def]
    import json

    p = float(json.loads(booster.save_raw(raw_format="json"))["learner"]["learner_model_param"]["base_score"].strip("[]"))
    return float(np.log(p / (1 - p)))


def peer_lp(case: str, est, D: pd.DataFrame, people: np.ndarray) -> tuple[float, np.ndarray]:  # type: ignore[no-untyped-def]
    """Seconds per person and, per sampled person, whether the LP pins y_i (min = max)."""
    leaves, value, margins, lam, eta = library_rounds(case, est, D)
    n, rounds = leaves.shape
    start = 1 if case == "lgb100" else 0  # LightGBM's first round holds boost_from_average's score
    rows, rhs = [], []
    for m in range(start, rounds):
        p = 1.0 / (1.0 + np.exp(-margins[:, m]))
        r = value[:, m] / eta
        leaf_ids, leaf_of = np.unique(leaves[:, m], return_inverse=True)
        count = np.bincount(leaf_of, weights=p + r * p * (1 - p)) + np.bincount(leaf_of, weights=r * lam) / np.bincount(leaf_of)
        rows.append(sp.csr_matrix((np.ones(n), (leaf_of, np.arange(n))), shape=(len(leaf_ids), n)))
        rhs.append(np.rint(count))
    A, b = sp.vstack(rows).tocsr(), np.concatenate(rhs)
    start_t = time.perf_counter()
    pinned = []
    for i in people:
        c = np.zeros(n)
        c[i] = 1.0
        lo = linprog(c, A_eq=A, b_eq=b, bounds=(0, 1), method="highs-ipm").fun
        hi = -linprog(-c, A_eq=A, b_eq=b, bounds=(0, 1), method="highs-ipm").fun
        pinned.append(hi - lo < 1e-6)
    return (time.perf_counter() - start_t) / len(people), np.array(pinned)


def run(case: str, n_people: int) -> dict[str, object]:
    import ppdm
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.tree.newton import first_rounds

    df, X, D, codes = table()
    est, forest = fit(case, X, D, codes, df[CLASS])
    threat = ThreatModel(preset="insider", sensitive=CLASS)
    t = time.perf_counter()
    every = ppdm.audit(forest, df, threat).estimate
    audit_s = time.perf_counter() - t
    t = time.perf_counter()
    first = ppdm.audit(first_rounds(forest, 1), df, threat).estimate
    first_s = time.perf_counter() - t
    assert every is not None and first is not None
    certain = every.posterior.max(axis=1)[every.groups.group_of_record] >= 1 - 1e-9
    people = np.random.default_rng(0).choice(len(df), n_people, replace=False)
    people = np.unique(np.r_[people[: n_people // 2], np.flatnonzero(certain)[: n_people - n_people // 2]])
    print(f"# {case}: audit {audit_s:.1f} s, first tree {first_s:.1f} s; the peer's LPs for {len(people)} people", flush=True)
    per_person, pinned = peer_lp(case, est, D, people)
    peer_s = per_person * len(df)
    return {
        "case": case, "rows": sum(every.details["constraint_rows"].values()), "rounds used": every.details["rounds"]["used"],
        "audit s": round(audit_s, 2), "certain": int(certain.sum()),
        "first tree: audit s": round(first_s, 2), "first tree: certain": int(first.summary()["certain_records"]),
        "peer s (extrapolated)": round(peer_s, 1), "×": round(peer_s / audit_s, 1),
        "agree": bool(np.all(pinned[certain[people]])),
    }  # fmt: skip


def markdown(rows: list[dict[str, object]]) -> str:
    """A Markdown table of ``rows`` (same keys in each)."""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    return "\n".join(lines + ["| " + " | ".join(f"{r[k]:,}" if isinstance(r[k], int) and not isinstance(r[k], bool) else str(r[k]) for k in keys) + " |" for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--people", type=int, default=20)
    args = parser.parse_args()
    print(f"# {platform.platform()}, python {sys.version.split()[0]}, load {os.getloadavg()[0]:.2f} (1 min)")
    results = []
    for case in args.cases:
        results.append(run(case, args.people))
        print(results[-1], flush=True)
    print(markdown(results))
    print(f"# load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
