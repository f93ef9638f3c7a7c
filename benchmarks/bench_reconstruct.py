"""Anchor of issue 14's "nothing known" mode, run beside DRAFT's own code (issue 30): rebuild a
binarized Adult training set from a 100-tree scikit-learn random forest (no bootstrap, unlimited
depth), as Ferry et al. (ICML 2024) do with DRAFT, and prove which rows every consistent dataset holds.

Two instances (``--instance``):

* ``ppdm`` (default): per seed, rows drawn from ppdm's Adult (30,162 complete rows,
  ``random_state=seed``), binarized (default: 5 flags and 3 grouped categorical columns, 19 binary
  inputs after one-hot encoding, :func:`binarize`; ``--binarization flags``: 19 independent flags,
  :func:`binarize_flags`) plus the class; ``RandomForestClassifier(n_estimators=100,
  bootstrap=False, max_depth=None, random_state=seed)`` fitted on the 19 inputs.
* ``paper``: DRAFT's own instances, built from DRAFT's checkout exactly as its experiment script
  does (``data_extraction_from_rf_experiments.py``): its ``data/adult.csv`` (48,842 rows, already
  binarized, 19 inputs), ``df.sample(1500, random_state=seed)``, the first ``rows`` as training
  set (the paper's Table protocol, 100 rows); for other sizes the whole table shuffled the same
  way (the protocol of its scalability appendix). The forest's train/test accuracy and depth are
  printed beside the values DRAFT's result files saved for the same instance. Both attacks are
  told the one exclusivity group the paper gave DRAFT (education).

Per seed and size, the same forest object is given to :func:`ppdm.exact.reconstruct.reconstruct`
and, when DRAFT's checkout is given (``--draft DIR`` or ``$DRAFT_DIR``; DRAFT is a GitHub
repository, fetched separately, never part of ppdm), to DRAFT's ``DRAFT(forest,
one_hot_groups).fit(method="cp-sat", timeout=limit, n_jobs=workers, seed=seed)`` (without
bootstrap its ``perform_reconstruction_v1_CP_SAT``), same CP-SAT workers and time limit. DRAFT
runs in a forked child, its wall time capped at twice the limit (its own limit covers only the
solve, not its model building) and its address space at ``--draft-memory`` GiB (default 6). On
ppdm's instance DRAFT is told the exclusivity groups that hold exactly (education and
occupation; workclass has a fourth group without a column, an "at most one" that DRAFT's
"exactly one" cannot express), ppdm all three.

Printed per run: seconds, status, reconstruction error (Ferry et al.'s: share of wrong input
values after a minimum-cost matching, the same function for both), rows proved, undecided and
datasets found by ppdm, and the ratio of DRAFT's seconds to ppdm's ("> r" when DRAFT found
nothing); the load average before and after. Once DRAFT finds nothing at a size for a seed, larger sizes
of that seed skip DRAFT (``--draft-all`` runs them anyway).

    PYTHONPATH=src python benchmarks/bench_reconstruct.py [--seeds 5] [--first-seed 0] [--rows 100 200]
        [--instance ppdm|paper] [--draft /tmp/draft] [--time-limit 600] [--binarization flags] [--bootstrap]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.datasets import load_dataset
from ppdm.exact.reconstruct import reconstruct, reconstruction_error
from ppdm.tree.sklearn_forest import forest_from_sklearn

CLASS = "income>50K"
GROUPS = {
    "education": {
        "school": ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th"],
        "hs-grad": ["HS-grad"],
        "some-college": ["Some-college"],
        "assoc": ["Assoc-voc", "Assoc-acdm"],
        "bachelors": ["Bachelors"],
        "postgraduate": ["Masters", "Prof-school", "Doctorate"],
    },
    "occupation": {
        "blue-collar": ["Craft-repair", "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Transport-moving"],
        "professional": ["Prof-specialty"],
        "sales": ["Sales"],
        "service": ["Other-service", "Priv-house-serv", "Protective-serv", "Armed-Forces"],
        "white-collar": ["Exec-managerial", "Adm-clerical", "Tech-support"],
    },
    "workclass": {
        "government": ["Federal-gov", "Local-gov", "State-gov"],
        "private": ["Private"],
        "self-employed": ["Self-emp-inc", "Self-emp-not-inc"],
        "other": ["Without-pay", "Never-worked"],
    },
}
DROPPED = ["workclass=other"]  # no input column of its own: the workclass dummies are all 0


def binarize(adult: pd.DataFrame) -> pd.DataFrame:
    """Adult as 5 flags, 3 grouped categorical columns and a boolean class (see the module docstring)."""
    out = pd.DataFrame({
        "age>37": adult["age"].to_numpy() > 37,
        "capital-gain>0": adult["capital-gain"].to_numpy() > 0,
        "capital-loss>0": adult["capital-loss"].to_numpy() > 0,
        "female": adult["sex"].astype(str).to_numpy() == "Female",
        "hours>40": adult["hours-per-week"].to_numpy() > 40,
    })
    for column, groups in GROUPS.items():
        of = {v: g for g, values in groups.items() for v in values}
        out[column] = pd.Categorical(adult[column].astype(str).map(of), categories=list(groups))
    out[CLASS] = adult["income"].astype(str).str.contains(">50K").to_numpy()
    return out


def binarize_flags(adult: pd.DataFrame) -> pd.DataFrame:
    """Adult as 19 independent boolean flags and the class (``--binarization flags``, docs/reconstruction.md)."""
    occ, work = adult["occupation"].astype(str), adult["workclass"].astype(str)
    marital, rel = adult["marital-status"].astype(str), adult["relationship"].astype(str)
    flags = {
        "age<=30": adult["age"] <= 30,
        "age>=50": adult["age"] >= 50,
        "private": work == "Private",
        "self-employed": work.str.startswith("Self-emp"),
        "education>=some-college": adult["education-num"] >= 10,
        "education>=bachelors": adult["education-num"] >= 13,
        "married": marital == "Married-civ-spouse",
        "never-married": marital == "Never-married",
        "white-collar": occ.isin(["Exec-managerial", "Prof-specialty"]),
        "manual": occ.isin(GROUPS["occupation"]["blue-collar"]),
        "husband": rel == "Husband",
        "own-child": rel == "Own-child",
        "white": adult["race"].astype(str) == "White",
        "male": adult["sex"].astype(str) == "Male",
        "capital-gain>0": adult["capital-gain"] > 0,
        "capital-loss>0": adult["capital-loss"] > 0,
        "hours>40": adult["hours-per-week"] > 40,
        "hours<40": adult["hours-per-week"] < 40,
        "us-native": adult["native-country"].astype(str) == "United-States",
        CLASS: adult["income"].astype(str).str.contains(">50K"),
    }
    return pd.DataFrame({k: np.asarray(v, dtype=bool) for k, v in flags.items()})


def dummies(table: pd.DataFrame) -> pd.DataFrame:
    """The 19 binary input columns scikit-learn is fitted on (and the error is measured on)."""
    if "education" not in table:  # already flags
        return table.drop(columns=[CLASS]).astype(bool)
    flags = table[["age>37", "capital-gain>0", "capital-loss>0", "female", "hours>40"]].astype(bool)
    cats = {c: pd.Categorical(table[c].astype(object), categories=list(GROUPS[c])) for c in GROUPS}
    hot = pd.get_dummies(pd.DataFrame(cats), prefix_sep="=").astype(bool)
    return pd.concat([flags, hot.drop(columns=DROPPED)], axis=1)


def fit_instance(adult: pd.DataFrame, seed: int, rows: int, trees: int, bootstrap: bool = False) -> tuple[pd.DataFrame, Any, Any]:
    """ppdm's instance: the sampled rows, the fitted scikit-learn forest and ppdm's Forest of it."""
    from sklearn.ensemble import RandomForestClassifier

    data = adult.sample(rows, random_state=seed).reset_index(drop=True)
    rf = RandomForestClassifier(n_estimators=trees, bootstrap=bootstrap, max_depth=None, random_state=seed)
    rf.fit(dummies(data), data[CLASS])
    return data, rf, forest_from_sklearn(rf, data, prefix_sep="=")


def instance(adult: pd.DataFrame, seed: int, rows: int, trees: int, bootstrap: bool = False):
    data, _, forest = fit_instance(adult, seed, rows, trees, bootstrap)
    return data, forest


PAPER_CLASS = "income"
PAPER_GROUP = "education"  # the one exclusivity group DRAFT's experiments give it on Adult (datasets_infos.py)


@dataclass
class Case:
    """One instance: the forest both attacks get, the binary inputs it was fitted on, and how to
    read ppdm's reconstruction as those inputs."""

    rf: Any  # the fitted scikit-learn forest, given to DRAFT as is
    forest: Any  # ppdm's Forest of the same estimator
    truth: pd.DataFrame  # the training rows' binary inputs, in the estimator's column order
    inputs: Any  # ppdm's reconstructed table -> the same binary inputs
    groups: list[list[int]]  # exclusivity groups (input column indices) given to DRAFT
    check: str = ""  # the forest against DRAFT's saved values (paper instances)


