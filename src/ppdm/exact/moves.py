"""Cheap consistent datasets near a known one: two records of two groups change their unknowns
at once so that every equality row keeps its value and every inequality keeps within its slack.

From one consistent dataset x (the real records), a *move* of group g takes one of its records
from variable u to variable u' of the same group: the rows change by d = A[:, u'] − A[:, u]. Two
moves of different groups whose changes cancel on the equality rows (matched by a random
projection, then checked exactly) and fit the inequalities' slack give another consistent
dataset, x + d1 + d2; a single move that does so on its own is one too. Each such dataset refutes
certainty for both groups without a solver call (what the integer search would otherwise find
one solve at a time). Used before the search; every dataset it reports is checked row by row.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ppdm.exact.options import SearchOptions

#: The most entries (rows × variables) of the dense copy of the rows the moves work on.
DENSE_LIMIT = 50_000_000


def paired_moves(
    var_group: np.ndarray, rows: list[tuple[sp.csr_matrix, np.ndarray, str, np.ndarray | None, list[str]]], x: np.ndarray,
    wanted: np.ndarray, deadline: float | None = None, partners: int = SearchOptions.move_partners,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Consistent datasets one or two record moves away from ``x``, as (variables, changes).

    ``wanted``: per variable, whether moving a record *out* of it is worth a dataset (the
    candidates still to refute). One dataset per wanted source variable at most, after trying at
    most ``partners`` second moves for it.
    """
    import time

    A = sp.vstack([r[0] for r in rows]).tocsc() if rows else sp.csc_matrix((0, len(x)))
    if A.shape[0] * A.shape[1] > DENSE_LIMIT:
        return []
    b = np.concatenate([r[1] for r in rows]) if rows else np.zeros(0)
    eq = np.concatenate([np.full(r[0].shape[0], r[2] == "eq") for r in rows]) if rows else np.zeros(0, bool)
    strict = np.concatenate([r[3] if r[3] is not None else np.zeros(r[0].shape[0], bool) for r in rows]) if rows else np.zeros(0, bool)
    Ax = A @ x
    slack = np.where(eq, 0, b - Ax - strict)  # strict rows: keep a record of room (conservative)
    # every move: a record out of a variable with records into another variable of its group
    order = np.argsort(var_group, kind="stable")
    first = np.searchsorted(var_group[order], np.arange(int(var_group.max(initial=-1)) + 2))
    src = np.flatnonzero(x > 0)
    per = (first[var_group[src] + 1] - first[var_group[src]])
    pos = np.repeat(first[var_group[src]], per) + np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    u, v = np.repeat(src, per), order[pos]
    keep = u != v
    u, v = u[keep], v[keep]
    rng = np.random.default_rng(7)
    proj = rng.standard_normal(A.shape[0]) * eq
    key = np.round((proj @ A)[v] - (proj @ A)[u], 8)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    sorted_idx = np.argsort(key, kind="stable")
    keys_sorted = key[sorted_idx]
    done = np.zeros(len(x), dtype=bool)
    D = A.toarray().astype(np.int32)
    for i, m in enumerate(np.flatnonzero(wanted[u])):
        if done[u[m]]:
            continue
        if deadline is not None and i % 64 == 0 and time.perf_counter() > deadline:
            break
        d1 = D[:, v[m]] - D[:, u[m]]
        if key[m] == 0 and _fits(d1, eq, slack):
            out.append((np.array([u[m], v[m]]), np.array([-1, 1])))
            done[u[m]] = True
            continue
        lo, hi = np.searchsorted(keys_sorted, -key[m] - 1e-7), np.searchsorted(keys_sorted, -key[m] + 1e-7)
        for p in sorted_idx[lo:hi][:partners]:
            if var_group[u[p]] == var_group[u[m]]:
                continue
            d = d1 + D[:, v[p]] - D[:, u[p]]
            if _fits(d, eq, slack):
                out.append((np.array([u[m], v[m], u[p], v[p]]), np.array([-1, 1, -1, 1])))
                done[u[m]] = True
                break
    return out


def _fits(d: np.ndarray, eq: np.ndarray, slack: np.ndarray) -> bool:
    return bool(np.all(np.where(eq, d == 0, d <= slack)))
