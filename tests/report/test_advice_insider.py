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
