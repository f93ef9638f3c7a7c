"""Anchor of issue 14's "nothing known" mode: rebuild a 100-row binarized Adult training set from a
100-tree scikit-learn random forest (no bootstrap, unlimited depth), as Ferry et al. (ICML 2024)
do with DRAFT, and prove which rows every consistent dataset holds.

Per seed: 100 rows drawn from Adult (``random_state=seed``), binarized (default: 5 flags and 3
grouped categorical columns, 19 binary inputs after one-hot encoding, :func:`binarize`;
``--binarization flags``: 19 independent flags, :func:`binarize_flags`) plus the class;
``RandomForestClassifier(n_estimators=100, bootstrap=False, max_depth=None, random_state=seed)``
fitted on the 19 inputs; :func:`ppdm.exact.reconstruct.reconstruct` with 2 CP-SAT workers and a
60 s budget. Printed per seed: seconds, reconstruction error (Ferry et al.'s: share of wrong
input values after a minimum-cost matching), rows proved and undecided; and the load average.

DRAFT (the peer's code) is a GitHub repository, not a PyPI package, and cannot be installed here;
its numbers are the paper's: error 0.000-0.001 in 196-296 s on 16 threads (docs/reconstruction.md).

    PYTHONPATH=src python benchmarks/bench_reconstruct.py [--seeds 5] [--binarization flags] [--bootstrap]
"""

from __future__ import annotations

import argparse
import os
import time

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


def instance(adult: pd.DataFrame, seed: int, rows: int, trees: int, bootstrap: bool = False):
    from sklearn.ensemble import RandomForestClassifier

    data = adult.sample(rows, random_state=seed).reset_index(drop=True)
    rf = RandomForestClassifier(n_estimators=trees, bootstrap=bootstrap, max_depth=None, random_state=seed)
    rf.fit(dummies(data), data[CLASS])
    return data, forest_from_sklearn(rf, data, prefix_sep="=")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--binarization", choices=["grouped", "flags"], default="grouped")
    ap.add_argument("--bootstrap", action="store_true", help="fit the forest with bootstrap (not the anchor)")
    args = ap.parse_args()
    raw = load_dataset("adult")[0]
    adult = binarize(raw) if args.binarization == "grouped" else binarize_flags(raw)
    print(f"load average before: {os.getloadavg()}")
    for seed in range(args.seeds):
        data, forest = instance(adult, seed, args.rows, args.trees, args.bootstrap)
        t0 = time.perf_counter()
        res = reconstruct(forest, time_limit=args.time_limit, num_workers=args.workers, random_seed=seed)
        secs = time.perf_counter() - t0
        err = float("nan") if res.data is None else reconstruction_error(dummies(res.data), dummies(data))
        print(
            f"seed {seed}: {secs:6.1f} s  error {err:.4f}  proved {res.n_proved}/{args.rows}  "
            f"undecided {res.n_undecided}  status {res.status}  datasets found {res.solutions}  "
            f"load {os.getloadavg()[0]:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
