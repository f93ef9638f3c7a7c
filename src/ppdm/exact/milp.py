"""Many open bounds per integer solve: branch and bound (HiGHS, through ``scipy.optimize.milp``).

The exact audit asks 2 · groups · values optimisation questions; one solve answers many of them
at once (the backbone idea of docs/exact_disclosure.md). For a set of open bounds — a count c_p
of pair p (a group and a sensitive value) whose minimum is seen at ``min_hi`` but not proved, or
whose maximum is seen at ``max_lo`` — a Boolean f_p per bound says "this dataset goes beyond
it": c_p ≤ min_hi − 1, or c_p ≥ max_lo + 1, written linearly as

* c_p + (n_g − min_hi + 1) f_p ≤ n_g (a minimum; f_p = 0 leaves c_p ≤ n_g, always true),
* −c_p + (max_lo + 1) f_p ≤ 0 (a maximum),

and the solve maximises Σ f_p over every consistent dataset. When the solver proves fewer than
one can be passed (its bound on Σ f_p below 1), every open bound of the set is settled at what
was seen; otherwise the dataset found (checked row by row
in whole numbers before it is used) moves every bound it goes beyond. On rule sets HiGHS's
LP-based branch and bound answers these questions within seconds where CP-SAT needs minutes
(benchmarks/README.md, the exact section): the rows are long sums with 0/1 coefficients, whose
relaxation is tight.

A *strict* ≤ row (the tree's tie rule: ``A x ≤ b − 1`` unless its negative part is 0) takes one
Boolean e: negative part ≤ M e and A x + e ≤ b, with M the negative part's largest value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from ppdm.exact.options import SearchOptions
from ppdm.exact.problem import Rows


@dataclass
class Outcome:
    """What one solve returned: a consistent dataset when one was found (``None`` otherwise), how
    many open bounds it goes beyond, and whether none can be passed (proved: the solver's bound
    on the number passed is below 1)."""

    x: np.ndarray | None
    beyond: int
    proved: bool


class MilpModel:
    """One component's rows as a mixed-integer program over whole counts, asked about open bounds.

    ``var_group``: each variable's group (0..groups−1 of the component); ``sizes``: records per
    group; ``pair_of_var``: each variable's pair (group, value); ``gap``: the relative gap at which
    a solve stops (:attr:`SearchOptions.milp_gap`; proofs do not depend on it, see :meth:`beyond`)."""

    def __init__(
        self, var_group: np.ndarray, sizes: np.ndarray, rows: Rows, pair_of_var: np.ndarray, n_pairs: int, gap: float = SearchOptions.milp_gap,
    ) -> None:
        self.gap = gap
        n = len(var_group)
        self.n, self.sizes, self.var_group = n, np.asarray(sizes, dtype=np.int64), np.asarray(var_group)
        G = sp.csr_matrix((np.ones(n), (var_group, np.arange(n))), shape=(len(sizes), n))
        eq_A, eq_b, ub_A, ub_b, strict_rows = [G], [self.sizes], [], [], []
        for A, b, sense, strict, _ in rows:
            if sense == "eq":
                eq_A.append(A)
                eq_b.append(b)
                continue
            st = np.zeros(A.shape[0], dtype=bool) if strict is None else strict
            ub_A.append(A[~st])
            ub_b.append(b[~st])
            if st.any():
                strict_rows.append((A[st], b[st]))
        self.eq = (sp.vstack(eq_A).tocsr(), np.concatenate(eq_b).astype(float))
        self.ub = (sp.vstack(ub_A).tocsr(), np.concatenate(ub_b).astype(float)) if ub_A else None
        self.strict = _strict_block(strict_rows, self.sizes[var_group], n) if strict_rows else None
        self.pairs = sp.csr_matrix((np.ones(n), (pair_of_var, np.arange(n))), shape=(n_pairs, n))
        self.check_rows = rows

    @property
    def n_extra(self) -> int:
        return 0 if self.strict is None else self.strict[0].shape[1] - self.n

    def holds(self, x: np.ndarray) -> bool:
        """Whether whole counts ``x`` are a consistent dataset (exact integer arithmetic)."""
        from ppdm.exact.problem import CountRows

        if (x < 0).any() or not np.array_equal(np.bincount(self.var_group, weights=x, minlength=len(self.sizes)).astype(np.int64), self.sizes):
            return False
        return all(bool(CountRows("check", A, b, sense, names, strict=st).holds(x).all()) for A, b, sense, st, names in self.check_rows)

    def beyond(self, pairs: np.ndarray, group_size: np.ndarray, minimum: np.ndarray, target: np.ndarray, seconds: float | None) -> Outcome:
        """Maximise how many of the open bounds a consistent dataset goes beyond.

        Per open bound: its pair, its group's size, whether it is a minimum (else a maximum) and
        the count to reach (``min_hi − 1`` or ``max_lo + 1``)."""
        k, n, e = len(pairs), self.n, self.n_extra
        group_size = np.asarray(group_size, dtype=float)
        sign = np.where(minimum, 1.0, -1.0)
        P = sp.diags(sign) @ self.pairs[pairs]
        coef = np.where(minimum, group_size - target, target).astype(float)
        rhs = np.where(minimum, group_size, 0.0)
        width = n + e + k
        cons = [LinearConstraint(_pad(self.eq[0], width), self.eq[1], self.eq[1])]
        if self.ub is not None:
            cons.append(LinearConstraint(_pad(self.ub[0], width), -np.inf, self.ub[1]))
        if self.strict is not None:
            cons.append(LinearConstraint(_pad(self.strict[0], width), -np.inf, self.strict[1]))
        flags = sp.hstack([P, sp.csr_matrix((k, e)), sp.diags(coef)]).tocsr()
        cons.append(LinearConstraint(flags, -np.inf, rhs))
        upper = np.r_[self.sizes[self.var_group].astype(float), np.ones(e + k)]
        c = np.r_[np.zeros(n + e), -np.ones(k)]
        options = {"mip_rel_gap": self.gap, "disp": False}
        if seconds is not None:
            options["time_limit"] = max(float(seconds), 0.05)
        res = milp(c, constraints=cons, integrality=np.ones(width), bounds=Bounds(np.zeros(width), upper), options=options)
        # the number passed is whole: a proved bound below 1 (objective above −1) means none can be
        bound = getattr(res, "mip_dual_bound", None)
        proved = res.status == 0 and bound is not None and np.isfinite(bound) and bound > -1 + 1e-6
        if res.x is None:
            return Outcome(None, 0, proved)
        x = np.rint(res.x[:n]).astype(np.int64)
        if not self.holds(x):  # a solver's rounding never passes for a dataset
            return Outcome(None, 0, False)
        counts = np.asarray(self.pairs[pairs] @ x).ravel()
        went = np.where(minimum, counts <= target, counts >= target)
        return Outcome(x, int(went.sum()), proved and not went.any())


def _pad(A: sp.csr_matrix, width: int) -> sp.csr_matrix:
    return sp.csr_matrix((A.data, A.indices, A.indptr), shape=(A.shape[0], width))


def _strict_block(blocks: list[tuple[sp.csr_matrix, np.ndarray]], upper: np.ndarray, n: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """Strict rows with one Boolean e each: neg(x) − M e ≤ 0 and A x + e ≤ b (columns n.. are the e)."""
    A = sp.vstack([a for a, _ in blocks]).tocsr()
    b = np.concatenate([b for _, b in blocks]).astype(float)
    r = A.shape[0]
    neg = sp.csr_matrix(-A.multiply(A < 0))
    big = np.asarray(neg @ upper).ravel() + 1.0
    e = sp.identity(r, format="csr")
    top = sp.hstack([neg, -sp.diags(big)])
    bottom = sp.hstack([A, e])
    return sp.vstack([top, bottom]).tocsr(), np.r_[np.zeros(r), b]
