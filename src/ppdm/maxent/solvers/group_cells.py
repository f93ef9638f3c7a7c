"""One cell per group: a factored problem whose groups reach several cells, joined into one cell each.

The forest driver (:mod:`ppdm.maxent.solvers.forest_solve`) needs every (merged) group to reach
one cell: the dual is then Σ_C ρ_C log Σ_{t ∈ C} m_t e^{−(Aᵀλ)_t} + λ·b, with bound propagation
and the face's linear programme on it. Under the insider threat with the sensitive attribute an
input of the trees, a group reaches one joint leaf per value of the sensitive attribute that
routes it elsewhere, so it reaches several cells. Paper 000 §3's p(u | q) over the group's slots
is p(t | q) = m_t e^{−(Aᵀλ)_t} / Z_q over the union of its cells' types, which is the forest
dual's form with the group as the cell and its weight as the cell's mass. When the trees count
records with bootstrap multiplicities, every block carries its group's multiplicity vector and
nearly always no other group reaches it; a cell that several groups reach (two records with the
same multiplicities that some sensitive value routes to the same joint leaf: 16 of 160,444 cells
over 30,000 resampled Adult records, 10 trees) is copied into each of those groups' cells, its
types' columns repeated: the explicit problem's variables are P(q, t), one per group, and a type
shared in the factored form only sums them. The problem is the same, not an approximation:
:func:`by_group` reorders the types and repeats those of shared cells (:func:`copies` counts them).

Without it, those problems went to the general driver (:func:`~ppdm.maxent.solvers.dual.minimize_dual`),
which forms the whole Hessian at every Newton step: with 100 trees of depth 8 over 3,000 records
and a six-valued sensitive input, about 8,600 rows and a nearly dense Hessian, factorised by
SuperLU at every one of dozens of steps chasing types to 0 (no answer in 20 minutes; joined: 41 s).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ppdm.maxent.solvers.factored_presolve import FactoredReduced


def exclusive_cells(red: FactoredReduced) -> bool:
    """Whether every cell is reached by exactly one merged group (:func:`by_group` then copies nothing)."""
    return bool(red.access.nnz == red.n_cells and (np.bincount(red.access.indices, minlength=red.n_cells) == 1).all())


def copies(red: FactoredReduced) -> int:
    """How many types :func:`by_group` adds: those of a cell once for every group past its first
    that reaches it (a cell no group reaches loses its types, which carry no mass)."""
    reached = np.bincount(red.access.indices, minlength=red.n_cells)
    return int((np.diff(red.cell_start) * (reached - 1)).sum())


def by_group(red: FactoredReduced) -> FactoredReduced:
    """The same problem with each merged group's cells joined into one cell (see the module
    docstring): types ordered group by group, those of a cell several groups reach repeated for
    each; every other field kept."""
    access = sp.csr_matrix(red.access)
    order = _joined_order(red)
    n = access.shape[0]
    per_group = np.bincount(np.repeat(np.arange(n), np.diff(access.indptr)), weights=np.diff(red.cell_start)[access.indices], minlength=n)
    return FactoredReduced(
        class_of_group=red.class_of_group,
        weights=red.weights,
        access=sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n))), shape=(n, n)),
        types=red.types[order],
        cell_start=np.r_[0, np.cumsum(per_group.astype(np.intp))].astype(red.cell_start.dtype),
        log_base=red.log_base[order],
        type_label=red.type_label[order],
        A=sp.csr_matrix(red.A[:, order]),
        b=red.b,
        le=red.le,
        rows=red.rows,
        pinned_types=red.pinned_types,
        group_tag=red.group_tag,
        cell_tag=red.group_tag.copy(),
    )


def _joined_order(red: FactoredReduced) -> np.ndarray:
    """Per type of :func:`by_group`'s problem, its type in ``red``: the types of each (group,
    cell) pair of ``access`` in turn."""
    access = sp.csr_matrix(red.access)
    cells = access.indices  # group by group
    count = np.diff(red.cell_start)[cells]
    starts = red.cell_start[cells]
    return np.repeat(starts - np.cumsum(count) + count, count) + np.arange(int(count.sum()))


def joined_reference(red: FactoredReduced, reference: np.ndarray) -> np.ndarray | None:
    """A distribution over ``red``'s types meeting its rows and its groups' weights (``reference``,
    e.g. the training data's) carried to :func:`by_group`'s problem: a cell one group reaches
    keeps its types' mass; the mass of a cell several groups reach is split between them by a
    transportation programme (each group's weight less its own cells' mass, each shared cell's
    mass), within the cell in proportion to its types. ``None`` when no split exists (``reference``
    does not meet the groups' weights)."""
    access = sp.csr_matrix(red.access)
    pair_group = np.repeat(np.arange(access.shape[0]), np.diff(access.indptr))
    pair_cell = access.indices
    mass = np.bincount(red.cell_of_type, weights=reference, minlength=red.n_cells)
    shared = (np.bincount(pair_cell, minlength=red.n_cells) > 1)[pair_cell]
    x = mass[pair_cell].copy()
    if shared.any():
        own = np.bincount(pair_group[~shared], weights=x[~shared], minlength=access.shape[0])
        groups, g_row = np.unique(pair_group[shared], return_inverse=True)
        cells, c_row = np.unique(pair_cell[shared], return_inverse=True)
        k = int(shared.sum())
        programme: dict[str, Any] = {
            "c": np.zeros(k),
            "A_eq": sp.vstack([sp.csr_matrix((np.ones(k), (g_row, np.arange(k))), shape=(len(groups), k)),
                               sp.csr_matrix((np.ones(k), (c_row, np.arange(k))), shape=(len(cells), k))], format="csr"),
            "b_eq": np.r_[red.weights[groups] - own[groups], mass[cells]],
            "bounds": (0.0, None),
        }
        res = linprog(**programme, method="highs")
        if res.status != 0:
            return None
        x[shared] = np.asarray(res.x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(mass[pair_cell] > 0, x / mass[pair_cell], 0.0)
    count = np.diff(red.cell_start)[pair_cell]
    return reference[_joined_order(red)] * np.repeat(share, count)
