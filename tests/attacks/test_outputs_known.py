"""The model's outputs as knowledge (ThreatModel.outputs): each person's reachable leaves are
those giving the answer the attacker sees, against brute force on tiny forests of every family;
the truth stays feasible on real tables; seeing more is never reported weaker."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import ppdm
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.maxent.table.forest_types import forest_types
from ppdm.tree.model import Tree

from families import FAMILIES, small_table, tiny_table
from oracles import _private_choices, sklearn_tree


def _answers(forest, frame: pd.DataFrame, kind: str) -> list:
    if kind == "label":
        return list(forest.predict(frame))
    return [tuple(row) for row in np.asarray(forest.predict_proba(frame), dtype=np.float32)]


def _brute_force_leaves(forest, data: pd.DataFrame, known: list[str], kind: str) -> list[set]:
    """Per person, every joint leaf some completion of the unknown inputs reaches whose answer is
    the person's own: every completion routed by ``apply``, answered by ``predict``."""
    private = [a for a in forest.split_attributes if a not in known]
    own = _answers(forest, data, kind)
    out: list[set] = [set() for _ in range(len(data))]
    for combo in itertools.product(*[_private_choices(forest, a) for a in private]):
        frame = data.copy()
        for attribute, value in zip(private, combo):
            frame[attribute] = pd.Categorical([value] * len(frame), categories=data[attribute].cat.categories)
        leaves, answer = forest.apply(frame), _answers(forest, frame, kind)
        for i in range(len(data)):
            if answer[i] == own[i]:
                out[i].add(tuple(leaves[i]))
    return out


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("kind", ["label", "score"])
def test_reachable_joint_leaves_are_those_giving_the_answer(family, kind):
    for seed in (0, 1):
        table, X, D, y = tiny_table(seed, 30)
        forest = FAMILIES[family](X, D, y)
        for known, sensitive in ((["a"], "b"), (["c"], "y"), (["a", "y"], "b"), ([], "y")):
            types = forest_types(forest, table, known, sensitive, outputs=kind)
            brute = _brute_force_leaves(forest, table, known, kind)
            reach = types.reach.tocsr()
            for person in range(len(table)):
                g = types.groups.group_of_record[person]
                blocks = reach.indices[reach.indptr[g] : reach.indptr[g + 1]]
                got = {tuple(types.block_leaves[b]) for b in blocks}
                assert got == brute[person], (family, kind, seed, known, sensitive, person)


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("dataset", ["adult", "nursery"])
def test_the_truth_stays_feasible_when_outputs_are_seen(family, dataset, adult_train, nursery):
    frame, roles = adult_train if dataset == "adult" else nursery
    features = [c for c in frame.columns if c != roles.class_attribute][:8]
    table, X, D, y = small_table(frame, features, roles.class_attribute, 400)
    forest = FAMILIES[family](X, D, y)
    for kind in ("label", "score"):
        for known, sensitive in ((features[:6], features[6]), ([y.name, *features[1:]], features[0]), (features[1:], features[0])):
            threat = ThreatModel(sensitive=sensitive, known=tuple(known), outputs=kind)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = maxent_attack(forest, table, threat=threat)  # checks the data meets every row
            assert result.true_codes is not None
            assert result.summary()["certain_wrong"] == 0, (family, kind, known)


def _reported(audit) -> float:
    return audit.estimate.summary()["attacker_accuracy"]


