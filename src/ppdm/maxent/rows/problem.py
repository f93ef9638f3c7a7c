"""The maximum-entropy problem over P(X | Q) (paper 000 §3, Definition 1; paper 004 §IV).

Variables are p(x | q) for every QI group q (with known weight w_q = P(q)) and sensitive value x,
flattened as ``q * n_values + x``. The objective is the conditional entropy

    H(X | Q) = − Σ_q w_q Σ_x p(x | q) log p(x | q),

and the QI constraints Σ_x p(x | q) = 1 are implicit. Every other piece of knowledge is a
*constraint block*: a sparse matrix ``A`` over the joint probabilities P(q, x) = w_q p(x | q),
a right-hand side ``b`` and a sense, so that row r says Σ A[r, qx] P(q, x) = b_r (``"eq"``) or
≤ b_r (``"le"``). Blocks carry a name per row so that an infeasible problem can name the
constraints in conflict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import scipy.sparse as sp

from ppdm.errors import MaxEntError


@dataclass
class LinearBlock:
    """Rows ``A P ⋚ b`` of one constraint family (rate, label, SA, AR, NAR, ...)."""

    name: str
    A: sp.csr_matrix
    b: np.ndarray
    sense: Literal["eq", "le"]
    row_names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.A = sp.csr_matrix(self.A, dtype=float)
        self.b = np.asarray(self.b, dtype=float).ravel()
        if self.A.shape[0] != len(self.b):
            raise MaxEntError(f"block {self.name!r}: {self.A.shape[0]} rows but {len(self.b)} right-hand sides")
        if self.sense not in ("eq", "le"):
            raise MaxEntError(f"block {self.name!r}: sense must be 'eq' or 'le', got {self.sense!r}")
        if not self.row_names:
            self.row_names = [f"{self.name}[{i}]" for i in range(len(self.b))]

    @property
    def n_rows(self) -> int:
        return len(self.b)


@dataclass
class MaxEntProblem:
    """Weights of the QI groups, the number of values per group, and linear constraint blocks.

    ``log_base`` (groups × values, optional) is the log of a base measure m: the objective is then
    the entropy relative to it, −Σ_q w_q Σ_x p log(p / m), as when each value stands for m
    indistinguishable cells; ``-inf`` marks a value that cannot occur (padding).
    """

    weights: np.ndarray
    n_values: int
    blocks: list[LinearBlock] = field(default_factory=list)
    log_base: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.weights = np.asarray(self.weights, dtype=float).ravel()
        if (self.weights <= 0).any() or not np.isclose(self.weights.sum(), 1.0):
            raise MaxEntError("group weights must be positive and sum to 1")
        if self.n_values < 1:
            raise MaxEntError("there must be at least one sensitive value")
        if self.log_base is not None:
            self.log_base = np.asarray(self.log_base, dtype=float).reshape(len(self.weights), self.n_values)
            if not np.isfinite(self.log_base).any(axis=1).all():
                raise MaxEntError("every group needs at least one possible value (a finite log_base)")

    @property
    def impossible(self) -> np.ndarray | None:
        """Values that cannot occur (groups × values), or None."""
        return None if self.log_base is None else ~np.isfinite(self.log_base)

    @property
    def n_groups(self) -> int:
        return len(self.weights)

    @property
    def n_variables(self) -> int:
        return self.n_groups * self.n_values

    def add(self, block: LinearBlock) -> MaxEntProblem:
        if block.A.shape[1] != self.n_variables:
            raise MaxEntError(f"block {block.name!r} has {block.A.shape[1]} columns, the problem {self.n_variables} variables")
        self.blocks.append(block)
        return self

    def stacked(self) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, list[str]]:
        """All rows: ``A``, ``b``, a boolean mask of inequality rows, and the row names."""
        if not self.blocks:
            return sp.csr_matrix((0, self.n_variables)), np.zeros(0), np.zeros(0, dtype=bool), []
        A = sp.vstack([b.A for b in self.blocks], format="csr")
        b = np.concatenate([blk.b for blk in self.blocks])
        le = np.concatenate([np.full(blk.n_rows, blk.sense == "le") for blk in self.blocks])
        names = [n for blk in self.blocks for n in blk.row_names]
        return A, b, le, names

    def entropy(self, p: np.ndarray) -> float:
        """H(X | Q) of a solution ``p`` (groups × values), natural log."""
        base = 0.0 if self.log_base is None else np.where(np.isfinite(self.log_base), self.log_base, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - base), 0.0)
        return float(-(self.weights * terms.sum(axis=1)).sum())

    def violations(self, p: np.ndarray) -> np.ndarray:
        """Per row: |A P − b| for equalities, max(0, A P − b) for inequalities."""
        A, b, le, _ = self.stacked()
        joint = (p * self.weights[:, None]).ravel()
        r = A @ joint - b
        return np.where(le, np.maximum(r, 0.0), np.abs(r))
