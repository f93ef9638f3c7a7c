"""Datasets a few records away from a known one, each going beyond one open bound: small solves.

When many open bounds can each be passed but not together (they all need the same scarce
record — on Adult's rule set a one-record group whose value must change for any of ~200
candidates to be refuted), a solve that maximises how many are passed at once settles one or two
per solve. The dataset passing one of them usually differs from the reference (the real records)
in a few records only, and a few records cannot break a ≤ row with more slack than they can
move: with at most R records changed, a row whose slack is at least R times its coefficients'
spread holds whatever they do. Dropping those rows leaves the equalities and the tight rows, over
which many groups are interchangeable; merged into classes (as :mod:`ppdm.exact.classes`), the
question "R records at most, the target's count below its seen minimum (or above its seen
maximum)" is a branch-and-bound solve on a few thousand variables instead of the component's
model — and its answer, split back over the class's members, refutes the same bound for every
member of the class. Every dataset built is checked against all the rows in whole numbers before
it is used; a failed local question proves nothing (it only limits how far the search looked).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from ppdm.exact.options import SearchOptions


class Neighbourhood:
    """The rows that ``records`` changed records (the budget R) could break, over classes of
    groups alike in them."""

    def __init__(
        self, var_group: np.ndarray, var_label: np.ndarray, sizes: np.ndarray,
        rows: list[tuple[sp.csr_matrix, np.ndarray, str, np.ndarray | None, list[str]]], x_ref: np.ndarray,
        records: int = SearchOptions.local_records,
    ) -> None:
        self.records = records
        kept, rhs, le = [], [], []
        for A, b, sense, strict, _ in rows:
            if sense == "eq":
                kept.append(A)
                rhs.append(np.zeros(A.shape[0]))
                le.append(np.zeros(A.shape[0], bool))
                continue
            slack = b - A @ x_ref - (0 if strict is None else strict.astype(np.int64))
            spread = np.maximum(_row_max(A), 0) - np.minimum(_row_min(A), 0)
            tight = slack < records * spread
            kept.append(A[tight])
            rhs.append(slack[tight].astype(float))
            le.append(np.ones(int(tight.sum()), bool))
        A = sp.vstack(kept).tocsc() if kept else sp.csc_matrix((0, len(x_ref)))
        self.rhs, self.le = np.concatenate(rhs) if rhs else np.zeros(0), np.concatenate(le) if le else np.zeros(0, bool)
        # a variable's kind: its label and its columns in the kept rows; a class: groups with the same kinds
        rng = np.random.default_rng(11)
        proj = np.asarray(A.T @ rng.random((A.shape[0], 2))) if A.shape[0] else np.zeros((len(x_ref), 2))
        _, kind = np.unique(np.round(np.c_[proj, var_label], 9), axis=0, return_inverse=True)
        kind = kind.ravel()
        h = rng.random((int(kind.max(initial=0)) + 1, 2))
        sig = np.zeros((len(sizes), 2))
        np.add.at(sig, var_group, h[kind])
        _, group_class = np.unique(np.round(sig, 9), axis=0, return_inverse=True)
        self.group_class = group_class.ravel()
        col_key = self.group_class[var_group].astype(np.int64) * (int(kind.max(initial=0)) + 1) + kind
        keys, self.col_of_var = np.unique(col_key, return_inverse=True)
        self.col_of_var = self.col_of_var.ravel()
        n_cols = len(keys)
        first = np.zeros(n_cols, dtype=np.intp)
        first[self.col_of_var[::-1]] = np.arange(len(x_ref))[::-1]
        self.col_class = self.group_class[var_group[first]]
        self.col_label = var_label[first]
        self.A = sp.csr_matrix(A[:, first]) if A.shape[0] else sp.csr_matrix((0, n_cols))
        self.X = np.bincount(self.col_of_var, weights=x_ref, minlength=n_cols)
        class_size = np.bincount(self.group_class, weights=sizes)
        self.U = class_size[self.col_class]
        self.var_group, self.x_ref, self.n_cols = var_group, x_ref, n_cols
        self.var_key = self.var_group.astype(np.int64) * n_cols + self.col_of_var
        self.var_order = np.argsort(self.var_key)

    def change(self, group: int, label: int, need: int, minimum: bool, seconds: float | None) -> np.ndarray | None:
        """Per class column, the change (in records) of a dataset within ``records`` records of the
        reference whose count of ``label`` in ``group``'s class moves by ``need`` (down for a
        minimum, up for a maximum); ``None`` when there is none or time ran out."""
        k, n = self.n_cols, self.n_cols
        cls = self.group_class[group]
        mine = (self.col_class == cls).astype(float)
        target = mine * (self.col_label == label)
        C = sp.csr_matrix((np.ones(k), (self.col_class, np.arange(k))))  # class balance
        D = sp.hstack([sp.identity(k), -sp.identity(k)]).tocsr()  # P − M
        cons = [LinearConstraint(C @ D, 0, 0), LinearConstraint(np.ones((1, 2 * n)), 0, 2 * self.records)]
        if self.A.shape[0]:
            lo = np.where(self.le, -np.inf, self.rhs)
            cons.append(LinearConstraint(self.A @ D, lo, self.rhs))
        sign = -1.0 if minimum else 1.0
        cons.append(LinearConstraint(sp.csr_matrix(sign * np.r_[target, -target]), need, np.inf))
        upper = np.r_[self.U - self.X, self.X]
        options = {"disp": False} | ({} if seconds is None else {"time_limit": max(float(seconds), 0.05)})
        bounds = Bounds(np.zeros(2 * n), upper)
        relaxed = milp(np.ones(2 * n), constraints=cons, integrality=np.zeros(2 * n), bounds=bounds, options=options)
        if relaxed.status == 2:
            return None  # not even the relaxation: no such dataset near the reference
        if relaxed.x is not None and np.abs(relaxed.x - np.rint(relaxed.x)).max(initial=0) < 1e-9:
            res = relaxed
        else:
            res = milp(np.ones(2 * n), constraints=cons, integrality=np.ones(2 * n), bounds=bounds, options=options)
        if res.x is None:
            return None
        x = np.rint(res.x).astype(np.int64)
        return x[:n] - x[n:]

    def spread(self, delta: np.ndarray, group: int, label: int, minimum: bool) -> np.ndarray | None:
        """A dataset from the class changes ``delta``, ``group`` taking its class's change of
        ``label`` first (records leaving ``label`` for a minimum, arriving for a maximum); the
        other changes go to any member with records to give. ``None`` if that cannot be done."""
        x = self.x_ref.copy()
        for cls in np.unique(self.col_class[delta != 0]):
            cols = np.flatnonzero((self.col_class == cls) & (delta != 0))
            out = np.repeat(cols[delta[cols] < 0], -delta[cols][delta[cols] < 0])
            into = np.repeat(cols[delta[cols] > 0], delta[cols][delta[cols] > 0])
            if len(out) != len(into):
                return None
            first = cls == self.group_class[group]
            if first:  # pair the target's moves first: out of ``label`` into another (or the reverse)
                lab_out, lab_in = self.col_label[out] == label, self.col_label[into] == label
                out = out[np.argsort(~lab_out if minimum else lab_out, kind="stable")]
                into = into[np.argsort(lab_in if minimum else ~lab_in, kind="stable")]
            for a, b in zip(out.tolist(), into.tolist()):
                wants = first and (self.col_label[a] == label) == minimum and (self.col_label[b] == label) != minimum
                va = self._var(group, a, x) if wants else None
                if va is None or x[va] <= 0:
                    va = self._var(None, a, x)
                if va is None:
                    return None
                vb = self._var(int(self.var_group[va]), b, x)
                if vb is None:
                    return None
                x[va] -= 1
                x[vb] += 1
        return x

    def _var(self, group: int | None, col: int, x: np.ndarray) -> int | None:
        """A variable of class column ``col`` with a record in ``x`` (of ``group`` when given;
        for an arriving record, ``group``'s variable whatever its count)."""
        if group is not None:
            key = group * self.n_cols + col
            pos = np.searchsorted(self.var_key[self.var_order], key)
            if pos < len(self.var_order) and self.var_key[self.var_order[pos]] == key:
                return int(self.var_order[pos])
            return None
        cand = np.flatnonzero((self.col_of_var == col) & (x > 0))
        return int(cand[0]) if len(cand) else None


def _row_max(A: sp.csr_matrix) -> np.ndarray:
    return np.asarray(A.max(axis=1).todense()).ravel() if A.shape[0] else np.zeros(0)


def _row_min(A: sp.csr_matrix) -> np.ndarray:
    return np.asarray(A.min(axis=1).todense()).ravel() if A.shape[0] else np.zeros(0)
