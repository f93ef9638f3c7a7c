"""Membership disclosure (issue 27): ppdm's membership audit beside SACRO-ML's black-box attacks on
the same model and split.

Run: ``PYTHONPATH=src python benchmarks/bench_membership.py [--blackbox] [--datasets adult nursery bank]
[--models tree tree8 rf100 rf100-nb xgb100] [--peer-python PATH] [--shadows 16] [--forest-shadows 8]
[--rows 5000] [--methods auto scaling]``. ``--rows``: that many candidates drawn at random (seed 0)
from the population, members and non-members alike (issue 43's 5,000-row forests); ``--methods``:
the estimate's method, one row each in the same run (``scaling``: cycling over the blocks alone,
the method before Newton's; the rows then give the proof's and the estimate's seconds, steps,
whether it converged and how far its rows are off).

Populations: Adult (the 30,162 training-file rows are the members, the 15,060 test-file rows the
non-members: 45,222 candidates), Nursery (12,960 rows, a random half members, seed 0; its two
"recommend" rows are then left out: SACRO-ML's shadow XGBoost models, fitted on random subsets,
may lack the class, and XGBoost refuses class codes with a gap), Bank
Personal Loan (5,000 rows from ``../shared/datasets/bank_loan``, a random half members). Inputs:
every column but the class (Adult: without fnlwgt and education, a recoding of education-num;
Bank: without ID), one-hot encoded for the libraries. Models fitted on the members: ``tree`` a
depth-unlimited ``DecisionTreeClassifier``, ``tree8`` depth 8, ``rf100`` a 100-tree
``RandomForestClassifier`` (bootstrap), ``rf100-nb`` the same without bootstrap, ``xgb100`` XGBoost
100 rounds (depth 6); every ``random_state=0``.

ppdm: :func:`ppdm.attacks.membership.audit.membership_attack` (the attacker knows every candidate's
inputs and class; the population holds every member), default options (proof budget 30 s after
propagation, estimate 60 s), time from the imported model to the result. Peer (subprocess, in an
interpreter with ``sacroml``, ``--peer-python``; the ``peers`` extra): SACRO-ML 2's offline LiRA
with ``--shadows`` shadow models (``--forest-shadows`` for the forests and XGBoost: each shadow is
a whole refit) and its worst-case attack (5 repetitions, attack model trained on part of the
truth: a stronger attacker than a real one), on the same model refitted from the same parameters
(checked: the same probabilities). All are scored by the same function,
:func:`ppdm.metrics.membership.membership_metrics` (Carlini et al. 2022: AUC, TPR at 1 % and
0.1 % FPR, the tie group straddling a budget taken in a random share), and beside it the TPR at
1 % FPR a threshold alone reaches (ties left out whole), which tells a gap made by tied scores
from one made by the ranking.

**Black-box rows** (``--blackbox``, issue 45): SACRO-ML's breast-cancer example (``cancer``: a
random half members, seed 0) and a 5,000-row sample of Adult (``adult5k``: seed 0, a random half
members), each with a decision tree (``tree``) and a 100-tree forest (``rf100``), each population
complete (every member and non-member) and with half the members (``sample=True``: a random half
of the members, every non-member). ppdm's white-box audit and its black-box attacks
(:func:`ppdm.attacks.membership.blackbox.blackbox_membership`: confidence, LiRA offline/online, RMIA
offline/online, ``--shadows`` shadow models on halves of the candidates) on the same candidates;
the row gives the white-box estimate's rates, the best other attack's (a black-box one, or on a
sample pool the count ratio, alone or with RMIA: :mod:`ppdm.attacks.membership.count_ratio`), and what ppdm reports
(the strongest of them all, each rate at the attack reaching it), with the time of each part; on
the complete populations, SACRO-ML's offline LiRA with as many shadow models (``--peer-python``;
``--no-peer`` leaves it out).

**Every boosting round** (``--rounds [xgb100 lgbm100 hgb100 gb100]``, issue 45): Adult 5k (10,000
rows drawn from Adult's 45,222 at random, seed 0; 5,000 of them members, the rest held out), a
100-round model of each family (XGBoost depth 6, LightGBM, HistGradientBoosting without early
stopping, GradientBoosting; ``random_state=0``), the population complete and with half the
members; the white-box audit with the rounds' leaf-value and cover rows left out (``before``:
``MembershipOptions(rounds=False)``) and read (``after``), with the rounds read, the time, the
wrong proofs, and the strongest black-box attack on the same candidates (``--shadows``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

DATASETS = ("adult", "nursery", "bank")
RARE = 10
MODELS = ("tree", "tree8", "rf100", "rf100-nb", "xgb100", "rules")
ROUND_MODELS = ("xgb100", "lgbm100", "hgb100", "gb100")

#: The rule sets' thresholds (paper 004 §VI: s = 0.1, c = 0.6 on Adult) and their antecedent columns.
RULES = (0.1, 0.6)
ADULT_QIS = ["workclass", "education-num", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]
FEW_VALUES = 6
BANK = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"


def population(name: str) -> tuple[pd.DataFrame, list[str], str, np.ndarray]:
    """The candidates (inputs and class), the inputs, the class column and who is a member."""
    from ppdm.data.datasets import load_adult, load_bank_loan, load_nursery

    if name == "adult":
        train, _ = load_adult("train")
        test, _ = load_adult("test")
        frame = pd.concat([train, test], ignore_index=True)
        member = np.r_[np.ones(len(train), bool), np.zeros(len(test), bool)]
        inputs = [c for c in frame.columns if c not in ("fnlwgt", "education", "income")]
        return frame[[*inputs, "income"]], inputs, "income", member
    if name == "nursery":
        frame, roles = load_nursery()
        klass = roles.class_attribute
    else:
        frame, roles = load_bank_loan(BANK)
        frame = frame.drop(columns=["ID"])
        klass = "Personal Loan"
    member = np.random.default_rng(0).random(len(frame)) < 0.5
    # a class of fewer than RARE rows (Nursery's two "recommend" rows) is left out: SACRO-ML fits its
    # shadow XGBoost models on random subsets, which may lack it, and XGBoost refuses class codes with a gap
    sizes = frame[klass].astype(str).map(frame[klass].astype(str).value_counts()).to_numpy()
    if (sizes < RARE).any():
        print(f"{name}: {int((sizes < RARE).sum())} row(s) of a class of fewer than {RARE} rows left out", flush=True)
    frame, member = frame[sizes >= RARE].copy(), member[sizes >= RARE]
    if isinstance(frame[klass].dtype, pd.CategoricalDtype):
        frame[klass] = frame[klass].cat.remove_unused_categories()
    inputs = [c for c in frame.columns if c != klass]
    return frame[[*inputs, klass]].reset_index(drop=True), inputs, klass, member


def rule_columns(name: str, frame: pd.DataFrame, inputs: list[str]) -> list[str]:
    """The columns rules are mined over: paper 004's eight on Adult (education as its number, the same grouping), else the inputs with few values."""
    if name == "adult":
        return ADULT_QIS
    return [c for c in inputs if frame[c].nunique() <= FEW_VALUES]


