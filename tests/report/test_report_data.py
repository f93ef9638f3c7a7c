"""The report's data: people, leaves, verdicts and advice agree with the attack result."""

import json
import re
import subprocess

import numpy as np
import pytest

from ppdm.attacks.core.target import parse_target
from ppdm.errors import ReportError
from ppdm.report import build_report, frontier_of, render_html, verdict
from ppdm.report.exposure import leaf_of
from ppdm.report.persons import persons_from_report
from ppdm.report.plots import pareto_front, share_at_least
from ppdm.tree.render import render_tree


@pytest.fixture(scope="module")
def report(audit):
    tree, _, threat, result = audit
    return build_report([result], tree, threat, frontier=[(0.71, 0.3, "unprotected"), (0.66, 0.0, "pruned", True)])


def test_each_person_keeps_their_row_and_confidence_in_their_true_value(audit, report):
    _, _, _, result = audit
    persons = persons_from_report(report["attacks"][0])
    order = np.argsort(persons.row)
    assert persons.row[order].tolist() == list(range(result.groups.n_records))
    np.testing.assert_allclose(persons.confidence()[order], result.confidence_in_truth(), atol=1e-6)
    # and survives the JSON round trip (from a saved result as well as from the object)
    again = build_report([json.loads(json.dumps(result.to_dict()))])
    assert again["attacks"][0]["people"] == report["attacks"][0]["people"]


def test_the_leaf_table_names_the_leaf_that_proves_people(audit, report):
    tree, _, _, result = audit
    rows = report["attacks"][0]["exposure"]
    top = rows[0]
    assert top["leaf"] == 1 and top["certain_right"] == 71 == result.summary()["certain_right"]
    assert top["discloses"] == "p: 71" and top["anchor"] == "node-1"
    assert leaf_of(report["model"], None, 1)["rule"] == "a = x" and "rule" not in top  # kept once, in the model's leaf_info
    assert sum(r["sole"] for r in rows) == result.groups.n_records  # every group here lands in one leaf
    shown = render_tree(tree, ids=True)
    for r in rows:  # every id the table names is on a line of `ppdm show`
        assert f"[node {r['leaf']}]" in shown


def test_verdict_puts_the_baseline_next_to_the_attack(report):
    v = report["attacks"][0]["verdict"]
    assert v["level"] == "fails"
    assert v["headline"].startswith("The attacker is right for 71 % of people") and "is right for 60 %" in v["headline"]
    assert any("71 people are proved" in line for line in v["lines"])
    relaxed = verdict(report["attacks"][0]["summary"], parse_target("certain=100,confident=50%@0.9"))
    assert relaxed["level"] == "meets"


def test_advice_names_the_leaves_to_prune_and_the_search(report):
    advice = " ".join(report["advice"])
    assert "leaf 1 causes 100 % of the proved people" in advice and "ppdm prune" in advice
    assert "--publish error-rates" in advice
    assert "chose 'pruned': accuracy 66.0 %, share of people at confidence ≥ 0.9 0.0 %" in advice


def test_the_report_reads_no_leaf_out_of_a_provenance_text():
    """Leaves come from the results' leaf pairs: no regular expression of the report's code
    (Python or its script) is applied to provenance or names a leaf."""
    from pathlib import Path

    import ppdm.report

    folder = Path(ppdm.report.__file__).parent
    found = subprocess.run(
        ["grep", "-rn", "--include=*.py", r"re\.\(search\|match\|findall\|compile\|fullmatch\|sub\)", "."],
        capture_output=True, text=True, check=False, cwd=folder,
    ).stdout.splitlines()
    assert found, "the check should see the report's other regular expressions (threat lines, the browser's log)"
    assert not [line for line in found if re.search(r"provenance|leaf|leaves", line, re.I)], found
    script = (folder / "script.py").read_text()
    literals = re.findall(r"/\^[^/\n]*/", script)  # the script's regular expression literals
    assert all("leaf" not in lit and "tree" not in lit for lit in literals if "leaf:" not in lit), literals


def test_a_result_without_leaf_pairs_is_tabled_by_its_provenance_texts(audit):
    """A rule set's audit, or a result written before ppdm recorded leaf pairs: one row per
    distinct provenance text, and nothing parsed out of it (the text looks like a leaf here)."""
    _, _, _, result = audit
    data = result.to_dict()
    for g in data["groups"]:
        del g["leaf_pairs"]
    attack = build_report([data])["attacks"][0]
    rows = attack["exposure"]
    assert {r["source"] for r in rows} == set(result.provenance) and all(r["leaf"] is None for r in rows)
    assert sum(r["people"] for r in rows) == 240 and attack["groups"]["leaf_pairs"] is None
    assert "no leaf pairs" in render_html(build_report([data]))
    for g in data["groups"]:
        g["provenance"] = "AR rows 1, NAR rows 0"
    rows = build_report([data])["attacks"][0]["exposure"]
    assert [r["source"] for r in rows] == ["AR rows 1, NAR rows 0"] and rows[0]["people"] == 240


