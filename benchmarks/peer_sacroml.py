"""The black-box peer of ``bench_membership.py``: SACRO-ML's LiRA (offline) and worst-case attacks on
the same scikit-learn / XGBoost model and split, run in the interpreter that has ``sacroml``.

Run by ``bench_membership.py`` as ``PYTHON peer_sacroml.py DIR``: ``DIR`` holds the one-hot
``X_train.npy`` (members) and ``X_test.npy`` (non-members), the class codes ``y_train.npy`` and
``y_test.npy``, ``spec.json`` (the model and its parameters, the shadow models) and
``proba_test.npy`` (the benchmark's model's probabilities on the non-members, to check that the
refitted model is the same). The model is refitted here from the same parameters and seed (same
library versions: the same model); nothing is unpickled. Writes ``peer.json``: LiRA's
per-candidate scores (members first) as ``lira.npy``, the worst-case attack's ROC per repetition,
and the seconds each took.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def model(spec: dict):  # type: ignore[no-untyped-def]
    kind, params = spec["kind"], spec["params"]
    if kind == "xgboost":
        import xgboost

        return xgboost.XGBClassifier(**params)
    if kind == "lightgbm":
        import lightgbm

        return lightgbm.LGBMClassifier(**params)
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier

    if kind in ("lr", "mlp"):  # on the benchmark's standardised inputs (SACRO-ML clones a bare estimator, not a Pipeline)
        return LogisticRegression(**params) if kind == "lr" else MLPClassifier(**{**params, "hidden_layer_sizes": tuple(params["hidden_layer_sizes"])})
    learner = {"tree": DecisionTreeClassifier, "forest": RandomForestClassifier, "hgb": HistGradientBoostingClassifier, "gb": GradientBoostingClassifier}[kind]
    return learner(**params)


def main(folder: str) -> None:
    from sacroml.attacks.likelihood_attack import LIRAAttack
    from sacroml.attacks.target import Target
    from sacroml.attacks.worst_case_attack import WorstCaseAttack

    root = Path(folder)
    spec = json.loads((root / "spec.json").read_text())
    X_train, y_train = np.load(root / "X_train.npy"), np.load(root / "y_train.npy")
    X_test, y_test = np.load(root / "X_test.npy"), np.load(root / "y_test.npy")
    clf = model(spec).fit(X_train, y_train)
    same = float(np.abs(clf.predict_proba(X_test) - np.load(root / "proba_test.npy")).max())
    if (root / "held.npy").exists():  # the attacker holds these members only (the model is fitted on all)
        held = np.load(root / "held.npy")
        X_train, y_train = X_train[held], y_train[held]

    def fresh() -> Target:  # an attack recodes the target's labels in place: each attack gets its own
        return Target(model=clf, dataset_name=spec["name"], X_train=X_train, y_train=y_train.copy(), X_test=X_test, y_test=y_test.copy())

    target = fresh()
    out: dict = {"refit_max_difference": same}
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        lira = LIRAAttack(output_dir=tmp, write_report=False, n_shadow_models=spec["shadows"], mode="offline", report_individual=True)
        report = lira.attack(target)
        out["lira_seconds"] = time.perf_counter() - start
        scores = np.asarray(lira.attack_metrics[-1]["individual"]["member_prob"], dtype=float) if report else None
        if scores is not None:
            np.save(root / "lira.npy", scores)
        if spec.get("online"):
            start = time.perf_counter()
            online = LIRAAttack(output_dir=tmp, write_report=False, n_shadow_models=spec["shadows"], mode="online-carlini", report_individual=True)
            if online.attack(fresh()):
                np.save(root / "online.npy", np.asarray(online.attack_metrics[-1]["individual"]["member_prob"], dtype=float))
            out["online_seconds"] = time.perf_counter() - start
        start = time.perf_counter()
        worst = WorstCaseAttack(output_dir=tmp, write_report=False, n_reps=5, n_dummy_reps=0, reproduce_split=5)
        worst.attack(fresh())
        out["worst_seconds"] = time.perf_counter() - start
        reps = []
        for m in worst.attack_metrics:
            fpr, tpr = np.asarray(m["fpr"]), np.asarray(m["tpr"])
            reps.append({"auc": float(m["AUC"]), "fpr": fpr.tolist(), "tpr": tpr.tolist()})
        out["worst"] = reps
    (root / "peer.json").write_text(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
