"""Forest audits under partial knowledge on UCI Adult: ppdm's maximum-entropy estimate (explicit,
pooled or over a boosted model's completions) next to the prior and IBM ART's black-box attribute inference, in the same run.

Run: ``PYTHONPATH=src python benchmarks/bench_partial_knowledge.py [--quick] [--cases rf10 xgb100 ...]
[--known 3 5] [--sensitive marital-status sex] [--method audit|explicit|completions] [--rounds all first]``
(ART needs the ``bench`` extra; XGBoost and LightGBM their extras).

Setting: all 30,162 training rows of Adult, every column an input of the model (categorical ones
one-hot encoded for the libraries), ``income`` the class. The attacker knows 3 or 5 of the
demographic columns the ``census`` preset assumes public (age, education, marital-status, race,
sex, native-country, in that order, the sensitive one left out; 5 known columns *are* the census
preset for both sensitive columns), not the class, and the sensitive column's distribution
(``sa_published``). Models: ``rf10`` scikit-learn ``RandomForestClassifier(10, max_depth=10)``,
``rf100`` the same with 100 trees, ``gb100`` ``GradientBoostingClassifier(100)``, ``hgb100``
``HistGradientBoostingClassifier(max_iter=100)``, ``xgb100`` / ``lgb100`` XGBoost / LightGBM 100
rounds of depth 6 (every ``random_state=0``).

``--method audit`` runs what ``ppdm.audit`` reports by default instead: the explicit estimate
when it fits, else each tree's exact estimate pooled and restricted to each person's possible
values (``pooled``; ``ppdm.attacks.models.pooled``), and then the same audit given what ART is
given (``acc+ref``: ``reference=`` the same held-out people, ``outputs="label"``: each target's
predicted class; ``ref s`` its seconds), which reports the strongest attacker it measured.

``--method explicit``: the explicit enumeration alone (refused past its cap, a row of the table).

Columns: ``method`` (the estimate that answered), ``time s``
(``maxent_attack``, fit and import excluded), ``peak GB`` (the case's own process), ``status``
with the largest Monte-Carlo standard error of a posterior (``se``) and the rows' remaining
violation in records (``viol``), the attacker's accuracy (``acc``: the most probable value, every
record a target), the prior's (``prior``: the majority value), and ART's
``AttributeInferenceBlackBox`` (``art``: a random-forest attack model trained on a held-out 50 %
of Adult's *test* rows, from the same known columns plus the model's predicted class, which ART's
attacker is given and ppdm's is not; inferred on every training row). Each case runs in its own
process (its peak memory is its own). The load average (``uptime``) is printed beside the table:
timings on this shared 2-core machine are noisy.

``--method completions``: a boosted model read over each group's completions, every round's rows
(:mod:`ppdm.attacks.models.boosting_partial`; ``se`` its largest standard error, ``viol`` its rows'
largest violation in records); ``--reference``: the completions drawn among the held-out people's rows
too (``--reference-share``: the stratified draws' share of the base measure).

``--rounds all first``: each boosted case twice, the whole model (``all``) and its first round alone
(``first``: :func:`ppdm.tree.newton.first_rounds`, what the audit read before every round was
read); the ``rounds`` column says which, and ``read`` how many rounds the audit reported reading.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd

from limits import peak_gb  # benchmarks/limits.py, beside this script

CASES = ("rf10", "rf10nb", "rf100", "rf100nb", "gb100", "hgb100", "xgb100", "lgb100")
DATASETS = ("adult", "bank", "random")
#: Per dataset: the columns the attacker may know (the first n that are not the sensitive one) and the sensitive ones.
CENSUS = {
    "adult": ["age", "education", "marital-status", "race", "sex", "native-country"],
    "bank": ["Age", "ZIP Code", "Family", "Education", "Experience", "Online"],
    "random": ["c0", "c1", "c2", "n0", "n1", "c3"],
}
SENSITIVE = {"adult": ["marital-status", "sex"], "bank": ["Education", "Family"], "random": ["c0", "c1"]}
CLASS = {"adult": "income", "bank": "Personal Loan", "random": "y"}


def known_columns(dataset: str, sensitive: str, n: int) -> list[str]:
    return [c for c in CENSUS[dataset] if c != sensitive][:n]


def random_table(n: int, seed: int) -> pd.DataFrame:
    """A table no model was tuned on: 4 categorical and 3 numeric columns, correlated through a
    latent variable, and a noisy binary class."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    frame = {}
    for i, levels in enumerate((4, 3, 6, 5)):
        score = z[:, None] * np.linspace(-1, 1, levels)[None, :] * (1 + i / 2) + rng.gumbel(size=(n, levels))
        frame[f"c{i}"] = pd.Categorical(np.array([f"v{j}" for j in range(levels)])[score.argmax(axis=1)])
    for i in range(3):
        frame[f"n{i}"] = np.round(z * (i + 1) + rng.normal(size=n) * 2, 1)
    table = pd.DataFrame(frame)
    logit = 1.5 * z + (table["c1"] == "v2") - 0.05 * table["n2"] + rng.normal(size=n)
    table["y"] = pd.Categorical(np.where(logit > 0, "yes", "no"))
    return table


