"""ppdm's maximum-entropy estimate next to IBM ART's white-box decision-tree attribute inference.

Run: ``python benchmarks/bench_attacks_art.py [--datasets nursery adult] [--depths 3 5 7 none]``
(needs ``pip install adversarial-robustness-toolbox packaging``). The grid over every table,
depth, a 100-tree forest and every simpler attacker (ART's white-box with the true or the
predicted label, lifestyle, black-box; the imputation from a reference sample) is
``bench_attacks_grid.py``.

For each dataset and ``max_depth`` one scikit-learn ``DecisionTreeClassifier(random_state=0)`` is
fitted on the training rows (categorical columns as ordinal codes in category order, numeric
columns as they are), imported once into ppdm with ``tree_from_sklearn``, and attacked by

* ``ART``: ART ``AttributeInferenceWhiteBoxDecisionTree`` (``ScikitlearnDecisionTreeClassifier``
  wrapper, the attacked column as its ordinal code, ``values`` = the codes, ``y`` = the true class
  index);
* ``ART-LS``: ART ``AttributeInferenceWhiteBoxLifestyleDecisionTree`` (same, it does not use ``y``);
* ``ppdm-ME``: ppdm's estimate, ``maxent_attack`` under the threat model of ART's white-box
  setting: ``ThreatModel(sensitive=s, known=<every other feature> + <the class>, sa_published=True)``
  (the attacker knows every other input and each row's class, and the distribution of the
  sensitive attribute is published); it guesses the value of highest maximum-entropy posterior;
* ``ME-noY``: the same estimate when the attacker does not know the class (``known`` = every other
  feature only; ART has no white-box counterpart that uses the tree's class counts, ``ART-LS`` is
  the nearest);
ART gets the same priors: the empirical marginal of the sensitive attribute in the
training rows, which is also the distribution ``sa_published`` gives the maximum-entropy estimate.
Every training row is a target; accuracy is the share of rows whose sensitive value is guessed
right. ``base`` is the majority-value baseline (guess the most frequent value for everyone).
``agree`` is the share of rows on which ART and ppdm-ME guess the same value; ``1-match`` is the
share of rows for which exactly one candidate value makes the tree predict the row's class (ART's
first rule), and ``agr|1m`` the agreement of ART and ppdm-ME on those rows. ``ART✗y`` is the share
of rows where ART's guess is a value under which the tree predicts a class other than the known one
(its fallback ignores ``y``); ``p-tie`` the share where ppdm-ME's posterior has a tie at the top
(within 1e-9; ppdm then takes the first value in category order, ART the value with the most
populous leaf). Times are wall seconds of one call each (ppdm's include ``tree_from_sklearn``), in
the same process.

The script ends with the acceptance check of the estimate: on how many rows ``ppdm-ME`` ≥ ``ART``
− 0.002 and ≥ ``base`` − 0.002 (the rows that fail, if any, are listed), and, for information, how
often ``ME-noY`` ≥ ``ART-LS`` − 0.002 and ≥ ``base`` − 0.002.

ART 1.20.1 rejects ``attack_feature`` equal to the last column index (its check is
``attack_feature >= x.shape[1]`` on the reduced ``x``), so when an attacked attribute is the
table's last feature, the last non-attacked feature is moved to the end of the training columns
(Nursery: ``housing``); the same tree is then given to every attacker.

A second, small table runs ppdm's ``homogeneity_attack`` (the class as the sensitive
attribute, a different threat model that ART has no counterpart for) on the same trees.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings

import numpy as np
import pandas as pd
import sklearn
from sklearn.tree import DecisionTreeClassifier

from ppdm.attacks import homogeneity_attack
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.data.datasets import load_adult, load_nursery
from ppdm.tree import tree_from_sklearn

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ART warns at import when PyTorch / TensorFlow are absent
        import art
        from art.attacks.inference.attribute_inference import (
            AttributeInferenceWhiteBoxDecisionTree,
            AttributeInferenceWhiteBoxLifestyleDecisionTree,
        )
        from art.estimators.classification.scikitlearn import ScikitlearnDecisionTreeClassifier
except ImportError as exc:  # pragma: no cover - depends on the environment
    sys.exit(
        f"IBM ART is not importable ({exc}).\n"
        "Install it with: pip install adversarial-robustness-toolbox packaging\n"
        "(or: pip install -e '.[bench]')"
    )

SENSITIVE = {
    "nursery": ["health", "finance", "social"],
    "adult": ["race", "sex", "marital-status"],
}


def load(name: str) -> tuple[pd.DataFrame, list[str], str]:
    """The training table, the feature columns (in training order) and the class column."""
    if name == "nursery":
        df, roles = load_nursery()
        features = [c for c in df.columns if c != roles.class_attribute]
    else:
        df, roles = load_adult("train")
        features = [c for c in df.columns if c not in (roles.class_attribute, "fnlwgt")]
    # ART 1.20.1 cannot attack the last column: make the last column one that is not attacked.
    if features[-1] in SENSITIVE[name]:
        last = [f for f in features if f not in SENSITIVE[name]][-1]
        features = [*(f for f in features if f != last), last]
    return df[[*features, roles.class_attribute]].reset_index(drop=True), features, roles.class_attribute


def encode(df: pd.DataFrame, features: list[str]) -> np.ndarray:
    """Ordinal codes (category order) for categorical columns, numeric columns as they are."""
    cols = [
        df[c].cat.codes.to_numpy(dtype=float) if isinstance(df[c].dtype, pd.CategoricalDtype) else df[c].to_numpy(dtype=float)
        for c in features
    ]
    return np.column_stack(cols)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def candidate_predictions(est: DecisionTreeClassifier, X: np.ndarray, j: int, k: int) -> np.ndarray:
    """``(n, k)``: the tree's predicted class index with column ``j`` set to each code 0..k-1."""
    out = np.empty((len(X), k), dtype=np.intp)
    for v in range(k):
        xv = X.copy()
        xv[:, j] = v
        out[:, v] = est.predict_proba(xv).argmax(axis=1)
    return out


