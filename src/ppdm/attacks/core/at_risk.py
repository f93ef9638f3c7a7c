"""The people at risk: who the attacker is most confident about in their true sensitive value.

An attack's posterior is per QI group; the records of a group with the same true value share the
attacker's confidence in that value. :func:`people_at_risk` ranks these (group, true value) cells
by that confidence, next to the prior's (the share of the value in the whole table: what an
attacker knowing nothing would say), with the row numbers of the people in each cell, so a
publisher sees whom a release exposes rather than a divergence score (paper 004 §VI ranks
individuals by divergence; the ranking here is the confidence in the truth, the measure of
``AttackResult.summary``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.errors import DataError

__all__ = ["people_at_risk"]

MAX_ROWS_SHOWN = 5


def people_at_risk(result: AttackResult, k: int = 10) -> pd.DataFrame:
    """The ``k`` (QI group, true value) cells with the highest confidence in the true value.

    Columns: the QI values, ``value`` (the true sensitive value), ``people`` (records in the
    cell), ``confidence`` (the attacker's probability of the true value), ``prior`` (the value's
    share in the table), ``rows`` (the first row numbers, or ``row_ids``, of the cell's people,
    at most five). Ties: more people first, then table order.
    """
    if result.true_codes is None:
        raise DataError(
            f"the data has no column {result.sensitive!r}: the people at risk need their true values"
        )
    n_values = len(result.values)
    counts = result.groups.value_counts(result.true_codes, n_values)
    groups, values = np.nonzero(counts)
    confidence = result.posterior[groups, values]
    people = counts[groups, values]
    order = np.lexsort((np.arange(len(groups)), -people, -confidence))[:k]
    groups, values = groups[order], values[order]
    prior = np.bincount(result.true_codes, minlength=n_values) / len(result.true_codes)
    table = result.groups.table.iloc[groups].reset_index(drop=True).astype(object)
    table["value"] = [result.values[v] for v in values]
    table["people"] = people[order].astype(np.int64)
    table["confidence"] = confidence[order]
    table["prior"] = prior[values]
    table["rows"] = _rows(result, groups, values)
    return table


def _rows(result: AttackResult, groups: np.ndarray, values: np.ndarray) -> list[list[int]]:
    """The first row numbers (or ids) of the people of each (group, value) cell."""
    ids = np.arange(result.groups.n_records) if result.row_ids is None else np.asarray(result.row_ids)
    of_record = result.groups.group_of_record
    return [
        ids[(of_record == g) & (result.true_codes == v)][:MAX_ROWS_SHOWN].tolist()
        for g, v in zip(groups.tolist(), values.tolist())
    ]
