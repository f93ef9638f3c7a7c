"""Datasets from pairs of record moves whose changes nearly cancel: many refutations per solve.

Under many boosting rounds with every input known (the insider), a record's class is pinned by a
hundred leaves at once. A *record move* m takes one record of group g from variable u to variable
u' of the same group (from one class to the other); the rows change by c_m = A[:, u'] − A[:, u],
nonzero in every tree. Two moves of different groups whose changes nearly cancel — c_m + c_m'
zero on every *family* of rows (one tree's leaves, one :class:`~ppdm.exact.problem.CountRows`)
but at most T — form a *pair* whose defect c_m + c_m' touches at most T families. Any set of
pairs (each move at most as often as its variables allow) whose defects sum to zero on every
equality row and stay within every ≤ row's slack is a change Δ with x + Δ consistent: one more
dataset, refuting every candidate certain value it moves a record out of.

Why pairs: asked over the groups themselves (which records change, any pairing), the question
"one dataset moving as many undecided people as possible" defeats branch and bound on Adult
with 100 LightGBM rounds (no dataset in 30 s over the 5,501 groups the relaxation moves), since
every group's column has a nonzero in every tree. Over pairs at most T trees apart each column
touches at most 2T rows and the relaxation is nearly integral: with every pair at most 6 apart,
one HiGHS branch and bound moved 1,270 of 12,126 open groups in about 6 s (its bound: 1,337).
Each solve here first takes a vertex of the relaxation (interior point and crossover) over the
pairs offered — those at most ``helpers`` apart, which rebalance the rest, and those up to the
solve's distance that move an open candidate — and then branch and bound over the pairs the
vertex uses only: a few thousand instead of tens of thousands (on the same audit, distances 6,
8 and 10 in turn: first solves of 0.6, 1.2 and 3.9 s moving 2,369, 763 and 584 people). Far
pairs make the vertex fractional and branch and bound slow (distance 12: 24 s to a dataset), so
the distances stay small and what no pair reaches is left to :mod:`ppdm.exact.freed`.

Finding the pairs: per family f, a random linear hash h_f(c) = Σ_{r ∈ f} ρ_r c_r (whole ρ_r, so
exact); c_m + c_m' vanishes on f exactly when h_f(c_m) = −h_f(c_m') (a hash collision only adds
a pair whose defect is computed from the rows themselves). The families are cut into T + 1
blocks; a pair differing in at most T families agrees on every family of at least one block
(pigeonhole), so bucketing the moves by their hashes on each block, and by the negated hashes,
meets every such pair. Buckets whose cross product exceeds ``bucket_pairs`` are skipped (fewer
pairs: fewer datasets, never a wrong one). Every dataset is checked against every row in whole
numbers before it is returned; a solve with nothing to show proves nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from ppdm.exact.problem import Rows, change_holds
from ppdm.maxent.constraints.interchangeable import unique_rows


@dataclass(frozen=True)
class PairSettings:
    """``distance``: the most families in which a pair's two moves may fail to cancel (pairs found
    up to it); ``helpers``: pairs at most this far apart are offered to every solve, farther
    ones only when one of their moves refutes something; ``bucket_pairs``: the largest bucket
    cross product enumerated; ``gap``: HiGHS's relative gap per solve."""

    distance: int = 10
    helpers: int = 4
    bucket_pairs: int = 200_000
    gap: float = 0.3


