"""Integer bound propagation over the count rows: counts every consistent dataset fixes.

Each row Σ_v a_v x_v = b (or ≤ b) bounds each of its counts by the others' bounds: with the
least and the largest the others can contribute (their activity), a_v x_v lies between b minus
the others' largest and b minus their least (an equality), or below b minus their least (a ≤
row); a group's size is one more such row. Counts are whole, so each bound is rounded inward
(⌈·⌉ below, ⌊·⌋ above). Repeating until nothing moves fixes a leaf's records once the others in
it are fixed, leaf after leaf and tree after tree — the integer form of
:mod:`ppdm.maxent.solvers.bound_propagation`. Every bound holds in every consistent dataset (each
step only uses rows every one of them meets), so a count whose bounds meet is proved: a group
whose count of a value is held at its size is certain, at 0 impossible — without an LP. Strict
rows (the tie rule) are read as ≤ b, a relaxation: sound, possibly weaker.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: Rounds of propagation at most (each can only tighten; a round is two sparse products).
ROUNDS = 200


def propagate(
    var_group: np.ndarray, sizes: np.ndarray, rows: list[tuple[sp.csr_matrix, np.ndarray, str, np.ndarray | None, list[str]]],
    lo: np.ndarray | None = None, hi: np.ndarray | None = None, rounds: int = ROUNDS,
) -> tuple[np.ndarray, np.ndarray]:
    """The tightest bounds ``lo ≤ x ≤ hi`` on every count that propagation reaches (whole
    numbers), from ``lo``/``hi`` (default 0 and the group's size). ``rows`` as in
    :mod:`ppdm.exact.search` (A, b, sense, strict, names) over the same variables."""
    n = len(var_group)
    sizes = np.asarray(sizes, dtype=np.int64)
    G = sp.csr_matrix((np.ones(n, dtype=np.int64), (var_group, np.arange(n))), shape=(len(sizes), n))
    blocks = [(G, sizes, True)] + [(sp.csr_matrix(A, dtype=np.int64), np.asarray(b, dtype=np.int64), sense == "eq") for A, b, sense, _, _ in rows]
    A = sp.vstack([blk[0] for blk in blocks]).tocsr()
    b = np.concatenate([blk[1] for blk in blocks])
    eq = np.concatenate([np.full(blk[0].shape[0], blk[2]) for blk in blocks])
    lo = np.zeros(n, dtype=np.int64) if lo is None else np.asarray(lo, dtype=np.int64).copy()
    hi = sizes[var_group].astype(np.int64) if hi is None else np.asarray(hi, dtype=np.int64).copy()
    pos, neg = A.multiply(A > 0).tocsr(), (-A.multiply(A < 0)).tocsr()
    coo = A.tocoo()
    r, v, a = coo.row, coo.col, coo.data.astype(np.int64)
    for _ in range(rounds):
        least = pos @ lo - neg @ hi  # each row's smallest activity
        most = pos @ hi - neg @ lo
        # the others' least (most) activity: the row's minus this entry's own contribution
        own_least = np.where(a > 0, a * lo[v], a * hi[v])
        own_most = np.where(a > 0, a * hi[v], a * lo[v])
        up = b[r] - (least[r] - own_least)  # a x ≤ up
        down = np.where(eq[r], b[r] - (most[r] - own_most), np.iinfo(np.int64).min // 4)  # a x ≥ down
        new_hi = np.where(a > 0, _floor_div(up, a), _floor_div(-down, -a))
        new_lo = np.where(a > 0, _ceil_div(down, a), _ceil_div(-up, -a))
        h = hi.copy()
        np.minimum.at(h, v, new_hi)
        lw = lo.copy()
        np.maximum.at(lw, v, new_lo)
        if np.array_equal(h, hi) and np.array_equal(lw, lo):
            break
        lo, hi = lw, h
        if (lo > hi).any():
            break  # no consistent dataset: the caller's search says so
    return lo, hi


def _floor_div(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.floor_divide(p, q)


def _ceil_div(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return -np.floor_divide(-p, q)
