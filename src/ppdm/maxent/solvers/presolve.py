"""Presolve for the linear maximum-entropy problem: merge look-alike groups, fix forced zeros.

*Merging.* Two QI groups whose variables appear in exactly the same constraint rows with the
same coefficients have the same optimal p(· | q) (the objective is symmetric in them). For one
tree with leaf and SA constraints the classes of such groups are the leaves (DESIGN.md notes:
the problem "collapses to leaves × classes"); merged groups carry the sum of their weights.
Classes are found by hashing each group's columns with two random projections, vectorised.

*Forced zeros.* An equality with non-negative coefficients whose right-hand side is 0 forces
every variable in it to 0 (a leaf that holds no record of class x); one whose right-hand side
equals the most its groups can put into it forces every variable below the row's maximum
coefficient to 0 (a pure leaf: P(C | Λ) = 1). Fixing them before the dual solve keeps the
optimum off the boundary where the dual multipliers would run to infinity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

TINY = 1e-13


@dataclass
class Reduced:
    """The problem on merged classes of groups, with forced zeros and implied rows removed."""

    class_of_group: np.ndarray  # (G,)
    weights: np.ndarray  # (C,)
    A: sp.csr_matrix  # rows kept × (C·K), coefficients on P(c, x) = W_c p(x | c)
    b: np.ndarray
    le: np.ndarray
    rows: np.ndarray  # indices of the kept rows in the original stacking
    fixed: np.ndarray  # (C, K) bool, variables forced to 0
    n_values: int
    prior: np.ndarray | None = None  # (C, K) log-prior, for proximal steps
    temperature: float = 1.0  # 1 + weight of the proximal term
    upper: np.ndarray | None = None  # per row, an upper bound on the multiplier (elastic rows)


def group_classes(A: sp.csr_matrix, n_groups: int, n_values: int, seed: int = 0, log_base: np.ndarray | None = None) -> np.ndarray:
    """Class of each group: groups with identical columns in ``A`` (and base measure) share one."""
    if A.shape[0] == 0 and log_base is None:
        return np.zeros(n_groups, dtype=np.intp)
    rng = np.random.default_rng(seed)
    projections = rng.standard_normal((A.shape[0], 2))
    signature = np.asarray(A.T @ projections).reshape(n_groups, n_values * 2)
    if log_base is not None:
        signature = np.hstack([signature, np.where(np.isfinite(log_base), log_base, -1e300)])
    return np.unique(signature, axis=0, return_inverse=True)[1].ravel().astype(np.intp)


def merge_groups(
    A: sp.csr_matrix, weights: np.ndarray, n_values: int, classes: np.ndarray | None = None, log_base: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
    """Classes of groups with identical constraint columns (and base measure); their weights and the merged ``A``."""
    if classes is None:
        classes = group_classes(A, len(weights), n_values, log_base=log_base)
    merged_weights = np.bincount(classes, weights=weights)
    first = np.unique(classes, return_index=True)[1]
    columns = (first[:, None] * n_values + np.arange(n_values)).ravel()
    # A's columns are coefficients on P(q, x); a merged class's P(c, x) is their sum.
    return classes, merged_weights, sp.csr_matrix(A[:, columns])


def fix_forced_zeros(
    A: sp.csr_matrix, b: np.ndarray, le: np.ndarray, weights: np.ndarray, n_values: int, impossible: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Variables forced to 0 (C, K) and the rows the fixing makes redundant (bool per row).

    ``impossible`` variables (C, K) are 0 from the start.
    """
    n_classes = len(weights)
    fixed = np.zeros((n_classes, n_values), dtype=bool) if impossible is None else impossible.copy()
    implied = np.zeros(len(b), dtype=bool)
    coo = A.tocoo()
    nonneg_row = np.ones(len(b), dtype=bool)
    np.logical_and.at(nonneg_row, coo.row, coo.data >= 0)
    candidates = ~le & nonneg_row
    for _ in range(8):
        live = ~fixed.ravel()[coo.col] & (coo.data > TINY)
        r, col, val = coo.row[live], coo.col[live], coo.data[live]
        cls = col // n_values
        changed = _zero_rows(r, col, b, candidates & ~implied, fixed, implied)
        changed |= _saturated_rows(r, cls, col % n_values, val, b, candidates & ~implied, weights, fixed, implied)
        if not changed:
            break
    return fixed, implied


