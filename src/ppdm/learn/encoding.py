"""Turn a user's DataFrame and class column into the integer-coded table the grower counts on.

Categorical columns (pandas ``category``, text, bool) become category codes; numeric columns
become float64. Bad input raises :class:`~ppdm.errors.DataError` naming the column at fault.
A table counted by the Dask backend arrives as its distinct rows with ``weights`` (the records
each stands for, :func:`ppdm.data.counting.compress`); every count the learners take is weighted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.errors import DataError
from ppdm.tree.model import Attribute, encode_categories


@dataclass
class EncodedTable:
    """Attributes as codes / floats, and the class as indices into ``classes``."""

    attributes: list[Attribute]
    columns: dict[str, np.ndarray]
    y: np.ndarray
    classes: np.ndarray
    weights: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        """Rows of the table (distinct combinations when ``weights`` is set)."""
        return len(self.y)

    @property
    def n_records(self) -> int:
        return self.n_rows if self.weights is None else int(self.weights.sum())

    @property
    def n_classes(self) -> int:
        return len(self.classes)


def is_categorical(column: pd.Series) -> bool:
    dtype = column.dtype
    return (
        isinstance(dtype, pd.CategoricalDtype)
        or pd.api.types.is_bool_dtype(dtype)
        or pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
    )


def infer_attribute(column: pd.Series, name: str, force_categorical: bool = False) -> Attribute:
    """The :class:`Attribute` of a column: its kind and, if categorical, its domain."""
    if force_categorical or is_categorical(column):
        if isinstance(column.dtype, pd.CategoricalDtype):
            cats = list(column.cat.categories)
        else:
            cats = sorted(pd.unique(column.dropna()), key=lambda v: (str(type(v)), v))
        return Attribute(name, "categorical", tuple(_plain(c) for c in cats))
    if pd.api.types.is_numeric_dtype(column.dtype):
        return Attribute(name, "numeric")
    raise DataError(f"column {name!r} has unsupported dtype {column.dtype}")


def _plain(v: object) -> object:
    return v.item() if isinstance(v, np.generic) else v


def check_frame(X: object, what: str = "X") -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        frame = X
    elif isinstance(X, np.ndarray) and X.ndim == 2:
        frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    else:
        raise DataError(f"{what} must be a pandas DataFrame (got {type(X).__name__})")
    if frame.shape[0] == 0:
        raise DataError(f"{what} has no rows")
    if frame.shape[1] == 0:
        raise DataError(f"{what} has no columns")
    dupes = frame.columns[frame.columns.duplicated()].tolist()
    if dupes:
        raise DataError(f"{what} has duplicate column names: {', '.join(map(str, dupes))}")
    return frame


def _check_no_missing(column: pd.Series, name: str) -> None:
    n_missing = int(column.isna().sum())
    if n_missing:
        first = int(np.flatnonzero(column.isna().to_numpy())[0])
        raise DataError(
            f"column {name!r} has {n_missing} missing value(s) (first at row {first}); "
            "drop or fill them before fitting (the loaders take drop_missing=True)"
        )


def encode_table(
    X: pd.DataFrame,
    y: Iterable | None,
    categorical: Iterable[str] = (),
    attributes: list[Attribute] | None = None,
    weights: np.ndarray | None = None,
) -> EncodedTable:
    """Encode ``X`` (every column an attribute) and ``y`` for the grower (``weights``: records per row)."""
    frame = check_frame(X)
    y_arr = np.asarray(list(y) if not isinstance(y, (np.ndarray, pd.Series)) else y, dtype=object) if y is not None else None
    if y_arr is None or y_arr.ndim != 1 or len(y_arr) != len(frame):
        got = "none" if y_arr is None else f"{len(y_arr)}"
        raise DataError(f"y must be one label per row of X ({len(frame)} rows, got {got})")
    y_missing = pd.isna(y_arr)
    if y_missing.any():
        raise DataError(f"the class has {int(y_missing.sum())} missing value(s) (first at row {int(np.flatnonzero(y_missing)[0])})")
    force = set(categorical)
    unknown = force - set(frame.columns)
    if unknown:
        raise DataError(f"unknown column(s) declared categorical: {', '.join(sorted(map(str, unknown)))}")
    if attributes is None:
        attributes = [infer_attribute(frame[c], str(c), c in force) for c in frame.columns]
    columns: dict[str, np.ndarray] = {}
    for attr in attributes:
        col = frame[attr.name]
        _check_no_missing(col, attr.name)
        if attr.is_categorical:
            columns[attr.name] = encode_categories(col, attr.categories)
        else:
            columns[attr.name] = col.to_numpy(dtype=float)
    classes, y_codes = _encode_classes(y_arr)
    w = None if weights is None else np.asarray(weights, dtype=float)
    return EncodedTable(attributes, columns, y_codes, classes, w)


def _encode_classes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError:
        raise DataError("class labels mix types that cannot be ordered (e.g. numbers and text)") from None
    return np.array([_plain(c) for c in classes], dtype=object), codes.astype(np.intp)
