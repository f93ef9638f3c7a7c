"""The attacker's view of a published tree or forest: which leaves each group of known values can
reach, and what each leaf publishes (paper 003 §3.1; over a forest, Ferry et al., *Trained Random
Forests Completely Reveal your Dataset*, ICML 2024).

The attacker of paper 003 §3.1 holds the published model (with its per-leaf class counts, or the
error rates from which they follow for two classes) and the known columns of the training
records. A tree is viewed as a forest of one (tree 0) that holds every row of the attacker's
table once, so one view, one set of rules and one subtraction of known individuals serve every
leaf-reading attack (homogeneity, uniqueness, background knowledge, reconstruction).

**Spans.** A group's *span* in tree ``t`` is the set ``R_t`` of leaves it can reach: one leaf when
the attacker knows every split attribute, several when the tree splits on attributes the attacker
lacks (only those compatible with the path's earlier conditions on the same attribute: the one
routing of :func:`ppdm.tree.routing.reachable_leaves`, which model k-anonymity and the
maximum-entropy audit use too).

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
as three rows. For a single tree this is paper 003's reading: the classes its span's leaves show.

Which trees hold which rows (:func:`row_multiplicities`): a single tree holds every row once (the
single-tree attacks' assumption); a forest, the multiplicities it records (scikit-learn's
bootstrap, redrawn from each tree's seed; anyone holding the forest can redraw them, so the
attacker is assumed to know them), matched to the attacker's table by position (it must then be
the training table in the order the model was fitted on); boosting libraries sample rows without
replacement, so a boosted tree whose root holds as many rows as the table holds each row once.
Trees that publish no class counts (later boosting rounds: sample counts and leaf values only)
give no candidates.

The attacker's distribution for a group: the mean, over the trees that hold all its records, of
the class distribution over its span's records, restricted to the candidate classes (for one tree:
the class distribution over its span's records); with no such tree, the class distribution of the
trees' roots (the prior the forest publishes). Provenance names the leaves (``leaf 4`` in a tree;
``tree 3 leaf 17`` in a forest: for a certain group the trees that narrow it down, else the first
trees holding it); ``leaf_pairs`` holds, as arrays, every tree's leaves each group can reach.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel, audited, checked_threat
from ppdm.data.qigroups import QIGroups
from ppdm.data.roles import check_columns
from ppdm.errors import AttackError, DataError
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest
from ppdm.tree.leaf_pairs import LeafPairs
from ppdm.tree.model import Tree
from ppdm.tree.routing import reachable_leaves

__all__ = [
    "AttackerView",
    "ForestView",
    "attacker_view",
    "class_codes",
    "forest_view",
    "published_leaf_counts",
    "row_multiplicities",
    "span_posterior",
    "subtract_known",
]

#: Counts read from stored fractions (scikit-learn ≥ 1.4) are whole up to rounding: a forest's
#: counts clear a bar within this much. A single tree's counts are read as they are (paper 003).
TOLERANCE = 1e-6


def published_leaf_counts(tree: Tree) -> tuple[np.ndarray, bool]:
    """Per-node class counts an attacker can read off the published tree, and whether exact.

    Class counts are exact. With error rates only, the label gets ``n − errors`` and the other
    classes share ``errors`` equally: exact for two classes (or no errors), otherwise the
    maximum-entropy reading of what is published. Labels alone reveal no counts.
    """
    k = len(tree.classes)
    if tree.disclosure is Disclosure.LABELS:
        raise AttackError("the tree publishes labels only; this attack needs error rates or class counts")
    out = np.zeros((tree.n_nodes, k))
    exact = True
    for node in tree.nodes:
        if tree.disclosure is Disclosure.CLASS_COUNTS and node.counts is not None:
            out[node.id] = node.counts
            continue
        n, e = node.n_samples, node.n_errors
        if n is None or e is None:
            raise AttackError(f"node {node.id} publishes no record count")
        if k > 1:
            out[node.id] = e / (k - 1)
        out[node.id, node.label] = n - e
        exact &= k <= 2 or e == 0
    return out, exact


def row_multiplicities(forest: Tree | Forest, i: int, n_rows: int) -> np.ndarray | None:
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


def _class_counts(forest: Forest, one_tree: bool) -> tuple[list[np.ndarray | None], list[bool]]:
    """Per tree, its published per-node class counts (``None``: the tree publishes none), and
    whether they are exact (error rates of more than two classes are shared out evenly). A single
    tree must publish them (:func:`published_leaf_counts` says why not)."""
    out: list[np.ndarray | None] = []
    exact: list[bool] = []
    for i, tree in enumerate(forest.trees):
        if not one_tree and not forest.known[i] & {"class-counts", "error-rates"}:
            out.append(None)
            exact.append(False)
            continue
        counts, is_exact = published_leaf_counts(tree)
        out.append(counts)
        exact.append(is_exact)
    return out, exact


@dataclass
class AttackerView:
    """The attacker's table and, per tree, where each group lands and what the tree says of it.

    ``forest`` is the model as a forest (a tree: a forest of one holding every row once) and
    ``one_tree`` whether it was a tree, which only changes how leaves are named (``leaf 4``, not
    ``tree 0 leaf 4``) and that its counts are read as they are (``tolerance`` 0).
    """

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
    one_tree: bool = False
    known_rows: tuple[int, ...] = ()  # rows whose full record the attacker holds (threat.known_individuals): not targets
    tolerance: float = TOLERANCE

    @property
    def span(self) -> sp.csr_matrix:
        """The first (for a tree, the only) tree's span: groups × nodes."""
        return self.spans[0]

    @property
    def holds(self) -> np.ndarray:
        """groups × trees: the tree is known to hold every record of the group."""
        return self.drawn > 0

    def targets(self) -> np.ndarray:
        """Per record: the attack is about it (the attacker does not hold its full record)."""
        out = np.ones(self.groups.n_records, dtype=bool)
        out[list(self.known_rows)] = False
        return out

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
                clears = c > self.tolerance if m == 1 else c >= m - self.tolerance
                out[rows, t] = np.asarray(self.spans[t][groups[rows]] @ clears.astype(float)) > 0
        return out

    def used(self, counts: list[np.ndarray | None] | None = None) -> np.ndarray:
        """groups × trees: the tree holds every record of the group and ``counts`` has its counts."""
        counts = self.counts if counts is None else counts
        return self.holds & np.array([c is not None for c in counts])

    def candidates(self, counts: list[np.ndarray | None] | None = None) -> np.ndarray:
        """groups × classes: the classes no tree holding the group rules out (the sound rule)."""
        return np.asarray(self.possible(counts).all(axis=1))

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
        # a single tree's row the rule left whole is its span's distribution, read as it is (paper 003)
        renormalize = (restricted != soft).any(axis=1, keepdims=True) if self.one_tree else True
        post = np.divide(restricted, mass, out=soft.copy(), where=(mass > 0) & renormalize)
        return post, allowed

    def _prior(self, counts: list[np.ndarray | None]) -> np.ndarray:
        roots = [c[0] / c[0].sum() for c in counts if c is not None and c[0].sum() > 0]
        k = len(self.values)
        return np.mean(roots, axis=0) if roots else np.full(k, 1.0 / k)

    def provenance(self, possible: np.ndarray, used: np.ndarray) -> list[str]:
        """Per group, the trees and leaves behind its distribution (``tree 3 leaf 17``; in a tree
        ``leaf 17``): for a certain group, trees that leave one class between them; else the first
        trees holding it."""
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

    def where(self, t: int) -> str:
        """How tree ``t`` is named before one of its nodes: ``"tree 3 "``, nothing in a single tree."""
        return "" if self.one_tree else f"tree {t} "

    def _leaves_text(self, t: int, g: int) -> str:
        span = self.spans[t]
        leaves = span.indices[span.indptr[g] : span.indptr[g + 1]]
        return self.where(t) + ("leaf " if len(leaves) == 1 else "leaves ") + ", ".join(map(str, sorted(leaves)))

    def result(
        self,
        attack: str,
        counts: list[np.ndarray | None] | None,
        details: dict,
        targets: np.ndarray | None = None,
        possible: np.ndarray | None = None,
    ) -> AttackResult:
        """An :class:`AttackResult`; ``exposed`` = records of groups the attacker is certain about.
        ``possible``: what each tree leaves each group, when worked out otherwise than from ``counts``.
        ``targets``: default, every record but the known individuals'."""
        possible = self.possible(counts) if possible is None else possible
        posterior, allowed = self.posterior(counts, np.asarray(possible.all(axis=1)))
        used = self.used(counts)
        n = self.groups.n_records
        result = AttackResult(
            attack=attack,
            sensitive=self.sensitive,
            values=self.values,
            groups=self.groups,
            posterior=posterior,
            provenance=self.provenance(possible, used),
            targets=self.targets() if targets is None else targets,
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


#: The view's name when only forests had it.
ForestView = AttackerView


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


def attacker_view(
    model: Tree | Forest,
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
) -> AttackerView:
    """Group ``data`` by the columns the attacker knows and route the groups through every tree.

    ``threat``: the attacker (:class:`~ppdm.attacks.core.threat.ThreatModel`, resolved against
    ``data``); its sensitive column must be the model's class, which leaf counts count. Without
    one, paper 003's attacker: they know the model's attributes present in ``data``. Its known
    individuals are not targets; its ``publish`` audits less than the model holds. If ``data`` has the sensitive column, its values are kept to measure the
    attack. ``model``: a :class:`Tree` (a forest of one holding every row of ``data`` once) or a
    :class:`Forest` (``data`` in the order it was fitted on when it records multiplicities).
    """
    threat = checked_threat("attacker_view", threat)
    class_attribute = model.class_attribute
    sensitive = (threat.sensitive if threat is not None else None) or class_attribute
    if sensitive != class_attribute:
        raise AttackError(
            f"leaf counts are counts of the class {class_attribute!r}; "
            f"the sensitive attribute {sensitive!r} must be the class for this attack; for a sensitive input, the "
            "homogeneity attack reads each person's possible values (--attack homogeneity, homogeneity_attack)"
        )
    known_rows: tuple[int, ...] = ()
    if threat is not None:
        resolved = threat.resolve(data, class_attribute, splits=model.split_attributes)
        qis = list(resolved.known or ())
        known_rows = resolved.known_individuals
        model = audited(model, resolved.publish)
    else:
        qis = [a for a in model.attributes if a in data.columns]
    if isinstance(model, Tree):  # a forest of one that holds every row once
        forest, one_tree = Forest([model], "vote", multiplicities=[np.ones(len(data), dtype=np.int64)]), True
    else:
        forest, one_tree = model, False
    check_columns(data, qis)
    if not qis:
        raise DataError(f"the data holds none of the {'tree' if one_tree else 'forest'}'s attributes: the attacker cannot route anyone")
    counts, exact = _class_counts(forest, one_tree)
    if all(c is None for c in counts):
        raise AttackError("no tree of the forest publishes class counts or error rates: the leaf attacks need them")
    outputs = threat.outputs if threat is not None else None
    if outputs and not one_tree:
        raise AttackError(
            f"the leaf attacks read a forest tree by tree, and a forest's {outputs} is its trees' answer together: "
            "the maximum-entropy audit (ppdm audit) reads it"
        )
    groups, spans = _spans(forest.trees[0] if one_tree else forest, data, qis, outputs)
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
    return AttackerView(
        forest, groups, spans, counts, drawn, summed, exact, tuple(forest.classes), true_codes, sensitive,
        one_tree, known_rows, 0.0 if one_tree else TOLERANCE,
    )


#: The view's name when only forests had it.
forest_view = attacker_view


def _spans(model: Tree | Forest, data: pd.DataFrame, qis: list[str], outputs: str | None) -> tuple[QIGroups, list[sp.csr_matrix]]:
    """The groups of known values and, per tree, the leaves each can reach; with ``outputs`` (a
    single tree's label or score the attacker sees, :mod:`ppdm.maxent.table.outputs`) the groups
    also split by answer and keep only the leaves that give it."""
    if not outputs or not isinstance(model, Tree):
        groups = QIGroups.from_frame(data, qis)
        return groups, [reachable_leaves(tree, groups.table, known=qis) for tree in model.trees]
    from ppdm.maxent.table.outputs import OUTPUT_KEY, answering, leaf_answers, record_answers, unique_codes

    answers = record_answers(model, data, outputs)
    full = QIGroups.from_frame(data.assign(**{OUTPUT_KEY: unique_codes(answers)}), [*qis, OUTPUT_KEY])
    groups = QIGroups(tuple(qis), full.table.drop(columns=OUTPUT_KEY), full.counts, full.group_of_record)
    span = reachable_leaves(model, groups.table, known=qis)
    node_keys = leaf_answers(model, np.arange(model.n_nodes)[:, None], outputs)
    return groups, [answering(span, node_keys, answers[groups.first_rows()])]


def subtract_known(view: AttackerView, known: pd.DataFrame, positions: np.ndarray | None = None) -> list[np.ndarray | None]:
    """Per tree, its published counts less the known individuals' (paper 003 §2.2.3): each known
    record, routed by its full values, taken out of its leaf (and the leaf's ancestors) as many
    times as the tree holds it; ``None`` for a tree whose multiplicities are unknown or whose
    counts are not exact, which cannot be subtracted from. A single tree's counts must be exact.

    ``positions``: each known individual's row in the attacker's table (-1: not a row of it; its
    multiplicity is then known only in trees that hold every row once); ``None`` when unknown,
    which only a tree holding every row once can do without.
    """
    forest, sensitive = view.forest, view.sensitive
    if not any(view.exact):
        raise AttackError("subtracting known individuals needs exact class counts (publish class counts)")
    split_attributes = sorted(forest.split_attributes)
    check_columns(known, split_attributes + [sensitive])
    codes = class_codes(forest.trees[0], known[sensitive], sensitive)
    out: list[np.ndarray | None] = []
    for t, c in enumerate(view.counts):
        m = None if c is None or not view.exact[t] else row_multiplicities(forest, t, view.groups.n_records)
        if m is None or c is None:
            out.append(None)
            continue
        if (m == 1).all():
            drawn = np.ones(len(known))
        else:
            if positions is None:
                raise DataError("the data's index labels are not unique: the known individuals cannot be matched to its rows")
            outside = positions < 0
            if outside.any():
                raise DataError(
                    f"known individual {known.index[int(np.flatnonzero(outside)[0])]!r} is not a row of the data: "
                    f"how often tree {t} drew it is unknown"
                )
            drawn = m[positions].astype(float)
        tree = forest.trees[t]
        leaf = reachable_leaves(tree, known, known=split_attributes).indices  # one leaf per full record
        sub = np.zeros_like(c)
        np.add.at(sub, (leaf, codes), drawn)
        _add_to_ancestors(tree, sub)
        left = c - sub
        short = left < -1e-9
        if short.any():
            at_leaf = short & np.isin(np.arange(tree.n_nodes), leaf)[:, None]
            node = int(np.argwhere(at_leaf if at_leaf.any() else short)[0][0])
            raise DataError(f"the known individuals do not fit the published counts (more than {view.where(t)}node {node} holds)")
        out.append(np.maximum(left, 0.0))
    return out


def _add_to_ancestors(tree: Tree, at_node: np.ndarray) -> None:
    for node in reversed(tree.nodes):
        if node.parent is not None:
            at_node[node.parent] += at_node[node.id]


def class_codes(tree: Tree, column: pd.Series, name: str) -> np.ndarray:
    """Index of each value of ``column`` among the tree's classes; unknown values are an error."""
    values = column.to_numpy(dtype=object)
    codes = pd.Index(list(tree.classes), dtype=object).get_indexer(pd.Index(values, dtype=object))
    if (codes < 0).any():
        text = pd.Index([str(c) for c in tree.classes], dtype=object).get_indexer(pd.Index([str(v) for v in values], dtype=object))
        if (text < 0).any():
            first = int(np.flatnonzero(text < 0)[0])
            raise DataError(f"column {name!r}: value {values[first]!r} (row {first}) is not one of the tree's classes {list(tree.classes)}")
        codes = text
    return codes.astype(np.intp)


def span_posterior(span: sp.csr_matrix, leaf_counts: np.ndarray) -> np.ndarray:
    """Each group's class distribution over the records of the leaves it can land in.

    A group whose span holds no record (only empty leaves) gets the uniform distribution.
    """
    counts = np.asarray(span @ leaf_counts)
    totals = counts.sum(axis=1, keepdims=True)
    k = leaf_counts.shape[1]
    return np.divide(counts, totals, out=np.full_like(counts, 1.0 / k), where=totals > 0)
