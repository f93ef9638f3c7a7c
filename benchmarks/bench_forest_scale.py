"""Forest audits at the scale of real tables: time, status and memory against the number of people.

Run: ``PYTHONPATH=src nice python benchmarks/bench_forest_scale.py [--rows 30000 100000 300000 1000000]
[--trees 10 100] [--attackers insider census] [--sensitive marital-status relationship]
[--time-limit 600] [--peer] [--peer-limit 600] [--json out.json]``.

Tables: the bundled UCI Adult training rows (complete rows) resampled to each size with
:func:`ppdm.data.synthetic.sample_adult` (seed 0). Forests: scikit-learn
``RandomForestClassifier(n_estimators=T, max_depth=10, min_samples_leaf=5, bootstrap=True,
random_state=0)`` on the one-hot inputs, class ``income``. Attackers: the ``insider`` preset (every
other column, the class included) and the ``census`` preset (the demographic columns, not the
class), each with the sensitive column's distribution published. Each cell runs in its own
subprocess (fit excluded from the time) through ``ppdm.audit`` with ``time_limit``: ``audit s``
end to end, ``solve s`` the maximum-entropy solve, the status (``optimal``; ``inaccurate`` when the
limit stopped it; ``refused`` with the library's one-line reason, e.g. a census attacker's
routing cap), Newton steps, the largest row violation and ``peak GB`` (the subprocess's peak
resident memory, fit and data included), with the load average when the cell ended (the machine
is shared). Per attacker, secret and forest the fitted log–log slope of audit time against rows
over the optimal cells. ``--peer``: on the cells of at most 30,000 rows, cvxpy + Clarabel on the
same problem over explicit (group, slot) variables (:func:`ppdm.maxent.solvers.factored.expand`,
in a subprocess under ``--peer-limit``), its time, the ratio and the largest posterior difference.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from limits import peak_gb  # benchmarks/limits.py, beside this script

ROWS = (30_000, 100_000, 300_000, 1_000_000)
TREES = (10, 100)
ATTACKERS = ("insider", "census")
SENSITIVE = ("marital-status", "relationship")
PEER_ROWS = 30_000


def fitted(cell: dict):  # type: ignore[no-untyped-def]
    """The resampled table, the forest as ppdm reads it, and the threat model."""
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    import ppdm
    from ppdm.data.datasets import load_adult
    from ppdm.data.synthetic import sample_adult

    frame, _ = load_adult("train")
    df = sample_adult(frame, cell["rows"], np.random.default_rng(0))
    inputs = [c for c in df.columns if c != "income"]
    est = RandomForestClassifier(cell["trees"], max_depth=10, min_samples_leaf=5, bootstrap=True, random_state=0, n_jobs=1)
    est.fit(pd.get_dummies(df[inputs]).astype(float), df["income"])
    model = ppdm.from_estimator(est, df[inputs], df["income"])
    return df, model, ppdm.ThreatModel(sensitive=cell["sensitive"], preset=cell["attacker"], sa_published=True)


def worker(cell: dict, out: str) -> None:
    """Fit one forest and audit it; write the row as JSON and the records' posteriors beside it."""
    import ppdm

    df, model, threat = fitted(cell)
    start = time.perf_counter()
    try:
        audit = ppdm.audit(model, df, threat, time_limit=cell["time_limit"])
    except ppdm.PpdmError as e:
        Path(out).write_text(json.dumps({"seconds": time.perf_counter() - start, "status": "refused", "why": str(e)[:160], "peak_gb": peak_gb()}))
        return
    seconds = time.perf_counter() - start
    d = audit.estimate.details
    np.save(out + ".npy", audit.estimate.record_posterior())
    row = {"seconds": seconds, "solve": d.get("solver_seconds"), "status": d.get("status"), "violation": d.get("max_violation"),
           "steps": d.get("newton_steps"), "types": d.get("types"), "peak_gb": peak_gb()}
    Path(out).write_text(json.dumps(row))


