"""Tables too large for memory, read lazily as ``dask.dataframe`` partitions (DESIGN.md "Scale").

A path is a Parquet file, a directory of Parquet files, a glob (``"part-*.parquet"``), or the
same for CSV files (``.csv``, ``.csv.gz``). Nothing is read until the counting backend
(:mod:`ppdm.data.counting`) goes through the partitions, and then only the columns it needs.
Dask is imported here only: ppdm runs without the ``[distributed]`` extra.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from ppdm.errors import DataError
from ppdm.files import note_read

_CSV = (".csv", ".csv.gz", ".csv.bz2", ".tsv")


def _files(path: str) -> list[str]:
    p = Path(path)
    if p.is_dir():
        found = sorted(str(f) for f in p.iterdir() if f.is_file() and (f.suffix == ".parquet" or f.name.endswith(_CSV)))
    else:
        found = sorted(glob.glob(path)) if glob.has_magic(path) else ([path] if p.is_file() else [])
    if not found:
        raise DataError(f"{path}: no Parquet or CSV file matches")
    special = [f for f in found if not Path(f).is_file()]
    if special:
        raise DataError(f"{special[0]}: not a regular file (a table is read from disk, not from a pipe or device)")
    for f in found:
        note_read(f)  # an output of the same call never replaces one of them
    return found


def read_lazy(path: str | Path, columns: list[str] | None = None) -> Any:
    """The table at ``path`` (file, directory or glob of Parquet or CSV files) as a Dask DataFrame."""
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - depends on the environment
        raise DataError("reading tables lazily needs Dask: pip install 'ppdm[distributed]'") from None
    files = _files(str(path))
    csv = [f for f in files if f.endswith(_CSV)]
    if csv and len(csv) != len(files):
        raise DataError(f"{path}: mixes CSV and Parquet files ({csv[0]}, {next(f for f in files if f not in csv)})")
    if not csv:
        _check_parquet(files)
    try:
        if csv:
            sep = "\t" if csv[0].endswith(".tsv") else ","
            return dd.read_csv(csv, usecols=columns, sep=sep, keep_default_na=False, na_values=[""])
        return dd.read_parquet(files, columns=columns)
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot be read as a table ({_cause(exc)})") from None


def _check_parquet(files: list[str]) -> None:
    """Read every Parquet file's footer (its schema and row groups, a few kilobytes): a corrupt
    or truncated part is named now, not met as an error deep inside the counting."""
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - depends on the environment
        return
    for f in files:
        try:
            _ = pq.ParquetFile(f).metadata  # reading the footer is the check
        except Exception as exc:  # pyarrow raises ArrowInvalid, OSError and others for a bad file
            raise DataError(f"{f}: not a readable Parquet file ({_cause(exc)})") from None


def _cause(exc: BaseException) -> str:
    """The first line of the innermost cause of ``exc`` (Dask wraps the reader's own error)."""
    while exc.__cause__ is not None or (exc.__context__ is not None and not exc.__suppress_context__):
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]
