"""The estimate's methods (issue 40): every method of the capabilities table is reachable through
``ppdm.audit(..., options=AuditOptions(method=...))``; where it is the road ``auto`` takes, the
same figures; an unknown method is one line naming the methods; what a method does not read is
said by a note the table generates; the removed sampled estimate is refused in one line saying
what to use."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ppdm
from ppdm.attacks.core.threat import ThreatModel
from ppdm.errors import PpdmError
from ppdm.pipeline.capabilities import FEATURES, METHODS, not_read
from ppdm.pipeline.estimate import ROADS
from ppdm.pipeline.options import AuditOptions

from families import FAMILIES, small_table
from oracles import sklearn_tree


@pytest.fixture(scope="module")
def adult(adult_train):
    frame, roles = adult_train
    features = [c for c in frame.columns if c != roles.class_attribute][:6]
    table, X, D, y = small_table(frame, features, roles.class_attribute, 300)
    return table, features, roles.class_attribute, FAMILIES["random-forest-no-bootstrap"](X, D, y)


@pytest.fixture(scope="module")
def nursery_tree(nursery):
    frame, roles = nursery
    table = frame.sample(2_000, random_state=0).reset_index(drop=True)
    features = [c for c in table.columns if c != roles.class_attribute]
    return table, features, sklearn_tree(table, features, roles.class_attribute, 4)


def _audit(model, table, threat, method: str, **how):
    return ppdm.audit(model, table, threat, options=AuditOptions(method=method, **how), progress=False)


def _same(a: ppdm.Audit, b: ppdm.Audit) -> None:
    assert a.estimate is not None and b.estimate is not None
    np.testing.assert_array_equal(a.estimate.posterior, b.estimate.posterior)
    assert _untimed(a.summary()) == _untimed(b.summary())


def _untimed(value):  # type: ignore[no-untyped-def]
    """A summary without the times it took (which differ run to run)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if not str(k).endswith("seconds")}
    return value


def test_the_registry_holds_a_road_for_every_method_of_the_table():
    assert set(ROADS) == set(METHODS) and list(METHODS)[0] == "auto"
    assert AuditOptions().method == "auto"


def test_a_tree_s_methods_are_reachable_and_auto_is_the_road_it_takes(nursery_tree):
    table, features, tree = nursery_tree
    paper = ThreatModel()  # paper 000's attacker: every split attribute known, the class sensitive: the explicit slots
    _same(_audit(tree, table, paper, "auto"), _audit(tree, table, paper, "explicit"))
    partial = ThreatModel(sensitive=features[0], known=tuple(features[1:4]))  # outside it: the factored rows
    auto = _audit(tree, table, partial, "auto")
    _same(auto, _audit(tree, table, partial, "factored"))
    explicit = _audit(tree, table, partial, "explicit")  # the reference the factored form is tested against
    np.testing.assert_allclose(explicit.estimate.posterior, auto.estimate.posterior, atol=1e-5)
    assert explicit.estimate.details["form"] == "slots" and auto.estimate.details["form"] == "factored"
    choices = _audit(tree, table, paper, "split-choice", time_limit=30.0)
    assert choices.estimate.details["form"] == "slots"
    _same(choices, _audit(tree, table, paper, "auto", internal=True, time_limit=30.0))


def test_a_forest_s_methods_are_reachable_and_auto_is_the_road_it_takes(adult):
    table, features, klass, forest = adult
    threat = ThreatModel(sensitive=klass, known=tuple(features[:3]))
    auto = _audit(forest, table, threat, "auto")
    _same(auto, _audit(forest, table, threat, "explicit"))
    for method in ("pooled", "possible"):
        other = _audit(forest, table, threat, method)
        assert other.estimate is not None and other.estimate.summary()["certain_wrong"] == 0  # certain only where proved
    assert "pooled" in _audit(forest, table, threat, "pooled").estimate.details["note"]


def test_the_possible_values_method_says_what_it_does_not_read(adult):
    table, features, klass, forest = adult
    threat = ThreatModel(sensitive=klass, known=tuple(features[:3]), known_individuals=(0, 1))
    note = _audit(forest, table, threat, "possible").estimate.details["note"]
    assert FEATURES["known individuals"] in note
    assert FEATURES["known individuals"] not in (_audit(forest, table, threat, "auto").estimate.details.get("note") or "")


def test_an_unknown_method_is_one_line_naming_the_methods():
    with pytest.raises(PpdmError) as caught:
        AuditOptions(method="newton")
    message = str(caught.value)
    assert "\n" not in message and "'newton'" in message and all(m in message for m in METHODS)


def test_a_method_for_another_model_and_conflicting_options_are_refused(adult, nursery_tree):
    table, features, klass, forest = adult
    with pytest.raises(PpdmError, match="does not estimate a forest.*auto, explicit, pooled, possible"):
        _audit(forest, table, ThreatModel(), "factored")
    tree_table, _, tree = nursery_tree
    with pytest.raises(PpdmError, match="does not estimate a tree"):
        _audit(tree, tree_table, ThreatModel(), "pooled")
    with pytest.raises(PpdmError, match="split choices"):
        AuditOptions(method="pooled", internal=True)


def test_the_table_gives_the_note_of_a_method_that_cannot_read_outputs(adult):
    table, features, klass, forest = adult
    threat = ThreatModel(sensitive=features[0], known=tuple(features[1:3]), outputs="label")
    resolved = threat.resolve(table, forest.class_attribute, splits=forest.split_attributes)
    said = "does not read the model's labels the attacker sees"
    assert [n for n in not_read("pooled", forest, resolved) if said in n] and not not_read("explicit", forest, resolved)
    pooled = _audit(forest, table, threat, "pooled")
    assert said in pooled.estimate.details["note"]
    everyone = ThreatModel(sensitive=klass, known=tuple(forest.split_attributes), outputs="label")  # the known columns decide the outputs
    assert not not_read("pooled", forest, everyone.resolve(table, klass, splits=forest.split_attributes))


def test_the_removed_sampled_estimate_is_refused_saying_what_to_use(adult):
    table, _, _, forest = adult
    for ask in (lambda: AuditOptions(method="sampled"), lambda: ppdm.audit(forest, table, options=AuditOptions(method="sampled"), progress=False)):
        with pytest.raises(PpdmError) as caught:
            ask()
        message = str(caught.value)
        assert "\n" not in message and "removed" in message and "'pooled'" in message and "'explicit'" in message
    assert "sampled" not in METHODS and "sampled" not in ROADS


def test_policy_and_blackbox_are_options_and_keywords(nursery_tree):
    table, _, tree = nursery_tree
    given = ppdm.audit(tree, table, policy="strict", progress=False)
    optioned = ppdm.audit(tree, table, options=AuditOptions(policy="strict"), progress=False)
    default = ppdm.audit(tree, table, progress=False)
    assert given.target == optioned.target != default.target  # the policy's target, however it was given
    assert getattr(given, "policy", None) is not None and getattr(optioned, "policy", None) is not None and getattr(default, "policy", None) is None
    assert AuditOptions().with_keywords(blackbox=False).blackbox is False
    assert AuditOptions(blackbox=pd.DataFrame({"p": [0.5]})).with_keywords(blackbox=None).blackbox is not None  # the default keyword keeps the options'
