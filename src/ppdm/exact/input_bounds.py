"""Which blocks of a regressor's sensitive input each group can be in: sound, and exact on request.

Over the rows of :mod:`ppdm.exact.input_rows` (whole numbers x_{g,b} ≥ 0, Σ_b x_{g,b} = n_g, a
count and a value row per leaf), a block b is *possible* for group g when some consistent dataset
puts one of g's records there (x_{g,b} ≥ 1). Every test below only removes blocks no consistent
dataset uses, so the truth always survives and a person's **proved interval** — from the lower
edge of the lowest possible block to the upper edge of the highest — holds in every consistent
dataset:

1. **A record's own leaves** (arc consistency, every (leaf, variable) pair at once): a record of g
   in a leaf of count N with multiplicity m leaves N − m rows to the others, whose coefficients
   lie between the smallest and the largest of the records that can still reach the leaf; its
   value row must be met with them. A leaf of one record (N = m) thus admits only records of its
   published target: a person alone in a leaf is pinned to that leaf's cells.
2. **Bound propagation** over every row with whole-number rounding
   (:func:`ppdm.exact.target_bounds.propagate`, ``integer=True``): a block whose count of g's
   records falls below 1 is impossible; a leaf that others must fill is closed.

   Steps 1 and 2 repeat until nothing moves.
3. With ``exact=True``: **integer programmes** (HiGHS through ``scipy.optimize.milp``), per group
   from its lowest possible block upwards and its highest downwards, each asking for a dataset
   with x_{g,b} ≥ 1 — first its linear relaxation (the same programme, fractional: infeasible already
   removes the block), then the integer programme: infeasible removes the block, feasible proves
   it and every block the dataset uses (as does the truth, a consistent dataset: its blocks need
   no programme). The relaxation alone is not tight (a leaf of one record could hold half a record
   of target 30 and half of 50 for a published 40), and a value row makes each programme a subset
   sum: each gets :data:`PROGRAMME_SECONDS`, all of them a time budget; groups not settled keep
   the bounds of steps 1–2 (``solved`` says which).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ppdm.exact.input_rows import InputRows
from ppdm.exact.options import SearchProgress
from ppdm.exact.target_bounds import PropagationOptions, propagate

#: How far (in records) a coefficient test may miss: float noise of the published values.
SLACK = 1e-9


@dataclass
class InputBounds:
    """Per variable the most records it can hold (``hi``; 0: impossible, proved) and whether a
    consistent dataset was seen using it (``seen``); per group whether the integer programmes
    settled both its ends (``solved``)."""

    hi: np.ndarray
    seen: np.ndarray
    solved: np.ndarray
    passes: int
    programmes: int
    seconds: float

    @property
    def possible(self) -> np.ndarray:
        return self.hi >= 1


def possible_blocks(
    rows: InputRows, *, exact: bool = False, time_limit: float | None = None, groups: np.ndarray | None = None,
    propagation: PropagationOptions | None = None, max_passes: int = 20, progress: Callable[[SearchProgress], None] | None = None,
) -> InputBounds:  # fmt: skip
    """The blocks each group can take (module docstring). ``groups``: the groups whose ends the
    integer programmes settle, in that order (default: every group); ``time_limit``: their seconds;
    ``progress``: called after each group's programmes (phase ``"interval ends"``, the groups done
    of all, those settled and those left)."""
    start = time.monotonic()
    lo, hi = rows.box()
    options = PropagationOptions(integer=True) if propagation is None else propagation
    passes = 0
    while passes < max_passes:
        passes += 1
        before = int((hi >= 1).sum())
        hi = np.where(_own_leaves(rows, hi >= 1), hi, 0.0)
        lo = np.minimum(lo, hi)
        found = propagate(rows.matrix, rows.lower, rows.upper, lo, hi, options)
        lo, hi = found.lo, found.hi
        if int((hi >= 1).sum()) == before:
            break
    seen = np.zeros(rows.n_vars, dtype=bool)
    truth = rows.truth()
    if truth is not None:
        seen |= truth >= 1
    solved = np.zeros(rows.groups.n_groups, dtype=bool)
    programmes = 0
    if exact:
        programmes = _integer_ends(rows, lo, hi, seen, solved, groups, time_limit, progress)
    return InputBounds(hi, seen, solved, passes, programmes, time.monotonic() - start)


def _own_leaves(rows: InputRows, alive: np.ndarray) -> np.ndarray:
    """Variables whose record fits every leaf it reaches, given the others still possible (step 1)."""
    e = rows.entries
    keep = alive.copy()
    if not len(e.var):
        return keep
    on = alive[e.var]
    n_rows = rows.matrix.shape[0]
    cmin = np.full(n_rows, np.inf)
    cmax = np.full(n_rows, -np.inf)
    np.minimum.at(cmin, e.value_row[on], e.unit[on])
    np.maximum.at(cmax, e.value_row[on], e.unit[on])
    r = e.value_row
    w_lo = np.maximum(rows.lower[e.count_row] - e.m, 0.0)  # the other records' rows in the leaf
    w_hi = rows.upper[e.count_row] - e.m
    lo_c, hi_c = np.where(np.isfinite(cmin[r]), cmin[r], 0.0), np.where(np.isfinite(cmax[r]), cmax[r], 0.0)
    rest_min = np.minimum(w_lo * lo_c, w_hi * lo_c)
    rest_max = np.maximum(w_lo * hi_c, w_hi * hi_c)
    own = e.m * e.unit
    room = SLACK
    fits = (w_hi >= -COUNT_ROOM) & (own + rest_max >= rows.lower[r] - room) & (own + rest_min <= rows.upper[r] + room)
    alone = w_hi < 0.5  # nobody else fits: the others' rows are empty
    fits &= ~alone | ((own >= rows.lower[r] - room) & (own <= rows.upper[r] + room))
    bad = e.var[on & ~fits]
    keep[bad] = False
    return keep


#: Relative widening of every row given to HiGHS (whose feasibility tolerance is 1e-7 per row).
WIDEN = 1e-6

#: Seconds one integer programme may take (a value row is a subset sum: some are hard); past it the
#: group's end stays as propagated and the next group gets its turn.
PROGRAMME_SECONDS = 10.0

#: Rows by which a leaf's count may be overrun before a record is refused (stored float counts).
COUNT_ROOM = 1e-6


def _integer_ends(
    rows: InputRows, lo: np.ndarray, hi: np.ndarray, seen: np.ndarray, solved: np.ndarray, groups: np.ndarray | None,
    time_limit: float | None, progress: Callable[[SearchProgress], None] | None = None,
) -> int:  # fmt: skip
    """Step 3: settle each group's lowest and highest possible blocks by integer programmes;
    updates ``hi`` (0 where proved impossible), ``seen`` and ``solved`` in place."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    begin = time.monotonic()
    A = sp.csr_matrix(rows.matrix)
    # ranged rows (a value row's ± τ kept as one row), widened beyond HiGHS's feasibility tolerance:
    # an infeasible answer then holds for the true rows too; a feasible one only widens intervals
    margin = WIDEN * np.maximum(1.0, np.maximum(np.abs(rows.lower), np.abs(rows.upper)))
    constraint = LinearConstraint(A, rows.lower - margin, rows.upper + margin)
    integrality = np.ones(rows.n_vars, dtype=np.int64)
    fractional = np.zeros(rows.n_vars, dtype=np.int64)  # the linear relaxation, same rows
    c = np.zeros(rows.n_vars)
    order = np.arange(rows.groups.n_groups) if groups is None else np.asarray(groups, dtype=np.intp)
    by_group = np.argsort(rows.var_group, kind="stable")
    starts = np.searchsorted(rows.var_group[by_group], np.arange(rows.groups.n_groups + 1))
    programmes = 0
    for done_groups, g in enumerate(order):
        if progress is not None:
            settled = int(solved[order[:done_groups]].sum())
            progress(SearchProgress("interval ends", done_groups, len(order), settled, len(order) - done_groups, time.monotonic() - begin, time_limit))
        members = by_group[starts[g] : starts[g + 1]]
        done = True
        for key, descending in ((rows.first_cell, False), (rows.last_cell, True)):
            ranked = members[np.argsort(-key[members] if descending else key[members], kind="stable")]
            for v in ranked:
                if hi[v] < 1:
                    continue
                if seen[v]:
                    break
                left = None if time_limit is None else time_limit - (time.monotonic() - begin)
                if left is not None and left <= 0:
                    return programmes
                box_lo = lo.copy()
                box_lo[v] = max(box_lo[v], 1.0)
                programmes += 1
                relaxed = milp(c, constraints=constraint, integrality=fractional, bounds=Bounds(box_lo, hi), options={"disp": False})
                if relaxed.status == 2:  # not even fractional records fit: no dataset puts one there
                    hi[v] = 0.0
                    continue
                cap = PROGRAMME_SECONDS if left is None else min(left, PROGRAMME_SECONDS)
                options: Any = {"disp": False, "time_limit": max(cap, 0.05)}
                res = milp(c, constraints=constraint, integrality=integrality, bounds=Bounds(box_lo, hi), options=options)
                if res.status == 0 and res.x is not None:
                    seen[np.asarray(res.x) >= 0.5] = True
                    break
                if res.status == 2:  # infeasible: no consistent dataset puts a record of g there
                    hi[v] = 0.0
                    continue
                done = False  # the time limit or a numerical failure: this end stays as propagated
                break
        solved[g] = done
    return programmes
