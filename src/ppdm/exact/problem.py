"""The exact audit's problem: whole record counts, the published rows, and what is asked of them.

A *consistent dataset* gives each record of the attacker's table values for the unknowns such
that everything published holds (docs/exact_disclosure.md). Records of one group (same known
values) are interchangeable, so a consistent dataset is described by whole counts: ``x[v]`` =
how many records of group ``var_group[v]`` take the unknowns' *slot* or *type* ``v`` (a leaf, a
class, a sensitive cell; or, for rule sets, a sensitive value). Every published fact is a linear
row over these counts with whole coefficients and a whole right-hand side:

* Σ_{v of group g} x[v] = n_g (the group's records, implicit: :attr:`CountProblem.sizes`);
* per row r: Σ_v A[r, v] x[v] = b_r (``eq``) or ≤ b_r (``le``).

The question (paper 000's P(X | Q) made exact): per group g and sensitive value s, the minimum and
the maximum of Σ_{v of g with label s} x[v] over all consistent datasets. The maximum-entropy
builders of :mod:`ppdm.maxent` produce these very rows over probabilities (P = count / N):
:func:`from_factored` and :func:`from_joint` scale them back to counts, so a forest, a threat
model or any new family plugs in by handing rows over the same variables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import scipy.sparse as sp

from ppdm.defaults import WHOLE
from ppdm.errors import MaxEntError

#: Rows of one component: (A, b, sense, strict flags or None, names), over the component's variables.
Rows = list[tuple[sp.csr_matrix, np.ndarray, str, "np.ndarray | None", list[str]]]


@dataclass
class CountRows:
    """One family of rows over the count variables: ``A x = b`` or ``A x ≤ b``, whole numbers."""

    name: str
    A: sp.csr_matrix
    b: np.ndarray
    sense: Literal["eq", "le"]
    row_names: list[str] = field(default_factory=list)
    strict: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.A = sp.csr_matrix(self.A, dtype=np.int64)
        if self.strict is not None:
            self.strict = np.asarray(self.strict, dtype=bool).ravel()
            if self.sense != "le" or len(self.strict) != len(np.asarray(self.b).ravel()):
                raise MaxEntError(f"rows {self.name!r}: strictness is for ≤ rows, one flag per row")
            if not self.strict.any():
                self.strict = None
        self.b = np.asarray(self.b, dtype=np.int64).ravel()
        if self.A.shape[0] != len(self.b):
            raise MaxEntError(f"rows {self.name!r}: {self.A.shape[0]} rows but {len(self.b)} right-hand sides")
        if not self.row_names:
            self.row_names = [f"{self.name}[{i}]" for i in range(len(self.b))]

    @property
    def n_rows(self) -> int:
        return len(self.b)

    def holds(self, x: np.ndarray) -> np.ndarray:
        """Per row, whether whole counts ``x`` meet it. A *strict* row (label rows under the
        tree's tie rule) means ``A x ≤ b − 1`` unless its negative part is 0 (then ``A x ≤ b``)."""
        r = self.A @ x - self.b
        if self.sense == "eq":
            return r == 0
        if self.strict is None:
            return r <= 0
        negative = sp.csr_matrix(self.A.multiply(self.A < 0)) @ x
        return np.where(self.strict & (negative != 0), r <= -1, r <= 0)


@dataclass
class CountProblem:
    """Groups of interchangeable records, their count variables and the published rows.

    ``sizes``: records per group. Per variable: ``var_group`` and ``var_label`` (its sensitive
    value, < ``n_labels``). ``truth``: the real records' counts, when known (a consistent dataset,
    always: used as the first solution). ``interior``: a point of the rows' linear relaxation
    with the largest support, as shares (groups × labels; a maximum-entropy estimate is one),
    when the builder has one: the LP step then asks only about the counts it holds at their ends.
    """

    sizes: np.ndarray
    var_group: np.ndarray
    var_label: np.ndarray
    n_labels: int
    rows: list[CountRows] = field(default_factory=list)
    truth: np.ndarray | None = None
    interior: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.sizes = np.asarray(self.sizes, dtype=np.int64).ravel()
        self.var_group = np.asarray(self.var_group, dtype=np.intp).ravel()
        self.var_label = np.asarray(self.var_label, dtype=np.intp).ravel()
        if len(self.var_group) != len(self.var_label):
            raise MaxEntError("every variable needs a group and a label")
        if len(self.var_group) and (self.var_group.min() < 0 or self.var_group.max() >= len(self.sizes)):
            raise MaxEntError(f"variable groups must lie in 0..{len(self.sizes) - 1}")
        if len(self.var_label) and (self.var_label.min() < 0 or self.var_label.max() >= self.n_labels):
            raise MaxEntError(f"variable labels must lie in 0..{self.n_labels - 1}")
        empty = np.flatnonzero((np.bincount(self.var_group, minlength=len(self.sizes)) == 0) & (self.sizes > 0))
        if len(empty):
            raise MaxEntError(f"group {int(empty[0])} has records but no possible value")

    @property
    def n_groups(self) -> int:
        return len(self.sizes)

    @property
    def n_vars(self) -> int:
        return len(self.var_group)

    @property
    def n_total(self) -> int:
        return int(self.sizes.sum())

    def add(self, rows: CountRows) -> CountProblem:
        if rows.A.shape[1] != self.n_vars:
            raise MaxEntError(f"rows {rows.name!r} have {rows.A.shape[1]} columns, the problem {self.n_vars} variables")
        self.rows.append(rows)
        return self

    def stacked(self) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, list[str]]:
        """All rows: ``A``, ``b``, a mask of ≤ rows, the names."""
        if not self.rows:
            return sp.csr_matrix((0, self.n_vars), dtype=np.int64), np.zeros(0, np.int64), np.zeros(0, bool), []
        A = sp.vstack([r.A for r in self.rows], format="csr")
        b = np.concatenate([r.b for r in self.rows])
        le = np.concatenate([np.full(r.n_rows, r.sense == "le") for r in self.rows])
        return A, b, le, [n for r in self.rows for n in r.row_names]

    def group_label(self, x: np.ndarray) -> np.ndarray:
        """``(groups, labels)`` counts of a solution ``x``."""
        key = self.var_group.astype(np.int64) * self.n_labels + self.var_label
        out = np.bincount(key, weights=x, minlength=self.n_groups * self.n_labels)
        return np.rint(out).astype(np.int64).reshape(self.n_groups, self.n_labels)

    def satisfied(self, x: np.ndarray) -> bool:
        """Whether ``x`` (whole, ≥ 0) is a consistent dataset."""
        x = np.asarray(x, dtype=np.int64)
        if (x < 0).any() or not np.array_equal(np.bincount(self.var_group, weights=x, minlength=self.n_groups), self.sizes):
            return False
        return all(bool(r.holds(x).all()) for r in self.rows)

    def possible_labels(self) -> np.ndarray:
        """``(groups, labels)``: whether the group has any variable of the label."""
        out = np.zeros((self.n_groups, self.n_labels), dtype=bool)
        out[self.var_group, self.var_label] = True
        return out


