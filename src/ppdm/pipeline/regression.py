"""The question of a regressor: each person's proved interval of its numeric target or of a numeric input (:mod:`ppdm.attacks.models.regression`, :mod:`ppdm.attacks.models.regression_input`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import pandas as pd

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.regression import interval_attack
from ppdm.attacks.models.regression_input import input_interval_attack
from ppdm.data.counting import is_dask
from ppdm.errors import PpdmError
from ppdm.pipeline.checks import check_finite, check_training_size
from ppdm.pipeline.findings import Findings, Model
from ppdm.pipeline.missing import with_missing
from ppdm.pipeline.options import AuditOptions


def regression_audit(
    published: Model, table: Any, declared: ThreatModel, how: AuditOptions, sample: bool, reference: Any, holdout: Any, tolerance: float,
    domain: Sequence[float] | None, subset: str | None, exact_progress: Callable[[Any], None] | None,
) -> Findings:
    """A regressor's audit: each person's proved interval of the numeric secret."""
    unsupported = {"a dask table": is_dask(table), "sample=True": sample, "reference=": reference is not None, "holdout=": holdout is not None, "internal=True": how.internal,
                   f"method={how.method!r}": how.method != "auto"}
    named = [k for k, v in unsupported.items() if v]
    if named:
        raise PpdmError(f"the audit of a regressor does not take {named[0]}: give the training rows as a pandas table")
    counted, dropped, resolved = with_missing(table, published, declared, how.missing)
    check_training_size(published, counted, None, dropped, False)
    check_finite(counted, published)
    ids = counted.index.to_numpy() if pd.api.types.is_integer_dtype(counted.index) else None  # as a classifier's audit names people
    intervals = interval_attack_of(published, counted, resolved, exact_progress)(
        published, counted, resolved, tolerance=tolerance, domain=domain, exact=how.exact, time_limit=how.time_limit,
        exact_time_limit=how.exact_time_limit, row_ids=ids,
    )  # fmt: skip
    if subset is not None:
        intervals.details["trees_audited"] = subset
    if dropped:
        intervals.details["dropped_rows"] = dropped
    return Findings(published, resolved, counted, weights=None, dropped_rows=dropped, intervals=intervals)


def interval_attack_of(model: Model, table: pd.DataFrame, threat: ThreatModel, progress: Callable[[Any], None] | None = None) -> Callable[..., Any]:
    """A regressor's attack: its target's intervals (linear programmes, quick), or a numeric
    input's (the target known; ``progress`` follows its integer programmes)."""
    if threat.sensitive == model.class_attribute:
        return interval_attack
    if threat.sensitive not in model.attributes:
        raise PpdmError(
            f"a regressor's audit proves intervals of its target {model.class_attribute!r} or of one of its numeric inputs: "
            f"{threat.sensitive!r} is neither"
        )
    return partial(input_interval_attack, progress=progress)

