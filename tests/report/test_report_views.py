"""Acceptance in a real headless browser: the reports of five audits a privacy officer meets — a
tree, a 10-tree random forest, an XGBoost model, a defended model and a membership audit — each
open with no console message, state what was audited before any verdict, table every tree's
leaves with their rule and what is published, fit their leaf table without scrolling sideways,
and clip no label of any figure (every SVG text's box lies inside its figure, which its viewBox
fills).

The table is a small synthetic bank-loan table (600 customers) shaped like the README's: a
numeric sensitive column ``Education`` (1, 2, 3) the models split on, amounts with one decimal
(``CCAvg``) and an identifier and ZIP code the people table must not wrap mid-number.

Screenshots go to a temporary folder; ``PPDM_SCREENSHOTS=docs/report`` writes them there instead
(how ``docs/report/views_*.png`` are made)::

    PPDM_SCREENSHOTS=docs/report PYTHONPATH=src python -m pytest -q tests/report/test_report_views.py
"""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from ppdm.report.browser import find_chromium, run_chromium, screenshot

from loan_table import FEATURES, loan_table

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="no Chromium on this machine (apt-get install chromium; .ci/run installs it): the browser acceptance test did not run",
)


KNOWN = ("Age", "Income", "Family", "CCAvg")
KINDS = ("tree", "forest", "xgboost", "defended", "membership")


