"""The advice after a met target never names the attacker the audit already used."""

import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import ppdm


def test_the_advice_does_not_ask_for_the_insider_the_audit_already_was(adult_train, tmp_path):
    train = adult_train[0].sample(2000, random_state=0).reset_index(drop=True)
    X = pd.get_dummies(train.drop(columns=["income"]))
    tree = ppdm.from_estimator(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, train["income"]), train)
    insider = ppdm.audit(tree, train, ppdm.ThreatModel(sensitive="race", preset="insider")).report(tmp_path / "a.html")["advice"]
    census = ppdm.audit(tree, train, ppdm.ThreatModel(sensitive="race", preset="census")).report(tmp_path / "b.html")["advice"]
    assert not any("--preset insider" in line for line in insider) and any("--membership" in line for line in insider)
    assert any("--preset insider" in line for line in census)


def test_the_cli_keeps_the_preset_when_the_class_is_added(adult_train, tmp_path):
    """``--preset insider --class-known`` is still the insider: its threat line and the report's
    advice say so (the class was added by dropping the preset's name)."""
    import json

    from click.testing import CliRunner

    from ppdm.cli import main
    from ppdm.tree import save_tree

    train = adult_train[0].sample(2000, random_state=0).reset_index(drop=True)
    X = pd.get_dummies(train.drop(columns=["income"]))
    save_tree(ppdm.from_estimator(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, train["income"]), train), tmp_path / "t.json")
    train.to_csv(tmp_path / "train.csv", index=False)
    args = ["audit", "--tree", str(tmp_path / "t.json"), "--data", str(tmp_path / "train.csv"), "--sensitive", "race", "--preset", "insider", "--class-known"]
    run = CliRunner().invoke(main, [*args, "--report", str(tmp_path / "a.html")])
    assert run.exit_code == 0, run.output
    assert "threat model 'insider'" in run.output
    advice = json.loads((tmp_path / "a.report.json").read_text())["advice"]
    assert not any("--preset insider" in line for line in advice)


def test_the_leaves_to_prune_skip_people_a_loaded_result_names_no_leaf_for():
    """A result file whose group reaches no leaf (a hand-edited JSON; the reader fuzz test made
    one) made the advice call max() of nothing: the report ended in a ValueError."""
    from ppdm.report.advice import _leaves_to_prune

    attack = {
        "name": "maxent attack on 'class'",
        "exposure": [{"leaf": 3, "certain_right": 2}],
        "leaf_sets": [{"leaves": [], "certain_right": 1}, {"leaves": [[0, 3]], "certain_right": 2}],
        "summary": {"certain_right": 3},
    }
    assert "leaf 3 causes" in _leaves_to_prune(attack)[0]
    attack["leaf_sets"] = attack["leaf_sets"][:1]
    assert _leaves_to_prune(attack) == []
