"""Leaf attacks on a published forest: every tree's leaves, intersected (paper 003 §3.1 over a forest).

The attacker of paper 003 §3.1 reads one tree's leaf counts; a forest publishes one set of leaf
counts per tree, and Ferry et al. (*Trained Random Forests Completely Reveal your Dataset*, ICML
2024) show how much the trees say together. This module is the sound, count-free core of that
reasoning. A QI group's *span* in tree ``t`` is the set ``R_t`` of leaves it can reach
(:func:`ppdm.tree.routing.reachable_leaves`, path-consistent for the attributes it lacks); the
*candidate classes* the tree leaves it are the classes with a positive published count in some
leaf of ``R_t``.

**The sound rule.** A tree's leaf counts count the rows the tree was fitted on, each with its
multiplicity (bootstrap draws; 0 for a row it never drew). A record that tree ``t`` drew ``m``
times adds ``m`` to its true class's count in the leaf it lands in, a leaf of ``R_t``: its true
class has a count of at least ``m`` there. So the tree's *candidates* for a group whose records
were each drawn at least ``m ≥ 1`` times are the classes with a count of at least ``m`` in some
leaf of ``R_t`` (with ``m = 1``: a positive count); intersecting the candidates of every such
tree keeps every true class, and when one class is left every record of the group has it
(certain). A tree that may not hold a record (it is out of bag, or the draw is unknown) says
nothing certain about it and is left out. The multiplicities only ever raise the bar a count
must clear, never lower it: a count of 3 may be one row drawn three times, so it never counts
as three rows.

Which trees hold which rows (:func:`row_multiplicities`): the multiplicities the forest records
(scikit-learn's bootstrap, redrawn from each tree's seed; anyone holding the forest can redraw
them, so the attacker is assumed to know them), matched to the attacker's table by position (it
must then be the training table in the order the model was fitted on); boosting libraries sample
rows without replacement, so a boosted tree whose root holds as many rows as the table holds
each row once. Trees that publish no class counts (later boosting rounds: sample counts and
leaf values only) give no candidates.

The attacker's distribution for a group: the mean, over the trees that hold all its records, of
the class distribution over its span's records (the single-tree posterior), restricted to the
candidate classes; with no such tree, the class distribution of the trees' roots (the prior the
forest publishes). Provenance names tree and leaf (``tree 3 leaf 17``: for a certain group the
trees that narrow it down, else the first trees holding it); ``leaf_pairs`` holds, as arrays,
every tree's leaves each group can reach.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.attacks.anonymity import span_ids
from ppdm.attacks.leaves import class_codes, published_leaf_counts, span_posterior
from ppdm.attacks.result import AttackResult
from ppdm.data.qigroups import QIGroups
from ppdm.data.roles import check_columns
from ppdm.errors import AttackError, DataError
from ppdm.metrics.baseline import at_least, is_certain
from ppdm.tree.forest import Forest
from ppdm.tree.leaf_pairs import LeafPairs
from ppdm.tree.model import Tree
from ppdm.tree.routing import reachable_leaves

__all__ = [
    "ForestView",
    "forest_background_attack",
    "forest_homogeneity_attack",
    "forest_uniqueness_attack",
    "forest_view",
    "row_multiplicities",
]


_TOLERANCE = 1e-6  # counts read from stored fractions (scikit-learn ≥ 1.4) are whole up to rounding


def row_multiplicities(forest: Forest, i: int, n_rows: int) -> np.ndarray | None:
    """How many times tree ``i`` holds each of the attacker's ``n_rows`` rows; ``None`` if unknown.

    Recorded multiplicities are matched by position (the table must be the training table in
    fitting order) unless every one is 1; an additive forest's tree whose root holds ``n_rows``
    rows holds each once (boosting samples rows without replacement).
    """
    m = forest.multiplicities[i]
    if m is not None:
        if (m == 1).all():
            return np.ones(n_rows, dtype=np.int64)
        if len(m) != n_rows:
            raise DataError(
                f"tree {i} records the multiplicities of {len(m)} training rows, the attacker's table has {n_rows}: "
                "pass the training rows in the order the model was fitted on"
            )
        return m
    root = forest.trees[i].root.n_samples
    if forest.combine == "additive" and root is not None and round(root) == n_rows:
        return np.ones(n_rows, dtype=np.int64)
    return None


def _class_counts(forest: Forest) -> tuple[list[np.ndarray | None], list[bool]]:
    """Per tree, its published per-node class counts (``None``: the tree publishes none), and
    whether they are exact (error rates of more than two classes are shared out evenly)."""
    out: list[np.ndarray | None] = []
    exact: list[bool] = []
    for i, tree in enumerate(forest.trees):
        if not forest.known[i] & {"class-counts", "error-rates"}:
            out.append(None)
            exact.append(False)
            continue
        counts, is_exact = published_leaf_counts(tree)
        out.append(counts)
        exact.append(is_exact)
    return out, exact


@dataclass
class ForestView:
    """The attacker's table and, per tree, where each QI group lands and what the tree says of it."""

    forest: Forest
    groups: QIGroups
    spans: list[sp.csr_matrix]  # per tree: groups × nodes, 1 where the group can land
    counts: list[np.ndarray | None]  # per tree: published class counts per node, or None
    drawn: np.ndarray  # groups × trees: the fewest times the tree drew a record of the group (0: not known to hold all)
    summed: np.ndarray  # groups × trees: how many times the tree drew the group's records in all (NaN: unknown)
    exact: list[bool]  # per tree: its class counts are exact (else only their being positive is read)
    values: tuple
    true_codes: np.ndarray | None
    sensitive: str

    @property
    def holds(self) -> np.ndarray:
        """groups × trees: the tree is known to hold every record of the group."""
        return self.drawn > 0

    def possible(self, counts: list[np.ndarray | None] | None = None, groups: np.ndarray | None = None) -> np.ndarray:
        """groups × trees × classes: the classes with a count of at least the group's multiplicity
        in some leaf of its span (all, for a tree that publishes no class counts or is not known
        to hold every record of the group). ``groups``: only these (indices), in this order."""
        counts = self.counts if counts is None else counts
        groups = np.arange(self.groups.n_groups) if groups is None else groups
        out = np.ones((len(groups), len(counts), len(self.values)), dtype=bool)
        for t, c in enumerate(counts):
            if c is None:
                continue
            drawn = self.drawn[groups, t]
            bars = drawn if self.exact[t] else np.minimum(drawn, 1)
            for m in np.unique(bars[bars > 0]):
                rows = np.flatnonzero(bars == m)
                clears = c > _TOLERANCE if m == 1 else c >= m - _TOLERANCE
                out[rows, t] = np.asarray(self.spans[t][groups[rows]] @ clears.astype(float)) > 0
        return out

    def used(self, counts: list[np.ndarray | None] | None = None) -> np.ndarray:
        """groups × trees: the tree holds every record of the group and ``counts`` has its counts."""
        counts = self.counts if counts is None else counts
        return self.holds & np.array([c is not None for c in counts])

    def candidates(self, counts: list[np.ndarray | None] | None = None) -> np.ndarray:
        """groups × classes: the classes no tree holding the group rules out (the sound rule)."""
        return self.possible(counts).all(axis=1)

    def posterior(self, counts: list[np.ndarray | None] | None = None, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Each group's distribution (see the module docstring) and its candidate classes."""
        counts = self.counts if counts is None else counts
        allowed = self.candidates(counts) if allowed is None else allowed
        used = self.used(counts)
        total = np.zeros((self.groups.n_groups, len(self.values)))
        for t, c in enumerate(counts):
            if c is not None and used[:, t].any():
                total += span_posterior(self.spans[t], c) * used[:, t, None]
        n_trees = used.sum(axis=1, keepdims=True)
        soft = np.where(n_trees > 0, total / np.maximum(n_trees, 1), self._prior(counts))
        restricted = soft * allowed
        mass = restricted.sum(axis=1, keepdims=True)
        post = np.divide(restricted, mass, out=soft.copy(), where=mass > 0)
        return post, allowed

    def _prior(self, counts: list[np.ndarray | None]) -> np.ndarray:
        roots = [c[0] / c[0].sum() for c in counts if c is not None and c[0].sum() > 0]
        k = len(self.values)
        return np.mean(roots, axis=0) if roots else np.full(k, 1.0 / k)

    def provenance(self, possible: np.ndarray, used: np.ndarray) -> list[str]:
        """Per group, the trees and leaves behind its distribution (``tree 3 leaf 17``): for a
        certain group, trees that leave one class between them; else the first trees holding it."""
        certain = possible.all(axis=1).sum(axis=1) == 1
        out = []
        for g in range(self.groups.n_groups):
            trees = np.flatnonzero(used[g])
            if certain[g]:
                out.append("; ".join(self._leaves_text(int(t), g) for t in _narrowing(possible[g])))
            elif len(trees) == 0:
                out.append("no tree known to hold these records")
            else:
                shown = "; ".join(self._leaves_text(int(t), g) for t in trees[:3])
                out.append(shown + (f" (+{len(trees) - 3} more trees)" if len(trees) > 3 else ""))
        return out

    def _leaves_text(self, t: int, g: int) -> str:
        span = self.spans[t]
        leaves = span.indices[span.indptr[g] : span.indptr[g + 1]]
        return f"tree {t} " + ("leaf " if len(leaves) == 1 else "leaves ") + ", ".join(map(str, sorted(leaves)))

    def result(
        self,
        attack: str,
        counts: list[np.ndarray | None] | None,
        details: dict,
        targets: np.ndarray | None = None,
        possible: np.ndarray | None = None,
    ) -> AttackResult:
        """An :class:`AttackResult`; ``exposed`` = records of groups the attacker is certain about.
        ``possible``: what each tree leaves each group, when worked out otherwise than from ``counts``."""
        possible = self.possible(counts) if possible is None else possible
        posterior, allowed = self.posterior(counts, possible.all(axis=1))
        used = self.used(counts)
        n = self.groups.n_records
        result = AttackResult(
            attack=attack,
            sensitive=self.sensitive,
            values=self.values,
            groups=self.groups,
            posterior=posterior,
            provenance=self.provenance(possible, used),
            targets=np.ones(n, dtype=bool) if targets is None else targets,
            exposed=np.zeros(n, dtype=bool),
            true_codes=self.true_codes,
            leaf_pairs=LeafPairs.from_spans(self.spans),
        )
        result.exposed = result.certain_groups[self.groups.group_of_record]
        result.details = {
            "trees": self.forest.n_trees,
            "trees_with_class_counts": int(sum(c is not None for c in self.counts)),
            "mean_trees_holding_a_group": float(used.sum(axis=1).mean()),
            "inconsistent_groups": int((~allowed.any(axis=1)).sum()),
            **details,
        }
        return result


def _narrowing(possible: np.ndarray) -> list[int]:
    """Trees (rows of ``possible``, trees × classes) that narrow the classes down to one: a tree
    leaving one class alone if there is one, else each tree that removes classes, fewest first."""
    sizes = possible.sum(axis=1)
    if (sizes == 1).any():
        return [int(np.argmax(sizes == 1))]
    left = np.ones(possible.shape[1], dtype=bool)
    chosen = []
    for t in np.argsort(sizes, kind="stable"):
        if (left & ~possible[t]).any():
            left &= possible[t]
            chosen.append(int(t))
        if left.sum() <= 1:
            break
    return chosen


def forest_view(
    forest: Forest,
    data: pd.DataFrame,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: str | None = None,
) -> ForestView:
    """Group ``data`` by its quasi-identifiers and route the groups through every tree.

    Defaults as for :func:`ppdm.attacks.leaves.attacker_view`; the sensitive attribute must be
    the forest's class.
    """
    sensitive = sensitive or forest.class_attribute
    if sensitive != forest.class_attribute:
        raise AttackError(
            f"leaf counts are counts of the class {forest.class_attribute!r}; "
            f"the sensitive attribute {sensitive!r} must be the class for this attack"
        )
    if quasi_identifiers is None:
        quasi_identifiers = [a for a in forest.attributes if a in data.columns]
    check_columns(data, quasi_identifiers)
    if not quasi_identifiers:
        raise DataError("the data holds none of the forest's attributes: the attacker cannot route anyone")
    counts, exact = _class_counts(forest)
    if all(c is None for c in counts):
        raise AttackError("no tree of the forest publishes class counts or error rates: the leaf attacks need them")
    groups = QIGroups.from_frame(data, quasi_identifiers)
    spans = [reachable_leaves(tree, groups.table, known=quasi_identifiers) for tree in forest.trees]
    drawn = np.zeros((groups.n_groups, forest.n_trees), dtype=np.int64)
    summed = np.full((groups.n_groups, forest.n_trees), np.nan)
    for t, c in enumerate(counts):
        m = None if c is None else row_multiplicities(forest, t, len(data))
        if m is not None:
            fewest = np.full(groups.n_groups, np.iinfo(np.int64).max)
            np.minimum.at(fewest, groups.group_of_record, m)
            drawn[:, t] = fewest
            summed[:, t] = np.bincount(groups.group_of_record, weights=m, minlength=groups.n_groups)
    true_codes = class_codes(forest.trees[0], data[sensitive], sensitive) if sensitive in data.columns else None
    return ForestView(forest, groups, spans, counts, drawn, summed, exact, tuple(forest.classes), true_codes, sensitive)


def forest_homogeneity_attack(
    forest: Forest, data: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None, sensitive: str | None = None
) -> AttackResult:
    """Expose everyone whose candidate classes, intersected over the trees holding them, are one."""
    view = forest_view(forest, data, quasi_identifiers, sensitive)
    return view.result("homogeneity", None, {"homogeneous_leaves": _homogeneous_leaves(view)})


def forest_uniqueness_attack(
    forest: Forest, data: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None, sensitive: str | None = None
) -> AttackResult:
    """Expose people whose QI combination is unique and whose class the trees leave certain.

    Details: leaves publishing one training row (over all trees), and the records alone in their
    intersection of spans (no other record reaches the same leaves in every tree).
    """
    view = forest_view(forest, data, quasi_identifiers, sensitive)
    unique = view.groups.counts == 1
    details = {
        "single_record_leaves": _single_record_leaves(view),
        "unique_qi_records": int(unique.sum()),
        "records_alone_in_their_leaves": _alone(view),
    }
    result = view.result("uniqueness", None, details)
    result.exposed = (unique & result.certain_groups)[view.groups.group_of_record]
    return result


def forest_background_attack(
    forest: Forest,
    data: pd.DataFrame,
    known: pd.DataFrame,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: str | None = None,
    threshold: float = 0.9,
) -> AttackResult:
    """Subtract known individuals from every tree that holds them a known number of times (paper
    003 §2.2.3 over a forest), then apply the sound rule to everybody else.

    ``known``: rows of ``data`` (matched by index label) whose full records the attacker holds.
    A tree whose multiplicities are unknown cannot be subtracted from and is left out.
    """
    if not 0 < threshold <= 1:
        raise DataError(f"threshold must be in (0, 1], got {threshold}")
    view = forest_view(forest, data, quasi_identifiers, sensitive)
    positions = data.index.get_indexer(known.index)
    if len(known) and (positions < 0).all():
        raise DataError("none of the known individuals is a row of the data (they are matched by index label)")
    remaining = _subtract_known(view, known, positions)
    before, _ = view.posterior()
    targets = np.ones(len(data), dtype=bool)
    targets[positions[positions >= 0]] = False
    result = view.result("background-knowledge", remaining, {}, targets=targets)
    g = view.groups.group_of_record
    above = at_least(result.posterior.max(axis=1), threshold)
    newly = result.certain_groups & ~is_certain(before.max(axis=1))
    result.exposed = above[g]
    result.details.update(
        known_individuals=len(known),
        threshold=threshold,
        targets_above_threshold=int((above[g] & targets).sum()),
        targets_newly_certain=int((newly[g] & targets).sum()),
    )
    return result


def _subtract_known(view: ForestView, known: pd.DataFrame, positions: np.ndarray) -> list[np.ndarray | None]:
    """Per tree, its counts less the known individuals (``None`` where their multiplicity is unknown).

    ``positions``: each known individual's row in the attacker's table (-1: not a row of it; its
    multiplicity is then known only in trees that hold every row once).
    """
    forest, sensitive = view.forest, view.sensitive
    split_attributes = sorted(forest.split_attributes)
    check_columns(known, split_attributes + [sensitive])
    codes = class_codes(forest.trees[0], known[sensitive], sensitive)
    out: list[np.ndarray | None] = []
    for t, c in enumerate(view.counts):
        m = None if c is None or not view.exact[t] else row_multiplicities(forest, t, view.groups.n_records)
        if m is None or c is None:
            out.append(None)
            continue
        outside = positions < 0
        if outside.any() and not (m == 1).all():
            raise DataError(
                f"known individual {known.index[int(np.flatnonzero(outside)[0])]!r} is not a row of the data: "
                f"how often tree {t} drew it is unknown"
            )
        drawn = np.where(outside, 1, m[np.maximum(positions, 0)]).astype(float)
        leaf = reachable_leaves(forest.trees[t], known, known=split_attributes).indices  # one leaf per full record
        sub = np.zeros_like(c)
        np.add.at(sub, (leaf, codes), drawn)
        _add_to_ancestors(forest.trees[t], sub)
        left = c - sub
        if (left < -1e-9).any():
            node = int(np.argwhere(left < -1e-9)[0][0])
            raise DataError(f"the known individuals do not fit the published counts (more than tree {t} node {node} holds)")
        out.append(np.maximum(left, 0.0))
    return out


def _add_to_ancestors(tree: Tree, at_node: np.ndarray) -> None:
    for node in reversed(tree.nodes):
        if node.parent is not None:
            at_node[node.parent] += at_node[node.id]


def _homogeneous_leaves(view: ForestView) -> int:
    """Leaves (over all trees publishing class counts) whose counts show one class."""
    total = 0
    for t, c in enumerate(view.counts):
        if c is None:
            continue
        leaves = np.array([n.id for n in view.forest.trees[t].leaves()], dtype=np.intp)
        pos = c[leaves] > _TOLERANCE
        total += int((pos.sum(axis=1) == 1).sum())
    return total


def _single_record_leaves(view: ForestView) -> int:
    """Leaves (over all trees) that publish exactly one training row."""
    total = 0
    for tree in view.forest.trees:
        total += sum(1 for n in tree.leaves() if n.n_samples is not None and abs(n.n_samples - 1) < 1e-9)
    return total


def _alone(view: ForestView) -> int:
    """Records no other record shares every tree's span with (a model span of one, paper 002 §2)."""
    ids = span_ids(sp.hstack(view.spans, format="csr"))
    population = np.bincount(ids, weights=view.groups.counts)
    return int((population[ids] == 1).sum())
