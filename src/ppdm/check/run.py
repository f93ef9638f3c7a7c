"""The checker's run: a model, its training table, held-out rows and a policy → findings and one
recommendation (:func:`check_model`).

The structural checks run on every classifier (:mod:`ppdm.check.classes`, :mod:`ppdm.check.dof`,
:mod:`ppdm.check.hyperparameters`, :mod:`ppdm.check.gap`); the audits' evidence joins them when
given (``audit``: an :class:`ppdm.Audit` of the same model, :mod:`ppdm.check.audit_evidence`), and
so does any other attack's (``extra``: findings). The black-box attacks run on every classifier
whose outputs the checker holds: membership (:mod:`ppdm.check.blackbox_membership`, when the
policy sets a membership limit, on the training rows against the held-out ones) and, with a
``sensitive`` column and no audit given, attribute inference (:mod:`ppdm.check.blackbox_attribute`).
A model built elsewhere may be given by its outputs alone (``scores``: its predicted probabilities,
:mod:`ppdm.check.scores`): the checks of its outputs run, the attacks that read outputs only
(the confidence attack, outputs as features), and those that need the model are reported
``not checked``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ppdm.attacks.membership.blackbox import BlackboxOptions
from ppdm.check.audit_evidence import audit_findings
from ppdm.check.blackbox_attribute import attribute_check
from ppdm.check.blackbox_membership import membership_check
from ppdm.check.classes import Classes, class_checks, output_classes, structural_classes
from ppdm.check.dof import dof_check, parameter_count
from ppdm.check.findings import Finding
from ppdm.check.gap import gap_checks
from ppdm.check.hyperparameters import hyperparameter_check
from ppdm.check.model import Checked, read_checked
from ppdm.check.policy import PRESETS, Policy, read_policy
from ppdm.check.recommend import Recommendation, family_check, recommend
from ppdm.check.scores import UNMEASURED, Scored, read_scored, unmeasured
from ppdm.errors import DataError

__all__ = ["FORMAT", "CheckResult", "check_model"]

FORMAT = "ppdm-check"


@dataclass
class CheckResult:
    """What the checker found: the model's facts, the findings, the recommendation, the policy."""

    model: Checked
    policy: Policy
    findings: list[Finding]
    recommendation: Recommendation
    classes: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    attacks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def decision(self) -> str:
        return self.recommendation.decision

    def finding(self, rule: str) -> Finding:
        return next(f for f in self.findings if f.rule == rule)

    def lines(self) -> list[str]:
        """What ``ppdm check`` prints."""
        head = f"{self.model.name} ({self.model.family}), policy {self.policy.name!r} (sha256 {self.policy.sha256[:12]}): {self.decision}"
        return [head, *(f"  {f.line()}" for f in self.findings), f"  → {self.recommendation.reasons[0]}"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "version": 1, "model": self.facts, "policy": self.policy.cite(),
            "equivalence_classes": self.classes, "findings": [f.to_dict() for f in self.findings],
            "recommendation": self.recommendation.to_dict(), "attacks": self.attacks,
        }  # fmt: skip


def check_model(
    model: Any,
    data: pd.DataFrame,
    *,
    class_attribute: str,
    holdout: pd.DataFrame | None = None,
    policy: Policy | str | Path | None = None,
    audit: Any = None,
    extra: Sequence[Finding] = (),
    scores: Any = None,
    holdout_scores: Any = None,
    membership: BlackboxOptions | bool | None = None,
    sensitive: str | None = None,
    known: Sequence[str] | None = None,
) -> CheckResult:
    """Check ``model`` (a fitted classifier or Pipeline, a ppdm model, or a model file) against
    ``policy`` (default :data:`~ppdm.check.policy.PRESETS` ``["default"]``) on its training table
    ``data`` and ``holdout`` rows (see the module docstring). A model built elsewhere and known
    only by its outputs: ``model=None`` and ``scores`` (its predicted probabilities per training
    row, a CSV file or DataFrame), ``holdout_scores`` with ``holdout`` (:mod:`ppdm.check.scores`).
    ``membership``: the black-box membership attacks' settings (``None``: the defaults, ``False``:
    not run); ``sensitive`` and ``known``: the black-box attribute audit's column and the
    attacker's known columns (default: every other), run when no ``audit`` is given."""
    rules = read_policy(policy) or PRESETS["default"]
    if class_attribute not in data.columns:
        raise DataError(f"the training table has no class column {class_attribute!r}")
    if holdout is not None and class_attribute not in holdout.columns:
        raise DataError(f"the held-out table has no class column {class_attribute!r}")
    scored = _scored(model, data, class_attribute, holdout, scores, holdout_scores)
    checked = scored.checked if scored is not None else read_checked(model, data, class_attribute)
    proba = scored.train if scored is not None else checked.proba(data)
    outputs = output_classes(proba)
    structure = structural_classes(checked, data)
    classes: Classes = structure if structure is not None else outputs
    findings = [family_check(checked.family, checked.name, rules) if scored is None else unmeasured("family")]
    findings += class_checks(classes, outputs, rules.min_group_size, rules.zeros_disclosive)
    findings.append(dof_check(checked, len(data), rules.min_residual_dof) if scored is None else unmeasured("residual_dof", float(rules.min_residual_dof)))
    if rules.hyperparameter_rules:
        findings.append(hyperparameter_check(checked, len(data), rules.min_group_size) if scored is None else unmeasured("hyperparameters"))
    held_proba = None if scored is None else scored.holdout
    gaps = gap_checks(checked, data, holdout, rules.max_generalisation_gap, proba, held_proba)
    findings += [f for f in gaps if rules.beat_majority or f.rule != "beat_majority"]
    if audit is not None:
        findings += audit_findings(audit, rules)
    attacks: dict[str, list[dict[str, Any]]] = {}
    if held_proba is None and holdout is not None:
        held_proba = checked.proba(holdout)
    member, attacks["membership"] = membership_check(checked, data, holdout, proba, held_proba, rules, membership)
    if sensitive is not None and audit is None:
        attribute, attacks["attribute"] = attribute_check(checked, data, holdout, proba, held_proba, rules, sensitive, known, queryable=scored is None)
        findings += [attribute] if attribute is not None else []
    findings += [member] if member is not None else []
    findings += list(extra)
    summaries = {"outputs": outputs.summary(rules.min_group_size)}
    if structure is not None:
        summaries["structure"] = structure.summary(rules.min_group_size)
    count, how = parameter_count(checked) if scored is None else (None, UNMEASURED)
    facts: dict[str, Any] = {"estimator": checked.name, "family": checked.family, "source": checked.source, "white_box": checked.ppdm_model is not None,
             "training_rows": len(data), "held_out_rows": None if holdout is None else len(holdout), "parameters": count, "parameters_counted": how}  # fmt: skip
    if scored is not None:
        facts["outputs_only"] = scored.files
    return CheckResult(checked, rules, findings, recommend(findings, rules), summaries, facts, {k: v for k, v in attacks.items() if v})


def _scored(model: Any, data: pd.DataFrame, class_attribute: str, holdout: pd.DataFrame | None, scores: Any, holdout_scores: Any) -> Scored | None:
    """The model known by its outputs (``None``: a model given)."""
    if scores is None:
        if holdout_scores is not None:
            raise DataError("held-out scores are a model's outputs known without the model: give scores= (--scores) for the training rows too")
        return None
    if model is not None:
        raise DataError("give a model or its scores (--scores), not both")
    return read_scored(scores, data, class_attribute, holdout, holdout_scores)
