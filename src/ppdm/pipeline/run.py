"""The audit, step by step (issue 40), the same road for every model and question: read the
inputs, resolve the attacker once, ask the question (an attribute, a regressor's numeric
secret, membership), estimate, prove, measure the baselines and report the strongest attacker;
one :class:`~ppdm.pipeline.findings.Findings` comes back, which :func:`ppdm.audit` judges
against its target."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ppdm.attacks.baselines.portfolio import within_proof
from ppdm.attacks.core.target import Target
from ppdm.attacks.core.threat import ThreatModel
from ppdm.data.counting import is_dask
from ppdm.errors import DataError, PpdmError, advising
from ppdm.pipeline.baselines import audited_model, baselines, coarser
from ppdm.pipeline.checks import (
    check_domains,
    check_finite,
    check_options,
    check_sensitive_varies,
    check_split_columns,
    check_steps,
    check_training_size,
    determining_columns,
)
from ppdm.pipeline.domains import held_domains
from ppdm.pipeline.estimate import estimate
from ppdm.pipeline.findings import Findings, Model, annotate
from ppdm.pipeline.membership import membership_audit, membership_truth
from ppdm.pipeline.missing import counted_table, with_missing
from ppdm.pipeline.options import AuditOptions
from ppdm.pipeline.other_questions import leaf_audit, rules_audit
from ppdm.pipeline.phases import Hearing
from ppdm.pipeline.prove import prove
from ppdm.pipeline.read import as_model, as_rules, as_table, as_threat, hashable, subset
from ppdm.pipeline.regression import regression_audit

__all__ = ["attribute_audit", "run"]


def run(
    model: Any, data: Any, threat: Any, how: AuditOptions, hear: Hearing, *, membership: Any = None, member_column: str | None = "member",
    member_ids: Any = None, id_column: str | None = None, non_members: Any = None, class_known: bool | None = None, class_attribute: str | None = None, sample: bool = False,
    trees: Any = None, reference: Any = None, holdout: Any = None, client: Any = None, tolerance: float = 0.0, domain: Sequence[float] | None = None,
    target: Target | str | None = None,
) -> Findings:
    """:func:`ppdm.audit`'s steps (its parameters, the options resolved; ``hear``: who hears the
    long steps): the question the inputs ask, answered."""
    check_options(how, class_known, sample, target)
    sources = {k: v for k, v in (("model", model), ("data", data), ("population", membership), ("member_ids", member_ids),
                                 ("reference", reference), ("holdout", holdout)) if hashable(v)}  # fmt: skip
    if membership is not None:
        if how.method != "auto":
            raise PpdmError(f"method={how.method!r} chooses an attribute's estimate: a membership audit has its own (leave method='auto')")
        truth = membership_truth(membership, member_column, member_ids, id_column, non_members)
        members = membership_audit(model, data, truth, class_known, class_attribute, how.exact_time_limit, how.time_limit, sample, reference, how.blackbox)
        members.sources = sources
        return members
    if member_ids is not None or id_column is not None or non_members is not None:
        raise PpdmError("member_ids=, id_column= and non_members= describe a membership audit's candidates: add membership=, the population of candidates")
    if data is None:
        raise DataError("data must be the training table (a pandas DataFrame or a CSV path), got NoneType; or give membership=, a population of candidates")
    check_steps(how)
    table = as_table(data)
    rules = as_rules(model)
    if rules is not None:
        found = rules_audit(rules, table, as_threat(threat), how)
        found.sources = sources
        return found
    published = as_model(model, table, class_attribute)
    chosen = None
    if trees is not None:
        published, chosen = subset(published, trees)
    declared = as_threat(threat)
    if how.leaf is not None:
        done = leaf_audit(published, table, declared, how)
    elif getattr(published, "is_regressor", False):
        done = regression_audit(published, table, declared, how, sample, reference, holdout, tolerance, domain, chosen, hear.exact)
    elif tolerance or domain is not None:
        raise advising(
            PpdmError("tolerance= and domain= belong to the audit of a regressor's numeric target; this model predicts classes"),
            "tolerance= and domain=", None, "--tolerance and --domain",
        )
    else:
        done = attribute_audit(published, table, declared, how, hear, sample=sample, chosen=chosen, reference=reference, holdout=holdout, client=client)
    done.sources = sources
    return done


def attribute_audit(
    published: Model, table: Any, declared: ThreatModel, how: AuditOptions, hear: Hearing, *, sample: bool = False, chosen: str | None = None,
    reference: Any = None, holdout: Any = None, client: Any = None,
) -> Findings:
    """The audit of one attribute: missing values dealt with and the threat resolved (once), the
    inputs checked, the estimate, the proof, the baselines and the strongest attacker, and what
    each result read (``chosen``: the forest's trees audited, in words)."""
    check_split_columns(table, published)
    if is_dask(table):
        if how.exact:
            raise PpdmError("the exact audit works on a pandas table: audit the counted groups in memory")
        counted, weights, dropped, resolved = counted_table(table, published, declared, how.missing, client)
    else:
        weights = None
        counted, dropped, resolved = with_missing(table, published, declared, how.missing)
        published, counted = held_domains(published, table, counted, resolved, sample)
    sampled = check_training_size(published, counted, weights, dropped, sample)
    check_sensitive_varies(counted, resolved)
    check_finite(counted, published)
    check_domains(counted, published)
    result = estimate(published, counted, resolved, weights, how, hear.trees, hear.solver) if how.estimate else None
    proved, not_run = prove(published, counted, resolved, how, hear.exact, result) if how.exact else (None, None)
    baseline = None
    if result is not None and weights is None and how.baselines:
        fewer = coarser(published, counted, resolved, how.labels) if not how.split_choices else []
        result, baseline = baselines(result, counted, reference, holdout, audited_model(published, resolved), resolved, fewer)
        if proved is not None:  # the reported attacker holds every proved certainty too
            result = within_proof(result, proved)
    elif reference is not None or holdout is not None:
        raise PpdmError("reference= and holdout= measure the estimate on an in-memory table: give estimate=True, baselines=True and a pandas table")
    annotate([r for r in (result, proved) if r is not None], counted, resolved, sampled, chosen, dropped, determining_columns(counted, resolved))
    if result is not None and not_run is not None:
        result.details["exact_not_run"] = not_run
    return Findings(published, resolved, counted, result, proved, weights, dropped, baseline)
