"""Proved members and non-members: the membership bits every consistent training set agrees on.

A candidate is a *proved member* when every training set consistent with the published counts
(every 0/1 vector ``b`` with ``lo ≤ A b ≤ hi``, :mod:`ppdm.maxent.constraints.membership_rows`)
holds it, a *proved non-member* when none does; the rest are undecided. Three steps, each sound:

1. **Propagation** over the rows (0/1 coefficients and whole bounds; a boosting round's real
   rows, whose coefficients are the candidates' gradients and hessians, alike), to a fixed point: a row whose
   upper bound its proved members already reach proves its other candidates non-members (a leaf of
   count 0 proves everyone reaching it a non-member); a row that needs all its undecided candidates
   to reach its lower bound proves them members (a leaf whose count equals the candidates reaching
   it proves each a member). A candidate a bagged tree's draws rule out (its cells are empty in
   too many bagged trees, see ``positive_trees``) is a non-member first.
2. **The relaxation's pinned candidates** (:func:`_lp_backbone`): those the linear relaxation of
   the rows fixes, proved at once by one integer programme that finds no consistent training set
   flipping any of them.
3. **The backbone search** (integer programming, HiGHS through :func:`scipy.optimize.milp`), over
   all trees jointly: from one consistent ``b``, ask for another that flips at least one of the
   candidates seen with one value only; every answer marks the candidates it flips as undecided,
   and "infeasible" proves every one still seen with one value. Within a time budget: what is left
   when it runs out stays undecided, never proved.

The truth (the real training set) is one consistent ``b``: a proof is never wrong when the
population is as declared (complete or not).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from ppdm.defaults import WHOLE
from ppdm.errors import InfeasibleError, check_options
from ppdm.maxent.constraints.membership_rows import MembershipRows, column_patterns
from ppdm.maxent.solvers.bound_propagation import PropagationOptions, RowBlock, propagate_bounds
from ppdm.progress import report

__all__ = ["BITS", "MembershipProof", "ProofOptions", "prove_membership", "propagate"]

#: Step 1 runs to its fixed point: each round decides at least one candidate or ends.
BITS = PropagationOptions(rounds=1 << 62, integer=True)


@dataclass(frozen=True)
class ProofOptions:
    """Settings of :func:`prove_membership`: the time budget after propagation (seconds; 0:
    propagation alone), one programme's limit within it, and whether to run the full backbone
    search after the linear programme's verified claims (``search``)."""

    time_limit: float = 30.0
    solve_limit: float = 30.0
    search: bool = True

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


@dataclass
class MembershipProof:
    """``state[i]``: 1 proved member, 0 proved non-member, -1 undecided; ``by_propagation``: how
    many were proved by step 1, ``by_lp`` by the linear programme's claims verified; ``settled``: whether the search finished (every undecided
    candidate is then truly undecided: both values occur in consistent training sets);
    ``seconds``."""

    state: np.ndarray
    by_propagation: int
    by_lp: int
    settled: bool
    seconds: float


def prove_membership(rows: MembershipRows, options: ProofOptions | None = None, non_members: np.ndarray | None = None) -> MembershipProof:
    """Prove who is and who is not a member (see the module docstring). ``non_members``: per
    candidate, whether the attacker knows it is no training record (its bit starts at 0, so a
    leaf's count bounds the members among the other candidates reaching it)."""
    options = options or ProofOptions()
    start = time.perf_counter()
    state = np.full(rows.n_candidates, -1, dtype=np.int8)
    if non_members is not None:
        state[np.asarray(non_members, dtype=bool)] = 0
    if rows.min_drawn > 0:
        state[rows.positive_trees < rows.min_drawn] = 0  # drawn by too few bagged trees to be a member
    state = propagate(rows.A, rows.lo, rows.hi, state)
    by_propagation = int((state >= 0).sum())
    settled = not (state < 0).any() or _down_closed(rows, state)
    deadline = start + options.time_limit
    if not settled and options.time_limit > 0:
        state = _lp_backbone(rows, state, deadline, options.solve_limit)
        settled = not (state < 0).any()
    by_lp = int((state >= 0).sum()) - by_propagation
    if not settled and options.time_limit > 0 and options.search:
        state, settled = _backbone(rows, state, deadline, options.solve_limit)
    return MembershipProof(state, by_propagation, by_lp, settled, time.perf_counter() - start)