@pytest.mark.parametrize("dataset", ["adult", "nursery"])
def test_seeing_the_outputs_is_never_reported_weaker(dataset, adult_train, nursery):
    frame, roles = adult_train if dataset == "adult" else nursery
    features = [c for c in frame.columns if c != roles.class_attribute][:6]
    table = frame.sample(2000, random_state=3).reset_index(drop=True)[[*features, roles.class_attribute]]
    for c in table.columns:
        if isinstance(table[c].dtype, pd.CategoricalDtype):
            table[c] = table[c].cat.remove_unused_categories()
    for depth, sensitive in itertools.product((3, 6), features[:2]):
        tree = sklearn_tree(table, features, roles.class_attribute, depth)
        known = tuple(c for c in features if c != sensitive)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blind = ppdm.audit(tree, table, ThreatModel(sensitive=sensitive, known=known))
            label = ppdm.audit(tree, table, ThreatModel(sensitive=sensitive, known=known, outputs="label"))
            score = ppdm.audit(tree, table, ThreatModel(sensitive=sensitive, known=known, outputs="score"))
        where = (dataset, depth, sensitive)
        assert _reported(label) >= _reported(blind) - 1e-9, where
        assert _reported(score) >= _reported(label) - 1e-9, where
        for audit in (label, score):  # certain is always right
            assert audit.estimate.summary()["certain_wrong"] == 0, where


def test_an_exact_audit_proves_from_the_outputs(nursery):
    frame, roles = nursery
    features = [c for c in frame.columns if c != roles.class_attribute]
    table = frame.sample(3000, random_state=0).reset_index(drop=True)
    tree = sklearn_tree(table, features, roles.class_attribute, 6)
    assert isinstance(tree, Tree)
    known = tuple(c for c in features if c != "finance")
    blind = ppdm.audit(tree, table, ThreatModel(sensitive="finance", known=known), estimate=False, exact=True)
    seen = ppdm.audit(tree, table, ThreatModel(sensitive="finance", known=known, outputs="score"), estimate=False, exact=True)
    b, s = blind.proved.summary(), seen.proved.summary()
    assert s["certain_wrong"] == 0 and s["certain_records"] > b["certain_records"]


def test_the_pooled_forest_estimate_says_it_does_not_read_the_outputs(adult_train):
    from ppdm.attacks.models.explicit import ForestAuditOptions
    from ppdm.pipeline.estimate import estimate
    from ppdm.pipeline.options import AuditOptions

    frame, roles = adult_train
    features = [c for c in frame.columns if c != roles.class_attribute][:8]
    table, X, D, y = small_table(frame, features, roles.class_attribute, 300)
    forest = FAMILIES["random-forest-no-bootstrap"](X, D, y)
    threat = ThreatModel(sensitive=features[0], known=tuple(features[1:3]), outputs="label")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resolved = threat.resolve(table, forest.class_attribute, splits=forest.split_attributes)
        result = estimate(forest, table, resolved, None, AuditOptions(forest=ForestAuditOptions(max_routed=10)), None)  # force the pooled estimate
    assert "does not read the model's labels" in result.details["note"]


@pytest.mark.parametrize("dataset", ["adult", "nursery"])
def test_the_leaf_attacks_read_a_tree_s_outputs(dataset, adult_train, nursery):
    """Seeing each person's label or score keeps only the leaves giving it: the homogeneity attack
    exposes at least as many people, never wrongly; a forest's answer is refused in one line."""
    from ppdm.attacks import homogeneity_attack
    from ppdm.errors import AttackError

    frame, roles = adult_train if dataset == "adult" else nursery
    target = roles.class_attribute
    table = frame.sample(3000, random_state=0).reset_index(drop=True)
    features = [c for c in table.columns if c != target][:8]
    tree = sklearn_tree(table, features, target, 8)
    exposed = []
    for outputs in (None, "label", "score"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = homogeneity_attack(tree, table, ThreatModel(sensitive=target, known=tuple(features[:4]), outputs=outputs)).summary()
        assert s["exposed_wrong"] == 0, (dataset, outputs)
        exposed.append(s["exposed_records"])
    assert exposed[0] <= exposed[1] <= exposed[2] and exposed[2] > exposed[0], exposed
    sample, X, D, y = small_table(frame, features, target, 300)
    forest = FAMILIES["random-forest"](X, D, y)
    with pytest.raises(AttackError, match="maximum-entropy audit"):
        homogeneity_attack(forest, sample, ThreatModel(sensitive=target, known=tuple(features[:4]), outputs="label"))
