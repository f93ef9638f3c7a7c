"""One attacker vocabulary: every public attack takes ``threat=``; the spelling before it
(``quasi_identifiers=``, ``sensitive=``, ``roles=``, or a list of columns where ``threat`` now
stands) still works, warns, and gives the same results; a tree and a forest of one are read alike."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks import (
    ThreatModel,
    attacker_view,
    background_knowledge_attack,
    exact_attack,
    exposed_tuples,
    forest_view,
    homogeneity_attack,
    model_anonymity,
    reconstruction_attack,
    rules_attack,
    uniqueness_attack,
)
from ppdm.attacks.leaf.background import forest_background_attack
from ppdm.attacks.leaf.homogeneity import forest_homogeneity_attack, forest_uniqueness_attack
from ppdm.attacks.leaf.reconstruction import forest_reconstruction_attack
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.data.roles import Roles
from ppdm.errors import AttackError, PpdmError
from ppdm.learn import ID3Classifier
from ppdm.rules import mine_rules
from ppdm.tree import Forest

OLD = r"deprecated and will be removed: pass threat=ThreatModel\(known="


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 60
    frame = pd.DataFrame({
        "a": pd.Categorical(rng.choice(["x", "y", "z"], n)),
        "b": pd.Categorical(rng.choice(["u", "v"], n)),
        "c": pd.Categorical(rng.choice(["p", "q"], n)),
    })  # fmt: skip
    frame["y"] = np.where((frame["a"] == "x") | ((frame["b"] == "u") & (frame["c"] == "p")), "yes", "no")
    flip = rng.random(n) < 0.15
    frame.loc[flip, "y"] = np.where(frame.loc[flip, "y"] == "yes", "no", "yes")
    return frame


@pytest.fixture(scope="module")
def tree(table):
    return ID3Classifier().fit(table[["a", "b", "c"]], table["y"]).tree_


@pytest.fixture(scope="module")
def rules(table):
    return mine_rules(table, ["a", "b"], "y", 0.05, 0.5)


def _same(a: Any, b: Any) -> None:
    """Two attack results (or span sets, or numbers) are the same."""
    if isinstance(a, float):
        assert a == b
        return
    if hasattr(a, "span_of"):
        np.testing.assert_array_equal(a.span_of, b.span_of)
        np.testing.assert_array_equal(a.population, b.population)
        assert list(a.leaves) == list(b.leaves)
        return
    np.testing.assert_array_equal(a.posterior, b.posterior)
    np.testing.assert_array_equal(a.exposed, b.exposed)
    np.testing.assert_array_equal(a.targets, b.targets)
    assert a.provenance == b.provenance
    assert _steady(a.details) == _steady(b.details)


VOLATILE = {"solver_seconds", "generation_seconds", "seconds", "build_seconds", "exact"}


def _steady(details: Any) -> Any:
    """``details`` without its timings, at any depth (the sound steps' own ``seconds`` too)."""
    if isinstance(details, dict):
        return {k: _steady(v) for k, v in details.items() if k not in VOLATILE and not str(k).endswith("_seconds")}
    return details


def _known_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table.iloc[[0, 5]]


#: Per public attack: the call in today's spelling, and in the one before it (keywords).
CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "homogeneity_attack": (
        lambda m, d, r: homogeneity_attack(m, d, ThreatModel(known=["a", "b"])),
        lambda m, d, r: homogeneity_attack(m, d, quasi_identifiers=["a", "b"], sensitive="y"),
    ),
    "uniqueness_attack": (
        lambda m, d, r: uniqueness_attack(m, d, threat=ThreatModel(known=["a", "b"])),
        lambda m, d, r: uniqueness_attack(m, d, quasi_identifiers=["a", "b"]),
    ),
    "background_knowledge_attack": (
        lambda m, d, r: background_knowledge_attack(m, d, _known_rows(d), threat=ThreatModel(known=["a", "b"])),
        lambda m, d, r: background_knowledge_attack(m, d, _known_rows(d), quasi_identifiers=["a", "b"], sensitive="y"),
    ),
    "reconstruction_attack": (
        lambda m, d, r: reconstruction_attack(m, d, threat=ThreatModel(known=["a", "b"])),
        lambda m, d, r: reconstruction_attack(m, d, quasi_identifiers=["a", "b"]),
    ),
    "attacker_view": (
        lambda m, d, r: homogeneity_attack(m, d, ThreatModel(known=["a"])),
        lambda m, d, r: attacker_view(m, d, quasi_identifiers=["a"]).result("homogeneity", None, {
            "homogeneous_leaves": 0, "homogeneous_leaf_records": 0.0}),
    ),
    "forest_view": (
        lambda m, d, r: forest_view(m, d, threat=ThreatModel(known=["a"])).result("view", None, {}),
        lambda m, d, r: forest_view(m, d, sensitive="y", quasi_identifiers=["a"]).result("view", None, {}),
    ),
    "model_anonymity": (
        lambda m, d, r: model_anonymity(m, d, threat=ThreatModel(known=["a", "c"])),
        lambda m, d, r: model_anonymity(m, d, roles=["a", "c"]),
    ),
    "exposed_tuples": (
        lambda m, d, r: exposed_tuples(m, d, threat=ThreatModel(known=["a", "c"])),
        lambda m, d, r: exposed_tuples(m, d, roles=Roles(["a", "c"], sensitive="y")),
    ),
    "maxent_attack": (
        lambda m, d, r: maxent_attack(m, d, threat=ThreatModel(known=["a", "b"], sensitive="c")),
        lambda m, d, r: maxent_attack(m, d, quasi_identifiers=["a", "b"], sensitive="c"),
    ),
    "exact_attack": (
        lambda m, d, r: exact_attack(m, d, threat=ThreatModel(known=["a", "b"]), time_limit=30),
        lambda m, d, r: exact_attack(m, d, quasi_identifiers=["a", "b"], sensitive="y", time_limit=30),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_public_attack_takes_threat_and_the_old_spelling_warns_with_the_same_result(name, table, tree, rules):
    new, old = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        today = new(tree, table, rules)
    with pytest.warns(DeprecationWarning, match=OLD):
        before = old(tree, table, rules)
    if name == "attacker_view":  # the view, not an attack: the details are the caller's
        today.details = before.details = {}
    _same(today, before)


@pytest.mark.parametrize("name", list(CASES))
def test_no_attacker_given_is_the_old_default_and_does_not_warn(name, table, tree, rules):
    function = {"attacker_view": attacker_view, "forest_view": forest_view}.get(name) or globals()[name]
    model = rules if name == "rules_attack" else tree
    extra: dict[str, Any] = {"time_limit": 30} if name == "exact_attack" else {}
    args = (model, table, _known_rows(table)) if name == "background_knowledge_attack" else (model, table)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        function(*args, **extra)


def test_the_old_positional_spelling_still_works(table, tree):
    with pytest.warns(DeprecationWarning, match=r"homogeneity_attack: quasi_identifiers and sensitive are deprecated"):
        before = homogeneity_attack(tree, table, ["a", "b"], "y")
    _same(homogeneity_attack(tree, table, ThreatModel(known=["a", "b"], sensitive="y")), before)
    with pytest.warns(DeprecationWarning, match=r"background_knowledge_attack: quasi_identifiers is deprecated"):
        before = background_knowledge_attack(tree, table, _known_rows(table), ["a", "b"])
    _same(background_knowledge_attack(tree, table, _known_rows(table), threat=ThreatModel(known=["a", "b"])), before)
    with pytest.warns(DeprecationWarning, match=r"model_anonymity: roles is deprecated"):
        before_spans = model_anonymity(tree, table, Roles(["a"]), True)
    _same(model_anonymity(tree, table, ThreatModel(known=["a"]), True), before_spans)
    with pytest.warns(DeprecationWarning, match=r"maxent_attack: quasi_identifiers and sensitive are deprecated"):
        before = maxent_attack(tree, table, ["a", "b"], "c")
    _same(maxent_attack(tree, table, ThreatModel(known=["a", "b"], sensitive="c")), before)
    with pytest.warns(DeprecationWarning, match=r"exact_attack: quasi_identifiers and sensitive are deprecated"):
        before = exact_attack(tree, table, ["a", "b"], "y", 30)
    _same(exact_attack(tree, table, ThreatModel(known=["a", "b"], sensitive="y"), time_limit=30), before)


def test_a_rule_set_takes_the_threat_model_too(table, rules):
    with pytest.warns(DeprecationWarning, match=OLD):
        before = exact_attack(rules, table, quasi_identifiers=["a", "b"], time_limit=30)
    _same(exact_attack(rules, table, ThreatModel(known=["a", "b"]), time_limit=30), before)
    _same(exact_attack(rules, table, time_limit=30), before)  # the rules' quasi-identifiers by default
    _same(rules_attack(rules, table, threat=ThreatModel()), rules_attack(rules, table))


def test_the_old_defaults_are_kept(table, tree):
    # without a threat model the leaf attacks and the audits know the model's attributes in the data
    wider = table.assign(extra=np.arange(len(table)) % 3)  # a column the model does not use (not unique per row: an identifier would be left out)
    assert homogeneity_attack(tree, wider).groups.quasi_identifiers == ("a", "b", "c")
    assert maxent_attack(tree, wider).groups.quasi_identifiers == ("a", "b", "c")
    # a threat model without known columns knows every column but the sensitive one (its "paper" preset)
    assert homogeneity_attack(tree, wider, ThreatModel()).groups.quasi_identifiers == ("a", "b", "c", "extra")


def test_both_spellings_at_once_are_refused(table, tree):
    with pytest.raises(TypeError, match="not both"):
        homogeneity_attack(tree, table, ThreatModel(known=["a"]), quasi_identifiers=["a"])
    with pytest.raises(TypeError, match="not both"):
        maxent_attack(tree, table, ThreatModel(known=["a"]), sensitive="y")
    with pytest.raises(PpdmError, match="threat must be a ThreatModel"):
        homogeneity_attack(tree, table, "a")


@pytest.mark.parametrize(
    ("alias", "attack", "extra"),
    [
        (forest_homogeneity_attack, homogeneity_attack, ()),
        (forest_uniqueness_attack, uniqueness_attack, ()),
        (forest_background_attack, background_knowledge_attack, ("known",)),
        (forest_reconstruction_attack, reconstruction_attack, ()),
    ],
)
def test_the_forest_names_are_deprecated_aliases(alias, attack, extra, table, tree):
    forest = Forest([tree], "mean-proba", multiplicities=[np.ones(len(table), dtype=np.int64)])
    args = (forest, table, _known_rows(table)) if extra else (forest, table)
    with pytest.warns(DeprecationWarning, match=rf"{alias.__name__} is deprecated .* call {attack.__name__}"):
        before = alias(*args)
    _same(attack(*args), before)


def test_a_tree_is_read_as_a_forest_of_one(table, tree):
    forest = Forest([tree], "vote", multiplicities=[np.ones(len(table), dtype=np.int64)])
    threat = ThreatModel(known=["a", "b"])
    for attack in (homogeneity_attack, uniqueness_attack, reconstruction_attack):
        alone, one = attack(tree, table, threat), attack(forest, table, threat)
        np.testing.assert_allclose(alone.posterior, one.posterior, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(alone.exposed, one.exposed)
        assert ["tree 0 " + p for p in alone.provenance] == one.provenance  # a tree's leaves are "leaf 4"
        assert alone.details["trees"] == 1


def test_the_background_attack_reads_the_known_individuals_of_the_threat_model(table, tree):
    by_frame = background_knowledge_attack(tree, table, _known_rows(table), threat=ThreatModel(known=["a", "b"]))
    by_rows = background_knowledge_attack(tree, table, threat=ThreatModel(known=["a", "b"], known_individuals=(0, 5)))
    _same(by_frame, by_rows)
    assert not by_rows.targets[[0, 5]].any()
    with pytest.raises(PpdmError, match="the individuals the attacker knows"):
        background_knowledge_attack(tree, table, threat=ThreatModel(known=["a", "b"]))


def test_leaf_attacks_follow_the_threat_model(table, tree):
    # fully known individuals are not targets; publish audits less than the model holds
    result = homogeneity_attack(tree, table, ThreatModel(known=["a", "b"], known_individuals=(3,)))
    assert not result.targets[3] and result.targets.sum() == len(table) - 1
    with pytest.raises(AttackError, match="labels only"):
        homogeneity_attack(tree, table, ThreatModel(known=["a", "b"], publish="labels"))
    with pytest.raises(AttackError, match="must be the class"):
        uniqueness_attack(tree, table, ThreatModel(known=["a"], sensitive="b"))
    # rules: the sensitive column is the rules'
    rules = mine_rules(table, ["a", "b"], "y", 0.05, 0.5)
    with pytest.raises(PpdmError, match="the rules are about 'y'"):
        rules_attack(rules, table, threat=ThreatModel(sensitive="a"))
