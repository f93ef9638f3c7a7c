"""Candidate splits of a node, scored by a criterion from a count source's tables.

Two families (paper 002 §3.3 for C4.5's extensions):

* categorical attributes: the multiway split with one branch per value of the domain (ID3,
  paper 001 §4.2: "grow a branch for each known value"; an empty branch becomes a leaf with the
  parent's majority class), or a split into given value groups (a hierarchy level);
* numeric attributes: the binary split ``x <= t`` at the best midpoint between consecutive
  observed values (C4.5).

Every attribute of a node is scored in one vectorised call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ppdm.learn.counts import CountSource
from ppdm.learn.criteria import Criterion, split_information
from ppdm.tree.model import Attribute
from ppdm.tree.splits import CategoricalSplit, Scalar, Split, ThresholdSplit


@dataclass
class Candidate:
    """One way to split a node, with its branch class counts and scores."""

    attribute: str
    split: Split
    children: np.ndarray
    gain: float
    split_info: float
    score: float


@dataclass(frozen=True)
class SplitRules:
    """When a candidate split is allowed.

    ``min_samples_leaf``: at least two branches must hold this many rows (C4.5's MINOBJS rule;
    both branches for a threshold split). ``min_gain``: the impurity decrease must exceed it.
    ``c45_thresholds``: C4.5 (release 8) rules for numeric splits: each side holds at least
    ``clip(0.1·n / n_classes, min_samples_leaf, 25)`` rows and the gain is charged
    ``log2(#thresholds) / n`` for the choice of threshold.
    """

    min_samples_leaf: int = 1
    min_gain: float = 0.0
    c45_thresholds: bool = False


class Splitter:
    """Scores the candidate splits of a node."""

    def __init__(self, source: CountSource, criterion: Criterion, attributes: Sequence[Attribute], rules: SplitRules) -> None:
        self.source = source
        self.criterion = criterion
        self.attributes = {a.name: a for a in attributes}
        self.rules = rules

    def candidates(self, state: Any, parent: np.ndarray, available: Sequence[str]) -> list[Candidate]:
        """Every allowed split of the node on the ``available`` attributes."""
        cats = [a for a in available if self.attributes[a].is_categorical]
        nums = [a for a in available if not self.attributes[a].is_categorical]
        out = self._multiway(state, parent, cats) if cats else []
        if nums:
            out += self._thresholds(state, parent, nums)
        order = {a: i for i, a in enumerate(available)}
        return sorted(out, key=lambda c: order[c.attribute])

    def _allowed(self, children: np.ndarray, gain: np.ndarray) -> np.ndarray:
        sizes = children.sum(axis=-1)
        big_enough = (sizes >= max(self.rules.min_samples_leaf, 1)).sum(axis=-1) >= 2
        return big_enough & (gain > self.rules.min_gain + 1e-12)

    def _multiway(self, state: Any, parent: np.ndarray, names: Sequence[str]) -> list[Candidate]:
        tables = self.source.categorical_tables(state, names)
        gain = self.criterion.gain(parent, tables)
        info = split_information(tables)
        score = self.criterion.score(gain, info)
        ok = self._allowed(tables, gain)
        out = []
        for i in np.flatnonzero(ok):
            attr = self.attributes[names[i]]
            v = len(attr.categories)
            children = tables[i, :v]
            split = CategoricalSplit(attr.name, tuple((c,) for c in attr.categories), int(np.argmax(children.sum(1))))
            out.append(Candidate(attr.name, split, children, float(gain[i]), float(info[i]), float(score[i])))
        return out

    def threshold(self, state: Any, parent: np.ndarray, name: str, allowed: Callable[[np.ndarray], np.ndarray]) -> Candidate | None:
        """The best split of numeric ``name`` among the thresholds for which ``allowed`` is true."""
        found = self._thresholds(state, parent, [name], allowed)
        return found[0] if found else None

    def _thresholds(
        self, state: Any, parent: np.ndarray, names: Sequence[str], allowed: Callable[[np.ndarray], np.ndarray] | None = None
    ) -> list[Candidate]:
        """The best threshold split of each numeric attribute, all scored in one call."""
        tables = [self.source.threshold_tables(state, name) for name in names]
        sizes_t = [len(t) for t, _ in tables]
        if sum(sizes_t) == 0:
            return []
        left = np.concatenate([lt for _, lt in tables if len(lt)])
        children = np.stack([left, parent[None, :] - left], axis=1)
        gain = self.criterion.gain(parent, children)
        n = parent.sum()
        min_side = max(self.rules.min_samples_leaf, 1)
        if self.rules.c45_thresholds:
            min_side = float(np.clip(0.1 * n / len(parent), min_side, 25))
        ok = (children.sum(axis=-1) >= min_side - 1e-9).all(axis=1)
        if allowed is not None:
            ok &= np.concatenate([np.asarray(allowed(t), dtype=bool) for t, _ in tables if len(t)])
        gain = np.where(ok, gain, -np.inf)
        out, start = [], 0
        for name, (thresholds, _), size in zip(names, tables, sizes_t):
            if size:
                cand = self._best_threshold(name, thresholds, children[start : start + size], gain[start : start + size], n)
                if cand is not None:
                    out.append(cand)
            start += size
        return out

    def _best_threshold(self, name: str, thresholds: np.ndarray, children: np.ndarray, gain: np.ndarray, n: float) -> Candidate | None:
        best = int(np.argmax(gain))
        g = float(gain[best])
        if self.rules.c45_thresholds:
            g -= math.log2(len(thresholds)) / n
        if not g > self.rules.min_gain + 1e-12:
            return None
        info = float(split_information(children[best]))
        score = float(self.criterion.score(np.array(g), np.array(info)))
        split = ThresholdSplit(name, float(thresholds[best]), int(np.argmax(children[best].sum(axis=-1))))
        return Candidate(name, split, children[best], g, info, score)

    def grouped(
        self, state: Any, parent: np.ndarray, name: str, groups: Sequence[Sequence[Scalar]], table: np.ndarray | None = None
    ) -> Candidate | None:
        """The split of categorical attribute ``name`` into value ``groups`` (e.g. a hierarchy level).

        ``table``: the node's class counts per value of ``name``, if already known (not recounted).
        """
        attr = self.attributes[name]
        if table is None:
            table = self.source.categorical_tables(state, [name])[0, : len(attr.categories)]
        index = {c: i for i, c in enumerate(attr.categories)}
        children = np.stack([table[[index[v] for v in g]].sum(axis=0) for g in groups])
        gain = self.criterion.gain(parent, children[None])
        if not self._allowed(children[None], gain)[0]:
            return None
        info = float(split_information(children))
        score = float(self.criterion.score(gain, np.array([info]))[0])
        split = CategoricalSplit(name, tuple(tuple(g) for g in groups), int(np.argmax(children.sum(1))))
        return Candidate(name, split, children, float(gain[0]), info, score)
