"""The randomized-response channel of paper 001 and its inverse on count tensors.

This module describes *how disguised data were collected* (paper 001 §4.1) and how true counts
are estimated from disguised ones (§4.2, equations 3). The rest of :mod:`ppdm.randomize` (the
respondent side, accuracy estimation, privacy) and :mod:`ppdm.learn` (the estimated count source
of RR-ID3, a row below in DESIGN.md's layer table) share it: one implementation of the
estimator, no copy.

The channel
-----------
Each disguised attribute ``i`` with ``k_i`` values has a *lie matrix* ``L_i`` (reported ×
true): a liar reports another value uniformly at random, ``L_i = (J − I)/(k_i − 1)``; for a
binary attribute that is the complement (the related-question model, §3). An attribute reported
truthfully has ``L_i = I``. Two schemes:

* ``"record"`` (paper 001's multivariate randomized response, §4.1): one coin per respondent;
  with probability θ the whole record is true, otherwise *every* disguised attribute lies. On the
  cells of a count tensor the channel is ``M = θ·I + (1 − θ)·(L_1 ⊗ … ⊗ L_d)``.
* ``"attribute"`` (Warner's model applied to each attribute independently): ``M = ⊗_i
  (θ·I + (1 − θ)·L_i)``.

Marginalising a tensor over some attributes gives the same channel on the remaining ones, so
P(E) for any conjunction E is estimated from the disguised counts of E's attributes only.

Inversion (Kronecker structure)
-------------------------------
Every ``L_i`` is diagonalisable, ``L_i = V_i Λ_i V_i⁻¹``, and the Kronecker product of the ``V_i``
diagonalises both schemes' ``M``. So ``M⁻¹ x`` is: apply ``V_i⁻¹`` along each axis of ``x``,
divide cellwise by the eigenvalue tensor (``θ + (1 − θ)·⊗λ_i`` or ``⊗(θ + (1 − θ)λ_i)``), apply
``V_i`` along each axis. Cost O(cells · Σ k_i); no matrix over all cells is ever formed. When
every disguised attribute is binary and the scheme is ``"record"``, ``⊗L_i`` is the complement
``x ↦ x̄`` and ``M⁻¹ x = (θ·x − (1 − θ)·x̄)/(2θ − 1)``: equations 3 cell by cell, computed
exactly (θ = 1 and θ = 0 return the true counts bit for bit).

Not identifiable: if an eigenvalue is zero :class:`NotIdentifiableError` is raised, naming θ.
Each attribute's ``L_i`` has eigenvalues 1 and ``−1/(k_i − 1)``, so under the record scheme that
happens when ``θ/(1 − θ) = −∏_{i∈S} (−1/(k_i − 1))`` for some set S of the tensor's attributes:
θ = 1/2 for binary data, θ = 1/k for one k-valued attribute, and for several multi-valued
attributes some other θ < 1/2 (e.g. θ = 0.1 for two 4-valued attributes and a binary one). For
θ > 1/2 the channel is always invertible.

To estimate a node of a tree (a conjunction ``A_1 = e_1 ∧ … ∧ A_p = e_p``) without a tensor over
the whole domain of the path attributes, each path attribute is collapsed to the indicator
``[A_i = e_i]``: because a liar picks *uniformly* among the other values, the indicator goes
through the same kind of channel with the 2×2 lie matrix :func:`indicator_lie`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from ppdm.errors import NotIdentifiableError, PpdmError

Scheme = Literal["record", "attribute"]
SCHEMES: tuple[str, ...] = ("record", "attribute")
_EIG_TOL = 1e-9


def check_theta(theta: float) -> float:
    """θ as a float in [0, 1], or a :class:`PpdmError` naming the bad value."""
    try:
        value = float(theta)
    except (TypeError, ValueError):
        raise PpdmError(f"theta must be a probability in [0, 1], got {theta!r}") from None
    if not 0.0 <= value <= 1.0 or np.isnan(value):
        raise PpdmError(f"theta must be a probability in [0, 1], got {theta!r}")
    return value


def check_scheme(scheme: str) -> str:
    if scheme not in SCHEMES:
        raise PpdmError(f"unknown randomization scheme {scheme!r} (choose 'record' or 'attribute')")
    return scheme


def lie_matrix(k: int) -> np.ndarray:
    """Reported × true lie matrix of a k-valued attribute: another value uniformly at random."""
    if k < 2:
        raise PpdmError(f"an attribute with {k} value(s) cannot be disguised (a liar needs another value)")
    return (np.ones((k, k)) - np.eye(k)) / (k - 1)


def indicator_lie(k: int, size: int = 1) -> np.ndarray:
    """Lie matrix of the indicator ``[A ∈ G]`` (index 0: no, 1: yes), ``|G| = size``, of a k-valued attribute.

    A liar reports one of the ``k − 1`` other values uniformly at random, so the reported
    indicator depends on the true value only through the true indicator: a liar in G reports a
    value in G with probability ``(size − 1)/(k − 1)``, a liar outside G with ``size/(k − 1)``.
    For ``G = {e}`` of a binary attribute this is the complement.
    """
    if k < 2:
        raise PpdmError(f"an attribute with {k} value(s) cannot be disguised (a liar needs another value)")
    if not 0 < size < k:
        raise PpdmError(f"an indicator needs a value set of 1 to {k - 1} of the {k} values, got {size}")
    in_g = (size - 1) / (k - 1)
    out_g = size / (k - 1)
    return np.array([[1.0 - out_g, 1.0 - in_g], [out_g, in_g]])


def _is_swap(lie: np.ndarray | None) -> bool:
    return lie is None or (lie.shape == (2, 2) and np.array_equal(lie, [[0.0, 1.0], [1.0, 0.0]]))


def _along(matrix: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    """Apply ``matrix`` to every fibre of ``x`` along ``axis``."""
    return np.moveaxis(np.tensordot(matrix, x, axes=([1], [axis])), 0, axis)


def _eigen(lie: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eigenvalues, eigenvectors V and V⁻¹ of a lie matrix (orthonormal when it is symmetric)."""
    if np.allclose(lie, lie.T):
        values, vectors = np.linalg.eigh(lie)
        return values, vectors, vectors.T
    values, vectors = np.linalg.eig(lie)
    values, vectors = values.real, vectors.real
    return values, vectors, np.linalg.inv(vectors)


