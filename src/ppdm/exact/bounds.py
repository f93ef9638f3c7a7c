"""What the exact audit proves: per group and sensitive value, bounds on the minimum and maximum count.

The minimum (over consistent datasets) of how many of a group's records hold a value is known
to lie in ``[min_lo, min_hi]``, the maximum in ``[max_lo, max_hi]``; ``min_hi`` and ``max_lo``
are *seen* (a consistent dataset reaches them), ``min_lo`` and ``max_hi`` *proved*. When the
search finishes they meet; a time budget may leave a gap, and then nothing is claimed beyond
what was proved: a value is *certain* only when ``min_lo`` equals the group's size,
*impossible* only when ``max_hi`` is 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class ExactBounds:
    """Bounds on the min and max count of every (group, sensitive value), with how they were found."""

    sizes: np.ndarray
    min_lo: np.ndarray
    min_hi: np.ndarray
    max_lo: np.ndarray
    max_hi: np.ndarray
    method: str = ""
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def trivial(cls, sizes: np.ndarray, possible: np.ndarray) -> ExactBounds:
        """What the groups alone give: a value the group cannot take is impossible; a group
        with one possible value holds it; everything else lies in [0, size]."""
        n = np.asarray(sizes, dtype=np.int64)[:, None] * np.ones(possible.shape[1], dtype=np.int64)
        only = possible & (possible.sum(axis=1, keepdims=True) == 1)
        lo = np.where(only, n, 0)
        hi = np.where(possible, n, 0)
        return cls(np.asarray(sizes, dtype=np.int64), lo.copy(), hi.copy(), lo.copy(), hi.copy())

    @property
    def decided(self) -> np.ndarray:
        """``(groups, values)``: both the minimum and the maximum are known exactly."""
        return (self.min_lo == self.min_hi) & (self.max_lo == self.max_hi)

    @property
    def minimum(self) -> np.ndarray:
        """The proved lower bound of the minimum (the minimum itself where decided)."""
        return self.min_lo

    @property
    def maximum(self) -> np.ndarray:
        """The proved upper bound of the maximum (the maximum itself where decided)."""
        return self.max_hi

    @property
    def certain(self) -> np.ndarray:
        """``(groups, values)``: every record of the group holds the value in every consistent dataset."""
        return (self.min_lo == self.sizes[:, None]) & (self.sizes[:, None] > 0)

    @property
    def impossible(self) -> np.ndarray:
        """``(groups, values)``: no record of the group holds the value in any consistent dataset."""
        return self.max_hi == 0

    @property
    def at_least_one(self) -> np.ndarray:
        """``(groups, values)``: some record of the group holds the value in every consistent dataset."""
        return self.min_lo >= 1

    @property
    def certain_groups(self) -> np.ndarray:
        return self.certain.any(axis=1)

    @property
    def refuted_groups(self) -> np.ndarray:
        """Groups for which a consistent dataset splits them (no value is certain: proved)."""
        return (self.min_hi < self.sizes[:, None]).all(axis=1)

    @property
    def undecided_groups(self) -> np.ndarray:
        """Groups neither proved certain nor proved uncertain within the budget."""
        return ~self.certain_groups & ~self.refuted_groups & (self.sizes > 0)

    def check(self) -> None:
        """The bounds are ordered (a bug, not bad input, if not)."""
        ok = (self.min_lo <= self.min_hi) & (self.min_hi <= self.max_lo) & (self.max_lo <= self.max_hi)
        ok &= (self.min_lo >= 0) & (self.max_hi <= self.sizes[:, None])
        if not ok.all():  # pragma: no cover - an internal error
            g, v = np.argwhere(~ok)[0]
            raise AssertionError(
                f"exact bounds out of order at group {g}, value {v}: min in [{self.min_lo[g, v]}, {self.min_hi[g, v]}], "
                f"max in [{self.max_lo[g, v]}, {self.max_hi[g, v]}], size {self.sizes[g]}"
            )

    def tighten(self) -> None:
        """What the group sizes add: a value's minimum is at least the group minus the other
        values' maxima, its maximum at most the group minus their minima."""
        n = self.sizes[:, None]
        np.maximum(self.min_lo, n - (self.max_hi.sum(axis=1, keepdims=True) - self.max_hi), out=self.min_lo)
        np.minimum(self.max_hi, n - (self.min_lo.sum(axis=1, keepdims=True) - self.min_lo), out=self.max_hi)

    def see(self, counts: np.ndarray) -> None:
        """Record a consistent dataset's ``(groups, values)`` counts: the minimum is at most, the
        maximum at least, what it shows."""
        np.minimum(self.min_hi, counts, out=self.min_hi)
        np.maximum(self.max_lo, counts, out=self.max_lo)

    def summary(self) -> dict[str, Any]:
        weights = self.sizes
        return {
            "method": self.method,
            "seconds": round(self.seconds, 4),
            "certain_groups": int(self.certain_groups.sum()),
            "certain_records": int(weights[self.certain_groups].sum()),
            "undecided_groups": int(self.undecided_groups.sum()),
            "undecided_records": int(weights[self.undecided_groups].sum()),
            "undecided_bounds": int((~self.decided).sum()),
            "impossible_pairs": int(self.impossible.sum()),
            "at_least_one_groups": int((self.at_least_one & ~self.certain).any(axis=1).sum()),
        } | self.stats
