"""The counting every audit and learner reduces its input to, behind one interface, two backends.

DESIGN.md ("Scale"): everything downstream of counting works on counts whose size depends on the
number of distinct value combinations, not on rows. The one primitive is :meth:`distinct`: the
distinct combinations of some columns, in order of first appearance, with how many records hold
each. Paper 000 §3's attacker's table (QI groups and their sizes), the learners' class counts
(a record matters to ID3, C4.5 and kADET only through its attribute values and class) and rule
mining's itemset counts are all computed from it, so a backend only has to provide this.

* :class:`PandasCounting` (the default): one vectorised group-by over an in-memory DataFrame.
* :class:`DaskCounting`: the same group-by partition by partition over a ``dask.dataframe``
  (e.g. a directory of Parquet files read lazily), on the local scheduler or on a
  ``distributed.Client`` the caller passes. Partial results are merged as partitions finish, so
  memory holds a few partitions and the distinct combinations, never the table. The order of
  first appearance is kept exactly (a combination's first record is located by partition and
  row), so both backends give the same combinations in the same order and the same counts.

Dask is imported only when a Dask frame is counted: ppdm runs without the ``[distributed]`` extra.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import DataError, PpdmError

#: Name of the per-record group id column :meth:`DaskCounting.with_group_ids` writes back.
GROUP_COLUMN = "__ppdm_group__"

_N, _FIRST = "__ppdm_n__", "__ppdm_first__"
#: A combination's first record is ``partition * _STRIDE + row within the partition``.
_STRIDE = 1 << 40


@dataclass
class Distinct:
    """Distinct combinations (``table``, in order of first appearance) and their record counts."""

    table: pd.DataFrame
    counts: np.ndarray

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())


def is_dask(frame: object) -> bool:
    """Whether ``frame`` is a Dask DataFrame or Series (checked without importing Dask)."""
    return type(frame).__module__.split(".")[0] in ("dask", "dask_expr")


def columns_of(frame: Any) -> list[str]:
    """The column names of a pandas or Dask frame."""
    return [str(c) for c in frame.columns]


def _check(frame: Any, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in set(frame.columns)]
    if missing:
        raise DataError(f"column(s) not in the data: {', '.join(map(repr, missing))}")


def group_codes(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Index of each row's distinct combination of ``columns``, and the combinations in order of
    first appearance (missing values form their own combinations).

    The columns' codes are packed into one integer per row and factorized (several times faster
    than a group-by on many keys); a group-by when the packed key would not fit in 63 bits.
    """
    if not columns:
        return np.zeros(len(frame), dtype=np.intp), pd.DataFrame(index=range(1 if len(frame) else 0))
    key = _packed_key(frame, columns)
    if key is None:
        grouped = frame.groupby(list(columns), sort=False, observed=True, dropna=False)
        codes = grouped.ngroup().to_numpy(dtype=np.intp)
    else:
        codes = pd.factorize(key)[0].astype(np.intp)
    first = np.unique(codes, return_index=True)[1]
    table = frame.iloc[first][list(columns)].reset_index(drop=True)
    return codes, table


