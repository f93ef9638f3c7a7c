"""Forest audits in predictable time: the insider's maximum-entropy audit over a grid of forests.

Run: ``PYTHONPATH=src python benchmarks/bench_forest_grid.py [--quick] [--datasets ...] [--trees ...]
[--depths ...] [--bootstrap on off] [--sensitive binary multi class] [--time-limit 300] [--json out.json]``,
or ``--shape [--budget 30]`` for the slow configuration's shape alone (exit status 1 over budget).

Tables: UCI Adult training rows (complete rows, subsamples of 1,000, 3,000, 10,000 and 30,000 rows
drawn with seed 0: ``adult1k`` … ``adult30k``) over nine columns, five of them numeric with many
values (age, fnlwgt, education-num, capital-gain, hours-per-week) and four categorical
(workclass, race, sex, relationship), class ``income``; and Bank Personal Loan (5,000 rows, all
twelve inputs but ID and ZIP code, class ``Personal Loan``). Forests: scikit-learn
``RandomForestClassifier`` (one-hot inputs) with 10 or 100 trees, ``max_depth`` 5, 8, 10 or none,
bootstrap on or off, ``random_state=0``. The attacker is the insider: every other input and the
class known (or every input, when the class is the secret), the sensitive input's distribution
published. Sensitive: ``binary`` (Adult ``sex``, Bank ``Online``), ``multi`` (Adult
``relationship``, six values; Bank ``Family``, four), ``class``.

Each cell runs in its own subprocess (fit excluded from the time) through ``ppdm.audit`` with
``time_limit`` (default 300 s: the library's default), under a wall clock of that plus 300 s.
Columns: ``audit s`` (``ppdm.audit`` end to end), ``solve s``, the status (``inaccurate`` is the
deadline's honest answer), the largest row violation, ``peak GB`` (the subprocess's peak resident
memory, fit and data included), the attacker's accuracy and the prior's. The summary gives per
table the median, 90th percentile and worst audit time, the largest memory and the statuses.
``--shape``: Bank Loan, 100 bootstrap trees of depth 8, ``Family`` sensitive (the shape of issue
30's slow case: a small bootstrap forest at depth 8 on a numeric table), against ``--budget``.
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
import pandas as pd

from limits import peak_gb  # benchmarks/limits.py, beside this script

ADULT = ["age", "fnlwgt", "education-num", "capital-gain", "hours-per-week", "workclass", "race", "sex", "relationship"]
ADULT_SIZES = {"adult1k": 1000, "adult3k": 3000, "adult10k": 10000, "adult30k": 30162}
BANK = "bank"
SENSITIVE = {"adult": {"binary": "sex", "multi": "relationship", "class": "income"}, BANK: {"binary": "Online", "multi": "Family", "class": "Personal Loan"}}
DATASETS = (*ADULT_SIZES, BANK)
TREES = (10, 100)
DEPTHS = ("5", "8", "10", "none")
QUICK = {"datasets": ["adult3k", BANK], "trees": [100], "depths": ["8"], "bootstrap": ["on", "off"], "sensitive": ["binary", "multi", "class"]}


def table(name: str) -> tuple[pd.DataFrame, list[str], str]:
    """The table, its inputs and its class."""
    if name == BANK:
        path = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"
        df = pd.read_csv(path, encoding="utf-8-sig").drop(columns=["ID", "ZIP Code"])
        df["Personal Loan"] = df["Personal Loan"].map({0: "no", 1: "yes"}).astype("category")
        inputs = [c for c in df.columns if c != "Personal Loan"]
        return df, inputs, "Personal Loan"
    from ppdm.data.datasets import load_adult

    frame, _ = load_adult("train")
    frame = frame[[*ADULT, "income"]]
    n = ADULT_SIZES[name]
    df = frame if n >= len(frame) else frame.sample(n, random_state=0)
    return df.reset_index(drop=True), list(ADULT), "income"


def worker(cell: dict, out: str) -> None:
    """Fit one forest and audit it; write the row as JSON."""
    from sklearn.ensemble import RandomForestClassifier

    import ppdm

    df, inputs, klass = table(cell["dataset"])
    sensitive = SENSITIVE["adult" if cell["dataset"] != BANK else BANK][cell["sensitive"]]
    depth = None if cell["depth"] == "none" else int(cell["depth"])
    est = RandomForestClassifier(cell["trees"], max_depth=depth, bootstrap=cell["bootstrap"] == "on", random_state=0, n_jobs=1)
    est.fit(pd.get_dummies(df[inputs]).astype(float), df[klass])
    model = ppdm.from_estimator(est, df[inputs], df[klass])
    known = [c for c in [*inputs, klass] if c != sensitive]
    start = time.perf_counter()
    audit = ppdm.audit(model, df, ppdm.ThreatModel(sensitive=sensitive, known=known, sa_published=sensitive != klass), time_limit=cell["time_limit"])
    seconds = time.perf_counter() - start
    d, s = audit.estimate.details, audit.estimate.summary()
    row = {
        "seconds": seconds, "solve": d["solver_seconds"], "status": d["status"], "violation": d["max_violation"], "steps": d["newton_steps"],
        "types": d.get("types"), "accuracy": s["attacker_accuracy"], "baseline": s["baseline"]["accuracy"], "peak_gb": peak_gb(),
        "face": d.get("face", ""),
    }
    Path(out).write_text(json.dumps(row))


def run_cell(cell: dict, wall: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "row.json")
        start = time.perf_counter()
        try:
            subprocess.run([sys.executable, __file__, "--worker", json.dumps(cell), out], timeout=wall, check=False)
        except subprocess.TimeoutExpired:
            return {"seconds": time.perf_counter() - start, "status": f"killed at {wall:g} s"}
        if not os.path.exists(out):
            return {"seconds": time.perf_counter() - start, "status": "crashed"}
        return json.loads(Path(out).read_text())


def _line(cell: dict, row: dict) -> str:
    def num(key: str, fmt: str) -> str:
        v = row.get(key)
        return format(v, fmt) if isinstance(v, (int, float)) and v is not None else "-"

    return (
        f"{cell['dataset']:<9} {cell['trees']:>5} {cell['depth']:>5} {cell['bootstrap']:>4} {cell['sensitive']:>7} "
        f"{num('seconds', '9.1f')} {num('solve', '8.1f')} {row['status']:>12} {num('violation', '8.1e')} {num('steps', '5d')} "
        f"{num('peak_gb', '7.2f')} {num('accuracy', '6.3f')} {num('baseline', '6.3f')}"
    )


def summary(rows: list[tuple[dict, dict]]) -> list[str]:
    """Per table: median, 90th percentile and worst audit time, the largest memory, the statuses."""
    out = [f"{'table':<9} {'cells':>5} {'median s':>9} {'p90 s':>8} {'worst s':>8} {'peak GB':>7}  statuses"]
    for name in dict.fromkeys(c["dataset"] for c, _ in rows):
        mine = [r for c, r in rows if c["dataset"] == name]
        t = np.array([r["seconds"] for r in mine])
        mem = [r["peak_gb"] for r in mine if r.get("peak_gb") is not None]
        counts: dict[str, int] = {}
        for r in mine:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        statuses = ", ".join(f"{k} {v}" for k, v in counts.items())
        out.append(
            f"{name:<9} {len(mine):>5} {np.median(t):>9.1f} {np.percentile(t, 90):>8.1f} {t.max():>8.1f} {max(mem, default=float('nan')):>7.2f}  {statuses}"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a subset: " + json.dumps(QUICK))
    parser.add_argument("--datasets", nargs="+", choices=DATASETS)
    parser.add_argument("--trees", nargs="+", type=int)
    parser.add_argument("--depths", nargs="+", choices=DEPTHS)
    parser.add_argument("--bootstrap", nargs="+", choices=("on", "off"))
    parser.add_argument("--sensitive", nargs="+", choices=("binary", "multi", "class"))
    parser.add_argument("--time-limit", type=float, default=300.0, help="ppdm.audit's time_limit per cell (s)")
    parser.add_argument("--shape", action="store_true", help="only the slow configuration's shape, against --budget")
    parser.add_argument("--budget", type=float, default=30.0, help="seconds the --shape case may take")
    parser.add_argument("--json", type=Path, help="write every cell's row here")
    args = parser.parse_args()
    import scipy
    import sklearn

    print(f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, {platform.machine()}")
    if args.shape:
        grid = {"datasets": [BANK], "trees": [100], "depths": ["8"], "bootstrap": ["on"], "sensitive": ["multi"]}
    else:
        base = QUICK if args.quick else {"datasets": list(DATASETS), "trees": list(TREES), "depths": list(DEPTHS), "bootstrap": ["on", "off"], "sensitive": ["binary", "multi", "class"]}
        grid = {k: getattr(args, k) or v for k, v in base.items()}
    print(f"load average at start: {' '.join(f'{v:.1f}' for v in os.getloadavg())}; time limit {args.time_limit:g} s per audit")
    print(f"{'table':<9} {'trees':>5} {'depth':>5} {'boot':>4} {'secret':>7} {'audit s':>9} {'solve s':>8} {'status':>12} {'viol':>8} {'steps':>5} {'peak GB':>7} {'acc':>6} {'base':>6}")
    rows = []
    for dataset, trees, depth, boot, sens in itertools.product(grid["datasets"], grid["trees"], grid["depths"], grid["bootstrap"], grid["sensitive"]):
        cell = {"dataset": dataset, "trees": trees, "depth": depth, "bootstrap": boot, "sensitive": sens, "time_limit": args.time_limit}
        row = run_cell(cell, args.time_limit + 300.0)
        rows.append((cell, row))
        print(_line(cell, row) + f"   load {os.getloadavg()[0]:.1f}", flush=True)
    print()
    for line in summary(rows):
        print(line)
    print(f"load average at end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    if args.json is not None:
        args.json.write_text(json.dumps([{**c, **r} for c, r in rows], indent=1))
    if args.shape:
        seconds = rows[0][1]["seconds"]
        met = seconds <= args.budget and rows[0][1]["status"] == "optimal"
        print(f"budget: the slow shape (Bank Loan, 100 bootstrap trees of depth 8, Family sensitive) {seconds:.1f} s, "
              f"{rows[0][1]['status']}, budget {args.budget:g} s: {'met' if met else 'NOT met'}")
        sys.exit(0 if met else 1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        worker(json.loads(sys.argv[2]), sys.argv[3])
    else:
        main()
