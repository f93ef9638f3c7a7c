"""Admissibility of a split: the seam where privacy requirements enter the grower.

The plain learners accept every split (:class:`AlwaysAdmissible`). A k-anonymous or l-diverse
learner (paper 002 §3.1, §4.2) tracks spans as the tree grows, refuses a split that would breach
its requirement and proposes the same split one level up the attribute's hierarchy instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from ppdm.learn.grower import Grower
    from ppdm.learn.splitter import Candidate


class Admissibility(Protocol):
    def start(self, grower: "Grower") -> None:
        """Called once, after the root exists; may inspect ``grower`` (e.g. raise if the root breaches)."""

    def admissible(self, node_id: int, candidate: "Candidate") -> bool:
        """Whether splitting ``node_id`` by ``candidate`` keeps the requirement."""

    def alternatives(self, node_id: int, candidate: "Candidate") -> list["Candidate"]:
        """Other candidates to try when ``candidate`` is refused (e.g. a generalized split)."""

    def on_split(self, node_id: int, candidate: "Candidate", child_ids: list[int]) -> None:
        """Update the tracked state after the grower made the split."""


class AlwaysAdmissible:
    """Every split is allowed (ID3, C4.5, CART)."""

    def start(self, grower: "Grower") -> None:
        pass

    def admissible(self, node_id: int, candidate: "Candidate") -> bool:
        return True

    def alternatives(self, node_id: int, candidate: "Candidate") -> list["Candidate"]:
        return []

    def on_split(self, node_id: int, candidate: "Candidate", child_ids: list[int]) -> None:
        pass
