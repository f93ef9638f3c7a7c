#!/usr/bin/env python
"""Reproduce paper 000 (Zhu & Du, *Understanding Privacy Risk of Publishing Decision Trees*,
DBSec 2010), §5 and Figures 3–9, with ppdm.

Setting (§5): Adult ``adult.data`` without missing values (30,162 records), Education is the class
and the sensitive attribute (16 values), the quasi-identifiers are the 8 categorical attributes
other than education (workclass, marital-status, occupation, relationship, race, sex,
native-country, income): 4,480 distinct QI values. Multiway ID3 trees (``ppdm.learn.ID3Classifier``)
with the Gini index or information gain; the attacker knows the QI part of every record and the
tree, and estimates P(SA | QI) by maximum entropy (``ppdm.audit``, the estimate alone:
``AuditOptions(baselines=False)``, with ``internal=True`` for the split choices).

Experiments (tables in ``results.md``, one PNG each):

* Fig. 3, effect of error rates: overall divergence with the error rates published vs labels
  only, Gini and IG, for a range of tree sizes (``--depths``, plus two "paper-sized" trees whose
  rate-constraint counts are close to the paper's 518 and 2,983);
* Fig. 4, selection measure: Gini vs IG at the same settings;
* Figs. 6–8, implicit information: with vs without the internal-node constraints
  (``--internal-depths``), and the top-K individual divergences (Fig. 7 table, Fig. 8 curve);
* Fig. 9, running time of the solver vs tree size: "All Included" (rates, labels, internal),
  "NoImplicit" (rates, labels), "NoErrorRate" (labels, internal);
* Example 1 (Fig. 5): the toy table D2, without and with the internal constraint.

Every experiment is run twice for the attacker's knowledge of the SA distribution: without SA
constraints (the paper's list of constraints in §5) and with them (§4.3, "if the distribution of
SA values are also published").

Run from the repository root::

    PYTHONPATH=src python experiments/maxent_tree.py                 # 5-25 min on 2 cores, with load
    PYTHONPATH=src python experiments/maxent_tree.py --quick         # < 1 min, small trees only

Writes ``results.json``, ``results.md`` and the PNGs into ``--out`` (default
``docs/maxent_tree``). See ``docs/maxent_tree.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import platform
import re
import shlex
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy
from scipy.optimize import brentq

REPO = Path(__file__).resolve().parents[1]
try:  # run with ppdm installed or PYTHONPATH=src; else fall back to the checkout's src/
    import ppdm  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(REPO / "src"))

from ppdm import Audit, AuditOptions, audit  # noqa: E402
from ppdm.attacks.core.threat import ThreatModel  # noqa: E402
from ppdm.attacks.models.maxent import UNIFORM_NOTE  # noqa: E402
from ppdm.data.datasets import load_adult  # noqa: E402
from ppdm.data.qigroups import QIGroups  # noqa: E402
from ppdm.learn import ID3Classifier  # noqa: E402
from ppdm.maxent.constraints.internal import internal_constraints  # noqa: E402
from ppdm.maxent.constraints.tree_constraints import Knowledge, tree_problem  # noqa: E402
from ppdm.maxent.solvers.nonlinear import solve_with_internal  # noqa: E402
from ppdm.maxent.solvers.solve import solve_linear  # noqa: E402
from ppdm.metrics import individual_divergence, overall_divergence, top_k_individuals  # noqa: E402
from ppdm.tree import render_tree  # noqa: E402

DEFAULT_OUT = REPO / "docs" / "maxent_tree"
CRITERIA = ("gini", "entropy")
TITLE = {"gini": "Gini", "entropy": "IG"}
N_VALUES = 16

# The paper's numbers (§5): constraint rows of its two trees; Example 1 (Fig. 5); Fig. 7's table.
PAPER_ROWS = {"gini": {"rate": 518, "label": 7770, "internal": 1097}, "entropy": {"rate": 2983, "label": 44745, "internal": 3307}}
PAPER_DATA = {"records": 30162, "qi_values": 4480, "sa_values": 16}
PAPER_FIG7 = [  # (K, difference, KL1 = with internal, KL2 = without), information gain
    (1, 1.492, 0.971, 2.463), (2, 1.371, 1.156, 2.527), (3, 1.305, 0.942, 2.247), (4, 1.304, 0.399, 1.703),
    (5, 1.262, 1.170, 2.432), (6, 1.247, 1.187, 2.435), (7, 1.197, 1.419, 2.616), (8, 1.195, 1.253, 2.448),
    (9, 1.191, 1.441, 2.632), (10, 1.144, 1.744, 2.888),
]  # fmt: skip
PAPER_FIG5 = {  # x10 x11 x20 x21 x30 x31 x40 x41, Do, Dq2, Dq3
    "SO": ([1, 0, 1, 0, 0, 1, 0, 1], None, None, None),
    "SA": ([1, 0, 0.5, 0.5, 0.5, 0.5, 0, 1], 0.231, 0.693, 0.693),
    "SB": ([1, 0, 0.815, 0.185, 0.815, 0.185, 0, 1], 0.068, 0.205, 0.205),
}
# Trees whose rate-constraint counts are close to the paper's (found by a search over
# ID3Classifier's stopping rules; the paper does not say how its trees were stopped).
PAPER_SIZED = {"gini": {"min_samples_leaf": 50}, "entropy": {"min_samples_leaf": 2}}
TOP_K_CURVE = 500
# Without SA constraints, labels + internal constraints leave the uniform estimate feasible (and
# optimal), so Fig. 9's "NoErrorRate" is also run with SA constraints, on the small trees.
NO_ERROR_RATE_SA_MAX_DEPTH = 3
# solve_with_internal's statuses: a stationary point; a feasible estimate from a solve stopped at
# max_iter or time_limit (usable, but not a local optimum); no feasible point reached.
STATIONARY = ("optimal", "local optimum")
STOPPED_FEASIBLE = ("iteration limit", "time limit")
VIOLATED = "internal constraints violated"


# --------------------------------------------------------------------------------------------
# Data, trees and one maximum-entropy run
# --------------------------------------------------------------------------------------------


def load_data() -> tuple[pd.DataFrame, list[str]]:
    df, roles = load_adult("train", sensitive="education", class_attribute="education")
    qi = [c for c in roles.quasi_identifiers if df[c].dtype == "category"]
    return df, qi


@dataclass(frozen=True)
class TreeSpec:
    criterion: str
    setting: str  # "depth" (max_depth = value) or "paper" (PAPER_SIZED)
    value: int = 0

    @property
    def params(self) -> dict[str, Any]:
        if self.setting == "depth":
            return {"max_depth": self.value}
        return dict(PAPER_SIZED[self.criterion])

    @property
    def key(self) -> str:
        return f"{self.criterion}/{self.setting}" + (f"{self.value}" if self.setting == "depth" else "")

    @property
    def label(self) -> str:
        if self.setting == "depth":
            return f"max_depth={self.value}"
        return ", ".join(f"{k}={v}" for k, v in self.params.items()) + " (paper-sized)"


@dataclass(frozen=True)
class Task:
    tree: TreeSpec
    publish: str  # "error-rates" or "labels"
    sa: bool
    internal: bool
    keep_individual: bool = False

    @property
    def name(self) -> str:
        what = {"error-rates": "rates+labels", "labels": "labels"}[self.publish]
        return f"{TITLE[self.tree.criterion]} {self.tree.label}: {what}{' +SA' if self.sa else ''}{' +internal' if self.internal else ''}"

    def cost(self) -> float:
        """A rough guess of the seconds it takes (for longest-first scheduling)."""
        if not self.internal:
            return 3.0
        if self.publish == "labels":
            return 1.0 if not self.sa else 10.0 * self.tree.value
        if self.tree.setting == "paper":
            return 2000.0 if self.tree.criterion == "entropy" else 15.0
        return 2.0 * self.tree.value**3 * (0.6 if self.sa else 1.0)


_STATE: dict[str, Any] = {}


def _worker_init(limit_threads: bool) -> None:
    if limit_threads:
        try:
            from threadpoolctl import threadpool_limits

            _STATE["limits"] = threadpool_limits(1)
        except ImportError:  # pragma: no cover
            pass


def _data() -> tuple[pd.DataFrame, list[str]]:
    if "data" not in _STATE:
        _STATE["data"] = load_data()
    return _STATE["data"]


def fit_tree(spec: TreeSpec):
    trees = _STATE.setdefault("trees", {})
    if spec not in trees:
        df, qi = _data()
        tree = ID3Classifier(criterion=spec.criterion, **spec.params).fit(df[qi], df["education"]).tree_
        tree.class_attribute = "education"
        trees[spec] = tree
    return trees[spec]


def tree_info(spec: TreeSpec) -> dict[str, Any]:
    df, qi = _data()
    tree = fit_tree(spec)
    nonempty = sum(1 for leaf in tree.leaves() if (leaf.n_samples or 0) > 0)
    return {
        "criterion": spec.criterion,
        "params": spec.params,
        "label": spec.label,
        "depth": tree.depth,
        "leaves": tree.n_leaves,
        "nonempty_leaves": nonempty,
        "internal_nodes": len(tree.internal_nodes()),
        "training_accuracy": float(np.mean(tree.predict(df[qi]) == df["education"].to_numpy())),
    }


def run_task(task: Task) -> dict[str, Any]:
    df, qi = _data()
    tree = fit_tree(task.tree)
    threat = ThreatModel(known=tuple(qi), sa_published=task.sa)
    t0 = time.perf_counter()
    done = audit(tree.published(task.publish), df, threat, options=AuditOptions(internal=task.internal, baselines=False), progress=False)
    wall = time.perf_counter() - t0
    assert isinstance(done, Audit) and done.estimate is not None
    result = done.estimate
    uninformative = UNIFORM_NOTE in str(result.details.get("note") or "")  # maxent_attack's UninformativeKnowledgeWarning, in the note
    true = result.groups.value_counts(result.true_codes, N_VALUES) / result.groups.counts[:, None]
    d = individual_divergence(true, result.posterior)
    finite = np.isfinite(d)
    weights = result.groups.weights
    overall = overall_divergence(true, result.posterior, weights)
    assert math.isclose(overall, result.details["overall_divergence"], rel_tol=1e-12) or not finite.all()
    out = {
        "tree": task.tree.key,
        "criterion": task.tree.criterion,
        "publish": task.publish,
        "sa": task.sa,
        "internal": task.internal,
        "overall_divergence": overall,
        "overall_divergence_finite_part": float(weights[finite] @ d[finite]),
        "infinite_groups": int((~finite).sum()),
        "infinite_records": int(result.groups.counts[~finite].sum()),
        "zero_divergence_groups": int((d <= 1e-12).sum()),
        "solver_seconds": result.details["solver_seconds"],
        "wall_seconds": wall,
        "status": result.details["status"],
        "uninformative_warning": uninformative,
        "note": result.details.get("note"),
        "iterations": result.details["iterations"],
        "max_violation": result.details["max_violation"],
        "entropy": result.details["entropy"],
        "constraint_rows": result.details["constraint_rows"],
        "variables": result.details["variables"],
        "pid": os.getpid(),
    }
    if task.keep_individual:
        out["individual"] = d.tolist()
        if task.internal:
            out["posterior"] = result.posterior.tolist()
    return out


def baselines() -> dict[str, Any]:
    """Divergences of the two estimates that use no tree at all."""
    df, qi = _data()
    groups = QIGroups.from_frame(df, qi)
    classes = sorted(df["education"].unique())
    codes = pd.Categorical(df["education"], categories=classes).codes
    true = groups.value_counts(codes, len(classes)) / groups.counts[:, None]
    uniform = np.full_like(true, 1.0 / len(classes))
    marginal = np.bincount(codes, minlength=len(classes)) / len(codes)
    return {
        "classes": [str(c) for c in classes],
        "records": int(groups.n_records),
        "qi_values": int(groups.n_groups),
        "sa_values": len(classes),
        "conditional_entropy_nats": float(-(groups.weights @ np.where(true > 0, true * np.log(np.where(true > 0, true, 1)), 0).sum(axis=1))),
        "uniform": overall_divergence(true, uniform, groups.weights),
        "sa_marginal": overall_divergence(true, np.tile(marginal, (len(true), 1)), groups.weights),
        "qi_table": groups.table,
        "true": true,
        "weights": groups.weights,
        "counts": groups.counts,
    }


def constraint_counts(spec: TreeSpec) -> dict[str, int]:
    """Rate, label and internal rows of a tree published with error rates (no solve)."""
    from ppdm.attacks.leaf.leaves import attacker_view

    df, qi = _data()
    tree = fit_tree(spec).published("error-rates")
    view = attacker_view(tree, df, ThreatModel(known=tuple(qi)))
    problem, leaf = tree_problem(tree, view.groups, Knowledge())
    block = internal_constraints(tree, view.groups, leaf)
    rows = {b.name: b.n_rows for b in problem.blocks}
    return {"rate": rows.get("rate", 0), "label": rows.get("label", 0), "internal": block.n_constraints if block else 0}


# --------------------------------------------------------------------------------------------
# Example 1 (Figure 5)
# --------------------------------------------------------------------------------------------


def example1() -> dict[str, Any]:
    """Paper 000's Example 1 on D2 (Fig. 2(a)): the tree splits on Age; leaf L3 (Senior) holds
    q2 = (Senior, Masters) and q3 = (Senior, Doctorate) with one error."""
    rows = [
        ("Youth", "Doctorate", "<=50K"),
        ("Youth", "Doctorate", "<=50K"),
        ("Senior", "Masters", "<=50K"),
        ("Senior", "Doctorate", ">50K"),
        ("MiddleAge", "Masters", ">50K"),
        ("MiddleAge", "Masters", ">50K"),
    ]
    d2 = pd.DataFrame(rows, columns=["Age", "Education", "Salary"]).astype("category")
    qi = ["Age", "Education"]
    # min_samples_split=3: the 2-record Senior node stays a leaf (2/1), as in Fig. 2(b)
    tree = ID3Classifier(criterion="entropy", min_samples_split=3).fit(d2[qi], d2["Salary"]).tree_
    tree.class_attribute = "Salary"
    published = tree.published("error-rates")
    groups = QIGroups.from_frame(d2, qi)
    order = {("Youth", "Doctorate"): 1, ("Senior", "Masters"): 2, ("Senior", "Doctorate"): 3, ("MiddleAge", "Masters"): 4}
    q_index = [order[tuple(r)] for r in groups.table[qi].astype(str).itertuples(index=False)]
    perm = np.argsort(q_index)  # groups in the paper's order q1..q4
    classes = [str(c) for c in tree.classes]
    assert classes == ["<=50K", ">50K"], classes
    problem, leaf = tree_problem(published, groups, Knowledge())
    internal = internal_constraints(published, groups, leaf)
    lin = solve_linear(problem)
    nonlin = solve_with_internal(problem, internal)
    codes = pd.Categorical(d2["Salary"], categories=classes).codes
    true = groups.value_counts(codes, 2) / groups.counts[:, None]
    w = groups.weights

    def row(p: np.ndarray | None) -> dict[str, Any]:
        p = true if p is None else p
        d = individual_divergence(true, p)
        return {
            "x": [float(v) for v in p[perm].ravel()],
            "Do": overall_divergence(true, p, w),
            "Dq2": float(d[perm][1]),
            "Dq3": float(d[perm][2]),
        }

    def h(t: float) -> float:
        return -sum(x * math.log(x) for x in (t, 1 - t) if x > 0)

    def senior(x20: float, x30: float | None = None) -> np.ndarray:
        """p(. | q) with q1, q4 as their pure leaves say, x20 = P(<=50K | q2), x30 = P(<=50K | q3)."""
        x30 = 1 - x20 if x30 is None else x30
        p = np.array([[1, 0], [x20, 1 - x20], [x30, 1 - x30], [0, 1]], dtype=float)
        out = np.empty_like(p)
        out[perm] = p
        return out

    a = brentq(lambda t: h(t / 3) - h(0.5) / 3, 1e-6, 0.5)
    grid = np.linspace(0, 1, 2001)
    c = np.array([internal.values(senior(x) * w[:, None])[0] for x in grid])
    feasible = grid[c <= 1e-12]
    sb_printed = senior(0.815, 0.815)
    sb_consistent = senior(0.815)
    rate_residual = lambda p: float(problem.violations(p).max(initial=0.0))  # noqa: E731
    return {
        "tree": render_tree(tree, disclosure="error-rates"),
        "internal_constraints": internal.names,
        "SO": row(None),
        "SA_ppdm": row(lin.p) | {"status": lin.status},
        "SB_ppdm": row(nonlin.p) | {"status": nonlin.status, "max_violation": nonlin.max_violation},
        "boundary_a": a,
        "feasible_x20_grid": [float(feasible.min()), float(feasible.max())],
        "SB_printed": row(sb_printed) | {"linear_violation": rate_residual(sb_printed), "x20_plus_x30": 1.63},
        "SB_x20_0815_x30_0185": row(sb_consistent) | {"linear_violation": rate_residual(sb_consistent), "internal_value": float(internal.values(sb_consistent * w[:, None])[0])},
        "curve": {"x20": grid[::20].tolist(), "constraint": c[::20].tolist(), "entropy": [problem.entropy(senior(x)) for x in grid[::20]]},
    }


# --------------------------------------------------------------------------------------------
# Running everything
# --------------------------------------------------------------------------------------------


def plan(args: argparse.Namespace) -> tuple[list[TreeSpec], list[Task]]:
    specs: list[TreeSpec] = []
    tasks: list[Task] = []
    for crit in CRITERIA:
        depth_specs = [TreeSpec(crit, "depth", d) for d in args.depths]
        paper = [TreeSpec(crit, "paper")] if args.paper_sized else []
        internal_specs = [TreeSpec(crit, "depth", d) for d in args.internal_depths]
        for spec in dict.fromkeys(depth_specs + paper + internal_specs):
            specs.append(spec)
            for publish in ("error-rates", "labels"):
                for sa in (False, True):
                    tasks.append(Task(spec, publish, sa, False, keep_individual=publish == "error-rates"))
        internal_all = list(internal_specs)
        if args.paper_sized and (crit == "gini" or args.paper_ig_internal):
            internal_all.append(TreeSpec(crit, "paper"))
        for spec in internal_all:
            tasks.append(Task(spec, "error-rates", False, True, keep_individual=True))
            tasks.append(Task(spec, "labels", False, True))  # "NoErrorRate" (Fig. 9)
            depth = spec.value if spec.setting == "depth" else 99
            if depth <= args.sa_internal_max_depth:
                tasks.append(Task(spec, "error-rates", True, True, keep_individual=True))
            if depth <= NO_ERROR_RATE_SA_MAX_DEPTH:
                tasks.append(Task(spec, "labels", True, True))  # "NoErrorRate" when the SA distribution is known
    return specs, tasks


def run_all(tasks: list[Task], jobs: int, start: float) -> list[dict[str, Any]]:
    order = sorted(tasks, key=lambda t: -t.cost())
    results: list[dict[str, Any]] = []

    def report(i: int, task: Task, r: dict[str, Any]) -> None:
        d = r["overall_divergence"]
        extra = f" ({r['infinite_groups']} groups infinite; finite part {r['overall_divergence_finite_part']:.4f})" if r["infinite_groups"] else ""
        print(
            f"[{i:3d}/{len(order)}] {task.name}: D_overall {d:.5f}{extra}, solver {r['solver_seconds']:.1f} s, "
            f"{r['status']}  (elapsed {time.perf_counter() - start:.0f} s)",
            flush=True,
        )

    if jobs <= 1:
        _worker_init(False)
        for i, task in enumerate(order, 1):
            r = run_task(task)
            results.append(r | {"task": asdict(task)})
            report(i, task, r)
        return results
    ctx = mp.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_init, initargs=(True,)) as pool:
        futures = {pool.submit(run_task, task): task for task in order}
        for i, future in enumerate(as_completed(futures), 1):
            task = futures[future]
            r = future.result()
            results.append(r | {"task": asdict(task)})
            report(i, task, r)
    return results


def find(runs: list[dict[str, Any]], tree: str, publish: str, sa: bool, internal: bool) -> dict[str, Any] | None:
    for r in runs:
        if r["tree"] == tree and r["publish"] == publish and r["sa"] == sa and r["internal"] == internal:
            return r
    return None


def top_k_analysis(runs: list[dict[str, Any]], tree: str, sa: bool, base: dict[str, Any]) -> dict[str, Any] | None:
    """Fig. 7 and Fig. 8: individual divergences with (KL1) and without (KL2) internal constraints."""
    with_int = find(runs, tree, "error-rates", sa, True)
    without = find(runs, tree, "error-rates", sa, False)
    if with_int is None or without is None:
        return None
    kl1 = np.array(with_int["individual"])
    kl2 = np.array(without["individual"])
    diff = kl2 - kl1  # positive: the internal constraints brought the estimate closer
    ranked = np.argsort(np.where(np.isfinite(diff), -diff, np.inf), kind="stable")
    table = base["qi_table"]

    def describe(g: int) -> dict[str, Any]:
        return {
            "group": int(g),
            "records": int(base["counts"][g]),
            "qi": {c: str(v) for c, v in table.iloc[g].items()},
            "true": {i: round(float(v), 4) for i, v in enumerate(base["true"][g]) if v > 0},
            "KL1": float(kl1[g]),
            "KL2": float(kl2[g]),
            "difference": float(diff[g]),
        }

    finite = np.isfinite(diff)
    sorted_diff = -np.sort(-diff[finite])
    curve_k = np.arange(1, min(TOP_K_CURVE, len(sorted_diff)) + 1)
    curve = (np.cumsum(sorted_diff)[: len(curve_k)] / curve_k).tolist()
    changed = finite & (np.abs(diff) > 1e-9)
    # the most exposed groups under the with-internal estimate (smallest KL1),
    # among the groups whose estimate the internal constraints changed
    exposed = [int(g) for g in np.flatnonzero(changed)[np.argsort(kl1[changed], kind="stable")[:10]]]
    return {
        "tree": tree,
        "sa": sa,
        "top10_by_difference": [describe(g) for g in ranked[:10]],
        "top10_smallest_kl1_changed": [describe(g) for g in exposed],
        "top10_smallest_kl1_all": [describe(int(g)) for g in top_k_individuals(base["true"], np.array(with_int["posterior"]), 10)],
        "zero_kl1_groups": int((kl1 <= 1e-12).sum()),
        "zero_both_groups": int(((kl1 <= 1e-12) & (kl2 <= 1e-12)).sum()),
        "groups_changed": int(changed.sum()),
        "groups_closer": int((finite & (diff > 1e-9)).sum()),
        "groups_farther": int((finite & (diff < -1e-9)).sum()),
        "groups_infinite_kl1": int((~np.isfinite(kl1)).sum()),
        "curve_top_k_mean_difference": curve,
        "overall_without": without["overall_divergence"],
        "overall_with": with_int["overall_divergence"],
        "overall_with_finite_part": with_int["overall_divergence_finite_part"],
    }


# --------------------------------------------------------------------------------------------
# Output: results.md and figures
# --------------------------------------------------------------------------------------------


def fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        if math.isinf(x):
            return "∞"
        return f"{x:.{digits}f}"
    return str(x)


def dcell(r: dict[str, Any] | None) -> str:
    """A divergence cell: the value, or ∞ with the finite part and the number of infinite groups."""
    if r is None:
        return "–"
    if r["infinite_groups"]:
        return f"∞ ({fmt(r['overall_divergence_finite_part'])} + {r['infinite_groups']} groups ∞)"
    return fmt(r["overall_divergence"])


def status_note(r: dict[str, Any] | None) -> str:
    """Nothing for a stationary solve; ◦ for a feasible solve stopped early; ⚠ for a violated one."""
    if r is None or r["status"] in STATIONARY:
        return ""
    return f" ◦ {r['status']}" if r["status"] in STOPPED_FEASIBLE else f" ⚠ {r['status']}"


def status_cell(r: dict[str, Any] | None) -> str:
    if r is None:
        return "–"
    mark = "" if r["status"] in STATIONARY else ("◦ " if r["status"] in STOPPED_FEASIBLE else "⚠ ")
    return f"{mark}{r['status']} ({r['iterations']} it.)"


def featured_top_k(res: dict[str, Any]) -> list[str]:
    """The top-K analyses shown as tables: per criterion the deepest internal-constraint tree,
    the paper-sized tree, and the deepest one with SA constraints."""
    out = []
    for crit in CRITERIA:
        depth_keys = [k for k, tk in res["top_k"].items() if tk and k.startswith(f"{crit}/depth") and not tk["sa"]]
        if depth_keys:
            out.append(max(depth_keys, key=lambda k: res["trees"][res["top_k"][k]["tree"]]["value"]))
        out += [k for k, tk in res["top_k"].items() if tk and k == f"{crit}/paper"]
        out += [k for k, tk in res["top_k"].items() if tk and k.startswith(f"{crit}/") and tk["sa"]]
    return out


def write_markdown(path: Path, res: dict[str, Any]) -> None:
    runs = res["runs"]
    trees = res["trees"]
    base = res["baselines"]
    L: list[str] = []
    s = res["settings"]
    L += [
        "# Paper 000 reproduced with ppdm: maximum-entropy audit of published decision trees",
        "",
        f"Generated by `{s['command']}` in {res['runtime_seconds']:.0f} s ({s['jobs']} worker process(es), "
        f"{s['cpu_count']} CPUs; Python {s['python']}, numpy {s['numpy']}, scipy {s['scipy']}"
        + (f"; ppdm at {s['git']['commit'][:7]}" + (f" with uncommitted changes to {', '.join(s['git']['src_uncommitted'])}" if s["git"]["src_uncommitted"] else "")
           + (" and to this script" if s["git"].get("script_uncommitted") else "") if s.get("git") else "")
        + "). "
        "See [../maxent_tree.md](../maxent_tree.md) for the discussion.",
        "",
        f"Data: Adult train without missing values, {base['records']:,} records (paper {PAPER_DATA['records']:,}), "
        f"{base['qi_values']:,} distinct QI values (paper {PAPER_DATA['qi_values']:,}), {base['sa_values']} education values "
        f"(paper {PAPER_DATA['sa_values']}). H(Education | QI) = {base['conditional_entropy_nats']:.4f} nats.",
        "",
        "Overall divergence D_overall = Σ_q P(q) KL(P(·|q) ‖ P*(·|q)) in nats; smaller means the tree disclosed more. "
        f"Reference points with no tree: uniform estimate {base['uniform']:.4f}; the SA distribution P(x) for everyone "
        f"{base['sa_marginal']:.4f}. \"+SA\" means the attacker also knows the SA distribution (§4.3 SA constraints). "
        "∞: the estimate gives probability 0 to the true value of some group; the finite part and the number of such groups are shown.",
        "",
        "## Trees and constraint rows",
        "",
        "Multiway ID3 (`ID3Classifier`), each attribute once per path, so depth ≤ 8. Leaves = all leaves (a multiway split "
        "makes one branch per domain value, and empty branches are leaves); rate rows = non-empty leaves.",
        "",
        "| tree | depth | leaves | non-empty | internal nodes | rate rows | label rows | internal rows | training accuracy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for crit in CRITERIA:
        for t in trees.values():
            if t["criterion"] != crit:
                continue
            c = t["constraints"]
            L.append(
                f"| {TITLE[crit]} {t['label']} | {t['depth']} | {t['leaves']} | {t['nonempty_leaves']} | {t['internal_nodes']} | "
                f"{c['rate']} | {c['label']} | {c['internal']} | {t['training_accuracy']:.4f} |"
            )
        p = PAPER_ROWS[crit]
        L.append(f"| **paper, {TITLE[crit]}** | ? | ? | ? | ? | **{p['rate']}** | **{p['label']}** | **{p['internal']}** | ? |")
    L.append("")

    # Fig. 3
    L += [
        "## Figure 3: the effect of error rates",
        "",
        "Overall divergence with error rates published (rate + label constraints) and with labels only (label constraints).",
        "",
        "| tree | rate rows | Gini/IG | rates | labels only | rates +SA | labels only +SA |",
        "|---|---|---|---|---|---|---|",
    ]
    for crit in CRITERIA:
        for key, t in trees.items():
            if t["criterion"] != crit:
                continue
            cells = [dcell(find(runs, key, pub, sa, False)) for sa in (False, True) for pub in ("error-rates", "labels")]
            L.append(f"| {t['label']} | {t['constraints']['rate']} | {TITLE[crit]} | " + " | ".join(cells) + " |")
    if any("uninformative_warning" in r for r in runs):
        warned = [r for r in runs if r.get("uninformative_warning")]
        plain = [r for r in runs if r["publish"] == "labels" and not r["sa"]]
        L += [
            "",
            f"`maxent_attack` warned (`UninformativeKnowledgeWarning`, `details[\"note\"]`) on {len(warned)} of the {len(runs)} solves: "
            f"{sum(1 for r in warned if r['publish'] == 'labels' and not r['sa'])} of the {len(plain)} labels-only solves without SA "
            "constraints (with or without internal constraints), and "
            f"{sum(1 for r in warned if not (r['publish'] == 'labels' and not r['sa']))} others. With labels only and no SA "
            "distribution the uniform estimate meets every constraint, so the audit learns nothing from the tree.",
        ]
    L += ["", "![Figure 3](fig3_error_rates.png)", ""]

    # Fig. 4
    L += [
        "## Figure 4: the effect of the selection measure",
        "",
        "Error rates published. Same max_depth for both measures; the paper-sized trees differ in size (as the paper's did: 518 vs 2,983 rate rows).",
        "",
        "| setting | Gini rate rows | Gini | IG rate rows | IG | Gini +SA | IG +SA |",
        "|---|---|---|---|---|---|---|",
    ]
    settings = sorted({(t["setting"], t["value"]) for t in res["tree_specs"].values()}, key=lambda x: (x[0] != "depth", x[1]))
    for setting, value in settings:
        kg, ke = (f"gini/{setting}{value if setting == 'depth' else ''}", f"entropy/{setting}{value if setting == 'depth' else ''}")
        if kg not in trees or ke not in trees:
            continue
        label = f"max_depth={value}" if setting == "depth" else "paper-sized"
        L.append(
            f"| {label} | {trees[kg]['constraints']['rate']} | {dcell(find(runs, kg, 'error-rates', False, False))} | "
            f"{trees[ke]['constraints']['rate']} | {dcell(find(runs, ke, 'error-rates', False, False))} | "
            f"{dcell(find(runs, kg, 'error-rates', True, False))} | {dcell(find(runs, ke, 'error-rates', True, False))} |"
        )
    L += ["", "![Figure 4](fig4_selection_measure.png)", ""]

    # Fig. 6
    L += [
        "## Figure 6: the effect of implicit information (internal-node constraints)",
        "",
        "Error rates published. The internal constraints are nonconvex; ppdm's sequential convex solver stops at a "
        "stationary point (\"local optimum\"), or, marked ◦, at its iteration or time limit with a feasible estimate "
        "that is not stationary (\"iteration limit\", \"time limit\"), or, marked ⚠, with internal constraints "
        "violated. Without SA constraints / with them.",
        "",
        "| tree | internal rows | without internal | with internal | status | solver s | without +SA | with +SA | status +SA | solver s +SA |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for crit in CRITERIA:
        for key, t in trees.items():
            w = find(runs, key, "error-rates", False, True)
            if t["criterion"] != crit or w is None:
                continue
            wo = find(runs, key, "error-rates", False, False)
            ws = find(runs, key, "error-rates", True, True)
            wos = find(runs, key, "error-rates", True, False)
            L.append(
                f"| {TITLE[crit]} {t['label']} | {t['constraints']['internal']} | {dcell(wo)} | {dcell(w)} | {status_cell(w)} | "
                f"{w['solver_seconds']:.1f} | {dcell(wos)} | {dcell(ws)} | {status_cell(ws)} | "
                f"{fmt(ws['solver_seconds'], 1) if ws else '–'} |"
            )
    internal_runs = [r for r in runs if r["internal"]]
    counts: dict[str, int] = {}
    for r in internal_runs:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    L += [
        "",
        f"Statuses of all {len(internal_runs)} solves with internal constraints (this table, NoErrorRate and +SA): "
        + ", ".join(f"{v} {k}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        + ".",
    ]
    L += ["", "![Figure 6](fig6_internal.png)", ""]

    # Fig. 7 / 8
    L += ["## Figure 7: top-10 differences of individual divergence", ""]
    L += [
        "KL1 = individual divergence with the internal constraints, KL2 = without (the paper's Fig. 7 caption: "
        "\"KL1: with Implicit\"); difference = KL2 − KL1. As in the paper, rows are the 10 QI groups with the largest "
        "difference (the paper's \"10 most significant individual divergences\": its rows are sorted by the difference, "
        "not by KL1).",
        "",
    ]
    featured = featured_top_k(res)
    names = base.get("classes") or [str(i) for i in range(N_VALUES)]
    for name in featured:
        tk = res["top_k"][name]
        t = trees[tk["tree"]]
        L += [
            f"### {TITLE[t['criterion']]} {t['label']}{' +SA' if tk['sa'] else ''}",
            "",
            f"Groups whose estimate the internal constraints changed: {tk['groups_changed']} of {base['qi_values']} "
            f"({tk['groups_closer']} closer to the truth, {tk['groups_farther']} farther, {tk['groups_infinite_kl1']} with KL1 = ∞); "
            f"overall divergence {fmt(tk['overall_without'])} without, {fmt(tk['overall_with'])} with"
            + (f" (finite part {fmt(tk['overall_with_finite_part'])})" if math.isinf(tk["overall_with"]) else "")
            + ".",
            "",
            "| top-K | difference | KL1 (with) | KL2 (without) | records | true P(education \\| q) | paper: difference | KL1 | KL2 |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        shown = [row for row in tk["top10_by_difference"] if row["difference"] > 1e-9]
        if not shown:
            L.append("| – | no group's estimate moved closer to the truth | | | | | | | |")
        for i, row in enumerate(shown):
            p = PAPER_FIG7[i] if t["criterion"] == "entropy" else (None, None, None, None)
            L.append(
                f"| {i + 1} | {fmt(row['difference'], 3)} | {fmt(row['KL1'], 3)} | {fmt(row['KL2'], 3)} | {row['records']} | "
                f"{', '.join(f'{names[int(k)]} {v:.2g}' for k, v in row['true'].items())} | {fmt(p[1], 3)} | {fmt(p[2], 3)} | {fmt(p[3], 3)} |"
            )
        worst = max(r["KL1"] for r in tk["top10_smallest_kl1_all"])
        L += [
            "",
            "The 10 most exposed groups under the with-internal estimate (smallest KL1, `top_k_individuals`) "
            + ("all have KL1 = 0" if worst <= 1e-12 else f"have KL1 ≤ {worst:.2g}")
            + f": {tk['zero_kl1_groups']} groups have KL1 = 0 (the estimate is the truth), and {tk['zero_both_groups']} of "
            "them have KL2 = 0 too (e.g. groups in pure leaves, whose rate constraint alone gives the truth)."
            + (" Among the groups the internal constraints changed, the smallest KL1:" if tk["top10_smallest_kl1_changed"] else ""),
            "",
        ]
        if tk["top10_smallest_kl1_changed"]:
            L += ["| rank | KL1 (with) | KL2 (without) | difference | records |", "|---|---|---|---|---|"]
            for i, row in enumerate(tk["top10_smallest_kl1_changed"]):
                L.append(f"| {i + 1} | {fmt(row['KL1'], 3)} | {fmt(row['KL2'], 3)} | {fmt(row['difference'], 3)} | {row['records']} |")
            L.append("")
    L += [
        "## Figure 8: average of the top-K differences",
        "",
        "Mean of the K largest differences KL2 − KL1 over QI groups, K = 1…500 (paper: IG tree, decreasing from about 1.5 to 0.2).",
        "",
        "| tree | K=1 | K=10 | K=50 | K=100 | K=200 | K=500 |",
        "|---|---|---|---|---|---|---|",
    ]
    for tk in res["top_k"].values():
        if tk is None:
            continue
        t = trees[tk["tree"]]
        curve = tk["curve_top_k_mean_difference"]
        cells = [fmt(curve[k - 1], 3) if k <= len(curve) else "–" for k in (1, 10, 50, 100, 200, 500)]
        L.append(f"| {TITLE[t['criterion']]} {t['label']}{' +SA' if tk['sa'] else ''} | " + " | ".join(cells) + " |")
    L += ["", "![Figures 7 and 8](fig8_top_k.png)", ""]

    # Fig. 9
    L += [
        "## Figure 9: running time",
        "",
        "Solver seconds (`details[\"solver_seconds\"]`; tree growth and constraint building excluded), without SA constraints. "
        "All Included = rates + labels + internal; NoImplicit = rates + labels; NoErrorRate = labels + internal. "
        f"Measured with {s['jobs']} solves running in parallel on {s['cpu_count']} CPUs (one BLAS thread each), so "
        "times are indicative.",
        "",
        "| tree | variables | rate rows | internal rows | All Included | NoImplicit | NoErrorRate | NoErrorRate, no internal |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for crit in CRITERIA:
        for key, t in trees.items():
            a = find(runs, key, "error-rates", False, True)
            if t["criterion"] != crit or a is None:
                continue
            ni = find(runs, key, "error-rates", False, False)
            ne = find(runs, key, "labels", False, True)
            nen = find(runs, key, "labels", False, False)
            L.append(
                f"| {TITLE[crit]} {t['label']} | {a['variables']:,} | {t['constraints']['rate']} | {t['constraints']['internal']} | "
                f"{a['solver_seconds']:.2f}{status_note(a)} | {ni['solver_seconds']:.2f} | {ne['solver_seconds']:.2f} | {nen['solver_seconds']:.2f} |"
            )
    sa_rows = []
    for crit in CRITERIA:
        for key, t in trees.items():
            ne = find(runs, key, "labels", True, True)
            if t["criterion"] != crit or ne is None:
                continue
            a, ni, nen = find(runs, key, "error-rates", True, True), find(runs, key, "error-rates", True, False), find(runs, key, "labels", True, False)
            sa_rows.append(
                f"| {TITLE[crit]} {t['label']} | {fmt(a['solver_seconds'] if a else None, 2)}{status_note(a)} | {ni['solver_seconds']:.2f} | "
                f"{ne['solver_seconds']:.2f}{status_note(ne)} ({ne['iterations']} it.) | {nen['solver_seconds']:.2f} | {dcell(ne)} | {dcell(nen)} |"
            )
    if sa_rows:
        L += [
            "",
            "Without SA constraints the labels-only problem is trivial (the uniform estimate meets every label and internal "
            "constraint), so NoErrorRate is also timed with SA constraints, on the small trees:",
            "",
            "| tree | All Included +SA | NoImplicit +SA | NoErrorRate +SA | NoErrorRate +SA, no internal | D, NoErrorRate +SA | D, no internal |",
            "|---|---|---|---|---|---|---|",
            *sa_rows,
        ]
    L += [
        "",
        "Linear solves (no internal constraints) on every tree, solver seconds: "
        + ", ".join(
            f"{TITLE[t['criterion']]} {t['label']} {find(runs, k, 'error-rates', False, False)['solver_seconds']:.2f}"
            for k, t in trees.items()
        )
        + ".",
        "",
        "![Figure 9](fig9_running_time.png)",
        "",
    ]

    # Example 1
    ex = res["example1"]
    L += [
        "## Example 1 (Figure 5)",
        "",
        "D2 of Fig. 2(a), the tree of Fig. 2(b) (`ID3Classifier(criterion=\"entropy\", min_samples_split=3)`: root on Age, "
        "leaf L3 = Senior with 2 records and 1 error), published with error rates. x_i0 = P(≤50K | q_i), x_i1 = P(>50K | q_i).",
        "",
        "| case | x10 | x11 | x20 | x21 | x30 | x31 | x40 | x41 | Do | Dq2 | Dq3 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def exrow(name: str, r: dict[str, Any], do: bool = True) -> str:
        xs = " | ".join(fmt(v, 4) for v in r["x"])
        tail = f"{fmt(r['Do'], 3)} | {fmt(r['Dq2'], 3)} | {fmt(r['Dq3'], 3)}" if do else "N/A | N/A | N/A"
        return f"| {name} | {xs} | {tail} |"

    L.append(exrow("SO (truth)", ex["SO"], do=False))
    L.append(exrow("SA, ppdm (no internal)", ex["SA_ppdm"]))
    L.append(exrow("SB, ppdm (with internal)", ex["SB_ppdm"]))
    for name, (x, do, dq2, dq3) in PAPER_FIG5.items():
        L.append(f"| paper {name} | " + " | ".join(fmt(float(v), 3) for v in x) + f" | {fmt(do, 3)} | {fmt(dq2, 3)} | {fmt(dq3, 3)} |")
    L.append(exrow("x20 = 0.815, x30 = 0.185", ex["SB_x20_0815_x30_0185"]))
    L += [
        "",
        f"Internal constraint: {', '.join(ex['internal_constraints'])}. Under information gain it reads "
        f"h(x20/3) ≥ h(1/2)/3 (with x30 = 1 − x20 from the leaf's rate constraint), so the feasible set is "
        f"x20 ∈ [{ex['boundary_a']:.4f}, 1] (grid check: [{ex['feasible_x20_grid'][0]:.4f}, {ex['feasible_x20_grid'][1]:.4f}]); "
        f"the entropy is symmetric in x20 ↔ 1 − x20 and maximal at 0.5, which is feasible, so the maximum-entropy "
        f"estimate with the internal constraint is still x20 = x30 = 0.5 (ppdm: {ex['SB_ppdm']['x'][2]:.6f}, {ex['SB_ppdm']['status']}). "
        f"The paper's SB row prints x20 = x30 = 0.815, which breaks the rate constraint x20 + x30 = 1 (ppdm's largest linear "
        f"violation at that point, in joint-probability units: {ex['SB_printed']['linear_violation']:.3f}); its Do = 0.068 and Dq2 = Dq3 = 0.205 are those "
        f"of x20 = 0.815, x30 = 0.185 (Do {ex['SB_x20_0815_x30_0185']['Do']:.3f}), i.e. 1 − {ex['boundary_a']:.4f}, the "
        "mirror image of the feasible set's boundary. Not a regression target.",
        "",
        "![Example 1](example1.png)",
        "",
    ]
    path.write_text("\n".join(L), encoding="utf-8")


def write_figures(out: Path, res: dict[str, Any]) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        print("matplotlib not installed: no figures (pip install matplotlib, or the `report` extra)")
        return []
    runs, trees, base = res["runs"], res["trees"], res["baselines"]
    colors = {"gini": "tab:blue", "entropy": "tab:orange"}
    written = []

    def series(crit: str, publish: str, sa: bool, internal: bool, x: str = "rate", finite: bool = False):
        xs, ys, inf_x, inf_y = [], [], [], []
        for key, t in trees.items():
            if t["criterion"] != crit or t["setting"] != "depth":
                continue
            r = find(runs, key, publish, sa, internal)
            if r is None:
                continue
            xv = t["constraints"]["rate"] if x == "rate" else t["value"]
            if r["infinite_groups"]:
                inf_x.append(xv)
                inf_y.append(r["overall_divergence_finite_part"])
            else:
                xs.append(xv)
                ys.append(r["overall_divergence"])
        return xs, ys, inf_x, inf_y

    def paper_point(ax, crit: str, publish: str, sa: bool, internal: bool, x: str = "rate", **kw):
        key = f"{crit}/paper"
        r = find(runs, key, publish, sa, internal)
        if r is None or x != "rate":
            return
        y = r["overall_divergence_finite_part"] if r["infinite_groups"] else r["overall_divergence"]
        ax.plot([trees[key]["constraints"]["rate"]], [y], marker="*", ms=13, ls="none", **kw)

    # Fig. 3
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, sa in zip(axes, (False, True)):
        for crit in CRITERIA:
            for publish, ls, mk in (("error-rates", "-", "o"), ("labels", "--", "s")):
                xs, ys, _, _ = series(crit, publish, sa, False)
                ax.plot(xs, ys, ls=ls, marker=mk, color=colors[crit], label=f"{TITLE[crit]}, {'with error rates' if publish == 'error-rates' else 'labels only'}")
                paper_point(ax, crit, publish, sa, False, color=colors[crit], mec="k")
        ax.axhline(base["uniform"] if not sa else base["sa_marginal"], color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_xlabel("tree size: rate rows (non-empty leaves), log scale")
        ax.set_title("without SA constraints" if not sa else "with SA constraints (SA distribution known)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("overall divergence (nats)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Paper 000, Fig. 3: effect of error rates (max_depth 1–8; ★ paper-sized trees; dotted: no tree)")
    fig.tight_layout()
    fig.savefig(out / "fig3_error_rates.png", dpi=110)
    plt.close(fig)
    written.append("fig3_error_rates.png")

    # Fig. 4
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for crit in CRITERIA:
        for sa, ls in ((False, "-"), (True, "--")):
            xs, ys, _, _ = series(crit, "error-rates", sa, False, x="depth")
            axes[0].plot(xs, ys, ls=ls, marker="o", color=colors[crit], label=f"{TITLE[crit]}{' +SA' if sa else ''}")
            xs, ys, _, _ = series(crit, "error-rates", sa, False, x="rate")
            axes[1].plot(xs, ys, ls=ls, marker="o", color=colors[crit], label=f"{TITLE[crit]}{' +SA' if sa else ''}")
            paper_point(axes[1], crit, "error-rates", sa, False, color=colors[crit], mec="k")
    axes[0].set_xlabel("max_depth")
    axes[1].set_xlabel("rate rows (non-empty leaves), log scale")
    axes[1].set_xscale("log")
    for ax in axes:
        ax.set_ylabel("overall divergence (nats)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Paper 000, Fig. 4: Gini vs information gain, error rates published (★ paper-sized trees)")
    fig.tight_layout()
    fig.savefig(out / "fig4_selection_measure.png", dpi=110)
    plt.close(fig)
    written.append("fig4_selection_measure.png")

    # Fig. 6
    paper_keys = [k for k in (f"{c}/paper" for c in CRITERIA) if find(runs, k, "error-rates", False, True) is not None]
    fig, axes = plt.subplots(1, 3 if paper_keys else 2, figsize=(16 if paper_keys else 12, 4.6), gridspec_kw={"width_ratios": [3, 3, 2][: 3 if paper_keys else 2]})
    if paper_keys:
        ax = axes[2]
        for i, key in enumerate(paper_keys):
            crit = trees[key]["criterion"]
            wo, w = find(runs, key, "error-rates", False, False), find(runs, key, "error-rates", False, True)
            ax.bar(i - 0.2, wo["overall_divergence"], width=0.38, color=colors[crit], alpha=0.45, label="without internal" if i == 0 else None)
            ax.bar(i + 0.2, w["overall_divergence_finite_part"], width=0.38, color=colors[crit], label="with internal" if i == 0 else None)
            notes = ([] if w["status"] in STATIONARY else ["violated" if w["status"] == VIOLATED else w["status"]]) + (["∞"] if w["infinite_groups"] else [])
            if notes:
                ax.annotate(", ".join(notes), (i + 0.2, w["overall_divergence_finite_part"]), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(paper_keys)), [f"{TITLE[trees[k]['criterion']]}\n{trees[k]['constraints']['rate']} rate rows" for k in paper_keys])
        ax.set_title("paper-sized trees, without SA constraints")
        ax.set_ylabel("overall divergence (nats)")
        ax.legend(fontsize=8, loc="lower left")
        ax.grid(alpha=0.3, axis="y")
    for ax, sa in zip(axes, (False, True)):
        for crit in CRITERIA:
            pts = []
            for key, t in trees.items():
                w = find(runs, key, "error-rates", sa, True)
                if t["criterion"] != crit or t["setting"] != "depth" or w is None:
                    continue
                pts.append((t["value"], find(runs, key, "error-rates", sa, False), w))
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1]["overall_divergence"] for p in pts], ls="--", marker="s", color=colors[crit], label=f"{TITLE[crit]}, without internal")
            ok = [p for p in pts if not p[2]["infinite_groups"]]
            bad = [p for p in pts if p[2]["infinite_groups"]]
            ax.plot([p[0] for p in pts], [p[2]["overall_divergence_finite_part"] for p in pts], ls=":", color=colors[crit], lw=1)
            ax.plot([p[0] for p in ok], [p[2]["overall_divergence"] for p in ok], ls="none", marker="o", color=colors[crit], label=f"{TITLE[crit]}, with internal")
            if bad:
                ax.plot([p[0] for p in bad], [p[2]["overall_divergence_finite_part"] for p in bad], ls="none", marker="o", mfc="white", color=colors[crit], label=f"{TITLE[crit]}, with internal: ∞ (finite part shown)")
            for p in pts:
                if p[2]["status"] not in STATIONARY:
                    note = "violated" if p[2]["status"] == VIOLATED else p[2]["status"]
                    ax.annotate(note, (p[0], p[2]["overall_divergence_finite_part"]), fontsize=7, xytext=(4, 4), textcoords="offset points")
        ax.set_xlabel("max_depth")
        ax.set_title("without SA constraints" if not sa else "with SA constraints")
        ax.set_ylabel("overall divergence (nats)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Paper 000, Fig. 6: effect of implicit information (internal-node constraints), error rates published")
    fig.tight_layout()
    fig.savefig(out / "fig6_internal.png", dpi=110)
    plt.close(fig)
    written.append("fig6_internal.png")

    # Fig. 7/8
    featured = featured_top_k(res)
    tks = [res["top_k"][k] for k in featured if res["top_k"][k]["curve_top_k_mean_difference"][0] > 1e-9]
    if featured:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
        for tk in tks:
            t = trees[tk["tree"]]
            curve = tk["curve_top_k_mean_difference"]
            ls = "--" if tk["sa"] else "-"
            lbl = f"{TITLE[t['criterion']]} {t['label']}{' +SA' if tk['sa'] else ''}"
            axes[1].plot(np.arange(1, len(curve) + 1), curve, ls=ls, label=lbl)
            rows = tk["top10_by_difference"]
            axes[0].plot(np.arange(1, len(rows) + 1), [r["difference"] for r in rows], ls=ls, marker="o", ms=3, label=lbl)
        if not tks:
            for ax in axes:
                ax.text(0.5, 0.5, "the internal constraints changed no group's estimate", transform=ax.transAxes, ha="center", fontsize=9)
        axes[0].plot([p[0] for p in PAPER_FIG7], [p[1] for p in PAPER_FIG7], "k:", marker="x", label="paper (IG)")
        axes[0].set_xlabel("rank K")
        axes[0].set_ylabel("KL2 − KL1 of the K-th group (nats)")
        axes[0].set_title("Fig. 7: top-10 differences")
        axes[1].set_xlabel("K")
        axes[1].set_ylabel("mean of the top-K differences (nats)")
        axes[1].set_title("Fig. 8: average of the top-K differences")
        for ax in axes:
            ax.grid(alpha=0.3)
            ax.set_ylim(bottom=0)
        axes[0].legend(fontsize=7)
        fig.suptitle("Paper 000, Figs. 7–8: individual divergence without (KL2) minus with (KL1) internal constraints")
        fig.tight_layout()
        fig.savefig(out / "fig8_top_k.png", dpi=110)
        plt.close(fig)
        written.append("fig8_top_k.png")

    # Fig. 9
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, crit in zip(axes, CRITERIA):
        for (publish, internal), name, mk in (
            (("error-rates", True), "All Included", "o"),
            (("error-rates", False), "NoImplicit", "s"),
            (("labels", True), "NoErrorRate", "^"),
        ):
            pts = sorted(
                (t["constraints"]["rate"], r["solver_seconds"])
                for key, t in trees.items()
                if t["criterion"] == crit and (r := find(runs, key, publish, False, internal)) is not None
                and find(runs, key, "error-rates", False, True) is not None
            )
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=mk, label=name)
            if internal:  # a solve that stopped before a stationary point: hollow ◦ (feasible) or ✕ (violated)
                stopped = [
                    (t["constraints"]["rate"], r["solver_seconds"], r["status"])
                    for key, t in trees.items()
                    if t["criterion"] == crit and (r := find(runs, key, publish, False, internal)) is not None
                    and find(runs, key, "error-rates", False, True) is not None and r["status"] not in STATIONARY
                ]
                for x, y, status in stopped:
                    ax.plot([x], [y], ls="none", marker="o" if status in STOPPED_FEASIBLE else "X", ms=11, mfc="none", color="k", lw=0.8)
                    ax.annotate(status, (x, y), fontsize=7, xytext=(6, -10), textcoords="offset points")
        lin = sorted((t["constraints"]["rate"], find(runs, key, "error-rates", False, False)["solver_seconds"]) for key, t in trees.items() if t["criterion"] == crit)
        ax.plot([p[0] for p in lin], [p[1] for p in lin], color="grey", lw=0.8, ls=":", marker=".", label="NoImplicit, all trees")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rate rows (non-empty leaves)")
        ax.set_title(TITLE[crit])
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("solver seconds")
    fig.suptitle("Paper 000, Fig. 9: running time of the maximum-entropy solve (no SA constraints)")
    fig.tight_layout()
    fig.savefig(out / "fig9_running_time.png", dpi=110)
    plt.close(fig)
    written.append("fig9_running_time.png")

    # Example 1
    ex = res["example1"]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    c = ex["curve"]
    x = np.array(c["x20"])
    cons = np.array(c["constraint"])
    ax.plot(x, c["entropy"], label="H(X | Q) of the estimate (x30 = 1 − x20)")
    ax.plot(x, cons, label="internal constraint c(x20) (≤ 0 holds)")
    ax.axhline(0, color="k", lw=0.6)
    ax.axvspan(ex["boundary_a"], 1, color="tab:green", alpha=0.12, label=f"feasible: x20 ≥ {ex['boundary_a']:.4f}")
    ax.axvline(0.5, color="tab:red", ls="--", lw=1, label="ME optimum 0.5 (with and without)")
    ax.axvline(1 - ex["boundary_a"], color="grey", ls=":", lw=1, label="paper's SB 0.815 = 1 − 0.1845")
    ax.set_xlabel("x20 = P(≤50K | q2)")
    ax.legend(fontsize=7)
    ax.set_title("Paper 000, Example 1 (Fig. 5): information gain")
    fig.tight_layout()
    fig.savefig(out / "example1.png", dpi=110)
    plt.close(fig)
    written.append("example1.png")
    return written


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory; default docs/maxent_tree")
    parser.add_argument("--depths", type=int, nargs="+", default=None, help="max_depth values for the linear experiments (Figs. 3, 4); default 1–8")
    parser.add_argument("--internal-depths", type=int, nargs="+", default=None, help="max_depth values with internal constraints (Figs. 6–9); default 2 3 4 5")
    parser.add_argument("--sa-internal-max-depth", type=int, default=5, help="internal constraints with SA constraints up to this depth; default 5")
    parser.add_argument("--no-paper-sized", dest="paper_sized", action="store_false", help="skip the two paper-sized trees")
    parser.add_argument(
        "--no-paper-ig-internal", dest="paper_ig_internal", action="store_false",
        help="skip the internal constraints on the paper-sized IG tree (the longest solve: about 3 min on a quiet machine)",
    )  # fmt: skip
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes; default min(2, CPUs)")
    parser.add_argument("--redraw", action="store_true", help="only rewrite results.md and the PNGs from --out/results.json")
    parser.add_argument("--quick", action="store_true", help="small trees only (depths 1–3, internal constraints at depth 3): about a minute")
    args = parser.parse_args(argv)
    if args.quick:
        args.depths = args.depths or [1, 2, 3]
        args.internal_depths = args.internal_depths or [3]
        args.paper_sized = False
    args.depths = sorted(set(args.depths or range(1, 9)))
    args.internal_depths = sorted(set(args.internal_depths if args.internal_depths is not None else [2, 3, 4, 5]))
    if any(d < 1 or d > 8 for d in args.depths + args.internal_depths):
        parser.error("depths must be between 1 and 8 (8 attributes, each used once per path)")
    return args


def git_state() -> dict[str, Any] | None:
    """The checkout's commit and any uncommitted change under src/ or to this script (read-only
    git calls). Taken when the run starts, i.e. when the code it runs was imported."""
    import subprocess

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=REPO, capture_output=True, text=True, check=True).stdout
        script = subprocess.run(["git", "status", "--porcelain", "--", Path(__file__).resolve()], cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {"commit": commit, "src_uncommitted": [line[3:] for line in dirty.splitlines()], "script_uncommitted": bool(script.strip())}


def _unjson(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _unjson(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_unjson(x) for x in v]
    if v in ("inf", "-inf", "nan"):
        return float(v)
    return v


def redraw(out: Path) -> dict[str, Any]:
    results = _unjson(json.loads((out / "results.json").read_text(encoding="utf-8")))
    write_markdown(out / "results.md", results)
    figures = write_figures(out, results)
    print(f"rewrote {out}/results.md, {', '.join(figures)}")
    return results


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.redraw:
        return redraw(args.out)
    start = time.perf_counter()
    git = git_state()
    shown = sys.argv[1:] if argv is None else list(argv)
    specs, tasks = plan(args)
    print(f"{len(specs)} trees, {len(tasks)} maximum-entropy solves, {args.jobs} worker(s)", flush=True)
    base = baselines()
    print(
        f"Adult: {base['records']:,} records, {base['qi_values']:,} QI values, {base['sa_values']} SA values; "
        f"uniform estimate {base['uniform']:.4f}, SA marginal {base['sa_marginal']:.4f}",
        flush=True,
    )
    trees: dict[str, Any] = {}
    for spec in specs:
        # the per-group tables (true distributions, top-K) use the baselines' value order
        assert [str(c) for c in fit_tree(spec).classes] == base["classes"], "class order differs from the baselines'"
        info = tree_info(spec) | {"setting": spec.setting, "value": spec.value, "constraints": constraint_counts(spec)}
        trees[spec.key] = info
        c = info["constraints"]
        print(f"  {TITLE[spec.criterion]} {spec.label}: depth {info['depth']}, {c['rate']} rate / {c['label']} label / {c['internal']} internal rows", flush=True)
    ex = example1()
    print(f"Example 1: SA x20 = {ex['SA_ppdm']['x'][2]:.4f} (Do {ex['SA_ppdm']['Do']:.3f}), with internal x20 = {ex['SB_ppdm']['x'][2]:.4f}, feasible x20 >= {ex['boundary_a']:.4f}", flush=True)
    runs = run_all(tasks, args.jobs, start)
    top_k: dict[str, Any] = {}
    for crit in CRITERIA:
        keys = [f"{crit}/depth{d}" for d in args.internal_depths]
        if args.paper_sized and (crit == "gini" or args.paper_ig_internal):
            keys.append(f"{crit}/paper")
        for key in keys:
            top_k[key] = top_k_analysis(runs, key, False, base)
        if args.internal_depths:
            d = max(x for x in args.internal_depths if x <= args.sa_internal_max_depth) if any(x <= args.sa_internal_max_depth for x in args.internal_depths) else None
            if d is not None:
                top_k[f"{crit}/depth{d}+sa"] = top_k_analysis(runs, f"{crit}/depth{d}", True, base)
    results: dict[str, Any] = {
        "paper": "000: Zhu & Du, Understanding Privacy Risk of Publishing Decision Trees (DBSec 2010), §5",
        "settings": {
            "command": "PYTHONPATH=src python experiments/maxent_tree.py" + ("" if not shown else " " + shlex.join(shown)),
            "depths": args.depths,
            "internal_depths": args.internal_depths,
            "sa_internal_max_depth": args.sa_internal_max_depth,
            "paper_sized": PAPER_SIZED if args.paper_sized else None,
            "jobs": args.jobs,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "pandas": pd.__version__,
            "cpu_count": os.cpu_count(),
            "git": git,
        },
        "baselines": base,
        "tree_specs": {s.key: {"criterion": s.criterion, "setting": s.setting, "value": s.value} for s in specs},
        "trees": trees,
        "example1": ex,
        "runs": sorted(runs, key=lambda r: (r["tree"], r["publish"], r["sa"], r["internal"])),
        "top_k": top_k,
        "paper_values": {"rows": PAPER_ROWS, "data": PAPER_DATA, "fig5": PAPER_FIG5, "fig7": PAPER_FIG7},
    }
    results["runtime_seconds"] = time.perf_counter() - start
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_markdown(out / "results.md", results)
    figures = write_figures(out, results)
    (out / "results.json").write_text(dump_json(results), encoding="utf-8")
    print(f"wrote {out}/results.md, results.json, {', '.join(figures)}; {results['runtime_seconds']:.0f} s", flush=True)
    return results


def dump_json(results: dict[str, Any]) -> str:
    """``results`` as JSON, without the bulky per-group arrays (individual divergences are
    summarised in ``top_k``); non-finite numbers as strings."""

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        if isinstance(v, (np.floating, float)):
            f = float(v)
            return f if math.isfinite(f) else str(f)
        if isinstance(v, np.integer):
            return int(v)
        if isinstance(v, np.ndarray):
            return clean(v.tolist())
        return v

    slim = dict(results)
    slim["baselines"] = {k: v for k, v in results["baselines"].items() if k not in ("qi_table", "true", "weights", "counts")}
    slim["runs"] = [{k: v for k, v in r.items() if k not in ("individual", "posterior")} for r in results["runs"]]
    body = json.dumps(clean(slim), indent=1)
    # one line per list of plain numbers (the top-K curves, the Example 1 rows)
    number = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
    body = re.sub(rf"\[\n\s*({number}(?:,\n\s*{number})*)\n\s*\]", lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", body)
    return body + "\n"


if __name__ == "__main__":
    main()
