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
from ppdm.maxent.constraints.interchangeable import same_columns, unique_rows

__all__ = ["member_bounds", "merge_classes", "unique_rows"]


def merge_classes(problem: CountProblem, truth: np.ndarray | None) -> tuple[CountProblem, np.ndarray, np.ndarray | None]:
    """The problem over classes of interchangeable groups, each group's class, and the truth summed.

    A variable's kind: its column and label (:func:`~ppdm.maxent.constraints.interchangeable.same_columns`);
    a group's class: the same kinds, as many of each (the same again, over the kinds' counts)."""
    A, _, _, _ = problem.stacked()
    rng = np.random.default_rng(2024)
    _, var_kind = same_columns(sp.csr_matrix(A), problem.var_label, rng)
    n_kinds = int(var_kind.max(initial=0)) + 1
    kinds = sp.coo_matrix((np.ones(problem.n_vars), (var_kind, problem.var_group)), shape=(n_kinds, problem.n_groups))  # entries in the variables' order
    rep, class_of = same_columns(kinds, np.bincount(problem.var_group, minlength=problem.n_groups), rng)
    sizes = np.bincount(class_of, weights=problem.sizes).astype(np.int64)
    keep = np.isin(problem.var_group, rep)
    keep &= rep[class_of[problem.var_group]] == problem.var_group
    cols = np.flatnonzero(keep)
    merged = CountProblem(sizes, class_of[problem.var_group[cols]], problem.var_label[cols], problem.n_labels)
    for r in problem.rows:
        merged.add(CountRows(r.name, r.A[:, cols], r.b, r.sense, r.row_names, strict=r.strict))
    class_truth = None
    if truth is not None:
        key = class_of[problem.var_group].astype(np.int64) * n_kinds + var_kind
        target = key[cols]
        order = np.argsort(target)
        pos = order[np.searchsorted(target[order], key)]
        class_truth = np.bincount(pos, weights=truth, minlength=len(cols)).astype(np.int64)
    return merged, class_of, class_truth


def member_bounds(class_bounds: ExactBounds, class_of: np.ndarray, sizes: np.ndarray) -> ExactBounds:
    """Each group's bounds from its class's (see the module docstring)."""
    n_k = class_bounds.sizes[class_of][:, None]
    n_g = np.asarray(sizes, dtype=np.int64)[:, None]
    low = [np.maximum(0, b[class_of] - (n_k - n_g)) for b in (class_bounds.min_lo, class_bounds.min_hi)]
    high = [np.minimum(n_g, b[class_of]) for b in (class_bounds.max_lo, class_bounds.max_hi)]
    out = ExactBounds(np.asarray(sizes, dtype=np.int64), low[0], low[1], high[0], high[1], class_bounds.method, class_bounds.seconds)
    out.stats = class_bounds.stats | {"classes": len(class_bounds.sizes)}
    return out
