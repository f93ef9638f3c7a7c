"""The printed summary of an audit: the lines ``ppdm audit`` prints and ``print(audit)`` shows.

Plain text, one list of lines per part, so the CLI and the Python API say the same thing: the
threat model in one line, what was solved, the attacker against the prior's baseline (accuracy,
certain guesses right and wrong, people by confidence in their true value), the riskiest groups,
and the exact audit's proved counts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ppdm.attacks.core.scope import summary_scope
from ppdm.report import words
from ppdm.report.words import counted

if TYPE_CHECKING:
    from ppdm.attacks.core.result import AttackResult

#: The summary keys that compare an attack with the prior (printed by :func:`baseline_lines`).
BASELINE_KEYS = (
    "attacker_accuracy",
    "attacker_accuracy_ci95",
    "baseline",
    "lift",
    "mean_confidence_in_true_value",
    "certain_right",
    "certain_wrong",
    "confidence_in_true_value",
    "prior_alone",
    "beyond_prior",
)


def baseline_lines(summary: Mapping[str, Any]) -> list[str]:
    """The attack's accuracy and exposure next to what the prior alone gives."""
    certain = summary["certain_records"]
    if "baseline" not in summary:
        return [f"  people the attacker is certain about: {certain:,} (true values unknown: accuracy not measured)"]
    base, lift = summary["baseline"], summary["lift"]
    lo, hi = summary["attacker_accuracy_ci95"]
    ratio = f", x{lift['ratio']:.2f}" if lift["ratio"] is not None else ""
    levels = ", ".join(
        f"{k} {v:,} (prior alone {summary['prior_alone'][k]:,})" for k, v in summary["confidence_in_true_value"].items()
    )
    beyond = ", ".join(f"{k} {v:,}" for k, v in summary["beyond_prior"].items())
    return [
        f"  attacker accuracy {summary['attacker_accuracy']:.4f} (95% CI {lo:.4f}-{hi:.4f}) against {base['accuracy']:.4f} "
        f"for the prior alone (always guessing {shown_value(summary, base['majority_guess'])!r}): lift {lift['difference']:+.4f}{ratio}",
        f"  certain guesses: {words.people(certain)} ({summary['certain_right']:,} right, {summary['certain_wrong']:,} wrong; "
        "a wrong certain guess is not an exposure)",
        f"  people by the attacker's confidence in their true value: {levels}",
        f"  of them, held there only thanks to the model (the prior alone holds them lower): {beyond}",
        *([f"  note: {summary['data_alone']}"] if summary.get("data_alone") else []),
        *[f"  note: {clause}" for clause in _just_under_levels(summary)],
    ]


def _just_under_levels(summary: Mapping[str, Any]) -> list[str]:
    """The verdict's clause for each confidence level the prior alone sits just under
    (:func:`ppdm.report.verdict.just_under`), at most one."""
    from ppdm.report.verdict import just_under

    for key in summary.get("beyond_prior", {}):
        clause = just_under(dict(summary), float(key.removeprefix(">=")))
        if clause:
            return [clause]
    return []


def shown_value(details: Mapping[str, Any], value: object) -> str:
    """A sensitive value as the data holds it (``details["value_names"]``,
    :mod:`ppdm.attacks.core.value_names`: ``1`` for ``Education <= 1.5``), else as the attack names it."""
    return str((details.get("value_names") or {}).get(str(value), value))


def disclosure_lines(details: Mapping[str, Any], summary: Mapping[str, Any]) -> list[str]:
    """What every maximum-entropy audit prints after its solve: divergence, then the attack against the prior."""
    lines = []
    if "overall_divergence" in details:
        lines.append(
            f"  overall divergence D_overall = {details['overall_divergence']:.5f} (natural log; 0 = everything disclosed)"
        )
    return lines + baseline_lines(summary)


def read_line(summary: Mapping[str, Any]) -> str:
    """What the audit read (trees, boosting rounds, rules; rows), from the summary's one
    :class:`~ppdm.attacks.core.scope.Scope`: the line the JSON's ``"scope"`` and the report's first card state too."""
    scope = summary_scope(summary)
    return scope.line() if scope is not None else ""


def riskiest_lines(result: AttackResult, top: int) -> list[str]:
    """The ``top`` groups the attacker is most confident about, one line each."""
    if not top:
        return []
    known = int((~result.targets).sum())
    lines = [f"riskiest QI groups (top {top}" + (f"; {counted(known, 'known individual')} the attacker already holds left out" if known else "") + "):"]
    qi = list(result.groups.quasi_identifiers)
    for i, row in enumerate(result.riskiest_groups(top).itertuples(index=False), start=1):
        values = ", ".join(f"{name}={value}" for name, value in zip(qi, row))
        guess = shown_value(result.details, row.guess)
        lines.append(
            f"  {i}. {values} → {guess} (confidence {shown_confidence(float(str(row.confidence)))}, "
            f"{counted(int(str(row.records)), 'record')}, {_short(str(row.provenance))})"
        )
    return lines