def art_rule(
    est: DecisionTreeClassifier, X: np.ndarray, j: int, y: np.ndarray, priors: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ART's white-box rule, vectorised (to check our reading of it); the 1-match mask; the candidate predictions.

    Exactly one candidate value makes the tree predict ``y`` → that value; otherwise the value
    maximising ``n_node_samples(leaf(x, v)) · prior(v)``, whatever class that leaf predicts.
    """
    k = len(priors)
    pred = candidate_predictions(est, X, j, k)
    leaf_n = np.empty((len(X), k))
    for v in range(k):
        xv = X.copy()
        xv[:, j] = v
        leaf_n[:, v] = est.tree_.n_node_samples[est.apply(xv)]
    match = pred == y[:, None]
    one = match.sum(axis=1) == 1
    fallback = (leaf_n * priors[None, :]).argmax(axis=1)  # ignores y
    return np.where(one, match.argmax(axis=1), fallback), one, pred


def seconds(t: float, digits: int) -> str:
    return f"{'-':>7s}" if np.isnan(t) else f"{t:7.{digits}f}"


def accuracy(acc: float, skipped: bool = False) -> str:
    if skipped:
        return f"{'-':>7s}"
    return f"{'fail':>7s}" if np.isnan(acc) else f"{acc:7.4f}"


def depth_label(d: int | None) -> str:
    return "None" if d is None else str(d)


#: Accuracies closer than this count as a tie in the acceptance check.
TIE = 0.002


def maxent_guess(
    est: DecisionTreeClassifier, df: pd.DataFrame, features: list[str], cls: str, s: str, class_known: bool
):
    """ppdm's maximum-entropy estimate of ``s`` in ART's white-box setting (the class known or not)."""
    tree = tree_from_sklearn(est, df[features], feature_names=features, class_attribute=cls)
    known = tuple(f for f in features if f != s) + ((cls,) if class_known else ())
    threat = ThreatModel(sensitive=s, known=known, sa_published=True)
    return maxent_attack(tree, df[[*features, cls]], threat=threat)


def check(rows: list[dict], ours: str, theirs: str, label: str = "check") -> list[str]:
    """Lines saying on how many rows ``ours`` is ≥ ``theirs`` and ≥ the baseline (within ``TIE``)."""
    failing = [
        r for r in rows
        if not (r[ours] >= r[theirs] - TIE and r[ours] >= r["base"] - TIE)  # NaN (a failed run) fails
    ]
    lines = [f"{label}: {ours} >= {theirs} - {TIE} and >= base - {TIE} on {len(rows) - len(failing)}/{len(rows)} rows"]
    for r in failing:
        lines.append(f"  FAILS: {r['data']} {r['sensitive']} depth {r['depth']}: {ours} {r[ours]:.4f}, "
                     f"{theirs} {r[theirs]:.4f}, base {r['base']:.4f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=sorted(SENSITIVE), default=["nursery", "adult"])
    parser.add_argument("--depths", nargs="+", default=["3", "5", "7", "none"], help="max_depth values; 'none' = unlimited")
    parser.add_argument("--no-lifestyle", action="store_true", help="skip ART's lifestyle attack (it takes about 2× the time)")
    args = parser.parse_args()
    depths = [None if d.lower() == "none" else int(d) for d in args.depths]

    print(f"python {platform.python_version()}, scikit-learn {sklearn.__version__}, ART {art.__version__}, "
          f"numpy {np.__version__}, pandas {pd.__version__}, {platform.machine()}")
    header = (f"{'data':8s} {'sensitive':14s} {'depth':>5s} {'leaves':>6s} {'k':>2s} {'base':>6s} "
              f"{'ART':>7s} {'ART-LS':>7s} {'ppdm-ME':>7s} {'ME-noY':>7s} "
              f"{'agree':>6s} {'1-match':>7s} {'agr|1m':>6s} {'ART✗y':>6s} {'p-tie':>6s} "
              f"{'ART s':>7s} {'LS s':>7s} {'ME s':>7s} {'noY s':>7s}")
    rows: list[str] = []
    results: list[dict] = []
    homogeneity: list[str] = []
    failures: list[str] = []
    rule_checks: list[float] = []
    datasets: list[str] = []
    for name in args.datasets:
        df, features, cls = load(name)
        X = encode(df, features)
        datasets.append(f"{name}: {len(df):,} training rows, {len(features)} features ({', '.join(features)}); "
                        f"attacked: {', '.join(SENSITIVE[name])}")
        print(datasets[-1], file=sys.stderr, flush=True)
        for d in depths:
            est = DecisionTreeClassifier(max_depth=d, random_state=0).fit(X, df[cls])
            y_index = pd.Index(est.classes_).get_indexer(df[cls])
            tree, t_import = timed(lambda: tree_from_sklearn(est, df[features], feature_names=features, class_attribute=cls))
            if not (tree.apply(df[features]) == est.apply(X)).all():
                failures.append(f"{name} depth {depth_label(d)}: ppdm routes some rows to other leaves than scikit-learn")

            h, t_h = timed(lambda: homogeneity_attack(tree, df))
            hs = h.summary()
            base_cls = df[cls].value_counts(normalize=True).max()
            homogeneity.append(
                f"{name:8s} {depth_label(d):>5s} {est.tree_.n_leaves:6d} {hs['homogeneous_leaves']:6d} "
                f"{hs['exposed_records']:8d} {hs['exposed_records'] / hs['records']:7.4f} "
                f"{base_cls:6.4f} {hs['attacker_accuracy']:6.4f} {t_h:7.3f}"
            )

            for s in SENSITIVE[name]:
                j = features.index(s)
                categories = list(df[s].cat.categories)
                k = len(categories)
                truth = df[s].cat.codes.to_numpy()
                priors = np.bincount(truth, minlength=k) / len(truth)
                x_known = np.delete(X, j, axis=1)
                values = list(range(k))
                wrapper = ScikitlearnDecisionTreeClassifier(est)
                where = f"{name} {s} depth {depth_label(d)}"

                def run_art():
                    attack = AttributeInferenceWhiteBoxDecisionTree(wrapper, attack_feature=j)
                    return np.asarray(attack.infer(x_known, y_index, values=values, priors=list(priors)), dtype=float)

                def run_lifestyle():
                    attack = AttributeInferenceWhiteBoxLifestyleDecisionTree(wrapper, attack_feature=j)
                    return np.asarray(attack.infer(x_known, values=values, priors=list(priors)), dtype=float)

                def attempt(label, fn):
                    """``(output, seconds)``; a failure is reported and gives ``(None, nan)``."""
                    try:
                        return timed(fn)
                    except Exception as exc:  # report, keep going
                        failures.append(f"{where}: {label} failed: {type(exc).__name__}: {exc}")
                        return None, float("nan")

                p_art, t_art = attempt("ART white-box", run_art)
                p_ls, t_ls = (None, float("nan")) if args.no_lifestyle else attempt("ART lifestyle", run_lifestyle)
                me, t_me = attempt("ppdm maxent (class known)", lambda: maxent_guess(est, df, features, cls, s, True))
                me_noy, t_noy = attempt("ppdm maxent (class unknown)", lambda: maxent_guess(est, df, features, cls, s, False))

                def acc(pred):
                    return float("nan") if pred is None else float((np.asarray(pred) == truth).mean())

                p_me = None if me is None else me.predicted()
                r = {
                    "data": name, "sensitive": s, "depth": depth_label(d), "base": float(priors.max()),
                    "ART": acc(p_art), "ART-LS": acc(p_ls), "ppdm-ME": acc(p_me),
                    "ME-noY": acc(None if me_noy is None else me_noy.predicted()),
                }
                results.append(r)

                mine, one, pred = art_rule(est, X, j, y_index, priors)
                if p_art is not None:
                    rule_checks.append(float((mine == p_art).mean()))
                    contradicts = pred[np.arange(len(p_art)), p_art.astype(np.intp)] != y_index
                    art_x = f"{contradicts.mean():6.4f}"
                else:
                    art_x = f"{'-':>6s}"
                if p_art is not None and p_me is not None:
                    agree = f"{(p_art == p_me).mean():6.4f}"
                    agree_one = f"{(p_art == p_me)[one].mean():6.4f}" if one.any() else f"{'-':>6s}"
                else:
                    agree = agree_one = f"{'-':>6s}"
                if me is not None:
                    post = me.record_posterior()
                    tie = f"{((post >= post.max(axis=1, keepdims=True) - 1e-9).sum(axis=1) > 1).mean():6.4f}"
                else:
                    tie = f"{'-':>6s}"
                rows.append(
                    f"{name:8s} {s:14s} {depth_label(d):>5s} {est.tree_.n_leaves:6d} {k:2d} {priors.max():6.4f} "
                    f"{accuracy(r['ART'])} {accuracy(r['ART-LS'], args.no_lifestyle)} "
                    f"{accuracy(r['ppdm-ME'])} {accuracy(r['ME-noY'])} "
                    f"{agree} {one.mean():7.4f} {agree_one} {art_x} {tie} "
                    f"{seconds(t_art, 2)} {seconds(t_ls, 2)} {seconds(t_me, 2)} {seconds(t_noy, 2)}"
                )
                print("  " + rows[-1], file=sys.stderr, flush=True)

    for line in datasets:
        print(line)
    print()
    print("Attribute inference of a sensitive input (all other features known; the class too, except ME-noY "
          "and ART-LS); accuracy over all training rows")
    print(header)
    for r in rows:
        print(r)
    if rule_checks:
        print(f"vectorised re-implementation of ART's rule reproduces ART's guesses on "
              f"{min(rule_checks):.2%} (worst configuration) of rows")
    print()
    print("ppdm homogeneity attack (the class as sensitive; every feature known)")
    print(f"{'data':8s} {'depth':>5s} {'leaves':>6s} {'homog':>6s} {'exposed':>8s} {'share':>7s} {'base':>6s} {'acc':>6s} {'s':>7s}")
    for r in homogeneity:
        print(r)
    if failures:
        print()
        print("Failures:")
        for f in failures:
            print("  " + f)
    print()
    for line in check(results, "ppdm-ME", "ART"):
        print(line)
    if not args.no_lifestyle:
        for line in check(results, "ME-noY", "ART-LS", "for information (class unknown)"):
            print(line)


if __name__ == "__main__":
    main()
