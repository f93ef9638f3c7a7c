"""ppdm's reported attacker against every simpler attacker with the same knowledge, over a grid.

Run: ``python benchmarks/bench_attacks_grid.py [--datasets adult nursery bank random]
[--models 3 5 8 none rf100] [--rows 5000] [--no-lifestyle]`` (needs ``pip install -e '.[bench]'``
for IBM ART). It extends ``bench_attacks_art.py`` (one white-box attack on single trees) to the
strongest-attacker acceptance grid.

Each dataset is shuffled once (seed 0) and cut in two disjoint halves: the **training** rows (at
most ``--rows``) and a **reference** half of the same population (at most as many). For every
model — a ``DecisionTreeClassifier`` of depth 3, 5, 8 and unlimited, and a
``RandomForestClassifier(100, max_depth=8)`` — fitted on the training rows (categorical columns as
ordinal codes), and every sensitive input, the attackers are:

* ``prior``: the majority value of the training rows;
* ``imp-LR``, ``imp-GB``: the model-free imputation attacker (Jayaraman & Evans, CCS 2022): a
  logistic regression and a gradient-boosting classifier from every other input and the class to
  the sensitive input, fitted on the reference half;
* ``WB-y``: IBM ART's ``AttributeInferenceWhiteBoxDecisionTree`` given each person's true class
  (single trees only);
* ``WB-ŷ``: the same given the model's predicted label instead;
* ``LS``: ART's ``AttributeInferenceWhiteBoxLifestyleDecisionTree`` (single trees; ``--no-lifestyle``
  skips it);
* ``BB``: ART's ``AttributeInferenceBlackBox`` (random-forest attack model) trained on the
  reference half with the model's predicted label, applied to the training rows;
* ``ppdm``: what ``ppdm.audit`` reports for the attacker who knows all of that: every other input,
  the class, the model's predicted label (``outputs="label"``) and the reference sample
  (``reference=``): the strongest of its portfolio (maximum entropy with the label constraining
  each person's leaves, the likelihood rules, the imputation attacker, ...);
* ``ppdm-m``: for information, ``ppdm.audit`` with the model and the class alone (no label, no
  reference).

The acceptance check: ``ppdm`` ≥ every other column − 0.002 on every row. Accuracy is the share of
training rows whose sensitive value is guessed right. Times are wall seconds (``t-ppdm`` the whole
audit, ``t-art`` ART's attacks together), in one process; the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.data.datasets import load_adult, load_bank_loan, load_nursery
from ppdm.tree import forest_from_sklearn, tree_from_sklearn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_partial_knowledge import random_table

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ART warns at import when PyTorch / TensorFlow are absent
        import art
        from art.attacks.inference.attribute_inference import (
            AttributeInferenceBlackBox,
            AttributeInferenceWhiteBoxDecisionTree,
            AttributeInferenceWhiteBoxLifestyleDecisionTree,
        )
        from art.estimators.classification.scikitlearn import ScikitlearnDecisionTreeClassifier
except ImportError as exc:  # pragma: no cover - depends on the environment
    sys.exit(f"IBM ART is not importable ({exc}); install it with: pip install -e '.[bench]'")

SENSITIVE = {
    "adult": ["sex", "race", "marital-status"],
    "nursery": ["health", "finance", "social"],
    "bank": ["Education", "Family", "Online"],
    "random": ["c0", "c1", "c2"],
}
CLASS = {"adult": "income", "nursery": "class", "bank": "Personal Loan", "random": "y"}
#: Accuracies closer than this count as a tie in the acceptance check.
TIE = 0.002
COLUMNS = ["prior", "imp-LR", "imp-GB", "WB-y", "WB-ŷ", "LS", "BB", "ppdm"]


def load(name: str, rows: int) -> tuple[pd.DataFrame, pd.DataFrame, list[str], str]:
    """Training rows, the disjoint reference half, the feature columns (ART attacks any but the
    last: the last one is never attacked) and the class column."""
    if name == "adult":
        frame = load_adult("train")[0].drop(columns=["fnlwgt"])
    elif name == "nursery":
        frame = load_nursery()[0]
    elif name == "bank":
        path = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"
        frame = load_bank_loan(path)[0].drop(columns=["ID"])
    else:
        frame = random_table(2 * rows, 0)
    frame = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    half = min(len(frame) // 2, rows)
    train, reference = frame.iloc[:half].reset_index(drop=True), frame.iloc[half : 2 * half].reset_index(drop=True)
    target = CLASS[name]
    features = [c for c in frame.columns if c != target]
    last = [f for f in features if f not in SENSITIVE[name]][-1]
    features = [*(f for f in features if f != last), last]
    for table in (train, reference):
        for c in table.columns:
            if isinstance(table[c].dtype, pd.CategoricalDtype):
                table[c] = table[c].cat.set_categories(frame[c].cat.categories)
    return train, reference, features, target


def encode(frame: pd.DataFrame, features: list[str]) -> np.ndarray:
    cols = [frame[c].cat.codes.to_numpy(dtype=float) if isinstance(frame[c].dtype, pd.CategoricalDtype) else frame[c].to_numpy(dtype=float) for c in features]
    return np.column_stack(cols)


def codes_of(column: pd.Series) -> tuple[np.ndarray, list[float]]:
    """The sensitive column as numbers (category codes) and its values."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(dtype=float), list(range(len(column.cat.categories)))
    values = np.asarray(column, dtype=float)
    return values, sorted(np.unique(values).tolist())