def peer_worker(cell: dict, out: str) -> None:
    """cvxpy + Clarabel on the cell's problem over explicit slots; the records' posteriors beside it."""
    import cvxpy as cp

    from ppdm.maxent.constraints.forest_constraints import forest_type_problem
    from ppdm.maxent.constraints.tree_constraints import Knowledge
    from ppdm.maxent.solvers.factored import expand

    df, model, threat = fitted(cell)
    threat = threat.resolve(df, model.class_attribute, splits=model.split_attributes)
    problem, types = forest_type_problem(model, df, list(threat.known or ()), str(threat.sensitive), Knowledge(sa=True))
    start = time.perf_counter()
    explicit, slot_type = expand(problem)
    A, b, le, _ = explicit.stacked()
    G, K = explicit.n_groups, explicit.n_values
    possible = np.flatnonzero(np.isfinite(explicit.log_base).ravel())
    group = possible // K
    import scipy.sparse as sp

    # in records rather than shares (P = N·p): Clarabel's tolerances are absolute, and at shares of
    # 1/30,000 it stopped 'solver_error' after 276 s; the objective changes by a constant only
    n = float(types.groups.n_records)
    P = cp.Variable(len(possible), nonneg=True)
    S = sp.csr_matrix((np.ones(len(possible)), (group, np.arange(len(possible)))), shape=(G, len(possible)))
    cons = [S @ P == n * explicit.weights]
    if (~le).any():
        cons.append(A[~le][:, possible] @ P == n * b[~le])
    if le.any():
        cons.append(A[le][:, possible] @ P <= n * b[le])
    objective = cp.sum(cp.entr(P)) + cp.sum(cp.multiply(P, explicit.log_base.ravel()[possible]))
    program = cp.Problem(cp.Maximize(objective), cons)
    try:
        program.solve(solver="CLARABEL", tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9, max_iter=400)
    except cp.error.SolverError as e:  # Clarabel's own status is in its log; cvxpy only says it failed
        Path(out).write_text(json.dumps({"seconds": time.perf_counter() - start, "status": f"failed ({e.__class__.__name__})", "peak_gb": peak_gb()}))
        return
    seconds = time.perf_counter() - start
    joint = np.zeros(G * K)
    joint[possible] = np.maximum(np.asarray(P.value), 0.0) / n if P.value is not None else np.nan
    p = joint.reshape(G, K) / explicit.weights[:, None]
    marginal = np.zeros((G, problem.n_labels))
    valid = slot_type >= 0
    rows = np.broadcast_to(np.arange(G)[:, None], slot_type.shape)
    np.add.at(marginal, (rows[valid], problem.type_label[slot_type[valid]]), p[valid])
    np.save(out + ".npy", marginal[types.groups.group_of_record])
    Path(out).write_text(json.dumps({"seconds": seconds, "status": program.status, "peak_gb": peak_gb()}))


