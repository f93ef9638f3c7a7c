"""Per QI group, the (tree, leaf) pairs its known values can reach: provenance as arrays.

An audit of a published tree or forest routes every group of people with the same known values
through every tree (:func:`ppdm.tree.routing.reachable_leaves`, or the maximum-entropy builders'
own routing): the leaves a group can reach are where its posterior comes from. :class:`LeafPairs`
holds them for all groups at once, CSR-like: group ``g``'s pairs are
``tree[offsets[g]:offsets[g + 1]]`` and ``leaf[offsets[g]:offsets[g + 1]]``, sorted by tree then
leaf, each pair once. A single tree's leaves are tree 0. Leaf ids are node ids, the ids
``ppdm show`` prints (``[node 7]``).

The JSON form (:meth:`AttackResult.to_dict <ppdm.attacks.core.result.AttackResult.to_dict>`) gives
each group its own list, ``"leaf_pairs": [[tree, leaf], ...]``; :meth:`LeafPairs.to_lists` and
:meth:`LeafPairs.from_lists` convert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["LeafPairs"]


def _ints(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.int64).ravel()


def _sorted_distinct(group: np.ndarray, tree: np.ndarray, leaf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``(group, tree, leaf)`` triples, sorted: one sort of a single integer key when
    it fits in 63 bits and no id is negative (3 million triples, as a 100-tree forest over 30,000 groups gives: 0.2 s,
    against 0.7–1.1 s for a sort on three keys), else the sort on three keys."""
    trees, leaves = int(tree.max()) + 1, int(leaf.max()) + 1
    if min(group.min(), tree.min(), leaf.min()) >= 0 and (int(group.max()) + 1) * trees * leaves < 2**63:
        key = np.sort((group * trees + tree) * leaves + leaf)
        key = key[np.r_[True, key[1:] != key[:-1]]]
        return key // (trees * leaves), key // leaves % trees, key % leaves
    order = np.lexsort((leaf, tree, group))
    group, tree, leaf = group[order], tree[order], leaf[order]
    new = np.r_[True, (group[1:] != group[:-1]) | (tree[1:] != tree[:-1]) | (leaf[1:] != leaf[:-1])]
    return group[new], tree[new], leaf[new]