def _report(kind: str, folder: Path) -> Path:
    """Audit one model of ``kind`` and write its report; return the page."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    import ppdm

    data = loan_table()
    X, y = data[FEATURES], data["Personal Loan"]
    threat = ppdm.ThreatModel(sensitive="Education", known=KNOWN, class_known=True)
    page = folder / f"{kind}.html"
    if kind == "membership":
        population = loan_table(1200, seed=1)
        member = np.random.default_rng(2).random(len(population)) < 0.5
        train = population[member].reset_index(drop=True)
        est = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(train[FEATURES], train["Personal Loan"])
        model = ppdm.from_estimator(est, train[FEATURES], train["Personal Loan"])
        ppdm.audit(model, membership=population[[*FEATURES, "Personal Loan"]].assign(member=member)).report(page)
        return page
    if kind == "forest":
        est = RandomForestClassifier(10, max_depth=4, random_state=0, n_jobs=1).fit(X, y)
    elif kind == "xgboost":
        xgb = pytest.importorskip("xgboost")
        est = xgb.XGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y)
    else:
        est = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(X, y)
    model = ppdm.from_estimator(est, X, y)
    frontier = None
    if kind == "defended":
        search = ppdm.defend(model, data, threat, "certain=0,confident=0.01@0.9", families=("pruning", "publish-less", "dp"), time_budget=120, progress=False)
        assert search.chosen is not None
        model, frontier = search.chosen, search.frontier_records()
        data = search.train  # the chosen model was fitted on the search's training part
    exact = {"exact": True, "exact_time_limit": 8.0} if kind in ("tree", "forest") else {}
    ppdm.audit(model, data, threat, **exact).report(page, frontier=frontier)
    return page


#: Run after the report's own script, as a reader's browser lays the page out: what the first
#: section says, the leaf table's first rows and whether it fits, every figure's text that
#: leaves its figure, and the people table's cells that wrap.
PROBE = """<script>
(function () {
  const out = {};
  const first = document.querySelector("main > section");
  out.first = first ? first.id : null;
  out.sections = Array.from(document.querySelectorAll("main > section")).map(function (s) { return s.id; });
  out.audited = first ? Array.from(first.querySelectorAll("tr")).map(function (tr) {
    return [tr.querySelector("th").textContent, tr.querySelector("td").textContent]; }) : [];
  out.clipped = [];
  document.querySelectorAll("svg").forEach(function (svg) {
    const box = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
    if (!vb || !vb.width || !box.width) return;
    svg.querySelectorAll("text").forEach(function (t) {
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 1 || r.top < box.top - 1 || r.right > box.right + 1 || r.bottom > box.bottom + 1)
        out.clipped.push((svg.id || "svg") + ": " + t.textContent);
    });
  });
  const leaves = document.querySelector("table[data-table=leaves]");
  if (leaves) {
    const wrap = leaves.parentElement;
    out.leaf_fits = wrap.scrollWidth <= wrap.clientWidth + 1;
    out.leaf_cut_headers = Array.from(leaves.querySelectorAll("th")).filter(function (th) {
      return th.scrollWidth > th.clientWidth + 1; }).map(function (th) { return th.textContent; });
    out.leaf_headers = Array.from(leaves.querySelectorAll("th")).map(function (th) { return th.textContent; });
    out.leaf_rows = Array.from(leaves.querySelectorAll("tbody tr")).slice(0, 20).map(function (tr) {
      return Array.from(tr.children).map(function (td) { return td.textContent; }); });
    out.leaf_more_hidden = wrap.nextElementSibling.hidden;
    out.leaf_count = wrap.previousElementSibling.querySelector(".count").textContent;
  }
  const people = document.querySelector("table[data-table=people]");
  if (people) {
    out.wrapped_numbers = Array.from(people.querySelectorAll("tbody td")).filter(function (td) {
      return /^[-+]?[\\d.,]+$/.test(td.textContent) && getComputedStyle(td).whiteSpace !== "nowrap"; }).length;
  }
  out.values_shown = Array.from(document.querySelectorAll("#verdict .headline")).map(function (h) { return h.textContent; });
  document.body.dataset.probe = JSON.stringify(out);
})();
</script>"""


class Probe(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.probe: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and "data-probe" in a:
            self.probe = json.loads(a["data-probe"])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("views")


@pytest.fixture(scope="module", params=KINDS)
def page(request, folder):
    return request.param, _report(request.param, folder)


@pytest.fixture(scope="module")
def probed(page):
    kind, path = page
    probed = path.with_name(f"{kind}-probed.html")
    probed.write_text(path.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    run = run_chromium(probed, "--dump-dom", "--virtual-time-budget=5000", "--window-size=1280,1400")
    parser = Probe()
    parser.feed(run.stdout)
    assert parser.probe is not None, "the probe did not run"
    return kind, run.console, parser.probe, json.loads(path.with_suffix(".report.json").read_text(encoding="utf-8"))


def test_no_console_message(probed):
    kind, console, _, _ = probed
    assert console == [], f"{kind}: console messages: {console}"


def test_the_first_card_states_what_was_audited(probed):
    kind, _, probe, report = probed
    assert probe["first"] == "audited" and probe["sections"].index("audited") < probe["sections"].index("verdict"), probe["sections"]
    facts = dict(probe["audited"])
    assert {"model", "target"} <= set(facts), facts
    if kind == "membership":
        assert facts["candidates"].startswith("1,200 people")
        return
    assert {"rows", "attacker", "sensitive", "published"} <= set(facts), facts
    trained = " (the model does not publish how many rows it was trained on)" if report["model"]["disclosure"] == "labels" else ", of the 600 the model was trained on"
    rows = 450 if kind == "defended" else 600  # a defended model is fitted on the search's training part (75 %)
    trained = trained.replace("600", str(rows))
    assert facts["rows"].startswith(f"{rows} rows audited" + trained), facts["rows"]
    assert facts["sensitive"] == "'Education' (values 1, 2, 3)"
    assert facts["attacker"].endswith("Age, Income, Family, CCAvg, Personal Loan")
    assert facts["target"] == "nobody certain, ≤ 1 % at confidence ≥ 0.9"
    if kind == "forest":
        assert facts["model"].startswith("scikit-learn random forest predicting 'Personal Loan': 10 trees")
        assert facts["trees"] == "all 10 trees read."
    if kind == "xgboost":
        assert facts["model"].startswith("XGBoost boosted trees predicting 'Personal Loan': 10 trees")
        assert re.match(r"(all 10 boosting rounds read|\d+ of 10 boosting rounds read; left out: .+ because )", facts["rounds"]), facts["rounds"]
    if kind in ("tree", "defended"):
        assert facts["model"].startswith("scikit-learn decision tree predicting 'Personal Loan': ")
    assert report["audited"] == [{"label": k, "text": v} for k, v in probe["audited"]]


def test_the_per_leaf_table_lists_trees_and_leaves(probed):
    kind, _, probe, report = probed
    if kind == "membership":
        assert "leaf_rows" not in probe
        return
    rows = probe["leaf_rows"]
    assert rows and probe["leaf_headers"][:3] == ["leaf", "rule (path to the leaf)", "published"]
    for name, rule, published, *_ in rows:
        if kind in ("forest", "xgboost"):
            assert re.fullmatch(r"tree \d+ leaf \d+", name), name
        else:
            assert re.fullmatch(r"leaf \d+", name), name
        assert rule and published, (name, rule, published)
        # thresholds at the data's precision: no float32 noise such as 2.950000047683716
        assert not re.search(r"\d\.\d{6,}", rule), rule
    if kind == "xgboost":
        assert all(re.match(r"value [-+]\d", r[2]) for r in rows), [r[2] for r in rows]
    shown, total = (int(x.replace(",", "")) for x in re.findall(r"[\d,]+", probe["leaf_count"])[:2])
    assert probe["leaf_more_hidden"] == (shown == total)


def test_layout_fits(probed):
    kind, _, probe, _ = probed
    assert probe["clipped"] == [], f"{kind}: labels outside their figure: {probe['clipped']}"
    if kind != "membership":
        assert probe["leaf_fits"], f"{kind}: the leaf table scrolls sideways"
        assert probe["leaf_cut_headers"] == [], probe["leaf_cut_headers"]
        assert probe["wrapped_numbers"] == 0


def test_sensitive_values_are_the_data_s(probed):
    kind, _, probe, report = probed
    if kind == "membership":
        return
    for attack in report["attacks"]:
        assert set(attack["values"]) <= {"1", "2", "3", "2 or 3", "1 or 2", "1, 2 or 3"}, attack["values"]
    assert not any("Education <=" in h or "Education >" in h for h in probe["values_shown"]), probe["values_shown"]


def test_proved_people_are_counted_once(probed):
    """The advice's count of proved people agrees with the verdict's."""
    kind, _, _, report = probed
    for attack in report["attacks"]:
        proved = attack["summary"].get("certain_right", 0)
        for line in report["advice"]:
            if not line.startswith(attack["name"]):
                continue
            tree = re.search(r"proved people \(([\d,]+) of ([\d,]+);", line)
            forest = re.search(r"the proved people \(([\d,]+)\) reach a leaf", line)
            if tree:
                covered, total = (int(x.replace(",", "")) for x in tree.groups())
                assert total == proved and covered <= proved, line
            if forest:
                assert int(forest.group(1).replace(",", "")) == proved, line


def test_exact_and_estimate_in_one_headline(probed):
    kind, _, _, report = probed
    if kind not in ("tree", "forest"):
        assert report.get("reconciled") is None
        return
    r = report["reconciled"]
    attacks = {a["attack"]: a for a in report["attacks"]}
    estimate = next(a for name, a in attacks.items() if name != "exact")
    assert r["proved"] == attacks["exact"]["summary"]["certain_right"]
    assert r["estimated_certain"] == estimate["summary"]["certain_right"]
    assert r["both"] + r["proved_only"] == r["proved"] and r["both"] + r["estimate_only"] == r["estimated_certain"]
    assert r["undecided"] is not None
    assert "It proves, it does not guess" in " ".join(attacks["exact"]["verdict"]["lines"])


def test_dp_candidates_are_explained(page, probed):
    kind, path = page
    if kind != "defended":
        return
    html = path.read_text(encoding="utf-8")
    assert 'id="not-audited-dp"' in html and "noise added" in html and "failed: no audit applies" not in html


def test_screenshots(page):
    """The first screen of every report, and the leaf table of the forest and the boosted model."""
    kind, path = page
    out = Path(os.environ.get("PPDM_SCREENSHOTS") or path.parent)
    out.mkdir(parents=True, exist_ok=True)
    shots = {f"views_{kind}.png": ("", 1100)}
    if kind in ("forest", "xgboost"):
        shots[f"views_{kind}_leaves.png"] = ("main > *:not([id^=attack-0]) { display: none; } #attack-0 > *:nth-child(-n+6) { display: none; }", 900)
    for name, (css, height) in shots.items():
        shown = path.with_name(f"{kind}-shot.html")
        shown.write_text(path.read_text(encoding="utf-8").replace("</head>", f"<style>{css}</style></head>"), encoding="utf-8")
        png = out / name
        assert screenshot(shown, png, width=1100, height=height).console == []
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and 10_000 < png.stat().st_size < 400_000


#: The print stylesheet's page: A4 landscape less 12 mm margins, in CSS pixels.
PRINTED_WIDTH = 1030


def test_printed_people_pages_are_readable(page):
    """The print stylesheet applied on screen at the printed page's width: the people table's type
    is at least 10 px, it fits the page, and no id, ZIP code or number wraps."""
    kind, path = page
    if kind == "membership":
        return
    printed = path.with_name(f"{kind}-print.html")
    probe = """<script>
    (function () {
      const t = document.querySelector("[data-table=people] table"), wrap = t.parentElement;
      const cells = Array.from(t.querySelectorAll("tbody td"));
      document.body.dataset.probe = JSON.stringify({
        size: parseFloat(getComputedStyle(t).fontSize), fits: wrap.scrollWidth <= wrap.clientWidth + 1,
        wrapped: cells.filter(function (td) {  // a number laid out on more than one line
          if (!/^[-+]?[\\d.,]+$/.test(td.textContent)) return false;
          const range = document.createRange();
          range.selectNodeContents(td);
          return range.getClientRects().length > 1;
        }).length,
      });
    })();
    </script>"""
    html = path.read_text(encoding="utf-8").replace("@media print {", "@media all {").replace("</body>", probe + "</body>")
    printed.write_text(html, encoding="utf-8")
    run = run_chromium(printed, "--dump-dom", "--virtual-time-budget=5000", f"--window-size={PRINTED_WIDTH},1400")
    parser = Probe()
    parser.feed(run.stdout)
    assert parser.probe is not None and run.console == []
    assert parser.probe["size"] >= 10 and parser.probe["fits"] and parser.probe["wrapped"] == 0, parser.probe
