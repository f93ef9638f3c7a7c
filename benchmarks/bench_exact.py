"""The exact audit on UCI Adult: who is proved certain, how fast, and against plain CP-SAT / LP.

Run: ``PYTHONPATH=src python benchmarks/bench_exact.py [--cases tree rules forest lgb100] [--rules-time 45]
[--forest-time 60] [--lgb-time 25] [--peer-samples 12]`` (``lgb100`` needs the ``lightgbm`` extra).

Cases (all 30,162 training rows but ``forest``):

* ``tree``: one unlimited ``C45Classifier()`` tree (class ``income``, every column but fnlwgt),
  published with class counts; the attacker knows every other column and the class and wants
  ``marital-status``; the sensitive distribution is not published: the rows form a network and
  the flow path runs (``detail="certainty"``: certain and impossible values exact; ``"bounds"``:
  every min and max too);
* ``tree+sa``: the same with the sensitive distribution published (the integer search runs);
* ``rules``: paper 004's rule set (the 8 categorical QIs, Salary sensitive, s = 0.1, c = 0.6:
  110 AR, 449 NAR after pruning, exact supports), with a time budget (``--rules-time``); the
  search alone is also run with each integer engine of ``--engines`` (default ``cp-sat``, the
  engine before HiGHS branch and bound and the neighbourhood search) on the same rows and budget;
* ``forest`` (issue 14: "a 10-tree forest, no bootstrap, on 1,000 Adult records"): 1,000 training
  rows drawn at random (seed 0) with paper 000's eight categorical quasi-identifiers and
  ``income``; scikit-learn ``RandomForestClassifier(n_estimators=10, bootstrap=False,
  random_state=0)`` (unlimited depth, ``max_features="sqrt"`` of the one-hot columns) fitted on
  them and imported with ``forest_from_sklearn``: every tree publishes its class counts. The
  attacker, as in ``tree``, knows the class and every other input and wants ``marital-status``
  (an input the trees split on: each group may reach one joint leaf per marital status); the
  sensitive distribution is not published. Budget ``--forest-time`` (60 s).
* ``lgb100`` (issue 24: "a 100-round LightGBM insider audit on Adult ≤ 60 s with ≤ 5 % of people
  undecided"): all 30,162 rows without ``fnlwgt``; LightGBM ``LGBMClassifier(n_estimators=100,
  max_depth=6, num_leaves=64)`` on the one-hot columns (as ``bench_boosting_rounds.py``), imported
  with ``forest_from_lightgbm``: every round's leaves are class-count rows for the insider
  (docs/ensembles.md, "Every boosting round"). The attacker is the ``insider`` (every other
  column known) and wants ``income``, the class. ``exact_attack(..., detail="certainty")`` end
  to end (the count problem and its maximum-entropy estimate included; fit and import not), the
  search within ``--lgb-time`` seconds (25). The sensitive input ``marital-status`` is not a
  case: its count problem alone took 202 s to build (the estimate of 185,409 types).

Peers, in the same run on the same count problem: plain CP-SAT (one model, one minimisation per
(group, value) count, no flows, no classes, no backbone) and the plain LP relaxation (HiGHS, one
LP per count, which only bounds the integer answer). Both are timed on ``--peer-samples`` counts
drawn at random and extrapolated to the 2 × groups × values optimisations the question needs
(marked ``≈``); a plain CP-SAT solve is capped at 20 s, which makes its extrapolation a lower
bound. The load average is printed with every number: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import exact_attack, forest_count_problem, tree_count_problem
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.attacks.models.rules import rules_attack
from ppdm.data.datasets import load_adult
from ppdm.exact.problem import CountProblem
from ppdm.learn import C45Classifier
from ppdm.rules import mine_rules

QIS = ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country", "education"]
#: The forest case: paper 000's quasi-identifiers (the trees' inputs), the class and the sensitive input.
FOREST_INPUTS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]
FOREST_SENSITIVE = "marital-status"


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def plain_peers(problem: CountProblem, truth: np.ndarray | None, samples: int, seed: int = 0, lp_cap: float | None = None) -> dict[str, float]:
    """Seconds per optimisation of plain CP-SAT and of the plain LP on sampled counts, and the
    extrapolation to every min and max. ``lp_cap``: HiGHS's time limit per LP (a capped LP makes
    the extrapolation a lower bound, as CP-SAT's 20 s cap does; ``lp_capped`` counts them)."""
    import scipy.sparse as sp
    from ortools.sat.python import cp_model
    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    pairs = np.unique(problem.var_group.astype(np.int64) * problem.n_labels + problem.var_label)
    chosen = rng.choice(pairs, size=min(samples, len(pairs)), replace=False)
    A, b, le, _ = problem.stacked()
    A = sp.csr_matrix(A)
    # plain CP-SAT: the whole model, one minimisation per sampled count
    model = cp_model.CpModel()
    x = [model.new_int_var(0, int(problem.sizes[g]), "") for g in problem.var_group]
    order = np.argsort(problem.var_group, kind="stable")
    first = np.searchsorted(problem.var_group[order], np.arange(problem.n_groups + 1))
    for g in range(problem.n_groups):
        model.add(sum(x[i] for i in order[first[g] : first[g + 1]]) == int(problem.sizes[g]))
    for r in range(A.shape[0]):
        expr = sum(int(a) * x[i] for a, i in zip(A.data[A.indptr[r] : A.indptr[r + 1]], A.indices[A.indptr[r] : A.indptr[r + 1]]))
        model.add(expr <= int(b[r])) if le[r] else model.add(expr == int(b[r]))
    cp_seconds = []
    for key in chosen:
        g, v = divmod(int(key), problem.n_labels)
        m = model.clone()
        m.minimize(sum(x[i] for i in np.flatnonzero((problem.var_group == g) & (problem.var_label == v))))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 2
        solver.parameters.max_time_in_seconds = 20
        _, s = _timed(lambda: solver.solve(m))
        cp_seconds.append(s)
    # plain LP: one relaxation per sampled count
    G = sp.csr_matrix((np.ones(problem.n_vars), (problem.var_group, np.arange(problem.n_vars))), shape=(problem.n_groups, problem.n_vars))
    eq = ~le
    kw = {"A_eq": sp.vstack([G, A[eq]]).tocsr(), "b_eq": np.r_[problem.sizes, b[eq]].astype(float),
              "A_ub": A[le] if le.any() else None, "b_ub": b[le].astype(float) if le.any() else None, "bounds": (0, None), "method": "highs"}
    lp_seconds = []
    capped = 0
    for key in chosen:
        g, v = divmod(int(key), problem.n_labels)
        c = ((problem.var_group == g) & (problem.var_label == v)).astype(float)
        res, s = _timed(lambda: linprog(c, **kw, options={} if lp_cap is None else {"time_limit": lp_cap}))
        capped += int(res.status == 1)
        lp_seconds.append(s)
    n_opt = 2 * len(pairs)
    return {
        "cp_sat_per_solve": float(np.mean(cp_seconds)), "cp_sat_all": float(np.mean(cp_seconds)) * n_opt,
        "lp_per_solve": float(np.mean(lp_seconds)), "lp_all": float(np.mean(lp_seconds)) * n_opt, "optimisations": n_opt, "lp_capped": capped,
    }