def _zero_rows(r: np.ndarray, col: np.ndarray, b: np.ndarray, candidates: np.ndarray, fixed: np.ndarray, implied: np.ndarray) -> bool:
    zero = candidates & (np.abs(b) <= TINY)
    if not zero.any():
        return False
    hit = zero[r]
    flat = fixed.reshape(-1)
    flat[col[hit]] = True
    implied |= zero
    return True


def _saturated_rows(
    r: np.ndarray, cls: np.ndarray, x: np.ndarray, val: np.ndarray, b: np.ndarray,
    candidates: np.ndarray, weights: np.ndarray, fixed: np.ndarray, implied: np.ndarray,
) -> bool:
    mine = candidates[r]  # only candidate rows can saturate: skip the others' entries before sorting
    r, cls, x, val = r[mine], cls[mine], x[mine], val[mine]
    if len(r) == 0:
        return False
    n_values = fixed.shape[1]
    order = np.lexsort((cls, r))
    r, cls, x, val = r[order], cls[order], x[order], val[order]
    pair_start = np.flatnonzero(np.r_[True, (np.diff(r) != 0) | (np.diff(cls) != 0)])
    pair_max = np.maximum.reduceat(val, pair_start)
    pair_row, pair_cls = r[pair_start], cls[pair_start]
    attainable = np.bincount(pair_row, weights=pair_max * weights[pair_cls], minlength=len(b))
    saturated = candidates & (b >= attainable - 1e-12 * np.maximum(1.0, np.abs(b))) & (attainable > TINY)
    if not saturated.any():
        return False
    pair_of_entry = np.repeat(np.arange(len(pair_start)), np.diff(np.r_[pair_start, len(r)]))
    at_max = val >= pair_max[pair_of_entry] - 1e-15
    use_pair = saturated[pair_row]
    pairs_per_class = np.bincount(pair_cls[use_pair], minlength=fixed.shape[0])
    use_entry = use_pair[pair_of_entry] & at_max
    allowed = np.zeros(fixed.size)
    np.add.at(allowed, cls[use_entry] * n_values + x[use_entry], 1.0)
    newly = (allowed.reshape(fixed.shape) < pairs_per_class[:, None]) & (pairs_per_class[:, None] > 0)
    fixed |= newly
    implied |= saturated
    return True


def reduce(
    A: sp.csr_matrix, b: np.ndarray, le: np.ndarray, weights: np.ndarray, n_values: int,
    classes: np.ndarray | None = None, fixed: np.ndarray | None = None, log_base: np.ndarray | None = None,
) -> Reduced:
    """Merge look-alike groups, fix forced zeros and drop the rows they make redundant.

    ``classes`` and ``fixed`` may be given (the sequential solver keeps them across iterations);
    ``log_base`` is the problem's base measure (groups × values; ``-inf``: impossible value).
    """
    classes, merged_weights, merged = merge_groups(A, weights, n_values, classes, log_base)
    base = None
    if log_base is not None:
        first = np.unique(classes, return_index=True)[1]
        base = log_base[first]
    impossible = None if base is None else ~np.isfinite(base)
    found, implied = fix_forced_zeros(merged, b, le, merged_weights, n_values, impossible)
    fixed = found if fixed is None else (fixed | found)
    keep_cols = sp.diags((~fixed.ravel()).astype(float))
    trimmed = sp.csr_matrix(merged @ keep_cols)
    trimmed.eliminate_zeros()
    empty = np.diff(trimmed.indptr) == 0
    rows = np.flatnonzero(~implied & ~empty)
    prior = None if base is None else np.where(np.isfinite(base), base, 0.0)
    return Reduced(classes, merged_weights, trimmed[rows], b[rows], le[rows], rows, fixed, n_values, prior=prior)
