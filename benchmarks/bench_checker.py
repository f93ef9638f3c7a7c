"""SACRO-ML's structural attack beside ppdm's checker on the same models (issue 46).

Models: SACRO-ML's own example (breast cancer, ``train_test_split(test_size=0.3)``, a random
forest with ``min_samples_split=2, min_samples_leaf=1``), and on 5,000 Adult and Nursery rows
(one-hot encoded, 30 % held out, seed 0) a decision tree, a random forest of 100, XGBoost (100
rounds), histogram gradient boosting, a logistic regression, an MLP and an SVC. Both tools see
the same fitted model and the same encoded rows, with ACRO's thresholds (10 records, 10 degrees
of freedom, zeros disclosive).

Per model the table gives, for each of SACRO-ML's flags, its count (from its record-level
results: the smallest equivalence class, the records in a class with a zero probability, the
records in a class with a small group) and ppdm's (:func:`ppdm.check.check_model` under the
``acro`` preset: its finer structural classes where it reads the model white-box, its output
classes otherwise), the residual degrees of freedom, the hyperparameter and generalisation
flags, and ppdm's recommendation.

SACRO-ML runs only where it is installed (its acro dependency pins pandas below 3, so it lives in
a venv of its own: ``python3 -m venv /work/venv-sacro2 && . /work/venv-sacro2/bin/activate &&
pip install -e '.[test]' sacroml``); elsewhere its columns read "not run".

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/bench_checker.py [--only NAME] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from ppdm.check import PRESETS, check_model
from ppdm.data.datasets import load_adult, load_dataset

CLASS = "label"


def _table(name: str) -> tuple[pd.DataFrame, pd.Series]:
    if name == "cancer":
        X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        return X, y
    frame = load_adult("train")[0].drop(columns=["fnlwgt", "education-num"]) if name == "adult" else load_dataset("nursery")[0]
    frame = frame.sample(5000, random_state=0).reset_index(drop=True)
    target = "income" if name == "adult" else "class"
    y = pd.Series(pd.factorize(frame[target].astype(str), sort=True)[0], name=CLASS)
    X = pd.get_dummies(frame.drop(columns=[target]), dtype=float)
    X.columns = [str(c).replace(" ", "_").replace("<", "lt").replace(">", "gt").replace("[", "(").replace("]", ")") for c in X.columns]
    return X, y


def _models() -> dict[str, tuple[str, Callable[[], Any]]]:
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier
    from xgboost import XGBClassifier

    return {
        "cancer RF (SACRO-ML's example)": ("cancer", lambda: RandomForestClassifier(min_samples_split=2, min_samples_leaf=1, random_state=0)),
        "Adult DT": ("adult", lambda: DecisionTreeClassifier(random_state=0)),
        "Nursery DT": ("nursery", lambda: DecisionTreeClassifier(random_state=0)),
        "Adult RF100": ("adult", lambda: RandomForestClassifier(n_estimators=100, random_state=0)),
        "Nursery RF100": ("nursery", lambda: RandomForestClassifier(n_estimators=100, random_state=0)),
        "Adult XGBoost 100": ("adult", lambda: XGBClassifier(n_estimators=100, random_state=0, n_jobs=1)),
        "Adult HGB": ("adult", lambda: HistGradientBoostingClassifier(random_state=0)),
        "Adult LogisticRegression": ("adult", lambda: LogisticRegression(max_iter=2000)),
        "Adult MLP": ("adult", lambda: MLPClassifier(hidden_layer_sizes=(32,), max_iter=300, random_state=0)),
        "Adult SVC": ("adult", lambda: SVC(probability=True, random_state=0)),  # SACRO-ML reads predict_proba
    }


def _ppdm(model: Any, train: pd.DataFrame, test: pd.DataFrame) -> dict[str, Any]:
    start = time.perf_counter()
    result = check_model(model, train, class_attribute=CLASS, holdout=test, policy="acro")
    seconds = time.perf_counter() - start
    classes = result.classes.get("structure") or result.classes["outputs"]
    f = {x.rule: x for x in result.findings}
    return {
        "classes": f"{classes['kind']} {classes['classes']:,}", "k": classes["k"], "below": classes["people_below"],
        "zeros": classes["people_with_zeros"], "small": classes["people_in_small_groups"],
        "outputs_k": result.classes["outputs"]["k"], "outputs_zeros": result.classes["outputs"]["people_with_zeros"],
        "dof": f["residual_dof"].value, "hyper": f["hyperparameters"].state, "gap": f["generalisation_gap"].value,
        "decision": result.decision, "seconds": seconds,
    }  # fmt: skip


def _sacro(model: Any, X_train: pd.DataFrame, y_train: pd.Series, X_test: pd.DataFrame, y_test: pd.Series) -> dict[str, Any] | None:
    """SACRO-ML's structural attack on the same fitted model (``None`` where it is not installed)."""
    try:
        from sacroml.attacks.structural_attack import StructuralAttack
        from sacroml.attacks.target import Target
    except ImportError:
        return None
    target = Target(model=model, dataset_name="bench", X_train=X_train.to_numpy(), y_train=y_train.to_numpy(),
                    X_test=X_test.to_numpy(), y_test=y_test.to_numpy())  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        attack = StructuralAttack(output_dir=folder, write_report=False, report_individual=True)
        start = time.perf_counter()
        try:
            attack.attack(target)
        except Exception as exc:  # the peer's own failure, reported in the table
            return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"}
        seconds = time.perf_counter() - start
    if attack.results is None:
        return {"error": "not attackable"}
    r, rec = attack.results, attack.record_level_results
    k = np.asarray(rec.k_anonymity)
    return {
        "k": int(k.min()), "below": int((k < attack.THRESHOLD).sum()), "zeros": int(np.sum(rec.class_disclosure)),
        "small": int(np.sum(rec.smallgroup_risk)), "dof_risk": bool(r.dof_risk), "hyper_risk": bool(r.unnecessary_risk),
        "gen_risk": bool(r.gen_error_risk), "gap": float(r.generalisation_gap), "seconds": seconds,
    }  # fmt: skip


