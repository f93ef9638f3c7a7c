"""The verdict on one attack, in plain words, each figure next to what the prior alone gives.

The numbers are :meth:`AttackResult.summary`'s (the attacker's accuracy with its Wilson interval,
the majority-guess baseline, people by confidence in their true value, certain guesses right and
wrong: :mod:`ppdm.metrics.baseline`). The target is the one the audit or the defense search was
run with (:class:`~ppdm.attacks.core.target.Target`, the same class ``ppdm defend`` searches with);
by default nobody proved (certain and right) and at most 1 % of people held at confidence ≥ 0.9
in their true value. Each of its measures is read from the summary (:func:`measured`); a measure
this audit does not measure (a span, or membership in an audit of the sensitive value) leaves the
target "cannot be checked", never "met".
"""

from __future__ import annotations

import math
from typing import Any

from ppdm.attacks.core.scope import summary_scope
from ppdm.attacks.core.target import Certain, Confident, LiftOverReference, MembersProved, MiaTpr, RiskMeasure, Target, default_target, people
from ppdm.report import words


def pct(x: float, digits: int | None = None) -> str:
    """A share as a percentage with the precision a reader needs (61 %, 4.1 %, 0.03 %), or with
    ``digits`` decimals."""
    v = 100 * x
    if digits is not None:
        return f"{v:.{digits}f} %"
    if v == 0 or v >= 10:
        return f"{v:.0f} %"
    if v >= 1:
        return f"{v:.1f} %".replace(".0 %", " %")
    return f"{v:.2g} %"


def key_of(at: float) -> str:
    """The summary's key of the people held at confidence ``at`` or more (``">=0.9"``)."""
    return f">={at:g}"


def threshold_of(target: Target) -> float:
    """The confidence level the verdict's lines read: the target's ``confident`` one, else 0.9."""
    return target.confidences[0] if target.confidences else 0.9


#: How far under a confidence level the prior may sit for :func:`just_under` to say so.
NEAR = 0.05


def just_under(summary: dict[str, Any], at: float) -> str:
    """A sentence saying the prior alone sits just under the level ``at`` (within :data:`NEAR`):
    it gives everyone of the majority value its share (the prior's accuracy), so a small lift
    from the model counts them at ``at``; '' otherwise."""
    base = summary.get("baseline") or {}
    share = (base.get("prior") or {}).get(base.get("majority_guess"), base.get("accuracy"))
    lifted = (summary.get("beyond_prior") or {}).get(key_of(at), 0)
    if share is None or not lifted or not 0 < at - share <= NEAR:
        return ""
    return (
        f"the prior alone gives everyone whose value is {base['majority_guess']!r} a confidence of {share:.3f}, just under "
        f"{at:g}: a small lift from the model counts them there"
    )


def _in_brackets(text: str) -> str:
    return f" ({text})" if text else ""


def risk_share(summary: dict[str, Any], target: Target) -> float | None:
    """The share of targets held at the target's confidence or more (``None`` without the truth)."""
    held = summary.get("confidence_in_true_value", {}).get(key_of(threshold_of(target)))
    if held is None or not summary.get("targets"):
        return None
    return held / summary["targets"]


def measured(summary: dict[str, Any], target: Target) -> dict[str, float | None]:
    """Each measure of ``target`` as the audit's summary states it (``None``: not measured)."""
    return {m.name: _value(m, summary) for m in target.measures}


def _value(m: RiskMeasure, summary: dict[str, Any]) -> float | None:
    if isinstance(m, Certain):
        # with the truth, the people the attack exposes (certain by what it can stand behind, and
        # right), as the defense search counts them (:class:`~ppdm.attacks.core.target.Evidence`); without
        # it, the attacker's certain guesses, right or wrong: an upper bound
        found = summary.get("exposed_records", summary.get("certain_right")) if "baseline" in summary else summary.get("certain_records")
        return None if found is None else float(found)
    if isinstance(m, Confident):
        if is_proof(summary):  # a proof's posterior is a point inside what it proves, not a belief
            return None
        held = summary.get("confidence_in_true_value", {}).get(key_of(m.at))
        return None if held is None or not summary.get("targets") else held / summary["targets"]
    if isinstance(m, LiftOverReference):
        adds = (summary.get("reference") or {}).get("model_adds")
        return None if adds is None else float(adds)
    if isinstance(m, MembersProved):
        proved = summary.get("proved_members")
        return None if proved is None else float(proved)
    if isinstance(m, MiaTpr):
        tpr = summary.get(f"tpr@{100 * m.fpr:g}%")
        return None if tpr is None else float(tpr)
    return None


