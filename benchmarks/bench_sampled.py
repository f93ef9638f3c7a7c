"""Does the sampled forest estimate earn its place? It against the explicit and pooled estimates on
Adult forests, in the same run, within the explicit estimate's cap and beyond it.

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/bench_sampled.py [--rows 3000 10000]
[--trees 3 10 30] [--depth 8] [--unknown occupation workclass] [--methods explicit pooled sampled auto]``

Setting: the first ``rows`` rows of Adult's training table, the model's inputs ``age``,
``education``, ``race``, ``sex``, ``marital-status``, ``relationship`` (class ``income``);
scikit-learn ``RandomForestClassifier(trees, max_depth=depth, random_state=0)`` (bootstrap: the
multiplicities are redrawn from the trees' seeds, so groups are (known values, multiplicity
vector) pairs). The attacker knows the 3 census columns ``age``, ``education``, ``race`` and the
published distribution of ``marital-status``, which they want; ``sex``, ``relationship``, the class
and the secret are unknown (7 × 2 × 6 cells routed per group and tree).

The three estimates of the same maximum-entropy question (paper 000 §3–4 over every tree's
leaves): ``explicit`` enumerates every group's joint routes through all trees and solves exactly
(:mod:`ppdm.attacks.models.explicit`; refuses beyond ``ForestAuditOptions.max_routed``, 4·10⁷
routes by default); ``sampled`` samples the trees as factors (:mod:`ppdm.attacks.models.sampled`,
``SampledOptions`` defaults); ``pooled`` pools each tree's exact estimate within each person's
possible values, what ``ppdm.audit`` answers past the cap (:mod:`ppdm.attacks.models.pooled`).
``prior``: the published distribution alone (the baseline). ``--unknown``: more model inputs the
attacker does not know (``occupation workclass``: 14 × 7 more cells, beyond the explicit cap from
10 trees of depth 10 on 3,000 rows, where ``explicit`` refuses, said in the table).

Beside each of ``pooled`` and ``sampled``, ``…, reported``: the attacker ``ppdm.audit`` reports with
that estimate (the strongest of its portfolio, :func:`ppdm.pipeline.baselines.baselines`: the
likelihood rules, the prior and ``imputation``, the model-free attacker fitted on a reference
sample of as many other Adult people from row :data:`REFERENCE_START`, restricted to or pooled
with the estimate); ``ppdm.audit auto``: what ``ppdm.audit(..., reference=sample)`` reports with
the default method (past the cap the pooled estimate), timed whole.

Columns: ``s`` seconds (fit excluded), ``× explicit`` the time over the explicit estimate's in the
same run, ``acc`` the attacker's accuracy (most probable value; every record), ``KL truth``
Σ_q P(q)·KL(truth_q ‖ attacker_q) over the groups of known values (nats; the attacker's
distribution of a group: the mean of its records'), ``KL explicit`` the mean over records of
KL(explicit ‖ method) (how far from the optimum it estimates). The load average is printed beside
the table: timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

FEATURES = ["age", "education", "race", "sex", "marital-status", "relationship"]
KNOWN = ("age", "education", "race")
SENSITIVE = "marital-status"
CLASS = "income"
#: The first row of the model-free attacker's reference sample (past every audited table's rows).
REFERENCE_START = 20_000
FLOOR = 1e-12


def forest_case(rows: int, trees: int, depth: int) -> tuple[pd.DataFrame, object]:
    """The first ``rows`` Adult training rows (the model's columns, :data:`FEATURES`) and the forest fitted on them."""
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.data.datasets import load_adult
    from ppdm.tree import forest_from_sklearn

    frame, _ = load_adult("train")
    table = frame[[*FEATURES, CLASS]].iloc[:rows].reset_index(drop=True)
    X = table[FEATURES]
    D = pd.get_dummies(X, dtype=float)
    est = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0, n_jobs=1).fit(D, table[CLASS])
    return table, forest_from_sklearn(est, X, y=table[CLASS])