def spec(model: str) -> dict:
    if model == "rules":
        return {"kind": "rules", "params": {}}
    if model == "hgb100":
        return {"kind": "hgb", "params": {"max_iter": 100, "early_stopping": False, "random_state": 0}}
    if model == "lgbm100":
        return {"kind": "lightgbm", "params": {"n_estimators": 100, "n_jobs": 1, "random_state": 0, "verbose": -1}}
    if model == "gb100":
        return {"kind": "gb", "params": {"n_estimators": 100, "random_state": 0}}
    if model == "lr":
        return {"kind": "lr", "params": {"max_iter": 1000}}
    if model == "mlp":
        return {"kind": "mlp", "params": {"hidden_layer_sizes": [64], "max_iter": 300, "random_state": 0}}
    if model == "xgb100":
        return {"kind": "xgboost", "params": {"n_estimators": 100, "max_depth": 6, "n_jobs": 2, "random_state": 0}}
    if model.startswith("tree"):
        return {"kind": "tree", "params": {"max_depth": 8 if model == "tree8" else None, "random_state": 0}}
    return {"kind": "forest", "params": {"n_estimators": 100, "bootstrap": model == "rf100", "random_state": 0, "n_jobs": 2}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--peer-python", default=os.environ.get("PPDM_PEER_PYTHON", sys.executable))
    parser.add_argument("--shadows", type=int, default=16)
    parser.add_argument("--forest-shadows", type=int, default=8)
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--json", help="also write the rows as JSON here")
    parser.add_argument("--blackbox", action="store_true", help="the black-box rows instead (issue 45; see the module docstring)")
    parser.add_argument("--bb-datasets", nargs="+", default=list(BLACKBOX_DATASETS), choices=BLACKBOX_DATASETS, help="--blackbox: these populations")
    parser.add_argument("--bb-models", nargs="+", default=list(BLACKBOX_MODELS), choices=BLACKBOX_MODELS, help="--blackbox: these models")
    parser.add_argument("--rows", type=int, help="draw this many candidates at random (seed 0), members and non-members alike (issue 43: 5,000)")
    parser.add_argument("--methods", nargs="+", default=["auto"], choices=["auto", "scaling"], help="the estimate's method; several: one row each, in the same run")
    parser.add_argument("--rounds", nargs="*", choices=ROUND_MODELS, help="the every-round rows instead (issue 45; see the module docstring): these boosted models")
    args = parser.parse_args()
    if args.rounds is not None:
        rounds_main(args.rounds or list(ROUND_MODELS), args.shadows, args.json)
        return
    if args.blackbox:
        blackbox_main(args.shadows, args.json, None if args.no_peer else args.peer_python, args.bb_datasets, args.bb_models)
        return
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} on {os.cpu_count()} cores", flush=True)
    rows = []
    for name in args.datasets:
        frame, inputs, klass, member = population(name)
        if args.rows and args.rows < len(frame):
            pick = np.sort(np.random.default_rng(0).choice(len(frame), args.rows, replace=False))
            frame, member = frame.iloc[pick].reset_index(drop=True), member[pick]
            if isinstance(frame[klass].dtype, pd.CategoricalDtype):
                frame[klass] = frame[klass].cat.remove_unused_categories()
        D = pd.get_dummies(frame[inputs]).astype(float)
        codes = frame[klass].astype("category").cat.codes.to_numpy()
        for model in args.models:
            for method in args.methods:
                row = run_case(name, model, frame, inputs, klass, member, D, codes, args, method)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


