"""A frontier measured on the training rows says so, in the table, the plot and the advice."""

import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import ppdm


def test_training_accuracy_is_named(adult_train, tmp_path):
    train = adult_train[0].sample(1500, random_state=0).reset_index(drop=True)
    X = pd.get_dummies(train.drop(columns=["income"]))
    tree = ppdm.from_estimator(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, train["income"]), train)
    audit = ppdm.audit(tree, train, ppdm.ThreatModel(sensitive="sex", preset="insider"))
    points = [
        {"label": "unprotected (input model)", "accuracy": 0.99, "risk": 12.0, "chosen": False, "accuracy_on": "training", "risk_measure": "certain"},
        {"label": "DecisionTreeClassifier max_depth=4", "accuracy": 0.84, "risk": 0.0, "chosen": True, "accuracy_on": "training", "risk_measure": "certain"},
    ]
    report = audit.report(tmp_path / "r.html", frontier=points)
    html = (tmp_path / "r.html").read_text()
    assert "Defense search: training accuracy against risk" in html and "<th>training accuracy</th>" in html
    assert any("training accuracy 84" in step for step in report["advice"]) or report["frontier"]["accuracy"] == "training accuracy"
    tested = audit.report(tmp_path / "t.html", frontier=[{**p, "accuracy_on": "test"} for p in points])
    assert tested["frontier"]["accuracy"] == "test accuracy"


def test_point_labels_are_short_and_whole():
    from ppdm.report.plots import point_label

    assert point_label("DecisionTreeClassifier max_depth=4 min_samples_leaf=50") == "max_depth=4 min_samples_leaf=50"
    assert point_label("RandomForestClassifier bootstrap=False") == "bootstrap=False"
    long = point_label("kADET k=50 over age, education, marital-status, occupation, relationship")
    assert long.endswith(" …") and len(long) <= 46 and "relation" not in long