class PairMoves:
    """The pairs of record moves of one component around a consistent dataset ``x`` (module
    docstring). ``families``: per row of ``rows`` (stacked in order), its family; ``var_bounds``:
    per variable, the least and most it holds in any consistent dataset (as far as known)."""

    def __init__(
        self, var_group: np.ndarray, rows: Rows, families: np.ndarray, x: np.ndarray,
        var_bounds: tuple[np.ndarray, np.ndarray] | None = None, settings: PairSettings | None = None, seed: int = 11,
    ) -> None:
        self.settings = settings or PairSettings()
        self.var_group = np.asarray(var_group)
        self.x = np.asarray(x, dtype=np.int64)
        self.rows = rows
        n = len(self.x)
        sizes = np.bincount(self.var_group, weights=self.x).astype(np.int64)
        lo, hi = (np.zeros(n, np.int64), sizes[self.var_group]) if var_bounds is None else var_bounds
        self.out_cap = self.x - np.asarray(lo, dtype=np.int64)
        self.in_cap = np.asarray(hi, dtype=np.int64) - self.x
        A = sp.csr_matrix(sp.vstack([r[0] for r in rows])) if rows else sp.csr_matrix(np.zeros((0, n), dtype=np.int64))
        self.eq = np.concatenate([np.full(r[0].shape[0], r[2] == "eq") for r in rows]) if rows else np.zeros(0, bool)
        b = np.concatenate([r[1] for r in rows]).astype(np.int64) if rows else np.zeros(0, np.int64)
        strict = np.concatenate([r[3] if r[3] is not None else np.zeros(r[0].shape[0], bool) for r in rows]) if rows else np.zeros(0, bool)
        self.slack = np.where(self.eq, 0, b - A @ self.x - strict.astype(np.int64))
        self.move_from, self.move_to = _moves(self.var_group, self.out_cap, self.in_cap)
        A_csc = A.tocsc()
        self.C = sp.csc_matrix(A_csc[:, self.move_to] - A_csc[:, self.move_from])
        H = _family_hashes(sp.csr_matrix(self.C.T), np.asarray(families), seed)
        #: the pairs (moves a < b) and how many families each fails to cancel on
        self.a, self.b, self.far = _near_pairs(H, self.var_group[self.move_from], self.settings)

    @property
    def n_pairs(self) -> int:
        return len(self.a)

    def dataset(self, weight: np.ndarray, seconds: float | None, distance: int | None = None, helpers: int | None = None) -> np.ndarray | None:
        """A consistent dataset from a set of pairs moving much ``weight`` out of the variables
        (per variable: what moving a record out of it refutes). The pairs offered: the helpers
        (at most ``helpers`` apart; default: the settings') and those at most ``distance`` apart
        (default: all found) one of whose moves is weighed.
        First the linear relaxation (interior point, then crossover to a vertex), then branch and
        bound over the pairs that vertex uses: nearly integral where the pairs are near, and a
        few thousand pairs instead of tens of thousands. ``None`` when no pair moves anything
        weighed, nothing is found within ``seconds``, or the set found fails a row."""
        w = np.asarray(weight, dtype=float)
        gain = w[self.move_from[self.a]] + w[self.move_from[self.b]]
        far = self.settings.distance if distance is None else distance
        near = self.settings.helpers if helpers is None else helpers
        offered = np.flatnonzero((self.far <= near) | ((gain > 0) & (self.far <= far)))
        if not (gain[offered] > 0).any():
            return None
        start = time.perf_counter()
        used = self._relaxed(offered, gain[offered], seconds)
        if used is None or not len(used):
            return None
        left = None if seconds is None else seconds - (time.perf_counter() - start)
        if left is not None and left <= 0:
            return None
        z = self._solve(used, gain[used], left)
        if z is None:
            return None
        m, n = len(self.move_from), len(self.x)
        times = np.bincount(self.a[used], weights=z, minlength=m) + np.bincount(self.b[used], weights=z, minlength=m)
        y = self.x + np.bincount(self.move_to, weights=times, minlength=n).astype(np.int64) - np.bincount(self.move_from, weights=times, minlength=n).astype(np.int64)
        if np.array_equal(y, self.x) or not self.holds(y):
            return None
        return y

    def _model(self, pairs: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, sp.csr_matrix, np.ndarray]:
        """The rows over ``pairs``: the defects (rows touched), their lower and upper sides, and
        the capacities (records out of and into each variable) with their limits."""
        m, n, k = len(self.move_from), len(self.x), len(pairs)
        cols = np.arange(k)
        use = sp.csc_matrix((np.ones(2 * k), (np.r_[self.a[pairs], self.b[pairs]], np.r_[cols, cols])), shape=(m, k))
        D = sp.csr_matrix(self.C @ use)
        touched = np.flatnonzero(np.diff(D.indptr))
        out = sp.csr_matrix((np.ones(m), (self.move_from, np.arange(m))), shape=(n, m)) @ use
        into = sp.csr_matrix((np.ones(m), (self.move_to, np.arange(m))), shape=(n, m)) @ use
        cap = sp.csr_matrix(sp.vstack([out, into]))
        limit = np.r_[self.out_cap, self.in_cap].astype(float)
        busy = np.flatnonzero(np.diff(cap.indptr))
        return D[touched], np.where(self.eq[touched], 0.0, -np.inf), self.slack[touched].astype(float), cap[busy], limit[busy]

    def _relaxed(self, pairs: np.ndarray, gain: np.ndarray, seconds: float | None) -> np.ndarray | None:
        """The ``pairs`` a vertex of the linear relaxation maximising ``gain`` uses."""
        D, lo, hi, cap, limit = self._model(pairs)
        eq = lo == hi
        options: dict[str, Any] = {}
        if seconds is not None:
            options["time_limit"] = max(float(seconds), 0.05)
        A_ub = sp.csr_matrix(sp.vstack([D[~eq], cap]))
        res = linprog(-gain, A_ub=A_ub, b_ub=np.r_[hi[~eq], limit], A_eq=D[eq], b_eq=hi[eq], bounds=(0, 1), method="highs-ipm", options=options)  # type: ignore[call-overload]
        if res.x is None:
            return None
        return pairs[res.x > 1e-6]

    def _solve(self, pairs: np.ndarray, gain: np.ndarray, seconds: float | None) -> np.ndarray | None:
        """Branch and bound over ``pairs``: how often each is taken (0 or 1)."""
        D, lo, hi, cap, limit = self._model(pairs)
        cons = [LinearConstraint(D, lo, hi), LinearConstraint(cap, -np.inf, limit)]
        options: dict[str, Any] = {"disp": False, "mip_rel_gap": self.settings.gap}
        if seconds is not None:
            options["time_limit"] = max(float(seconds), 0.05)
        res = milp(-gain, constraints=cons, integrality=np.ones(len(pairs), dtype=np.int64), bounds=Bounds(0, 1), options=options)  # type: ignore[arg-type]
        if res.x is None:
            return None
        return np.rint(res.x).astype(np.int64)

    def holds(self, y: np.ndarray) -> bool:
        """Whether ``y`` is whole, non-negative, keeps every group's size and meets every row."""
        sizes = np.bincount(self.var_group, weights=self.x, minlength=int(self.var_group.max(initial=-1)) + 1)
        if (y < 0).any() or not np.array_equal(np.bincount(self.var_group, weights=y, minlength=len(sizes)), sizes):
            return False
        return change_holds(self.rows, self.x, y)