def run_case(name, model, frame, inputs, klass, member, D, codes, args, method="auto") -> dict:  # type: ignore[no-untyped-def]
    from ppdm.attacks.membership.audit import MembershipOptions, membership_attack
    from ppdm.maxent.solvers.bernoulli import BernoulliOptions
    from ppdm.tree import forest_from_sklearn, forest_from_xgboost, tree_from_sklearn

    s = spec(model)
    y = frame[klass].astype("category")
    labels = y.astype(str).to_numpy().astype(str)  # scikit-learn is fitted on the class values, XGBoost on their codes
    target = codes if s["kind"] == "xgboost" else labels
    X_members = frame.loc[member, inputs].reset_index(drop=True)
    y_members = y[member].reset_index(drop=True)
    if s["kind"] != "xgboost":  # the classes as scikit-learn was fitted on them (Bank's 0/1 as "0"/"1")
        y_members = pd.Series(labels[member], name=klass)
    start = time.perf_counter()
    if model == "rules":
        from ppdm.rules.mining import mine_rules

        published = mine_rules(frame[member], rule_columns(name, frame, inputs), klass, *RULES)
        est = None
    elif s["kind"] == "xgboost":
        import xgboost

        est = xgboost.XGBClassifier(**s["params"]).fit(D[member], codes[member])
        published = forest_from_xgboost(est, X_members, y=y_members)
    elif s["kind"] == "tree":
        from sklearn.tree import DecisionTreeClassifier

        est = DecisionTreeClassifier(**s["params"]).fit(D[member], labels[member])
        published = tree_from_sklearn(est, X_members, y=y_members)
    else:
        from sklearn.ensemble import RandomForestClassifier

        est = RandomForestClassifier(**s["params"]).fit(D[member], labels[member])
        published = forest_from_sklearn(est, X_members, y=y_members)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    result = membership_attack(published, frame, truth=member, options=MembershipOptions(solver=BernoulliOptions(method=method)))
    seconds = time.perf_counter() - start
    summary = result.summary()
    row = {
        "dataset": name, "model": model, "candidates": len(frame), "members": int(member.sum()), "fit_s": round(fit_seconds, 1),
        "ppdm_auc": summary["auc"], "ppdm_tpr@1%": summary["tpr@1%"], "ppdm_tpr@0.1%": summary["tpr@0.1%"],
        "ppdm_tpr@1%_thresholds": summary["tpr@1%_thresholds"], "ppdm_distinct_scores": int(np.unique(result.probability).size),
        "proved_members": summary["proved_members"], "proved_non_members": summary["proved_non_members"],
        "wrong_proofs": summary["wrong_proved_members"] + summary["wrong_proved_non_members"], "ppdm_s": round(seconds, 1),
        "trees_used": summary["trees_used"], "proof_settled": summary["proof_settled"], "method": method,
        "proof_s": round(result.details["proof_seconds"], 1), "estimate_s": round(result.details["estimate_seconds"], 1),
        "estimate_steps": result.details["estimate_iterations"], "estimate_converged": result.details["estimate_converged"],
        "rows_off": result.details["max_violation"],
    }
    if model == "rules":
        row["rules"] = len(published)
        row["peer"] = "no black-box attack reads a rule set"
    if args.no_peer or est is None:
        return row
    shadows = args.shadows if s["kind"] == "tree" else args.forest_shadows
    row.update(sacro_peer(name, s, D, target, member, est, shadows, args.peer_python))
    return row


