"""One model path, measured: a tree audited as a forest of one against the tree's own road, and
the audits of a tree and a forest before and after the single-path refactoring, in one run.

Run: ``python benchmarks/bench_one_road.py [--repeats 5] [--before /path/to/an/older/checkout/src] [--after src]``

Cases (UCI Adult, all 30,162 training rows, ``maxent_attack`` end to end, fit and import excluded):

* ``tree``: paper 000's setting: an ID3 (Gini) tree of depth 8 predicting ``education`` from the
  eight categorical quasi-identifiers, error rates and the SA distribution published;
* ``tree as forest``: the same tree wrapped as ``Forest([tree], "vote")``, audited by the forest
  road (one problem over the forest's types, ``solve_forest``): what auditing every tree as a
  forest of one would cost instead of paper 000's fast path;
* ``rf10``: ``bench_ensembles.py``'s case (10 bootstrap trees of full depth, ``income`` sensitive).

Each case runs in a fresh subprocess per source tree (``--before``: another checkout's ``src``,
e.g. ``git worktree add --detach ../base <commit>``), the two trees alternating, ``--repeats``
times; the table gives the median seconds and the ratio after / before, with the largest
difference of the posteriors between the two (the same answer).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = ("tree", "tree as forest", "rf10")

WORKER = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
case = sys.argv[1]
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.attacks.core.threat import ThreatModel
from ppdm.data.datasets import load_adult
from ppdm.tree import Forest
train, roles = load_adult("train")
qis = [c for c in roles.quasi_identifiers if c != "education" and str(train[c].dtype) == "category"]
if case in ("tree", "tree as forest"):
    from ppdm.learn import ID3Classifier
    tree = ID3Classifier(criterion="gini", max_depth=8).fit(train[qis], train["education"]).tree_
    tree.class_attribute = "education"
    model = tree.published("error-rates")
    if case == "tree as forest":
        model = Forest([model], "vote")
    data = train[[*qis, "education"]]
    threat = ThreatModel(sensitive="education", known=tuple(qis), sa_published=True)
else:
    from sklearn.ensemble import RandomForestClassifier
    from ppdm.tree import forest_from_sklearn
    import pandas as pd
    known = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]
    data = train[[*known, "income"]].reset_index(drop=True)
    X = pd.get_dummies(data[known])
    rf = RandomForestClassifier(10, random_state=0).fit(X, data["income"])
    model = forest_from_sklearn(rf, data, list(X.columns), y=data["income"])
    threat = ThreatModel(sensitive="income", known=tuple(known))
start = time.perf_counter()
result = maxent_attack(model, data, threat=threat)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "status": result.details["status"], "posterior": result.record_posterior().round(12).tolist()[:5000]}))
"""


def run(src: str, case: str) -> dict:
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run([sys.executable, "-c", WORKER, case], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", help="an older checkout's src folder to compare with (default: none)")
    parser.add_argument("--after", help="the src folder measured as 'now' (default: this checkout's)")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    args = parser.parse_args()
    now = args.after or str(HERE.parent / "src")
    trees = {"now": now} | ({"before": args.before} if args.before else {})
    times: dict[tuple[str, str], list[float]] = {}
    answers: dict[tuple[str, str], list] = {}
    status: dict[tuple[str, str], str] = {}
    for _ in range(args.repeats):
        for case in args.cases:
            for name, src in trees.items():
                out = run(src, case)
                times.setdefault((case, name), []).append(out["seconds"])
                answers[(case, name)] = out["posterior"]
                status[(case, name)] = out["status"]
    print(f"{'case':<16}{'now s':>9}{'before s':>10}{'now/before':>12}{'max |Δpost|':>13}  status")
    for case in args.cases:
        now_s = statistics.median(times[(case, "now")])
        line = f"{case:<16}{now_s:>9.3f}"
        if args.before:
            before_s = statistics.median(times[(case, "before")])
            import numpy as np

            diff = float(np.abs(np.array(answers[(case, "now")]) - np.array(answers[(case, "before")])).max())
            line += f"{before_s:>10.3f}{now_s / before_s:>12.2f}{diff:>13.1e}"
        else:
            line += f"{'–':>10}{'–':>12}{'–':>13}"
        print(line + f"  {status[(case, 'now')]}")
    if "tree" in args.cases and "tree as forest" in args.cases:
        ratio = statistics.median(times[("tree as forest", "now")]) / statistics.median(times[("tree", "now")])
        diff = max(abs(a - b) for ra, rb in zip(answers[("tree", "now")], answers[("tree as forest", "now")]) for a, b in zip(ra, rb))
        print(f"tree as a forest of one / the tree's own road: {ratio:.2f}× the time, posteriors within {diff:.1e}")


if __name__ == "__main__":
    main()
