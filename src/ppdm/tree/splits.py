"""Splits of internal nodes and the path predicates (attribute prefixes) they build.

Three kinds of split, as the papers' trees need them:

* :class:`CategoricalSplit` with one value per branch: the multiway split of ID3 and C4.5
  (paper 001 §4.2, "grow a branch for each known value").
* :class:`CategoricalSplit` with several values per branch: value groups, as produced by
  generalizing a categorical attribute along its hierarchy (paper 002 §3.1) or by a scikit-learn
  tree on one-hot / ordinal columns.
* :class:`ThresholdSplit`: the binary split ``x <= t`` / ``x > t`` of C4.5 on numeric attributes.

A node's *attribute prefix* (paper 000 §4: "a conjunction of attribute assignments that
represents the path from the root") is a :class:`Prefix`: for each attribute on the path, the set
of values or the interval the path allows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

Scalar = str | int | float | bool


def _fmt(value: object) -> str:
    """A split value as a reader writes it: whole numbers without ``.0``, and a threshold the
    library stored as a 32-bit float (scikit-learn, XGBoost) by its shortest 32-bit spelling
    (``2.95``, not ``2.950000047683716``); every other float as Python spells it."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    if isinstance(value, float) and math.isfinite(value) and float(np.float32(value)) == value:
        short = np.format_float_positional(np.float32(value), trim="-")
        return short if len(short) < len(repr(value)) else repr(value)
    return str(value)


def float32_decimal(value: float) -> float:
    """The shortest decimal within half a 32-bit float step of ``value``: the number a threshold
    stands for once the float32 arithmetic of the library that learned it is taken off (the
    midpoint of two float32 copies, ``2.850000023841858`` for 2.85; XGBoost's ``x < 89`` read as
    ``x <= 88.99999618530272``). scikit-learn, XGBoost and LightGBM compare the data as float32,
    so no value they tell apart lies between the two. A float64 learner's threshold keeps 8
    significant digits or more (a value of the data closer to it than that would be misplaced
    by the printed rule, not by the model)."""
    if not math.isfinite(value) or value.is_integer():
        return value
    step = 0.5000005 * float(np.spacing(np.float32(abs(value))))  # half a step, and the float64 rounding of one
    for digits in range(1, 18):
        short = float(f"{value:.{digits}g}")
        if abs(short - value) <= step:
            return short
    return value


def upper_bound(attribute: str, threshold: float) -> str:
    """``attribute <= t`` at the data's precision: ``x <= 2.85``, or ``x < 89`` when the threshold
    sits just below the decimal it stands for (see :func:`float32_decimal`)."""
    short = float32_decimal(threshold)
    return f"{attribute} {'<' if short > threshold else '<='} {_fmt(short)}"


def lower_bound(attribute: str, threshold: float) -> str:
    """``attribute > t`` at the data's precision: ``x > 2.85``, or ``x >= 89`` (see :func:`upper_bound`)."""
    short = float32_decimal(threshold)
    return f"{attribute} {'>=' if short > threshold else '>'} {_fmt(short)}"


def _membership(attribute: str, values: Sequence[Scalar]) -> str:
    """``attribute = v`` for one value, ``attribute in {v1, v2, ...}`` for several, in the given order."""
    if len(values) == 1:
        return f"{attribute} = {_fmt(values[0])}"
    return f"{attribute} in {{{', '.join(_fmt(v) for v in values)}}}"


@dataclass(frozen=True)
class CategoricalSplit:
    """Branch ``i`` takes the rows whose value is in ``groups[i]``.

    Values in no group (unseen at training time, or missing) go to branch ``default``; the
    learners set it to the branch that held the most training rows.
    """

    attribute: str
    groups: tuple[tuple[Scalar, ...], ...]
    default: int = 0

    kind = "categorical"

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", tuple(tuple(g) for g in self.groups))

    @property
    def n_branches(self) -> int:
        return len(self.groups)

    @property
    def is_multiway(self) -> bool:
        """One value per branch (ID3 / C4.5 style)."""
        return all(len(g) == 1 for g in self.groups)

    def lookup(self, categories: Sequence[Scalar]) -> np.ndarray:
        """Branch of each category code; the extra last entry is for code -1 (unknown)."""
        branch_of = {v: i for i, g in enumerate(self.groups) for v in g}
        lut = np.full(len(categories) + 1, self.default, dtype=np.intp)
        for code, value in enumerate(categories):
            lut[code] = branch_of.get(value, self.default)
        return lut

    def branch(self, codes: np.ndarray, categories: Sequence[Scalar]) -> np.ndarray:
        """Branch index for each row, given the rows' category codes (-1 = unknown)."""
        return self.lookup(categories)[codes]

    def condition(self, i: int) -> ValueSet:
        return ValueSet(frozenset(self.groups[i]))

    def describe(self, i: int) -> str:
        return _membership(self.attribute, self.groups[i])