def sacro_peer(
    name: str, s: dict, D: pd.DataFrame, target: np.ndarray, member: np.ndarray, est: object, shadows: int, peer_python: str,  # type: ignore[type-arg]
    held: np.ndarray | None = None, online: bool = False,
) -> dict:  # type: ignore[type-arg]
    """SACRO-ML's offline LiRA (and, with ``online``, its online one) and worst-case attack on the
    model refitted from ``s`` (a subprocess in ``peer_python``), scored by ppdm's metrics: the row's
    peer columns. ``held``: the members the attacker holds (a boolean per member; the model is
    still fitted on every member, the attack's data are the held members and every non-member)."""
    from ppdm.metrics.membership import membership_metrics

    row: dict = {}  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        D_members, D_others = D[member].to_numpy(), D[~member].to_numpy()
        np.save(root / "X_train.npy", D_members)
        np.save(root / "y_train.npy", target[member])
        np.save(root / "X_test.npy", D_others)
        np.save(root / "y_test.npy", target[~member])
        np.save(root / "proba_test.npy", est.predict_proba(D[~member]))  # type: ignore[attr-defined]
        if held is not None:
            np.save(root / "held.npy", held)
        (root / "spec.json").write_text(json.dumps({**s, "name": name, "shadows": shadows, "online": online}))
        start = time.perf_counter()
        done = subprocess.run(
            [peer_python, str(Path(__file__).with_name("peer_sacroml.py")), tmp], capture_output=True, text=True, check=False,
        )
        row["peer_s"] = round(time.perf_counter() - start, 1)
        if done.returncode != 0 or not (root / "peer.json").exists():
            row["peer"] = f"SACRO-ML did not run: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"
            return row
        peer = json.loads((root / "peer.json").read_text())
        row["peer_refit_difference"] = peer["refit_max_difference"]
        row["lira_shadows"] = shadows
        truth = np.r_[np.ones(len(D_members) if held is None else int(held.sum()), bool), np.zeros(len(D_others), bool)]
        for key, file in (("lira", "lira.npy"), ("online", "online.npy")):
            if (root / file).exists():
                got = membership_metrics(truth, np.load(root / file))
                row.update({
                    f"{key}_auc": got["auc"], f"{key}_tpr@1%": got["tpr@1%"], f"{key}_tpr@0.1%": got["tpr@0.1%"],
                    f"{key}_tpr@1%_thresholds": got["tpr@1%_thresholds"], f"{key}_s": round(peer[f"{key}_seconds"], 1),
                })
        row.update({**worst_case(peer["worst"]), "worst_s": round(peer["worst_seconds"], 1)})
    return row


