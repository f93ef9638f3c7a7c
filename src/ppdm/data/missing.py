"""Missing values in the columns an audit reads: refuse, drop, or keep as a value of their own.

A record with a missing split value must never be sent down a default branch silently, and no row
may disappear without being counted. The policy is the user's:

* ``"error"`` (default): a :class:`~ppdm.errors.DataError` naming the column and its first rows;
* ``"drop"``: rows with a missing value in any of the columns are left out; the number dropped is
  returned so that every output can state it (the rows keep their original index, so results
  still join back to the user's file);
* ``"as-value"``: a categorical column gets the value :data:`MISSING` for its missing entries
  (fine for columns the model does not split on; a split column then fails with the value named).
  Numeric columns have no such value: their missing entries are still an error.

The error advises only the policies that can work for the column at fault: ``"as-value"`` for a
categorical column the model does not split on (``splits``), else ``"drop"`` or filling the values in.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from ppdm.errors import DataError, advising

MissingPolicy = Literal["error", "drop", "as-value"]
POLICIES: tuple[str, ...] = ("error", "drop", "as-value")

#: The category a missing categorical value becomes under ``"as-value"``.
MISSING = "(missing)"


def _first_rows(mask: pd.Series, n: int = 5) -> str:
    rows = [str(r) for r in mask.index[mask.to_numpy()][:n]]
    more = int(mask.sum()) - len(rows)
    return ", ".join(rows) + (f" and {more:,} more" if more > 0 else "")


def handle_missing(
    frame: pd.DataFrame, columns: Sequence[str], policy: MissingPolicy = "error", splits: Collection[str] = (), class_column: str | None = None,
) -> tuple[pd.DataFrame, int]:
    """``frame`` with the missing values of ``columns`` dealt with by ``policy``, and the rows
    dropped. ``splits``: the columns the model splits on, ``class_column`` the one it predicts (the
    error does not advise ``"as-value"`` for them)."""
    if policy not in POLICIES:
        raise DataError(f"unknown missing-value policy {policy!r} (choose one of: {', '.join(POLICIES)})")
    columns = [c for c in dict.fromkeys(columns) if c in frame.columns]
    missing = {c: frame[c].isna() for c in columns}
    missing = {c: m for c, m in missing.items() if m.any()}
    if not missing:
        return frame, 0
    if policy == "drop":
        any_missing = pd.concat(list(missing.values()), axis=1).any(axis=1)
        return frame.loc[~any_missing], int(any_missing.sum())
    out = frame.copy() if policy == "as-value" else frame
    for column, mask in missing.items():
        if policy == "as-value" and not pd.api.types.is_numeric_dtype(frame[column]):
            out[column] = _as_value(frame[column])
            continue
        python, command = _hints(policy, frame[column], _fixed_by(column, splits, class_column))
        error = DataError(f"column {column!r}: {int(mask.sum()):,} missing value(s), first at row(s) {_first_rows(mask)} {python}")
        raise advising(error, python, "missing", command)
    return out, 0


def handle_missing_counted(
    frame: pd.DataFrame, weights: np.ndarray, columns: Sequence[str], policy: MissingPolicy = "error", splits: Collection[str] = (),
    class_column: str | None = None,
) -> tuple[pd.DataFrame, np.ndarray, int]:
    """:func:`handle_missing` on a counted table (distinct rows standing for ``weights`` records
    each, :func:`ppdm.data.counting.compress`): the table, its weights and the records dropped.
    The records' own row numbers are not known there, so an error names the column and the count."""
    if policy not in POLICIES:
        raise DataError(f"unknown missing-value policy {policy!r} (choose one of: {', '.join(POLICIES)})")
    columns = [c for c in dict.fromkeys(columns) if c in frame.columns]
    missing = {c: frame[c].isna().to_numpy() for c in columns}
    missing = {c: m for c, m in missing.items() if m.any()}
    if not missing:
        return frame, weights, 0
    if policy == "drop":
        keep = ~np.logical_or.reduce(list(missing.values()))
        return frame.loc[keep].reset_index(drop=True), weights[keep], int(weights[~keep].sum())
    out = frame.copy()
    for column, mask in missing.items():
        if policy == "as-value" and not pd.api.types.is_numeric_dtype(frame[column]):
            out[column] = _as_value(frame[column])
            continue
        python, command = _hints(policy, frame[column], _fixed_by(column, splits, class_column))
        raise advising(DataError(f"column {column!r}: {int(weights[mask].sum()):,} missing value(s) {python}"), python, "missing", command)
    return out, weights, 0


def _fixed_by(column: str, splits: Collection[str], class_column: str | None) -> str | None:
    """Why a value of its own cannot stand for ``column``'s missing entries, or ``None``."""
    if column == class_column:
        return "the model's classes hold no such value"
    if column in splits:
        return "the model splits on it, so a value of their own would reach no branch"
    return None


def _hints(policy: str, column: pd.Series, fixed: str | None) -> tuple[str, str]:
    """The other policies that can work for ``column``, as a Python caller spells them and as the
    command line does: ``"as-value"`` only for a categorical column the model neither splits on
    nor predicts (``fixed``: why not, else ``None``)."""
    if policy != "as-value" and fixed is None and not pd.api.types.is_numeric_dtype(column):
        return "(use missing='drop' or missing='as-value')", "(use --missing drop or --missing as-value)"
    if fixed is not None:
        return f"(use missing='drop', or fill them in: {fixed})", f"(use --missing drop, or fill them in: {fixed})"
    return "(use missing='drop', or fill them in)", "(use --missing drop, or fill them in)"


def _as_value(column: pd.Series) -> pd.Series:
    if isinstance(column.dtype, pd.CategoricalDtype):
        if MISSING not in column.cat.categories:
            column = column.cat.add_categories([MISSING])
        return column.fillna(MISSING)
    return column.astype(object).where(column.notna(), MISSING)
