"""The two questions that are not answered by the maximum-entropy estimate of a tree or forest:
a published rule set's estimate (paper 004 §V) and the leaf attacks of paper 003 (§2.2.1, §3.1,
§3.2), each under the threat resolved once."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ppdm.attacks.core.threat import ThreatModel
from ppdm.errors import PpdmError
from ppdm.pipeline.findings import Findings, Model
from ppdm.pipeline.options import AuditOptions
from ppdm.rules.ruleset import RuleSet

__all__ = ["leaf_audit", "rules_audit"]


def rules_audit(rules: RuleSet, table: pd.DataFrame, declared: ThreatModel, how: AuditOptions) -> Findings:
    """A published rule set's audit (paper 004): the maximum-entropy estimate of everyone's
    sensitive value from the rules, under the threat resolved once."""
    from ppdm.attacks.models.rules import rules_estimate, rules_threat
    from ppdm.maxent.constraints.rule_constraints import RuleKnowledge

    if how.exact or how.internal or how.forest is not None or how.search is not None or how.leaf is not None or how.method != "auto":
        raise PpdmError("a rule set's audit is its maximum-entropy estimate (paper 004): no exact proof, split choices, forest, search, leaf or method options")
    if how.missing != "error":
        raise PpdmError("a rule set's audit reads the attacker's table as it is: no missing-value policy")
    resolved, knowledge = rules_threat(rules, table, declared, how.rules or RuleKnowledge())
    return Findings(rules, resolved, table, rules_estimate(rules, table, knowledge, resolved))


def leaf_audit(published: Model, table: pd.DataFrame, declared: ThreatModel, how: AuditOptions) -> Findings:
    """A leaf attack of paper 003 (:class:`~ppdm.pipeline.options.LeafOptions`) under the threat
    resolved once: the published leaves read with the attacker's table, whose size the model need
    not publish."""
    from ppdm.attacks.leaf.background import background_knowledge_attack
    from ppdm.attacks.leaf.homogeneity import homogeneity_attack, uniqueness_attack
    from ppdm.attacks.leaf.reconstruction import reconstruction_attack

    assert how.leaf is not None
    if how.exact or how.internal or not how.estimate or how.missing != "error" or how.method != "auto":
        raise PpdmError("a leaf attack reads the published leaves alone: no exact proof, split choices, method or missing-value policy")
    resolved = declared.resolve(table, published.class_attribute, splits=published.split_attributes)
    result: Any
    if how.leaf.attack == "background":
        result = background_knowledge_attack(published, table, threshold=how.leaf.threshold, threat=resolved)
    else:
        attack = {"homogeneity": homogeneity_attack, "uniqueness": uniqueness_attack, "reconstruction": reconstruction_attack}[how.leaf.attack]
        result = attack(published, table, resolved)
    return Findings(published, resolved, table, result)