def estimate(method: str, forest: object, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, float, str, object]:
    """Per record the attacker's posterior, the true codes, the seconds, the status and the result."""
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.models.explicit import ForestAuditOptions
    from ppdm.attacks.models.maxent import maxent_attack
    from ppdm.attacks.models.pooled import pooled_forest_attack
    from ppdm.attacks.models.possible import possible_values
    from ppdm.maxent.constraints.tree_constraints import Knowledge

    threat = ThreatModel(sensitive=SENSITIVE, known=KNOWN, sa_published=True)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "pooled":
            resolved = threat.resolve(table, forest.class_attribute, splits=forest.split_attributes)  # type: ignore[attr-defined]
            possible = possible_values(forest, table, list(KNOWN), SENSITIVE).possible  # type: ignore[arg-type]
            result = pooled_forest_attack(forest, table, resolved, Knowledge(sa=True), possible=possible)  # type: ignore[arg-type]
        else:
            result = maxent_attack(forest, table, threat=threat, forest_options=ForestAuditOptions(method))  # type: ignore[arg-type]
    seconds = time.perf_counter() - start
    assert result.true_codes is not None
    return result.record_posterior(), np.asarray(result.true_codes), seconds, str(result.details.get("status")), result


def kl_truth(posterior: np.ndarray, truth: np.ndarray, table: pd.DataFrame) -> float:
    """Σ_q P(q)·KL(truth_q ‖ mean of the attacker's posteriors over q's records), in nats."""
    group = table.groupby(list(KNOWN), observed=True).ngroup().to_numpy()
    n_groups, k = int(group.max()) + 1, posterior.shape[1]
    size = np.bincount(group, minlength=n_groups).astype(float)
    true = np.zeros((n_groups, k))
    np.add.at(true, (group, truth), 1.0)
    attacker = np.zeros((n_groups, k))
    np.add.at(attacker, group, posterior)
    true /= size[:, None]
    attacker /= size[:, None]
    terms = np.where(true > 0, true * np.log(np.maximum(true, FLOOR) / np.maximum(attacker, FLOOR)), 0.0)
    return float((size / size.sum()) @ terms.sum(axis=1))


def kl_records(reference: np.ndarray, posterior: np.ndarray) -> float:
    """The mean over records of KL(reference ‖ posterior), in nats."""
    terms = np.where(reference > 0, reference * np.log(np.maximum(reference, FLOOR) / np.maximum(posterior, FLOOR)), 0.0)
    return float(terms.sum(axis=1).mean())


def reference_sample(rows: int) -> pd.DataFrame:
    """Other people of Adult's training table (from row :data:`REFERENCE_START`), the model-free attacker's sample."""
    from ppdm.data.datasets import load_adult

    frame, _ = load_adult("train")
    return frame[[*FEATURES, CLASS]].iloc[REFERENCE_START : REFERENCE_START + rows].reset_index(drop=True)


def reported(result: object, forest: object, table: pd.DataFrame, sample: pd.DataFrame) -> tuple[object, object]:
    """The attacker ``ppdm.audit`` reports with ``result`` as its estimate (the strongest of its
    portfolio, the model-free attacker fitted on ``sample`` among them) and that model-free attacker."""
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.pipeline.baselines import audited_model, baselines, coarser

    resolved = ThreatModel(sensitive=SENSITIVE, known=KNOWN, sa_published=True).resolve(table, forest.class_attribute, splits=forest.split_attributes)  # type: ignore[attr-defined]
    published = audited_model(forest, resolved)  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return baselines(result, table, sample, None, published, resolved, coarser(published, table, resolved, True))  # type: ignore[arg-type]


def audit_auto(forest: object, table: pd.DataFrame, sample: pd.DataFrame) -> tuple[object, float]:
    """What ``ppdm.audit`` reports with method ``auto`` (the reported attacker) and its seconds."""
    import ppdm
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.pipeline.options import AuditOptions

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = ppdm.audit(forest, table, ThreatModel(sensitive=SENSITIVE, known=KNOWN, sa_published=True), reference=sample, progress=False, options=AuditOptions(method="auto"))
    return done.estimate, time.perf_counter() - start


def measured(row: dict, posterior: np.ndarray, truth: np.ndarray, table: pd.DataFrame) -> dict:
    row.update({"acc": float((posterior.argmax(axis=1) == truth).mean()), "kl_truth": kl_truth(posterior, truth, table)})
    return row


