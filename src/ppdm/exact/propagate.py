"""Integer bound propagation over the count rows: counts every consistent dataset fixes.

Each row Σ_v a_v x_v = b (or ≤ b) bounds each of its counts by the others' bounds, and a group's
size is one more such row; counts are whole, so each bound is rounded inward (⌈·⌉ below, ⌊·⌋
above), exactly in integers. This is :func:`ppdm.maxent.solvers.bound_propagation.propagate_bounds`
over the rows of :mod:`ppdm.exact.search`, read as one block; repeating until nothing moves fixes a
leaf's records once the others in it are fixed, leaf after leaf and tree after tree. Every bound
holds in every consistent dataset (each step only uses rows every one of them meets), so a count
whose bounds meet is proved: a group whose count of a value is held at its size is certain, at 0
impossible — without an LP. Strict rows (the tie rule) are read as ≤ b, a relaxation: sound,
possibly weaker.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ppdm.maxent.solvers.bound_propagation import PropagationOptions, RowBlock, propagate_bounds

#: At most 200 rounds (each can only tighten; a round reads the rows whose counts moved).
COUNTS = PropagationOptions(rounds=200, integer=True)


def propagate(
    var_group: np.ndarray, sizes: np.ndarray, rows: list[tuple[sp.csr_matrix, np.ndarray, str, np.ndarray | None, list[str]]],
    lo: np.ndarray | None = None, hi: np.ndarray | None = None, options: PropagationOptions = COUNTS,
) -> tuple[np.ndarray, np.ndarray]:
    """The tightest bounds ``lo ≤ x ≤ hi`` on every count that propagation reaches (whole
    numbers), from ``lo``/``hi`` (default 0 and the group's size). ``rows`` as in
    :mod:`ppdm.exact.search` (A, b, sense, strict, names) over the same variables. Bounds that
    cross (``lo > hi`` somewhere) say no consistent dataset exists: the caller's search says so."""
    n = len(var_group)
    sizes = np.asarray(sizes, dtype=np.int64)
    G = sp.csr_matrix((np.ones(n, dtype=np.int64), (var_group, np.arange(n))), shape=(len(sizes), n))
    blocks = [(G, sizes, True)] + [(sp.csr_matrix(A, dtype=np.int64), np.asarray(b, dtype=np.int64), sense == "eq") for A, b, sense, _, _ in rows]
    A = sp.vstack([blk[0] for blk in blocks], format="csr", dtype=np.int64)
    b = np.concatenate([blk[1] for blk in blocks]).astype(float)
    eq = np.concatenate([np.full(blk[0].shape[0], blk[2]) for blk in blocks])
    lo = np.zeros(n, dtype=np.int64) if lo is None else np.asarray(lo, dtype=np.int64)
    hi = sizes[var_group] if hi is None else np.asarray(hi, dtype=np.int64)
    found = propagate_bounds([RowBlock(A, np.where(eq, b, -np.inf), b)], lo, hi, options)
    return found.lo, found.hi