def load(dataset: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The training rows and the held-out people (ART's attack data and ppdm's reference sample)."""
    from ppdm.data.datasets import load_adult, load_bank_loan

    if dataset == "adult":
        train, _ = load_adult("train")
        test, _ = load_adult("test")
        return train.reset_index(drop=True), test.sample(frac=0.5, random_state=0).reset_index(drop=True)
    if dataset == "bank":
        from pathlib import Path

        path = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"
        frame = load_bank_loan(path)[0].drop(columns=["ID"]).sample(frac=1.0, random_state=0).reset_index(drop=True)
        half = len(frame) // 2
        return frame.iloc[:half].reset_index(drop=True), frame.iloc[half:].reset_index(drop=True)
    return random_table(5000, 0), random_table(2500, 1)


def fit(case: str, X: pd.DataFrame, y: pd.Series):  # type: ignore[no-untyped-def]
    """The library model and ppdm's import of it."""
    from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost

    D = pd.get_dummies(X).astype(float)
    codes = y.cat.codes.to_numpy()
    if case.startswith("rf"):
        from sklearn.ensemble import RandomForestClassifier

        trees, bootstrap = int(case[2:].removesuffix("nb")), not case.endswith("nb")
        est = RandomForestClassifier(trees, max_depth=10, bootstrap=bootstrap, random_state=0, n_jobs=1).fit(D, y)
        return est, D, forest_from_sklearn(est, X, y=y)
    if case == "gb100":
        from sklearn.ensemble import GradientBoostingClassifier

        est = GradientBoostingClassifier(n_estimators=100, random_state=0).fit(D, y)
        return est, D, forest_from_sklearn(est, X, y=y)
    if case == "hgb100":
        from sklearn.ensemble import HistGradientBoostingClassifier

        est = HistGradientBoostingClassifier(max_iter=100, early_stopping=False, random_state=0).fit(D, y)
        return est, D, forest_from_sklearn(est, X, y=y)
    if case == "xgb100":
        import xgboost

        est = xgboost.XGBClassifier(n_estimators=100, max_depth=6, n_jobs=1, random_state=0).fit(D, codes)
        return est, D, forest_from_xgboost(est, X, y=y)
    import lightgbm

    est = lightgbm.LGBMClassifier(n_estimators=100, max_depth=6, num_leaves=63, verbose=-1, n_jobs=1, random_state=0).fit(D, codes)
    return est, D, forest_from_lightgbm(est, X, list(D.columns), y=y)


def art_accuracy(est, D: pd.DataFrame, train: pd.DataFrame, holdout: pd.DataFrame, known: list[str], sensitive: str, target: str) -> float | None:  # type: ignore[no-untyped-def]
    """ART's black-box attribute inference from the known columns and the model's prediction."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from art.attacks.inference.attribute_inference import AttributeInferenceBlackBox
            from art.estimators.classification import BlackBoxClassifier
    except ImportError:
        return None

    def encode(frame: pd.DataFrame) -> np.ndarray:
        cols = [frame[c].cat.codes.to_numpy() if isinstance(frame[c].dtype, pd.CategoricalDtype) else frame[c].to_numpy() for c in [*known, sensitive]]
        return np.column_stack(cols).astype(float)

    Dh = pd.get_dummies(holdout.drop(columns=[target])).reindex(columns=D.columns, fill_value=0.0).astype(float)
    pred_h = np.asarray(est.predict_proba(Dh))
    pred_t = np.asarray(est.predict_proba(D))
    queue = [pred_h]

    def predict(x: np.ndarray) -> np.ndarray:  # ART asks once, for the held-out rows, in order
        return queue.pop(0) if queue and len(queue[0]) == len(x) else np.zeros((len(x), pred_h.shape[1]))

    xh = encode(holdout)
    wrapper = BlackBoxClassifier(predict, input_shape=(xh.shape[1],), nb_classes=pred_h.shape[1])
    attack = AttributeInferenceBlackBox(wrapper, attack_feature=len(known), attack_model_type="rf")
    attack.fit(xh)
    xt = encode(train)
    values = sorted(np.unique(xh[:, -1]).tolist())
    guess = attack.infer(np.delete(xt, len(known), axis=1), pred=pred_t.argmax(axis=1).reshape(-1, 1).astype(float), values=values)
    return float((np.asarray(guess).ravel() == xt[:, -1]).mean())


def run_case(dataset: str, case: str, n_known: int, sensitive: str, args: argparse.Namespace) -> dict:
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.models.maxent import maxent_attack

    train, holdout = load(dataset)
    target = CLASS[dataset]
    X, y = train.drop(columns=[target]), train[target]
    est, D, forest = fit(case, X, y)
    mode = args.rounds[0] if isinstance(args.rounds, list) else args.rounds
    if mode == "first" and forest.combine == "additive":
        from ppdm.tree.newton import first_rounds

        forest = first_rounds(forest, 1)
    known = known_columns(dataset, sensitive, n_known)
    threat = ThreatModel(sensitive=sensitive, known=tuple(known), sa_published=True)
    start = time.perf_counter()
    row: dict = {"dataset": dataset, "case": case, "known": n_known, "sensitive": sensitive, "rounds": mode}
    try:
        if args.method == "completions":  # every round read over each group's completions (ppdm.attacks.models.boosting_partial)
            from ppdm.attacks.models.boosting_partial import completions_attack

            resolved = threat.resolve(train, forest.class_attribute, splits=forest.split_attributes)
            from ppdm.attacks.models.boosting_partial import CompletionOptions

            options = CompletionOptions(reference_share=args.reference_share)
            result = completions_attack(forest, train, resolved, options, reference=holdout if args.reference else None)
        elif args.method == "audit":  # what ppdm.audit reports by default: explicit, else possible values
            import ppdm

            result = ppdm.audit(forest, train, threat).estimate
            assert result is not None
        else:
            result = maxent_attack(forest, train, threat=threat)
    except Exception as exc:  # a refusal is a row of the table
        row.update({"status": f"refused: {str(exc)[:60]}", "time": time.perf_counter() - start, "peak_gb": peak_gb()})
        return row
    row["time"] = time.perf_counter() - start  # ppdm.audit includes its checks of the table
    row["peak_gb"] = peak_gb()
    truth = result.true_codes
    assert truth is not None
    row.update({
        "method": "possible" if result.attack == "possible values" else result.details.get("method", "explicit"),
        "pooled": result.details.get("trees_pooled"),
        "certain": int(result.summary()["certain_records"]),
        "status": result.details["status"],
        "se": result.details.get("max_std_error"),  # completions: also the rows' violation in records (viol)
        "viol": result.details.get("max_violation_records", float(result.details.get("max_violation") or 0.0) * len(train)),
        "acc": float((result.predicted() == truth).mean()),
        "prior": float(np.bincount(truth).max() / len(truth)),
        "read": rounds_read(result.details),
    })
    row["art"] = art_accuracy(est, D, train, holdout, known, sensitive, target)
    if args.method == "audit":  # ppdm given what ART is given: the same held-out people and each target's predicted label
        import ppdm

        start = time.perf_counter()
        same = ppdm.ThreatModel(sensitive=sensitive, known=tuple(known), sa_published=True, outputs="label")
        both = ppdm.audit(forest, train, same, reference=holdout).estimate
        assert both is not None
        row["time_ref"] = time.perf_counter() - start
        row["acc_ref"] = float((both.predicted() == truth).mean())
        row["reported"] = both.details.get("reported_attacker")
    return row


def rounds_read(details: dict) -> int | None:
    """How many boosting trees the audit says it read (``None``: not a boosted model's account)."""
    rounds = details.get("rounds")
    return int(rounds["used"]) if isinstance(rounds, dict) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--known", nargs="+", type=int, default=[3, 5])
    parser.add_argument("--datasets", nargs="+", default=["adult"], choices=DATASETS)
    parser.add_argument("--sensitive", nargs="+", help="default: the dataset's two sensitive columns")
    parser.add_argument("--method", default="audit", choices=["audit", "explicit", "completions"])
    parser.add_argument("--reference", action="store_true", help="--method completions: completions drawn among the held-out people's too")
    parser.add_argument("--reference-share", type=float, default=0.5, help="--reference: the stratified draws' share of the base measure")
    parser.add_argument("--rounds", nargs="+", default=["all"], choices=["all", "first"], help="boosted models: every round, or the first alone")
    parser.add_argument("--quick", action="store_true", help="rf10 and xgb100, 3 known columns, marital-status")
    parser.add_argument("--one", nargs=4, metavar=("DATASET", "CASE", "KNOWN", "SENSITIVE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one[0], args.one[1], int(args.one[2]), args.one[3], args), default=float))
        return
    if args.quick:
        args.datasets, args.cases, args.known, args.sensitive = ["adult"], ["rf10", "xgb100"], [3], ["marital-status"]
    print(os.popen("uptime").read().strip())
    head = f"{'data':6} {'case':8} {'rounds':6} {'read':>4} {'known':>5} {'sensitive':15} {'method':9} {'time s':>8} {'peak GB':>7} {'status':10} {'se':>7} {'viol':>7} {'acc':>6} {'prior':>6} {'art':>6} {'certain':>7} {'ref s':>6} {'acc+ref':>7}"
    print(head)
    passthrough = ["--method", args.method, *(["--reference"] if args.reference else []), "--reference-share", str(args.reference_share)]
    grid = [
        (d, c, r, k, s) for d in args.datasets for c in args.cases for k in args.known for s in (args.sensitive or SENSITIVE[d])
        for r in (args.rounds if c.startswith(("gb", "hgb", "xgb", "lgb")) else ["all"])
    ]
    for dataset, case, rounds, n_known, sensitive in grid:
        out = subprocess.run(
            [sys.executable, __file__, *passthrough, "--rounds", rounds, "--one", dataset, case, str(n_known), sensitive],
            capture_output=True, text=True,
        )
        try:
            r = json.loads(out.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            print(f"{dataset:6} {case:8} {rounds:6} {'':>4} {n_known:>5} {sensitive:15} failed: {out.stderr.strip().splitlines()[-1:]}")
            continue

        def num(key: str, fmt: str) -> str:
            v = r.get(key)
            return format(v, fmt) if isinstance(v, (int, float)) else "-"

        print(
            f"{dataset:6} {case:8} {rounds:6} {num('read', '4d')} {n_known:>5} {sensitive:15} {r.get('method', '-'):9} {num('time', '8.1f')} {num('peak_gb', '7.2f')} "
            f"{str(r.get('status'))[:10]:10} {num('se', '7.4f')} {num('viol', '7.2f')} {num('acc', '6.3f')} {num('prior', '6.3f')} {num('art', '6.3f')} {num('certain', '7d')} {num('time_ref', '6.1f')} {num('acc_ref', '7.3f')}",
            flush=True,
        )
    print(os.popen("uptime").read().strip())


if __name__ == "__main__":
    main()
