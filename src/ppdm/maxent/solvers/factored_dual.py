"""The Lagrange dual of the factored maximum-entropy problem (:mod:`ppdm.maxent.solvers.factored`).

With scores s_t = log m_t − (Aᵀλ)_t per type, a cell C (a block's types of one tag) has
log g_C = logsumexp_{t ∈ C} s_t, a (merged) group q has log Z_q = logsumexp_{C ∈ cells(q)} log g_C,
and the maximiser of the Lagrangian is p(t | q) = π(C | q) · w(t | C) with π(C | q) = g_C / Z_q
and w(t | C) = e^{s_t} / g_C. Then

    D(λ) = Σ_q W_q log Z_q + λ·b,       ∇D = b − A P,     P(t) = ρ_C · w(t | C),
    ∇²D = A diag(P) Aᵀ − Σ_q W_q (A p_q)(A p_q)ᵀ,  A p_q = Σ_C π(C | q) y_C,  y_C = A w(· | C),

where ρ_C = Σ_q W_q π(C | q) is the mass of cell C: everything is a reduction over the types, the
cells or the (group, cell) pairs, O(nnz(reach) + types · rows per type) per evaluation. In the
Hessian the second term is BᵀB with B = Π Y (groups × rows, Π the groups' √W_q π(C | q)) or
Yᵀ K Y with K = Πᵀ Π (cells × cells), whichever sparse product costs less: O(Σ_q nnz(B_q)²), a
few dozen non-zeros per group, never a dense groups × rows block. It is returned dense on up to
``dense_rows`` rows (:class:`~ppdm.maxent.solvers.newton.NewtonOptions`) and sparse beyond; beyond
``dense_max`` rows the Newton driver uses only its products with vectors and a bound on its diagonal. The class implements
:class:`ppdm.maxent.solvers.newton.MatrixFreeDual`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ppdm.maxent.solvers.factored_presolve import FactoredReduced
from ppdm.maxent.solvers.newton import NewtonOptions

if TYPE_CHECKING:  # pragma: no cover
    from ppdm.maxent.rows.factored_problem import FactoredProblem

@dataclass
class FactoredState:
    """The dual at λ: value, residuals A P − b, P per live type, w(t | C) per live type,
    π(C | q) per (group, cell) pair of ``access``."""

    value: float
    residual: np.ndarray
    P: np.ndarray
    within: np.ndarray
    share: np.ndarray


class FactoredDual:
    """D(λ), its gradient and Hessian on a presolved factored problem."""

    def __init__(self, red: FactoredReduced, options: NewtonOptions | None = None) -> None:
        self.red = red
        options = NewtonOptions() if options is None else options
        self.dense_rows = options.dense_rows
        self.AT = sp.csr_matrix(red.A.T)
        self.cell = red.cell_of_type
        self.cell_starts = red.cell_start[:-1]
        access = red.access
        self.pair_cell = access.indices.astype(np.intp)
        self.pair_starts = access.indptr[:-1]
        self.group_of_pair = np.repeat(np.arange(access.shape[0]), np.diff(access.indptr))
        self.pair_weight = red.weights[self.group_of_pair]
        self.one_hot = sp.csr_matrix((np.ones(len(self.cell)), (np.arange(len(self.cell)), self.cell)), shape=(len(self.cell), red.n_cells))
        self.by_cell = sp.csr_matrix(self.one_hot.T)
        # which product forms the groups' term (its patterns do not change): chosen at the first call under "auto"
        self._by_groups: bool | None = {"auto": None, "groups": True, "cells": False}[options.group_term]
        self.le = red.le
        self.lower = np.where(red.le, 0.0, -np.inf)
        self.upper = np.full(len(red.b), np.inf)

    def state(self, lam: np.ndarray) -> FactoredState:
        s = self.red.log_base - self.AT @ lam
        top = np.maximum.reduceat(s, self.cell_starts)
        e = np.exp(s - top[self.cell])
        z = np.add.reduceat(e, self.cell_starts)
        within = e / z[self.cell]
        log_g = (top + np.log(z))[self.pair_cell]
        group_top = np.maximum.reduceat(log_g, self.pair_starts)
        ez = np.exp(log_g - group_top[self.group_of_pair])
        zs = np.add.reduceat(ez, self.pair_starts)
        share = ez / zs[self.group_of_pair]
        mass = np.bincount(self.pair_cell, weights=self.pair_weight * share, minlength=self.red.n_cells)
        P = mass[self.cell] * within
        residual = self.red.A @ P - self.red.b
        value = float(self.red.weights @ (group_top + np.log(zs)) + lam @ self.red.b)
        return FactoredState(value, residual, P, within, share)

    def fun_and_grad(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        s = self.state(lam)
        return s.value, -s.residual

    def hessian(self, state: FactoredState, rows: np.ndarray) -> np.ndarray | sp.csr_matrix:
        """∇²D on ``rows``: A_a diag(P) A_aᵀ less the groups' term (:meth:`group_term`), by
        sparse products only; a dense array on at most ``dense_rows`` rows."""
        A, AT = self._rows(rows)
        H = sp.csr_matrix(_scale_columns(A, state.P) @ AT - self.group_term(state, AT))
        return H.toarray() if len(rows) <= self.dense_rows else H

    def _rows(self, rows: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """The rows ``rows`` of A and their transpose (types × rows), both CSR; all of them kept."""
        if len(rows) == self.red.A.shape[0]:
            return self.red.A, self.AT
        A = sp.csr_matrix(self.red.A[rows])
        return A, sp.csr_matrix(A.T)

    def group_term(self, state: FactoredState, AT: sp.csr_matrix) -> sp.csr_matrix:
        """Σ_q W_q (A p_q)(A p_q)ᵀ on the rows of ``AT`` (types × rows), as a sparse matrix: BᵀB
        with B = Π Y (groups × rows, B_q = √W_q Σ_C π(C | q) y_C) or Yᵀ K Y with K = Πᵀ Π (cells ×
        cells), whichever costs fewer operations (:func:`_by_groups_cheaper`, decided at the first
        call: the patterns stay) or as ``NewtonOptions.group_term`` says, with Y (cells × rows) formed from ``AT`` without transposing."""
        Y = sp.csr_matrix(self.by_cell @ _scale_rows(AT, state.within))
        Pi = self.group_shares(state)
        B = sp.csr_matrix(Pi @ Y)
        if self._by_groups is None:
            self._by_groups = _by_groups_cheaper(B, sp.csr_matrix(Pi.T @ Pi), np.diff(Y.indptr))
        if self._by_groups:
            return sp.csr_matrix(sp.csr_matrix(B.T) @ B)
        return sp.csr_matrix(sp.csr_matrix(Y.T) @ (sp.csr_matrix(Pi.T @ Pi) @ Y))

    def cell_rows(self, state: FactoredState, A: sp.csr_matrix) -> sp.csr_matrix:
        """Y (rows of ``A`` × cells): column C is y_C = A w(· | C)."""
        return sp.csr_matrix(_scale_columns(A, state.within) @ self.one_hot)

    def group_shares(self, state: FactoredState) -> sp.csr_matrix:
        """Π (groups × cells): √W_q π(C | q)."""
        access = self.red.access
        return sp.csr_matrix((state.share * np.sqrt(self.pair_weight), access.indices, access.indptr), shape=access.shape)

    def hess_vec(self, state: FactoredState, v: np.ndarray) -> np.ndarray:
        """∇²D v without forming ∇²D: with u = Aᵀv, m_C = Σ_{t∈C} w_t u_t and s_q = Σ_C π(C | q) m_C,
        A (P ⊙ u − w ⊙ r_{C(t)}), r_C = Σ_q W_q π(C | q) s_q. O(nnz(A) + nnz(reach))."""
        u = self.AT @ v
        m = np.add.reduceat(state.within * u, self.cell_starts)
        s = np.add.reduceat(state.share * m[self.pair_cell], self.pair_starts)
        r = np.bincount(self.pair_cell, weights=self.pair_weight * state.share * s[self.group_of_pair], minlength=self.red.n_cells)
        return np.asarray(self.red.A @ (state.P * u - state.within * r[self.cell]))

    def hess_diag(self, state: FactoredState) -> np.ndarray:
        """An upper bound on ∇²D's diagonal, for preconditioning: (A∘A) P less Σ_C ρ²_C Y_rC² with
        ρ²_C = Σ_q W_q π(C | q)² and Y = A w (· | C). The groups' cross terms between cells are left
        out; with the rows' coefficients non-negative they only add to what is subtracted."""
        A = self.red.A
        squared = A.multiply(A).tocsr()
        Y = _scale_columns(sp.csr_matrix(A), state.within) @ self.one_hot
        rho2 = np.bincount(self.pair_cell, weights=self.pair_weight * state.share**2, minlength=self.red.n_cells)
        return np.asarray(squared @ state.P - Y.multiply(Y) @ rho2).ravel()

    def project(self, lam: np.ndarray) -> np.ndarray:
        return np.clip(lam, self.lower, self.upper)


