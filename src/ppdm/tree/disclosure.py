"""What a published tree reveals about its leaves (paper 000 §4.1, paper 003 §3.1).

* ``LABELS``: each leaf's class label only. The attacker of paper 000 then has the label
  constraints only.
* ``ERROR_RATES``: the label plus the number of training records and of misclassified records,
  as C4.5 / Weka print them ("> 50K (2.0/1.0)"). This adds the rate constraints.
* ``CLASS_COUNTS``: the full per-class training counts of every node, as scikit-learn's
  ``tree_.value`` holds them. Paper 003's homogeneity and background-knowledge attacks use them.

Every level also reveals the tree's structure, its split predicates, the candidate attributes
and the split criterion (paper 000 §4.2 assumes the attacker knows the algorithm).
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
    def reveals_rates(self) -> bool:
        return self is not Disclosure.LABELS

    @property
    def reveals_counts(self) -> bool:
        return self is Disclosure.CLASS_COUNTS