def worst_case(reps: list[dict]) -> dict:
    """The worst-case attack's repetitions read as ppdm's own scores are (its ROC points, both readings), averaged."""
    from ppdm.metrics.membership import interpolated_tpr

    out = {"worst_auc": float(np.mean([w["auc"] for w in reps]))}
    for key, fpr in (("1%", 0.01), ("0.1%", 0.001)):
        f = [np.asarray(w["fpr"]) for w in reps]
        t = [np.asarray(w["tpr"]) for w in reps]
        out[f"worst_tpr@{key}"] = float(np.mean([interpolated_tpr(a, b, fpr) for a, b in zip(f, t)]))
        out[f"worst_tpr@{key}_thresholds"] = float(np.mean([b[a <= fpr + 1e-12].max(initial=0.0) for a, b in zip(f, t)]))
    return out


def table(rows: list[dict]) -> str:
    head = (
        "| dataset | model | ppdm AUC | ppdm TPR@1% | ppdm TPR@0.1% | proved members (wrong) | proved non-members | ppdm s | LiRA AUC | LiRA TPR@1% "
        "| worst-case AUC | worst-case TPR@1% | peer s | TPR@1% thresholds only: ppdm / LiRA / worst-case |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        def f(key: str) -> str:
            v = r.get(key)
            return "–" if v is None else f"{v:.3f}"
        lines.append(
            f"| {r['dataset']} | {r['model']} | {f('ppdm_auc')} | {f('ppdm_tpr@1%')} | {f('ppdm_tpr@0.1%')} | {r['proved_members']:,} ({r['wrong_proofs']}) | "
            f"{r['proved_non_members']:,} | {r['ppdm_s']} | {f('lira_auc')} | {f('lira_tpr@1%')} | {f('worst_auc')} | {f('worst_tpr@1%')} | {r.get('peer_s', '–')} "
            f"| {f('ppdm_tpr@1%_thresholds')} / {f('lira_tpr@1%_thresholds')} / {f('worst_tpr@1%_thresholds')} |"
        )
    return "\n".join(lines)



# -- issue 45: the black-box attacks beside the white-box audit --------------------------------
BLACKBOX_DATASETS = ("cancer", "adult5k", "nursery5k")
BLACKBOX_MODELS = ("tree", "rf100", "hgb100", "xgb100", "lgbm100", "lr", "mlp")


def blackbox_population(name: str) -> tuple[pd.DataFrame, list[str], str, np.ndarray]:
    """The candidates, inputs, class column and members of a black-box row (see the module docstring)."""
    rng = np.random.default_rng(0)
    if name == "cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        frame = X.rename(columns=lambda c: c.replace(" ", "_")).assign(target=y.astype(str).to_numpy())
        inputs = [c for c in frame.columns if c != "target"]
        return frame, inputs, "target", rng.random(len(frame)) < 0.5
    full, inputs, klass, _ = population("adult" if name == "adult5k" else "nursery")
    frame = full.iloc[np.sort(rng.choice(len(full), 5000, replace=False))].reset_index(drop=True)
    if isinstance(frame[klass].dtype, pd.CategoricalDtype):
        frame[klass] = frame[klass].cat.remove_unused_categories()
    return frame, inputs, klass, rng.random(len(frame)) < 0.5


def fit_any(model: str, D: pd.DataFrame, codes: np.ndarray, labels: np.ndarray, X: pd.DataFrame, y: pd.Series) -> tuple[object, object, np.ndarray]:
    """The fitted estimator, its ppdm import (``None``: not a tree model) and the labels it was fitted on."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier

    from ppdm.tree import forest_from_sklearn, tree_from_sklearn

    if model in ROUND_MODELS:
        return fit_boosted(model, D, codes, labels, X, y)
    named = pd.Series(labels, name=y.name)
    if model == "tree":
        est = DecisionTreeClassifier(random_state=0).fit(D, labels)
        return est, tree_from_sklearn(est, X, y=named), labels
    if model == "rf100":
        est = RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1).fit(D, labels)
        return est, forest_from_sklearn(est, X, y=named), labels
    last = LogisticRegression(max_iter=1000) if model == "lr" else MLPClassifier(hidden_layer_sizes=(64,), max_iter=300, random_state=0)
    return last.fit(D, labels), None, labels  # D standardised by the caller (SACRO-ML clones a bare estimator, not a Pipeline)


def run_blackbox_case(name: str, model: str, half: bool, shadows: int, peer_python: str | None = None) -> dict:  # type: ignore[type-arg]
    """One black-box row: the white-box audit (tree models), the black-box attacks, and what ppdm reports."""
    import warnings

    from ppdm.attacks.membership.audit import membership_attack
    from ppdm.attacks.membership.blackbox import BlackboxOptions, blackbox_membership, strongest_row

    frame, inputs, klass, member = blackbox_population(name)
    D = pd.get_dummies(frame[inputs]).astype(float)
    if model in ("lr", "mlp"):  # standardised once for every party (the same features for ppdm, its shadows and SACRO-ML)
        D = (D - D.mean()) / D.std().replace(0.0, 1.0)
    y = frame[klass].astype("category")
    codes, labels = y.cat.codes.to_numpy(), y.astype(str).to_numpy().astype(str)  # unicode, not object: saved for the peer without pickle
    X_members = frame.loc[member, inputs].reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the MLP's convergence warnings
        est, published, fitted_on = fit_any(model, D[member], codes[member], labels[member], X_members, y[member].reset_index(drop=True))
    all_labels = codes if fitted_on.dtype.kind in "iu" else labels
    keep = ~member | (np.random.default_rng(1).random(len(member)) < 0.5) if half else np.ones(len(member), bool)
    pool, truth = frame[keep].reset_index(drop=True), member[keep]
    start = time.perf_counter()
    result = None if published is None else membership_attack(published, pool, truth=truth, complete=not half)
    white_s = time.perf_counter() - start
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = blackbox_membership(est, D[keep].reset_index(drop=True), all_labels[keep], truth=truth, options=BlackboxOptions(shadows=shadows))
    black_s = time.perf_counter() - start
    table_rows = found.table()
    if result is not None:
        result.blackbox = found
        s = result.summary()
        table_rows, own = s["attacks"], s["white_box_rates"]
        reported = {"auc": s["auc"], "tpr@0.1%": s["tpr@0.1%"], "tpr@1%": s["tpr@1%"], "attack": s["strongest"]}
    else:
        own = {"auc": float("nan"), "tpr@0.1%": float("nan"), "tpr@1%": float("nan")}
        reported = strongest_row(table_rows)
    best = strongest_row([r for r in table_rows if r["attack"] != "ppdm"])
    row = {
        "dataset": name, "model": model, "population": "half the members" if half else "complete", "candidates": int(keep.sum()),
        "members": int(truth.sum()), "white_auc": own["auc"], "white_tpr@0.1%": own["tpr@0.1%"], "white_tpr@1%": own["tpr@1%"],
        "best_blackbox": best["attack"], "bb_auc": best["auc"], "bb_tpr@0.1%": best["tpr@0.1%"], "bb_tpr@1%": best["tpr@1%"],
        "confidence_tpr@1%": next(r["tpr@1%"] for r in table_rows if r["attack"] == "confidence"),
        "ppdm_auc": reported["auc"], "ppdm_tpr@0.1%": reported["tpr@0.1%"], "ppdm_tpr@1%": reported["tpr@1%"], "strongest": reported["attack"],
        "white_s": round(white_s, 1), "blackbox_s": round(black_s, 1), "shadows": shadows,
    }  # fmt: skip
    if peer_python:
        row.update(sacro_peer(name, spec(model), D, fitted_on_all(all_labels), member, est, shadows, peer_python, held=keep[member], online=True))
    return row


def fitted_on_all(labels: np.ndarray) -> np.ndarray:
    """The labels as saved for the peer (codes or unicode class values, never objects)."""
    return labels if labels.dtype.kind in "iuU" else labels.astype(str)


def blackbox_table(rows: list[dict]) -> str:  # type: ignore[type-arg]
    head = (
        "| dataset | model | population | white-box AUC / TPR@0.1% / TPR@1% | best other attack AUC / TPR@0.1% / TPR@1% "
        "| confidence TPR@1% | ppdm reported AUC / TPR@0.1% / TPR@1% | white-box s | black-box s "
        "| SACRO-ML LiRA offline AUC / TPR@0.1% / TPR@1%, s | SACRO-ML LiRA online AUC / TPR@0.1% / TPR@1%, s | ppdm ≥ peer |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        def f(*keys: str) -> str:
            return " / ".join("–" if r.get(k) is None or r[k] != r[k] else f"{r[k]:.3f}" for k in keys)
        off = f"{f('lira_auc', 'lira_tpr@0.1%', 'lira_tpr@1%')}, {r['lira_s']}" if "lira_auc" in r else r.get("peer", "–")
        on = f"{f('online_auc', 'online_tpr@0.1%', 'online_tpr@1%')}, {r['online_s']}" if "online_auc" in r else "–"
        lines.append(
            f"| {r['dataset']} | {r['model']} | {r['population']} | {f('white_auc', 'white_tpr@0.1%', 'white_tpr@1%')} | ({r['best_blackbox']}) "
            f"{f('bb_auc', 'bb_tpr@0.1%', 'bb_tpr@1%')} | {f('confidence_tpr@1%')} | {f('ppdm_auc', 'ppdm_tpr@0.1%', 'ppdm_tpr@1%')} | {r['white_s']} | {r['blackbox_s']} "
            f"| {off} | {on} | {at_least_peer(r)} |"
        )
    return "\n".join(lines)


def at_least_peer(r: dict) -> str:  # type: ignore[type-arg]
    """Whether ppdm's reported TPR@0.1 % and TPR@1 % reach the best peer attack's (ties within 0.005)."""
    peers = [p for p in ("lira", "online") if f"{p}_tpr@1%" in r]
    if not peers:
        return "–"
    short = [f"{k} by {max(r[f'{p}_{k}'] for p in peers) - r[f'ppdm_{k}']:.3f}" for k in ("tpr@0.1%", "tpr@1%") if r[f"ppdm_{k}"] < max(r[f"{p}_{k}"] for p in peers) - 0.005]
    return "yes" if not short else "no: " + ", ".join(short)


def blackbox_main(shadows: int, json_out: str | None, peer_python: str | None, datasets: list[str], models: list[str]) -> None:
    print(f"load: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    rows = []
    for name in datasets:
        for model in models:
            for half in (False, True):
                rows.append(run_blackbox_case(name, model, half, shadows, peer_python))
                print(json.dumps(rows[-1]), flush=True)
                if json_out:
                    Path(json_out).write_text(json.dumps(rows, indent=1))
    print()
    print(blackbox_table(rows))


# -- issue 45: every boosting round read by the membership audit ------------------------------
def fit_boosted(model: str, D: pd.DataFrame, codes: np.ndarray, labels: np.ndarray, X: pd.DataFrame, y: pd.Series) -> tuple[object, object, np.ndarray]:
    """The fitted estimator, its ppdm import and the labels it was fitted on (codes or class values)."""
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

    from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost

    if model == "xgb100":
        import xgboost

        est = xgboost.XGBClassifier(n_estimators=100, max_depth=6, n_jobs=1, random_state=0).fit(D, codes)
        return est, forest_from_xgboost(est, X, y=y), codes
    if model == "lgbm100":
        import lightgbm

        est = lightgbm.LGBMClassifier(n_estimators=100, n_jobs=1, random_state=0, verbose=-1).fit(D, codes)
        return est, forest_from_lightgbm(est, X, list(D.columns), y=y), codes
    sk = HistGradientBoostingClassifier(max_iter=100, early_stopping=False, random_state=0) if model == "hgb100" else GradientBoostingClassifier(n_estimators=100, random_state=0)
    est = sk.fit(D, labels)
    return est, forest_from_sklearn(est, X, y=pd.Series(labels, name=y.name)), labels


def run_rounds_case(model: str, half: bool, shadows: int) -> dict:  # type: ignore[type-arg]
    from ppdm.attacks.membership.audit import MembershipOptions, membership_attack
    from ppdm.attacks.membership.blackbox import BlackboxOptions, blackbox_membership, strongest_row

    full, inputs, klass, _ = population("adult")
    rng = np.random.default_rng(0)
    frame = full.iloc[np.sort(rng.choice(len(full), 10_000, replace=False))].reset_index(drop=True)
    member = np.zeros(len(frame), bool)
    member[rng.choice(len(frame), 5_000, replace=False)] = True
    D = pd.get_dummies(frame[inputs]).astype(float)
    y = frame[klass].astype("category")
    codes, labels = y.cat.codes.to_numpy(), y.astype(str).to_numpy().astype(str)
    est, published, fitted_on = fit_boosted(model, D[member], codes[member], labels[member], frame.loc[member, inputs].reset_index(drop=True), y[member].reset_index(drop=True))
    all_labels = codes if fitted_on.dtype.kind in "iu" else labels
    keep = ~member | (np.random.default_rng(1).random(len(member)) < 0.5) if half else np.ones(len(member), bool)
    pool, truth = frame[keep].reset_index(drop=True), member[keep]
    row: dict = {"dataset": "adult5k", "model": model, "population": "half the members" if half else "complete", "candidates": int(keep.sum()), "members": int(truth.sum())}  # type: ignore[type-arg]
    for when, rounds in (("before", False), ("after", True)):
        start = time.perf_counter()
        result = membership_attack(published, pool, truth=truth, complete=not half, options=MembershipOptions(rounds=rounds))
        s = result.summary()
        row.update({
            f"{when}_auc": s["auc"], f"{when}_tpr@0.1%": s["tpr@0.1%"], f"{when}_tpr@1%": s["tpr@1%"], f"{when}_s": round(time.perf_counter() - start, 1),
            f"{when}_rounds": s["trees_used"].split("boosting rounds used: ")[-1], f"{when}_wrong": s["wrong_proved_members"] + s["wrong_proved_non_members"],
            f"{when}_proved": s["proved_members"] + s["proved_non_members"],
        })  # fmt: skip
    start = time.perf_counter()
    found = blackbox_membership(est, D[keep].reset_index(drop=True), all_labels[keep], truth=truth, options=BlackboxOptions(shadows=shadows))
    result.blackbox = found
    best = strongest_row([r for r in result.summary()["attacks"] if r["attack"] != "ppdm"])
    row.update({"best_blackbox": best["attack"], "bb_auc": best["auc"], "bb_tpr@0.1%": best["tpr@0.1%"], "bb_tpr@1%": best["tpr@1%"], "blackbox_s": round(time.perf_counter() - start, 1), "shadows": shadows})
    return row


def rounds_table(rows: list[dict]) -> str:  # type: ignore[type-arg]
    head = (
        "| model | population | white-box before: AUC / TPR@0.1% / TPR@1%, s (rounds) | white-box after: AUC / TPR@0.1% / TPR@1%, s (rounds) "
        "| wrong proofs | best black-box (attack) AUC / TPR@0.1% / TPR@1%, s |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        def f(p: str) -> str:
            return " / ".join(f"{r[f'{p}{k}']:.3f}" for k in ("auc", "tpr@0.1%", "tpr@1%"))
        lines.append(
            f"| {r['model']} | {r['population']} | {f('before_')}, {r['before_s']} ({r['before_rounds']}) | {f('after_')}, {r['after_s']} ({r['after_rounds']}) "
            f"| {r['before_wrong']} / {r['after_wrong']} | ({r['best_blackbox']}) {f('bb_')}, {r['blackbox_s']} |"
        )
    return "\n".join(lines)


def rounds_main(models: list[str], shadows: int, json_out: str | None) -> None:
    print(f"load: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    rows = []
    for model in models:
        for half in (False, True):
            rows.append(run_rounds_case(model, half, shadows))
            print(json.dumps(rows[-1]), flush=True)
    print()
    print(rounds_table(rows))
    if json_out:
        Path(json_out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
