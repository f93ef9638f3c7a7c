"""The respondent side of paper 001 §4.1: disguise records before they are sent.

:func:`disguise` implements the multivariate randomized response (MRR, related-question model):
each respondent draws one uniform number r; if r ≤ θ the true record is sent, otherwise every
disguised attribute is replaced by its complement (binary attributes, §4.1 and §5.1 step 3a) or,
for an attribute with k > 2 values, by another value drawn uniformly at random (the extension
past binary data that §6 asks for). The class may be disguised or not (§4.2 covers both): pass
``columns`` without it to keep it true. ``scheme="attribute"`` draws one coin per attribute
instead (Warner's model applied independently to each attribute), for comparison.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ppdm.errors import DataError
from ppdm.randomize.channel import Scheme, check_scheme, check_theta

__all__ = ["column_domain", "column_codes", "complement", "disguise"]


def column_domain(column: pd.Series, name: str) -> tuple:
    """The values a disguised attribute can take (a liar reports one of the others).

    Categorical dtype: its categories (used or not); bool: ``(False, True)``; text or integer
    columns: the sorted distinct values present. Float columns are rejected: binarize or bin them
    first (:func:`ppdm.randomize.binarize_at_median`, :func:`ppdm.randomize.bin_numeric`).
    """
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return tuple(dtype.categories)
    if pd.api.types.is_bool_dtype(dtype):
        return (False, True)
    if pd.api.types.is_float_dtype(dtype):
        raise DataError(
            f"column {name!r} is numeric (float): binarize it at the median or bin it before "
            "randomized response (ppdm.randomize.binarize_at_median / bin_numeric)"
        )
    if pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return tuple(sorted(pd.unique(column.dropna()), key=lambda v: (str(type(v)), v)))
    raise DataError(f"column {name!r} has unsupported dtype {dtype} for randomized response")


def column_codes(column: pd.Series, domain: Sequence, name: str) -> np.ndarray:
    """Codes of ``column``'s values in ``domain``; a missing or unknown value raises naming it."""
    if isinstance(column.dtype, pd.CategoricalDtype) and tuple(column.cat.categories) == tuple(domain):
        codes = column.cat.codes.to_numpy(dtype=np.intp)
    else:
        codes = pd.Index(list(domain), dtype=object).get_indexer(pd.Index(column.to_numpy(dtype=object), dtype=object))
    bad = codes < 0
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"column {name!r}: value {column.iloc[row]!r} at row {row} is missing or not in its domain")
    return codes.astype(np.intp)


def _rebuild(column: pd.Series, domain: tuple, codes: np.ndarray) -> pd.Series:
    if isinstance(column.dtype, pd.CategoricalDtype):
        values = pd.Categorical.from_codes(codes, dtype=column.dtype)
        return pd.Series(values, index=column.index, name=column.name)
    out = np.asarray(domain, dtype=object)[codes]
    return pd.Series(out, index=column.index, name=column.name).astype(column.dtype)


def disguise(
    df: pd.DataFrame,
    theta: float,
    columns: Sequence[str] | None = None,
    random_state: int | np.random.Generator | None = None,
    scheme: Scheme = "record",
) -> pd.DataFrame:
    """A disguised copy of ``df`` (paper 001 §4.1; §5.1 step 3a).

    Parameters
    ----------
    df: the true records, one row per respondent.
    theta: probability that a respondent tells the truth (θ in the paper).
    columns: the attributes to disguise (default: every column, class included, as in §5).
        Columns not listed are copied unchanged.
    random_state: seed or ``numpy.random.Generator``; the result is a function of it.
    scheme: ``"record"`` (the paper: one coin per respondent; a liar lies on every disguised
        attribute) or ``"attribute"`` (one coin per respondent and attribute).

    A lie replaces a value by another value of the attribute's domain (:func:`column_domain`)
    drawn uniformly at random: the complement for binary attributes.
    """
    theta = check_theta(theta)
    check_scheme(scheme)
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"disguise: df must be a pandas DataFrame (got {type(df).__name__})")
    names = list(df.columns) if columns is None else list(columns)
    unknown = [c for c in names if c not in df.columns]
    if unknown:
        raise DataError(f"disguise: unknown column(s) {', '.join(map(repr, unknown))}")
    domains = [column_domain(df[c], c) for c in names]
    for name, domain in zip(names, domains):
        if len(domain) < 2:
            raise DataError(f"column {name!r} has a single value {domain!r}: a respondent cannot lie about it")
    rng = np.random.default_rng(random_state)
    n = len(df)
    codes = np.column_stack([column_codes(df[c], d, c) for c, d in zip(names, domains)]) if names else np.zeros((n, 0), np.intp)
    sizes = np.array([len(d) for d in domains], dtype=np.intp)
    if scheme == "record":
        lie = (rng.random(n) > theta)[:, None] & np.ones((1, len(names)), dtype=bool)
    else:
        lie = rng.random((n, len(names))) > theta
    # a liar's value: one of the k − 1 others, uniformly (code + 1 + ⌊u·(k − 1)⌋ mod k)
    shift = 1 + np.floor(rng.random((n, len(names))) * (sizes - 1)[None, :]).astype(np.intp)
    new = np.where(lie, (codes + shift) % sizes[None, :], codes)
    out = df.copy()
    for j, (name, domain) in enumerate(zip(names, domains)):
        out[name] = _rebuild(df[name], domain, new[:, j])
    return out


def complement(df: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The complement of every record on ``columns`` (default: all): each binary value flipped.

    This is the data set S̄ of paper 001 §4.3 ("reversing the values in S"). Every listed column
    must have exactly two values in its domain.
    """
    names = list(df.columns) if columns is None else list(columns)
    out = df.copy()
    for name in names:
        if name not in df.columns:
            raise DataError(f"complement: unknown column {name!r}")
        domain = column_domain(df[name], name)
        if len(domain) != 2:
            raise DataError(f"complement: column {name!r} has {len(domain)} values, not 2 (complements are for binary attributes)")
        out[name] = _rebuild(df[name], domain, 1 - column_codes(df[name], domain, name))
    return out
