"""Constraint generation and maximum-entropy solve for published association rules (paper 004 §VI-D).

Run: ``PYTHONPATH=src python benchmarks/bench_rules.py [--support 0.1] [--confidences 0.6 0.7 0.8 0.9]
[--unpruned 0.6 0.7 0.8 0.9] [--repeats 3] [--json out.json]``

The instance is the paper's: UCI Adult training rows without missing values (30,162), the 8
categorical quasi-identifiers of its Figure 4 (7,722 QI groups × 2 values = 15,444 variables),
``income`` (Salary) sensitive. For each confidence c at support s, rules are mined with
:func:`ppdm.rules.mine_rules`, and the attacker's problem is built by
:func:`ppdm.maxent.constraints.rule_constraints.rules_problem` and solved by :func:`ppdm.maxent.solve_linear`:

* ``pruned``: AR + NAR constraints, Theorem 3 pruning (Figure 3's level-wise generation);
* ``unpruned``: AR + every NAR constraint (the paper's solvers ran out of memory on it);
* ``AR only``: no NAR constraints (Figure 8's second curve);

each with exact supports published (AR rows are equalities) and, for ``pruned``, with thresholds
only (``thr``: AR rows are inequalities). Every run is a fresh subprocess, one after the other:
``gen s`` is constraint generation, ``solve s`` the solver (median of ``--repeats``), ``peak MB``
the subprocess's peak resident set size (VmHWM: everything, including the loaded table), ``+MB``
the peak during generation and solve minus the resident size just before them. ``vars`` is the
paper's "number of variables in all constraints" (non-zeros, counted once per row they occur in).

Target (issue): ≤ 10 s per setting on 2 cores, and the unpruned problem solvable too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

QIS = ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country", "education"]


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def worker(support: float, confidence: float, mode: str, publish: str, repeats: int) -> dict:
    """One setting, in this (fresh) process."""
    from ppdm.data.datasets import load_adult
    from ppdm.data.qigroups import QIGroups
    from ppdm.maxent import solve_linear
    from ppdm.maxent.constraints.rule_constraints import RuleKnowledge, rules_problem
    from ppdm.metrics.divergence import overall_divergence
    from ppdm.rules import mine_rules

    frame, _ = load_adult()
    t = time.perf_counter()
    rules = mine_rules(frame, QIS, "income", support, confidence).published(publish)  # type: ignore[arg-type]
    mine_s = time.perf_counter() - t
    groups = QIGroups.from_frame(frame, QIS)
    knowledge = RuleKnowledge(nar=mode != "AR only", prune=mode != "unpruned")
    before = _status_mb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    t = time.perf_counter()
    problem, stats = rules_problem(rules, groups, knowledge)
    gen_s = time.perf_counter() - t
    times, solution = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        solution = solve_linear(problem)
        times.append(time.perf_counter() - t)
    assert solution is not None
    true = groups.value_counts(frame["income"].cat.codes.to_numpy(), 2) / groups.counts[:, None]
    return {
        "support": support, "confidence": confidence, "mode": mode, "publish": publish, "rules": len(rules),
        "ar_rows": stats.ar_rows, "nar_patterns": stats.nar_patterns, "nar_rows": stats.nar_generated,
        "variables_in_constraints": stats.ar_variables + stats.nar_variables, "nar_variables": stats.nar_variables,
        "mine_s": mine_s, "gen_s": gen_s, "solve_s": statistics.median(times), "status": solution.status,
        "max_violation": solution.max_violation, "overall_divergence": overall_divergence(true, solution.p, groups.weights),
        "peak_mb": _status_mb("VmHWM"), "added_mb": _status_mb("VmHWM") - before,
    }


def run(support: float, confidence: float, mode: str, publish: str, repeats: int) -> dict:
    """Run :func:`worker` in a fresh interpreter and return its result."""
    code = (
        "import json, sys; sys.path.insert(0, 'benchmarks'); import bench_rules as b; "
        f"print(json.dumps(b.worker({support}, {confidence}, {mode!r}, {publish!r}, {repeats})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if out.returncode:
        return {"support": support, "confidence": confidence, "mode": mode, "publish": publish, "error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--support", type=float, default=0.1)
    parser.add_argument("--confidences", type=float, nargs="+", default=[0.6, 0.7, 0.8, 0.9])
    parser.add_argument("--unpruned", type=float, nargs="*", default=[0.6, 0.7, 0.8, 0.9])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    settings = [(c, "pruned", "exact") for c in args.confidences]
    settings += [(c, "pruned", "thresholds") for c in args.confidences]
    settings += [(c, "AR only", "exact") for c in args.confidences]
    settings += [(c, "unpruned", "exact") for c in args.unpruned]
    head = f"{'c':>4} {'mode':<9} {'pub':<5} {'rules':>5} {'AR':>4} {'NAR':>8} {'NAR pat':>8} {'vars':>9} {'mine s':>7} {'gen s':>6} {'solve s':>7} {'total s':>7} {'peak MB':>8} {'+MB':>6} {'D_overall':>9} status"
    print(f"Adult, s = {args.support}; {args.repeats} solve(s) per setting (median)")
    print(head)
    results = []
    for c, mode, publish in settings:
        r = run(args.support, c, mode, publish, args.repeats)
        results.append(r)
        if "error" in r:
            print(f"{c:>4} {mode:<9} {publish[:5]:<5} error: {r['error']}")
            continue
        total = r["mine_s"] + r["gen_s"] + r["solve_s"]
        print(
            f"{c:>4} {mode:<9} {publish[:5]:<5} {r['rules']:>5} {r['ar_rows']:>4} {r['nar_rows']:>8,} {r['nar_patterns']:>8,} "
            f"{r['variables_in_constraints']:>9,} {r['mine_s']:>7.2f} {r['gen_s']:>6.2f} {r['solve_s']:>7.2f} {total:>7.2f} "
            f"{r['peak_mb']:>8.0f} {r['added_mb']:>6.0f} {r['overall_divergence']:>9.4f} {r['status']}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
