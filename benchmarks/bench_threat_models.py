"""The maximum-entropy audit under the census threat model on UCI Adult: ppdm (factored form) next
to cvxpy + Clarabel on the explicit slot form of the same problem.

Run: ``PYTHONPATH=src python benchmarks/bench_threat_models.py [--repeats 3] [--clarabel-time 600]
[--skip-clarabel] [--cases c45 c45+income sk10 sk10+income]`` (Clarabel needs the ``test`` extra).

Trees (all 30,162 training rows, class ``income``):

* ``c45``: ppdm's ``C45Classifier()`` on every other column;
* ``sk10``: scikit-learn's ``DecisionTreeClassifier(max_depth=10, random_state=0)`` on the columns
  ordinal-coded (categories by their codes), imported with ``tree_from_sklearn``.

Threat models: ``ThreatModel(sensitive="marital-status", preset="census")`` (the attacker knows
age, sex, race, native-country and education, not the class; the sensitive distribution is
published), and the same with ``income`` added to the known columns (``+income``). The unknowns are
marital-status, the class (when unknown) and every other split attribute.

Columns: ``groups`` (known-value groups), ``types`` ((leaf, class, sensitive cell) triples some
group can take), ``slots`` ((group, type) pairs: the variables of the explicit form), ``build s``
(``audit_problem``: groups, reach, types, rows, truth check), ``solve s`` (``solve_factored``),
``total s`` (``maxent_attack`` end to end, median of ``--repeats``), the attacker's accuracy on
the sensitive attribute and the baseline (the majority value's share). Clarabel gets the explicit
slot problem of ``audit_problem(factored=False)`` with its impossible slots removed
(``Maximize(Σ entr(P) + P·log m)``, group sums, equality and inequality rows), in a subprocess
with Clarabel's ``time_limit`` (``--clarabel-time``) and a wall-clock limit on the whole
subprocess (``--clarabel-wall``) and on its memory (``--clarabel-memory``) so that a run always
ends; ``clarabel s`` includes cvxpy's canonicalisation, ``×`` is clarabel s / total s, ``Δpost``
the largest difference between the posteriors when Clarabel finishes, ``peak`` the subprocess's
peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from limits import peak_gb, run_peer  # benchmarks/limits.py, beside this script

CASES = ("c45", "c45+income", "sk10", "sk10+income")


def trees() -> dict:
    from sklearn.tree import DecisionTreeClassifier

    from ppdm.data.datasets import load_adult
    from ppdm.learn import C45Classifier
    from ppdm.tree import tree_from_sklearn

    df, _ = load_adult("train")
    c45 = C45Classifier().fit(df.drop(columns="income"), df["income"]).tree_
    c45.class_attribute = "income"
    features = [c for c in df.columns if c != "income"]
    codes = np.column_stack([
        df[c].cat.codes.to_numpy(float) if isinstance(df[c].dtype, pd.CategoricalDtype) else df[c].to_numpy(float) for c in features
    ])
    est = DecisionTreeClassifier(max_depth=10, random_state=0).fit(codes, df["income"])
    sk10 = tree_from_sklearn(est, df[features], feature_names=features, class_attribute="income")
    return {"c45": c45, "sk10": sk10}


def threat(case: str, df: pd.DataFrame):
    from ppdm.attacks.core.threat import ThreatModel

    census = ThreatModel(sensitive="marital-status", preset="census")
    if case.endswith("+income"):
        known = census.resolve(df, "income").known
        return ThreatModel(sensitive="marital-status", known=(*known, "income"))
    return census


def run_ppdm(tree, df: pd.DataFrame, case: str, repeats: int) -> tuple[dict, np.ndarray]:
    from dataclasses import replace

    from ppdm.attacks.models.maxent import audit_problem, maxent_attack
    from ppdm.maxent.constraints.tree_constraints import Knowledge
    from ppdm.maxent.solvers.factored import solve_factored
    from ppdm.metrics.baseline import prior_distribution

    th = threat(case, df)
    resolved = th.resolve(df, "income")
    start = time.perf_counter()
    audit = audit_problem(tree, df, resolved, replace(Knowledge(), sa=resolved.sa_published))
    build = time.perf_counter() - start
    start = time.perf_counter()
    solution = solve_factored(audit.problem)
    solve = time.perf_counter() - start
    totals, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = maxent_attack(tree, df, threat=th)
        totals.append(time.perf_counter() - start)
    assert result is not None
    summary = result.summary()
    prior = prior_distribution(result.true_codes, len(result.values))
    row = {
        "case": case, "groups": audit.table.groups.n_groups, "types": audit.problem.n_types, "slots": audit.problem.n_slots,
        "build": build, "solve": solve, "total": statistics.median(totals), "accuracy": summary["attacker_accuracy"],
        "baseline": float(prior.max()), "status": solution.status, "newton": solution.newton_steps,
    }
    return row, result.posterior


# -- Clarabel, in a subprocess ---------------------------------------------------------------------------
def clarabel_worker(tree_file: str, case: str, time_limit: float, out: str) -> None:
    import cvxpy as cp
    import scipy.sparse as sp

    from ppdm.attacks.models.maxent import audit_problem
    from ppdm.data.datasets import load_adult
    from ppdm.maxent.constraints.tree_constraints import Knowledge

    df, _ = load_adult("train")
    from ppdm.tree import load_tree

    tree = load_tree(tree_file)
    resolved = threat(case, df).resolve(df, "income")
    audit = audit_problem(tree, df, resolved, Knowledge(sa=bool(resolved.sa_published)), factored=False)
    problem, table = audit.problem, audit.table
    A, b, le, _ = problem.stacked()
    base = np.zeros((problem.n_groups, problem.n_values)) if problem.log_base is None else problem.log_base
    possible = np.flatnonzero(np.isfinite(base).ravel())
    A = sp.csr_matrix(A[:, possible])
    group = possible // problem.n_values
    S = sp.csr_matrix((np.ones(len(possible)), (group, np.arange(len(possible)))), shape=(problem.n_groups, len(possible)))
    start = time.perf_counter()
    x = cp.Variable(len(possible))
    cons = [S @ x == problem.weights]
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
    seconds = time.perf_counter() - start
    result: dict = {"seconds": seconds, "status": status, "peak_gb": peak_gb()}
    if x.value is not None and status in ("optimal", "optimal_inaccurate"):
        joint = np.zeros(problem.n_groups * problem.n_values)
        joint[possible] = np.maximum(x.value, 0.0)
        joint = joint.reshape(problem.n_groups, problem.n_values)
        p = joint / joint.sum(axis=1, keepdims=True)
        np.save(out + ".npy", table.sensitive_marginal(p))
        result["iterations"] = prob.solver_stats.num_iters
    Path(out).write_text(json.dumps(result))




def run_clarabel(tree, case: str, time_limit: float, wall: float, memory: float, ours: np.ndarray) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        from ppdm.tree import save_tree

        tree_file, out = os.path.join(tmp, "tree.json"), os.path.join(tmp, "result.json")
        save_tree(tree, tree_file)
        cmd = [sys.executable, __file__, "--worker", tree_file, case, str(time_limit), out]
        return run_peer(cmd, out, wall, memory, ours)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-clarabel", action="store_true")
    parser.add_argument("--clarabel-time", type=float, default=600.0, help="Clarabel's own time_limit (s)")
    parser.add_argument("--clarabel-wall", type=float, default=1800.0, help="wall-clock limit on the Clarabel subprocess (s)")
    parser.add_argument("--clarabel-memory", type=float, default=16.0, help="address-space limit on the Clarabel subprocess (GB)")
    args = parser.parse_args()
    from ppdm.data.datasets import load_adult

    df, _ = load_adult("train")
    import numpy
    import scipy
    import sklearn

    print(f"python {platform.python_version()}, numpy {numpy.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, {platform.machine()}")
    print(f"UCI Adult, {len(df):,} training rows; sensitive marital-status; census known columns (+ income)")
    models = trees()
    for name, tree in models.items():
        print(f"{name}: {tree.n_leaves} leaves, depth {tree.depth}")
    header = (f"{'case':<12} {'groups':>6} {'types':>6} {'slots':>10} {'build s':>8} {'solve s':>8} {'total s':>8} "
              f"{'acc':>6} {'base':>6} {'clarabel s':>11} {'×':>6}  clarabel status")
    print(header)
    for case in args.cases:
        tree = models[case.split("+")[0]]
        row, posterior = run_ppdm(tree, df, case, args.repeats)
        line = (f"{case:<12} {row['groups']:>6,} {row['types']:>6,} {row['slots']:>10,} {row['build']:>8.2f} {row['solve']:>8.2f} "
                f"{row['total']:>8.2f} {row['accuracy']:>6.4f} {row['baseline']:>6.4f}")
        if args.skip_clarabel:
            print(line, flush=True)
            continue
        peer = run_clarabel(tree, case, args.clarabel_time, args.clarabel_wall, args.clarabel_memory, posterior)
        delta = f" (Δpost {peer['delta']:.1e})" if "delta" in peer else ""
        delta += f", peak {peer['peak_gb']:.1f} GB" if peer.get("peak_gb") else ""
        print(f"{line} {peer['seconds']:>11.1f} {peer['seconds'] / row['total']:>6.0f}  {peer['status']}{delta}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        clarabel_worker(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    else:
        main()
