"""Root cause 9: a report's inputs are checked: an attack result with impossible counts, posteriors
or fields of the wrong type, a frontier with impossible points, a model that is not the one the
result audited, are refused naming the file and the field; no report is written."""

from __future__ import annotations

import json

import pytest


def _group(i):
    return lambda d: d["groups"][i]


def _set_group(i, key, value):
    return lambda d: d["groups"][i].__setitem__(key, value)


def _set_summary(key, value):
    return lambda d: d["summary"].__setitem__(key, value)


#: (id, mutation of the world's audit result, needles).
RESULT_MUTATIONS = [
    ("records-negative", _set_summary("records", -5), ("summary records is -5",)),
    ("records-fraction", _set_summary("records", 1.5), ("summary records is 1.5",)),
    ("records-disagree", _set_summary("records", 299), ("the groups hold 300 records but summary records is 299",)),
    ("certain-nan", _set_summary("certain_records", float("nan")), ("summary certain_records is nan",)),
    ("accuracy-nan", _set_summary("attacker_accuracy", float("nan")), ("summary attacker_accuracy is nan",)),
    ("accuracy-text", _set_summary("attacker_accuracy", "high"), ("summary attacker_accuracy is 'high'",)),
    ("accuracy-above-one", _set_summary("attacker_accuracy", 1.5), ("summary attacker_accuracy is 1.5",)),
    ("interval-backwards", _set_summary("attacker_accuracy_ci95", [0.9, 0.1]), ("summary attacker_accuracy_ci95",)),
    ("baseline-missing", lambda d: d["summary"].pop("baseline"), ("summary has the attack's accuracy but not 'baseline'",)),
    ("baseline-text", _set_summary("baseline", "x"), ("summary baseline is 'x'",)),
    ("prior-negative", lambda d: d["summary"]["baseline"]["prior"].__setitem__("priority", -0.5), ("summary baseline prior",)),
    ("confidence-table-fraction", lambda d: d["summary"]["confidence_in_true_value"].__setitem__(">=0.5", 2.5), ("summary confidence_in_true_value",)),
    ("attack-missing", lambda d: d["summary"].pop("attack"), ("summary attack is None",)),
    ("sensitive-list", _set_summary("sensitive", ["class"]), ("summary sensitive is ['class']",)),
    ("threat-model-number", _set_summary("threat_model", 5), ("summary threat_model is 5",)),
    ("posterior-nan", lambda d: d["groups"][0].__setitem__("posterior", [float("nan")] * len(d["values"])), ("group 0: posterior [nan",)),
    ("posterior-sums-to-two", lambda d: d["groups"][0].__setitem__("posterior", [0.5] * len(d["values"])), ("group 0: posterior", "not a probability distribution")),
    ("posterior-short", _set_group(0, "posterior", [1.0]), ("group 0 has 1 probabilities for 4 values",)),
    ("posterior-text", lambda d: d["groups"][0].__setitem__("posterior", ["a"] * len(d["values"])), ("group 0: posterior",)),
    ("rows-text", _set_group(0, "rows", "abc"), ("group 0 rows: expected row numbers",)),
    ("rows-negative", _set_group(0, "rows", [-1]), ("group 0 rows",)),
    ("rows-in-two-groups", lambda d: d["groups"][1].__setitem__("rows", d["groups"][0]["rows"]), ("group 1 rows: row", "is in another group too")),
    ("qi-list", _set_group(0, "qi", [1, 2]), ("group 0 qi: expected each quasi-identifier's value",)),
    ("provenance-number", _set_group(0, "provenance", 5), ("group 0 provenance: expected a text",)),
    ("truth-out-of-range", lambda d: d["groups"][0].__setitem__("truth", [99] * len(d["groups"][0]["rows"])), ("group 0 truth: expected an index into the 4 values",)),
    ("targets-numbers", lambda d: d["groups"][0].__setitem__("targets", [1] * len(d["groups"][0]["rows"])), ("group 0 targets: expected true or false",)),
    ("certain-text", _set_group(0, "certain", "yes"), ("group 0 certain: expected true or false",)),
    ("group-unknown-key", _set_group(0, "weight", 1), ("group 0 weight: unknown key",)),
    ("leaf-pairs-some", lambda d: d["groups"][0].pop("leaf_pairs"), ("groups have no leaf_pairs: the result is incomplete",)),
    ("groups-object", lambda d: d.__setitem__("groups", {}), ("groups, values or summary have the wrong type",)),
    ("groups-empty", lambda d: d.__setitem__("groups", []), ("the groups hold 0 records but summary records is 300",)),
    ("values-empty", lambda d: d.__setitem__("values", []), ("values: expected the sensitive column's distinct values",)),
    ("values-twice", lambda d: d.__setitem__("values", [d["values"][0]] * len(d["values"])), ("values:",)),
    ("quasi-identifiers-text", lambda d: d.__setitem__("quasi_identifiers", "abc"), ("quasi_identifiers: expected distinct column names",)),
    ("version-9", lambda d: d.__setitem__("version", 9), ("version: expected 1, got 9",)),
    ("unknown-key", lambda d: d.__setitem__("extra", 1), ("extra: unknown key",)),
    ("format-other", lambda d: d.__setitem__("format", "ppdm-tree"), ("not an attack result",)),
    ("summary-missing", lambda d: d.pop("summary"), ("attack result without 'summary'",)),
]