def test_leaf_pairs_of_some_groups_only_are_refused(audit, tmp_path):
    from ppdm.report.load import load_result

    _, _, _, result = audit
    data = result.to_dict()
    del data["groups"][1]["leaf_pairs"]
    path = tmp_path / "half.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ReportError, match=r"half.json: 1 of \d+ groups have no leaf_pairs"):
        load_result(path)
    data["groups"][1]["leaf_pairs"] = [["tree 0", 4]]
    path.write_text(json.dumps(data))
    with pytest.raises(ReportError, match=r"half.json: leaf pairs: .*\[tree, leaf\] integer pairs"):
        load_result(path)


def test_without_true_values_the_report_says_what_it_cannot_measure(audit):
    _, _, _, result = audit
    data = result.to_dict()
    for g in data["groups"]:
        del g["truth"], g["targets"]
    for key in ("baseline", "attacker_accuracy"):
        del data["summary"][key]
    rep = build_report([data])
    assert rep["attacks"][0]["verdict"]["level"] == "fails" and "not measured" in rep["attacks"][0]["verdict"]["headline"]
    assert "<svg" in render_html(rep)


def test_the_page_is_self_contained(report):
    page = render_html(report)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert page.count('<svg id="fig-') == 3
    for anchor in ("node-0", "node-1", "node-7"):
        assert f'id="{anchor}"' in page
    assert "</script" not in page.split('id="report-data">')[1].split("</script>")[0]


def test_the_embedded_data_cannot_close_its_script(audit):
    tree, _, threat, result = audit
    data = result.to_dict()
    data["groups"][0]["qi"]["a"] = "</script><script>alert(1)</script>"
    page = render_html(build_report([data], tree, threat))
    assert "<script>alert(1)" not in page


def test_frontier_points_are_checked():
    assert frontier_of([(0.8, 0.1, "a")], "risk")["points"] == [{"accuracy": 0.8, "risk": 0.1, "label": "a", "chosen": False}]
    assert frontier_of({"risk": "r", "points": [{"accuracy": 1, "risk": 0, "label": "b", "chosen": True}]}, "x")["risk"] == "r"
    with pytest.raises(ReportError, match="frontier point 0"):
        frontier_of([(0.8, "high", "a")], "risk")
    with pytest.raises(ReportError, match="frontier point 1"):
        frontier_of([(0.8, 0.1, "a"), 3], "risk")


def test_curves_and_front():
    np.testing.assert_allclose(share_at_least(np.array([0.2, 0.5, 1.0]), np.array([0.0, 0.5, 1.0])), [1, 2 / 3, 1 / 3])
    front = pareto_front(np.array([0.0, 0.1, 0.2, 0.05]), np.array([0.6, 0.8, 0.7, 0.5]))
    assert front.tolist() == [0, 1]


def test_a_report_needs_a_result():
    with pytest.raises(ReportError, match="at least one"):
        build_report([])
    with pytest.raises(ReportError, match="not an attack result"):
        build_report([{"format": "ppdm-tree"}])


def test_a_forest_is_drawn_tree_by_tree_with_its_own_anchors(audit):
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.tree import forest_from_sklearn

    _, frame, _, _ = audit
    X = pd.DataFrame({"a": frame["a"].cat.codes.astype(float), "b": frame["b"].cat.codes.astype(float)})
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, frame["s"])
    forest = forest_from_sklearn(rf, X, y=frame["s"])
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.models.maxent import maxent_attack

    of_forest = maxent_attack(forest, X.assign(s=frame["s"]), threat=ThreatModel(known=("a", "b")))  # the forest's own audit
    report = build_report([of_forest], forest)
    trees = report["model"]["trees"]
    assert report["model"]["kind"] == "forest" and [t["index"] for t in trees] == [0, 1, 2]
    page = render_html(report)
    for i, tree in enumerate(trees):
        assert tree["lines"][0]["anchor"] == f"tree-{i}-node-0" and f'id="tree-{i}-node-0"' in page


def test_a_long_model_is_left_out_of_the_print_only(report):
    from ppdm.report.html import HtmlOptions

    assert 'id="model" class="long"' not in render_html(report)
    page = render_html(report, HtmlOptions(printed_lines=3))
    assert 'id="model" class="long"' in page and "too many to print" in page and 'id="node-7"' in page


