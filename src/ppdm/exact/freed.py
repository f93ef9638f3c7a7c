"""Datasets that change only a few groups alike to a candidate's: small solves, many refutations.

Under many boosting rounds with every input known (the insider), a record's class is pinned by
a hundred leaves at once: changing it takes records of other groups that share its leaves in
every round, and the groups that do are the ones *alike* to it (sharing most of its leaves). The
whole problem (tens of thousands of groups, thousands of rows) defeats CP-SAT and branch and
bound on even one such question (no answer in 30 s), yet with every group but the candidate's
K most alike held at a known consistent dataset x, the question is a branch-and-bound solve over
a few hundred counts that HiGHS answers in hundredths of a second (Adult, LightGBM, 100 rounds:
half the candidates refuted with K = 300).

With the other groups held, x + Δ is consistent when Δ keeps every group's size
(Σ_{v ∈ g} Δ_v = 0), every equality (A Δ = 0 on the rows the freed groups touch) and every ≤ row
within its slack (strict rows with one record less: conservative), and 0 ≤ x + Δ ≤ size. Asked to
move the candidate's count (down for a certain value, up for an impossible one) and as many
other open candidates among the freed groups as it can (one Boolean each), a solution refutes
all it moves. Every dataset is checked against every row in whole numbers before it is used;
a question with no solution proves nothing (a larger K, or another x, may still find one).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from ppdm.exact.problem import Rows, change_holds


class FreedGroups:
    """One component's rows around a consistent dataset ``x``, asked with a few groups freed."""

    def __init__(
        self, var_group: np.ndarray, sizes: np.ndarray, rows: Rows, x: np.ndarray,
        var_bounds: tuple[np.ndarray, np.ndarray] | None = None, movable: np.ndarray | None = None,
    ) -> None:
        self.var_group = np.asarray(var_group)
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.x = np.asarray(x, dtype=np.int64)
        n_groups = len(self.sizes)
        #: per variable, the least and most it can hold in any consistent dataset (as far as known)
        lo, hi = (np.zeros(len(self.x), np.int64), self.sizes[self.var_group]) if var_bounds is None else var_bounds
        self.lo: np.ndarray = np.asarray(lo, dtype=np.int64)
        self.hi: np.ndarray = np.asarray(hi, dtype=np.int64)
        fixed = np.bincount(self.var_group, weights=(self.lo < self.hi), minlength=n_groups) == 0
        #: groups worth freeing: some count can move, and the caller does not rule them out
        self.movable = ~fixed if movable is None else movable & ~fixed
        self.rows = rows
        n = len(self.x)
        blocks = rows or [(sp.csr_matrix(np.zeros((0, n), dtype=np.int64)), np.zeros(0, np.int64), "eq", None, [])]
        A = sp.csr_matrix(sp.vstack([r[0] for r in blocks]))
        b = np.concatenate([r[1] for r in blocks]).astype(np.int64)
        eq = np.concatenate([np.full(r[0].shape[0], r[2] == "eq") for r in blocks])
        strict = np.concatenate([r[3] if r[3] is not None else np.zeros(r[0].shape[0], bool) for r in blocks])
        self.A_csc = A.tocsc()
        self.slack = np.where(eq, 0, b - A @ self.x - strict.astype(np.int64))
        self.eq = eq
        # groups × rows: how often a group's variables enter each row (its leaves)
        G = sp.csr_matrix((np.ones(n), (self.var_group, np.arange(n))), shape=(len(self.sizes), n))
        incidence = sp.csr_matrix(G @ sp.csr_matrix(abs(A)).T)
        incidence.data = (incidence.data != 0).astype(np.float64)
        self.H = incidence
        self.HT = self.H.T.tocsc()
        order = np.argsort(self.var_group, kind="stable")
        self._order = order
        self._first = np.searchsorted(self.var_group[order], np.arange(len(self.sizes) + 1))

    def alike(self, group: int, k: int, partners: np.ndarray | None = None) -> np.ndarray:
        """The ``k`` movable groups sharing the most rows with ``group`` (itself first); with
        ``partners`` (a mask of groups: those that can move the other way), half of them
        partners and half not, so that a change has records to trade."""
        shared = np.asarray((self.H @ self.HT[:, group]).todense()).ravel()
        shared[~self.movable] = -1.0
        shared[group] = np.inf
        if partners is None:
            return _top(shared, k)
        mine = np.where(partners, -2.0, shared)
        theirs = np.where(partners, shared, -2.0)
        theirs[group] = -2.0
        return np.r_[_top(mine, k - k // 2), _top(theirs, k // 2)]

    def change(
        self, groups: np.ndarray, target: np.ndarray, down: bool, wanted: list[np.ndarray], seconds: float | None,
    ) -> np.ndarray | None:
        """A consistent dataset changing only ``groups``' counts, in which the variables ``target``
        (one candidate's) hold at least one record fewer (``down``) or more than in ``x``, going
        beyond as many ``wanted`` candidates (lists of variables, each to move the same way) as
        it can; ``None`` when there is none within ``seconds`` (or it fails a row)."""
        vars_ = np.concatenate([self._order[self._first[g] : self._first[g + 1]] for g in groups])
        k = len(vars_)
        local = np.full(len(self.x), -1)
        local[vars_] = np.arange(k)
        sub = sp.csr_matrix(self.A_csc[:, vars_])
        touched = np.flatnonzero(np.diff(sub.indptr))
        sub = sub[touched]
        eq = self.eq[touched]
        grp = np.searchsorted(np.sort(groups), self.var_group[vars_])
        Gs = sp.csr_matrix((np.ones(k), (grp, np.arange(k))), shape=(len(groups), k))
        sign = -1.0 if down else 1.0
        flags = [w for w in wanted if len(w) and (local[w] >= 0).all()]
        m = len(flags)
        # sign · Σ Δ_w ≥ 1 when f_w = 1, free when f_w = 0: sign · Σ Δ_w − (1 + R_w) f_w ≥ −R_w, with
        # R_w the most sign · Σ Δ_w can fall (for a drop asked: records it can gain, and conversely)
        cols = local[np.concatenate(flags)] if m else np.zeros(0, int)
        which = np.repeat(np.arange(m), [len(w) for w in flags])
        F = sp.csr_matrix((np.full(len(cols), sign), (which, cols)), shape=(m, k))
        fall = (self.hi - self.x) if down else (self.x - self.lo)
        R = np.bincount(which, weights=fall[vars_][cols], minlength=m).astype(float)
        T = sp.csr_matrix((np.full(len(target), sign), (np.zeros(len(target), int), local[target])), shape=(1, k))
        width = k + m

        def pad(M: sp.csr_matrix) -> sp.csr_matrix:
            return sp.csr_matrix(sp.hstack([M, sp.csr_matrix(np.zeros((M.shape[0], m)))]))

        cons = [LinearConstraint(pad(Gs), 0, 0), LinearConstraint(pad(T), 1, np.inf)]
        if len(touched):
            lo = np.where(eq, 0.0, -np.inf)
            cons.append(LinearConstraint(pad(sub), lo, self.slack[touched].astype(float)))
        if m:
            cons.append(LinearConstraint(sp.csr_matrix(sp.hstack([F, -sp.diags(1.0 + R, format="csr")])), -R, np.inf))
        bounds = Bounds(np.r_[self.lo[vars_] - self.x[vars_], np.zeros(m)].astype(float), np.r_[self.hi[vars_] - self.x[vars_], np.ones(m)].astype(float))
        options: dict[str, Any] = {"disp": False, "mip_rel_gap": 0.5}
        if seconds is not None:
            options["time_limit"] = max(float(seconds), 0.05)
        res = milp(np.r_[np.zeros(k), -np.ones(m)], constraints=cons, integrality=np.ones(width, dtype=np.int64), bounds=bounds, options=options)  # type: ignore[arg-type]
        if res.x is None:
            return None
        y = self.x.copy()
        y[vars_] += np.rint(res.x[:k]).astype(np.int64)
        if (y < 0).any() or not self.holds(y):
            return None
        return y

    def most(self, groups: np.ndarray, weight: np.ndarray, seconds: float | None) -> np.ndarray | None:
        """A consistent dataset changing only ``groups``' counts that moves the most weight out of
        the variables (``weight`` per variable: what each record leaving it refutes), none asked
        for in particular: one linear objective, no Boolean per candidate. ``None`` when none
        moves anything weighed within ``seconds`` (or it fails a row)."""
        vars_ = np.concatenate([self._order[self._first[g] : self._first[g + 1]] for g in groups])
        w = np.asarray(weight, dtype=float)[vars_]
        if not (w > 0).any():
            return None
        k = len(vars_)
        sub = sp.csr_matrix(self.A_csc[:, vars_])
        touched = np.flatnonzero(np.diff(sub.indptr))
        grp = np.searchsorted(np.sort(groups), self.var_group[vars_])
        Gs = sp.csr_matrix((np.ones(k), (grp, np.arange(k))), shape=(len(groups), k))
        cons = [LinearConstraint(Gs, 0, 0)]
        if len(touched):
            cons.append(LinearConstraint(sub[touched], np.where(self.eq[touched], 0.0, -np.inf), self.slack[touched].astype(float)))
        bounds = Bounds((self.lo[vars_] - self.x[vars_]).astype(float), (self.hi[vars_] - self.x[vars_]).astype(float))
        options: dict[str, Any] = {"disp": False, "mip_rel_gap": 0.5}
        if seconds is not None:
            options["time_limit"] = max(float(seconds), 0.05)
        res = milp(w, constraints=cons, integrality=np.ones(k, dtype=np.int64), bounds=bounds, options=options)  # type: ignore[arg-type]
        if res.x is None:
            return None
        delta = np.rint(res.x).astype(np.int64)
        if not (delta[w > 0] < 0).any():
            return None
        y = self.x.copy()
        y[vars_] += delta
        if (y < 0).any() or not self.holds(y):
            return None
        return y

    def holds(self, y: np.ndarray) -> bool:
        """Whether ``y`` meets every row and group size (``x`` does), in whole numbers."""
        if not np.array_equal(np.bincount(self.var_group, weights=y, minlength=len(self.sizes)).astype(np.int64), self.sizes):
            return False
        return change_holds(self.rows, self.x, y)


def _top(score: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores (at least 0 — the others are ruled out), largest first."""
    k = min(k, int((score >= 0).sum()))
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    top = np.argpartition(-score, k - 1)[:k]
    return top[np.argsort(-score[top], kind="stable")]
