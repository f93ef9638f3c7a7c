"""The audits' evidence as findings: the policy's ``attribute`` and ``membership`` rules.

An audit (:func:`ppdm.audit`) answers the policy's attribute target (people certain, people
confident at a level) and membership limits (people proved members, the attacker's TPR at an
FPR). Each attack's answer carries a strength (:mod:`ppdm.check.findings`): the exact audit's is
``proved``; the maximum-entropy estimate's ``estimated``; an estimate whose ``status`` is
``approximate`` (a forest's pooled estimate, :mod:`ppdm.attacks.models.pooled`) ``approximate``.

A measure beyond its limit in any attack fails, whatever the strength (an approximate estimate
that finds people certain found them: they are proved by the possible values). A measure within
its limit passes at the strongest strength that measured it, except that approximate evidence
alone is ``not checked`` unless the policy counts it (``evidence.approximate_counts``): a pooled
estimate with no proof never earns "met" by default.

The checker runs the black-box membership attacks itself (Yeom, LiRA, RMIA:
:mod:`ppdm.check.blackbox_membership`); another attack's answer joins as a
:class:`~ppdm.check.findings.Finding` for the ``membership`` rule, passed to
:func:`ppdm.check.run.check_model` as ``extra``: :func:`membership_finding` builds one from a
TPR at an FPR. :func:`judge` is the one reading of a target's measures the attribute evidence
of :mod:`ppdm.check.blackbox_attribute` shares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ppdm.attacks.core.target import Evidence, Target
from ppdm.check.findings import Finding
from ppdm.check.policy import Policy

__all__ = ["audit_findings", "judge", "membership_finding", "strength_of"]

_RANK = ("proved", "estimated", "approximate")


def strength_of(role: str, details: dict[str, Any] | None) -> str:
    """``proved`` (the exact audit), ``approximate`` (an estimate whose status says so) or ``estimated``."""
    if role == "exact":
        return "proved"
    return "approximate" if (details or {}).get("status") == "approximate" else "estimated"


def judge(rule: str, answers: Sequence[tuple[str, str, dict[str, float]]], target: Target, policy: Policy) -> Finding:
    """One rule from per-attack ``(role, strength, value of each measure)`` answers."""
    measures = {m.name: m for m in target.measures}
    failed = [(role, s, name, v) for role, s, vals in answers for name, v in vals.items() if not math.isnan(v) and not measures[name].meets(v)]
    shown = "; ".join(f"{role} ({s}): " + ", ".join(f"{n} {v:g}" for n, v in vals.items()) for role, s, vals in answers)
    limit = target.describe()
    if failed:  # cite the strongest evidence of a failure
        role, strength, name, value = min(failed, key=lambda f: _RANK.index(f[1]))
        return Finding(rule, "failed", value, measures[name].limit, strength, f"{shown}: beyond the limit ({limit})")
    measured = [(role, s) for role, s, vals in answers if all(not math.isnan(v) for v in vals.values())]
    if not measured:
        return Finding(rule, "not checked", None, None, "none", f"no audit measured every measure of {limit} ({shown or 'no audit run'})")
    strengths = [s for _, s in measured]
    best = next(s for s in _RANK if s in strengths)
    if best == "approximate" and not policy.approximate_counts:
        return Finding(
            rule, "not checked", None, None, "approximate",
            f"{shown}: within the limit ({limit}) by an approximate estimate only, with no proof run; policy {policy.name!r} does not "
            "count approximate evidence (prove it with the exact audit, --exact)",
        )
    return Finding(rule, "passed", None, None, best, f"{shown}: within the limit ({limit})")


def audit_findings(audit: Any, policy: Policy) -> list[Finding]:
    """The ``attribute`` and ``membership`` findings of an :class:`ppdm.Audit` under ``policy``."""
    out: list[Finding] = []
    attribute = policy.attribute_target()
    results = [(role, r) for role, r in (("estimate", getattr(audit, "estimate", None)), ("exact", getattr(audit, "proved", None))) if r is not None]
    if attribute is not None and results:
        answers: list[tuple[str, str, dict[str, float]]] = []
        for role, r in results:
            try:
                values = attribute.values(Evidence.from_results([r]))
            except Exception:  # a result without the truth measures nothing
                values = {m.name: math.nan for m in attribute.measures}
            answers.append((role, strength_of(role, getattr(r, "details", None)), values))
        out.append(judge("attribute", answers, attribute, policy))
    membership = policy.membership_target()
    result = getattr(audit, "membership", None)
    if membership is not None and result is not None:
        summary = result.summary()
        shares: dict[str, float] = {}
        for m in membership.measures:
            key = "proved_members" if m.name == "members_proved" else f"tpr@{100 * getattr(m, 'fpr', 0):g}%"
            got = summary.get(key)
            shares[m.name] = math.nan if got is None else float(got)
        strength = "proved" if set(shares) == {"members_proved"} else "estimated"
        out.append(judge("membership", [("membership", strength, shares)], membership, policy))
    return out


def membership_finding(attack: str, tpr: float, fpr: float, policy: Policy) -> Finding:
    """A black-box membership attack's TPR at ``fpr`` as the ``membership`` finding (``estimated``)."""
    limit = policy.tpr_at_fpr
    if limit is None:
        return Finding("membership", "passed", tpr, None, "estimated", f"{attack}: TPR {tpr:.4f} at {fpr:g} FPR; the policy sets no membership limit")
    if not math.isclose(limit[0], fpr):
        return Finding("membership", "not checked", tpr, limit[1], "estimated", f"{attack}: TPR measured at {fpr:g} FPR, the policy's limit is at {limit[0]:g}")
    state = "passed" if tpr <= limit[1] + 1e-12 else "failed"
    return Finding("membership", state, tpr, limit[1], "estimated", f"{attack}: TPR {tpr:.4f} at {fpr:g} FPR (limit {limit[1]:g})")
