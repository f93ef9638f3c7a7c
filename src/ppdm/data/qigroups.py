"""The attacker's table: distinct quasi-identifier combinations with their counts.

Paper 000 §3 ("QIID refers to a distinct combination of QI attributes") and §4: the attacker
knows the QI part of every training record, so everything an attack says about a person is said
about their QI group; P(q) = n_q / N is known to the attacker. Grouping is a single vectorised
group-by; it is the one counting step that a later backend can move to Dask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.data.roles import check_columns
from ppdm.errors import DataError


def group_codes(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Index of each row's distinct combination of ``columns``, and the combinations in order of
    first appearance (missing values form their own combinations)."""
    if not columns:
        return np.zeros(len(frame), dtype=np.intp), pd.DataFrame(index=range(1 if len(frame) else 0))
    grouped = frame.groupby(list(columns), sort=False, observed=True, dropna=False)
    codes = grouped.ngroup().to_numpy(dtype=np.intp)
    first = np.unique(codes, return_index=True)[1]
    table = frame.iloc[first][list(columns)].reset_index(drop=True)
    return codes, table


@dataclass
class QIGroups:
    """Distinct QI combinations (``table``), their record counts, and each record's group."""

    quasi_identifiers: tuple[str, ...]
    table: pd.DataFrame
    counts: np.ndarray
    group_of_record: np.ndarray

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, quasi_identifiers: Sequence[str]) -> "QIGroups":
        """Group the records of ``frame`` by their quasi-identifier values."""
        if len(frame) == 0:
            raise DataError("the table has no rows: there is no QI group to attack")
        check_columns(frame, quasi_identifiers)
        codes, table = group_codes(frame, quasi_identifiers)
        counts = np.bincount(codes, minlength=len(table))
        return cls(tuple(quasi_identifiers), table, counts, codes)

    @property
    def n_groups(self) -> int:
        return len(self.counts)

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    @property
    def weights(self) -> np.ndarray:
        """P(q) for every group."""
        return self.counts / self.counts.sum()

    def value_counts(self, codes: np.ndarray, n_values: int) -> np.ndarray:
        """Counts of each value of a coded column per group, shape ``(n_groups, n_values)``."""
        keys = self.group_of_record * n_values + np.asarray(codes, dtype=np.intp)
        return np.bincount(keys, minlength=self.n_groups * n_values).reshape(self.n_groups, n_values).astype(float)