def _packed_key(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray | None:
    """One int64 per row that is equal exactly when the rows agree on ``columns`` (``None``: too wide)."""
    key = np.zeros(len(frame), dtype=np.int64)
    radix = 1
    for name in columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            codes, size = column.cat.codes.to_numpy().astype(np.int64) + 1, len(column.cat.categories) + 1
        else:
            found, uniques = pd.factorize(column, use_na_sentinel=False)
            codes, size = found.astype(np.int64), max(len(uniques), 1)
        if radix > (1 << 62) // size:
            return None
        key += codes * radix
        radix *= size
    return key


class PandasCounting:
    """Counting in memory with pandas: today's code, the default backend."""

    def distinct(self, frame: pd.DataFrame, columns: Sequence[str]) -> Distinct:
        _check(frame, columns)
        codes, table = group_codes(frame, columns)
        return Distinct(table, np.bincount(codes, minlength=len(table)).astype(np.int64))


def _partial(part: pd.DataFrame, columns: list[str], number: int) -> pd.DataFrame:
    """One partition's distinct combinations, with their counts and first record."""
    codes, table = group_codes(part, columns)
    first = np.unique(codes, return_index=True)[1]
    counts = np.bincount(codes, minlength=len(table)).astype(np.int64)
    return table.assign(**{_N: counts, _FIRST: number * _STRIDE + first.astype(np.int64)})


def _merge(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    """Partial results merged: counts added, the earliest first record kept."""
    parts = [p for p in parts if p is not None]
    if len(parts) == 1:
        return parts[0]
    both = pd.concat(parts, ignore_index=True)
    codes, table = group_codes(both, columns)
    n = len(table)
    first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, codes, both[_FIRST].to_numpy())
    return table.assign(**{_N: np.bincount(codes, weights=both[_N].to_numpy(), minlength=n).astype(np.int64), _FIRST: first})


class _Bar:
    """A one-line progress count over partitions on a terminal (stderr), silent otherwise."""

    def __init__(self, total: int, label: str, show: bool | None) -> None:
        self.total, self.label, self.done = total, label, 0
        self.show = sys.stderr.isatty() if show is None else show

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.show:
            width = 30
            full = width * self.done // max(self.total, 1)
            sys.stderr.write(f"\r{self.label} [{'#' * full}{'.' * (width - full)}] {self.done}/{self.total} partitions")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


class DaskCounting:
    """Counting partition by partition with ``dask.dataframe``.

    ``client``: a ``distributed.Client`` to run on (default: Dask's local scheduler);
    ``progress``: show a progress bar over partitions (default: when stderr is a terminal);
    ``batch``: partitions in flight at once on the local scheduler (default: twice the workers
    the scheduler uses, at least 2), which bounds memory.
    """

    def __init__(self, client: Any = None, progress: bool | None = None, batch: int | None = None) -> None:
        self.client = client
        self.progress = progress
        self.batch = batch

    def distinct(self, frame: Any, columns: Sequence[str], limit: int | None = None) -> Distinct | None:
        """As :meth:`PandasCounting.distinct`; ``None`` as soon as there are more than ``limit`` combinations."""
        _check(frame, columns)
        columns = list(columns)
        if not columns:
            n = self.reduce(frame[columns_of(frame)[:1]], lambda part, i: len(part), sum, "counting rows") or 0
            return Distinct(pd.DataFrame(index=range(1 if n else 0)), np.array([n] if n else [], dtype=np.int64))
        merged = self.reduce(
            frame[columns], lambda part, i: _partial(part, columns, i), lambda parts: _merge(parts, columns),
            f"counting {len(columns)} column(s)", stop=None if limit is None else (lambda merged: len(merged) > limit),
        )
        if limit is not None and merged is not None and len(merged) > limit:
            return None
        if merged is None:
            return Distinct(frame._meta[columns].iloc[:0].reset_index(drop=True), np.zeros(0, dtype=np.int64))
        merged = merged.sort_values(_FIRST, kind="stable").reset_index(drop=True)
        return Distinct(_plain_strings(merged[columns]), merged[_N].to_numpy(dtype=np.int64))

    def reduce(
        self, frame: Any, chunk: Callable[[pd.DataFrame, int], Any], combine: Callable[[list[Any]], Any], label: str = "counting",
        stop: Callable[[Any], bool] | None = None,
    ) -> Any:
        """``combine`` of ``chunk(partition, number)`` over every partition, merged as they finish;
        ``stop``: give up as soon as it holds for the partial result (which is returned)."""
        import dask

        parts = frame.to_delayed(optimize_graph=True)
        tasks = [dask.delayed(chunk)(p, i) for i, p in enumerate(parts)]
        bar = _Bar(len(tasks), label, self.progress)
        if not tasks:
            return None
        if self.client is not None:
            return self._on_client(tasks, combine, bar, stop)
        size = self.batch or max(2, 2 * _local_workers())
        acc: list[Any] = []
        for start in range(0, len(tasks), size):
            batch = tasks[start : start + size]
            acc = [combine([*acc, *_computed(dask, batch, start)])]
            bar.advance(len(batch))
            if stop is not None and stop(acc[0]):
                break
        return acc[0]

    def _on_client(self, tasks: list[Any], combine: Callable[[list[Any]], Any], bar: _Bar, stop: Callable[[Any], bool] | None) -> Any:
        from distributed import as_completed

        futures = self.client.compute(tasks)
        acc: list[Any] = []
        for future in as_completed(futures):
            acc = [combine([*acc, future.result()])]
            future.release()
            bar.advance()
            if stop is not None and stop(acc[0]):
                self.client.cancel(futures)
                break
        return acc[0]

    def with_group_ids(self, frame: Any, columns: Sequence[str], table: pd.DataFrame, name: str = GROUP_COLUMN) -> Any:
        """``frame`` with each record's group (its row in ``table``, the distinct combinations of
        ``columns``) as a new column ``name``, lazily: write it out with ``to_parquet`` rather than
        holding a group id per record in memory."""
        _check(frame, columns)
        columns = list(columns)
        return frame.map_partitions(_assign_groups, columns, table, name, meta=_assign_groups(frame._meta, columns, table, name))


def _computed(dask: Any, batch: list[Any], start: int) -> tuple[Any, ...]:
    """The results of a batch of partition tasks; a partition that cannot be read (a corrupt
    Parquet part, a CSV part that does not parse) is a :class:`DataError` naming its cause."""
    try:
        return tuple(dask.compute(*batch))
    except (PpdmError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:
        text = " ".join(str(exc).split())[:300] or type(exc).__name__
        where = f"a partition among {start + 1} to {start + len(batch)}"
        ragged = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
        if ragged:
            fields, line, saw = (int(g) for g in ragged.groups())
            raise DataError(f"{where} cannot be read: line {line:,} has {saw:,} fields where the header has {fields:,} (a ragged row; check the separator and quoting)") from None
        raise DataError(f"{where} cannot be read ({type(exc).__name__}: {text})") from None


def _plain_strings(table: pd.DataFrame) -> pd.DataFrame:
    """Text columns as pandas itself would type them: Dask turns text into strings whose missing
    value is ``pd.NA``; downstream code sees the same dtypes as on the pandas backend."""
    out = table.copy()
    for name in out.columns:
        dtype = out[name].dtype
        if isinstance(dtype, pd.StringDtype) and dtype.na_value is pd.NA:
            out[name] = pd.Series(out[name].to_numpy(dtype=object, na_value=np.nan), index=out.index).infer_objects()
    return out


def _assign_groups(part: pd.DataFrame, columns: list[str], table: pd.DataFrame, name: str) -> pd.DataFrame:
    """``part`` with the row of ``table`` its ``columns`` match (-1 when none does)."""
    keys = pd.MultiIndex.from_frame(table[columns].astype(object)) if columns else None
    if keys is None:
        return part.assign(**{name: np.zeros(len(part), dtype=np.int64)})
    found = keys.get_indexer(pd.MultiIndex.from_frame(part[columns].astype(object)))
    return part.assign(**{name: found.astype(np.int64)})


def _local_workers() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def compress(
    frame: Any, columns: Sequence[str], client: Any = None, progress: bool | None = None, limit: int | None = None,
) -> tuple[pd.DataFrame, np.ndarray | None] | None:
    """``frame`` reduced to what counting needs: for a pandas frame, itself (one record per row,
    weights ``None``); for a Dask frame, the distinct combinations of ``columns`` with the number
    of records each stands for (the weights every count downstream is multiplied by); ``None``
    when there are more than ``limit`` of them."""
    if not is_dask(frame):
        return frame, None
    found = DaskCounting(client, progress).distinct(frame, columns, limit)
    if found is None:
        return None
    if found.n_records == 0:
        raise DataError("the table has no rows")
    return found.table, found.counts
