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

_CSV = (".csv", ".csv.gz", ".csv.bz2", ".tsv")


def _files(path: str) -> list[str]:
    p = Path(path)
    if p.is_dir():
        found = sorted(str(f) for f in p.iterdir() if f.is_file() and (f.suffix == ".parquet" or f.name.endswith(_CSV)))
    else:
        found = sorted(glob.glob(path)) if glob.has_magic(path) else ([path] if p.is_file() else [])
    if not found:
        raise DataError(f"{path}: no Parquet or CSV file matches")
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
    try:
        if csv:
            sep = "\t" if csv[0].endswith(".tsv") else ","
            return dd.read_csv(csv, usecols=columns, sep=sep, keep_default_na=False, na_values=[""])
        return dd.read_parquet(files, columns=columns)
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot be read as a table ({str(exc).splitlines()[0]})") from None