@dataclass(frozen=True, eq=False)
class LeafPairs:
    """Per group, the (tree, leaf) pairs it can reach (see the module docstring).

    ``offsets``: ``n_groups + 1`` ascending positions, from 0; ``tree``, ``leaf``: one entry per
    pair, grouped by group, within a group sorted by tree then leaf with no repeat.
    """

    offsets: np.ndarray
    tree: np.ndarray
    leaf: np.ndarray

    def __post_init__(self) -> None:
        offsets, tree, leaf = _ints(self.offsets), _ints(self.tree), _ints(self.leaf)
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "tree", tree)
        object.__setattr__(self, "leaf", leaf)
        if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(tree) or (np.diff(offsets) < 0).any():
            raise ValueError("leaf pairs: offsets must rise from 0 to the number of pairs")
        if len(tree) != len(leaf):
            raise ValueError(f"leaf pairs: {len(tree)} trees for {len(leaf)} leaves")
        if (tree < 0).any() or (leaf < 0).any():
            raise ValueError("leaf pairs: tree and leaf ids are never negative")

    # -- building ------------------------------------------------------------------------------
    @classmethod
    def from_triples(cls, group: np.ndarray, tree: np.ndarray, leaf: np.ndarray, n_groups: int) -> LeafPairs:
        """From any ``(group, tree, leaf)`` triples (repeats and any order allowed)."""
        group, tree, leaf = _ints(group), _ints(tree), _ints(leaf)
        if len(group):
            group, tree, leaf = _sorted_distinct(group, tree, leaf)
        offsets = np.r_[0, np.cumsum(np.bincount(group, minlength=n_groups))]
        if len(offsets) != n_groups + 1:
            raise ValueError(f"leaf pairs: a group index is not below {n_groups}")
        return cls(offsets, tree, leaf)

    @classmethod
    def from_spans(cls, spans: Sequence[sp.csr_matrix]) -> LeafPairs:
        """From one ``groups × nodes`` 0/1 matrix per tree (1 where the group can land), as
        :func:`ppdm.tree.routing.reachable_leaves` gives them."""
        if not spans:
            raise ValueError("leaf pairs: no tree")
        n_groups = spans[0].shape[0]
        parts = [sp.coo_matrix(s) for s in spans]
        keep = [p.data != 0 for p in parts]
        group = np.concatenate([p.row[k] for p, k in zip(parts, keep)])
        tree = np.concatenate([np.full(int(k.sum()), t) for t, k in enumerate(keep)])
        leaf = np.concatenate([p.col[k] for p, k in zip(parts, keep)])
        return cls.from_triples(group, tree, leaf, n_groups)

    @classmethod
    def from_reach(cls, reach: sp.csr_matrix, block_leaves: np.ndarray, trees: np.ndarray | None = None) -> LeafPairs:
        """From a ``groups × blocks`` 0/1 reach and each block's leaf: a vector (one tree) or a
        ``blocks × trees`` matrix (a forest's joint leaves); ``trees``: only these columns."""
        coo = sp.coo_matrix(reach)
        keep = coo.data != 0
        group, block = coo.row[keep], coo.col[keep]
        leaves = np.asarray(block_leaves)
        if leaves.ndim == 1:
            return cls.from_triples(group, np.zeros(len(group), dtype=np.int64), leaves[block], reach.shape[0])
        columns = np.arange(leaves.shape[1]) if trees is None else _ints(trees)
        n_t = len(columns)
        return cls.from_triples(
            np.repeat(group, n_t), np.tile(columns, len(group)), leaves[np.ix_(block, columns)].ravel(), reach.shape[0]
        )

    # -- reading -------------------------------------------------------------------------------
    @property
    def n_groups(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_pairs(self) -> int:
        return len(self.tree)

    @property
    def group(self) -> np.ndarray:
        """Each pair's group."""
        return np.repeat(np.arange(self.n_groups), np.diff(self.offsets))

    @property
    def n_trees(self) -> int:
        """One more than the highest tree index (0 without pairs)."""
        return int(self.tree.max()) + 1 if self.n_pairs else 0

    def of(self, g: int) -> list[tuple[int, int]]:
        """Group ``g``'s pairs."""
        lo, hi = self.offsets[g], self.offsets[g + 1]
        return list(zip(self.tree[lo:hi].tolist(), self.leaf[lo:hi].tolist()))

    def distinct(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distinct pairs (``tree``, ``leaf``, sorted by tree then leaf) and each pair's index among them."""
        width = int(self.leaf.max()) + 1 if self.n_pairs else 1
        unique, column = np.unique(self.tree * width + self.leaf, return_inverse=True)
        return unique // width, unique % width, column.ravel()

    def incidence(self) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
        """The distinct pairs (as :meth:`distinct`) and the ``groups × distinct`` 0/1 matrix."""
        tree, leaf, column = self.distinct()
        matrix = sp.csr_matrix((np.ones(self.n_pairs), (self.group, column)), shape=(self.n_groups, len(tree)))
        return tree, leaf, matrix

    def leaves_in_tree(self) -> np.ndarray:
        """Per pair: how many leaves its group can reach in its tree (1: that leaf alone decides
        where the group lands in that tree)."""
        if not self.n_pairs:
            return np.zeros(0, dtype=np.int64)
        # pairs are sorted by group then tree: runs of equal (group, tree)
        group = self.group
        start = np.r_[True, (group[1:] != group[:-1]) | (self.tree[1:] != self.tree[:-1])]
        run = np.cumsum(start) - 1
        return np.bincount(run)[run]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LeafPairs):
            return NotImplemented
        return all(np.array_equal(a, b) for a, b in ((self.offsets, other.offsets), (self.tree, other.tree), (self.leaf, other.leaf)))

    # -- JSON ----------------------------------------------------------------------------------
    def to_lists(self) -> list[list[list[int]]]:
        """Per group, ``[[tree, leaf], ...]`` (the form of an attack result's JSON)."""
        flat = np.stack([self.tree, self.leaf], axis=1).tolist()
        ends = self.offsets.tolist()
        return [flat[lo:hi] for lo, hi in zip(ends[:-1], ends[1:])]

    @classmethod
    def from_lists(cls, per_group: Sequence[Sequence[Sequence[int]]]) -> LeafPairs:
        """The inverse of :meth:`to_lists`; raises ``ValueError`` (one line) on anything but
        lists of ``[tree, leaf]`` pairs of non-negative integers."""
        counts = np.fromiter((len(p) for p in per_group), dtype=np.int64, count=len(per_group))
        flat = [pair for pairs in per_group for pair in pairs]
        if not all(isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in p) for p in flat):
            raise ValueError("leaf pairs: each group's leaf_pairs must be a list of [tree, leaf] integer pairs")
        array = np.array(flat, dtype=np.int64).reshape(-1, 2)
        group = np.repeat(np.arange(len(per_group)), counts)
        return cls.from_triples(group, array[:, 0], array[:, 1], len(per_group))
