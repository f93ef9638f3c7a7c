"""Interchangeable groups: groups whose count variables enter every row alike form one class.

Two groups are interchangeable when their variables have the same labels and the same columns
in every published row (the same leaves, classes and sensitive cells of one tree; the same AR
and NAR patterns of a rule set). Then any consistent dataset's counts for the class as a whole
can be split among its members in every way that respects their sizes (they all have every
variable: a complete transportation problem), so a member g of a class K holding between
min_K and max_K records of a value holds between max(0, min_K − (n_K − n_g)) and
min(n_g, max_K) of them, exactly. The search then runs over classes, often far fewer than groups.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ppdm.exact.bounds import ExactBounds
from ppdm.exact.problem import CountProblem, CountRows


def merge_classes(problem: CountProblem, truth: np.ndarray | None) -> tuple[CountProblem, np.ndarray, np.ndarray | None]:
    """The problem over classes of interchangeable groups, each group's class, and the truth summed."""
    A, _, _, _ = problem.stacked()
    rng = np.random.default_rng(2024)
    # a variable's signature: its label and its column (two random projections, exact in practice)
    proj = np.asarray(sp.csr_matrix(A).T @ rng.random((A.shape[0], 2))) if A.shape[0] else np.zeros((problem.n_vars, 2))
    var_sig = np.asarray(np.round(np.c_[proj, problem.var_label], 9))
    _, var_kind = unique_rows(var_sig)
    h = rng.random((int(var_kind.max(initial=0)) + 1, 2))
    group_sig = np.zeros((problem.n_groups, 3))
    np.add.at(group_sig, problem.var_group, np.c_[h[var_kind], np.ones(problem.n_vars)])
    rep, class_of = unique_rows(np.round(group_sig, 9))
    sizes = np.bincount(class_of, weights=problem.sizes).astype(np.int64)
    keep = np.isin(problem.var_group, rep)
    keep &= rep[class_of[problem.var_group]] == problem.var_group
    cols = np.flatnonzero(keep)
    merged = CountProblem(sizes, class_of[problem.var_group[cols]], problem.var_label[cols], problem.n_labels)
    for r in problem.rows:
        merged.add(CountRows(r.name, r.A[:, cols], r.b, r.sense, r.row_names, strict=r.strict))
    class_truth = None
    if truth is not None:
        key = class_of[problem.var_group].astype(np.int64) * (int(var_kind.max(initial=0)) + 1) + var_kind
        target = key[cols]
        order = np.argsort(target)
        pos = order[np.searchsorted(target[order], key)]
        class_truth = np.bincount(pos, weights=truth, minlength=len(cols)).astype(np.int64)
    return merged, class_of, class_truth


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


def member_bounds(class_bounds: ExactBounds, class_of: np.ndarray, sizes: np.ndarray) -> ExactBounds:
    """Each group's bounds from its class's (see the module docstring)."""
    n_k = class_bounds.sizes[class_of][:, None]
    n_g = np.asarray(sizes, dtype=np.int64)[:, None]
    low = [np.maximum(0, b[class_of] - (n_k - n_g)) for b in (class_bounds.min_lo, class_bounds.min_hi)]
    high = [np.minimum(n_g, b[class_of]) for b in (class_bounds.max_lo, class_bounds.max_hi)]
    out = ExactBounds(np.asarray(sizes, dtype=np.int64), low[0], low[1], high[0], high[1], class_bounds.method, class_bounds.seconds)
    out.stats = class_bounds.stats | {"classes": len(class_bounds.sizes)}
    return out
