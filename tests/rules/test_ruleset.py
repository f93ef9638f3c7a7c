"""RuleSet: what is published, JSON in and out with errors naming the field, mlxtend import."""

import json

import pandas as pd
import pytest

from ppdm.errors import RulesError
from ppdm.rules import RuleSet, mine_rules, rules_from_items


def small() -> RuleSet:
    return rules_from_items(
        "Salary", ("50K+", "50K-"), ["Education", "Gender"], 0.3, 0.8,
        [({"Education": "Doctorate"}, "50K+", 5 / 12, 5 / 6), ({"Gender": "Female", "Education": "Doctorate"}, "50K+", 4 / 12, 1.0)],
        n_records=12,
    )


def test_json_round_trip(tmp_path):
    rules = small()
    path = tmp_path / "rules.json"
    rules.save(path)
    back = RuleSet.load(path)
    assert back == rules
    assert back.rules[1].antecedent == (("Education", "Doctorate"), ("Gender", "Female"))  # QI order
    data = json.loads(path.read_text())
    assert data["format"] == "ppdm-rules" and data["rules"][0]["support"] == pytest.approx(5 / 12)


def test_publishing_thresholds_only_withholds_support_and_confidence(tmp_path):
    hidden = small().published("thresholds")
    assert all(r.support is None and r.confidence is None for r in hidden.rules)
    hidden.save(tmp_path / "t.json")
    data = json.loads((tmp_path / "t.json").read_text())
    assert "support" not in data["rules"][0] and data["publish"] == "thresholds"
    assert RuleSet.load(tmp_path / "t.json") == hidden


def test_top_t_is_by_confidence_and_not_complete():
    top = small().top(1)
    assert top.rules[0].confidence == 1.0 and not top.complete
    assert small().top(5).complete


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(format="other"), "format"),
        (lambda d: d.pop("min_support"), "min_support"),
        (lambda d: d.update(min_confidence=1.2), "min_confidence"),
        (lambda d: d.update(colour="red"), "unknown field 'colour'"),
        (lambda d: d["rules"][1].update(support=-0.1), r"rules\[1\]\.support"),
        (lambda d: d["rules"][0].pop("support"), r"rules\[0\]\.support"),
        (lambda d: d["rules"][0].update(consequent="rich"), r"rules\[0\]\.consequent"),
        (lambda d: d["rules"][0].update(antecedent={"Age": "young"}), r"rules\[0\]\.antecedent: 'Age'"),
        (lambda d: d["rules"][0].update(antecedent={}), r"rules\[0\]\.antecedent"),
        (lambda d: d.update(n_records=-3), "n_records"),
        (lambda d: d.update(rules="none"), "rules: expected list"),
    ],
)
def test_invalid_json_names_the_field(edit, message):
    data = small().to_dict()
    edit(data)
    with pytest.raises(RulesError, match=message):
        RuleSet.from_dict(data)


def test_load_reports_the_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(RulesError, match="bad.json: not valid JSON"):
        RuleSet.load(path)


def test_rules_mined_by_mlxtend_style_frame_are_read():
    # the frame mlxtend.frequent_patterns.association_rules returns, over get_dummies(prefix_sep="=") columns
    frame = pd.DataFrame({
        "antecedents": [frozenset({"Education=Doctorate"}), frozenset({"Gender=Female", "Education=Doctorate"}), frozenset({"Salary=50K+"})],
        "consequents": [frozenset({"Salary=50K+"}), frozenset({"Salary=50K+"}), frozenset({"Gender=Female"})],
        "support": [5 / 12, 4 / 12, 8 / 12],
        "confidence": [5 / 6, 1.0, 0.8],
    })
    rules = RuleSet.from_mlxtend(frame, "Salary", ("50K+", "50K-"), ["Education", "Gender"], 0.3, 0.8, n_records=12)
    assert rules == small()  # the SA => QI rule is not a QI => SA rule and is left out
    with pytest.raises(RulesError, match="'antecedents'"):
        RuleSet.from_mlxtend(frame.drop(columns="antecedents"), "Salary", ("50K+",), ["Education"], 0.3, 0.8)


def test_mined_rules_survive_json(tmp_path):
    frame = pd.DataFrame({"a": list("xxyyx"), "b": list("ppqqq"), "s": list("hhllh")})
    rules = mine_rules(frame, ["a", "b"], "s", 0.2, 0.6)
    rules.save(tmp_path / "r.json")
    assert RuleSet.load(tmp_path / "r.json") == rules