def propagate(A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, state: np.ndarray, options: PropagationOptions = BITS) -> np.ndarray:
    """Step 1 to a fixed point (a copy of ``state`` with what the rows force): bound propagation
    (:func:`~ppdm.maxent.solvers.bound_propagation.propagate_bounds`) over the 0/1 bits, in
    integers when ``A``'s coefficients are whole. Raises :class:`InfeasibleError` naming the
    first row no 0/1 vector meets, or a candidate the rows need both a member and not."""
    state = np.asarray(state).copy()
    whole = A.nnz == 0 or bool(np.all(A.data == np.round(A.data)))
    matrix = sp.csr_matrix(A, dtype=np.int64 if whole else float)
    found = propagate_bounds([RowBlock(matrix, lo, hi)], (state == 1).astype(np.int64), (state != 0).astype(np.int64), options)
    if found.empty is not None:
        i = found.empty
        raise InfeasibleError(f"candidate {i}: the published counts need it both a member and not", [f"candidate {i}"])
    positive, negative = A.maximum(0), A.minimum(0)  # a round's gradient rows have coefficients of both signs
    low, high = found.lo.astype(float), found.hi.astype(float)
    least, most = positive @ low + negative @ high, positive @ high + negative @ low
    bad = np.flatnonzero((lo > most + WHOLE) | (hi < least - WHOLE))
    if bad.size:
        r = int(bad[0])
        raise InfeasibleError(
            f"row {r}: no training set meets the published counts (needs {lo[r] - least[r]:g} more of {most[r] - least[r]:g} candidates, room {hi[r] - least[r]:g})",
            [f"row {r}"],
        )
    state[(found.hi == 0) & (state < 0)] = 0
    state[(found.lo == 1) & (state < 0)] = 1
    return state


def _down_closed(rows: MembershipRows, state: np.ndarray) -> bool:
    """Whether propagation has settled every undecided candidate already: the rows over them
    count members with non-negative coefficients up to a bound, none asks for at least one (an
    incomplete population's counts are upper bounds), and each candidate alone fits every row.
    Then no candidate is in every consistent training set (leaving all of them out is one) and
    each is in one (itself alone), so no search can prove more."""
    free = state < 0
    A = rows.A[:, free].tocoo()  # over the candidates themselves: their patterns are not needed here
    if A.nnz == 0:
        return True
    shift = rows.A @ (state == 1).astype(float)
    live = np.unique(A.row)
    lo, hi = rows.lo - shift, rows.hi - shift
    if (A.data < 0).any() or (lo[live] > WHOLE).any() or (hi[live] < -WHOLE).any():
        return False
    return bool((hi[A.row] - A.data >= -WHOLE).all())  # one candidate alone fits each of its rows


def _reduced(rows: MembershipRows, state: np.ndarray) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """The undecided candidates, each one's *pattern* (candidates reaching the same rows are
    interchangeable: a consistent training set stays one when two of them swap, so a pattern's
    candidates are proved together or not at all), and the rows over the patterns' member counts
    ``k_g ∈ [0, w_g]`` (``w``: the pattern's candidates; the proved members' share taken off the bounds)."""
    free = np.flatnonzero(state < 0)
    shift = rows.A @ (state == 1).astype(float)
    pattern, of_free, w = column_patterns(rows.A[:, free].tocsr())
    live = np.asarray(pattern.getnnz(axis=1)) > 0
    return free, of_free, pattern[live].tocsr(), (rows.lo - shift)[live], (rows.hi - shift)[live], w


