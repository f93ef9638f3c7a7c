"""The spans of a tree on its training records: who the linking attack cannot tell apart (paper 002 §2).

A record's *span* is the set of leaves it can reach when the attacker varies its unknown
attributes (:func:`ppdm.tree.routing.reachable_leaves`), together with its class when the class
is public. The linking attack (Definition 5) groups the training records by span; the tree is
k-anonymous when every span holds at least k records (Definition 6), entropy ℓ-diverse when the
class entropy of every span is at least log2 ℓ (§4.2). Both the audit of any tree
(:func:`ppdm.attacks.leaf.anonymity.model_anonymity`) and the kADET learner report a :class:`Spans`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ppdm.errors import DataError

__all__ = ["Spans"]


@dataclass
class Spans:
    """The linking attack of paper 002 Definition 5 on a tree and its training records.

    Attributes
    ----------
    leaves: each span's leaf ids (sorted tuples; over a forest, sorted ``(tree, leaf)`` pairs);
        with a public class, ``span_class`` says which class the span is about.
    span_class: per span, the class index (public class), or ``None`` (private class).
    span_of: per record, the index of its span.
    population: per span, how many records it holds (``|[S(x_A)]_{T_ID}|``).
    class_counts: ``(n_spans, n_classes)`` true class counts of each span's records, when the
        records' classes are known (``None`` otherwise).
    """

    leaves: Sequence[tuple[Any, ...]]
    span_class: np.ndarray | None
    span_of: np.ndarray
    population: np.ndarray
    class_counts: np.ndarray | None

    @property
    def k(self) -> int:
        """The smallest span population: the k for which the tree is k-anonymous."""
        return int(self.population.min()) if len(self.population) else 0

    @property
    def record_population(self) -> np.ndarray:
        """Per record, the population of its span."""
        return self.population[self.span_of]

    @property
    def span_entropy(self) -> np.ndarray:
        """Per span, the entropy (bits) of its records' classes (paper 002 §4.2)."""
        c = self._known_class_counts()
        n = c.sum(axis=1, keepdims=True)
        p = np.divide(c, n, out=np.zeros_like(c), where=n > 0)
        logp = np.log2(p, out=np.zeros_like(p), where=p > 0)
        return -(p * logp).sum(axis=1)

    @property
    def l_diversity(self) -> float:
        """The largest ℓ such that every span is entropy ℓ-diverse: 2^(smallest span entropy)."""
        ent = self.span_entropy
        return float(2.0 ** ent.min()) if len(ent) else math.inf

    @property
    def exposed(self) -> np.ndarray:
        """Per record, whether all records of its span share one class (paper 002 §4.2)."""
        homogeneous = (self._known_class_counts() > 0).sum(axis=1) <= 1
        return homogeneous[self.span_of]

    @property
    def exposed_share(self) -> float:
        """Share of records whose span is class-homogeneous (the exposed tuples of Figure 6)."""
        return float(self.exposed.mean()) if len(self.span_of) else 0.0

    def _known_class_counts(self) -> np.ndarray:
        if self.class_counts is None:
            raise DataError("the class of the records is unknown: pass data with the class column")
        return self.class_counts
