#!/usr/bin/env python
"""The defense search for a published scikit-learn random forest on Adult, paper 000's setting
(issue 15's acceptance run for forests).

Setting as ``experiments/defend.py``: Adult ``adult.data`` without missing values (30,162
records), Education the class and the sensitive attribute, the 8 categorical attributes other than
education known to the attacker. The model to defend is a scikit-learn
``RandomForestClassifier(n_estimators=10, random_state=0)`` (otherwise scikit-learn's defaults:
bootstrap, full depth, ``max_features="sqrt"``) fitted on the one-hot columns of the 8 attributes
and published as scikit-learn stores it: per-node class counts of every tree, whose bootstrap
multiplicities anyone holding the forest can redraw. Accuracy is measured on ``adult.test``
(15,060 records).

Target: nobody certain, at most 1 % of the people at confidence ≥ 0.9 in their true education.
The search (:func:`ppdm.defend.defend`) runs the forest families (fewer trees, depth and
minimum-leaf limits, bootstrap switched, publishing less, the ε-DP forest) with their full grids
under a 5-minute budget; the chosen forest is then written as a ``ppdm-forest`` file, read back
and audited again on its own (maximum entropy and the forest homogeneity attack).

Run from the repository root::

    PYTHONPATH=src python experiments/defend_forest.py            # < 5 min on 2 cores
    PYTHONPATH=src python experiments/defend_forest.py --trees 20

Writes ``forest_results.json``, ``forest_results.md``, ``forest_frontier.json`` and
``forest_frontier.png`` into ``--out`` (default ``docs/defend``). See ``docs/defend.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
try:  # run with ppdm installed or PYTHONPATH=src; else fall back to the checkout's src/
    import ppdm  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(REPO / "src"))

from ppdm import AuditOptions, audit  # noqa: E402
from ppdm.attacks.core.threat import ThreatModel  # noqa: E402
from ppdm.defend import DefenseResult, defend  # noqa: E402
from ppdm.defend.candidates import Grids, encode_for_sklearn  # noqa: E402
from ppdm.pipeline.options import LeafOptions  # noqa: E402
from ppdm.tree import Disclosure, load_forest, save_forest  # noqa: E402

DEFAULT_OUT = REPO / "docs" / "defend"
TARGET = "certain=0,confident=0.01@0.9"
BUDGET = 300.0


def tree_run() -> ModuleType:
    """``experiments/defend.py`` (the single-tree run): its data, table and plot are shared."""
    spec = importlib.util.spec_from_file_location("defend_tree_experiment", Path(__file__).with_name("defend.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fit_forest(train: pd.DataFrame, qi: list[str], trees: int) -> Any:
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=trees, random_state=0, n_jobs=1).fit(encode_for_sklearn(train[qi]), train["education"])


def reaudit(result: DefenseResult, train: pd.DataFrame, threat: ThreatModel) -> dict[str, Any]:
    """The chosen forest written as a ppdm-forest file, read back and audited again on its own."""
    if result.chosen is None:
        return {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "chosen.json"
        save_forest(result.chosen, path)
        forest = load_forest(path)
    estimate = audit(forest, train, threat, options=AuditOptions(baselines=False), progress=False).estimate  # the estimate alone
    results = [estimate]
    if any(t.disclosure is not Disclosure.LABELS for t in forest.trees):
        leaf = ThreatModel(sensitive="education", known=threat.known or ())
        results.append(audit(forest, train, leaf, options=AuditOptions(leaf=LeafOptions("homogeneity")), progress=False).estimate)
    certain = np.logical_or.reduce([r.exposed_right() for r in results])
    confidence = np.maximum.reduce([r.confidence_in_truth() for r in results])
    return {
        "audits": [r.attack for r in results],
        "certain": int(certain.sum()),
        "confident_share_0.9": float((confidence >= 0.9 - 1e-9).mean()),
        "meets_target": bool(certain.sum() == 0 and (confidence >= 0.9 - 1e-9).mean() <= 0.01),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=10, help="trees of the forest to defend")
    parser.add_argument("--quick", action="store_true", help="small grids")
    parser.add_argument("--time-budget", type=float, default=BUDGET)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    shared = tree_run()

    load_before = os.getloadavg()
    start = time.monotonic()
    train, test, qi = shared.load()
    rf = fit_forest(train, qi, args.trees)
    threat = ThreatModel(known=tuple(qi))
    result = defend(
        rf, train, threat, TARGET, class_attribute="education", test=test,
        grids=Grids.small() if args.quick else Grids.full(), risk="confident", time_budget=args.time_budget,
    )  # fmt: skip
    wall = time.monotonic() - start
    load_after = os.getloadavg()
    out = {
        "settings": {
            "setting": "paper 000 §5: Adult train without missing values, education class and sensitive, 8 categorical QIs known",
            "model": f"scikit-learn RandomForestClassifier(n_estimators={args.trees}, random_state=0), one-hot inputs, class counts published",
            "target": TARGET,
            "time_budget": args.time_budget,
            "quick": args.quick,
            "train_rows": len(train),
            "test_rows": len(test),
            "git": shared._git(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "machine": {"loadavg_before": load_before, "loadavg_after": load_after},
        "wall_seconds": wall,
        "search_seconds": result.seconds,
        "chosen": result.chosen_label,
        "unfinished": result.unfinished,
        "reaudit": reaudit(result, train, result.threat),
        "frontier": result.frontier_records(),
    }
    (args.out / "forest_results.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    result.save_frontier(args.out / "forest_frontier.json")
    text = shared.markdown(out).replace("# Defense search on Adult", "# Defense search for a random forest on Adult", 1)
    (args.out / "forest_results.md").write_text(text, encoding="utf-8")
    shared.plot(out, args.out / "forest_frontier.png")
    print(text)
    return out


if __name__ == "__main__":
    main()
