"""The estimate step: the attacker's belief about each person's sensitive value under the resolved
threat, by the method ``AuditOptions.method`` names (like ``scipy.optimize.minimize``'s
``method=``): a registry of roads (:data:`ROADS`), one per method of the capabilities table
(:mod:`ppdm.pipeline.capabilities`), whose notes say what the road taken does not read.

``auto`` (the default) is each model's own maximum-entropy estimate (paper 000 §3–4, and its form
over every tree of a forest, :func:`ppdm.attacks.models.maxent.maxent_attack`); when a forest's
joint table would need more routes than it builds (:class:`~ppdm.errors.RoutingLimitError`), its
trees' exact estimates pooled within each person's possible values
(:func:`ppdm.attacks.models.pooled.pooled_forest_attack`, status ``approximate``), or, when no
tree publishes its own counts, each person's possible values alone; either way saying why
(``details["note"]``). The other methods take one road each, whatever it costs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel, audited
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.attacks.models.pooled import pooled_forest_attack, pooling_trees
from ppdm.attacks.models.possible import possible_attack, possible_values
from ppdm.errors import RoutingLimitError, UninformativeKnowledgeWarning
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.pipeline.capabilities import METHODS, kind_of, not_read, refuse, with_notes
from ppdm.pipeline.findings import Model
from ppdm.pipeline.options import AuditOptions
from ppdm.tree.forest import as_forest

__all__ = ["ROADS", "Estimating", "estimate"]


@dataclass(frozen=True)
class Estimating:
    """What every road reads besides the model, the table and the resolved threat: the options,
    the knowledge they give (:class:`~ppdm.maxent.constraints.tree_constraints.Knowledge`), the
    records each row stands for (a counted table) and who hears the long steps."""

    how: AuditOptions
    knowledge: Knowledge
    weights: np.ndarray | None = None
    progress: Callable[[int, int], None] | None = None
    solver_progress: Callable[[Any], None] | None = None


#: A road: the estimate and the method it took (``auto``'s notes are those of the road it took).
Road = Callable[[Model, pd.DataFrame, ThreatModel, Estimating], tuple[AttackResult, str]]


def estimate(
    model: Model, table: pd.DataFrame, threat: ThreatModel, weights: np.ndarray | None, how: AuditOptions,
    progress: Callable[[int, int], None] | None, solver_progress: Callable[[Any], None] | None = None,
) -> AttackResult:
    """The estimate of ``model`` on ``table`` under the resolved ``threat`` by ``how.method``,
    its note saying what the road taken does not read (:func:`~ppdm.pipeline.capabilities.not_read`)."""
    refuse(how.method, model, weights is not None)
    knowledge = Knowledge(rate=True, label=how.labels, internal=how.split_choices)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UninformativeKnowledgeWarning)  # the note is in the summary
        result, taken = ROADS[how.method](model, table, threat, Estimating(how, knowledge, weights, progress, solver_progress))
    note = with_notes(result.details.get("note"), not_read(taken, model, threat, weights is not None))
    if note is not None:
        result.details["note"] = note
    return result


# -- the roads -------------------------------------------------------------------------------------
def _maxent(model: Model, table: pd.DataFrame, threat: ThreatModel, e: Estimating, **road: Any) -> AttackResult:
    """The maximum-entropy estimate (:func:`~ppdm.attacks.models.maxent.maxent_attack`) with the options' settings."""
    forest = {"forest_options": e.how.forest} if e.how.forest is not None else {}
    return maxent_attack(
        model, table, threat=threat, knowledge=e.knowledge, time_limit=e.how.time_limit, weights=e.weights, tree_progress=e.progress,
        solver_progress=e.solver_progress, sound=e.how.sound, table_options=e.how.table, **{**forest, **road},
    )