def fit_model(kind: str, X: np.ndarray, y: np.ndarray):  # type: ignore[no-untyped-def]
    if kind == "rf100":
        return RandomForestClassifier(100, max_depth=8, random_state=0, n_jobs=1).fit(X, y)
    return DecisionTreeClassifier(max_depth=None if kind == "none" else int(kind), random_state=0).fit(X, y)


def imputation(train: pd.DataFrame, reference: pd.DataFrame, features: list[str], target: str, s: str) -> dict[str, float]:
    """The model-free attackers fitted on the reference half (other inputs and the class → s)."""
    inputs = [f for f in features if f != s]
    R = pd.get_dummies(reference[[*inputs, target]]).astype(float)
    T = pd.get_dummies(train[[*inputs, target]]).reindex(columns=R.columns, fill_value=0.0).astype(float)
    truth = train[s].astype(str).to_numpy()
    out = {}
    for name, est in (("imp-LR", LogisticRegression(max_iter=2000)), ("imp-GB", HistGradientBoostingClassifier(random_state=0))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(R.to_numpy(), reference[s].astype(str).to_numpy())
        out[name] = float((est.predict(T.to_numpy()) == truth).mean())
    return out


def art_attacks(est, kind: str, X: np.ndarray, Xr: np.ndarray, j: int, y: np.ndarray, truth: np.ndarray, values: list[float], priors: np.ndarray, lifestyle: bool) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """ART's attacks on the training rows (white-box on trees; black-box from the reference)."""
    out: dict[str, float] = {}
    x_wo = np.delete(X, j, axis=1)
    pred = np.searchsorted(est.classes_, est.predict(X)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind != "rf100":
            wrapped = ScikitlearnDecisionTreeClassifier(est)
            wb = AttributeInferenceWhiteBoxDecisionTree(wrapped, attack_feature=j)
            out["WB-y"] = float((np.asarray(wb.infer(x_wo, y.astype(float), values=values, priors=list(priors))).ravel() == truth).mean())
            out["WB-ŷ"] = float((np.asarray(wb.infer(x_wo, pred, values=values, priors=list(priors))).ravel() == truth).mean())
            if lifestyle:
                ls = AttributeInferenceWhiteBoxLifestyleDecisionTree(wrapped, attack_feature=j)
                out["LS"] = float((np.asarray(ls.infer(x_wo, values=values, priors=list(priors))).ravel() == truth).mean())
        from art.estimators.classification.scikitlearn import SklearnClassifier

        bb = AttributeInferenceBlackBox(SklearnClassifier(est), attack_feature=j, attack_model_type="rf")
        bb.fit(Xr)
        guess = bb.infer(x_wo, pred=pred.reshape(-1, 1), values=values)
        out["BB"] = float((np.asarray(guess).ravel() == truth).mean())
    return out


def ppdm_audit(model, train: pd.DataFrame, reference: pd.DataFrame, features: list[str], target: str, s: str) -> tuple[float, float, str, float]:  # type: ignore[no-untyped-def]
    """ppdm's reported accuracy with the union of the attackers' knowledge, with the model alone,
    the attacker it reported, and the full audit's seconds."""
    known = tuple(f for f in features if f != s) + (target,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        full = ppdm.audit(model, train, ppdm.ThreatModel(sensitive=s, known=known, outputs="label"), reference=reference)
        seconds = time.perf_counter() - start
        alone = ppdm.audit(model, train, ppdm.ThreatModel(sensitive=s, known=known))
    r = full.estimate
    return r.summary()["attacker_accuracy"], alone.estimate.summary()["attacker_accuracy"], str(r.details.get("reported_attacker", r.attack)), seconds


def run(dataset: str, kind: str, s: str, args: argparse.Namespace, cache: dict) -> dict:
    train, reference, features, target = cache[dataset]
    X, Xr = encode(train, features), encode(reference, features)
    labels = train[target].astype(str).to_numpy()
    est = fit_model(kind, X, labels)
    y = np.searchsorted(est.classes_, labels)  # ART reads classes as indices of the estimator's
    ordinal = {c: list(train[c].cat.categories) for c in features if isinstance(train[c].dtype, pd.CategoricalDtype)}
    frame = train[features]
    importer = forest_from_sklearn if kind == "rf100" else tree_from_sklearn
    model = importer(est, frame, feature_names=features, y=train[target].astype(str), ordinal_categories=ordinal, class_attribute=target)
    j = features.index(s)
    truth, values = codes_of(train[s])
    priors = np.array([(truth == v).mean() for v in values])
    row: dict = {"data": dataset, "model": kind, "sensitive": s, "prior": float(priors.max())}
    row.update(imputation(train, reference, features, target, s))
    start = time.perf_counter()
    row.update(art_attacks(est, kind, X, Xr, j, y, truth, values, priors, not args.no_lifestyle))
    row["t-art"] = time.perf_counter() - start
    row["ppdm"], row["ppdm-m"], row["reported"], row["t-ppdm"] = ppdm_audit(model, train, reference, features, target, s)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=sorted(SENSITIVE), default=sorted(SENSITIVE))
    parser.add_argument("--models", nargs="+", default=["3", "5", "8", "none", "rf100"])
    parser.add_argument("--rows", type=int, default=5000, help="at most this many training rows (and as many reference rows)")
    parser.add_argument("--no-lifestyle", action="store_true")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, scikit-learn {sklearn.__version__}, ART {art.__version__}, "
          f"load {os.getloadavg()[0]:.1f}, --rows {args.rows}")
    cache = {d: load(d, args.rows) for d in args.datasets}
    shown = [c for c in COLUMNS if not (c == "LS" and args.no_lifestyle)]
    print("| data | model | sensitive | " + " | ".join(shown) + " | ppdm-m | t-art | t-ppdm | reported |")
    print("|" + "---|" * (len(shown) + 7))
    rows, failing = [], []
    for d in args.datasets:
        for kind in args.models:
            for s in SENSITIVE[d]:
                row = run(d, kind, s, args, cache)
                rows.append(row)
                cells = " | ".join("-" if c not in row else f"{row[c]:.4f}" for c in shown)
                print(f"| {d} | {kind} | {s} | {cells} | {row['ppdm-m']:.4f} | {row['t-art']:.1f} | {row['t-ppdm']:.1f} | {row['reported'][:60]} |", flush=True)
                worse = [c for c in shown if c != "ppdm" and c in row and row["ppdm"] < row[c] - TIE]
                if worse:
                    failing.append((d, kind, s, worse))
    print(f"\nppdm >= every other column - {TIE} on {len(rows) - len(failing)}/{len(rows)} rows (load {os.getloadavg()[0]:.1f})")
    for d, kind, s, worse in failing:
        print(f"  FAILS: {d} {kind} {s}: below {', '.join(worse)}")


if __name__ == "__main__":
    main()
