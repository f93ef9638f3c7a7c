#!/usr/bin/env python
"""The defense search on Adult in paper 000's setting (issue 15's acceptance run).

Setting (paper 000 §5, as in ``experiments/maxent_tree.py``): Adult ``adult.data`` without missing
values (30,162 records), Education the class and the sensitive attribute, the 8 categorical
attributes other than education the quasi-identifiers, all known to the attacker. The tree to
defend is the paper-sized multiway ID3 tree (information gain, ``min_samples_leaf=2``, the tree
whose rate-constraint count is close to the paper's 2,983), published with error rates.
Accuracy is measured on ``adult.test`` (15,060 records without missing values).

Target: nobody certain, at most 1 % of the people at confidence ≥ 0.9 in their true education
(``certain=0,confident=0.01@0.9``). The search (:func:`ppdm.defend.defend`) runs every family with
its full grid under a 5-minute budget; the chosen model is then audited again on its own.

Run from the repository root::

    PYTHONPATH=src python experiments/defend.py            # the full search, < 5 min on 2 cores
    PYTHONPATH=src python experiments/defend.py --quick    # small grids and a 2,000-row test sample

Writes ``results.json`` (settings, machine load, the frontier, the re-audit), ``results.md`` and
``frontier.png`` into ``--out`` (default ``docs/defend``). See ``docs/defend.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
try:  # run with ppdm installed or PYTHONPATH=src; else fall back to the checkout's src/
    import ppdm  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(REPO / "src"))

from ppdm import Audit, AuditOptions, audit  # noqa: E402
from ppdm.attacks.core.result import AttackResult  # noqa: E402
from ppdm.attacks.core.threat import ThreatModel  # noqa: E402
from ppdm.data.datasets import load_adult  # noqa: E402
from ppdm.data.hierarchy import adult_hierarchies  # noqa: E402
from ppdm.defend import DefenseResult, defend  # noqa: E402
from ppdm.defend.candidates import Grids  # noqa: E402
from ppdm.learn import ID3Classifier  # noqa: E402
from ppdm.pipeline.options import LeafOptions  # noqa: E402

DEFAULT_OUT = REPO / "docs" / "defend"
TARGET = "certain=0,confident=0.01@0.9"
BUDGET = 300.0


def load() -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    train, roles = load_adult("train", sensitive="education", class_attribute="education")
    test, _ = load_adult("test", sensitive="education", class_attribute="education")
    qi = [c for c in roles.quasi_identifiers if train[c].dtype == "category"]
    return train[[*qi, "education"]], test[[*qi, "education"]], qi


def audited(model: Any, train: pd.DataFrame, threat: ThreatModel, leaf: LeafOptions | None = None) -> AttackResult:
    """``model`` audited through ``ppdm.audit``: the maximum-entropy estimate alone (the search's own
    evidence, without the strongest-attacker baselines), or the leaf attack ``leaf`` of paper 003."""
    done = audit(model, train, threat, options=AuditOptions(baselines=False, leaf=leaf), progress=False)
    assert isinstance(done, Audit) and done.estimate is not None
    return done.estimate


def reaudit(result: DefenseResult, train: pd.DataFrame, threat: ThreatModel) -> dict[str, Any]:
    """The chosen model audited again on its own, outside the search."""
    tree = result.chosen
    if tree is None:
        return {}
    results = [audited(tree, train, threat)]
    if tree.disclosure.value != "labels":
        results.append(audited(tree, train, ThreatModel(known=threat.known or ()), LeafOptions("homogeneity")))
    certain = np.logical_or.reduce([r.exposed_right() for r in results])
    confidence = np.maximum.reduce([r.confidence_in_truth() for r in results])
    return {
        "audits": [r.attack for r in results],
        "certain": int(certain.sum()),
        "confident_share_0.9": float((confidence >= 0.9 - 1e-9).mean()),
        "meets_target": bool(certain.sum() == 0 and (confidence >= 0.9 - 1e-9).mean() <= 0.01),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small grids and a 2,000-row test sample")
    parser.add_argument("--time-budget", type=float, default=BUDGET)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    load_before = os.getloadavg()
    start = time.monotonic()
    train, test, qi = load()
    if args.quick:
        test = test.sample(n=2000, random_state=0)
    model = ID3Classifier(min_samples_leaf=2).fit(train[qi], train["education"])
    tree = model.tree_
    tree.class_attribute = "education"
    threat = ThreatModel(known=tuple(qi), publish="error-rates")
    result = defend(
        tree, train, threat, TARGET, test=test, grids=Grids.small() if args.quick else Grids.full(),
        hierarchies=adult_hierarchies(), risk="confident", time_budget=args.time_budget,
    )
    wall = time.monotonic() - start
    load_after = os.getloadavg()
    out = {
        "settings": {
            "setting": "paper 000 §5: Adult train without missing values, education class and sensitive, 8 categorical QIs known",
            "model": "ID3, information gain, min_samples_leaf=2, published with error rates",
            "target": TARGET,
            "time_budget": args.time_budget,
            "quick": args.quick,
            "train_rows": len(train),
            "test_rows": len(test),
            "git": _git(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "machine": {"loadavg_before": load_before, "loadavg_after": load_after},
        "wall_seconds": wall,
        "search_seconds": result.seconds,
        "chosen": result.chosen_label,
        "unfinished": result.unfinished,
        "reaudit": reaudit(result, train, result.threat),
        "frontier": result.frontier_records(),
    }
    (args.out / "results.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    result.save_frontier(args.out / "frontier.json")
    (args.out / "results.md").write_text(markdown(out), encoding="utf-8")
    plot(out, args.out / "frontier.png")
    print(markdown(out))
    return out


def _git() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "src", "experiments"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (uncommitted changes)" if dirty else "")


def _row(r: dict[str, Any]) -> str:
    confident = "" if r["confident"] is None else f"{100 * r['confident']:.2f} %"
    certain = "" if r["certain"] is None else f"{r['certain']:.0f}"
    accuracy = "" if r["accuracy"] is None else f"{r['accuracy']:.4f}"
    mark = " **(chosen)**" if r["chosen"] else ""
    meets = "yes" if r["meets_target"] else "no"
    return f"| {r['label']}{mark} | {r['family']} | {accuracy} | {certain} | {confident} | {meets} | {r['leaves'] or ''} | {r['status']} |"


def markdown(out: dict[str, Any]) -> str:
    s, m = out["settings"], out["machine"]
    records = sorted(out["frontier"], key=lambda r: -(r["accuracy"] or 0))
    lines = [
        "# Defense search on Adult, paper 000's setting",
        "",
        f"{s['setting']}; {s['model']}. Target `{s['target']}`; time budget {s['time_budget']:g} s"
        f"{' (quick grids)' if s['quick'] else ''}. Accuracy on {s['test_rows']:,} test rows.",
        "",
        f"Wall time {out['wall_seconds']:.1f} s (search {out['search_seconds']:.1f} s); load average before "
        f"{', '.join(f'{x:.2f}' for x in m['loadavg_before'])}, after {', '.join(f'{x:.2f}' for x in m['loadavg_after'])}; "
        f"{s['cpus']} CPUs; commit {s['git']}.",
        "",
        f"Chosen: **{out['chosen']}**; unfinished: {', '.join(out['unfinished']) or 'none'}; "
        f"re-audit of the chosen model: {json.dumps(out['reaudit'])}.",
        "",
        "| candidate | family | test accuracy | certain | at confidence ≥ 0.9 | meets target | leaves | status |",
        "|---|---|---|---|---|---|---|---|",
        *(_row(r) for r in records),
        "",
    ]
    return "\n".join(lines)


STYLE = {
    "unprotected": ("black", "X"), "pruning-1": ("tab:blue", "v"), "pruning-2": ("tab:cyan", "^"), "retrain": ("tab:green", "s"),
    "kadet": ("tab:purple", "D"), "publish-less": ("tab:orange", "P"), "dp": ("tab:red", "o"),
}  # fmt: skip


def plot(out: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        print("matplotlib is not installed (pip install 'ppdm[report]'): frontier.png not written", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    records = [r for r in out["frontier"] if r["accuracy"] is not None and r["confident"] is not None]
    for family, (colour, marker) in STYLE.items():
        rows = [r for r in records if r["family"] == family]
        if not rows:
            continue
        x = np.array([100 * r["confident"] for r in rows])
        y = np.array([r["accuracy"] for r in rows])
        meets = np.array([r["meets_target"] for r in rows])
        ax.scatter(x[meets], y[meets], c=colour, marker=marker, s=45, label=family)
        ax.scatter(x[~meets], y[~meets], facecolors="none", edgecolors=colour, marker=marker, s=45)
    pareto = sorted((100 * r["confident"], r["accuracy"]) for r in records if r["pareto"])
    if pareto:
        ax.step([p[0] for p in pareto], [p[1] for p in pareto], where="post", color="grey", lw=0.8, ls="--", label="frontier")
    for r in records:
        if r["chosen"] or r["family"] == "unprotected":
            ax.annotate(("chosen: " if r["chosen"] else "") + r["label"], (100 * r["confident"], r["accuracy"]),
                        textcoords="offset points", xytext=(6, 6), fontsize=8)  # fmt: skip
    ax.axvline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_xlim(-0.01, 2.5 * max([100 * r["confident"] for r in records] + [1.0]))
    ax.set_xlabel("people at confidence ≥ 0.9 in their true education (%, symlog); dotted: the 1 % target")
    ax.set_ylabel("test accuracy")
    ax.set_title("Adult, education sensitive: accuracy against risk (filled = meets the target)", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
