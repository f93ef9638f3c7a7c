"""Start-up time of the ``ppdm`` command, and the time to write an audit result as JSON.

Run: ``PYTHONPATH=src python benchmarks/bench_cli.py [--repeats 10] [--audit-repeats 3]
[--command "python -m ppdm"] [--json out.json]``

* ``ppdm --help`` and ``ppdm show tree.json``: wall time of a fresh subprocess, median of
  ``--repeats``; the tree is a C4.5 tree trained on bundled Adult by ``ppdm train`` (once, before
  timing). ``python -c pass`` is the interpreter's own start, for reference.
* The README's example, ``ppdm audit --dataset adult --sensitive education --algorithm id3
  --criterion gini --publish error-rates`` (30,162 records in 4,480 QI groups), with and without
  ``--out audit.json`` (median of ``--audit-repeats``): the difference is what writing costs.
* The same result computed once in this process: ``AttackResult.to_dict``, ``json.dumps`` of it,
  and ``AttackResult.save`` (both, plus the file write), median of ``--repeats``.

``--command`` runs another ``ppdm`` (e.g. an installed console script) to compare versions.

Target (issue 11): ``ppdm --help`` ≤ 0.3 s; writing the 4,480-group result well under a second.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AUDIT = ["audit", "--dataset", "adult", "--sensitive", "education", "--algorithm", "id3", "--criterion", "gini", "--publish", "error-rates", "--quiet"]


def wall(*commands: list[str], repeats: int) -> list[list[float]]:
    """Wall times of running each command in a fresh process (output discarded); the commands
    take turns, so that a change in the machine's load hits them alike."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(repeats):
        for command, spent in zip(commands, times):
            started = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            spent.append(time.perf_counter() - started)
    return times


def median_time(func, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        func()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def readme_audit():
    """The README example's result, computed with the library (what ``ppdm audit`` does)."""
    import warnings

    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.models.maxent import maxent_attack
    from ppdm.data.datasets import load_dataset
    from ppdm.learn import ID3Classifier
    from ppdm.maxent.constraints.tree_constraints import Knowledge

    frame, roles = load_dataset("adult", sensitive="education", class_attribute="education")
    features = [c for c in roles.features(frame) if frame[c].dtype == "category"]
    model = ID3Classifier(criterion="gini").fit(frame[features], frame["education"])
    model.tree_.class_attribute = "education"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return maxent_attack(
            model.tree_.published("error-rates"), frame, ThreatModel(sensitive="education", known=tuple(features)),
            knowledge=Knowledge(rate=True, label=True),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--audit-repeats", type=int, default=3)
    parser.add_argument("--command", default=f"{sys.executable} -m ppdm", help="how to run ppdm")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ppdm = shlex.split(args.command)
    rows: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        tree, out = Path(folder) / "tree.json", Path(folder) / "audit.json"
        subprocess.run([*ppdm, "train", "--dataset", "adult", "--out", str(tree), "--quiet"], check=True)
        starts = wall([sys.executable, "-c", "pass"], [*ppdm, "--help"], [*ppdm, "show", str(tree)], repeats=args.repeats)
        rows.update(zip(["python -c pass", "ppdm --help", "ppdm show tree.json"], map(statistics.median, starts)))
        audits = wall([*ppdm, *AUDIT], [*ppdm, *AUDIT, "--out", str(out)], repeats=args.audit_repeats)
        rows.update(zip(["ppdm audit (README example)", "ppdm audit ... --out audit.json"], map(statistics.median, audits)))
        result = readme_audit()
        rows["AttackResult.to_dict"] = median_time(result.to_dict, args.repeats)
        data = result.to_dict()
        rows["json.dumps(to_dict(), indent=1)"] = median_time(lambda: json.dumps(data, indent=1, default=str), args.repeats)
        rows["AttackResult.save (to_dict + dumps + write)"] = median_time(lambda: result.save(out), args.repeats)
        size_mb = out.stat().st_size / 1e6
    import ppdm as package

    print(f"python {platform.python_version()}, {platform.machine()}; ppdm from {Path(package.__file__).parent}; command: {args.command}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (the machine is shared: compare within one run)")
    print(f"README audit result: {result.groups.n_records:,} records in {result.groups.n_groups:,} QI groups; JSON {size_mb:.1f} MB")
    print(f"{'what':<46} {'median s':>9}")
    for name, seconds in rows.items():
        print(f"{name:<46} {seconds:>9.3f}")
    write_cost = rows["ppdm audit ... --out audit.json"] - rows["ppdm audit (README example)"]
    print(f"--out costs {write_cost:+.2f} s in the CLI (difference of medians; each run, without / with --out:")
    print("  " + ", ".join(f"{a:.1f}/{b:.1f}" for a, b in zip(*audits)) + ")")
    help_ok = "met" if rows["ppdm --help"] <= 0.3 else "missed"
    save_ok = "met" if rows["AttackResult.save (to_dict + dumps + write)"] < 1 else "missed"
    print(f"targets: ppdm --help <= 0.3 s: {help_ok}; writing the result < 1 s: {save_ok}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
