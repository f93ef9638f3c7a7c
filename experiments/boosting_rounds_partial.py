"""Every boosting round against the first round alone, under partial knowledge, where the joint
table fits (issue 25): the attacker's accuracy.

Run: ``PYTHONPATH=src python experiments/boosting_rounds_partial.py [--cases xgb lgb hgb gb]
[--sensitive income marital-status sex] [--rounds 10] [--exact 120]``

All 30,162 Adult training rows, nine columns (age, workclass, education, marital-status,
occupation, relationship, race, sex, hours-per-week) and ``income``, the class; models of
``--rounds`` rounds on the one-hot columns: XGBoost and HistGradientBoosting of depth 4,
LightGBM of depth 4 (15 leaves), GradientBoosting of depth 3. The attacker knows every column but
the sensitive one and two others (``relationship`` and ``sex`` when the class is sensitive,
``relationship`` and the class otherwise), and the sensitive column's distribution. Per case, the
explicit maximum-entropy estimate (``ppdm.audit``, the estimate alone) of the first round alone
(``ppdm.tree.newton.first_rounds``) and of every round: seconds, the attacker's accuracy (the most
probable value, every record a target), the prior's, and the estimate's note (which rounds it read,
and whether it widened their intervals). ``--exact SECONDS``: also the exact audit
(``ppdm.audit`` with ``exact=True``, that time limit) of both, the people it proves certain (``proved``).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

FEATURES = ["age", "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "hours-per-week"]
UNKNOWN = {"income": ["relationship", "sex"], "marital-status": ["relationship", "income"], "sex": ["relationship", "income"]}


def fit(case: str, X: pd.DataFrame, D: pd.DataFrame, y: pd.Series, rounds: int):  # type: ignore[no-untyped-def]
    from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost

    codes = y.cat.codes.to_numpy()
    if case == "xgb":
        import xgboost

        return forest_from_xgboost(xgboost.XGBClassifier(n_estimators=rounds, max_depth=4, n_jobs=1, random_state=0).fit(D, codes), X, y=y)
    if case == "lgb":
        import lightgbm

        est = lightgbm.LGBMClassifier(n_estimators=rounds, max_depth=4, num_leaves=15, verbose=-1, n_jobs=1, random_state=0).fit(D, codes)
        return forest_from_lightgbm(est, X, list(D.columns), y=y)
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

    est = (
        HistGradientBoostingClassifier(max_iter=rounds, max_depth=4, early_stopping=False, random_state=0)
        if case == "hgb"
        else GradientBoostingClassifier(n_estimators=rounds, max_depth=3, random_state=0)
    )
    return forest_from_sklearn(est.fit(D, y), X, y=y)


def main() -> None:
    import ppdm
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.data.datasets import load_adult
    from ppdm.tree.newton import first_rounds

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=["xgb", "lgb", "hgb", "gb"], choices=["xgb", "lgb", "hgb", "gb"])
    parser.add_argument("--sensitive", nargs="+", default=["income", "marital-status", "sex"], choices=list(UNKNOWN))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--exact", type=float, help="also the exact audit, with this time limit (seconds)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    train, _ = load_adult("train")
    table = train[[*FEATURES, "income"]].reset_index(drop=True)
    X, y = table[FEATURES], table["income"]
    D = pd.get_dummies(X).astype(float)
    print(os.popen("uptime").read().strip())
    print("| model | sensitive | unknown | rounds read | s | accuracy | prior | proved | exact s | note |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case in args.cases:
        forest = fit(case, X, D, y, args.rounds)
        for sensitive in args.sensitive:
            known = [c for c in [*FEATURES, "income"] if c not in UNKNOWN[sensitive] and c != sensitive]
            threat = ThreatModel(sensitive=sensitive, known=tuple(known), sa_published=True)
            for k in (1, args.rounds):
                start = time.perf_counter()
                r = ppdm.audit(first_rounds(forest, k), table, threat, options=ppdm.AuditOptions(baselines=False), progress=False).estimate
                assert r is not None
                truth = r.true_codes
                assert truth is not None
                acc = float((r.predicted() == truth).mean())
                prior = float(np.bincount(truth).max() / len(truth))
                seconds = time.perf_counter() - start
                note = str(r.details.get("note", "")).split("; ")[-1]
                proved, exact_s = "-", "-"
                if args.exact:
                    start = time.perf_counter()
                    how = ppdm.AuditOptions(estimate=False, exact=True, exact_time_limit=args.exact)
                    e = ppdm.audit(first_rounds(forest, k), table, threat, options=how, progress=False).proved
                    assert e is not None
                    proved, exact_s = str(int(e.certain_groups[e.groups.group_of_record].sum())), f"{time.perf_counter() - start:.1f}"
                print(f"| {case}{args.rounds} | {sensitive} | {' + '.join(UNKNOWN[sensitive])} | {r.details['rounds']['used']} | "
                      f"{seconds:.1f} | {acc:.4f} | {prior:.4f} | {proved} | {exact_s} | {note} |", flush=True)
    print(os.popen("uptime").read().strip())


if __name__ == "__main__":
    main()