def shown_confidence(confidence: float) -> str:
    """A confidence to two decimals, never ``1.00`` unless certain (0.996 is ``0.99``, not certain)."""
    from ppdm.metrics.baseline import is_certain

    if is_certain(np.array([confidence]))[0]:
        return "1.00"
    return f"{math.floor(confidence * 100) / 100:.2f}"


def _short(provenance: str, limit: int = 120) -> str:
    """A group's provenance for one line: a forest's is cut after ``limit`` characters, the trees left counted."""
    if len(provenance) <= limit:
        return provenance
    parts = provenance.split("; ")
    kept: list[str] = []
    for part in parts:
        if len("; ".join([*kept, part])) > limit:
            break
        kept.append(part)
    if not kept:  # one tree's leaves, too many for the line: the first ones, the others counted
        return _short_leaves(parts[0], limit) + (f"; … ({counted(len(parts) - 1, 'more tree')})" if len(parts) > 1 else "")
    return "; ".join(kept) + f"; … ({counted(len(parts) - len(kept), 'more tree')})"


def _short_leaves(part: str, limit: int) -> str:
    """One tree's ``leaves 3, 7, 9, …`` cut to about ``limit`` characters, the leaves left counted."""
    head, _, ids = part.rpartition("leaves ")
    if not ids:
        return part[:limit] + " …"
    leaves = ids.split(", ")
    kept: list[str] = []
    for leaf in leaves:
        if kept and len(head) + len("leaves ") + len(", ".join([*kept, leaf])) > limit:
            break
        kept.append(leaf)
    left = len(leaves) - len(kept)
    return f"{head}leaves {', '.join(kept)}" + (f" … ({counted(left, 'more leaf', 'more leaves')})" if left else "")


def possible_lines(result: AttackResult, top: int = 5) -> list[str]:
    """Each person's possible values (:mod:`ppdm.attacks.models.possible`): what is proved, then the attack against the prior."""
    d, s = result.details, result.summary()
    left = result.posterior > 0
    mean_left = float(left.sum(axis=1)[result.groups.group_of_record].mean()) if result.groups.n_records else 0.0
    lines = [
        str(d.get("threat_model", "")),
        f"possible values of {result.sensitive!r} over {words.records(s['records'])} ({d['method']}, {d['passes']} passes"
        f"{'' if d['converged'] else ', stopped early'}): "
        f"{words.people(d['certain_proved'])} with one value left (certain, proved); on average {mean_left:.2f} of "
        f"{len(result.values)} values left",
    ]
    lines.append(read_line(s))
    for key in ("sample", "note"):
        if key in d:
            lines.append(f"  note: {d[key]}")
    return lines + baseline_lines(s) + baseline_extra_lines(d) + riskiest_lines(result, top)


def pooled_lines(result: AttackResult, top: int = 5) -> list[str]:
    """A forest's per-tree estimates pooled (:mod:`ppdm.attacks.models.pooled`)."""
    d, s = result.details, result.summary()
    lines = [
        str(d.get("threat_model", "")),
        f"maximum-entropy estimate of {result.sensitive!r} over {words.records(s['records'])}, approximate: {d['estimate']} "
        f"(pooled over the trees read); {words.people(d.get('certain_proved', 0))} with one value left (certain, proved)",
        read_line(s),
    ]
    for key in ("sample", "note"):
        if key in d:
            lines.append(f"  note: {d[key]}")
    return lines + disclosure_lines(d, s) + baseline_extra_lines(d) + riskiest_lines(result, top)


def estimate_lines(result: AttackResult, top: int = 5) -> list[str]:
    """The maximum-entropy estimate: threat model, problem and solve, disclosure, riskiest groups."""
    if result.attack == "possible values":
        return possible_lines(result, top)
    if result.details.get("method") == "pooled":
        return pooled_lines(result, top)
    d, s = result.details, result.summary()
    rows = ", ".join(f"{k} {v:,}" for k, v in d["constraint_rows"].items()) or "none"
    lines = [
        str(d.get("threat_model", "")),
        f"maximum-entropy audit of {result.sensitive!r} over {words.records(s['records'])} in {s['qi_groups']:,} groups "
        f"of known values; unknowns: {d.get('unknowns', '')}",
        f"  constraints: {rows}; solved in {d['solver_seconds']:.2f} s ({d['status']}), "
        f"largest violation {d['max_violation']:.1e}",
        read_line(s),
    ]
    if "sample" in d:
        lines.append(f"  note: {d['sample']} (its published counts are read as bounds)")
    if "note" in d:
        lines.append(f"  note: {d['note']}")
    intervals = interval_note(result)
    if intervals:
        lines.append(f"  note: {intervals}")
    return lines + disclosure_lines(d, s) + baseline_extra_lines(d) + riskiest_lines(result, top)


