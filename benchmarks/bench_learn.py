"""Fit time of ppdm's ID3 and C4.5 on UCI Adult next to scikit-learn's DecisionTreeClassifier.

Run: ``python benchmarks/bench_learn.py [--repeats 5]``. Everything is timed in the same process,
on the same 30,162 training rows; the median of the repeats is reported with the ratio to
scikit-learn (one-hot encoded input, encoding not timed). Targets (foundation issue): ID3 on
Adult ≤ 1 s; C4.5 ≤ 10× scikit-learn.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable

import pandas as pd
import sklearn
from sklearn.tree import DecisionTreeClassifier

from ppdm.data.datasets import load_adult
from ppdm.learn import C45Classifier, ID3Classifier


def median_seconds(fit: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    train, roles = load_adult("train")
    test, _ = load_adult("test")
    y, y_test = train[roles.class_attribute], test[roles.class_attribute]
    X = train.drop(columns=[roles.class_attribute])
    X_test = test.drop(columns=[roles.class_attribute])
    categorical = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    dummies = pd.get_dummies(X)
    dummies_test = pd.get_dummies(X_test).reindex(columns=dummies.columns, fill_value=False)
    dummies_cat = pd.get_dummies(X[categorical])
    dummies_cat_test = pd.get_dummies(X_test[categorical]).reindex(columns=dummies_cat.columns, fill_value=False)

    rows = []
    sk_all = DecisionTreeClassifier(random_state=0)
    sk_cat = DecisionTreeClassifier(criterion="entropy", random_state=0)
    id3, c45 = ID3Classifier(), C45Classifier()
    t_sk_all = median_seconds(lambda: sk_all.fit(dummies, y), args.repeats)
    t_sk_cat = median_seconds(lambda: sk_cat.fit(dummies_cat, y), args.repeats)
    t_id3 = median_seconds(lambda: id3.fit(X[categorical], y), args.repeats)
    t_c45 = median_seconds(lambda: c45.fit(X, y), args.repeats)
    rows.append(("sklearn DecisionTreeClassifier, 14 attrs one-hot", t_sk_all, 1.0, sk_all.score(dummies_test, y_test), sk_all.tree_.n_leaves))
    rows.append(("ppdm C45Classifier, 14 attrs", t_c45, t_c45 / t_sk_all, c45.score(X_test, y_test), c45.tree_.n_leaves))
    rows.append(("sklearn DecisionTreeClassifier (entropy), 8 categorical one-hot", t_sk_cat, 1.0, sk_cat.score(dummies_cat_test, y_test), sk_cat.tree_.n_leaves))
    rows.append(("ppdm ID3Classifier, 8 categorical", t_id3, t_id3 / t_sk_cat, id3.score(X_test[categorical], y_test), id3.tree_.n_leaves))

    print(f"UCI Adult, {len(X):,} training rows, {len(X_test):,} test rows; median of {args.repeats} fits")
    print(f"python {platform.python_version()}, scikit-learn {sklearn.__version__}, {platform.machine()}")
    print(f"{'learner':66s} {'fit s':>7s} {'× sklearn':>9s} {'test acc':>8s} {'leaves':>7s}")
    for name, t, ratio, acc, leaves in rows:
        print(f"{name:66s} {t:7.3f} {ratio:9.2f} {acc:8.4f} {leaves:7d}")
    print(f"targets: ID3 ≤ 1 s: {'met' if t_id3 <= 1 else 'MISSED'}; C4.5 ≤ 10× sklearn: {'met' if t_c45 <= 10 * t_sk_all else 'MISSED'}")


if __name__ == "__main__":
    main()