@dataclass(frozen=True)
class ThresholdSplit:
    """Branch 0 takes ``x <= threshold``, branch 1 takes ``x > threshold``; NaN goes to ``default``."""

    attribute: str
    threshold: float
    default: int = 0

    kind = "threshold"
    n_branches = 2

    def branch(self, values: np.ndarray) -> np.ndarray:
        out = np.where(values <= self.threshold, 0, 1).astype(np.intp)
        if self.default != 1:
            out[np.isnan(values)] = self.default
        return out

    def condition(self, i: int) -> Interval:
        return Interval(-math.inf, self.threshold) if i == 0 else Interval(self.threshold, math.inf)

    def describe(self, i: int) -> str:
        return upper_bound(self.attribute, self.threshold) if i == 0 else lower_bound(self.attribute, self.threshold)


Split = CategoricalSplit | ThresholdSplit


@dataclass(frozen=True)
class ValueSet:
    """The categorical values a path allows for one attribute."""

    values: frozenset

    def __and__(self, other: ValueSet) -> ValueSet:
        return ValueSet(self.values & other.values)

    def mask(self, column: pd.Series) -> np.ndarray:
        return column.isin(self.values).to_numpy()

    def describe(self, attribute: str, domain: Sequence[Scalar] | None = None) -> str:
        vals = [v for v in domain if v in self.values] if domain is not None else sorted(self.values, key=str)
        return _membership(attribute, vals)


@dataclass(frozen=True)
class Interval:
    """The numeric values a path allows for one attribute: ``low < x <= high``."""

    low: float
    high: float

    def __and__(self, other: Interval) -> Interval:
        return Interval(max(self.low, other.low), min(self.high, other.high))

    def mask(self, column: pd.Series) -> np.ndarray:
        v = column.to_numpy(dtype=float)
        return (v > self.low) & (v <= self.high)

    def describe(self, attribute: str, domain: Sequence[Scalar] | None = None) -> str:
        if self.low == -math.inf:
            return upper_bound(attribute, self.high)
        if self.high == math.inf:
            return lower_bound(attribute, self.low)
        low = float32_decimal(self.low)
        return f"{_fmt(low)} {'<=' if low > self.low else '<'} {upper_bound(attribute, self.high)}"


Condition = ValueSet | Interval


@dataclass(frozen=True)
class Prefix:
    """Attribute prefix Λ of a node (paper 000 §4): the conjunction of its path's conditions.

    Conditions on the same attribute are intersected, so each attribute appears once.
    """

    conditions: Mapping[str, Condition] = field(default_factory=dict)

    def __and__(self, other: Prefix) -> Prefix:
        merged = dict(self.conditions)
        for attr, cond in other.conditions.items():
            merged[attr] = merged[attr] & cond if attr in merged else cond  # type: ignore[operator]
        return Prefix(merged)

    def with_condition(self, attribute: str, condition: Condition) -> Prefix:
        return self & Prefix({attribute: condition})

    @property
    def attributes(self) -> list[str]:
        return list(self.conditions)

    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Which rows of ``frame`` satisfy every condition (vectorised)."""
        out = np.ones(len(frame), dtype=bool)
        for attr, cond in self.conditions.items():
            out &= cond.mask(frame[attr])
        return out

    def describe(self, domains: Mapping[str, Sequence[Scalar]] | None = None) -> str:
        if not self.conditions:
            return "(root)"
        parts = [
            cond.describe(attr, None if domains is None else domains.get(attr))
            for attr, cond in self.conditions.items()
        ]
        return " ∧ ".join(parts)

    def __str__(self) -> str:
        return self.describe()


def conditions_of(splits: Iterable[tuple[Split, int]]) -> Prefix:
    """The prefix of the path that follows ``(split, branch)`` pairs from the root."""
    prefix = Prefix()
    for split, branch in splits:
        prefix = prefix.with_condition(split.attribute, split.condition(branch))
    return prefix