def ppdm_case(adult: pd.DataFrame, seed: int, rows: int, trees: int, bootstrap: bool) -> Case:
    """ppdm's instance; DRAFT gets the groups whose dummies always hold exactly one 1."""
    data, rf, forest = fit_instance(adult, seed, rows, trees, bootstrap)
    truth = dummies(data)
    exact = ("education", "occupation") if "education" in adult else ()
    groups = [[i for i, c in enumerate(truth.columns) if c.startswith(f"{g}=")] for g in exact]
    return Case(rf, forest, truth, dummies, groups)


def paper_case(draft: Path, seed: int, rows: int, trees: int, bootstrap: bool) -> Case:
    """DRAFT's own instance (its data/adult.csv and data_extraction_from_rf_experiments.py)."""
    from sklearn.ensemble import RandomForestClassifier

    whole = pd.read_csv(draft / "data" / "adult.csv")
    df = whole.sample(n=1500 if rows == 100 else len(whole), random_state=seed, ignore_index=True)
    X, y = df.drop(columns=[PAPER_CLASS]), df[PAPER_CLASS]
    # its train_test_split(shuffle=False): the first rows train, the rest test
    X_train, y_train, X_test, y_test = X.iloc[:rows], y.iloc[:rows], X.iloc[rows:], y.iloc[rows:]
    rf = RandomForestClassifier(max_depth=None, n_estimators=trees, bootstrap=bootstrap, random_state=seed).fit(X_train, y_train)
    table = paper_table(X_train, y_train)
    forest = forest_from_sklearn(rf, table, prefix_sep="_", class_attribute=PAPER_CLASS)
    columns = list(X.columns)
    groups = [[i for i, c in enumerate(columns) if c.startswith(f"{PAPER_GROUP}_")]]
    check = paper_check(draft, seed, rows, trees, bootstrap, rf, (X_train, y_train, X_test, y_test))
    truth = X_train.astype(bool).reset_index(drop=True)
    return Case(rf, forest, truth, lambda d: paper_inputs(d, columns), groups, check)