def _people(result) -> int:  # type: ignore[no-untyped-def]
    return int((result.certain_groups[result.groups.group_of_record] & result.targets).sum())


def bench_tree(frame, roles, samples: int, quick: bool = False) -> list[dict]:  # type: ignore[no-untyped-def]
    inputs = [c for c in roles.quasi_identifiers if c != "fnlwgt"]
    model, fit = _timed(lambda: C45Classifier().fit(frame[inputs], frame["income"]))
    tree = model.tree_
    tree.class_attribute = "income"
    known = (*[c for c in inputs if c != "marital-status"], "income")
    rows = []
    for case, sa in (("tree", False), ("tree+sa", True))[: 1 if quick else 2]:
        threat = ThreatModel(sensitive="marital-status", known=known, sa_published=sa)
        details = {}
        for detail in (("certainty",) if quick else ("certainty", "bounds")) if not sa else ("bounds",):
            load = _load()
            result, seconds = _timed(lambda: exact_attack(tree, frame, threat=threat, detail=detail, time_limit=None if not sa else 60))
            d = result.details["exact"]
            details[detail] = {"seconds": seconds, "load": load, "certain_people": _people(result), "undecided": d["undecided_records"],
                               "undecided_bounds": d["undecided_bounds"], "method": d["method"], "at_least_one_groups": d["at_least_one_groups"]}
            print(f"{case} exact ({detail}): {seconds:.2f} s, load {load}: {details[detail]}", flush=True)
        estimate, est_s, counts, peers, load = _estimate_and_peers(tree, frame, threat, tree_count_problem, samples, case)
        rows.append({"case": case, "leaves": len(tree.leaves()), "groups": int(counts.n_groups), "variables": int(counts.n_vars),
                     "exact": details, "maxent_seconds": est_s, "maxent_certain_people": _people(estimate), "peers": peers, "peer_load": load,
                     "fit_seconds": fit})
    return rows


