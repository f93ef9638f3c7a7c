"""Privacy targets: risk measures a model to publish must keep within a limit.

One target for the whole toolkit: ``ppdm defend`` searches for the most accurate candidate
meeting it (:mod:`ppdm.defend.search`), ``ppdm audit`` stores it in the audit's JSON and the
report judges the audit against it (:mod:`ppdm.report.verdict`), and the release record
(:mod:`ppdm.report.record`) files it with the decision. It lives with the attacks, the lowest
layer both the defense and the report read.

A target is a list of risk measures, each with a limit; a candidate meets the target when every
measure is within its limit. Each measure is a small function of the :class:`Evidence` the audits
of one candidate produce (per target record: whether some attack is certain of their true value,
the highest confidence any attack gives it; the linking attack's spans when a measure needs them):

* ``certain=N``: at most N people about whom an attack is certain of their true value. "Certain"
  is what the audits run say: the maximum-entropy audit (probability ≥ 1 − ``CERTAINTY_TOL``,
  :mod:`ppdm.metrics.baseline`; the true table satisfies every published constraint, so such a
  certainty is one that every consistent table shares) and the leaf-reading homogeneity attack
  (paper 003 §3.1). Which audits run is pluggable (:mod:`ppdm.defend.audits`): an exact audit
  that proves bounds drops in as one more auditor;
* ``confident=X@C``: at most a share X of the people with confidence ≥ C in their true value
  (paper 000's individual view: the attacker's belief, whoever holds it highest);
* ``span=K``: every span of the linking attack holds at least K records (k-anonymity of the model,
  paper 002 Definition 6, under the threat model's known columns);
* ``l=L``: every span is entropy L-diverse in the class (paper 002 §4.2);
* ``members_proved=N``: at most N candidates the membership audit (issue 27,
  :mod:`ppdm.attacks.membership.audit`) proves training records, over a population of the training
  rows and a sample of non-members (:mod:`ppdm.defend.membership`);
* ``mia_tpr@F<=X``: the membership attacker finds at most a share X of the members at a
  false-positive rate F (``mia_tpr@1%<=0.02``; Carlini et al. 2022's TPR at low FPR);
* ``lift_over_reference<=X``: the strongest attacker with the candidate and a reference sample
  of the population is at most X more accurate than the stronger of the model-free attacker
  fitted on that sample and the prior (Jayaraman & Evans, CCS 2022: what the model adds beyond
  imputation; :mod:`ppdm.attacks.baselines.reference`, :mod:`ppdm.attacks.baselines.portfolio`).

:func:`parse_target` reads the text form ``"certain=0,confident=0.01@0.9"`` the CLI takes
(``<=`` may stand for ``=``: ``"members_proved=0,mia_tpr@1%<=0.02"``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ppdm.attacks.core.result import AttackResult
from ppdm.errors import PpdmError
from ppdm.metrics.baseline import CERTAINTY_TOL
from ppdm.tree.spans import Spans

__all__ = [
    "CERTAINTY_TOL", "DEFAULT_TARGET", "MEMBERSHIP_TARGET", "Certain", "Confident", "Evidence", "LDiverse", "LiftOverReference", "MembersProved",
    "MembershipEvidence", "MiaTpr", "MinSpan", "RiskMeasure", "Target", "default_target", "parse_target", "people", "target_from_dict",
]

DEFAULT_TARGET = "certain=0,confident=0.01@0.9"
"""Nobody certain; at most 1 % of the people at confidence ≥ 0.9 in their true value."""

MEMBERSHIP_TARGET = "members_proved=0,mia_tpr@1%<=0.02"
"""Nobody proved a member; the membership attacker's TPR at 1 % FPR at most 2 %."""


@dataclass(frozen=True)
class MembershipEvidence:
    """What the membership audit of one candidate says: ``proved`` members, the attacker's TPR at
    any false-positive rate (``tpr_at(fpr)``), and where the numbers come from (``source``)."""

    proved: int
    tpr_at: Callable[[float], float]
    source: str = "membership"


