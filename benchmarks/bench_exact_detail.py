"""The exact audit's two details on one scikit-learn tree with a sensitive input, on all of Adult.

Run: ``PYTHONPATH=src python benchmarks/bench_exact_detail.py [--rows 0] [--depth 8] [--sensitive relationship] [--time-limit 300]``

Setting: Adult's 30,162 training rows (``--rows N``: the first N), a ``DecisionTreeClassifier``
of depth 8 on every column (categorical ones one-hot encoded in a pipeline), ``income`` the class;
the ``census`` attacker with the class known wants ``relationship`` (an input of the tree).
``exact_attack`` runs with ``detail="certainty"`` (the default of ``ppdm.audit``: it stops once
who is certain is settled) and ``detail="bounds"`` (every minimum and maximum settled), each
within ``--time-limit`` seconds. Columns: seconds, people proved certain, people undecided. The
load average is printed beside them: timings on this shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import time

import pandas as pd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=0)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--sensitive", default="relationship")
    parser.add_argument("--time-limit", type=float, default=300.0)
    args = parser.parse_args()
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    import ppdm
    from ppdm.attacks.models.exact import exact_attack
    from ppdm.data.datasets import load_adult

    data = load_adult()[0]
    data = data.iloc[: args.rows].reset_index(drop=True) if args.rows else data
    X = data.drop(columns=["income"])
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    encode = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), categorical), remainder="passthrough")
    pipe = make_pipeline(encode, DecisionTreeClassifier(max_depth=args.depth, random_state=0)).fit(X, data["income"])
    tree = ppdm.from_estimator(pipe, X, data["income"])
    threat = ppdm.ThreatModel(sensitive=args.sensitive, preset="census", class_known=True)
    print(os.popen("uptime").read().strip())
    print(f"{len(data):,} rows, depth {args.depth}, sensitive {args.sensitive!r}, time limit {args.time_limit:g} s")
    print(f"{'detail':10} {'seconds':>8} {'certain':>8} {'undecided':>9}")
    for detail in ("certainty", "bounds"):
        start = time.perf_counter()
        result = exact_attack(tree, data, threat, time_limit=args.time_limit, detail=detail)
        seconds = time.perf_counter() - start
        exact = result.details["exact"]
        print(f"{detail:10} {seconds:8.1f} {exact['certain_records']:8,} {exact['undecided_records']:9,}", flush=True)
    print(os.popen("uptime").read().strip())


if __name__ == "__main__":
    main()