def run(only: str | None) -> list[dict[str, Any]]:
    rows, tables = [], {}
    for name, (data, make) in _models().items():
        if only and only.lower() not in name.lower():
            continue
        if data not in tables:
            X, y = tables.setdefault(data, _table(data))
        X, y = tables[data]
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
        X_train, X_test = X_train.reset_index(drop=True), X_test.reset_index(drop=True)
        y_train, y_test = y_train.reset_index(drop=True), y_test.reset_index(drop=True)
        model = make().fit(X_train, y_train)
        train, test = X_train.assign(**{CLASS: y_train.to_numpy()}), X_test.assign(**{CLASS: y_test.to_numpy()})
        row = {"model": name, "ppdm": _ppdm(model, train, test), "sacro": _sacro(model, X_train, y_train, X_test, y_test)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table of docs/checker.md (SACRO-ML's count / ppdm's)."""
    head = ("| model | ppdm's classes | smallest class (SACRO / ppdm) | records in classes < 10 | records with a zero | records in small groups "
            "| residual dof (ppdm) / SACRO dof risk | hyperparameter risk (SACRO / ppdm) | gap (SACRO KS risk / ppdm) | ppdm (acro) |")  # fmt: skip
    out = [head, "|" + "---|" * 10]
    for row in rows:
        p, s = row["ppdm"], row["sacro"]

        def pair(key: str) -> str:
            return f"{'not run' if s is None else s.get('error', 'error') if key not in s else f'{s[key]:,}'} / {p[key]:,}"

        peer = s if s is not None and "error" not in s else None
        dof = f"{p['dof']:,.0f} / {'not run' if peer is None else peer['dof_risk']}" if p["dof"] is not None else "not counted"
        hyper = f"{'not run' if peer is None else peer['hyper_risk']} / {p['hyper']}"
        gap = f"{'not run' if peer is None else peer['gen_risk']} / {p['gap']:+.3f}"
        out.append(f"| {row['model']} | {p['classes']} | {pair('k')} | {pair('below')} | {pair('zeros')} | {pair('small')} | {dof} | {hyper} | {gap} | {p['decision']} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the models whose name holds this")
    parser.add_argument("--json", help="write the rows to this JSON file")
    args = parser.parse_args()
    assert PRESETS["acro"].min_group_size == 10
    rows = run(args.only)
    print(table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
