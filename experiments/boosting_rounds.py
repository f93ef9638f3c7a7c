"""Every boosting round against the first tree alone (issue 25): who the insider is proved certain of.

Run: ``PYTHONPATH=src python experiments/boosting_rounds.py [--cases xgb100 lgb100] [--time-limit 300]``

All 30,162 Adult training rows; the attacker knows every other column (the ``insider`` preset)
and wants ``income`` (the class). XGBoost and LightGBM, 100 rounds of depth 6 (LightGBM
``num_leaves=64``), fitted on the one-hot columns. Per model, audited with every round and with
the first tree alone (``ppdm.tree.newton.first_rounds``, what ppdm read before): the rounds used,
the people the maximum-entropy estimate is certain of, and the people the exact audit proves
certain within ``--time-limit`` seconds (the rest it leaves undecided or proves uncertain), with
the seconds each took. The truth is checked against every row before each solve.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

from bench_boosting_rounds import CLASS, fit, markdown, table


def main() -> None:
    import ppdm
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.tree.newton import first_rounds

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["xgb100", "lgb100"])
    parser.add_argument("--time-limit", type=float, default=300.0)
    args = parser.parse_args()
    df, X, D, codes = table()
    threat = ThreatModel(preset="insider", sensitive=CLASS)
    out = []
    for case in args.cases:
        _, forest = fit(case, X, D, codes, df[CLASS])
        for name, model in (("every round", forest), ("first tree", first_rounds(forest, 1))):
            t = time.perf_counter()
            estimate = ppdm.audit(model, df, threat, options=ppdm.AuditOptions(baselines=False), progress=False).estimate
            assert estimate is not None
            maxent_s = time.perf_counter() - t
            t = time.perf_counter()
            how = ppdm.AuditOptions(estimate=False, exact=True, exact_time_limit=args.time_limit)
            proved = ppdm.audit(model, df, threat, options=how, progress=False).proved
            assert proved is not None
            exact_s = time.perf_counter() - t
            e = proved.details["exact"]
            out.append({
                "model": case, "rounds read": f"{estimate.details['rounds']['used']} of {forest.n_trees}" if name == "every round" else "1 (first tree)",
                "estimate: certain": estimate.summary()["certain_records"], "estimate s": round(maxent_s, 1),
                "exact: proved certain": e["certain_records"], "undecided": e["undecided_records"], "exact s": round(exact_s, 1),
            })  # fmt: skip
            print(out[-1], flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")
    print(markdown(out))


if __name__ == "__main__":
    main()