def run(rows: int, trees: int, depth: int, methods: list[str], show: Callable[[dict], None] = lambda row: None) -> list[dict]:
    """The table's rows of one case, each handed to ``show`` once measured (the last row may gain its ratio after)."""
    from ppdm.errors import RoutingLimitError

    table, forest = forest_case(rows, trees, depth)
    sample = reference_sample(rows)
    out = Shown(show)
    reference: tuple[np.ndarray, float] | None = None
    truth = None
    imputed = None
    for method in methods:
        row: dict = {"rows": rows, "trees": trees, "method": method}
        if method == "auto":
            found, seconds = audit_auto(forest, table, sample)
            attacker = str(found.details.get("reported_attacker", found.attack))  # type: ignore[attr-defined]
            out.append(measured({**row, "method": "ppdm.audit auto", "status": f"reports {attacker}"[:60], "s": seconds}, found.record_posterior(), np.asarray(found.true_codes), table))  # type: ignore[attr-defined]
            continue
        try:
            posterior, truth, seconds, status, result = estimate(method, forest, table)
        except Exception as exc:  # a refusal is a row of the table
            row.update({"status": f"refused ({type(exc).__name__})" if isinstance(exc, RoutingLimitError) else f"refused: {str(exc)[:70]}"})
            out.append(row)
            continue
        out.append(measured({**row, "s": seconds, "status": status}, posterior, truth, table))
        if method == "explicit":
            reference = (posterior, seconds)
        if reference is not None:
            out[-1]["ratio"] = seconds / reference[1]
            out[-1]["kl_explicit"] = kl_records(reference[0], posterior)
        if method in ("pooled", "sampled"):
            strongest, imputed = reported(result, forest, table, sample)
            attacker = str(strongest.details.get("reported_attacker", strongest.attack))  # type: ignore[attr-defined]
            out.append(measured({**row, "method": f"{method}, reported", "status": f"reports {attacker}"[:60]}, strongest.record_posterior(), truth, table))  # type: ignore[attr-defined]
    if imputed is not None and truth is not None:
        out.append(measured({"rows": rows, "trees": trees, "method": "imputation", "status": "baseline"}, imputed.record_posterior(), truth, table))  # type: ignore[attr-defined]
    if truth is not None:
        prior = np.bincount(truth, minlength=int(truth.max()) + 1) / len(truth)
        posterior = np.broadcast_to(prior, (len(truth), len(prior)))
        out.append({"rows": rows, "trees": trees, "method": "prior", "status": "baseline", "acc": float(prior.max()), "kl_truth": kl_truth(posterior, truth, table)})
    out.flush()
    return out


class Shown(list):
    """A list of rows that shows each row appended but the first when the next comes (it may still gain columns), the last on :meth:`flush`."""

    def __init__(self, show: Callable[[dict], None]) -> None:
        super().__init__()
        self.show = show

    def append(self, row: dict) -> None:
        if self:
            self.show(self[-1])
        super().append(row)

    def flush(self) -> None:
        if self:
            self.show(self[-1])


def cell(value: object, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def show(r: dict) -> None:
    print(
        f"| {r['rows']:,} | {r['trees']} | {r['method']} | {r['status']} | {cell(r.get('s'), '.1f')} | {cell(r.get('ratio'), '.2f')} | "
        f"{cell(r.get('acc'), '.3f')} | {cell(r.get('kl_truth'), '.4f')} | {cell(r.get('kl_explicit'), '.4f')} |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, nargs="+", default=[3000, 10000])
    parser.add_argument("--trees", type=int, nargs="+", default=[3, 10, 30])
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--unknown", nargs="*", default=[], help="more model inputs the attacker does not know (e.g. occupation workclass)")
    parser.add_argument("--methods", nargs="+", choices=["explicit", "pooled", "sampled", "auto"], default=["explicit", "pooled", "sampled", "auto"])
    args = parser.parse_args()
    FEATURES.extend(c for c in args.unknown if c not in FEATURES)
    print(f"load {os.getloadavg()[0]:.2f}; depth {args.depth}; inputs {', '.join(FEATURES)}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    print("| rows | trees | method | status | s | × explicit | acc | KL truth | KL explicit |")
    print("|---|---|---|---|---|---|---|---|---|")
    for rows in args.rows:
        for trees in args.trees:
            run(rows, trees, args.depth, args.methods, show)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
