"""Missing values in the columns an audit reads (:mod:`ppdm.data.missing`), dealt with by the options' policy, on an in-memory table or counted partition by partition (Dask); the threat resolved against the table here, once."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.threat import ThreatModel
from ppdm.data.counting import compress
from ppdm.data.missing import handle_missing, handle_missing_counted
from ppdm.errors import DataError, advising, shown
from ppdm.pipeline.findings import Model
from ppdm.pipeline.options import Missing
from ppdm.tree.forest import Forest


def audit_columns(model: Model, threat: ThreatModel) -> list[str]:
    """The columns an audit reads under a resolved ``threat``: the known ones, the sensitive one,
    the class and every split attribute of the model."""
    return list(dict.fromkeys([*(threat.known or ()), str(threat.sensitive), model.class_attribute, *model.split_attributes]))


def with_missing(table: pd.DataFrame, model: Model, threat: ThreatModel, policy: Missing) -> tuple[pd.DataFrame, int, ThreatModel]:
    """The table with the missing values of the columns the audit reads dealt with by ``policy``."""
    resolved = threat.resolve(table, model.class_attribute, splits=model.split_attributes)
    kept, dropped = handle_missing(table, audit_columns(model, resolved), policy, model.split_attributes, model.class_attribute)
    if dropped and resolved.known_individuals:
        resolved = replace(resolved, known_individuals=_kept_positions(table, kept, resolved.known_individuals))
    if dropped and model.n_records == len(table):
        raise refused_drop(dropped, len(table), "the forest's trees count every one of them (per-row multiplicities)")
    if dropped and model.is_regressor and model.n_training_records == len(table):
        raise refused_drop(dropped, len(table), "each of the regressor's leaves sums the targets of every one of its rows")
    return kept, dropped, resolved


def _kept_positions(table: pd.DataFrame, kept: pd.DataFrame, positions: tuple[int, ...]) -> tuple[int, ...]:
    """The known individuals' positions in ``kept``, the rows of ``table`` missing values left."""
    found = kept.index.get_indexer(table.index[list(positions)])
    if (found < 0).any():
        first = table.index[positions[int(np.flatnonzero(found < 0)[0])]]
        raise DataError(f"known individual row {shown(first)} has a missing value, so missing='drop' leaves it out: fill it in or leave it out of known_individuals")
    return tuple(int(p) for p in found)


def refused_drop(dropped: int, rows: int, why: str) -> DataError:
    """Refuse ``missing="drop"`` on a model whose published rows count every training row."""
    python = f"missing='drop' would leave out {dropped:,} of the {rows:,} training rows"
    error = DataError(f"{python}, but {why}: audit all the rows the model was fitted on")
    return advising(error, python, "missing", f"--missing drop would leave out {dropped:,} of the {rows:,} training rows")


def counted_table(frame: Any, model: Model, threat: ThreatModel, policy: Missing, client: Any) -> tuple[pd.DataFrame, np.ndarray, int, ThreatModel]:
    """A lazily read table counted partition by partition into the distinct combinations of the
    columns the audit reads (with the records each stands for), missing values dealt with."""
    if isinstance(model, Forest):
        raise DataError("a forest is audited on an in-memory (pandas) table, not a Dask one")
    resolved = threat.resolve(frame._meta, model.class_attribute, splits=model.split_attributes)
    columns = [c for c in audit_columns(model, resolved) if c in frame.columns]
    found = compress(frame, columns, client)
    assert found is not None  # no limit asked
    table, weights = found
    assert weights is not None
    table, weights, dropped = handle_missing_counted(table, weights, columns, policy, model.split_attributes, model.class_attribute)
    return table, weights, dropped, resolved

