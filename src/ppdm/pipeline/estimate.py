"""The estimate step: the maximum-entropy attack (papers 000 §3–4 and its forest form), or what stands in for it where it cannot be built, under the resolved threat."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.possible import estimate_or_possible
from ppdm.errors import UninformativeKnowledgeWarning
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.pipeline.findings import Model
from ppdm.pipeline.options import AuditOptions


def estimate(
    model: Model, table: pd.DataFrame, threat: ThreatModel, weights: np.ndarray | None, how: AuditOptions,
    progress: Callable[[int, int], None] | None, solver_progress: Callable[[Any], None] | None = None,
) -> AttackResult:
    knowledge = Knowledge(rate=True, label=how.labels, internal=how.internal)
    forest = {"forest_options": how.forest} if how.forest is not None else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UninformativeKnowledgeWarning)  # the note is in the summary
        return estimate_or_possible(
            model, table, threat, knowledge=knowledge, time_limit=how.time_limit, weights=weights, tree_progress=progress,
            solver_progress=solver_progress, **forest,
        )

