"""What one audit found, before the front door (:func:`ppdm.audit`) gives it its views: one result type
for every question (an attribute's estimate and proof, a regressor's intervals, membership)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.core.value_names import data_value_names
from ppdm.attacks.membership.audit import MembershipResult
from ppdm.rules.ruleset import RuleSet
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

__all__ = ["Findings", "Model", "annotate"]

Model = Tree | Forest


@dataclass
class Findings:
    """One audit's results: ``estimate`` (the reported attacker) and ``proved`` (the exact audit) of
    an attribute, ``intervals`` of a regressor's numeric secret, or ``membership``; ``model`` as
    read, ``threat`` resolved against ``table`` (the records audited after the missing-value
    policy, ``weights`` records each when counted), ``dropped_rows`` left out, ``reference`` the
    model-free attacker's result, ``sources`` the inputs the release record hashes."""

    model: Model | RuleSet | Any  # a rule set, or any classifier, only in a membership audit
    threat: ThreatModel
    table: pd.DataFrame
    estimate: AttackResult | None = None
    proved: AttackResult | None = None
    weights: np.ndarray | None = None
    dropped_rows: int = 0
    reference: AttackResult | None = None
    membership: MembershipResult | None = None
    intervals: Any = None
    sources: dict[str, Any] = field(default_factory=dict)


def annotate(
    results: list[AttackResult], counted: pd.DataFrame, resolved: ThreatModel, sampled: Any, subset: str | None, dropped: int, data_alone: str | None = None,
) -> None:
    """What each result read, in its details: the sensitive value's names, the sample, the trees
    and the rows dropped; and ``data_alone``, a known column that gives the secret in the table
    (:func:`ppdm.pipeline.checks.determining_columns`)."""
    for r in results:
        if r.true_codes is not None and str(resolved.sensitive) in counted.columns:
            names = data_value_names(r.values, r.true_codes, counted[str(resolved.sensitive)])
            if names:
                r.details["value_names"] = names
        if sampled:
            r.details["sample"] = sampled
        if subset is not None:
            r.details["trees_audited"] = subset
        if data_alone:
            r.details["data_alone"] = data_alone
        if dropped:  # what was read, rows too: the result's scope (ppdm.attacks.core.scope)
            r.details["dropped_rows"] = dropped