@pytest.mark.parametrize("mutate, needles", [c[1:] for c in RESULT_MUTATIONS], ids=[c[0] for c in RESULT_MUTATIONS])
def test_a_result_with_impossible_fields_is_refused(world, refuse, tmp_path, mutate, needles):
    doc = world.json("result")
    mutate(doc)
    path = tmp_path / "bad-result.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "report.html"
    refuse(["report", path, "--out", out, "-q"], "bad-result.json", *needles, outputs=[out, tmp_path / "report.report.json"])


FRONTIERS = [
    ("accuracy-nan", "[[NaN, 1, \"a\"]]", ("frontier point 0: accuracy and risk must be numbers",)),
    ("accuracy-above-one", "[[5, 1, \"a\"]]", ("frontier point 0: accuracy 5 must be from 0 to 1",)),
    ("risk-negative", "[[0.5, -1, \"a\"]]", ("frontier point 0", "risk -1 at least 0")),
    ("risk-text", "[[0.5, \"x\", \"a\"]]", ("frontier point 0: accuracy and risk must be numbers",)),
    ("accuracy-true", "[[true, 1, \"a\"]]", ("frontier point 0: accuracy and risk must be numbers",)),
    ("point-short", "[[1]]", ("frontier point 0: expected (accuracy, risk, label)",)),
    ("points-number", "{\"points\": 5}", ("frontier points: expected a list",)),
    ("text", "\"x\"", ("a frontier is a list of points",)),
    ("object-without-accuracy", "[{\"risk\": 1}]", ("frontier point 0",)),
]


@pytest.mark.parametrize("content, needles", [c[1:] for c in FRONTIERS], ids=[c[0] for c in FRONTIERS])
def test_a_frontier_with_impossible_points_is_refused(world, refuse, tmp_path, content, needles):
    path = tmp_path / "frontier.json"
    path.write_text(content)
    out = tmp_path / "report.html"
    refuse(["report", world.result, "--frontier", path, "--out", out, "-q"], "frontier.json", *needles, outputs=[out])


@pytest.mark.parametrize("model, needles", [("atree", ("which is not a leaf of the model: it audited another model", "atree.json")),
                                            ("forest", ("of tree 0, which is not a leaf of the model", "forest.json")),
                                            ("xgb", ("an XGBoost model, not a ppdm tree or forest file",))])
def test_a_model_that_the_result_did_not_audit_is_refused(world, refuse, needs, tmp_path, model, needles):
    out = tmp_path / "report.html"
    refuse(["report", world.result, "--model", needs(model), "--out", out, "-q"], *needles, outputs=[out])


def test_the_threat_file_of_a_report_is_checked(world, refuse, tmp_path):
    threat = tmp_path / "threat.yaml"
    threat.write_text("known: parents\n")
    refuse(["report", world.result, "--threat", threat, "--out", tmp_path / "r.html", "-q"], "threat.yaml: 'known' must be a list of column names")


@pytest.mark.parametrize("other", ["tree", "rules"])
def test_a_file_that_is_not_a_result_is_named(world, refuse, tmp_path, other):
    refuse(["report", getattr(world, other), "--out", tmp_path / "r.html", "-q"], "not an attack result")
