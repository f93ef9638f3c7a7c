"""One spelling of the attacker: every public attack takes it as ``threat`` (a
:class:`~ppdm.attacks.core.threat.ThreatModel`; ``None`` for the attack's documented default). No
attack takes ``sensitive=``, ``quasi_identifiers=`` or ``roles=`` beside it, a list of columns where
the threat goes is refused in one line that shows the spelling, and a tree and a forest of one are
read alike."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeRegressor

import ppdm
import ppdm.attacks
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
from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.leaf.background import forest_background_attack
from ppdm.attacks.leaf.homogeneity import forest_homogeneity_attack, forest_uniqueness_attack
from ppdm.attacks.leaf.reconstruction import forest_reconstruction_attack
from ppdm.attacks.models.boosting_partial import completions_attack
from ppdm.attacks.models.explicit import forest_maxent_attack
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.attacks.models.pooled import pooled_forest_attack
from ppdm.attacks.models.possible import possible_attack
from ppdm.attacks.models.regression import IntervalResult, interval_attack
from ppdm.attacks.models.regression_input import input_interval_attack
from ppdm.data.roles import Roles
from ppdm.errors import AttackError, PpdmError
from ppdm.learn import ID3Classifier
from ppdm.rules import mine_rules
from ppdm.tree import Forest, forest_from_sklearn

#: The names the attacker went by before the threat model.
OLD = ("sensitive", "quasi_identifiers", "roles")
#: The public functions that take the attacker but are not named ``*_attack``.
VIEWS = ("attacker_view", "forest_view", "model_anonymity", "exposed_tuples")


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
    frame["y"] = pd.Categorical(frame["y"])
    return frame


@pytest.fixture(scope="module")
def tree(table):
    return ID3Classifier().fit(table[["a", "b", "c"]], table["y"]).tree_


@pytest.fixture(scope="module")
def rules(table):
    return mine_rules(table, ["a", "b"], "y", 0.05, 0.5)


def _sklearn_forest(estimator: Any, table: pd.DataFrame) -> Forest:
    X = table[["a", "b", "c"]]
    return forest_from_sklearn(estimator.fit(pd.get_dummies(X).astype(float), table["y"]), X, y=table["y"])


@pytest.fixture(scope="module")
def forest(table) -> Forest:
    return _sklearn_forest(RandomForestClassifier(3, max_depth=3, random_state=0, n_jobs=1), table)


@pytest.fixture(scope="module")
def boosted(table) -> Forest:
    return _sklearn_forest(GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0), table)


@pytest.fixture(scope="module")
def regressor(table):
    """A regression tree of ``t`` over ``a`` and the numeric input ``x``, and its table."""
    rng = np.random.default_rng(3)
    frame = table[["a"]].assign(x=rng.integers(0, 5, len(table)).astype(float))
    frame["t"] = frame["x"] * 2.0 + frame["a"].cat.codes + rng.integers(0, 2, len(frame))
    X = frame[["a", "x"]]
    est = DecisionTreeRegressor(max_depth=3, random_state=0).fit(pd.get_dummies(X).astype(float), frame["t"])
    return ppdm.from_estimator(est, X, frame["t"]), frame


def _known_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table.iloc[[0, 5]]


def _public_functions() -> dict[str, Callable[..., Any]]:
    """Every public ``*_attack`` function of :mod:`ppdm.attacks` and the views, by name."""
    found: dict[str, Callable[..., Any]] = {}
    for info in pkgutil.walk_packages(ppdm.attacks.__path__, "ppdm.attacks."):
        module = importlib.import_module(info.name)
        for name, function in vars(module).items():
            if inspect.isfunction(function) and not name.startswith("_") and (name.endswith("_attack") or name in VIEWS):
                found[name] = function
    return found


def _calls(tree, forest, boosted, rules, regressor, table) -> dict[str, Callable[[Any], Any]]:
    """Per function taking the attacker, a call with ``t`` where the threat goes."""
    model, frame = regressor
    return {
        "maxent_attack": lambda t: maxent_attack(tree, table, t),
        "exact_attack": lambda t: exact_attack(tree, table, t, time_limit=30),
        "rules_attack": lambda t: rules_attack(rules, table, threat=t),
        "possible_attack": lambda t: possible_attack(forest, table, t),
        "forest_maxent_attack": lambda t: forest_maxent_attack(forest, table, t),
        "pooled_forest_attack": lambda t: pooled_forest_attack(forest, table, t),
        "completions_attack": lambda t: completions_attack(boosted, table, t),
        "interval_attack": lambda t: interval_attack(model, frame, t),
        "input_interval_attack": lambda t: input_interval_attack(model, frame, t),
        "homogeneity_attack": lambda t: homogeneity_attack(tree, table, t),
        "uniqueness_attack": lambda t: uniqueness_attack(tree, table, t),
        "reconstruction_attack": lambda t: reconstruction_attack(forest, table, t),
        "background_knowledge_attack": lambda t: background_knowledge_attack(tree, table, _known_rows(table), threat=t),
        "attacker_view": lambda t: attacker_view(tree, table, t),
        "forest_view": lambda t: forest_view(forest, table, t),
        "model_anonymity": lambda t: model_anonymity(tree, table, t),
        "exposed_tuples": lambda t: exposed_tuples(tree, table, t),
    }


@pytest.fixture(scope="module")
def calls(tree, forest, boosted, rules, regressor, table):
    return _calls(tree, forest, boosted, rules, regressor, table)


#: The functions whose attacker is fixed by the audit (the step is handed the audit's) and the
#: ones about another question than an attribute (membership: ``class_known``; the model-free
#: reference attacker: the result it is compared with).
REQUIRED = {"forest_maxent_attack", "pooled_forest_attack", "completions_attack", "interval_attack", "input_interval_attack"}
NO_THREAT = {"membership_attack", "imputation_attack", "combined_attack"}


def test_no_public_attack_takes_a_second_spelling_of_the_attacker():
    functions = _public_functions()
    assert set(VIEWS) | {"maxent_attack", "exact_attack", "homogeneity_attack", "membership_attack"} <= set(functions)
    for name, function in functions.items():
        parameters = inspect.signature(function).parameters
        assert not set(OLD) & set(parameters), f"{name} takes {sorted(set(OLD) & set(parameters))} beside threat="
        if "threat" in parameters:
            assert parameters["threat"].annotation in ("ThreatModel | None", "ThreatModel"), (name, parameters["threat"].annotation)
        else:
            assert name in NO_THREAT, f"{name} takes no threat= (list it in NO_THREAT if it answers another question)"


def test_every_function_taking_the_attacker_is_called_here(calls):
    functions = _public_functions()
    takes = {name for name, f in functions.items() if "threat" in inspect.signature(f).parameters}
    aliases = {"forest_homogeneity_attack", "forest_uniqueness_attack", "forest_background_attack", "forest_reconstruction_attack"}
    assert takes - aliases == set(calls)


#: Functions under a second name (the error names the function itself).
ALIASES = {"forest_view": "attacker_view"}
NAMES = sorted([
    "maxent_attack", "exact_attack", "rules_attack", "possible_attack", "forest_maxent_attack", "pooled_forest_attack",
    "completions_attack", "interval_attack", "input_interval_attack", "homogeneity_attack", "uniqueness_attack",
    "reconstruction_attack", "background_knowledge_attack", "attacker_view", "forest_view", "model_anonymity", "exposed_tuples",
])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("columns", [["a", "b"], ("a", "b"), Roles(["a", "b"], sensitive="y")], ids=["list", "tuple", "roles"])
def test_a_list_of_columns_where_the_threat_goes_is_refused_in_one_line(name, columns, calls):
    call = calls[name]
    with pytest.raises(PpdmError) as raised:
        call(columns)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{ALIASES.get(name, name)}: ") and message.endswith("write threat=ThreatModel(known=['a', 'b'], sensitive=...)"), message


@pytest.mark.parametrize("name", NAMES)
def test_something_else_where_the_threat_goes_is_refused_in_one_line(name, calls):
    call = calls[name]
    with pytest.raises(PpdmError, match=rf"^{ALIASES.get(name, name)}: threat must be a ThreatModel, got 'a': write threat=ThreatModel\(known=\[\.\.\.\], sensitive=\.\.\.\)$"):
        call("a")


@pytest.mark.parametrize("name", NAMES)
def test_every_function_taking_the_attacker_reads_a_threat_model(name, calls, table):
    call = calls[name]
    threat = {
        "interval_attack": ThreatModel(known=["a"], sensitive="t"),
        "input_interval_attack": ThreatModel(known=["a", "t"], sensitive="x"),
        "pooled_forest_attack": ThreatModel(known=["a"], sensitive="b", sa_published=True).resolve(table, "y"),
        "completions_attack": ThreatModel(known=["a"], sensitive="b", sa_published=True).resolve(table, "y"),
        "forest_maxent_attack": ThreatModel(known=["a"], sensitive="b", sa_published=True),
    }.get(name, ThreatModel(known=["a", "b"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        result = call(threat)
    if isinstance(result, AttackResult):
        assert result.groups.quasi_identifiers == tuple(c for c in threat.known or () if c != "y"), name
        assert result.sensitive == (threat.sensitive or "y")
    elif isinstance(result, IntervalResult):
        assert result.sensitive == threat.sensitive
    elif name == "attacker_view" or name == "forest_view":
        assert result.groups.quasi_identifiers == ("a", "b")
    else:  # the spans: the attacker knowing a and b tells fewer people apart than one knowing every column
        everyone = call(ThreatModel(known=["a", "b", "c"]))
        assert result != everyone if name == "exposed_tuples" else len(result.population) < len(everyone.population)


@pytest.mark.parametrize("name", sorted(set(NAMES) - REQUIRED))
def test_no_threat_is_the_documented_default_and_does_not_warn(name, calls):
    call = calls[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        call(None)


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_a_step_handed_the_audit_s_attacker_says_it_needs_one(name, tree, table):
    function = _public_functions()[name]
    with pytest.raises(PpdmError, match=rf"^{name}: the attacker must be given: threat=ThreatModel\(known=\[\.\.\.\], sensitive=\.\.\.\)$"):
        function(tree, table, None)


def test_the_old_keywords_and_positions_are_python_s_type_error(table, tree, rules):
    threat = ThreatModel(known=["a", "b"])
    with pytest.raises(TypeError, match="quasi_identifiers"):
        homogeneity_attack(tree, table, quasi_identifiers=["a", "b"])
    with pytest.raises(TypeError, match="sensitive"):
        maxent_attack(tree, table, threat, sensitive="y")
    with pytest.raises(TypeError, match="roles"):
        model_anonymity(tree, table, roles=["a"])
    with pytest.raises(TypeError, match="quasi_identifiers"):
        background_knowledge_attack(tree, table, _known_rows(table), quasi_identifiers=["a", "b"])
    with pytest.raises(TypeError, match="positional argument"):  # the sensitive column fourth
        homogeneity_attack(tree, table, threat, "y")
    with pytest.raises(TypeError, match="positional argument"):
        maxent_attack(tree, table, threat, "c")
    with pytest.raises(TypeError, match="positional argument"):
        exact_attack(tree, table, threat, "y", 30)
    with pytest.raises(TypeError, match="positional argument"):  # the known columns fourth
        background_knowledge_attack(tree, table, _known_rows(table), ["a", "b"])


def test_a_rule_set_takes_the_threat_model_too(table, rules):
    known = exact_attack(rules, table, ThreatModel(known=["a", "b"]), time_limit=30)
    default = exact_attack(rules, table, time_limit=30)  # the rules' quasi-identifiers by default
    np.testing.assert_array_equal(known.posterior, default.posterior)
    assert known.groups.quasi_identifiers == default.groups.quasi_identifiers == ("a", "b")
    np.testing.assert_array_equal(rules_attack(rules, table, threat=ThreatModel()).posterior, rules_attack(rules, table).posterior)


def test_no_threat_is_the_documented_default(table, tree):
    # without a threat model the leaf attacks and the audits know the model's attributes in the data
    wider = table.assign(extra=np.arange(len(table)) % 3)  # a column the model does not use (not unique per row: an identifier would be left out)
    assert homogeneity_attack(tree, wider).groups.quasi_identifiers == ("a", "b", "c")
    assert maxent_attack(tree, wider).groups.quasi_identifiers == ("a", "b", "c")
    assert exact_attack(tree, wider, time_limit=30).groups.quasi_identifiers == ("a", "b", "c")
    # a threat model without known columns knows every column but the sensitive one (its "paper" preset)
    assert homogeneity_attack(tree, wider, ThreatModel()).groups.quasi_identifiers == ("a", "b", "c", "extra")
    assert maxent_attack(tree, wider, ThreatModel()).groups.quasi_identifiers == ("a", "b", "c", "extra")


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
    after = attack(*args)
    np.testing.assert_array_equal(after.posterior, before.posterior)
    np.testing.assert_array_equal(after.exposed, before.exposed)
    assert after.provenance == before.provenance


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
    np.testing.assert_array_equal(by_frame.posterior, by_rows.posterior)
    np.testing.assert_array_equal(by_frame.exposed, by_rows.exposed)
    np.testing.assert_array_equal(by_frame.targets, by_rows.targets)
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