def _by_groups_cheaper(B: sp.csr_matrix, K: sp.csr_matrix, per_cell: np.ndarray) -> bool:
    """Whether BᵀB (B groups × rows) costs fewer operations than Yᵀ K Y (K cells × cells, Y cells ×
    rows with ``per_cell`` non-zeros in each cell's row): Σ_q nnz(B_q)² against Σ over K's
    entries (C, C') of nnz(y_C)·nnz(y_C'). The second wins when many groups share the same cells
    (a tree's leaves reached by many groups); the first when each group has cells of its own (a
    bootstrap forest's joint leaves)."""
    per_cell = per_cell.astype(float)
    pattern = sp.csr_matrix((np.ones(K.nnz), K.indices, K.indptr), shape=K.shape)
    return float(np.square(np.diff(B.indptr).astype(float)).sum()) <= float(per_cell @ (pattern @ per_cell))


def _scale_rows(M: sp.csr_matrix, v: np.ndarray) -> sp.csr_matrix:
    """diag(v) · M in O(nnz)."""
    return sp.csr_matrix((M.data * np.repeat(v, np.diff(M.indptr)), M.indices, M.indptr), shape=M.shape)


def _scale_columns(A: sp.csr_matrix, v: np.ndarray) -> sp.csr_matrix:
    """A · diag(v) in O(nnz)."""
    return sp.csr_matrix((A.data * v[A.indices], A.indices, A.indptr), shape=A.shape)


