"""What a published tree reveals about its leaves (paper 000 §4.1, paper 003 §3.1).

* ``LABELS``: each leaf's class label only. The attacker of paper 000 then has the label
  constraints only.
* ``ERROR_RATES``: the label plus the number of training records and of misclassified records,
  as C4.5 / Weka print them ("> 50K (2.0/1.0)"). This adds the rate constraints.
* ``CLASS_COUNTS``: the full per-class training counts of every node, as scikit-learn's
  ``tree_.value`` holds them. Paper 003's homogeneity and background-knowledge attacks use them.

Every level also reveals the tree's structure, its split predicates, the candidate attributes
and the split criterion (paper 000 §4.2 assumes the attacker knows the algorithm).

The levels are ordered, each revealing everything the one before it does: ``LABELS <
ERROR_RATES < CLASS_COUNTS`` (the order they are declared in; :attr:`Disclosure.rank`). This is
the one place that order is written: compare levels, take their ``max``/``min`` or iterate
``Disclosure`` (least first) instead of spelling it out again. A level compares with another
``Disclosure`` or its value (``Disclosure.LABELS < "class-counts"``; a value naming no level
raises :class:`~ppdm.errors.PpdmError`, as :meth:`Disclosure.parse` does); equality and hashing
stay those of the value, as for any ``str`` enum.
"""

from __future__ import annotations

from enum import Enum

from ppdm.errors import PpdmError


class Disclosure(str, Enum):  # noqa: UP042 (StrEnum would change what str() and f-strings print)
    LABELS = "labels"
    ERROR_RATES = "error-rates"
    CLASS_COUNTS = "class-counts"

    @classmethod
    def parse(cls, value: str | Disclosure) -> Disclosure:
        if isinstance(value, Disclosure):
            return value
        try:
            return cls(str(value).replace("_", "-").lower())
        except ValueError:
            names = ", ".join(d.value for d in cls)
            raise PpdmError(f"unknown disclosure {value!r} (choose one of: {names})") from None

    @property
    def rank(self) -> int:
        """The level's place in the order, 0 for ``LABELS``: a higher rank reveals more."""
        return _RANK[self]

    def _other_rank(self, other: object) -> int | None:
        if isinstance(other, Disclosure):
            return other.rank
        if isinstance(other, str):
            return Disclosure.parse(other).rank
        return None

    def __lt__(self, other: object) -> bool:
        rank = self._other_rank(other)
        return NotImplemented if rank is None else self.rank < rank

    def __le__(self, other: object) -> bool:
        rank = self._other_rank(other)
        return NotImplemented if rank is None else self.rank <= rank

    def __gt__(self, other: object) -> bool:
        rank = self._other_rank(other)
        return NotImplemented if rank is None else self.rank > rank

    def __ge__(self, other: object) -> bool:
        rank = self._other_rank(other)
        return NotImplemented if rank is None else self.rank >= rank

    @property
    def reveals_rates(self) -> bool:
        return self is not Disclosure.LABELS

    @property
    def reveals_counts(self) -> bool:
        return self is Disclosure.CLASS_COUNTS


_RANK = {level: i for i, level in enumerate(Disclosure)}