@dataclass
class Evidence:
    """What the audits of one candidate say about the training records.

    ``certain``: per record, some attack is certain of its true value (and right);
    ``confidence``: per record, the highest probability an attack gives its true value;
    ``targets``: the records the audit is about (known individuals excluded);
    ``spans``: the linking attack's spans (only when a measure needs them);
    ``sources``: the attacks the evidence comes from;
    ``membership``: the membership audit's (only when a measure needs it);
    ``lift``: the strongest attacker's accuracy minus the stronger of the model-free attacker's
    and the prior's (only when a measure needs it: a reference sample was given).
    """

    certain: np.ndarray
    confidence: np.ndarray
    targets: np.ndarray
    spans: Spans | None = None
    sources: tuple[str, ...] = ()
    membership: MembershipEvidence | None = None
    lift: float | None = None

    @classmethod
    def of_membership(cls, membership: MembershipEvidence) -> Evidence:
        """Evidence from the membership audit alone (a target of membership measures only)."""
        none = np.zeros(0, dtype=bool)
        return cls(none, np.zeros(0), none, None, (membership.source,), membership)

    @classmethod
    def from_results(cls, results: Sequence[AttackResult], spans: Spans | None = None) -> Evidence:
        """Combine attacks on the same records: certain if any attack is, the highest confidence."""
        if not results:
            raise PpdmError("no audit applies to this candidate (e.g. noisy DP counts and a sensitive column other than the class)")
        n = results[0].groups.n_records
        if any(r.groups.n_records != n for r in results):
            raise PpdmError("the audits of one candidate cover different numbers of records")
        if any(r.true_codes is None for r in results):
            raise PpdmError("measuring a target needs the true sensitive values in the data")
        # certain and right by an attack's own exposures (what it can stand behind: a rule's point
        # prediction at probability 1 is a belief, counted by ``confident``, not a certainty)
        certain = np.logical_or.reduce([r.exposed_right() for r in results])
        confidence = np.maximum.reduce([c for c in (r.confidence_in_truth() for r in results) if c is not None])
        targets = np.logical_and.reduce([r.targets for r in results])
        return cls(certain & targets, confidence, targets, spans, tuple(r.attack for r in results))


@dataclass(frozen=True)
class RiskMeasure:
    """One measure and its limit; subclasses say how to compute it and which way is worse."""

    limit: float
    name = "risk"
    higher_is_riskier = True
    needs_spans = False
    needs_membership = False
    needs_reference = False
    grows_with_audits = False  # more audits can only raise it (certain if any attack is, the highest confidence)

    def value(self, evidence: Evidence) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def meets(self, value: float) -> bool:
        if math.isnan(value):
            return False
        return value <= self.limit + 1e-12 if self.higher_is_riskier else value >= self.limit - 1e-12

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class Certain(RiskMeasure):
    """People an attack is certain about (rightly), at most ``limit`` of them."""

    limit: float = 0
    name = "certain"
    grows_with_audits = True

    def value(self, evidence: Evidence) -> float:
        return float(evidence.certain.sum())

    def describe(self) -> str:
        who = "nobody" if self.limit == 0 else f"at most {people(self.limit)} people"
        return f"{who} certain"


@dataclass(frozen=True)
class Confident(RiskMeasure):
    """Share of the people held at confidence ≥ ``at`` in their true value, at most ``limit``."""

    limit: float = 0.01
    at: float = 0.9
    name = "confident"
    grows_with_audits = True

    def __post_init__(self) -> None:
        if not 0 <= self.limit <= 1:
            raise PpdmError(f"confident: the share must be in [0, 1], got {self.limit:g}")
        if not 0 < self.at <= 1:
            raise PpdmError(f"confident: the confidence must be in (0, 1], got {self.at:g}")

    def value(self, evidence: Evidence) -> float:
        held = (evidence.confidence >= self.at - CERTAINTY_TOL) & evidence.targets
        n = int(evidence.targets.sum())
        return float(held.sum() / n) if n else 0.0

    def describe(self) -> str:
        return f"≤ {100 * self.limit:g} % at confidence ≥ {self.at:g}"


@dataclass(frozen=True)
class MinSpan(RiskMeasure):
    """The smallest span of the linking attack holds at least ``limit`` records (model k-anonymity)."""

    limit: float = 2
    name = "span"
    higher_is_riskier = False
    needs_spans = True

    def value(self, evidence: Evidence) -> float:
        return float(evidence.spans.k) if evidence.spans is not None else math.nan

    def describe(self) -> str:
        return f"every span ≥ {self.limit:g}"


@dataclass(frozen=True)
class LDiverse(RiskMeasure):
    """Every span's class entropy is at least log2 ``limit`` (entropy ℓ-diversity)."""

    limit: float = 2
    name = "l"
    higher_is_riskier = False
    needs_spans = True

    def value(self, evidence: Evidence) -> float:
        return float(evidence.spans.l_diversity) if evidence.spans is not None else math.nan

    def describe(self) -> str:
        return f"{self.limit:g}-diverse spans"


@dataclass(frozen=True)
class MembersProved(RiskMeasure):
    """Candidates the membership audit proves training records, at most ``limit`` of them."""

    limit: float = 0
    name = "members_proved"
    needs_membership = True

    def value(self, evidence: Evidence) -> float:
        return float(evidence.membership.proved) if evidence.membership is not None else math.nan

    def describe(self) -> str:
        who = "nobody" if self.limit == 0 else f"at most {people(self.limit)} people"
        return f"{who} proved a member"