def _moves(var_group: np.ndarray, out_cap: np.ndarray, in_cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every record move: out of a variable with a record to spare into another of its group
    with room (the variables' indices, from and to)."""
    order = np.argsort(var_group, kind="stable")
    first = np.searchsorted(var_group[order], np.arange(int(var_group.max(initial=-1)) + 2))
    src = np.flatnonzero(out_cap > 0)
    per = first[var_group[src] + 1] - first[var_group[src]]
    pos = np.repeat(first[var_group[src]], per) + np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    u, w = np.repeat(src, per), order[pos]
    keep = (u != w) & (in_cap[w] > 0)
    return u[keep], w[keep]


def _family_hashes(C: sp.csr_matrix, families: np.ndarray, seed: int) -> np.ndarray:
    """Per move (a row of ``C``, its change over the rows) and family, Σ ρ_r c_r over the family's
    rows, with whole random ρ_r (exact in 64 bits for the small coefficients of count rows)."""
    n_fam = int(families.max(initial=-1)) + 1
    rho = np.random.default_rng(seed).integers(1, 2**31, size=C.shape[1])
    R = sp.csr_matrix((rho, (np.arange(C.shape[1]), families)), shape=(C.shape[1], n_fam), dtype=np.int64)
    return np.asarray((sp.csr_matrix(C, dtype=np.int64) @ R).todense(), dtype=np.int64)


def _near_pairs(H: np.ndarray, group: np.ndarray, settings: PairSettings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of moves (a < b, of different groups) cancelling on all but at most
    ``settings.distance`` families, and on how many they do not: bucketed block by block
    (module docstring)."""
    m, n_fam = H.shape
    if m < 2 or n_fam == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0, np.int64)
    found: list[np.ndarray] = []
    for block in np.array_split(np.arange(n_fam), min(settings.distance + 1, n_fam)):
        key = _row_ids(np.r_[H[:, block], -H[:, block]])
        code = _bucket_pairs(key[:m], key[m:], settings.bucket_pairs)
        a, b = code // m, code % m
        keep = (a < b) & (group[a] != group[b])
        a, b = a[keep], b[keep]
        far = np.zeros(len(a), dtype=np.int64)
        for lo in range(0, len(a), 200_000):
            sl = slice(lo, lo + 200_000)
            far[sl] = (H[a[sl]] + H[b[sl]] != 0).sum(axis=1)
        near = far <= settings.distance
        found.append(a[near] * m + b[near])
    pairs = np.unique(np.concatenate(found))
    a, b = pairs // m, pairs % m
    return a, b, (H[a] + H[b] != 0).sum(axis=1).astype(np.int64)


def _row_ids(M: np.ndarray) -> np.ndarray:
    """Each row's number among the distinct rows of ``M``."""
    return unique_rows(M)[1]


def _bucket_pairs(mine: np.ndarray, theirs: np.ndarray, most: int) -> np.ndarray:
    """Codes a · m + b of the pairs with ``mine[a] == theirs[b]`` (buckets whose cross product
    exceeds ``most`` left out)."""
    m = len(mine)
    n_keys = int(max(mine.max(initial=-1), theirs.max(initial=-1))) + 1
    ca = np.bincount(mine, minlength=n_keys)
    cb = np.bincount(theirs, minlength=n_keys)
    ok = (ca > 0) & (cb > 0) & (ca * cb <= most)
    a_idx = np.flatnonzero(ok[mine])
    b_idx = np.flatnonzero(ok[theirs])
    if not len(a_idx) or not len(b_idx):
        return np.zeros(0, np.int64)
    b_sorted = b_idx[np.argsort(theirs[b_idx], kind="stable")]
    b_first = np.searchsorted(theirs[b_sorted], np.arange(n_keys))
    per = cb[mine[a_idx]]
    left = np.repeat(a_idx, per)
    pos = np.repeat(b_first[mine[a_idx]], per) + np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    return left.astype(np.int64) * m + b_sorted[pos]
