"""The rows centred cell by cell: the same rows for every distribution with the cells' masses, fewer non-zeros."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ppdm.maxent.solvers.cell_centring import cell_pairs, centred_rows


def _cells_and_rows(seed: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Rows over types grouped in cells of 1–7 types, as a forest's are: in each (row, cell) either
    most types hold one multiplicity (a tree whose path does not read the unknown value), or a few
    hold different ones, or none."""
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 8, 60)
    cell_start = np.r_[0, np.cumsum(size)]
    n_rows, n_types = 40, int(cell_start[-1])
    dense = np.zeros((n_rows, n_types))
    for c, k in enumerate(size):
        types = np.arange(cell_start[c], cell_start[c + 1])
        for r in range(n_rows):
            kind = rng.integers(3)
            if kind == 0:  # most types share one value
                chosen = types[rng.random(k) < 0.85]
                dense[r, chosen] = rng.integers(1, 4)
            elif kind == 1:  # mixed values
                dense[r, types] = rng.integers(0, 3, k)
    return sp.csr_matrix(dense), cell_start, rng.random(len(size)) + 0.5


def test_the_centred_rows_say_what_the_rows_say_for_every_distribution_with_the_cells_masses() -> None:
    for seed in range(5):
        A, cell_start, rho = _cells_and_rows(seed)
        centred = centred_rows(A, cell_start, rho)
        assert centred.A.nnz < A.nnz  # some pairs were centred, and centring never adds non-zeros
        cell = np.repeat(np.arange(len(rho)), np.diff(cell_start))
        rng = np.random.default_rng(seed + 10)
        for _ in range(3):  # any P whose cells carry their masses
            share = rng.random(A.shape[1])
            P = share / np.bincount(cell, weights=share)[cell] * rho[cell]
            assert np.allclose(centred.A @ P, A @ P - centred.shift, atol=1e-12)
        difference = (A - centred.A).toarray()  # M E: one column per cell, repeated over its types
        for c in range(len(rho)):
            block = difference[:, cell_start[c]:cell_start[c + 1]]
            assert np.array_equal(block, np.repeat(block[:, :1], block.shape[1], axis=1))
        assert np.allclose(centred.AT.toarray(), centred.A.toarray().T)
        assert centred.A.has_canonical_format


def test_a_row_is_centred_only_where_its_entries_in_the_cell_are_equal_and_most_types_hold_one() -> None:
    A = sp.csr_matrix(np.array([
        [1.0, 1.0, 1.0, 0.0, 2.0, 2.0, 0.0],  # cell 0 (types 0–3): three of four hold 1 → centred; cell 1: two of three hold 2 → centred
        [1.0, 2.0, 1.0, 0.0, 1.0, 0.0, 0.0],  # cell 0: unequal entries → kept; cell 1: one of three → kept
    ]))
    cell_start = np.array([0, 4, 7])
    centred = centred_rows(A, cell_start, np.array([1.0, 2.0]))
    assert np.array_equal(centred.A.toarray(), [[0, 0, 0, -1, 0, 0, -2], [1, 2, 1, 0, 1, 0, 0]])
    assert np.allclose(centred.shift, [1.0 * 1.0 + 2.0 * 2.0, 0.0])


def test_the_cell_pairs_give_y_without_a_sparse_product() -> None:
    A, cell_start, rho = _cells_and_rows(3)
    C = centred_rows(A, cell_start, rho).A
    cell = np.repeat(np.arange(len(rho)), np.diff(cell_start))
    w = np.random.default_rng(0).random(A.shape[1])
    E = sp.csr_matrix((np.ones(len(cell)), (np.arange(len(cell)), cell)))
    expected = (C @ sp.diags(w) @ E).toarray()
    assert np.allclose(cell_pairs(C, cell, len(rho)).Y(C, w).toarray(), expected, atol=1e-14)
