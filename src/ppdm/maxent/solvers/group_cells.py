"""One cell per group: a factored problem whose groups reach several cells, each cell its own group's.

The forest driver (:mod:`ppdm.maxent.solvers.forest_solve`) needs every (merged) group to reach
one cell: the dual is then Σ_C ρ_C log Σ_{t ∈ C} m_t e^{−(Aᵀλ)_t} + λ·b, with bound propagation
and the face's linear programme on it. Under the insider threat with the sensitive attribute an
input of the trees, a group reaches one joint leaf per value of the sensitive attribute that
routes it elsewhere, so it reaches several cells; but when the trees count records with bootstrap
multiplicities, every block carries its group's multiplicity vector and no other group reaches
it. Then the group's cells together are one cell: paper 000 §3's p(u | q) over the group's slots
is p(t | q) = m_t e^{−(Aᵀλ)_t} / Z_q over the union of its cells' types, which is the forest
dual's form with the group as the cell and its weight as the cell's mass. The problem is the same,
not an approximation: :func:`by_group` only reorders the types.

Without it, those problems went to the general driver (:func:`~ppdm.maxent.solvers.dual.minimize_dual`),
which forms the whole Hessian at every Newton step: with 100 trees of depth 8 over 3,000 records
and a six-valued sensitive input, about 8,600 rows and a nearly dense Hessian, factorised by
SuperLU at every one of dozens of steps chasing types to 0 (no answer in 20 minutes; joined: 41 s).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ppdm.maxent.solvers.factored_presolve import FactoredReduced


def exclusive_cells(red: FactoredReduced) -> bool:
    """Whether every cell is reached by exactly one merged group (so that :func:`by_group` applies)."""
    return bool(red.access.nnz == red.n_cells and (np.bincount(red.access.indices, minlength=red.n_cells) == 1).all())


def by_group(red: FactoredReduced) -> FactoredReduced:
    """The same problem with each merged group's cells joined into one cell (see the module
    docstring); needs :func:`exclusive_cells`. Types are reordered group by group, every other
    field kept."""
    if not exclusive_cells(red):
        raise ValueError("a cell is reached by several groups: joining each group's cells would change the problem")
    access = sp.csr_matrix(red.access)
    sizes = np.diff(red.cell_start)
    cells = access.indices  # group by group
    count = sizes[cells]
    starts = red.cell_start[cells]
    order = np.repeat(starts - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    n = access.shape[0]
    per_group = np.bincount(np.repeat(np.arange(n), np.diff(access.indptr)), weights=count, minlength=n).astype(np.intp)
    return FactoredReduced(
        class_of_group=red.class_of_group,
        weights=red.weights,
        access=sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n))), shape=(n, n)),
        types=red.types[order],
        cell_start=np.r_[0, np.cumsum(per_group)].astype(red.cell_start.dtype),
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
