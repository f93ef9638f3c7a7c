#!/usr/bin/env python
"""How disclosure grows with the number of trees and their depth (issue 13), next to test accuracy.

Setting: paper 000's attacker (every split attribute known, the class sensitive) against
scikit-learn random forests (bootstrap: each tree's multiplicities redrawn from its seed, as
anyone holding the forest can) on

* Adult: 30,162 training rows, known columns the eight categorical quasi-identifiers with
  ``income`` swapped for ``education``, class ``income`` (test: the 15,060 rows of adult.test);
* Nursery: 70 % of the 12,960 rows (stratified, seed 13), every attribute known, class ``class``.

For each (trees, depth): the test accuracy, the attacker's accuracy on the training records and
the prior's (majority class), the share of people whose class the attacker is certain of (and
right), the overall KL divergence between the truth and the estimate, the audit's seconds; and a
single decision tree of the same depth for comparison at equal accuracy.

Run: ``PYTHONPATH=src python experiments/ensembles.py [--datasets adult nursery]
[--trees 1 5 10 50 100] [--depths 5 10] [--out docs/ensembles_results.md]``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pandas as pd

ADULT_KNOWN = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]


def datasets(names: list[str]) -> dict[str, tuple[pd.DataFrame, pd.DataFrame, list[str], str]]:
    """Per dataset: training and test tables, the known columns, the class."""
    from sklearn.model_selection import train_test_split

    from ppdm.data.datasets import load_adult, load_nursery

    out = {}
    if "adult" in names:
        train, _ = load_adult("train")
        test, _ = load_adult("test")
        out["adult"] = (train.reset_index(drop=True), test.reset_index(drop=True), ADULT_KNOWN, "income")
    if "nursery" in names:
        frame, roles = load_nursery()
        train, test = train_test_split(frame, test_size=0.3, random_state=13, stratify=frame[roles.class_attribute])
        known = [c for c in frame.columns if c != roles.class_attribute]
        out["nursery"] = (train.reset_index(drop=True), test.reset_index(drop=True), known, roles.class_attribute)
    return out


def audit(estimator, train: pd.DataFrame, test: pd.DataFrame, known: list[str], target: str) -> dict:  # type: ignore[no-untyped-def]
    """Fit ``estimator`` on one-hot inputs, import it and run the maximum-entropy audit."""
    import ppdm
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.errors import InfeasibleError
    from ppdm.tree import forest_from_sklearn, tree_from_sklearn

    X, y = train[known], train[target]
    D = pd.get_dummies(X).astype(float)
    D_test = pd.get_dummies(test[known]).reindex(columns=D.columns, fill_value=0).astype(float)
    estimator.fit(D, y)
    accuracy = float((estimator.predict(D_test) == test[target].to_numpy()).mean())
    if hasattr(estimator, "estimators_"):
        model = forest_from_sklearn(estimator, X, y=y)
    else:
        model = tree_from_sklearn(estimator, X, class_attribute=target)
    start = time.perf_counter()
    try:
        threat = ThreatModel(sensitive=target, known=tuple(known))
        result = ppdm.audit(model, train[[*known, target]], threat, options=ppdm.AuditOptions(baselines=False), progress=False).estimate
    except InfeasibleError as exc:  # the row says so instead of losing the whole table
        return {"test accuracy": accuracy, "status": f"failed: {str(exc)[-40:]}", "audit s": time.perf_counter() - start}
    seconds = time.perf_counter() - start
    assert result is not None
    s = result.summary()
    return {
        "test accuracy": accuracy,
        "attacker accuracy": s["attacker_accuracy"],
        "baseline": s["baseline"]["accuracy"],
        "certain": float(result.exposed.mean()),
        "certain and right (records)": s.get("certain_right", float("nan")),
        "overall KL": result.details.get("overall_divergence", float("nan")),
        "status": result.details.get("status"),
        "audit s": seconds,
    }


def markdown(table: pd.DataFrame) -> str:
    """A Markdown table, floats to 4 decimals."""
    cells = [[f"{v:.4f}" if isinstance(v, float) else str(v) for v in row] for row in table.itertuples(index=False)]
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["adult", "nursery"], choices=["adult", "nursery"])
    parser.add_argument("--trees", nargs="+", type=int, default=[1, 5, 10, 50, 100])
    parser.add_argument("--depths", nargs="+", type=int, default=[5, 10])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    rows = []
    for name, (train, test, known, target) in datasets(args.datasets).items():
        for depth in args.depths:
            single = audit(DecisionTreeClassifier(max_depth=depth, random_state=0), train, test, known, target)
            rows.append({"dataset": name, "model": "single tree", "trees": 1, "depth": depth, **single})
            print(rows[-1], flush=True)
            for n in args.trees:
                est = RandomForestClassifier(n, max_depth=depth, random_state=0, n_jobs=1)
                rows.append({"dataset": name, "model": "random forest", "trees": n, "depth": depth, **audit(est, train, test, known, target)})
                print(rows[-1], flush=True)
    text = markdown(pd.DataFrame(rows))
    print(text)
    print(f"load average {os.getloadavg()}")
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
