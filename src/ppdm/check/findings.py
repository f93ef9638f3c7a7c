"""One finding of the checker: a policy rule, whether the model passes it, and the evidence.

Every finding names the rule of the policy it answers (:data:`ppdm.check.policy.RULES`), its
value beside the policy's limit, and the strength of its evidence:

* ``proved``: counted exactly on the model and the training table (the equivalence classes, the
  parameters), or proved by the exact audit;
* ``estimated``: a statistic of a sample (held-out accuracy, a test of the losses), or a rule of
  thumb from a study (the hyperparameter rules);
* ``approximate``: an estimate that is not the quantity the rule is about (a forest's pooled
  estimate: it reads each tree exactly but not their intersection), which the default policy
  does not count as met without a proof.

``state``: ``passed``, ``failed`` or ``not checked`` (the evidence is missing, or too weak for
the policy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["STATES", "STRENGTHS", "Finding"]

STATES = ("passed", "failed", "not checked")
STRENGTHS = ("proved", "estimated", "approximate", "none")


@dataclass(frozen=True)
class Finding:
    """A rule's answer: ``state``, ``value`` beside ``limit``, ``strength``, the ``evidence`` in
    words, and the ``people`` it concerns (when it counts records)."""

    rule: str
    state: str
    value: float | None
    limit: float | None
    strength: str
    evidence: str
    people: int | None = None

    def __post_init__(self) -> None:
        if self.state not in STATES:
            raise ValueError(f"a finding's state is one of {STATES}, got {self.state!r}")
        if self.strength not in STRENGTHS:
            raise ValueError(f"a finding's strength is one of {STRENGTHS}, got {self.strength!r}")

    def line(self) -> str:
        """``rule: state (strength): evidence``, the reason a recommendation cites."""
        return f"{self.rule}: {self.state} ({self.strength}): {self.evidence}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "state": self.state, "value": self.value, "limit": self.limit, "strength": self.strength,
            "evidence": self.evidence, "people": self.people,
        }  # fmt: skip
