"""Acceptance: the report opens in a real headless browser (Debian's chromium) with no console
error, its person and leaf tables have rows once its script ran, every figure has marks, and it
takes a screenshot and prints to PDF.

Chromium's log (``--enable-logging=stderr``) carries every console message of the page; the
report's script logs nothing, so any message fails the test (a page with a deliberate error
shows that the check sees errors). `.ci/run` installs chromium; where it could not, these tests
skip and say so.
"""

import json
from html.parser import HTMLParser

import pytest

from ppdm.report import build_report, write_report
from ppdm.report.browser import dump_dom, find_chromium, print_pdf, screenshot

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="no Chromium on this machine (apt-get install chromium; .ci/run installs it): the browser acceptance test did not run",
)


class Page(HTMLParser):
    """Counts, in a dumped DOM, the rows of each ``data-table`` table and the marks of each figure."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, int] = {}
        self.marks: dict[str, int] = {}
        self.ready = False
        self._table: str | None = None
        self._figure: str | None = None
        self._in_body_rows = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and a.get("data-ready") == "1":
            self.ready = True
        if tag == "table" and "data-table" in a:
            self._table = a["data-table"]
            self.rows.setdefault(self._table, 0)
        if tag == "tbody":
            self._in_body_rows = self._table is not None
        if tag == "tr" and self._in_body_rows:
            self.rows[self._table] += 1
        if tag == "svg" and a.get("id", "").startswith("fig-"):
            self._figure = a["id"]
            self.marks[self._figure] = 0
        if self._figure and "mark" in (a.get("class") or "").split():
            self.marks[self._figure] += 1

    def handle_endtag(self, tag):
        if tag == "table":
            self._table, self._in_body_rows = None, False
        if tag == "svg":
            self._figure = None


#: Run after the report's own script, as a reader would: list the people of the first leaf of
#: the leaf table (its "people reaching it" button), then sort them by row, twice.
CLICKS = """<script>
(function () {
  const out = {};
  const table = document.querySelector("table[data-table=people]");
  out.before = Number(table.dataset.rows);
  const button = document.querySelector("[data-show-leaf]");
  out.leaf = button.dataset.showLeaf;
  button.click();
  out.filtered = Number(table.dataset.rows);
  const rowHeader = table.querySelector("th");
  rowHeader.click();
  out.first_desc = table.querySelector("tbody tr td").textContent;
  rowHeader.click();
  out.first_asc = table.querySelector("tbody tr td").textContent;
  out.count = table.parentElement.previousElementSibling.querySelector(".count").textContent;
  document.body.dataset.clicks = JSON.stringify(out);
})();
</script>"""


class Clicks(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.clicks: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and "data-clicks" in a:
            self.clicks = json.loads(a["data-clicks"])


@pytest.fixture(scope="module")
def page(audit, tmp_path_factory):
    tree, _, threat, result = audit
    folder = tmp_path_factory.mktemp("report")
    report = build_report([result], tree, threat, frontier=[(0.71, 0.30, "unprotected"), (0.66, 0.0, "pruned", True), (0.6, 0.0, "labels")])
    write_report(report, folder / "report.html")
    return folder / "report.html"


@pytest.fixture(scope="module")
def opened(page):
    """The DOM of the report once its script ran and a reader clicked (:data:`CLICKS`)."""
    clicked = page.with_name("clicked.html")
    clicked.write_text(page.read_text(encoding="utf-8").replace("</body>", CLICKS + "</body>"), encoding="utf-8")
    return dump_dom(clicked)


def test_the_report_renders_with_no_console_error(opened):
    run = opened
    assert run.console == [], f"console messages: {run.console}"
    dom = Page()
    dom.feed(run.stdout)
    assert dom.ready, "the report's script did not run to its end"
    assert dom.rows.get("people", 0) > 0 and dom.rows.get("leaves", 0) > 0, dom.rows
    assert set(dom.marks) == {"fig-confidence-0", "fig-exposure-0", "fig-frontier"}, dom.marks
    assert all(n > 0 for n in dom.marks.values()), dom.marks


def test_a_leaf_lists_its_people_and_columns_sort(opened, audit):
    parser = Clicks()
    parser.feed(opened.stdout)
    clicks = parser.clicks
    assert clicks is not None, "the clicks did not run"
    _, _, _, result = audit
    in_leaf = int(sum(c for c, p in zip(result.groups.counts, result.provenance) if p == f"leaf {clicks['leaf']}"))
    assert clicks["before"] == 100 and clicks["filtered"] == in_leaf == 71
    assert clicks["count"] == f"showing {in_leaf} of {in_leaf} people matching (240 in all)"
    assert int(clicks["first_desc"].replace(",", "")) > int(clicks["first_asc"].replace(",", ""))


def test_the_check_sees_a_broken_page(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>console.error('bad'); missingFunction();</script></body></html>")
    run = dump_dom(broken)
    assert any("bad" in m for m in run.console) and any("missingFunction" in m for m in run.console)


def test_screenshot_and_pdf(page, tmp_path):
    png, pdf = tmp_path / "report.png", tmp_path / "report.pdf"
    assert screenshot(page, png, height=1200).console == []
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    print_pdf(page, pdf)
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 10_000


# -- a forest's report --------------------------------------------------------------------------------


class ForestPage(HTMLParser):
    """In a dumped DOM: the leaf table's rows (cells' text, the first cell's link), the exposure
    plot's bar names (text and link), the ids on the page and the clicks' results."""

    def __init__(self) -> None:
        super().__init__()
        self.leaf_rows: list[dict] = []
        self.bar_names: list[tuple[str, str | None]] = []
        self.ids: set[str] = set()
        self.clicks: dict | None = None
        self._table: str | None = None
        self._row: dict | None = None
        self._cell: list[str] | None = None
        self._in_exposure = False
        self._href: str | None = None
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "body" and "data-clicks" in a:
            self.clicks = json.loads(a["data-clicks"])
        if tag == "table" and "data-table" in a:
            self._table = a["data-table"]
        if self._table == "leaves" and tag == "tr" and self._row is None:
            self._row = {"cells": [], "href": None}
        if self._row is not None and tag == "td":
            self._cell = []
        if self._row is not None and self._cell is not None and tag == "a" and len(self._row["cells"]) == 0:
            self._row["href"] = a.get("href")
        if tag == "svg" and a.get("id") == "fig-exposure-0":
            self._in_exposure = True
        if self._in_exposure and tag == "a":
            self._href = a.get("href")
        if self._in_exposure and tag == "text":
            self._text = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row["cells"].append("".join(self._cell))
            self._cell = None
        if tag == "tr" and self._row is not None:
            if self._row["cells"]:
                self.leaf_rows.append(self._row)
            self._row = None
        if tag == "table":
            self._table = None
        if tag == "text" and self._text is not None:
            text = "".join(self._text)
            if text.startswith(("tree ", "leaf ")):
                self.bar_names.append((text, self._href))
            self._text = None
        if tag == "a":
            self._href = None
        if tag == "svg":
            self._in_exposure = False


@pytest.fixture(scope="module")
def forest_audit(tmp_path_factory):
    """A 10-tree bootstrap random forest of 300 Nursery rows, audited by maximum entropy with
    every feature known, and its report."""
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.models.maxent import maxent_attack
    from ppdm.tree import load_forest

    from forest_files import NURSERY_FEATURES, nursery_forest_files

    folder = tmp_path_factory.mktemp("forest-report")
    frame, _ = nursery_forest_files(folder, rows=300, trees=10, depth=4)
    forest = load_forest(folder / "forest.json")
    threat = ThreatModel(sensitive="class", known=tuple(NURSERY_FEATURES))
    result = maxent_attack(forest, frame, threat=threat)
    report = build_report([result], forest, threat)
    write_report(report, folder / "forest.html")
    return forest, result, folder / "forest.html"


@pytest.fixture(scope="module")
def forest_dom(forest_audit):
    _, _, page = forest_audit
    clicked = page.with_name("forest-clicked.html")
    clicked.write_text(page.read_text(encoding="utf-8").replace("</body>", CLICKS + "</body>"), encoding="utf-8")
    run = dump_dom(clicked)
    assert run.console == [], f"console messages: {run.console}"
    dom = ForestPage()
    dom.feed(run.stdout)
    return dom


def test_a_forest_report_tables_each_tree_s_leaves_with_their_rule(forest_audit, forest_dom):
    forest, result, _ = forest_audit
    rows = forest_dom.leaf_rows
    assert len(rows) == 50  # the first 50 of the table
    trees = set()
    for row in rows:
        name, rule, published = row["cells"][:3]
        t, leaf = name.removeprefix("tree ").split(" leaf ")
        trees.add(int(t))
        assert row["href"] == f"#tree-{t}-node-{leaf}" and row["href"][1:] in forest_dom.ids  # links to its line
        node = forest.trees[int(t)].nodes[int(leaf)]
        assert node.is_leaf and rule and published.startswith(str(forest.classes[node.label]))
    assert len(trees) >= 5, trees
    every = {(t, n) for t, n in zip(result.leaf_pairs.tree.tolist(), result.leaf_pairs.leaf.tolist())}
    shown = {tuple(int(x) for x in r["cells"][0].removeprefix("tree ").split(" leaf ")) for r in rows}
    assert shown <= every


def test_a_forest_s_exposure_plot_names_tree_and_leaf(forest_dom):
    names = forest_dom.bar_names
    assert len(names) == 12 and len({n for n, _ in names}) == 12, names
    for text, href in names:
        t, leaf = text.removeprefix("tree ").split(" leaf ")
        assert href == f"#tree-{t}-node-{leaf}" and href[1:] in forest_dom.ids


def test_a_forest_leaf_lists_the_people_who_reach_it(forest_audit, forest_dom):
    _, result, _ = forest_audit
    clicks = forest_dom.clicks
    assert clicks is not None, "the clicks did not run"
    first = forest_dom.leaf_rows[0]["cells"][0]
    t, leaf = (int(x) for x in first.removeprefix("tree ").split(" leaf "))
    assert clicks["leaf"] == str(leaf)
    pairs = result.leaf_pairs
    groups = pairs.group[(pairs.tree == t) & (pairs.leaf == leaf)]
    reaching = int(result.groups.counts[groups].sum())
    assert 0 < reaching < 300
    assert clicks["filtered"] == min(reaching, 100)
    assert clicks["count"] == f"showing {min(reaching, 100)} of {reaching} people matching (300 in all)"


def test_a_forest_report_screenshot(forest_audit, tmp_path):
    _, _, page = forest_audit
    png = tmp_path / "forest.png"
    assert screenshot(page, png, height=1200).console == []
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


# -- a membership audit's report --------------------------------------------------------------------


def test_a_membership_report_renders_with_no_console_error(nursery, tmp_path):
    import numpy as np
    import pandas as pd
    from sklearn.tree import DecisionTreeClassifier

    from ppdm.attacks.membership.audit import membership_attack
    from ppdm.tree import tree_from_sklearn

    frame, _ = nursery
    inputs = [c for c in frame.columns if c != "class"]
    population = frame.sample(800, random_state=2).reset_index(drop=True)
    member = np.random.default_rng(2).random(len(population)) < 0.5
    train = population[member].reset_index(drop=True)
    est = DecisionTreeClassifier(random_state=0).fit(pd.get_dummies(train[inputs]).astype(float), train["class"])
    tree = tree_from_sklearn(est, train[inputs], y=train["class"])
    write_report(build_report([], tree, membership=membership_attack(tree, population, truth=member)), tmp_path / "m.html")
    run = dump_dom(tmp_path / "m.html")
    assert run.console == [], f"console messages: {run.console}"
    dom = Page()
    dom.feed(run.stdout)
    assert dom.ready, "the report's script did not run to its end"
    assert set(dom.marks) == {"fig-membership-roc"} and dom.marks["fig-membership-roc"] >= 4, dom.marks