def _auto(model: Model, table: pd.DataFrame, threat: ThreatModel, e: Estimating) -> tuple[AttackResult, str]:
    """Each model's own road; past a forest's joint table, pooled or the possible values (module docstring)."""
    try:
        result = _maxent(model, table, threat, e)
    except RoutingLimitError as why:
        published = audited(model, threat.publish)
        if not pooling_trees(published, len(table)):
            return _possible_estimate(model, table, threat, f"no maximum-entropy estimate: {why}. Shown instead: each"), "possible"
        result = _pooled_estimate(published, table, threat, e, "the joint maximum-entropy table is too large to build, so ")
        # the routes it would take (cell counts, long), kept apart from the note, without the advice the pooled estimate makes moot
        result.details["note_details"] = f"the joint table is too large to build: {why.cause}"
        return result, "pooled"
    if kind_of(model) == "forest":
        return result, "explicit"
    return result, "split-choice" if e.knowledge.internal else ("factored" if result.details.get("form") == "factored" else "explicit")


def _factored(model: Model, table: pd.DataFrame, threat: ThreatModel, e: Estimating) -> tuple[AttackResult, str]:
    """A tree's estimate over the leaves each group reaches (factored rows)."""
    return _maxent(model, table, threat, e, factored=True), "factored"


def _explicit(model: Model, table: pd.DataFrame, threat: ThreatModel, e: Estimating) -> tuple[AttackResult, str]:
    """A tree's estimate over explicit slots; a forest's over every joint route of its trees (refused past the cap)."""
    if kind_of(model) == "tree":
        return _maxent(model, table, threat, e, factored=False), "explicit"
    return _maxent(model, table, threat, e), "explicit"


def _split_choice(model: Model, table: pd.DataFrame, threat: ThreatModel, e: Estimating) -> tuple[AttackResult, str]:
    """A tree's estimate reading its split choices too (``e.knowledge.internal``, set by the options)."""
    return _maxent(model, table, threat, e), "split-choice"


def _pooled(model: Model, table: pd.DataFrame, threat: ThreatModel, e: Estimating) -> tuple[AttackResult, str]:
    """Each tree's exact estimate, pooled within each person's possible values, whatever the joint table's size."""
    return _pooled_estimate(audited(model, threat.publish), table, threat, e, ""), "pooled"


def _possible(model: Model, table: pd.DataFrame, threat: ThreatModel, e: Estimating) -> tuple[AttackResult, str]:
    """Each person's possible values alone."""
    return _possible_estimate(model, table, threat, "Each"), "possible"


#: The registry: one road per method of the capabilities table (:data:`~ppdm.pipeline.capabilities.METHODS`).
ROADS: dict[str, Road] = {
    "auto": _auto, "factored": _factored, "explicit": _explicit, "split-choice": _split_choice, "pooled": _pooled, "possible": _possible,
}
assert set(ROADS) == set(METHODS), "every method of the capabilities table has its road"


def _pooled_estimate(published: Model, table: pd.DataFrame, threat: ThreatModel, e: Estimating, why: str) -> AttackResult:
    """The pooled estimate of a model as published, restricted to each person's possible values,
    its note saying so (``why``: the reason it stands in for the joint estimate, if any)."""
    known = [c for c in (threat.known or ()) if c != threat.sensitive]
    pv = possible_values(published, table, known, str(threat.sensitive))
    result = pooled_forest_attack(as_forest(published), table, threat, knowledge=e.knowledge, possible=pv.possible, progress=e.progress)
    result.details["note"] = with_notes(
        f"an approximate estimate: {why}each tree's exact estimate is pooled over the {result.details['trees_pooled']} of {published.n_trees} trees that "
        "publish their own counts, within each person's possible values over all trees (sound: one value left is certain, proved)",
        [str(result.details["note"])] if result.details.get("note") else [],  # which boosting rounds it read
    )
    return result


def _possible_estimate(model: Model, table: pd.DataFrame, threat: ThreatModel, why: str) -> AttackResult:
    """Each person's possible values alone, the note starting with ``why``."""
    result = possible_attack(model, table, threat)
    result.details["status"] = "possible values only"
    result.details["note"] = (
        f"{why} person's possible values (sound: one value left is certain, proved), weighted by the table's distribution of the sensitive attribute"
    )
    return result
