"""Admissibility of a split: the seam where privacy requirements enter the grower.

The plain learners accept every split (:class:`AlwaysAdmissible`). A k-anonymous or l-diverse
learner (paper 002 §3.1, §4.2) tracks spans as the tree grows, refuses a split that would breach
its requirement and proposes the same split one level up the attribute's hierarchy instead.

An admissibility only *proposes* other splits (:class:`GroupedProposal`,
:class:`ThresholdProposal`); the grower scores them with its criterion and count source, so an
admissibility never needs the grower.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ppdm.learn.splitter import Candidate
from ppdm.tree.splits import Scalar


@dataclass(frozen=True)
class GroupedProposal:
    """Split categorical ``attribute`` into the value ``groups`` (e.g. one hierarchy level up).

    ``table``: the node's class counts per value of ``attribute`` when already known (the
    grower then does not count them again).
    """

    attribute: str
    groups: Sequence[Sequence[Scalar]]
    table: np.ndarray | None = None


@dataclass(frozen=True)
class ThresholdProposal:
    """Split numeric ``attribute`` at its best threshold among those ``allowed`` accepts
    (a boolean mask over the candidate thresholds; paper 002 §3.3, split points that keep k)."""

    attribute: str
    allowed: Callable[[np.ndarray], np.ndarray]


Proposal = GroupedProposal | ThresholdProposal


class Admissibility(Protocol):
    def start(self) -> None:
        """Called once, after the root exists; may raise (e.g. if the root already breaches)."""

    def admissible(self, node_id: int, candidate: Candidate) -> bool:
        """Whether splitting ``node_id`` by ``candidate`` keeps the requirement."""

    def alternatives(self, node_id: int, candidate: Candidate) -> Iterable[Proposal]:
        """Other splits to try when ``candidate`` is refused, most preferred first; the grower
        scores them and keeps the first its split rules accept (the rest need not be produced)."""

    def on_split(self, node_id: int, candidate: Candidate, child_ids: list[int]) -> None:
        """Update the tracked state after the grower made the split."""


class AlwaysAdmissible:
    """Every split is allowed (ID3, C4.5, CART)."""

    def start(self) -> None:
        pass

    def admissible(self, node_id: int, candidate: Candidate) -> bool:
        return True

    def alternatives(self, node_id: int, candidate: Candidate) -> Iterable[Proposal]:
        return ()

    def on_split(self, node_id: int, candidate: Candidate, child_ids: list[int]) -> None:
        pass
