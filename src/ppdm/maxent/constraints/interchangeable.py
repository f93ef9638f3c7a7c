"""Interchangeable variables: columns of a constraint matrix that enter every row alike.

Two variables with the same column (the same coefficient in every published row) and the same
side conditions (a label, a box) are interchangeable: any solution stays one when they swap. The
exact search merges groups of them into classes (:mod:`ppdm.exact.classes`), the regression
bounds solve one linear programme per group of records (:mod:`ppdm.exact.target_bounds`).

Columns are keyed by two random projections of their entries (and their side conditions), rounded
to 9 decimals, then checked equal to their class's first column exactly: a collision (two
different columns with one key, unseen in practice) falls back to comparing the columns' entries
as bytes, so no two different columns are ever merged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

__all__ = ["same_columns", "unique_rows"]


def same_columns(
    matrix: Any, extra: np.ndarray | None = None, rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The classes of identical columns of ``matrix`` (a sparse matrix; with identical rows of ``extra``, one per
    column): each class's first column, in the order of their keys, and each column's class.
    ``rng`` draws the projections (default seeded: the same classes, numbered alike, every run)."""
    rng = np.random.default_rng(2024) if rng is None else rng
    coo = sp.coo_matrix(matrix)  # any sparse matrix (or array)
    n = coo.shape[1]
    side = np.zeros((n, 0)) if extra is None else np.asarray(extra, dtype=float).reshape(n, -1)
    draws = rng.random((coo.shape[0], 2))
    proj = np.zeros((n, 2))
    np.add.at(proj, coo.col, coo.data[:, None] * draws[coo.row])  # summed in the entries' order (row by row from CSR)
    first, of = unique_rows(np.asarray(np.round(np.c_[proj, side], 9)))
    csc = sp.csc_matrix(matrix)
    if (csc - csc[:, first[of]]).count_nonzero() == 0 and np.array_equal(side, side[first[of]]):
        return first, of
    return _by_bytes(csc, side)


def _by_bytes(csc: sp.csc_matrix, side: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`same_columns` by each column's entries and side conditions as bytes (exact, slower)."""
    csc = csc.copy()
    csc.sum_duplicates()
    csc.eliminate_zeros()
    csc.sort_indices()
    keys = [
        csc.indices[csc.indptr[i] : csc.indptr[i + 1]].tobytes() + csc.data[csc.indptr[i] : csc.indptr[i + 1]].tobytes() + side[i].tobytes()
        for i in range(csc.shape[1])
    ]
    codes, _ = pd.factorize(pd.Series(keys, dtype=object))
    of = np.asarray(codes, dtype=np.intp)
    first = np.full(int(of.max(initial=-1)) + 1, len(of), dtype=np.intp)
    np.minimum.at(first, of, np.arange(len(of)))
    return first, of


def unique_rows(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(M, axis=0, return_index=True, return_inverse=True)`` without its structured
    sort (seconds on a million rows): each distinct row's first index, in the rows' lexicographic
    order, and each row's number in it."""
    n = M.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    order = np.lexsort(M.T[::-1])
    S = M[order]
    new = np.r_[True, (S[1:] != S[:-1]).any(axis=1)]
    ids = np.cumsum(new) - 1
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = ids
    first = np.full(int(ids[-1]) + 1, n, dtype=np.intp)
    np.minimum.at(first, ids, order)
    return first, inverse
