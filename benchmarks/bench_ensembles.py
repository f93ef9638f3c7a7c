"""The maximum-entropy audit of tree ensembles on UCI Adult: ppdm next to cvxpy + Clarabel on the
same problem.

Run: ``PYTHONPATH=src python benchmarks/bench_ensembles.py [--cases rf10 rf100 xgb100 lgb100 rf50]
[--skip-clarabel] [--clarabel-time 600] [--clarabel-wall 900] [--clarabel-memory 8]``
(Clarabel needs the ``test`` extra, XGBoost and LightGBM their extras).

Setting (paper 000's attacker): all 30,162 training rows, the known columns are paper 000's eight
categorical quasi-identifiers with ``income`` swapped for ``education`` (workclass, education,
marital-status, occupation, relationship, race, sex, native-country), one-hot encoded for the
libraries; the class ``income`` is the sensitive attribute. Every split attribute is known, so each
(known values, multiplicity vector) group lands in one joint leaf.

Models: ``rf10`` scikit-learn ``RandomForestClassifier(10, random_state=0)`` (bootstrap: every
record counted with its redrawn multiplicity in every tree), ``rf100``
``RandomForestClassifier(100, max_depth=10, random_state=0)``, ``rf50`` the same with 50 trees (not
run by default: its Newton chase stalls, and the exact face's linear programme takes minutes), ``xgb100`` XGBoost 100 rounds of
depth 6, ``lgb100`` LightGBM 100 rounds of depth 6 (the first tree's class counts and every
tree's sample counts are what they publish; in this setting only the first tree's class counts
are informative).

Columns: ``groups``, ``types``, ``rows`` (after dropping rows the groups decide), ``solve s``
(``solve_forest``), ``build s`` (the rest: groups, joint leaves, rows, truth check, provenance),
``total s`` (``maxent_attack`` end to end, fit and import excluded), ``peak GB`` (this process's peak resident memory after the case), the
attacker's accuracy and the baseline. Clarabel gets the explicit slot form of the same problem
(``expand``) in a subprocess with its own ``time_limit`` and wall-clock and memory limits, as in
``bench_threat_models.py``; ``clarabel s`` counts cvxpy's canonicalisation and Clarabel's solve
from the built problem, so ``×`` is clarabel s / solve s (the build is shared), ``Δpost`` the largest difference of the
posteriors when it finishes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from limits import peak_gb, run_peer  # benchmarks/limits.py, beside this script

CASES = ("rf10", "rf100", "xgb100", "lgb100", "rf50")
KNOWN = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]
CLASS = "income"


def table() -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    from ppdm.data.datasets import load_adult

    df, _ = load_adult("train")
    df = df[[*KNOWN, CLASS]].reset_index(drop=True)
    X = df[KNOWN]
    return df, X, df[CLASS]


def model(case: str, df: pd.DataFrame, X: pd.DataFrame, y: pd.Series):  # type: ignore[no-untyped-def]
    """Fit and import ``case`` (the seconds are not part of the audit)."""
    from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost

    D = pd.get_dummies(X).astype(float)
    codes = y.cat.codes.to_numpy()
    if case.startswith("rf"):
        from sklearn.ensemble import RandomForestClassifier

        depth = None if case == "rf10" else 10
        est = RandomForestClassifier(int(case[2:]), max_depth=depth, random_state=0, n_jobs=1).fit(D, y)
        return forest_from_sklearn(est, X, y=y)
    if case == "xgb100":
        import xgboost

        est = xgboost.XGBClassifier(n_estimators=100, max_depth=6, n_jobs=1).fit(D, codes)
        return forest_from_xgboost(est, X, y=y)
    import lightgbm

    est = lightgbm.LGBMClassifier(n_estimators=100, max_depth=6, num_leaves=63, verbose=-1, n_jobs=1).fit(D, codes)
    return forest_from_lightgbm(est, X, list(D.columns), y=y)


def run_ppdm(forest, df: pd.DataFrame) -> tuple[dict, np.ndarray]:  # type: ignore[no-untyped-def]
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.models.maxent import maxent_attack

    start = time.perf_counter()
    result = maxent_attack(forest, df, threat=ThreatModel(sensitive=CLASS, known=tuple(KNOWN)))
    total = time.perf_counter() - start
    s, d = result.summary(), result.details
    row = {
        "groups": result.groups.n_groups, "types": d["types"], "rows": sum(d["constraint_rows"].values()),
        "build": total - d["solver_seconds"], "solve": d["solver_seconds"], "total": total, "status": d["status"],
        "violation": d["max_violation"], "accuracy": s["attacker_accuracy"], "baseline": s["baseline"]["accuracy"], "peak": peak_gb(),
        "face": d.get("face", ""), "steps": d["newton_steps"],
    }
    return row, result.posterior


# -- Clarabel, in a subprocess ---------------------------------------------------------------------------
def clarabel_worker(forest_file: str, time_limit: float, out: str) -> None:
    import cvxpy as cp
    import scipy.sparse as sp

    from ppdm.maxent.constraints.forest_constraints import forest_type_problem
    from ppdm.maxent.solvers.factored import expand
    from ppdm.tree import load_forest

    df, _, _ = table()
    problem, _ = forest_type_problem(load_forest(forest_file), df, KNOWN, CLASS)
    start = time.perf_counter()
    explicit, slot_type = expand(problem)
    A, b, le, _ = explicit.stacked()
    base = explicit.log_base
    possible = np.flatnonzero(np.isfinite(base).ravel())
    A = sp.csr_matrix(A[:, possible])
    group = possible // explicit.n_values
    S = sp.csr_matrix((np.ones(len(possible)), (group, np.arange(len(possible)))), shape=(explicit.n_groups, len(possible)))
    x = cp.Variable(len(possible))
    cons = [S @ x == explicit.weights]
    if (~le).any():
        cons.append(A[~le] @ x == b[~le])
    if le.any():
        cons.append(A[le] @ x <= b[le])
    prob = cp.Problem(cp.Maximize(cp.sum(cp.entr(x)) + base.ravel()[possible] @ x), cons)
    try:
        prob.solve(solver=cp.CLARABEL, time_limit=time_limit)
        status = prob.status
    except cp.error.SolverError as exc:
        status = f"failed: {exc}"
    result: dict = {"seconds": time.perf_counter() - start, "status": status, "peak_gb": peak_gb()}
    if x.value is not None and status in ("optimal", "optimal_inaccurate"):
        joint = np.zeros(explicit.n_groups * explicit.n_values)
        joint[possible] = np.maximum(x.value, 0.0)
        p = joint.reshape(explicit.n_groups, explicit.n_values)
        p = p / p.sum(axis=1, keepdims=True)
        marginal = np.zeros((explicit.n_groups, problem.n_labels))
        valid = slot_type >= 0
        rows = np.repeat(np.arange(explicit.n_groups), explicit.n_values).reshape(slot_type.shape)
        np.add.at(marginal, (rows[valid], problem.type_label[slot_type[valid]]), p[valid])
        np.save(out + ".npy", marginal)
    Path(out).write_text(json.dumps(result))




def run_clarabel(forest, time_limit: float, wall: float, memory: float, ours: np.ndarray) -> dict:  # type: ignore[no-untyped-def]
    from ppdm.tree import save_forest

    with tempfile.TemporaryDirectory() as tmp:
        forest_file, out = os.path.join(tmp, "forest.json"), os.path.join(tmp, "result.json")
        save_forest(forest, forest_file)
        cmd = [sys.executable, __file__, "--worker", forest_file, str(time_limit), out]
        return run_peer(cmd, out, wall, memory, ours)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES[:4]), choices=CASES)
    parser.add_argument("--skip-clarabel", action="store_true")
    parser.add_argument("--clarabel-time", type=float, default=600.0, help="Clarabel's own time_limit (s)")
    parser.add_argument("--clarabel-wall", type=float, default=900.0, help="wall-clock limit on the Clarabel subprocess (s)")
    parser.add_argument("--clarabel-memory", type=float, default=8.0, help="address-space limit on the Clarabel subprocess (GB)")
    args = parser.parse_args()
    import numpy
    import scipy
    import sklearn

    print(f"python {platform.python_version()}, numpy {numpy.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, {platform.machine()}")
    df, X, y = table()
    print(f"UCI Adult, {len(df):,} training rows; known: {', '.join(KNOWN)}; sensitive class {CLASS!r}")
    header = (f"{'case':<8} {'groups':>6} {'types':>7} {'rows':>6} {'build s':>8} {'solve s':>8} {'total s':>8} {'peak GB':>7} "
              f"{'acc':>6} {'base':>6} {'status':>10} {'clarabel s':>10} {'×':>6}  clarabel status   load average")
    print(header, flush=True)
    for case in args.cases:
        forest = model(case, df, X, y)
        row, posterior = run_ppdm(forest, df)
        line = (f"{case:<8} {row['groups']:>6,} {row['types']:>7,} {row['rows']:>6,} {row['build']:>8.2f} {row['solve']:>8.2f} "
                f"{row['total']:>8.2f} {row['peak'] or float('nan'):>7.2f} {row['accuracy']:>6.4f} {row['baseline']:>6.4f} {row['status']:>10}")
        load = " ".join(f"{v:.1f}" for v in os.getloadavg())
        print(f"         {row['steps']} Newton steps; types proved empty by {row['face']}", flush=True)
        if args.skip_clarabel:
            print(f"{line}   load {load}", flush=True)
            continue
        peer = run_clarabel(forest, args.clarabel_time, args.clarabel_wall, args.clarabel_memory, posterior)
        extra = f" (Δpost {peer['delta']:.1e})" if "delta" in peer else ""
        extra += f", peak {peer['peak_gb']:.1f} GB" if peer.get("peak_gb") else ""
        print(f"{line} {peer['seconds']:>10.1f} {peer['seconds'] / max(row['solve'], 1e-9):>6.1f}  {peer['status']}{extra}   load {load}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        clarabel_worker(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    else:
        main()
