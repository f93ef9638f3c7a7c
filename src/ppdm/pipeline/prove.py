"""The proof on whole counts (the exact audit, :func:`ppdm.attacks.models.exact.exact_attack`) under the resolved threat, and why it did not run when its table is too large."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.exact import exact_attack
from ppdm.errors import RoutingLimitError
from ppdm.pipeline.findings import Model
from ppdm.pipeline.options import AuditOptions


def prove(
    published: Model, counted: pd.DataFrame, resolved: ThreatModel, how: AuditOptions, progress: Callable[[Any], None] | None,
    result: AttackResult | None,
) -> tuple[AttackResult | None, str | None]:
    """The exact audit under the resolved threat, and why it did not run when its table was too large."""
    try:
        seconds = how.exact_seconds
        return exact_attack(published, counted, time_limit=seconds, threat=resolved, detail=how.exact_detail, options=how.search, progress=progress), None
    except RoutingLimitError as why:
        if result is None:  # the exact audit alone: nothing else was measured
            raise
        return None, not_run(why, str(result.details.get("note_details", "")))


def not_run(why: RoutingLimitError, note: str) -> str:
    """Why the exact audit did not run: the routing refusal, shortened to its advice when the
    estimate's note already gives the same table's size (the pooled estimate's, in its details)."""
    if why.advice and why.cause in note:
        return f"exact audit not run: it would route the same table the joint estimate found too large to build; {why.advice}"
    return f"exact audit not run: {why}"

