"""The sampled forest estimate against the explicit enumeration on small forests (issue 24).

For each setting (dataset, model family, sensitive column: the class or an input), the exact
maximum-entropy posteriors by the explicit enumeration and the sampled estimate's, per record:
the largest |Δ posterior|, how many posteriors are more than 0.01 *and* more than 3 standard
errors off, how many are more than 3 standard errors off, and both times.

    PYTHONPATH=src:tests python experiments/sampled_agreement.py [--settings test|more|all] [--chains 8000 --fit-steps 200]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pandas as pd

import ppdm
from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.explicit import ForestAuditOptions
from ppdm.data.datasets import load_adult, load_nursery
from ppdm.errors import PpdmError
from ppdm.maxent.constraints import boosting_rows
from ppdm.maxent.solvers.sampled import SampledOptions

from families import ADULT_QIS, FAMILIES, small_table

TEST = [
    ("nursery", "gradient-boosting", "class"),
    ("nursery", "gradient-boosting", "input"),
    ("nursery", "random-forest", "class"),
    ("nursery", "random-forest-no-bootstrap", "input"),
    ("adult", "random-forest", "class", 5),
]
MORE = [
    ("nursery", "extra-trees", "class"),
    ("nursery", "hist-gradient-boosting", "input"),
    ("nursery", "xgboost", "class"),
    ("adult", "random-forest-no-bootstrap", "input", 5),
    ("adult", "extra-trees-bootstrap", "class", 5),
    ("adult", "lightgbm", "input", 5),
    ("adult", "gradient-boosting", "class", 5),
]


@contextmanager
def same_rounds() -> Iterator[None]:
    """The explicit estimate reads what the sampled one reads: a boosted model's later rounds give
    no leaf-value rows (their Newton steps need the joint table, which sampling never builds)."""
    saved = boosting_rows.newton_step
    boosting_rows.newton_step = lambda forest: "read by the joint table only"  # type: ignore[assignment]
    try:
        yield
    finally:
        boosting_rows.newton_step = saved


def tables() -> dict[str, tuple]:
    adult, roles = load_adult("train")
    nursery, nroles = load_nursery()
    return {
        "adult": small_table(adult, ["age", *ADULT_QIS], roles.class_attribute, 600),
        "nursery": small_table(nursery, [c for c in nursery.columns if c != nroles.class_attribute], nroles.class_attribute, 300),
    }


def estimate(forest, table: pd.DataFrame, threat: ThreatModel, how: ppdm.AuditOptions) -> AttackResult:  # type: ignore[no-untyped-def]
    """The forest's estimate by the method ``how`` names, through ``ppdm.audit`` (the estimate alone)."""
    result = ppdm.audit(forest, table, threat, options=how, progress=False).estimate
    assert result is not None
    return result


def measure(data, family: str, target: str, options: SampledOptions, n_known: int = 3) -> dict[str, float]:
    table, X, D, y = data
    forest = FAMILIES[family](X, D, y)
    sensitive = y.name if target == "class" else X.columns[4]
    threat = ThreatModel(sensitive=sensitive, known=tuple(c for c in X.columns[:n_known] if c != sensitive))
    t0 = time.perf_counter()
    with same_rounds():
        exact = estimate(forest, table, threat, ppdm.AuditOptions(method="explicit", baselines=False))
    t1 = time.perf_counter()
    sampled = estimate(forest, table, threat, ppdm.AuditOptions(method="sampled", forest=ForestAuditOptions(sampled=options), baselines=False))
    t2 = time.perf_counter()
    assert exact.details["status"] == "optimal", exact.details["status"]
    gap = np.abs(exact.record_posterior() - sampled.record_posterior())
    se = sampled.std_error[sampled.groups.group_of_record]
    z = gap / np.maximum(se, 1e-12)
    loose = se >= 1e-3
    return {
        "rms_z": float(np.sqrt((z[loose] ** 2).mean())) if loose.any() else 0.0,
        "share_3": float((z[loose] > 3).mean()) if loose.any() else 0.0,
        "off_5": int(((gap > 0.01) & (z > 5)).sum()),
        "max_gap": float(gap.max()),
        "max_z": float((gap / np.maximum(se, 1e-12)).max()),
        "off": int(((gap > 0.01) & (gap > 3 * se)).sum()),
        "beyond_3se": int((gap > 3 * se).sum()),
        "n": int(gap.size),
        "max_se": float(se.max()),
        "exact_s": t1 - t0,
        "sampled_s": t2 - t1,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--settings", choices=["test", "more", "all"], default="all")
    parser.add_argument("--chains", type=int, default=8000)
    parser.add_argument("--fit-steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample-sweeps", type=int, default=100)
    parser.add_argument("--before", action="store_true", help="the stochastic fit alone (no refinement, Monte-Carlo errors only)")
    args = parser.parse_args()
    settings = {"test": TEST, "more": MORE, "all": TEST + MORE}[args.settings]
    data = tables()
    options = SampledOptions(chains=args.chains, fit_steps=args.fit_steps, random_state=args.seed, sample_sweeps=args.sample_sweeps)
    if args.before:
        options = replace(options, refine_rounds=0, jackknife_blocks=0)
    print(f"load {os.getloadavg()[0]:.2f}")
    print("| dataset | family | sensitive | max abs Δ | > 0.01 and > 3 SE | > 0.01 and > 5 SE | posteriors | RMS Δ/SE | share > 3 SE | max SE | exact s | sampled s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for dataset, family, target, *n_known in settings:
        try:
            m = measure(data[dataset], family, target, options, *n_known)
        except PpdmError as e:
            print(f"| {dataset} | {family} | {target} | {str(e)[:100]} |", flush=True)
            continue
        print(
            f"| {dataset} | {family} | {target}, {n_known[0] if n_known else 3} known | {m['max_gap']:.4f} | {m['off']} | {m['off_5']} | {m['n']} | "
            f"{m['rms_z']:.2f} | {100 * m['share_3']:.1f} % | {m['max_se']:.4f} | {m['exact_s']:.1f} | {m['sampled_s']:.1f} |",
            flush=True,
        )
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