def entropy_and_marginal(problem: FactoredProblem, red: FactoredReduced, dual: FactoredDual, state: FactoredState) -> tuple[float, np.ndarray]:
    """The entropy relative to the base measure and P(label | q) per original group."""
    n_labels = problem.n_labels
    within, share = state.within, state.share
    by_label = np.bincount(dual.cell * n_labels + red.type_label, weights=within, minlength=red.n_cells * n_labels)
    Pi = sp.csr_matrix((share, red.access.indices, red.access.indptr), shape=red.access.shape)
    merged = np.asarray(Pi @ by_label.reshape(red.n_cells, n_labels))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(within > 0, within * (np.log(np.where(within > 0, within, 1.0)) - red.log_base), 0.0)
        h_cell = np.add.reduceat(terms, dual.cell_starts)
        pair = np.where(share > 0, share * (np.log(np.where(share > 0, share, 1.0)) + h_cell[dual.pair_cell]), 0.0)
    per_group = np.add.reduceat(pair, dual.pair_starts)
    entropy = -float(red.weights @ per_group)
    marginal = np.zeros((problem.n_groups, n_labels))
    free = red.class_of_group >= 0
    marginal[free] = merged[red.class_of_group[free]]
    if problem.pinned is not None and (~free).any():
        pinned = problem.pinned[~free]
        marginal[np.flatnonzero(~free), problem.type_label[pinned]] = 1.0
        entropy += float(problem.weights[~free] @ problem.base[pinned])
    return entropy, marginal


def possible_labels(problem: FactoredProblem, red: FactoredReduced, live: np.ndarray) -> np.ndarray:
    """Per original group, the labels (sensitive cells) of the types it may still take: groups ×
    labels, boolean. ``live`` marks the presolved problem's types not proved empty; a pinned group
    has its own type's label alone. A label outside this set has probability 0 in every
    distribution meeting the rows, whatever a solver that stopped early estimates."""
    n_labels = problem.n_labels
    cell = red.cell_of_type
    by_label = np.bincount(cell * n_labels + red.type_label, weights=live.astype(float), minlength=red.n_cells * n_labels)
    merged = np.asarray(red.access @ by_label.reshape(red.n_cells, n_labels)) > 0
    out = np.zeros((problem.n_groups, n_labels), dtype=bool)
    free = red.class_of_group >= 0
    out[free] = merged[red.class_of_group[free]]
    if problem.pinned is not None and (~free).any():
        out[np.flatnonzero(~free), problem.type_label[problem.pinned[~free]]] = True
    return out