def _estimate_and_peers(model, frame, threat, count_problem, samples: int, case: str, **peer_options):  # type: ignore[no-untyped-def]
    """The maximum-entropy estimate (timed) and the plain peers on the same count problem, with the load."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimate, seconds = _timed(lambda: maxent_attack(model, frame, threat=threat))
    counts, _, truth = count_problem(model, frame, threat.resolve(frame, "income"))
    load = _load()
    peers = plain_peers(counts, truth, samples, **peer_options)
    print(f"{case} peers (load {load}): {peers}", flush=True)
    return estimate, seconds, counts, peers, load


def bench_rules(frame, rules_time: float, samples: int, engines: list[str]) -> dict:  # type: ignore[no-untyped-def]
    rules = mine_rules(frame, QIS, "income", 0.1, 0.6)
    load = _load()
    result, seconds = _timed(lambda: exact_attack(rules, frame, time_limit=rules_time))
    d = result.details["exact"]
    estimate, est_s = _timed(lambda: rules_attack(rules, frame))
    print(f"rules exact: {seconds:.2f} s, load {load}: {d}; maxent {est_s:.2f} s certain {_people(estimate)}", flush=True)
    from ppdm.attacks.models.rules import rules_audit_problem
    from ppdm.exact import SearchOptions, exact_bounds
    from ppdm.exact.build import from_joint, truth_counts
    from ppdm.maxent.constraints.rule_constraints import RuleKnowledge
    from ppdm.maxent.solvers.solve import solve_linear

    groups, true_codes, problem, _ = rules_audit_problem(rules, frame, RuleKnowledge())
    counts = from_joint(problem, groups.counts)
    truth = truth_counts(counts.var_group, counts.var_label, groups.group_of_record, true_codes)
    interior = solve_linear(problem).p
    by_engine = {}
    for engine in engines:  # the search alone, same rows, same budget: the engines side by side
        eload = _load()
        bounds, es = _timed(lambda: exact_bounds(counts, rules_time, truth, method="search", interior=interior, options=SearchOptions(engine=engine)))
        people = int(bounds.sizes[bounds.certain_groups].sum())
        by_engine[engine] = {"seconds": es, "load": eload, "certain_people": people} | {
            k: v for k, v in bounds.summary().items() if k in ("undecided_records", "undecided_groups", "undecided_bounds", "solves", "local_solves", "method")}
        print(f"rules search, engine {engine}: {es:.2f} s, load {eload}: {by_engine[engine]}", flush=True)
    peer_load = _load()
    peers = plain_peers(counts, None, samples)
    print(f"rules peers (load {peer_load}): {peers}", flush=True)
    return {"case": "rules", "rules": len(rules.rules), "rows": result.details["rows"], "groups": int(groups.n_groups),
            "seconds": seconds, "load": load, "certain_people": _people(result), "undecided": d["undecided_records"],
            "undecided_groups": d["undecided_groups"], "undecided_bounds": d["undecided_bounds"], "solves": d.get("solves"),
            "local_solves": d.get("local_solves"), "proved_by_lp": d.get("proved_by_lp"), "method": d.get("method"),
            "maxent_seconds": est_s, "maxent_certain_people": _people(estimate), "engines": by_engine, "peers": peers, "peer_load": peer_load}


def forest_setting(frame, n_records: int = 1000, n_trees: int = 10, bootstrap: bool = False, seed: int = 0):  # type: ignore[no-untyped-def]
    """The forest case's table (``n_records`` rows drawn with ``seed``), forest and threat model."""
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.tree import forest_from_sklearn

    table = frame[[*FOREST_INPUTS, "income"]].sample(n_records, random_state=seed).reset_index(drop=True)
    for c in table.columns:
        table[c] = table[c].cat.remove_unused_categories()
    X = table[FOREST_INPUTS]
    est = RandomForestClassifier(n_trees, bootstrap=bootstrap, random_state=seed, n_jobs=1).fit(pd.get_dummies(X).astype(float), table["income"])
    forest = forest_from_sklearn(est, X, y=table["income"])
    known = (*[c for c in FOREST_INPUTS if c != FOREST_SENSITIVE], "income")
    threat = ThreatModel(sensitive=FOREST_SENSITIVE, known=known, sa_published=False).resolve(table, "income")
    return table, forest, threat


