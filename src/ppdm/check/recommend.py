"""One recommendation per model: ``reject``, ``release`` or ``release with conditions``.

SACRO-ML's final recommendation sorts its findings into immediate rejection, evidence for
rejection and evidence for release; ppdm's gives one decision, and every reason cites the policy
rule and its evidence with its strength (:class:`~ppdm.check.findings.Finding`):

* a failed rule the policy lists under ``reject`` (by default ``family``: SVMs and kNN) → ``reject``;
* otherwise any failed rule, or any rule not checked (its evidence missing, or approximate where
  the policy does not count approximate evidence) → ``release with conditions``: the conditions
  are those findings, for the output checker to settle before the model leaves;
* every rule passed → ``release``.

A model no better than the majority class on held-out rows (``beat_majority`` failed) is never
``release``: it is no defense's success, whatever else passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ppdm.check.findings import Finding
from ppdm.check.policy import Policy

__all__ = ["CONDITIONAL", "DECISIONS", "REJECT", "RELEASE", "Recommendation", "family_check", "recommend"]

REJECT = "reject"
RELEASE = "release"
CONDITIONAL = "release with conditions"
DECISIONS = (REJECT, RELEASE, CONDITIONAL)


@dataclass(frozen=True)
class Recommendation:
    """The decision, its reasons (the first says why), and the conditions of a conditional release."""

    decision: str
    reasons: tuple[str, ...]
    conditions: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {"decision": self.decision, "reasons": list(self.reasons), "conditions": list(self.conditions)}


def family_check(family: str, name: str, policy: Policy) -> Finding:
    """``family``: the model's family is not one the policy rejects on sight."""
    if family in policy.reject_families:
        why = {"svm": "its support vectors are training rows stored whole", "knn": "it stores every training row"}.get(family, "the policy rejects this family")
        return Finding("family", "failed", None, None, "proved", f"{name} is a {family} model: {why}")
    return Finding("family", "passed", None, None, "proved", f"{name} is a {family} model, not one the policy rejects on sight")


def recommend(findings: Sequence[Finding], policy: Policy) -> Recommendation:
    """The decision ``findings`` give under ``policy`` (see the module docstring)."""
    lines = tuple(f.line() for f in findings)
    rejecting = [f for f in findings if f.state == "failed" and policy.rejects(f.rule)]
    if rejecting:
        rules = ", ".join(dict.fromkeys(f.rule for f in rejecting))
        return Recommendation(REJECT, (f"reject: {rules} failed, and policy {policy.name!r} rejects on it", *lines))
    open_ = [f for f in findings if f.state != "passed"]
    if open_:
        flat = any(f.rule == "beat_majority" and f.state == "failed" for f in findings)
        head = (
            "release with conditions: the model is no better than the majority class on held-out rows, so releasing it is no "
            "defense's success (publish the class shares instead)" if flat else
            f"release with conditions: {', '.join(dict.fromkeys(f.rule for f in open_))} to settle before release"
        )  # fmt: skip
        return Recommendation(CONDITIONAL, (head, *lines), tuple(f.line() for f in open_))
    return Recommendation(RELEASE, (f"release: every rule of policy {policy.name!r} passed", *lines))