def whole_rows(name: str, A: sp.spmatrix, b: np.ndarray, sense: str, names: list[str], scale: float) -> CountRows:
    """Rows over probabilities (``A P ⋚ b``, P = count / ``scale``) as rows over whole counts.

    Coefficients must be whole numbers. An equality's right-hand side must be one (else no
    dataset can meet it); a ≤ row's is rounded down, which loses no dataset (whole counts on the
    left).
    """
    A = sp.csr_matrix(A)
    data = A.data
    if len(data) and np.abs(data - np.rint(data)).max() > WHOLE:
        raise MaxEntError(f"rows {name!r}: coefficients must be whole numbers for the exact audit")
    counts = np.asarray(b, dtype=float) * scale
    if sense == "eq":
        off = np.abs(counts - np.rint(counts))
        if len(off) and off.max() > WHOLE * max(1.0, scale) ** 0.5:
            r = int(np.argmax(off))
            raise MaxEntError(f"{names[r] if names else name}: {counts[r]:g} records is not a whole number")
        rhs = np.rint(counts)
    else:
        rhs = np.floor(counts + WHOLE)
    A = sp.csr_matrix((np.rint(data), A.indices, A.indptr), shape=A.shape)
    return CountRows(name, A, rhs.astype(np.int64), "eq" if sense == "eq" else "le", list(names))


def change_holds(rows: Rows, x: np.ndarray, y: np.ndarray) -> bool:
    """Whether ``y`` meets every row of ``rows``, given that ``x`` does: only the rows the change
    ``y − x`` touches are checked, in whole numbers (equalities left alone, ≤ rows within their
    slack, strict rows by the tie rule). The one check every dataset-finding method passes its
    datasets through before it reports them."""
    moved = np.flatnonzero(y - x)
    for A, b, sense, strict, names in rows:
        touched = np.unique(A[:, moved].tocoo().row)
        if not len(touched):
            continue
        family = CountRows("check", A[touched], b[touched], "eq" if sense == "eq" else "le", [names[i] for i in touched], strict=None if strict is None else strict[touched])
        if not family.holds(y).all():
            return False
    return True
