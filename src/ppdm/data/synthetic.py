"""Adult at any size: a seeded synthetic table for scale benchmarks, written as Parquet partitions.

Each synthetic record is an Adult record drawn uniformly with replacement (so every categorical
column and every joint statistic of the categorical columns follow Adult's empirical
distribution exactly in expectation), with small perturbations of the numeric columns so that the
numbers are not copies: ``age`` and ``hours-per-week`` move by at most one unit (clipped to
Adult's range), ``fnlwgt`` and non-zero capital gains / losses by about 1 % (rounded, never
changing sign). ``education-num`` is left as is: it is a function of ``education`` in Adult.

Partition ``i`` draws from ``numpy.random.default_rng([seed, i])``, so a table is the same on
every machine and for every number of workers; the partition size is part of the recipe.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.errors import DataError

#: Numeric columns moved by at most one unit, with the range they are clipped to.
_UNIT_JITTER = {"age": (17, 90), "hours-per-week": (1, 99)}
#: Numeric columns moved by about 1 % (relative, rounded to integers).
_RELATIVE_JITTER = ("fnlwgt", "capital-gain", "capital-loss")


def sample_adult(source: pd.DataFrame, n_rows: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n_rows`` records drawn from ``source`` (Adult) with the numeric perturbations above."""
    if n_rows < 0:
        raise DataError(f"n_rows must be non-negative, got {n_rows}")
    picks = rng.integers(0, len(source), size=n_rows)
    out = source.iloc[picks].reset_index(drop=True)
    for name, (low, high) in _UNIT_JITTER.items():
        if name in out.columns:
            moved = out[name].to_numpy() + rng.integers(-1, 2, size=n_rows)
            out[name] = np.clip(moved, low, high).astype(out[name].dtype)
    for name in _RELATIVE_JITTER:
        if name in out.columns:
            values = out[name].to_numpy()
            moved = np.rint(values * (1.0 + 0.01 * rng.standard_normal(n_rows)))
            out[name] = np.where(values > 0, np.maximum(moved, 1), 0).astype(out[name].dtype)
    return out


def write_scale_adult(
    directory: str | Path, n_rows: int, rows_per_partition: int = 1_000_000, seed: int = 0,
    source: pd.DataFrame | None = None,
) -> list[Path]:
    """Write ``n_rows`` synthetic Adult records as ``part-00000.parquet``, ... under ``directory``.

    ``source``: the table sampled from (default: the bundled Adult, rows with missing values
    dropped). Returns the files written, in row order.
    """
    if rows_per_partition < 1:
        raise DataError(f"rows_per_partition must be at least 1, got {rows_per_partition}")
    if source is None:
        from ppdm.data.datasets import load_dataset

        source = load_dataset("adult")[0]
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for i, start in enumerate(range(0, n_rows, rows_per_partition)):
        size = min(rows_per_partition, n_rows - start)
        part = sample_adult(source, size, np.random.default_rng([seed, i]))
        path = directory / f"part-{i:05d}.parquet"
        part.to_parquet(path, index=False)
        written.append(path)
    return written
