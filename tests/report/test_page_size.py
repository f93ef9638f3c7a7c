"""The HTML page stays small enough to send: it lists the people most at risk, the most exposed
leaves and the model's paths to them; the report's JSON keeps everyone."""

import json
import re

import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.data.datasets import load_adult
from ppdm.report.page import PAGE_LEAVES, PAGE_PEOPLE, lines_shown


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    train = load_adult("train")[0].sample(4000, random_state=0).reset_index(drop=True)
    X = pd.get_dummies(train.drop(columns="income"))
    clf = DecisionTreeClassifier(random_state=0).fit(X, train["income"])
    audit = ppdm.audit(ppdm.from_estimator(clf, train), train, ppdm.ThreatModel(sensitive="sex", preset="insider"))
    html = tmp_path_factory.mktemp("page") / "audit.html"
    audit.report(html)
    return html.read_text(encoding="utf-8"), json.loads(html.with_name("audit.report.json").read_text(encoding="utf-8"))


def _embedded(page: str) -> dict:
    return json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))


def test_a_mid_sized_audit_writes_a_small_page(written):
    page, report = written
    attack = report["attacks"][0]
    assert len(attack["people"]["row"]) == 4000 > PAGE_PEOPLE and len(attack["exposure"]) > PAGE_LEAVES
    # 4,000 people: the page is drawn in well under 5 MB per 10,000 people (it was 1 MB here, 7.6 MB for 30,162)
    assert len(page.encode()) < 600_000
    shown = _embedded(page)["attacks"][0]
    assert len(shown["people"]["row"]) == PAGE_PEOPLE and shown["people"]["total"] == 4000
    assert len(shown["exposure"]) == PAGE_LEAVES and shown["exposure_total"] == len(attack["exposure"])
    assert f"lists the {PAGE_PEOPLE:,} people most at risk of 4,000" in page


def test_the_page_lists_the_people_most_at_risk(written):
    page, report = written
    attack, shown = report["attacks"][0], _embedded(page)["attacks"][0]
    proved = attack["summary"]["certain_right"]
    assert 0 < proved < PAGE_PEOPLE
    posterior = shown["groups"]["posterior"]
    listed = [max(posterior[g]) >= 1 - 1e-9 for g in shown["people"]["group"]]
    assert sum(listed) == proved  # every proved person is listed


def test_the_model_is_shown_by_the_paths_to_the_leaves_listed(written):
    page, report = written
    tree = report["model"]["trees"][0]
    leaves = {r["leaf"] for r in report["attacks"][0]["exposure"][:PAGE_LEAVES]}
    for leaf in leaves:
        assert f'id="node-{leaf}"' in page
    kept = lines_shown(tree, leaves)
    assert kept is not None and len(kept) < len(tree["lines"])
    assert f'id="node-{tree["lines"][0]["id"]}"' in page  # the root


def test_a_path_keeps_every_ancestor():
    lines = [{"id": i, "text": t} for i, t in enumerate([
        "root  [node 0]", "a <= 1  [node 1]", "|   b <= 2: p  [node 2]", "|   b > 2: q  [node 3]", "a > 1  [node 4]",
        "|   c <= 1  [node 5]", "|   |   d <= 1: p  [node 6]", "|   |   d > 1: q  [node 7]", "|   c > 1: q  [node 8]",
    ])]
    assert [line["id"] for line in lines_shown({"lines": lines}, {7})] == [0, 4, 5, 7]
    assert [line["id"] for line in lines_shown({"lines": lines}, {2, 8})] == [0, 1, 2, 4, 8]
    assert lines_shown({"lines": lines}, {99}) is None


def test_a_forest_of_many_trees_lists_fewer_people():
    from ppdm.report.page import PAGE_PEOPLE, PAGE_PEOPLE_BYTES, PAGE_PEOPLE_FEWEST, people_limit

    def attack(trees: int) -> dict:
        groups = 10
        return {"groups": {"qi": [["Private", "40", "United-States"]] * groups, "leaf_pairs": {
            "offsets": list(range(0, groups * trees + 1, trees)), "tree": list(range(trees)) * groups, "leaf": [1234] * (groups * trees)}}}

    assert people_limit(attack(10)) == PAGE_PEOPLE
    many = people_limit(attack(500))
    assert PAGE_PEOPLE_FEWEST <= many < PAGE_PEOPLE and many * 500 * 12 <= PAGE_PEOPLE_BYTES