def apply_channel(x: np.ndarray, theta: float, lies: Sequence[np.ndarray | None], scheme: Scheme = "record") -> np.ndarray:
    """The expected disguised counts ``M x`` of a true count tensor ``x`` (for tests and simulation)."""
    theta = check_theta(theta)
    x = np.asarray(x, dtype=float)
    _check_axes(x, lies)
    if check_scheme(scheme) == "attribute":
        out = x
        for axis, lie in enumerate(lies):
            if lie is not None:
                out = theta * out + (1.0 - theta) * _along(lie, out, axis)
        return out
    lied = x
    for axis, lie in enumerate(lies):
        if lie is not None:
            lied = _along(lie, lied, axis)
    return theta * x + (1.0 - theta) * lied


def _check_axes(x: np.ndarray, lies: Sequence[np.ndarray | None]) -> None:
    if x.ndim != len(lies):
        raise PpdmError(f"count tensor has {x.ndim} axes but {len(lies)} lie matrices were given")
    for axis, lie in enumerate(lies):
        if lie is not None and lie.shape != (x.shape[axis], x.shape[axis]):
            raise PpdmError(f"axis {axis} has {x.shape[axis]} values but its lie matrix is {lie.shape[0]}×{lie.shape[1]}")


def _flip(x: np.ndarray, lies: Sequence[np.ndarray | None]) -> np.ndarray:
    index = tuple(slice(None, None, -1) if lie is not None else slice(None) for lie in lies)
    return x[index]


