"""The verdict on one attack, in plain words, each figure next to what the prior alone gives.

The numbers are :meth:`AttackResult.summary`'s (the attacker's accuracy with its Wilson interval,
the majority-guess baseline, people by confidence in their true value, certain guesses right and
wrong: :mod:`ppdm.metrics.baseline`). The target is the one ``ppdm defend`` searches for by
default: nobody proved (certain and right) and at most 1 % of people held at confidence ≥ 0.9 in
their true value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RiskTarget:
    """What a publisher accepts: at most ``certain`` people proved and at most ``share`` of the
    people held at ``threshold`` or more in their true value."""

    certain: int = 0
    threshold: float = 0.9
    share: float = 0.01

    def describe(self) -> str:
        who = "nobody proved" if self.certain == 0 else f"at most {self.certain:,} people proved"
        return f"{who}, at most {pct(self.share)} of people at confidence ≥ {self.threshold:g} in their true value"

    def key(self) -> str:
        return f">={self.threshold:g}"


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


def risk_share(summary: dict[str, Any], target: RiskTarget) -> float | None:
    """The share of targets held at ``target.threshold`` or more (``None`` without the truth)."""
    held = summary.get("confidence_in_true_value", {}).get(target.key())
    if held is None or not summary.get("targets"):
        return None
    return held / summary["targets"]


def verdict(summary: dict[str, Any], target: RiskTarget = RiskTarget()) -> dict[str, Any]:
    """``level`` ("fails", "meets" or "unknown"), a ``headline`` and the ``lines`` under it."""
    people = summary.get("targets", summary.get("records", 0))
    proved = summary.get("certain_right", summary.get("exposed_records", 0))
    if "baseline" not in summary:
        level = "fails" if summary.get("certain_records", 0) > target.certain else "unknown"
        return {
            "level": level,
            "headline": f"The attacker is certain about {summary.get('certain_records', 0):,} of {people:,} people; "
            "the true values were not given, so accuracy and confidence were not measured.",
            "lines": [f"Target ({target.describe()}): {'not met' if level == 'fails' else 'cannot be checked without the true values'}."],
            "risk_share": None,
        }
    base, share = summary["baseline"], risk_share(summary, target)
    lo, hi = summary["attacker_accuracy_ci95"]
    key = target.key()
    held, alone = summary["confidence_in_true_value"].get(key, 0), summary["prior_alone"].get(key, 0)
    lines = [
        f"{held:,} people ({pct(share or 0)}) are held at confidence ≥ {target.threshold:g} in their true value; "
        f"the prior alone holds {alone:,} there"
        + ("." if summary.get("reference") else f", so the model puts {summary['beyond_prior'].get(key, 0):,} there."),
        *_reference_lines(summary.get("reference"), key, held, target),
        _certain_line(proved, summary.get("certain_wrong", 0)),
        f"On average the attacker gives a person's true value {pct(summary['mean_confidence_in_true_value'])}; "
        f"the prior alone gives {pct(base['mean_confidence_in_true_value'])}.",
    ]
    meets = proved <= target.certain and share is not None and share <= target.share
    lines.append(f"Target ({target.describe()}): {'met' if meets else 'not met'}.")
    return {
        "level": "meets" if meets else "fails",
        "headline": f"The attacker is right for {pct(summary['attacker_accuracy'])} of people "
        f"(95 % CI {pct(lo, 1)}–{pct(hi, 1)}); the prior alone, always guessing {base['majority_guess']!r}, "
        f"is right for {pct(base['accuracy'])}.",
        "lines": lines,
        "risk_share": share,
    }


def _reference_lines(reference: dict[str, Any] | None, key: str, held: int, target: RiskTarget) -> list[str]:
    """What a model-free attacker with a sample of the population gets alone (when measured): the
    part of the risk that is statistics, not the model."""
    if not reference:
        return []
    free = int(reference.get("confidence_in_true_value", {}).get(key, 0))
    return [
        f"A model-free attacker fitted on the reference sample, without the model, is right for {pct(reference['accuracy'])} "
        f"and holds {free:,} people at confidence ≥ {target.threshold:g}: that much is what the population's statistics "
        f"say, not the model. Publishing the model adds {max(held - free, 0):,} people there and "
        f"{100 * reference['model_adds']:+.1f} points of accuracy."
    ]


def _certain_line(proved: int, wrong: int) -> str:
    text = f"{proved:,} {'person is' if proved == 1 else 'people are'} proved: the attacker is certain of their value, and right"
    if wrong:
        text += f" ({wrong:,} certain guesses are wrong, which exposes no one)"
    return text + "."