def target_line(summary: dict[str, Any], target: Target) -> tuple[str, str]:
    """The verdict's level against ``target`` ("meets", "fails" or "unknown") and its line: what
    was missed, or what this audit could not measure."""
    values = measured(summary, target)
    judged = target.judge({k: math.nan if v is None else v for k, v in values.items()})
    missed = [m for m in target.measures if judged[m.name] == "not met"]
    unmeasured = [m for m in target.measures if judged[m.name] == "not measured"]
    if missed:
        level, said = "fails", "not met (" + "; ".join(f"{m.name} {format_value(m, values[m.name])}" for m in missed) + ")"
    elif unmeasured:
        level = "unknown"
        said = "cannot be checked: " + ", ".join(m.name for m in unmeasured) + " not measured by this audit" + _why_not(unmeasured, summary)
    elif not_judged(summary):
        level, said = "unknown", not_judged(summary)
    else:
        level, said = "meets", "met"
    return level, f"Target ({target.describe()}): {said}."


def not_judged(summary: dict[str, Any], approximate_counts: bool = False) -> str:
    """Why a target this audit meets does not judge the whole model ("" when it does): the audit
    read a part of the model only, its estimate is not the maximum-entropy solution (a solve
    stopped by its time limit), its estimate is an approximation of it (``status``
    ``"approximate"``: a forest's pooled estimate, which may be less confident than the joint
    solution; counted only when ``approximate_counts``, a policy's ``evidence.approximate_counts``),
    or its proof left people undecided (the exact audit's time budget ran out: a proof of nobody
    certain among the others only), any of which may understate what the model discloses. The
    verdict then reads "unknown" and the release record does not release."""
    if summary.get("status") == "approximate" and not approximate_counts:
        proof = (  # asked for, yet it could not run (the table the joint estimate could not build): asking again would not help
            "the proof could not run either (its table is as large): declare more columns known"
            if summary.get("exact_not_run")
            # the pooled estimate answers because the joint table is too large, which the proof would route too
            else "a proof (--exact) would route the same joint table, too large here: declare more columns known"
            if summary.get("method") == "pooled" else "no proof was run: prove it (--exact)"
        )
        return (
            "met by an approximate estimate (each tree's exact posterior, pooled), which may be less confident than the model's "
            f"joint solution, and {proof} or use a policy that counts approximate evidence"
        )
    part = _part_only(summary)
    if part:
        return f"met on the part audited only ({part}); the rest of the model may disclose more, so the whole is not judged"
    if summary.get("not_the_optimum"):
        return (
            "met by an estimate that is not the maximum-entropy solution (its solve stopped short), which may find more "
            "people certain or confident, so the model is not judged: audit it again with a larger time limit"
        )
    undecided = (summary.get("exact") or {}).get("undecided_records")
    if undecided:
        return (
            f"met on the people the proof settled only ({undecided:,} undecided when its time budget ran out, any of whom "
            "may be certain), so the model is not judged: prove again with a larger time limit (--exact-time-limit)"
        )
    return ""


def _part_only(summary: dict[str, Any]) -> str:
    """What of the model the audit left out, in words ("" when it read all of it): boosting rounds
    or trees it could not read, or a subset of trees the user asked for (the summary's
    :class:`~ppdm.attacks.core.scope.Scope`). Disclosure measured on a part is a lower bound, so a
    target met there is not met by the whole. A boosted model's rounds that gave rows are read,
    whether or not their trees publish row counts."""
    scope = summary_scope(summary)
    return scope.part() if scope is not None else ""