@dataclass(frozen=True)
class MiaTpr(RiskMeasure):
    """The membership attacker's true-positive rate at false-positive rate ``fpr``, at most ``limit``."""

    limit: float = 0.02
    fpr: float = 0.01
    needs_membership = True

    def __post_init__(self) -> None:
        if not 0 <= self.limit <= 1:
            raise PpdmError(f"mia_tpr: the rate must be in [0, 1], got {self.limit:g}")
        if not 0 < self.fpr < 1:
            raise PpdmError(f"mia_tpr: the false-positive rate must be in (0, 1), got {self.fpr:g}")
        object.__setattr__(self, "name", f"mia_tpr@{_percent(self.fpr)}")

    def value(self, evidence: Evidence) -> float:
        return float(evidence.membership.tpr_at(self.fpr)) if evidence.membership is not None else math.nan

    def describe(self) -> str:
        return f"membership TPR ≤ {_percent(self.limit)} at {_percent(self.fpr)} FPR"


@dataclass(frozen=True)
class LiftOverReference(RiskMeasure):
    """What the candidate adds to an attacker who holds a sample of the population: the strongest
    attacker's accuracy minus the model-free one's (or the prior's), at most ``limit``."""

    limit: float = 0.02
    name = "lift_over_reference"
    needs_reference = True

    def __post_init__(self) -> None:
        if not 0 <= self.limit <= 1:
            raise PpdmError(f"lift_over_reference: the accuracy lift must be in [0, 1], got {self.limit:g}")

    def value(self, evidence: Evidence) -> float:
        return float(evidence.lift) if evidence.lift is not None else math.nan

    def describe(self) -> str:
        return f"the model adds ≤ {100 * self.limit:g} points of accuracy beyond a population sample"


def people(count: float) -> str:
    """A count of people as every report writes one: whole numbers with thousands separators
    (``6,579``, never ``6579`` or ``1e+06``), anything else as it is."""
    return f"{count:,.0f}" if float(count).is_integer() else f"{count:g}"


def _percent(share: float) -> str:
    return f"{100 * share:g}%"


@dataclass(frozen=True)
class Target:
    """Every measure within its limit."""

    measures: tuple[RiskMeasure, ...]

    def __post_init__(self) -> None:
        if not self.measures:
            raise PpdmError("a target needs at least one measure (e.g. certain=0)")
        names = [m.name for m in self.measures]
        if len(set(names)) != len(names):
            raise PpdmError(f"the target names a measure twice: {', '.join(names)}")

    @property
    def needs_spans(self) -> bool:
        return any(m.needs_spans for m in self.measures)

    @property
    def needs_membership(self) -> bool:
        return any(m.needs_membership for m in self.measures)

    @property
    def needs_reference(self) -> bool:
        return any(m.needs_reference for m in self.measures)

    @property
    def needs_attacks(self) -> bool:
        """Whether a measure reads the attacks on the sensitive value (not membership alone)."""
        return any(not m.needs_membership for m in self.measures)

    def values(self, evidence: Evidence) -> dict[str, float]:
        return {m.name: m.value(evidence) for m in self.measures}

    def meets(self, values: dict[str, float]) -> bool:
        return all(m.meets(values[m.name]) for m in self.measures)

    def missed_by(self, evidence: Evidence) -> bool:
        """Whether ``evidence`` from some of the audits already misses the target: a measure that
        more audits can only raise (``certain``, ``confident``) is over its limit."""
        return any(m.grows_with_audits and not m.meets(m.value(evidence)) for m in self.measures)

    def measure(self, name: str) -> RiskMeasure:
        for m in self.measures:
            if m.name == name:
                return m
        raise PpdmError(f"the target has no measure {name!r} (it has: {', '.join(m.name for m in self.measures)})")

    def describe(self) -> str:
        return ", ".join(m.describe() for m in self.measures)

    def to_text(self) -> str:
        """The text :func:`parse_target` reads back into this target."""
        parts = []
        for m in self.measures:
            at = f"@{m.at:g}" if isinstance(m, Confident) else ""
            parts.append(f"{m.name}{'<' if m.needs_membership or m.needs_reference else ''}={m.limit:g}{at}")
        return ",".join(parts)

    @property
    def confidences(self) -> tuple[float, ...]:
        """The confidence levels its ``confident`` measure reads (none without one)."""
        return tuple(m.at for m in self.measures if isinstance(m, Confident))

    def judge(self, values: Mapping[str, float | None]) -> dict[str, str]:
        """Per measure, ``"met"``, ``"not met"`` or ``"not measured"`` (its value missing or NaN)."""
        out = {}
        for m in self.measures:
            value = values.get(m.name)
            out[m.name] = "not measured" if value is None or math.isnan(value) else "met" if m.meets(value) else "not met"
        return out

    def to_dict(self, given: bool = True) -> dict[str, Any]:
        """JSON-ready: ``text`` (what :func:`parse_target` reads), ``describe`` (in words), each
        measure's name, limit and direction, and ``given``: whether the user chose it (``False``:
        the default target)."""
        return {
            "text": self.to_text(),
            "describe": self.describe(),
            "given": bool(given),
            "measures": [
                {"name": m.name, "limit": m.limit, "at_most": m.higher_is_riskier, "describe": m.describe()} for m in self.measures
            ],
        }


