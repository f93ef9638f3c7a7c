#!/usr/bin/env python
"""The report on Adult, for ``docs/report.md``: two audits, their reports and screenshots.

* ``paper``: paper 000's setting (Zhu & Du, DBSec 2010, §5): an ID3 tree (Gini) of depth 4
  predicting ``income`` from the categorical columns (ID3 splits those only), published with error
  rates; the attacker knows those columns and wants the class.
* ``census``: the census threat model: a C4.5 tree predicting ``income`` from every column;
  the attacker knows the demographic columns and wants ``marital-status``, whose distribution is
  public.

Each report gets a small frontier (a stand-in for ``ppdm defend`` until it lands): the tree
pruned by paper 003's Method 1 and Method 2 (``ppdm.defend``) for a few s, and the tree
published with labels only, each audited under the same threat model, with its accuracy on
Adult's test file and its share of people held at confidence ≥ 0.9 in their true value.

Run from the repository root (needs Debian's chromium for the screenshots)::

    PYTHONPATH=src python experiments/report_adult.py             # writes docs/report/*.png
    PYTHONPATH=src python experiments/report_adult.py --keep-html /tmp/reports
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
try:  # run with ppdm installed or PYTHONPATH=src; else fall back to the checkout's src/
    import ppdm  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(REPO / "src"))

from ppdm import AuditOptions, audit  # noqa: E402
from ppdm.attacks.core.target import Target, default_target  # noqa: E402
from ppdm.attacks.core.threat import ThreatModel  # noqa: E402
from ppdm.data.datasets import load_adult  # noqa: E402
from ppdm.defend import collapse_small_children, remove_small_leaves  # noqa: E402
from ppdm.errors import DataError, UninformativeKnowledgeWarning  # noqa: E402
from ppdm.learn import C45Classifier, ID3Classifier  # noqa: E402
from ppdm.report import build_report, write_report  # noqa: E402
from ppdm.report.browser import screenshot  # noqa: E402
from ppdm.report.verdict import measured, risk_share  # noqa: E402

#: One screenshot per part of the report: the CSS that hides every other part (headless
#: Chromium's --screenshot ignores a URL's #fragment, so each part is shown alone instead).
SHOTS = {
    "verdict": "main > section:not(#verdict):not(#advice):not(#threat) { display: none; }",
    "figures": "main > *:not(#attack-0) { display: none; } #attack-0 > *:nth-child(n+7) { display: none; }",
    "tables": "main > *:not(#attack-0) { display: none; } #attack-0 > *:nth-child(-n+6) { display: none; }",
    "frontier": "main > *:not(#frontier) { display: none; }",
    "model": "main > *:not(#model) { display: none; } pre.tree { max-height: 520px; }",
}


def setting(name: str):
    """``(tree, train, test, threat)`` of one of the two settings (see the module docstring)."""
    if name == "paper":
        train, roles = load_adult()
        test, _ = load_adult(split="test")
        features = [c for c in roles.quasi_identifiers if isinstance(train[c].dtype, pd.CategoricalDtype)]
        model = ID3Classifier(criterion="gini", max_depth=4).fit(train[features], train["income"])
        threat = ThreatModel(sensitive="income", known=tuple(features), publish="error-rates")
    else:
        train, roles = load_adult(sensitive="marital-status")
        test, _ = load_adult(split="test", sensitive="marital-status")
        features = [c for c in train.columns if c not in ("income", "fnlwgt")]
        model = C45Classifier().fit(train[features], train["income"])
        threat = ThreatModel(sensitive="marital-status", preset="census", publish="error-rates")
    tree = model.tree_
    tree.class_attribute = "income"
    return tree, train, test, threat


def estimate(tree, train: pd.DataFrame, threat: ThreatModel):  # type: ignore[no-untyped-def]
    """The maximum-entropy estimate of ``tree`` through ``ppdm.audit`` (the estimate alone)."""
    result = audit(tree, train, threat, options=AuditOptions(baselines=False), progress=False).estimate
    assert result is not None
    return result


def frontier(tree, train, test, threat, target: Target) -> list[dict]:
    """The tree and its pruned and less-published versions: accuracy, risk, label."""
    candidates = [("as trained", tree)]
    for s in (10, 50, 200):
        candidates += [(f"method 1, s={s}", remove_small_leaves(tree, s)), (f"method 2, s={s}", collapse_small_children(tree, s))]
    points = []
    for label, candidate in candidates:
        for publish in ("error-rates", "labels"):
            t = ThreatModel(**{**threat.to_spec(), "publish": publish})
            try:
                summary = estimate(candidate, train, t).summary()
            except DataError as exc:  # a pruned tree whose labels its own rows contradict
                print(f"  skipped {label}, {publish}: {exc}")
                continue
            accuracy = float(np.mean(candidate.predict(test) == test["income"].to_numpy()))
            share = risk_share(summary, target) or 0.0
            ok = all(verdict == "met" for verdict in target.judge(measured(summary, target)).values())
            points.append({"accuracy": accuracy, "risk": share, "label": f"{label}, {publish}", "ok": ok})
    best = max((p for p in points if p["ok"]), key=lambda p: p["accuracy"], default=None)
    for p in points:
        p["chosen"] = p is best
        del p["ok"]
    return points


def shot(page: Path, css: str, png: Path) -> None:
    """A screenshot of ``page`` with ``css`` added, cropped to what it shows."""
    from PIL import Image, ImageChops

    copy = page.with_name(page.stem + "_shot.html")
    copy.write_text(page.read_text(encoding="utf-8").replace("</style>", css + "</style>", 1), encoding="utf-8")
    run = screenshot(copy, png, width=1200, height=2400)
    copy.unlink()
    if run.console:
        raise SystemExit(f"{page}: console messages {run.console}")
    image = Image.open(png).convert("RGB")
    box = ImageChops.difference(image, Image.new("RGB", image.size, (250, 250, 250))).getbbox()
    if box is not None:
        image.crop((0, 0, image.width, min(box[3] + 16, image.height))).save(png, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "report")
    parser.add_argument("--keep-html", type=Path, help="Also keep the HTML, JSON and PDF reports in this folder.")
    parser.add_argument("--settings", nargs="+", default=["paper", "census"])
    args = parser.parse_args()
    warnings.simplefilter("ignore", UninformativeKnowledgeWarning)  # labels only: the audit says so in its numbers
    args.out.mkdir(parents=True, exist_ok=True)
    folder = args.keep_html or Path(tempfile.mkdtemp(prefix="ppdm-report-"))
    folder.mkdir(parents=True, exist_ok=True)
    target = default_target()
    for name in args.settings:
        start = time.perf_counter()
        tree, train, test, threat = setting(name)
        result = estimate(tree, train, threat)
        points = frontier(tree, train, test, threat, target)
        report = build_report([result], tree, threat, points, title=f"Adult, {name} setting: what the published tree discloses")
        page = folder / f"adult_{name}.html"
        write_report(report, page, pdf=folder / f"adult_{name}.pdf" if args.keep_html else None)
        for part, css in SHOTS.items():
            shot(page, css, args.out / f"adult_{name}_{part}.png")
        print(f"{name}: {report['attacks'][0]['verdict']['headline']} ({time.perf_counter() - start:.0f} s, load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