def is_proof(summary: dict[str, Any]) -> bool:
    """Whether ``summary`` is the exact audit's: it proves who is certain; its posterior, the
    midpoint of each value's proved counts (:func:`~ppdm.attacks.models.exact.exact_attack`), is
    no attacker's belief, so it measures no confidence."""
    return summary.get("attack") == "exact"


def _why_not(measures: list[RiskMeasure], summary: dict[str, Any]) -> str:
    if is_proof(summary) and any(isinstance(m, Confident) for m in measures):
        return " (the exact audit proves who is certain; how confident an attacker is, the estimate measures: run it beside the proof)"
    if "baseline" not in summary and any(isinstance(m, Confident) for m in measures):
        return " (the true values were not given)"
    if any(isinstance(m, LiftOverReference) for m in measures) and not summary.get("reference"):
        return " (give a reference sample: --reference)"
    return ""


def format_value(m: RiskMeasure, value: float | None) -> str:
    """A measure's value as the target writes it (shares as percentages)."""
    if value is None or math.isnan(value):
        return "n/a"
    if isinstance(m, (Confident, MiaTpr)):
        return pct(value)
    if isinstance(m, LiftOverReference):
        return f"{100 * value:+.1f} points"
    return people(value)


def verdict(summary: dict[str, Any], target: Target | None = None) -> dict[str, Any]:
    """``level`` ("fails", "meets" or "unknown"), a ``headline`` and the ``lines`` under it."""
    target = target if target is not None else default_target()
    people = summary.get("targets", summary.get("records", 0))
    proved = summary.get("certain_right", summary.get("exposed_records", 0))
    level, judged = target_line(summary, target)
    if "baseline" not in summary:
        return {
            "level": level,
            "headline": f"The attacker is certain about {summary.get('certain_records', 0):,} of {words.people(people)}; "
            "the true values were not given, so accuracy and confidence were not measured.",
            "lines": [judged],
            "risk_share": None,
        }
    at = threshold_of(target)
    base, share = summary["baseline"], risk_share(summary, target)
    lo, hi = summary["attacker_accuracy_ci95"]
    key = key_of(at)
    held, alone = summary["confidence_in_true_value"].get(key, 0), summary["prior_alone"].get(key, 0)
    lines = [
        f"{words.people(held)} ({pct(share or 0)}) are held at confidence ≥ {at:g} in their true value; "
        f"the prior alone holds {alone:,} there"
        + ("." if summary.get("reference") else f", so the model puts {summary['beyond_prior'].get(key, 0):,} there{_in_brackets(just_under(summary, at))}."),
        *_reference_lines(summary.get("reference"), key, held, at),
        _certain_line(proved, summary.get("certain_wrong", 0)),
        f"On average the attacker gives a person's true value {pct(summary['mean_confidence_in_true_value'])}; "
        f"the prior alone gives {pct(base['mean_confidence_in_true_value'])}.",
        judged,
    ]
    return {
        "level": level,
        "headline": f"The attacker is right for {pct(summary['attacker_accuracy'])} of people "
        f"(95 % CI {pct(lo, 1)}–{pct(hi, 1)}); the prior alone, always guessing {base['majority_guess']!r}, "
        f"is right for {pct(base['accuracy'])}.",
        "lines": lines,
        "risk_share": share,
    }


def _reference_lines(reference: dict[str, Any] | None, key: str, held: int, at: float) -> list[str]:
    """What a model-free attacker with a sample of the population gets alone (when measured): the
    part of the risk that is statistics, not the model."""
    if not reference:
        return []
    free = int(reference.get("confidence_in_true_value", {}).get(key, 0))
    return [
        f"A model-free attacker fitted on the reference sample, without the model, is right for {pct(reference['accuracy'])} "
        f"and holds {words.people(free)} at confidence ≥ {at:g}: that much is what the population's statistics "
        f"say, not the model. Publishing the model adds {words.people(max(held - free, 0))} there and "
        f"{100 * reference['model_adds']:+.1f} points of accuracy."
    ]


def _certain_line(proved: int, wrong: int) -> str:
    text = f"{proved:,} {'person is' if proved == 1 else 'people are'} proved: the attacker is certain of their value, and right"
    if wrong:
        text += f" ({wrong:,} certain guesses are wrong, which exposes no one)"
    return text + "."