def _lp_backbone(rows: MembershipRows, state: np.ndarray, deadline: float, solve_limit: float) -> np.ndarray:
    """The candidates the linear relaxation pins (the face of the maximum-entropy rows, as in
    :mod:`ppdm.maxent.solvers.face`), each proved by one integer programme that finds no consistent
    training set flipping any of them. The relaxation over the patterns' counts ``k`` (see
    :func:`_reduced`), from patterns ``U``: maximise ``Σ_{g∈U} s_g`` with ``s_g ≤ k_g``,
    ``s_g ≤ w_g − k_g``, ``lo ≤ A k ≤ hi``; a pattern with ``s_g > 0`` is not pinned; repeat over
    the rest until the optimum is 0: they are pinned, at 0 or ``w_g``."""
    free, of_free, A, lo, hi, w = _reduced(rows, state)
    unknown = np.ones(len(w), dtype=bool)
    k = None
    while unknown.any():
        report("proving membership: linear programmes over the patterns' counts", detail=f"{int(unknown.sum()):,} patterns open")
        found = _interior(A, lo, hi, w, unknown, deadline, solve_limit)
        if found is None:
            return state
        k, s = found
        moved = unknown & (s > PINNED)
        if not moved.any():
            break
        unknown &= ~moved
    if k is None or not unknown.any():
        return state
    value = (k > 0.5 * w).astype(np.int64)
    while unknown.any():
        report("proving membership: integer programmes flipping a candidate", detail=f"{int(unknown.sum()):,} patterns open")
        found_k, infeasible = _solve(A, lo, hi, w, *_flips(unknown, value, w), deadline, solve_limit)
        if infeasible:
            return _proved(state, free, of_free, unknown, value)
        if found_k is None:
            return state
        unknown &= found_k == value * w
    return state


def _flips(single: np.ndarray, value: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, float]]:
    """The objective and the row asking a consistent training set to flip at least one candidate
    of the ``single`` patterns (those seen at one value only): a pattern seen at 0 flips ``k_g``
    candidates, one seen at ``w_g`` flips ``w_g − k_g``; the flips' sum is ``flip·k + offset``."""
    flip = np.where(single, np.where(value == 1, -1.0, 1.0), 0.0)
    offset = float(w[single & (value == 1)].sum())
    return -flip, (flip, 1.0 - offset)


def _proved(state: np.ndarray, free: np.ndarray, of_free: np.ndarray, decided: np.ndarray, value: np.ndarray) -> np.ndarray:
    """``state`` with the candidates of the ``decided`` patterns set to their pattern's value."""
    out = state.copy()
    mine = decided[of_free]
    out[free[mine]] = value[of_free][mine]
    return out


#: A pattern's slack ``min(k, w − k)`` above this in the relaxation means it is not pinned.
PINNED = 1e-6


def _interior(
    A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, w: np.ndarray, unknown: np.ndarray, deadline: float, solve_limit: float,
) -> tuple[np.ndarray, np.ndarray] | None:
    """One relaxation of :func:`_lp_backbone` (HiGHS's interior point method): ``k`` and ``s``, or
    ``None`` out of time."""
    left = min(deadline - time.perf_counter(), solve_limit)
    if left <= 0:
        return None
    n = A.shape[1]
    eye = sp.identity(n, format="csr")
    pad = sp.csr_matrix((A.shape[0], n))
    rows_ks = sp.hstack([A, pad]).tocsr()
    eq = np.abs(hi - lo) < WHOLE
    A_ub = sp.vstack([sp.hstack([-eye, eye]), sp.hstack([eye, eye]), rows_ks[~eq], -rows_ks[~eq]]).tocsr()
    b_ub = np.r_[np.zeros(n), w, hi[~eq], -lo[~eq]]
    A_eq = rows_ks[eq] if eq.any() else None
    b_eq = lo[eq] if eq.any() else None
    c = np.r_[np.zeros(n), -unknown.astype(float)]
    bounds = np.c_[np.zeros(2 * n), np.r_[w, 0.5 * w]]
    problem = {"c": c, "A_ub": A_ub, "b_ub": b_ub, "A_eq": A_eq, "b_eq": b_eq, "bounds": bounds, "method": "highs-ipm", "options": {"time_limit": left}}
    x = _linprog_x(problem) if A_ub.nnz < FORK_ENTRIES else _linprog_within(problem, left)
    return None if x is None else (x[:n], x[n:])