def interval_note(result: AttackResult) -> str:
    """When the model cuts a numeric sensitive column into intervals holding several of the
    table's values, what a guess is of (:mod:`ppdm.attacks.core.value_names`), or ''."""
    names = [shown_value(result.details, v) for v in result.values]
    if not any(" or " in n or " to " in n for n in names):
        return ""
    return (
        f"{result.sensitive!r} is read in the intervals the model's thresholds cut ({' | '.join(names)}): a guess, "
        "a certainty and the prior's accuracy are of an interval, not of one value"
    )


def exact_lines(proved: AttackResult, estimate: AttackResult | None = None) -> list[str]:
    """The exact audit in a few lines: proved certain, undecided, and the baseline."""
    d, s = proved.details["exact"], proved.summary()
    lines = [] if estimate is not None else [str(proved.details.get("threat_model", ""))]
    if estimate is None or estimate.summary()["scope"] != s["scope"]:
        lines.append(read_line(s))
    if estimate is None and "sample" in proved.details:
        lines.append(f"  note: {proved.details['sample']} (its published counts are read as bounds)")
    if estimate is None and "note" in proved.details:
        lines.append(f"  note: {proved.details['note']}")
    certain = int((proved.certain_groups[proved.groups.group_of_record] & proved.targets).sum())
    lines.append(
        f"exact audit ({d['method']}, {d['seconds']:.2f} s): proved certain: {words.people(certain)}, "
        f"undecided: {d['undecided_records']:,}"
    )
    line = "  baseline: the prior alone proves nobody certain"
    base = s.get("baseline")
    if base:
        line += f" (its majority guess {base['majority_guess']!r} is right for {base['accuracy']:.1%})"
    if estimate is not None:
        line += f"; the maximum-entropy estimate is certain about {words.people(estimate.summary()['certain_records'])}"
    lines.append(line)
    if d.get("at_least_one_groups"):
        lines.append(
            f"  groups where some value is held by at least one (not all) of their people, proved: {d['at_least_one_groups']:,}"
        )
    return lines


#: The most accurate attackers the portfolio line names (the others are in the audit's JSON).
PORTFOLIO_SHOWN = 4

#: A simpler attacker's name ends with the estimate it was kept to (``… within the
#: maximum-entropy estimate's possible values``): shortened to "within the estimate" on the
#: portfolio line (the same attacker unkept may stand beside it), and explained once.
WITHIN = re.compile(r" within the [^,;]*'s possible values$")


def baseline_extra_lines(details: Mapping[str, Any]) -> list[str]:
    """The model-free attacker fitted on a reference sample, and the control on non-members, when measured."""
    lines = []
    ref = details.get("reference")
    if ref:
        lo, hi = ref["ci95"]
        lines.append(
            f"  model-free attacker ({ref['model']} fitted on a reference sample): accuracy {ref['accuracy']:.4f} "
            f"(95% CI {lo:.4f}-{hi:.4f}) on the same people; the model adds {ref['model_adds']:+.4f} beyond the "
            "stronger of it and the prior"
        )
    portfolio = details.get("portfolio")
    if portfolio:
        measured = sorted(((acc, name) for name, acc in portfolio.items() if acc is not None), key=lambda x: -x[0])
        names = [words.attacker_words(name) for _, name in measured[:PORTFOLIO_SHOWN]]
        kept = [WITHIN.sub(" within the estimate", n) for n in names]
        shown = ", ".join(f"{n} {acc:.4f}" for n, (acc, _) in zip(kept, measured, strict=False))
        if len(measured) > PORTFOLIO_SHOWN:
            shown += f"; {len(measured) - PORTFOLIO_SHOWN:,} weaker {words.plural(len(measured) - PORTFOLIO_SHOWN, 'one')} in the JSON"
        if kept != names:
            shown += "; 'within the estimate': a simpler attacker kept to the values the estimate leaves possible"
        lines.append(f"  reported: the strongest attacker measured, {words.attacker_words(str(details.get('reported_attacker')))!r} (accuracy: {shown})")
    control = details.get("control")
    if control:
        m, c = control["members"], control["non_members"]
        slo, shi = control["membership_share_ci95"]
        lines.append(
            f"  control: the same guesses on {words.people(c['people'])} outside the training set are right for "
            f"{c['accuracy']:.1%} (members {m['accuracy']:.1%}); membership share of the risk "
            f"{control['membership_share']:+.3f} (95% CI {slo:+.3f} to {shi:+.3f})"
        )
    return lines


def audit_lines(estimate: AttackResult | None, proved: AttackResult | None, top: int = 5) -> list[str]:
    """Everything ``ppdm audit`` prints about one audit (estimate, then the exact audit, or why it did not run)."""
    lines = estimate_lines(estimate, top) if estimate is not None else []
    if proved is not None:
        lines += exact_lines(proved, estimate)
    elif estimate is not None and estimate.details.get("exact_not_run"):
        lines.append(str(estimate.details["exact_not_run"]))
    return lines