def paper_table(X: pd.DataFrame, y: pd.Series) -> pd.DataFrame:
    """DRAFT's binary columns as ppdm's table: the education dummies as one categorical column
    (the one exclusivity group DRAFT is told), every other input an independent flag."""
    edu = [c for c in X.columns if c.startswith(f"{PAPER_GROUP}_")]
    values = [c[len(PAPER_GROUP) + 1 :] for c in edu]
    table = X.drop(columns=edu).astype(bool).reset_index(drop=True)
    table[PAPER_GROUP] = pd.Categorical.from_codes(X[edu].to_numpy().argmax(axis=1), categories=values)
    table[PAPER_CLASS] = y.to_numpy()
    return table


def paper_inputs(table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """A table of :func:`paper_table`'s form back as DRAFT's binary columns (an attribute no tree
    splits on, absent from a reconstruction, reads as 0)."""
    out = {}
    for c in columns:
        if c.startswith(f"{PAPER_GROUP}_"):
            out[c] = table[PAPER_GROUP].astype(object).to_numpy() == c[len(PAPER_GROUP) + 1 :]
        else:
            out[c] = table[c].to_numpy(dtype=bool) if c in table else np.zeros(len(table), dtype=bool)
    return pd.DataFrame(out)


def paper_check(draft: Path, seed: int, rows: int, trees: int, bootstrap: bool, rf: Any, split: tuple) -> str:
    """The forest's train/test accuracy and depth beside the ones DRAFT's result file saved."""
    X_train, y_train, X_test, y_test = split
    got = (rf.score(X_train, y_train), rf.score(X_test, y_test), max(t.tree_.max_depth for t in rf.estimators_))
    text = f"forest: train accuracy {got[0]:.4f}, test {got[1]:.4f}, depth {got[2]}"
    if rows == 100:
        name = f"results/results_cp-sat/adult_{trees}_None_{seed}_bagging-{bootstrap}_cp-sat.json"
    else:
        name = f"results/results_bench_scalability/adult_{trees}_None_{seed}_bagging-{bootstrap}_bench_scalability_{rows}.json"
    path = draft / name
    if not path.exists():
        return text + "; DRAFT saved no result for this instance"
    v = json.loads(path.read_text())["values"]
    saved = (v["accuracy train"], v["accuracy test"], v["real_max_depth"])
    same = np.allclose(got[:2], saved[:2]) and got[2] == saved[2]
    return text + f"; DRAFT's {name.split('/')[-1]}: {saved[0]:.4f}, {saved[1]:.4f}, {saved[2]} ({'same' if same else 'DIFFERENT'})"


def run_ppdm(case: Case, limit: float, workers: int, seed: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    res = reconstruct(case.forest, time_limit=limit, num_workers=workers, random_seed=seed)
    secs = time.perf_counter() - t0
    err = float("nan") if res.data is None else reconstruction_error(case.inputs(res.data), case.truth)
    return {"seconds": secs, "status": res.status, "error": err, "proved": res.n_proved, "undecided": res.n_undecided, "datasets": res.solutions}


def _draft_child(conn: Any, draft: Path, rf: Any, groups: list[list[int]], limit: float, workers: int, seed: int, memory_gb: float) -> None:
    """Runs in a forked process: DRAFT's own reconstruction of ``rf``, its address space capped
    at ``memory_gb`` (DRAFT builds its model in Python objects; a machine shared with others
    must not run out of memory)."""
    import contextlib
    import io
    import resource

    cap = int(memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    sys.path.insert(0, str(draft))
    try:
        from DRAFT import DRAFT  # the peer's code, from its checkout

        with contextlib.redirect_stdout(io.StringIO()):
            out = DRAFT(rf, groups).fit(bagging=bool(rf.bootstrap), method="cp-sat", timeout=limit, verbosity=False, n_jobs=workers, seed=seed)
        conn.send((str(out["status"]), float(out["duration"]), np.asarray(out["reconstructed_data"], dtype=float)))
    except MemoryError:
        conn.send((f"out of memory ({memory_gb:g} GiB cap)", float("nan"), None))
    except Exception as e:  # reported in the table, not raised: the benchmark goes on
        conn.send((f"error {type(e).__name__}: {e}", float("nan"), None))


def run_draft(draft: Path, case: Case, limit: float, workers: int, seed: int, memory_gb: float = 6.0) -> dict[str, Any]:
    """DRAFT on the same forest, in a forked child (same object, nothing written), wall time
    capped at 2 × ``limit`` (its own limit covers only the solve)."""
    ctx = mp.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_draft_child, args=(send, draft, case.rf, case.groups, limit, workers, seed, memory_gb))
    t0 = time.perf_counter()
    child.start()
    got, status = None, "killed at 2 × the limit"
    while time.perf_counter() - t0 < 2 * limit:
        if receive.poll(1.0):
            got = receive.recv()
            break
        if not child.is_alive():
            status = f"died (exit code {child.exitcode})"
            break
    secs = time.perf_counter() - t0
    if got is None:
        child.kill()
    child.join()
    if got is None:
        return {"seconds": secs, "status": status, "error": float("nan")}
    status, _, x = got
    if status not in ("OPTIMAL", "FEASIBLE"):
        return {"seconds": secs, "status": "no solution" if status == "UNKNOWN" else status, "error": float("nan")}
    found = pd.DataFrame(x.astype(bool), columns=case.truth.columns)
    return {"seconds": secs, "status": "solved", "error": reconstruction_error(found, case.truth)}


def draft_checkout(given: str | None) -> Path | None:
    """DRAFT's checkout (``--draft`` or ``$DRAFT_DIR``), or None with a message saying how to get it."""
    if not given:
        print("DRAFT not given: pass --draft DIR (or set DRAFT_DIR) to a checkout of github.com/vidalt/DRAFT; running ppdm alone")
        return None
    path = Path(given)
    if not (path / "DRAFT.py").is_file():
        print(f"no DRAFT.py in {path}: pass --draft DIR (or set DRAFT_DIR) to a checkout of github.com/vidalt/DRAFT; running ppdm alone")
        return None
    return path


def ratio(p: dict[str, Any], d: dict[str, Any] | None) -> str:
    if d is None:
        return "—"
    r = d["seconds"] / p["seconds"]
    return f"{r:.0f}×" if d["status"] == "solved" else f"> {r:.0f}×"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", choices=["ppdm", "paper"], default="ppdm", help="ppdm's Adult binarization, or DRAFT's own instances (needs --draft)")
    ap.add_argument("--seeds", type=int, default=5, help="how many seeds")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--rows", type=int, nargs="+", default=[100], help="training rows (several: a scaling run)")
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds, for ppdm and for DRAFT alike")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--binarization", choices=["grouped", "flags"], default="grouped", help="ppdm's instance only")
    ap.add_argument("--bootstrap", action="store_true", help="fit the forest with bootstrap (not the anchor)")
    ap.add_argument("--draft", default=os.environ.get("DRAFT_DIR"), help="a checkout of github.com/vidalt/DRAFT (default $DRAFT_DIR)")
    ap.add_argument("--draft-memory", type=float, default=6.0, help="GiB of address space DRAFT's process may take")
    ap.add_argument("--draft-all", action="store_true", help="run DRAFT at every size, even after it found nothing at a smaller one")
    args = ap.parse_args()
    draft = draft_checkout(args.draft)
    if args.instance == "paper" and draft is None:
        raise SystemExit("--instance paper reads DRAFT's data/adult.csv: give its checkout with --draft DIR")
    if args.instance == "ppdm":
        raw = load_dataset("adult")[0]
        adult = binarize(raw) if args.binarization == "grouped" else binarize_flags(raw)
    print(f"load average before: {os.getloadavg()}", flush=True)
    table = []
    failed: dict[int, int] = {}  # seed -> smallest size at which DRAFT found nothing
    for rows in args.rows:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            if args.instance == "paper":
                assert draft is not None
                case = paper_case(draft, seed, rows, args.trees, args.bootstrap)
                print(f"seed {seed}, {rows} rows: {case.check}", flush=True)
            else:
                case = ppdm_case(adult, seed, rows, args.trees, args.bootstrap)
            p = run_ppdm(case, args.time_limit, args.workers, seed)
            print(
                f"seed {seed}, {rows} rows, ppdm : {p['seconds']:6.1f} s  error {p['error']:.4f}  proved {p['proved']}/{rows}  "
                f"undecided {p['undecided']}  status {p['status']}  datasets found {p['datasets']}  load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
            d = None
            if draft is not None and (args.draft_all or failed.get(seed, rows + 1) > rows):
                d = run_draft(draft, case, args.time_limit, args.workers, seed, args.draft_memory)
                print(
                    f"seed {seed}, {rows} rows, DRAFT: {d['seconds']:6.1f} s  error {d['error']:.4f}  status {d['status']}  "
                    f"ratio {ratio(p, d)}  load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
                if d["status"] != "solved":
                    failed[seed] = min(failed.get(seed, rows), rows)
            elif draft is not None:
                print(f"seed {seed}, {rows} rows, DRAFT: not run (found nothing at {failed[seed]} rows)", flush=True)
            table.append((rows, seed, p, d))
    print(f"load average after: {os.getloadavg()}")
    print("\n| rows | seed | ppdm s | ppdm status | ppdm error | proved | datasets | DRAFT s | DRAFT status | DRAFT error | DRAFT s / ppdm s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for rows, seed, p, d in table:
        ds = ("—", "not run", "—") if d is None else (f"{d['seconds']:.1f}", d["status"], f"{d['error']:.4f}")
        print(
            f"| {rows} | {seed} | {p['seconds']:.1f} | {p['status']} | {p['error']:.4f} | {p['proved']}/{rows} | {p['datasets']} | "
            f"{ds[0]} | {ds[1]} | {ds[2]} | {ratio(p, d)} |"
        )


if __name__ == "__main__":
    main()
