"""The maximum-entropy attack on published association rules (paper 004): the attacker's least
biased estimate of P(SA | QI) given the rules, the thresholds and the QI part of every record, as
an :class:`AttackResult`; and the paper's Figure 7(a) comparison of estimates with and without
NAR constraints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel, checked_threat
from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, PpdmError
from ppdm.maxent.constraints.rule_constraints import RuleConstraintStats, RuleKnowledge, rules_problem
from ppdm.maxent.rows.problem import MaxEntProblem
from ppdm.maxent.solvers.solve import solve_linear
from ppdm.metrics.divergence import individual_divergence, overall_divergence, top_k_individuals
from ppdm.rules.mining import sensitive_codes
from ppdm.rules.ruleset import RuleSet


def rules_audit_problem(
    rules: RuleSet, data: pd.DataFrame, knowledge: RuleKnowledge, quasi_identifiers: Sequence[str] | None = None
) -> tuple[QIGroups, np.ndarray | None, MaxEntProblem, RuleConstraintStats]:
    """The attacker's groups, each record's true sensitive code (``None`` without the column) and
    the constraint rows of ``rules`` over them (paper 004 §V), with the SA distribution when
    ``knowledge.sa`` says it is published."""
    qis = list(quasi_identifiers or rules.quasi_identifiers)
    missing = [q for q in qis if q not in data.columns]
    if missing:
        raise DataError(f"quasi-identifier column(s) missing from the data: {', '.join(map(repr, missing))}")
    groups = QIGroups.from_frame(data, qis)
    true_codes = sensitive_codes(data[rules.sensitive], rules.values)[0] if rules.sensitive in data.columns else None
    sa = None
    if knowledge.sa:
        if true_codes is None:
            raise DataError(f"SA constraints need the sensitive column {rules.sensitive!r} in the data (its distribution is published)")
        sa = np.bincount(true_codes, minlength=len(rules.values)) / len(true_codes)
    problem, stats = rules_problem(rules, groups, knowledge, sa)
    return groups, true_codes, problem, stats


def rules_threat(rules: RuleSet, data: pd.DataFrame, threat: ThreatModel, knowledge: RuleKnowledge) -> tuple[ThreatModel, RuleKnowledge]:
    """The attacker declared by ``threat``, resolved once against the records ``rules`` were mined
    from, and the rule knowledge it implies: the sensitive column is the rules' (the default), the
    known columns default to the rules' quasi-identifiers, and a declared ``sa_published`` sets
    whether the sensitive attribute's distribution counts as published. Fully known individuals,
    a known class and ``publish`` levels are a model's, not a rule set's (its ``publish`` is its own)."""
    if threat.sensitive not in (None, rules.sensitive):
        raise PpdmError(f"the rules are about {rules.sensitive!r}: the sensitive column must be it, not {threat.sensitive!r}")
    if threat.known_individuals or threat.class_known or threat.publish is not None:
        raise PpdmError("a rule set's audit takes the known columns, the sensitive one and sa_published from the threat model, nothing else")
    if threat.is_resolved(rules.sensitive):
        return threat.resolve(data, rules.sensitive), knowledge
    if threat.known is None and threat.preset is None and not threat.quasi_identifiers:  # the rules' own: every one read
        missing = [q for q in rules.quasi_identifiers if q not in data.columns]
        if missing:
            raise DataError(f"quasi-identifier column(s) missing from the data: {', '.join(map(repr, missing))}")
    declared = threat if threat.quasi_identifiers else replace(threat, quasi_identifiers=rules.quasi_identifiers)
    if threat.sa_published is not None:
        knowledge = replace(knowledge, sa=threat.sa_published)
    return declared.resolve(data, rules.sensitive), knowledge


def rules_attack(
    rules: RuleSet, data: pd.DataFrame, knowledge: RuleKnowledge = RuleKnowledge(), tol: float = 1e-9, *, threat: ThreatModel | None = None
) -> AttackResult:
    """Estimate every QI group's P(SA | q) by maximum entropy from published rules (paper 004 §IV–V).

    ``data`` is the attacker's table: the known part of every record the rules were mined from.
    ``threat``: the attacker (:class:`~ppdm.attacks.core.threat.ThreatModel`, resolved against
    ``data``; :func:`rules_threat`); default: they know the rule set's quasi-identifiers.
    ``ppdm.audit(rules, data, threat, options=AuditOptions(rules=knowledge))`` runs it.
    """
    resolved, knowledge = rules_threat(rules, data, checked_threat("rules_attack", threat) or ThreatModel(), knowledge)
    return rules_estimate(rules, data, knowledge, resolved, tol)


def rules_estimate(rules: RuleSet, data: pd.DataFrame, knowledge: RuleKnowledge, threat: ThreatModel, tol: float = 1e-9) -> AttackResult:
    """The audit's step for a rule set: :func:`rules_attack` under a threat :func:`rules_threat`
    resolved (its known columns the attacker's groups). If ``data`` holds the sensitive column,
    the result reports the paper's overall divergence (§VI, natural log) and the attacker's
    confidence in each record's true value. With ``knowledge.sa`` the sensitive attribute's
    distribution counts as published."""
    quasi_identifiers = list(threat.known or ())
    groups, true_codes, problem, stats = rules_audit_problem(rules, data, knowledge, quasi_identifiers)
    k = len(rules.values)
    solution = solve_linear(problem, tol=tol)
    details: dict[str, object] = {
        "rules": len(rules),
        "publish": rules.publish,
        "min_support": rules.min_support,
        "min_confidence": rules.min_confidence,
        "strict": knowledge.strict,
        "generation_seconds": round(stats.seconds, 4),
        "solver_seconds": round(solution.seconds, 4),
        "max_violation": solution.max_violation,
        "iterations": solution.iterations,
        "newton_steps": solution.newton_steps,
        "variables": problem.n_variables,
        "constraint_rows": {blk.name: blk.n_rows for blk in problem.blocks},
        "ar_variables": stats.ar_variables,
        "nar_patterns": stats.nar_patterns,
        "nar_generated": stats.nar_generated,
        "nar_pruned": stats.nar_pruned,
        "nar_variables": stats.nar_variables,
        "status": solution.status,
        "entropy": solution.entropy,
    }
    if true_codes is not None:
        true = groups.value_counts(true_codes, k) / groups.counts[:, None]
        details["overall_divergence"] = overall_divergence(true, solution.p, groups.weights)
        details["min_individual_divergence"] = float(individual_divergence(true, solution.p).min())
    n = groups.n_records
    result = AttackResult(
        attack="maxent-rules", sensitive=rules.sensitive, values=tuple(rules.values), groups=groups,
        posterior=solution.p, provenance=_provenance(problem, k), targets=np.ones(n, dtype=bool),
        exposed=np.zeros(n, dtype=bool), true_codes=true_codes, details=details,
    )
    result.exposed = result.certain_groups[groups.group_of_record]
    return result


def _provenance(problem: MaxEntProblem, k: int) -> list[str]:
    """Per group: how many AR and NAR rows involve it."""
    per_block = {}
    for blk in problem.blocks:
        if blk.name in ("AR", "NAR"):
            touched = np.bincount(blk.A.tocoo().col // k, minlength=problem.n_groups)
            per_block[blk.name] = touched
    ar = per_block.get("AR", np.zeros(problem.n_groups, dtype=int))
    nar = per_block.get("NAR", np.zeros(problem.n_groups, dtype=int))
    labels = np.char.add(np.char.add("AR rows ", ar.astype(str)), np.char.add(", NAR rows ", nar.astype(str)))
    return labels.tolist()


def _truth(result: AttackResult) -> np.ndarray:
    if result.true_codes is None:
        raise DataError(f"the data has no column {result.sensitive!r}: divergences need the true sensitive values")
    return result.groups.value_counts(result.true_codes, len(result.values)) / result.groups.counts[:, None]


def nar_impact(with_nar: AttackResult, without_nar: AttackResult, k: int = 10) -> pd.DataFrame:
    """Paper 004 Figure 7(a): the ``k`` QI groups whose individual divergence drops most once NAR
    constraints are used (KL1 with, KL2 without, difference KL2 − KL1), with the original and both
    estimated distributions."""
    if with_nar.groups.n_groups != without_nar.groups.n_groups:
        raise DataError("the two results must come from the same attacker's table")
    true = _truth(with_nar)
    kl1 = individual_divergence(true, with_nar.posterior)
    kl2 = individual_divergence(true, without_nar.posterior)
    diff = kl2 - kl1
    order = np.lexsort((np.arange(len(diff)), -diff))[:k]
    return _table(with_nar, order, {"difference": diff[order], "KL1 (with NAR)": kl1[order], "KL2 (without NAR)": kl2[order]},
                  {"original": true, "with NAR": with_nar.posterior, "without NAR": without_nar.posterior})


def most_exposed(result: AttackResult, k: int = 10) -> pd.DataFrame:
    """The ``k`` QI groups with the smallest individual divergence (paper 004 §VI: the worst case)."""
    true = _truth(result)
    order = top_k_individuals(true, result.posterior, k)
    return _table(result, order, {"KL": individual_divergence(true, result.posterior)[order]},
                  {"original": true, "estimate": result.posterior})


def _table(result: AttackResult, order: np.ndarray, scores: dict[str, np.ndarray], dists: dict[str, np.ndarray]) -> pd.DataFrame:
    table = result.groups.table.iloc[order].reset_index(drop=True).astype(object)
    table.insert(0, "records", result.groups.counts[order])
    for name, values in scores.items():
        table[name] = values
    for name, p in dists.items():
        for j, v in enumerate(result.values):
            table[f"{name} P({v})"] = p[order, j]
    return table