def run(kind: str, cell: dict, wall: float) -> tuple[dict, np.ndarray | None]:
    """One subprocess (``kind``: ``--worker`` or ``--peer-worker``) under a wall clock."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "row.json")
        start = time.perf_counter()
        try:
            subprocess.run([sys.executable, __file__, kind, json.dumps(cell), out], timeout=wall, check=False)
        except subprocess.TimeoutExpired:
            return {"seconds": time.perf_counter() - start, "status": f"killed at {wall:g} s"}, None
        if not os.path.exists(out):
            return {"seconds": time.perf_counter() - start, "status": "crashed"}, None
        post = np.load(out + ".npy") if os.path.exists(out + ".npy") else None
        return json.loads(Path(out).read_text()), post


def _num(row: dict, key: str, fmt: str) -> str:
    v = row.get(key)
    return format(v, fmt) if isinstance(v, (int, float)) else "-"


def slopes(rows: list[tuple[dict, dict]]) -> list[str]:
    """Per attacker, secret and forest: the log–log slope of audit time against rows (optimal cells)."""
    out = []
    for key in dict.fromkeys((c["attacker"], c["sensitive"], c["trees"]) for c, _ in rows):
        mine = [(c["rows"], r["seconds"]) for c, r in rows if (c["attacker"], c["sensitive"], c["trees"]) == key and r.get("status") == "optimal"]
        if len({n for n, _ in mine}) >= 2:
            n, t = np.log(np.array(mine, dtype=float)).T
            out.append(f"slope {key[0]:<8} {key[1]:<15} {key[2]:>3} trees: {np.polyfit(n, t, 1)[0]:.2f} over {len(mine)} sizes")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="+", type=int, default=list(ROWS))
    parser.add_argument("--trees", nargs="+", type=int, default=list(TREES))
    parser.add_argument("--attackers", nargs="+", choices=ATTACKERS, default=list(ATTACKERS))
    parser.add_argument("--sensitive", nargs="+", choices=SENSITIVE, default=list(SENSITIVE))
    parser.add_argument("--time-limit", type=float, default=600.0, help="ppdm.audit's time_limit per cell (s)")
    parser.add_argument("--peer", action="store_true", help=f"cvxpy + Clarabel on the cells of at most {PEER_ROWS:,} rows")
    parser.add_argument("--peer-limit", type=float, default=600.0, help="seconds the peer may take per cell")
    parser.add_argument("--json", type=Path, help="write every cell's row here")
    args = parser.parse_args()
    import scipy
    import sklearn

    print(f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, {platform.machine()}")
    print(f"load average at start: {' '.join(f'{v:.1f}' for v in os.getloadavg())}; time limit {args.time_limit:g} s per audit")
    print(f"{'rows':>9} {'trees':>5} {'attacker':<8} {'secret':<15} {'audit s':>8} {'solve s':>8} {'status':>10} {'steps':>5} {'viol':>8} {'peak GB':>7} {'load':>5}  peer")
    rows = []
    for n, trees, attacker, sensitive in itertools.product(args.rows, args.trees, args.attackers, args.sensitive):
        cell = {"rows": n, "trees": trees, "attacker": attacker, "sensitive": sensitive, "time_limit": args.time_limit}
        row, post = run("--worker", cell, args.time_limit + 600.0)
        peer = ""
        if args.peer and n <= PEER_ROWS and row.get("status") == "optimal":
            other, theirs = run("--peer-worker", cell, args.peer_limit)
            row["peer_seconds"], row["peer_status"] = other["seconds"], other["status"]
            bound = "≥" if other["status"].startswith("killed") else ""
            peer = f"cvxpy+Clarabel {other['status']} {other['seconds']:.1f} s, ratio {bound}{other['seconds'] / row['seconds']:.0f}×"
            if theirs is not None and post is not None:
                row["peer_delta"] = float(np.abs(theirs - post).max())
                peer += f", posteriors within {row['peer_delta']:.1e}"
        row["load"] = os.getloadavg()[0]
        rows.append((cell, row))
        print(f"{n:>9,} {trees:>5} {attacker:<8} {sensitive:<15} {_num(row, 'seconds', '8.1f')} {_num(row, 'solve', '8.1f')} {row['status']:>10} "
              f"{_num(row, 'steps', '5d')} {_num(row, 'violation', '8.1e')} {_num(row, 'peak_gb', '7.2f')} {row['load']:>5.1f}  {peer or row.get('why', '')}", flush=True)
    print()
    for line in slopes(rows):
        print(line)
    print(f"load average at end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    if args.json is not None:
        args.json.write_text(json.dumps([{**c, **r} for c, r in rows], indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("--worker", "--peer-worker"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        (worker if sys.argv[1] == "--worker" else peer_worker)(json.loads(sys.argv[2]), sys.argv[3])
    else:
        main()