def default_target(membership: bool = False) -> Target:
    """The target when none is given: :data:`DEFAULT_TARGET`, or :data:`MEMBERSHIP_TARGET` for a membership audit."""
    return parse_target(MEMBERSHIP_TARGET if membership else DEFAULT_TARGET)


def target_from_dict(data: Any, where: str = "the target") -> Target:
    """The target a JSON file stores (:meth:`Target.to_dict`, or its text alone)."""
    text = data.get("text") if isinstance(data, dict) else data
    if not isinstance(text, str):
        raise PpdmError(f"{where}: expected a target's text (e.g. {DEFAULT_TARGET!r}), got {type(text).__name__}")
    return parse_target(text)


_SYNTAX = "e.g. certain=0,confident=0.01@0.9,span=5,l=2, members_proved=0,mia_tpr@1%<=0.02 or lift_over_reference<=0.02"


def parse_target(text: str) -> Target:
    """A :class:`Target` from ``"certain=0,confident=0.01@0.9,span=5,l=2"`` (any subset, any order).

    ``confident`` takes a share (``0.01``) or a percentage (``1%``) before the ``@``; ``mia_tpr``
    a false-positive rate after it. ``<=`` may stand for ``=`` (``mia_tpr@1%<=0.02``).
    """
    measures: list[RiskMeasure] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        at_most = name.endswith("<")
        name = name.removesuffix("<").strip()
        if not sep or not value.strip():
            raise PpdmError(f"target: {part!r} is not name=value ({_SYNTAX})")
        measure = _measure(name, value.strip(), part)
        if at_most and not measure.higher_is_riskier:
            raise PpdmError(f"target: {part!r}: {measure.name} is a lower limit (write {measure.name}=VALUE)")
        measures.append(measure)
    if not measures:
        raise PpdmError(f"target: empty ({_SYNTAX})")
    return Target(tuple(measures))


def _measure(name: str, value: str, part: str) -> RiskMeasure:
    if name in ("lift_over_reference", "lift"):
        return LiftOverReference(_number(value, part))
    if name == "certain":
        n = _number(value, part)
        if n < 0 or n != int(n):
            raise PpdmError(f"target: {part!r}: certain takes a whole number of people")
        return Certain(n)
    if name == "confident":
        share, at, conf = value.partition("@")
        if not at:
            raise PpdmError(f"target: {part!r}: confident takes SHARE@CONFIDENCE ({_SYNTAX})")
        percent = share.strip().endswith("%")
        x = _number(share.strip().rstrip("%"), part) / (100 if percent else 1)
        return Confident(x, _number(conf, part))
    if name in ("span", "k"):
        k = _number(value, part)
        if k < 1:
            raise PpdmError(f"target: {part!r}: span takes a record count ≥ 1")
        return MinSpan(k)
    if name in ("l", "l-diverse", "ell"):
        ell = _number(value, part)
        if ell < 1:
            raise PpdmError(f"target: {part!r}: l takes a value ≥ 1")
        return LDiverse(ell)
    if name == "members_proved":
        n = _number(value, part)
        if n < 0 or n != int(n):
            raise PpdmError(f"target: {part!r}: members_proved takes a whole number of people")
        return MembersProved(n)
    if name.startswith("mia_tpr"):
        _, at, fpr = name.partition("@")
        if not at:
            raise PpdmError(f"target: {part!r}: mia_tpr takes a false-positive rate, mia_tpr@FPR<=TPR ({_SYNTAX})")
        return MiaTpr(_share(value, part), _share(fpr, part))
    raise PpdmError(f"target: unknown measure {name!r} (measures: certain, confident, span, l, members_proved, mia_tpr@FPR; {_SYNTAX})")


def _share(text: str, part: str) -> float:
    """A share written ``0.01`` or ``1%``."""
    text = text.strip()
    percent = text.endswith("%")
    return _number(text.rstrip("%"), part) / (100 if percent else 1)


def _number(text: str, part: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PpdmError(f"target: {part!r}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise PpdmError(f"target: {part!r}: {text!r} is not a finite number")
    return value
