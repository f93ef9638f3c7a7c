#!/usr/bin/env python
"""Who is proved certain by forests of 1 to 100 trees on Adult, next to the maximum-entropy estimate (issue 14).

Setting (that of ``benchmarks/bench_exact.py``'s ``forest`` case): 1,000 Adult training rows drawn
at random (seed 0) with paper 000's eight categorical quasi-identifiers (workclass, education,
marital-status, occupation, relationship, race, sex, native-country) and ``income``; a
scikit-learn ``RandomForestClassifier(n_estimators=T, random_state=0)`` of unlimited depth
(``max_features="sqrt"`` of the one-hot columns) fitted on them, without bootstrap (each tree
counts every record once) and with it (each record counted with the multiplicity the forest's
seeds redraw), imported with ``forest_from_sklearn``: every tree publishes its class counts.
The attacker knows the class and every other input and wants ``marital-status``; the sensitive
distribution is not published.

Per forest: the people the exact audit proves certain and those it leaves undecided within the
budget (``--time-limit`` seconds, never counted as certain), its seconds end to end, the people
the maximum-entropy estimate is certain of (and of those, any the exact audit does not prove:
must be 0) and the estimate's seconds. The load average is printed with every row.

Run: ``PYTHONPATH=src python experiments/exact_forests.py [--trees 1 5 10 50 100]
[--records 1000] [--time-limit 60] [--bootstrap off on] [--out table.md]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

INPUTS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]
SENSITIVE = "marital-status"
CLASS = "income"


def setting(n_records: int, n_trees: int, bootstrap: bool, seed: int = 0):  # type: ignore[no-untyped-def]
    """The table, the imported forest and the threat model."""
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.data.datasets import load_adult
    from ppdm.tree import forest_from_sklearn

    frame, _ = load_adult("train")
    table = frame[[*INPUTS, CLASS]].sample(n_records, random_state=seed).reset_index(drop=True)
    for c in table.columns:
        table[c] = table[c].cat.remove_unused_categories()
    X = table[INPUTS]
    est = RandomForestClassifier(n_trees, bootstrap=bootstrap, random_state=seed, n_jobs=1)
    forest = forest_from_sklearn(est.fit(pd.get_dummies(X).astype(float), table[CLASS]), X, y=table[CLASS])
    known = (*[c for c in INPUTS if c != SENSITIVE], CLASS)
    return table, forest, ThreatModel(sensitive=SENSITIVE, known=known, sa_published=False).resolve(table, CLASS)


def people(result, groups: np.ndarray) -> int:  # type: ignore[no-untyped-def]
    return int((groups[result.groups.group_of_record] & result.targets).sum())


def run(n_records: int, n_trees: int, bootstrap: bool, time_limit: float) -> dict:
    import ppdm

    table, forest, threat = setting(n_records, n_trees, bootstrap)
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    start = time.perf_counter()
    how = ppdm.AuditOptions(estimate=False, exact=True, exact_time_limit=time_limit)
    proved = ppdm.audit(forest, table, threat, options=how, progress=False).proved
    assert proved is not None
    exact_s = time.perf_counter() - start
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimate = ppdm.audit(forest, table, threat, options=ppdm.AuditOptions(baselines=False), progress=False).estimate
    assert estimate is not None
    est_s = time.perf_counter() - start
    d = proved.details["exact"]
    return {
        "trees": n_trees, "bootstrap": bootstrap, "load": load, "groups": proved.groups.n_groups,
        "proved": people(proved, proved.certain_groups), "undecided": int(d["undecided_records"]), "exact_s": exact_s,
        "estimate": people(estimate, estimate.certain_groups), "estimate_not_proved": people(estimate, estimate.certain_groups & ~proved.certain_groups),
        "estimate_s": est_s, "solves": d.get("solves"),
    }


def table_md(rows: list[dict], n_records: int, time_limit: float) -> str:
    head = (
        f"| trees | bootstrap | groups | proved certain | undecided ({time_limit:g} s budget) | exact s | "
        "estimate certain | estimate certain, not proved | estimate s | load |\n|---|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {r['trees']} | {'on' if r['bootstrap'] else 'off'} | {r['groups']:,} | {r['proved']:,} | {r['undecided']:,} | {r['exact_s']:.1f} | "
        f"{r['estimate']:,} | {r['estimate_not_proved']} | {r['estimate_s']:.1f} | {r['load']} |\n"
        for r in rows
    )
    return f"Adult, {n_records:,} training records; people out of {n_records:,}.\n\n" + head + body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", type=int, nargs="+", default=[1, 5, 10, 50, 100])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--bootstrap", nargs="+", choices=["off", "on"], default=["off", "on"])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    for boot in args.bootstrap:
        for t in args.trees:
            row = run(args.records, t, boot == "on", args.time_limit)
            print(row, flush=True)
            rows.append(row)
    text = table_md(rows, args.records, args.time_limit)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