def test_a_defense_frontier_lists_the_candidates_it_could_not_audit():
    front = [
        {"label": "unprotected", "accuracy": 0.9, "risk": 5.0, "status": "audited", "risk_measure": "certain"},
        {"label": "DP tree ε=1", "accuracy": None, "risk": None, "status": "failed: no audit applies"},
    ]
    out = frontier_of(front, "risk")
    assert out["risk"] == "certain" and [p["label"] for p in out["points"]] == ["unprotected"]
    assert out["not_audited"] == [{"label": "DP tree ε=1", "status": "failed: no audit applies"}]
    with pytest.raises(ReportError, match="frontier point 0"):  # a point without numbers and without a reason stays an error
        frontier_of([{"label": "x", "accuracy": None, "risk": None}], "risk")


def test_a_forest_audit_is_tabled_by_tree_and_leaf(audit):
    """Every (tree, leaf) pair the groups reach gets a row with its rule, what it publishes and its
    anchor; people are counted once per tree; a saved result gives the same table."""
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.models.maxent import maxent_attack
    from ppdm.tree import forest_from_sklearn

    _, frame, _, _ = audit
    X = pd.DataFrame({"a": frame["a"].cat.codes.astype(float), "b": frame["b"].cat.codes.astype(float)})
    rf = RandomForestClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, frame["s"])
    forest = forest_from_sklearn(rf, X, y=frame["s"])
    data = X.assign(s=frame["s"])
    threat = ThreatModel(sensitive="s", known=("a", "b"))
    result = maxent_attack(forest, data, threat=threat)
    report = build_report([result], forest, threat)
    attack = report["attacks"][0]
    rows = attack["exposure"]
    pairs = result.leaf_pairs
    assert {(r["tree"], r["leaf"]) for r in rows} == set(zip(pairs.tree.tolist(), pairs.leaf.tolist()))
    for r in rows:
        assert r["source"] == f"tree {r['tree']} leaf {r['leaf']}" and r["anchor"] == f"tree-{r['tree']}-node-{r['leaf']}"
        info = leaf_of(report["model"], r["tree"], r["leaf"])
        assert info["rule"] and info["published"] and "rule" not in r
    for t in range(4):  # every person lands in one leaf of every tree
        assert sum(r["people"] for r in rows if r["tree"] == t) == sum(r["sole"] for r in rows if r["tree"] == t) == 240
    lp = attack["groups"]["leaf_pairs"]
    assert lp["tree"] == pairs.tree.tolist() and lp["leaf"] == pairs.leaf.tolist() and lp["offsets"] == pairs.offsets.tolist()
    saved = build_report([json.loads(json.dumps(result.to_dict()))], forest, threat)
    assert saved["attacks"][0]["exposure"] == rows
    unsaved = build_report([json.loads(json.dumps(result.to_dict()))])  # without the model: trees from the pairs
    assert [r["source"] for r in unsaved["attacks"][0]["exposure"]] == [r["source"] for r in rows]
    page = render_html(report)
    assert "tree:0 leaf:7" in page and "no leaf pairs" not in page
    assert any(r["certain_right"] for r in rows)  # the pure leaf (a = x) proves its people in every tree
    assert any("proved people (71) reach a leaf in each of the forest's 4 trees" in step for step in report["advice"]), report["advice"]


def test_a_report_refuses_the_model_of_another_audit(audit):
    """An audit of a tree drawn over a forest (or another tree) would show one model's leaves
    under another's title: refused, naming the leaf."""
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.errors import ReportError
    from ppdm.tree import forest_from_sklearn

    _, frame, _, result = audit
    X = pd.DataFrame({"a": frame["a"].cat.codes.astype(float), "b": frame["b"].cat.codes.astype(float)})
    forest = forest_from_sklearn(RandomForestClassifier(n_estimators=3, max_depth=1, random_state=0).fit(X, frame["s"]), X, y=frame["s"])
    with pytest.raises(ReportError, match="audited another model"):
        build_report([result], forest)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["summary"].update(records=-5), "summary records is -5"),
        (lambda d: d["groups"][0].update(posterior=[float("nan")] * len(d["values"])), "is not a probability distribution"),
        (lambda d: d["groups"][0].update(posterior=[2.0] + [0.0] * (len(d["values"]) - 1)), "is not a probability distribution"),
        (lambda d: d["groups"][0].update(records=-1), "group 0 has -1 records"),
    ],
)
def test_a_saved_result_with_impossible_numbers_is_refused(audit, tmp_path, change, message):
    import json

    from ppdm.errors import ReportError
    from ppdm.report.load import load_result

    data = audit[3].to_dict()
    change(data)
    (tmp_path / "r.json").write_text(json.dumps(data))
    with pytest.raises(ReportError, match=message):
        load_result(tmp_path / "r.json")
