"""Make attributes discrete before randomized response (paper 001 §5.1 step 1).

The paper's method needs binary data: "We split the value of each attribute from the median
point of the range of the attribute." :class:`MedianBinarizer` does that, with cut points learnt
on the training data and applied unchanged to test data:

* numeric attribute: ``x ≤ median`` vs ``x > median`` (if that leaves one side empty, as when the
  median is the maximum, ``x < median`` vs ``x ≥ median``);
* categorical attribute (the paper does not say how): the values in their domain order, cut
  where the cumulative share of training records is closest to one half;
* an attribute that already has two values is kept as it is.

:class:`QuantileBinner` discretizes numeric attributes into quantile bins instead, for the
multi-valued extension.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

import numpy as np
import pandas as pd

from ppdm.errors import DataError, NotFittedError

__all__ = ["MedianBinarizer", "QuantileBinner", "binarize_at_median", "bin_numeric"]


@dataclass(frozen=True)
class _Cut:
    kind: str  # "keep", "numeric", "categorical"
    threshold: float = 0.0
    strict: bool = False  # numeric: low side is x < threshold instead of x <= threshold
    low: tuple = ()
    labels: tuple[str, str] = ("low", "high")


def _is_numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype)


def _fmt(value: float) -> str:
    return f"{value:g}"


def _numeric_cut(x: np.ndarray, name: str) -> _Cut:
    if np.isnan(x).any():
        raise DataError(f"column {name!r} has missing values; drop or fill them before binarizing")
    m = float(np.median(x))
    if (x <= m).all():
        return _Cut("numeric", m, True, labels=(f"<{_fmt(m)}", f">={_fmt(m)}"))
    return _Cut("numeric", m, False, labels=(f"<={_fmt(m)}", f">{_fmt(m)}"))


def _categorical_cut(column: pd.Series, name: str) -> _Cut:
    if column.isna().any():
        raise DataError(f"column {name!r} has missing values; drop or fill them before binarizing")
    if isinstance(column.dtype, pd.CategoricalDtype):
        domain = list(column.dtype.categories)
    else:
        domain = sorted(pd.unique(column), key=lambda v: (str(type(v)), v))
    if len(domain) <= 2:
        return _Cut("keep")
    counts = column.value_counts().reindex(domain, fill_value=0).to_numpy(dtype=float)
    share = np.cumsum(counts)[:-1] / counts.sum()
    j = int(np.argmin(np.abs(share - 0.5)))
    low = tuple(domain[: j + 1])
    high = domain[j + 1 :]
    return _Cut("categorical", low=low, labels=(_span(low), _span(tuple(high))))


def _span(values: tuple) -> str:
    return str(values[0]) if len(values) == 1 else f"{values[0]}..{values[-1]}"


class _Discretizer:
    """What both discretizers share: ``transform`` refuses to run before ``fit``, and ``fit_transform``."""

    _fitted: str  # the attribute ``fit`` learns

    def fit(self, df: pd.DataFrame) -> Self:
        raise NotImplementedError

    def transform(self, df: pd.DataFrame) -> pd.DataFrame:
        raise NotImplementedError

    def fit_transform(self, df: pd.DataFrame) -> pd.DataFrame:
        return self.fit(df).transform(df)

    def _check_fitted(self) -> None:
        if not hasattr(self, self._fitted):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(df) first")


class MedianBinarizer(_Discretizer):
    """Binarize attributes at the median (paper 001 §5.1), fitted on training data.

    ``columns``: the attributes to binarize (default: all). ``fit`` learns the cuts (``cuts_``),
    ``transform`` returns a copy whose binarized columns are categorical with two values.
    """

    _fitted = "cuts_"

    def __init__(self, columns: Sequence[str] | None = None) -> None:
        self.columns = columns

    def fit(self, df: pd.DataFrame) -> MedianBinarizer:
        names = list(df.columns) if self.columns is None else list(self.columns)
        missing = [c for c in names if c not in df.columns]
        if missing:
            raise DataError(f"MedianBinarizer: unknown column(s) {', '.join(map(repr, missing))}")
        self.cuts_ = {
            c: _numeric_cut(df[c].to_numpy(dtype=float), c) if _is_numeric(df[c]) else _categorical_cut(df[c], c)
            for c in names
        }
        return self

    def transform(self, df: pd.DataFrame) -> pd.DataFrame:
        self._check_fitted()
        out = df.copy()
        for name, cut in self.cuts_.items():
            if name not in df.columns:
                raise DataError(f"MedianBinarizer: column {name!r} seen in fit is missing")
            if cut.kind == "keep":
                continue
            high = self._high(df[name], cut, name)
            out[name] = pd.Categorical.from_codes(high.astype(np.int8), categories=list(cut.labels))
        return out

    @staticmethod
    def _high(column: pd.Series, cut: _Cut, name: str) -> np.ndarray:
        if column.isna().any():
            raise DataError(f"column {name!r} has missing values; drop or fill them before binarizing")
        if cut.kind == "numeric":
            x = column.to_numpy(dtype=float)
            return x >= cut.threshold if cut.strict else x > cut.threshold
        return ~column.astype(object).isin(cut.low).to_numpy()


def binarize_at_median(df: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``MedianBinarizer(columns).fit_transform(df)``: paper 001 §5.1's preprocessing."""
    return MedianBinarizer(columns).fit_transform(df)


class QuantileBinner(_Discretizer):
    """Discretize numeric attributes into (at most) ``n_bins`` quantile bins, fitted on training data.

    Edges are the training quantiles (duplicates merged); test values beyond them fall in the
    first or last bin. Bins are categorical values labelled by their interval.
    """

    _fitted = "edges_"

    def __init__(self, columns: Sequence[str] | None = None, n_bins: int = 4) -> None:
        self.columns = columns
        self.n_bins = n_bins

    def fit(self, df: pd.DataFrame) -> QuantileBinner:
        if self.n_bins < 2:
            raise DataError(f"n_bins must be at least 2, got {self.n_bins!r}")
        names = [c for c in df.columns if _is_numeric(df[c])] if self.columns is None else list(self.columns)
        self.edges_ = {}
        for c in names:
            if c not in df.columns or not _is_numeric(df[c]):
                raise DataError(f"QuantileBinner: column {c!r} is missing or not numeric")
            x = df[c].to_numpy(dtype=float)
            if np.isnan(x).any():
                raise DataError(f"column {c!r} has missing values; drop or fill them before binning")
            self.edges_[c] = np.unique(np.quantile(x, np.linspace(0, 1, self.n_bins + 1))[1:-1])
        return self

    def transform(self, df: pd.DataFrame) -> pd.DataFrame:
        self._check_fitted()
        out = df.copy()
        for c, edges in self.edges_.items():
            x = df[c].to_numpy(dtype=float)
            codes = np.searchsorted(edges, x, side="left")
            bounds = [-np.inf, *edges.tolist(), np.inf]
            labels = [f"({_fmt(lo)}, {_fmt(hi)}]" for lo, hi in zip(bounds[:-1], bounds[1:])]
            out[c] = pd.Categorical.from_codes(codes, categories=labels)
        return out


def bin_numeric(df: pd.DataFrame, columns: Sequence[str] | None = None, n_bins: int = 4) -> pd.DataFrame:
    """``QuantileBinner(columns, n_bins).fit_transform(df)``."""
    return QuantileBinner(columns, n_bins).fit_transform(df)
