"""A defense search never rates a candidate below the attacker who ignores it (habit 2): the
prior's majority guess is among what it adds to each candidate's evidence, as the audit reports it."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from ppdm.attacks.core.threat import ThreatModel
from ppdm.defend.audits import maxent_auditor, reported_attacker
from ppdm.tree import tree_from_sklearn


def _case():
    rng = np.random.default_rng(0)
    n = 1500
    frame = pd.DataFrame({
        "a": rng.choice(list("xyz"), n), "s": rng.choice(["common", "rare"], n, p=[0.8, 0.2]), "u": rng.choice(list("pq"), n),
    })
    frame["c"] = np.where((frame["a"] == "x") ^ (frame["u"] == "p"), "yes", "no")
    X = pd.get_dummies(frame[["a", "s", "u"]]).astype(float)
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, frame["c"])
    tree = tree_from_sklearn(est, frame[["a", "s", "u"]], y=frame["c"])
    return tree, frame


def test_a_candidate_is_never_rated_below_the_prior():
    tree, frame = _case()
    threat = ThreatModel(known=("a",), sensitive="s").resolve(frame, tree.class_attribute, splits=tree.split_attributes)
    estimate = maxent_auditor(tree, frame, threat)
    assert estimate is not None
    # an estimate as an approximate one can be: every person's belief leaning to the rare value
    rare = list(estimate.values).index("rare")
    estimate.posterior = np.full_like(estimate.posterior, 0.4)
    estimate.posterior[:, rare] = 0.6
    assert estimate.summary()["attacker_accuracy"] < 0.5
    reported = reported_attacker([estimate], tree, frame, threat)
    assert reported is not None
    prior = estimate.summary()["baseline"]["accuracy"]
    assert reported.summary()["attacker_accuracy"] >= prior - 1e-12


def test_a_black_box_candidate_is_never_rated_below_the_prior():
    """A candidate publishing its predicted labels or scores only is rated on the black-box rules and
    the prior's majority guess beside them."""
    from ppdm.defend.search import _black_box

    tree, frame = _case()
    threat = ThreatModel(known=("a", "u", "c"), sensitive="s")
    for output in ("label", "score"):
        results = _black_box(tree, frame, threat, output)
        assert any(r.attack == "prior's majority guess" for r in results)
        best = max(r.summary()["attacker_accuracy"] for r in results)
        assert best >= results[0].summary()["baseline"]["accuracy"] - 1e-12
