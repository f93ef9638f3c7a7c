"""Estimate true proportions from disguised data (paper 001 §4.1–4.2, equations 3).

* :func:`estimate_proportion`: equations 3 for one conjunction E of binary attributes, from
  P*(E) and P*(Ē): ``P(E) = (θ·P*(E) − (1 − θ)·P*(Ē)) / (2θ − 1)``.
* :func:`estimate_conjunction`: P(E) for any conjunction E (``{attribute: value or values}``)
  straight from a disguised table, binary or multi-valued attributes.
* :func:`estimate_table`: the estimated joint distribution of some attributes (every cell at
  once), by inverting the per-attribute randomization matrices along each axis of the count
  tensor (:func:`ppdm.randomize.channel.invert`): the multi-valued extension paper 001 §6 asks
  for, never forming a matrix over all cells.

Estimates can fall outside [0, 1] (sampling noise, amplified by ``1/|2θ − 1|``). By default they
are clipped and renormalised (:func:`ppdm.randomize.channel.clip_and_renormalise`): negative
proportions become 0 and a table is rescaled to sum to 1, a single P(E) is clipped to [0, 1];
``clip=False`` returns the unbiased linear estimate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ppdm.errors import DataError, NotIdentifiableError
from ppdm.randomize.channel import (
    Scheme,
    check_theta,
    clip_and_renormalise,
    indicator_lie,
    invert,
    lie_matrix,
)
from ppdm.randomize.response import column_codes, column_domain

__all__ = ["estimate_conjunction", "estimate_proportion", "estimate_table"]


def estimate_proportion(p_star: float | np.ndarray, p_star_complement: float | np.ndarray, theta: float) -> np.ndarray:
    """Equations 3 solved for P(E): ``(θ·P*(E) − (1 − θ)·P*(Ē)) / (2θ − 1)`` (vectorised, unclipped).

    Raises :class:`NotIdentifiableError` for θ = 0.5, where P*(E) = P*(Ē) whatever P(E) is.
    """
    theta = check_theta(theta)
    if theta == 0.5:
        raise NotIdentifiableError("theta = 0.5: P(E) cannot be estimated from disguised data (paper 001 §3)")
    p, q = np.asarray(p_star, dtype=float), np.asarray(p_star_complement, dtype=float)
    return (theta * p - (1.0 - theta) * q) / (2.0 * theta - 1.0)


def _disguised_set(df: pd.DataFrame, columns: Sequence[str] | None) -> set[str]:
    chosen = set(df.columns if columns is None else columns)
    unknown = chosen - set(df.columns)
    if unknown:
        raise DataError(f"disguised column(s) not in the table: {', '.join(map(repr, sorted(map(str, unknown))))}")
    return chosen


def estimate_conjunction(
    disguised: pd.DataFrame,
    conditions: Mapping[str, object],
    theta: float,
    columns: Sequence[str] | None = None,
    scheme: Scheme = "record",
    clip: bool = True,
) -> float:
    """P(E) for ``E = ∧ (attribute = value)`` (a value, or a list/set of values: ``attribute ∈ set``).

    ``columns`` are the attributes that were disguised (default: all columns of ``disguised``);
    the others enter E as they are. Each attribute of E is collapsed to its indicator, whose
    channel is :func:`~ppdm.randomize.channel.indicator_lie`, and the (2, …, 2) tensor of
    disguised counts is inverted: for binary attributes and the record scheme this is exactly
    equations 3 with Ē the conjunction of the complements.
    """
    if len(disguised) == 0:
        raise DataError("the disguised table has no rows")
    chosen = _disguised_set(disguised, columns)
    pattern = np.zeros(len(disguised), dtype=np.intp)
    lies: list[np.ndarray | None] = []
    for name, wanted in conditions.items():
        if name not in disguised.columns:
            raise DataError(f"condition on unknown column {name!r}")
        values = set(wanted) if isinstance(wanted, (list, tuple, set, frozenset)) else {wanted}
        column = disguised[name]
        hit = column.isin(values).to_numpy()
        if name in chosen:
            domain = column_domain(column, name)
            size = len(values & set(domain))
            if size != len(values):
                missing = sorted(map(repr, values - set(domain)))
                raise DataError(f"column {name!r}: value(s) {', '.join(missing)} not in its domain")
            if size == len(domain):
                continue  # the condition holds for every record
            lies.append(indicator_lie(len(domain), size))
        else:
            lies.append(None)
        pattern = pattern * 2 + hit
    estimate = proportion_from_indicators(pattern, lies, theta, scheme)
    return float(np.clip(estimate, 0.0, 1.0)) if clip else estimate


def proportion_from_indicators(pattern: np.ndarray, lies: Sequence[np.ndarray | None], theta: float, scheme: Scheme = "record") -> float:
    """Unclipped estimate of P(all indicators true) from each record's indicator bits.

    ``pattern[r]`` holds record r's reported indicators as bits (first indicator most
    significant); ``lies[j]`` is indicator j's lie matrix, ``None`` if reported truthfully.
    """
    p = len(lies)
    counts = np.bincount(pattern, minlength=2**p).reshape((2,) * p).astype(float)
    return float(invert(counts, theta, lies, scheme)[(1,) * p]) / len(pattern)


def estimate_table(
    disguised: pd.DataFrame,
    attributes: Sequence[str],
    theta: float,
    columns: Sequence[str] | None = None,
    scheme: Scheme = "record",
    clip: bool = True,
    max_cells: int = 50_000_000,
) -> pd.Series:
    """Estimated joint distribution P(a_1, …, a_m) of ``attributes`` (paper 001 §4.2, beyond binary).

    Returns a Series indexed by every combination of the attributes' domain values (a
    MultiIndex, first attribute slowest), summing to 1 when clipped. The disguised counts form a
    ``k_1 × … × k_m`` tensor; the channel's inverse is applied along each axis (Kronecker
    structure), O(cells · Σ k_i).
    """
    if len(disguised) == 0:
        raise DataError("the disguised table has no rows")
    if not attributes:
        raise DataError("estimate_table needs at least one attribute")
    chosen = _disguised_set(disguised, columns)
    missing = [a for a in attributes if a not in disguised.columns]
    if missing:
        raise DataError(f"unknown column(s) {', '.join(map(repr, missing))}")
    domains = [column_domain(disguised[a], a) for a in attributes]
    shape = tuple(len(d) for d in domains)
    if int(np.prod(shape, dtype=float)) > max_cells:
        raise DataError(f"the table over {list(attributes)} has {int(np.prod(shape, dtype=float))} cells (> max_cells={max_cells})")
    codes = [column_codes(disguised[a], d, a) for a, d in zip(attributes, domains)]
    flat = np.ravel_multi_index(codes, shape)
    counts = np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(float)
    lies = [lie_matrix(len(d)) if a in chosen else None for a, d in zip(attributes, domains)]
    estimate = invert(counts, theta, lies, scheme) / len(disguised)
    if clip:
        estimate = clip_and_renormalise(estimate, 1.0)
    index = pd.MultiIndex.from_product([list(d) for d in domains], names=list(attributes))
    return pd.Series(estimate.ravel(), index=index, name="P")