def bench_forest(frame, forest_time: float, samples: int, n_records: int = 1000, n_trees: int = 10) -> dict:  # type: ignore[no-untyped-def]
    table, forest, threat = forest_setting(frame, n_records, n_trees)
    load = _load()
    result, seconds = _timed(lambda: exact_attack(forest, table, threat=threat, time_limit=forest_time))
    d = result.details["exact"]
    people = int(result.targets.sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimate, est_s = _timed(lambda: maxent_attack(forest, table, threat=threat))
    print(f"forest exact: {seconds:.2f} s, load {load}: {d}; maxent {est_s:.2f} s certain {_people(estimate)}", flush=True)
    counts, _, truth = forest_count_problem(forest, table, threat)
    peer_load = _load()
    peers = plain_peers(counts, truth, samples)
    print(f"forest peers (load {peer_load}): {peers}", flush=True)
    return {"case": "forest", "records": n_records, "trees": n_trees, "nodes": sum(t.n_nodes for t in forest.trees),
            "groups": int(counts.n_groups), "variables": int(counts.n_vars), "rows": sum(r.n_rows for r in counts.rows),
            "seconds": seconds, "load": load, "certain_people": _people(result), "undecided": d["undecided_records"],
            "undecided_share": d["undecided_records"] / max(people, 1), "undecided_bounds": d["undecided_bounds"],
            "solves": d.get("solves"), "lp_solves": d.get("lp_solves"), "proved_by_lp": d.get("proved_by_lp"), "method": d["method"],
            "at_least_one_groups": d["at_least_one_groups"], "maxent_seconds": est_s, "maxent_certain_people": _people(estimate),
            "peers": peers, "peer_load": peer_load}


def bench_lgb100(frame, lgb_time: float, samples: int) -> dict:  # type: ignore[no-untyped-def]
    import pandas as pd
    from lightgbm import LGBMClassifier

    from ppdm.tree import forest_from_lightgbm

    df = frame.drop(columns="fnlwgt").reset_index(drop=True)
    X = df.drop(columns="income")
    D = pd.get_dummies(X).astype(float)
    est, fit = _timed(lambda: LGBMClassifier(n_estimators=100, max_depth=6, num_leaves=64, verbose=-1, n_jobs=2).fit(D, df["income"].cat.codes))
    forest = forest_from_lightgbm(est, X, list(D.columns), y=df["income"])
    threat = ThreatModel(preset="insider", sensitive="income")
    load = _load()
    result, seconds = _timed(lambda: exact_attack(forest, df, threat=threat, time_limit=lgb_time, detail="certainty"))
    d = result.details["exact"]
    people = int(result.targets.sum())
    print(f"lgb100 exact: {seconds:.2f} s, load {load}: {d}", flush=True)
    estimate, est_s, counts, peers, peer_load = _estimate_and_peers(forest, df, threat, forest_count_problem, samples, "lgb100", lp_cap=120.0)
    return {"case": "lgb100", "rows": len(df), "rounds": len(forest.trees), "groups": int(counts.n_groups), "variables": int(counts.n_vars),
            "count_rows": sum(r.n_rows for r in counts.rows), "seconds": seconds, "load": load, "certain_people": _people(result),
            "undecided": d["undecided_records"], "undecided_share": d["undecided_records"] / max(people, 1), "stats": {k: v for k, v in d.items() if isinstance(v, int | float | str)},
            "maxent_seconds": est_s, "maxent_certain_people": _people(estimate), "peers": peers, "peer_load": peer_load, "fit_seconds": fit}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules-time", type=float, default=45.0)
    parser.add_argument("--forest-time", type=float, default=60.0)
    parser.add_argument("--lgb-time", type=float, default=25.0)
    parser.add_argument("--peer-samples", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cases", nargs="+", default=["tree", "rules", "forest", "lgb100"])
    parser.add_argument("--quick", action="store_true", help="one tree case, certainty only")
    parser.add_argument("--engines", nargs="*", default=["cp-sat"], help="integer engines also timed alone on the rule set (auto, milp, cp-sat)")
    args = parser.parse_args()
    frame, roles = load_adult("train")
    out: dict = {"load_start": _load()}
    if "tree" in args.cases:
        out["tree"] = bench_tree(frame, roles, args.peer_samples, args.quick)
    if "rules" in args.cases:
        out["rules"] = bench_rules(frame, args.rules_time, args.peer_samples, args.engines)
    if "forest" in args.cases:
        out["forest"] = bench_forest(frame, args.forest_time, args.peer_samples)
    if "lgb100" in args.cases:
        out["lgb100"] = bench_lgb100(frame, args.lgb_time, args.peer_samples)
    out["load_end"] = _load()
    text = json.dumps(out, indent=1, default=float)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
