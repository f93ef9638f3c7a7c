"""The attacker's table: distinct quasi-identifier combinations with their counts.

Paper 000 §3 ("QIID refers to a distinct combination of QI attributes") and §4: the attacker
knows the QI part of every training record, so everything an attack says about a person is said
about their QI group; P(q) = n_q / N is known to the attacker. Grouping is a single vectorised
group-by (:mod:`ppdm.data.counting`). The rows grouped may be records, or distinct combinations
of columns each standing for ``record_weights`` records (a table counted by the Dask backend):
every count is then weighted, and the groups, counts and shares are the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.data.counting import group_codes
from ppdm.data.roles import check_columns
from ppdm.errors import DataError

__all__ = ["QIGroups", "group_codes"]


@dataclass
class QIGroups:
    """Distinct QI combinations (``table``), their record counts, and each row's group.

    ``record_weights``: how many records each grouped row stands for (``None``: one each, the
    rows are the records).
    """

    quasi_identifiers: tuple[str, ...]
    table: pd.DataFrame
    counts: np.ndarray
    group_of_record: np.ndarray
    record_weights: np.ndarray | None = None

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, quasi_identifiers: Sequence[str], weights: np.ndarray | None = None) -> QIGroups:
        """Group the rows of ``frame`` by their quasi-identifier values (``weights``: records per row)."""
        if len(frame) == 0:
            raise DataError("the table has no rows: there is no QI group to attack")
        check_columns(frame, quasi_identifiers)
        codes, table = group_codes(frame, quasi_identifiers)
        if weights is None:
            counts = np.bincount(codes, minlength=len(table))
        else:
            weights = np.asarray(weights, dtype=np.int64)
            counts = np.bincount(codes, weights=weights, minlength=len(table)).astype(np.int64)
        return cls(tuple(quasi_identifiers), table, counts, codes, weights)

    @classmethod
    def split_by(cls, frame: pd.DataFrame, quasi_identifiers: Sequence[str], signature: np.ndarray) -> QIGroups:
        """Group the rows by their quasi-identifier values and, within them, by ``signature`` (one
        integer per row: what else the attacker tells apart, e.g. each person's possible values or
        posterior); the table keeps the quasi-identifiers only."""
        key = "__ppdm_signature__"
        full = cls.from_frame(frame[list(quasi_identifiers)].assign(**{key: np.asarray(signature)}), [*quasi_identifiers, key])
        return cls(tuple(quasi_identifiers), full.table.drop(columns=[key]), full.counts, full.group_of_record)

    @property
    def n_groups(self) -> int:
        return len(self.counts)

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    def first_rows(self) -> np.ndarray:
        """The first row of each group (the row whose values the group's table row shows)."""
        first = np.zeros(self.n_groups, dtype=np.intp)
        rows = len(self.group_of_record)
        first[self.group_of_record[::-1]] = np.arange(rows)[::-1]
        return first

    @property
    def weights(self) -> np.ndarray:
        """P(q) for every group."""
        return self.counts / self.counts.sum()

    def record_sum(self, values: np.ndarray) -> float:
        """The sum of a per-row quantity over the records (rows weighted by ``record_weights``)."""
        values = np.asarray(values)
        return float(values.sum() if self.record_weights is None else (values * self.record_weights).sum())

    def value_counts(self, codes: np.ndarray, n_values: int) -> np.ndarray:
        """Counts of each value of a coded column per group, shape ``(n_groups, n_values)``."""
        keys = self.group_of_record * n_values + np.asarray(codes, dtype=np.intp)
        return np.bincount(keys, weights=self.record_weights, minlength=self.n_groups * n_values).reshape(self.n_groups, n_values).astype(float)