#: A relaxation with at least this many matrix entries is solved in a child process stopped at the
#: deadline: HiGHS's interior point method checks its time limit between iterations only, and one
#: iteration over a hundred boosting rounds' real-valued rows (Adult 5k, LightGBM) took seconds, the
#: whole solve past its limit by thousands.
FORK_ENTRIES = 500_000


def _linprog_x(problem: dict[str, Any]) -> np.ndarray | None:
    res = linprog(**problem)
    return None if res.status != 0 or res.x is None else np.asarray(res.x)


def _linprog_within(problem: dict[str, Any], seconds: float) -> np.ndarray | None:
    """:func:`_linprog_x` in a forked child, ``None`` when it has not answered within ``seconds``
    (the child is then stopped)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    mine, theirs = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_answer, args=(problem, theirs), daemon=True)
    child.start()
    theirs.close()
    try:
        x = mine.recv() if mine.poll(seconds) else None
    except EOFError:  # the child died without an answer
        x = None
    if child.is_alive():
        child.terminate()
    child.join()
    mine.close()
    return x


def _answer(problem: dict[str, Any], pipe: Any) -> None:
    pipe.send(_linprog_x(problem))


def _backbone(rows: MembershipRows, state: np.ndarray, deadline: float, solve_limit: float) -> tuple[np.ndarray, bool]:
    """Step 3: the undecided candidates every consistent training set agrees on, within ``deadline``
    (over the patterns' counts: a pattern is seen at 0 when some consistent set leaves one of its
    candidates out, at 1 when it takes one in)."""
    free, of_free, A, lo, hi, w = _reduced(rows, state)
    seen = np.zeros((len(w), 2), dtype=bool)
    first, _ = _solve(A, lo, hi, w, np.zeros(len(w)), None, deadline, solve_limit)
    if first is None:
        return state, False
    while True:
        seen[:, 0] |= first < w
        seen[:, 1] |= first > 0
        single = seen.sum(axis=1) == 1
        if not single.any():
            return state, True
        value = np.argmax(seen, axis=1)
        found, infeasible = _solve(A, lo, hi, w, *_flips(single, value, w), deadline, solve_limit)
        if found is None:
            if infeasible:
                return _proved(state, free, of_free, single, value), True
            return state, False
        first = found


def _solve(
    A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, w: np.ndarray, c: np.ndarray, at_least: tuple[np.ndarray, float] | None,
    deadline: float, solve_limit: float,
) -> tuple[np.ndarray | None, bool]:
    """Whole counts ``0 ≤ k ≤ w`` meeting the rows (and ``at_least``: ``f·k ≥ bound``), minimising
    ``c·k``, or ``None``; and whether the programme was proved infeasible (not merely out of time)."""
    left = deadline - time.perf_counter()
    if left <= 0:
        return None, False
    constraints = [LinearConstraint(A, lo, hi)]
    if at_least is not None:
        constraints.append(LinearConstraint(sp.csr_matrix(at_least[0][None, :]), at_least[1], np.inf))
    n = A.shape[1]
    res = milp(c, integrality=np.ones(n, dtype=np.int64), bounds=Bounds(0, w), constraints=constraints, options={"time_limit": min(left, solve_limit), "disp": False})
    if res.status == 2:
        return None, True
    if res.x is None:
        return None, False
    k = np.round(res.x).astype(np.int64)
    x = A @ k
    if np.any(x < lo - WHOLE) or np.any(x > hi + WHOLE) or (at_least is not None and at_least[0] @ k < at_least[1] - WHOLE):
        return None, False  # not a consistent training set after rounding: learn nothing from it
    return k, False