def invert(x: np.ndarray, theta: float, lies: Sequence[np.ndarray | None], scheme: Scheme = "record") -> np.ndarray:
    """Estimated true counts ``M⁻¹ x`` from disguised counts ``x`` (paper 001 §4.2, equations 3).

    ``lies[i]`` is the lie matrix of axis ``i`` (:func:`lie_matrix`, :func:`indicator_lie`) or
    ``None`` for an axis reported truthfully (e.g. an undisguised class, or a batch axis). The
    result is the unbiased linear estimate, not clipped: cells may be negative (see
    :func:`clip_and_renormalise`). Raises :class:`NotIdentifiableError` when M is singular.
    """
    theta = check_theta(theta)
    check_scheme(scheme)
    x = np.asarray(x, dtype=float)
    _check_axes(x, lies)
    disguised = [lie for lie in lies if lie is not None]
    if theta == 1.0 or not disguised:
        return x.copy()
    if scheme == "record" and all(_is_swap(lie) for lie in lies):
        if theta == 0.5:
            raise NotIdentifiableError(
                "theta = 0.5 makes the disguised data independent of the true data: P(E) cannot be "
                "estimated (paper 001 §3); use a theta away from 0.5"
            )
        return (theta * x - (1.0 - theta) * _flip(x, lies)) / (2.0 * theta - 1.0)
    return _invert_spectral(x, theta, lies, scheme)


def _invert_spectral(x: np.ndarray, theta: float, lies: Sequence[np.ndarray | None], scheme: str) -> np.ndarray:
    eigen = [None if lie is None else _eigen(lie) for lie in lies]
    y = x
    for axis, e in enumerate(eigen):
        if e is not None:
            y = _along(e[2], y, axis)
    mu = _eigenvalue_tensor(theta, [None if e is None else e[0] for e in eigen], x.shape, scheme)
    if np.abs(mu).min() < _EIG_TOL:
        raise NotIdentifiableError(
            f"theta = {theta:g} makes the randomization matrix singular for attributes with "
            f"{[x.shape[i] for i, e in enumerate(eigen) if e is not None]} values: the true counts "
            "cannot be estimated (e.g. theta = 1/k for a k-valued attribute, 0.5 for binary data; "
            "every theta > 0.5 is invertible)"
        )
    y = y / mu
    for axis, e in enumerate(eigen):
        if e is not None:
            y = _along(e[1], y, axis)
    return y


def _eigenvalue_tensor(theta: float, values: Sequence[np.ndarray | None], shape: tuple[int, ...], scheme: str) -> np.ndarray:
    def broadcast(axis: int, v: np.ndarray) -> np.ndarray:
        return v.reshape([-1 if a == axis else 1 for a in range(len(shape))])

    if scheme == "attribute":
        mu = np.ones([1] * len(shape))
        for axis, v in enumerate(values):
            if v is not None:
                mu = mu * broadcast(axis, theta + (1.0 - theta) * v)
        return np.broadcast_to(mu, shape)
    product = np.ones([1] * len(shape))
    for axis, v in enumerate(values):
        if v is not None:
            product = product * broadcast(axis, v)
    return np.broadcast_to(theta + (1.0 - theta) * product, shape)


def clip_and_renormalise(table: np.ndarray, total: float | None = None) -> np.ndarray:
    """Estimated counts made usable: negative cells to 0, then rescaled to sum to ``total``.

    ``total`` defaults to the estimate's own sum (which the linear estimator gets right on
    average), floored at 0. A table whose clipped cells are all 0 stays 0. When nothing is
    negative and ``total`` is the table's sum, the table is returned unchanged (so θ ∈ {0, 1}
    gives exact counts). This is how ppdm handles estimates of P(E) outside [0, 1] (paper 001
    does not say): a proportion below 0 becomes 0 and the others are renormalised, as the paper's
    ``Q_1 = 1 − Q_0`` does for two classes.
    """
    table = np.asarray(table, dtype=float)
    target = max(float(table.sum()) if total is None else float(total), 0.0)
    clipped = np.maximum(table, 0.0)
    mass = float(clipped.sum())
    if mass <= 0.0:
        return np.zeros_like(clipped)
    if mass == target:
        return clipped
    return clipped * (target / mass)
