"""The audits a defense search runs on each candidate, all under one threat model.

An *auditor* takes a candidate tree (or forest), the training records and the resolved threat model and returns
an :class:`~ppdm.attacks.core.result.AttackResult`, or ``None`` when its attack does not apply to
this candidate. The search combines the results of every auditor (:class:`~ppdm.attacks.core.target.Evidence`):
a person counts as certain if *any* attack is certain about them. The default auditors are the
maximum-entropy audit (paper 000) and the homogeneity attack that reads the leaves (paper 003
§3.1), each over every tree of a forest at once. An audit that proves bounds (the exact audit) is one more auditor in the list.

Candidates whose published counts are noisy (the ε-DP baseline) contradict the training table, so
the maximum-entropy audit, which takes them as exact, does not apply; the leaf-reading attack,
which takes them at face value, still measures what a naive reader infers.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.leaf.anonymity import model_anonymity
from ppdm.attacks.leaf.homogeneity import homogeneity_attack
from ppdm.errors import UninformativeKnowledgeWarning
from ppdm.pipeline.baselines import rules_attacker
from ppdm.pipeline.estimate import estimate
from ppdm.pipeline.options import AuditOptions
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree
from ppdm.tree.spans import Spans

__all__ = [
    "DEFAULT_AUDITORS", "Auditor", "Model", "audit_until", "cheap_first", "leaf_auditor", "maxent_auditor", "reported_attacker", "spans_of",
]

Model = Tree | Forest
"""A model the search can publish and audit: one tree, or a forest of them (both answer
``disclosure``, ``published``, ``n_leaves``, ``depth`` and ``split_attributes`` alike)."""

#: ``auditor(model, data, threat, noisy)``: an attack's result, or ``None`` when it does not apply;
#: ``model`` is a :class:`Tree` or, when the search defends a forest, a :class:`Forest`.
Auditor = Callable[[Model, pd.DataFrame, ThreatModel, bool], "AttackResult | None"]


def maxent_auditor(tree: Model, data: pd.DataFrame, threat: ThreatModel, noisy: bool = False) -> AttackResult | None:
    """The maximum-entropy audit (rate and label constraints; paper 000 §4.1), exact counts only: the
    audit's own estimate step with its default options (:func:`ppdm.pipeline.estimate.estimate`,
    method ``auto``): over a forest, one problem holding every tree's rows
    (:mod:`ppdm.attacks.models.explicit`), or, where that problem is too large to build, each
    tree's exact estimate pooled within each person's possible values."""
    if noisy:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UninformativeKnowledgeWarning)  # labels only: uniform, still a valid audit
        return estimate(tree, data, threat, None, AuditOptions(), None)


def leaf_auditor(tree: Model, data: pd.DataFrame, threat: ThreatModel, noisy: bool = False) -> AttackResult | None:
    """The homogeneity attack (paper 003 §3.1): it reads the class out of the leaves a person can reach.

    Applies when the class is the sensitive attribute, the model publishes counts or error rates
    and the attacker knows some column; fully known individuals are not targets. Over a forest,
    the classes every tree holding a person leaves them, intersected
    (:func:`~ppdm.attacks.leaf.homogeneity.homogeneity_attack`).
    """
    if threat.sensitive != tree.class_attribute or tree.disclosure is Disclosure.LABELS or not threat.known:
        return None
    return homogeneity_attack(tree, data, threat)


DEFAULT_AUDITORS: tuple[Auditor, ...] = (maxent_auditor, leaf_auditor)


def spans_of(tree: Model, data: pd.DataFrame, threat: ThreatModel) -> Spans:
    """The linking attack's spans (paper 002 §2) with the threat model's known columns public."""
    return model_anonymity(tree, data, threat)


def audit_until(
    tree: Model, data: pd.DataFrame, threat: ThreatModel, auditors: Sequence[Auditor], noisy: bool = False,
    enough: Callable[[list[AttackResult]], bool] | None = None,
) -> tuple[list[AttackResult], bool]:
    """The auditors that apply, in order, until ``enough(results so far)`` says the rest are not
    needed; and whether every auditor ran."""
    results: list[AttackResult] = []
    for i, auditor in enumerate(auditors):
        result = auditor(tree, data, threat, noisy)
        if result is None:
            continue
        results.append(result)
        if enough is not None and i < len(auditors) - 1 and enough(results):
            return results, False
    return results, True


def reported_attacker(results: Sequence[AttackResult], tree: Model, data: pd.DataFrame, threat: ThreatModel) -> AttackResult | None:
    """The attacker ``ppdm.audit`` would report for this candidate when it is not the estimate
    itself: the strongest of the estimate and the likelihood rules, each restricted to the values
    the estimate leaves possible (:func:`~ppdm.attacks.baselines.portfolio.strongest_attacker`). Added to the
    candidate's evidence, so that a candidate the search finds meeting the target meets it again
    when the chosen model is audited on its own (the audit reports that attacker; habit 2: never
    a weaker attacker than a simple one; the audit's step, :func:`ppdm.pipeline.baselines.rules_attacker`).
    ``None`` when the rules do not apply or add nothing."""
    found = next((r for r in results if r.attack != "homogeneity"), None)
    if found is None:
        return None
    strongest = rules_attacker(found, tree, data, threat)
    if strongest is found:
        return None
    strongest.attack = "portfolio"  # the frontier's ``audits`` column: maxent+homogeneity+portfolio
    return strongest


def cheap_first(auditors: Sequence[Auditor]) -> list[Auditor]:
    """The auditors with the leaf-reading attack first: over a forest it reads every tree's leaves
    in about a second, where the maximum-entropy audit can take minutes, and what it finds may
    already settle that a candidate misses its target."""
    return sorted(auditors, key=lambda a: a is not leaf_auditor)
