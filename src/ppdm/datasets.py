"""Public dataset loaders: ``from ppdm.datasets import load_adult``.

A thin re-export of :mod:`ppdm.data.datasets`; see there for the conventions every loader
follows (each returns ``(DataFrame, Roles)``).
"""

from __future__ import annotations

from ppdm.data.datasets import (
    DATASETS,
    DatasetInfo,
    load_adult,
    load_bank_loan,
    load_csv,
    load_dataset,
    load_nursery,
)

__all__ = [
    "DATASETS",
    "DatasetInfo",
    "load_adult",
    "load_bank_loan",
    "load_csv",
    "load_dataset",
    "load_nursery",
]
