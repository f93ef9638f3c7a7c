"""The baselines and the strongest attacker (habits 2 and 3): the estimates with less knowledge, the likelihood rules, the prior and the model-free attacker fitted on a reference sample, the strongest reported; the control on a holdout."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.baselines.likelihood import art_white_box_rule, likelihood_attacks, prior_rule
from ppdm.attacks.baselines.portfolio import strongest_attacker
from ppdm.attacks.baselines.reference import control_summary, fit_imputation, model_outputs
from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel, audited
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.errors import DataError, PpdmError, UninformativeKnowledgeWarning
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.pipeline.findings import Model
from ppdm.pipeline.read import as_table
from ppdm.tree.model import Tree


def baselines(
    result: AttackResult, table: pd.DataFrame, reference: Any, holdout: Any, model: Model, threat: ThreatModel,
    coarser: list[AttackResult] | None = None,
) -> tuple[AttackResult, AttackResult | None]:
    """The attacker the audit reports (:func:`~ppdm.attacks.baselines.portfolio.strongest_attacker`: the
    strongest of the model's estimate, the estimates with less knowledge (``coarser``), the
    likelihood rules, the prior's majority guess and, with ``reference``, the model-free attacker fitted on it), with the
    control on ``holdout`` when given; and the model-free attacker's result."""
    others, shown = [], []
    if result.true_codes is not None:
        prior = prior_rule(table, threat, result.values)  # the baseline itself, whatever is known
        others = [*(coarser or []), *likelihood_attacks(model, table, threat, result.values), *([prior] if prior is not None else [])]
        art = art_white_box_rule(model, table, threat, result.values)
        shown = [art] if art is not None else []
    imputed, rule, sample = None, None, None
    if reference is not None:
        sample = as_table(reference)
        outputs = None
        if threat.outputs:
            outputs = (model_outputs(model, table, threat.outputs, "the audited table"), model_outputs(model, sample, threat.outputs, "the reference sample"))
        alternatives: list[AttackResult] = []
        imputed, rule = fit_imputation(result, table, sample, outputs, also=alternatives)
        if outputs is not None:  # an attacker seeing the outputs may also ignore them
            alone, _ = fit_imputation(result, table, sample, None, also=alternatives)
            alone.attack = "imputation ignoring the model's outputs"
            alternatives[-1].attack += ", ignoring the model's outputs"
            alternatives.append(alone)
        others += [imputed, *alternatives]
    result = strongest_attacker(result, others, [imputed] if imputed is not None else [], shown)
    if imputed is not None:
        ours, theirs = result.summary(), imputed.summary()
        if "attacker_accuracy" in ours:
            result.details["reference"] = {
                "model": imputed.details["model"],
                "accuracy": theirs["attacker_accuracy"],
                "ci95": theirs["attacker_accuracy_ci95"],
                "model_adds": ours["attacker_accuracy"] - max(theirs["attacker_accuracy"], ours["baseline"]["accuracy"]),
                "outputs": threat.outputs,
                "confidence_in_true_value": theirs.get("confidence_in_true_value", {}),
            }
    if holdout is not None:
        people = as_table(holdout)
        unseen = None
        if rule is not None and "imputation" in str(result.details.get("reported_attacker", "")) and set(result.groups.quasi_identifiers) <= set(people.columns):
            if sample is not None:
                _not_the_reference(people, sample)
            unseen = holdout_rule(rule, people, model, threat)
        result.details["control"] = control_summary(result, people, unseen, table[result.sensitive] if result.sensitive in table.columns else None)
    return result, imputed


def _not_the_reference(holdout: pd.DataFrame, reference: pd.DataFrame) -> None:
    """Refuse a holdout that is the reference sample: the reported attacker was fitted on those
    people, so its accuracy on them is its training accuracy, not a control (a new user's Bank
    Loan control came out right for 99.2 % of them and a membership share of −22)."""
    if holdout.shape == reference.shape and holdout.reset_index(drop=True).equals(reference.reset_index(drop=True)):
        raise DataError(
            f"the holdout is the reference sample ({len(holdout):,} rows): the model-free attacker reported was fitted on these people, "
            "so its accuracy on them is no control; give as holdout other people outside the training set"
        )


def holdout_rule(rule: Callable[[pd.DataFrame], np.ndarray], people: pd.DataFrame, model: Model, threat: ThreatModel) -> np.ndarray | None:
    """The model-free attacker's posterior for the holdout's people, when it can be computed."""
    if threat.outputs:
        if not set(model.split_attributes) <= set(people.columns):
            return None
        people = pd.concat([people.reset_index(drop=True), model_outputs(model, people, threat.outputs, "the holdout").reset_index(drop=True)], axis=1)
    return rule(people)


#: A tree's audit also measures the estimate under every subset of the known columns when there
#: are at most this many.
LATTICE_MAX = 6


def coarser(model: Model, table: pd.DataFrame, threat: ThreatModel, labels: bool) -> list[AttackResult]:
    """A single tree's maximum-entropy estimates with less knowledge (habit 2: an attacker who
    knows more can ignore a column, so knowing more must never be reported as weaker): under
    every proper subset of the known columns when there are at most :data:`LATTICE_MAX` of them
    (then knowing more is never reported as weaker); none beyond (the insider's simple attackers
    are the likelihood rules), for a forest (each is a whole audit) or without the true values.
    When the attacker sees the model's outputs, also the estimate that ignores them (and, from a
    score, the one seeing the label alone), for trees and forests alike: seeing more never
    reports weaker."""

    known = [c for c in (threat.known or ()) if c != threat.sensitive]
    if threat.sensitive not in table.columns:
        return []
    lattice = []
    if isinstance(model, Tree) and known and len(known) <= LATTICE_MAX:
        lattice = [
            replace(threat, known=subset, preset=None, class_known=model.class_attribute in subset) for size in range(len(known)) for subset in combinations(known, size)
        ]  # each still resolved: class_known says whether its known columns hold the class
    # an attacker who sees the model's answer can ignore it, and a score gives the label
    ignoring = [replace(threat, known=tuple(known), preset=None, class_known=model.class_attribute in known, outputs=o) for o in weaker_outputs(threat.outputs)]
    out = []
    for fewer in [*lattice, *ignoring]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UninformativeKnowledgeWarning)
            try:
                # compared within the main estimate's possible values: its proved certainties are kept
                r = maxent_attack(model, table, threat=fewer, knowledge=Knowledge(rate=True, label=labels), prove=False)
            except PpdmError:
                continue
        r.attack = (f"maxent knowing only {', '.join(fewer.known)}" if fewer.known else "maxent knowing no column") if fewer.outputs == threat.outputs else {
            "label": "maxent seeing only the predicted label", None: "maxent ignoring the model's outputs"}[fewer.outputs]
        out.append(r)
    return out


def weaker_outputs(outputs: str | None) -> list[str | None]:
    """What an attacker seeing ``outputs`` also knows with less: the label from a score, nothing."""
    if outputs == "score":
        return ["label", None]
    return [None] if outputs == "label" else []


def audited_model(model: Model, threat: ThreatModel) -> Model:
    return audited(model, threat.publish)



def rules_attacker(estimate: AttackResult, model: Model, table: pd.DataFrame, threat: ThreatModel) -> AttackResult:
    """The strongest of ``estimate``, the likelihood rules and the prior's majority guess, each
    restricted to the values the estimate leaves possible
    (:func:`~ppdm.attacks.baselines.portfolio.strongest_attacker`), without the estimates with less
    knowledge or a reference sample: what a defense search adds to each candidate's evidence
    (:func:`ppdm.defend.audits.reported_attacker`), so that no candidate is rated below the
    attacker who ignores it (an approximate estimate of a boosted model may be); ``estimate``
    itself when these add nothing or do not apply."""
    if estimate.true_codes is None:
        return estimate
    prior = prior_rule(table, threat, estimate.values)
    others = [*likelihood_attacks(model, table, threat, estimate.values), *([prior] if prior is not None else [])]
    return strongest_attacker(estimate, others) if others else estimate
