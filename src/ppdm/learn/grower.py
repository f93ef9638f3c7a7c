"""One counting-based tree grower with pluggable parts.

The parts (DESIGN.md, "The grower, in one picture"):

* criterion (:mod:`ppdm.learn.criteria`): information gain, gain ratio, Gini;
* count source (:mod:`ppdm.learn.counts`): exact counts, or counts estimated from disguised data;
* admissibility (:mod:`ppdm.learn.admissibility`): always, or k-anonymity / l-diversity of spans;
  a refused split's alternatives come back as proposals, which the grower scores;
* builder: ``"depth-first"`` (ID3, paper 001 §4.2: split a node, then recurse into its branches)
  or ``"best-first"`` (paper 002 §3.1, Algorithm 1: one priority queue of (node, candidate, score)
  over the whole tree, the best admissible candidate split first), or ``"level-wise"``: the
  depth-first tree, grown one level at a time so that a count source reading the data in passes
  (:mod:`ppdm.learn.levelwise`) answers a whole level with one pass; its nodes are then numbered
  as the depth-first builder numbers them, so the two trees are the same.

A categorical attribute splits multiway and is not offered again below (ID3); a numeric attribute
splits on a threshold and may be split again further down (C4.5).

Selection (``selection``): ``"best"`` takes the highest score; ``"c45"`` is C4.5's rule for
gain ratio: the highest ratio among candidates whose gain is at least the average gain.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from ppdm.learn.admissibility import Admissibility, AlwaysAdmissible, GroupedProposal, Proposal
from ppdm.learn.counts import CountSource
from ppdm.learn.criteria import Criterion
from ppdm.learn.splitter import Candidate, SplitRules, Splitter
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.splits import CategoricalSplit, Scalar


@dataclass(frozen=True)
class StoppingRules:
    """When a node stays a leaf: depth, size, or (via :class:`SplitRules`) no good split."""

    max_depth: int | None = None
    min_samples_split: int = 2
    max_leaf_nodes: int | None = None


def depth_first_numbering(nodes: list[Node]) -> list[Node]:
    """``nodes`` renumbered as the depth-first builder numbers them: a node's children get the
    next ids when the node is split, and the first child is split next."""
    new = {0: 0}
    stack = [0]
    while stack:
        old = stack.pop()
        for child in nodes[old].children:
            new[child] = len(new)
        stack.extend(reversed(nodes[old].children))
    out: list[Node] = [None] * len(new)  # type: ignore[list-item]
    for old, node in enumerate(nodes):
        parent = None if node.parent is None else new[node.parent]
        out[new[old]] = replace(node, id=new[old], parent=parent, children=[new[c] for c in node.children])
    return out


def rank(candidates: list[Candidate], selection: str) -> list[Candidate]:
    """Candidates best first. Ties keep the attribute order (deterministic)."""
    if not candidates:
        return []
    if selection == "c45":
        gains = np.array([c.gain for c in candidates])
        average = gains.mean()
        return sorted(candidates, key=lambda c: (c.gain < average - 1e-9, -c.score))
    return sorted(candidates, key=lambda c: -c.score)


class Grower:
    """Grows a :class:`Tree` from a count source.

    Parameters mirror the parts above; ``classes`` and ``class_attribute`` label the result;
    ``algorithm`` names it in the tree ("id3", "c45", ...).
    """

    def __init__(
        self,
        source: CountSource,
        attributes: Sequence[Attribute],
        criterion: Criterion,
        classes: Sequence[Scalar],
        *,
        split_rules: SplitRules = SplitRules(),
        stopping: StoppingRules = StoppingRules(),
        admissibility: Admissibility | None = None,
        builder: Literal["depth-first", "best-first", "level-wise"] = "depth-first",
        selection: Literal["best", "c45"] = "best",
        class_attribute: str = "class",
        algorithm: str | None = None,
    ) -> None:
        self.source = source
        self.attributes = list(attributes)
        self.criterion = criterion
        self.classes = list(classes)
        self.splitter = Splitter(source, criterion, self.attributes, split_rules)
        self.stopping = stopping
        self.admissibility: Admissibility = admissibility or AlwaysAdmissible()
        self.builder = builder
        self.selection = selection
        self.class_attribute = class_attribute
        self.algorithm = algorithm
        self.nodes: list[Node] = []
        self.states: list[Any] = []
        self.available: list[tuple[str, ...]] = []
        self._mean_gain: dict[int, float] = {}

    # -- nodes -------------------------------------------------------------------------------
    def _new_node(self, state: Any, parent: int | None, available: tuple[str, ...]) -> Node:
        counts = np.asarray(self.source.class_counts(state), dtype=float)
        if counts.sum() > 0:
            label = int(np.argmax(counts))
        else:
            label = self.nodes[parent].label if parent is not None else 0
        depth = 0 if parent is None else self.nodes[parent].depth + 1
        node = Node(id=len(self.nodes), parent=parent, depth=depth, label=label, counts=counts)
        self.nodes.append(node)
        self.states.append(state)
        self.available.append(available)
        return node

    def _expandable(self, node: Node) -> bool:
        counts = node.counts
        assert counts is not None
        if (counts > 0).sum() <= 1 or not self.available[node.id]:
            return False
        if counts.sum() < self.stopping.min_samples_split:
            return False
        return self.stopping.max_depth is None or node.depth < self.stopping.max_depth

    def candidates(self, node_id: int) -> list[Candidate]:
        """The node's candidate splits, best first."""
        node = self.nodes[node_id]
        if not self._expandable(node):
            return []
        assert node.counts is not None
        found = self.splitter.candidates(self.states[node_id], node.counts, self.available[node_id])
        if found:
            self._mean_gain[node_id] = float(np.mean([c.gain for c in found]))
        return rank(found, self.selection)

    def grouped_candidate(
        self, node_id: int, attribute: str, groups: Sequence[Sequence[Scalar]], table: np.ndarray | None = None
    ) -> Candidate | None:
        """A candidate splitting ``attribute`` into value groups at the node (for generalization).

        ``table``: the node's class counts per value of ``attribute`` when already known.
        """
        node = self.nodes[node_id]
        assert node.counts is not None
        return self.splitter.grouped(self.states[node_id], node.counts, attribute, groups, table)

    def threshold_candidate(self, node_id: int, attribute: str, allowed: Callable[[np.ndarray], np.ndarray]) -> Candidate | None:
        """The best threshold split of numeric ``attribute`` among the thresholds ``allowed`` accepts
        (a boolean mask over the candidate thresholds; paper 002 §3.3, split points that keep k)."""
        node = self.nodes[node_id]
        assert node.counts is not None
        return self.splitter.threshold(self.states[node_id], node.counts, attribute, allowed)

    def score(self, node_id: int, proposal: Proposal) -> Candidate | None:
        """The candidate an admissibility's proposal makes at the node (``None``: the split rules refuse it)."""
        if isinstance(proposal, GroupedProposal):
            return self.grouped_candidate(node_id, proposal.attribute, proposal.groups, proposal.table)
        return self.threshold_candidate(node_id, proposal.attribute, proposal.allowed)

    def alternatives(self, node_id: int, candidate: Candidate) -> list[Candidate]:
        """The first of the admissibility's proposals for a refused ``candidate`` that scores, if any."""
        for proposal in self.admissibility.alternatives(node_id, candidate):
            found = self.score(node_id, proposal)
            if found is not None:
                return [found]
        return []

    def split(self, node_id: int, candidate: Candidate) -> list[int]:
        """Split a node by ``candidate``; returns the new children's ids."""
        node = self.nodes[node_id]
        node.split = candidate.split
        node.candidates = self.available[node_id]
        node.score = candidate.score
        keep = self.available[node_id]
        split = candidate.split
        if isinstance(split, CategoricalSplit) and split.is_multiway:
            # a value-group split (a generalized attribute, paper 002 §3.1) may be refined below
            keep = tuple(a for a in keep if a != candidate.attribute)
        children = [self._new_node(s, node_id, keep) for s in self.source.children(self.states[node_id], candidate.split)]
        node.children = [c.id for c in children]
        self.admissibility.on_split(node_id, candidate, node.children)
        return node.children

    # -- builders ----------------------------------------------------------------------------
    def grow(self) -> Tree:
        """Grow the tree from the root and return it."""
        self.nodes, self.states, self.available = [], [], []
        self._mean_gain = {}
        self._new_node(self.source.root(), None, tuple(a.name for a in self.attributes))
        self.admissibility.start()
        if self.builder == "best-first":
            self._grow_best_first()
        elif self.builder == "level-wise":
            self._grow_level_wise()
            self.nodes = depth_first_numbering(self.nodes)
        else:
            self._grow_depth_first()
        return Tree(
            self.nodes,
            self.attributes,
            self.classes,
            class_attribute=self.class_attribute,
            criterion=self.criterion.name,
            algorithm=self.algorithm,
        )

    def _first_admissible(self, node_id: int, ranked: list[Candidate]) -> Candidate | None:
        queue = list(ranked)
        while queue:
            cand = queue.pop(0)
            if self.admissibility.admissible(node_id, cand):
                return cand
            queue = rank(queue + self.alternatives(node_id, cand), self.selection)
        return None

    def _grow_depth_first(self) -> None:
        stack = [0]
        while stack:
            node_id = stack.pop()
            chosen = self._first_admissible(node_id, self.candidates(node_id))
            if chosen is not None:
                stack.extend(reversed(self.split(node_id, chosen)))

    def _grow_level_wise(self) -> None:
        """Every node of a level is split before any node of the next is looked at. A node's
        split depends on its own counts only (no admissibility across nodes, no leaf budget), so
        the tree is the depth-first one."""
        frontier = [0]
        while frontier:
            following: list[int] = []
            for node_id in frontier:
                chosen = self._first_admissible(node_id, self.candidates(node_id))
                if chosen is not None:
                    following.extend(self.split(node_id, chosen))
            frontier = following

    def _tier(self, node_id: int, candidate: Candidate) -> int:
        """Best-first priority class: with C4.5 selection, candidates whose gain is below their
        node's average gain come after all others (C4.5's rule, kept in the global queue)."""
        if self.selection != "c45":
            return 0
        return int(candidate.gain < self._mean_gain.get(node_id, -np.inf) - 1e-9)

    def _grow_best_first(self) -> None:
        counter = itertools.count()
        heap: list[tuple[int, float, int, int, Candidate]] = []

        def push(node_id: int, cands: list[Candidate]) -> None:
            for c in cands:
                heapq.heappush(heap, (self._tier(node_id, c), -c.score, next(counter), node_id, c))

        push(0, self.candidates(0))
        leaves = 1
        max_leaves = self.stopping.max_leaf_nodes
        while heap and (max_leaves is None or leaves < max_leaves):
            _, _, _, node_id, cand = heapq.heappop(heap)
            if not self.nodes[node_id].is_leaf:
                continue
            if not self.admissibility.admissible(node_id, cand):
                push(node_id, self.alternatives(node_id, cand))
                continue
            children = self.split(node_id, cand)
            leaves += len(children) - 1
            for child in children:
                push(child, self.candidates(child))
