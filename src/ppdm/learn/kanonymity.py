"""k-anonymous and ℓ-diverse decision trees: kADET (paper 002 §3) on the one grower.

kADET is the grower with three parts chosen (DESIGN.md, "The grower, in one picture"): the
best-first builder (one priority queue over (node, candidate split, score) for the whole tree,
Algorithm 1 lines 10–17), exact counts, and :class:`SpanAdmissibility`, which tracks the bins and
spans of the growing tree and refuses a split that would breach k-anonymity (or entropy
ℓ-diversity, §4.2), proposing instead the split one level up the attribute's hierarchy.

How the spans are kept (§3.1, procedure SPLIT). Every training record belongs to exactly one
span; a span is a set of leaves (all of their class bins when the class is private) and, when the
class is public, one class value. Initially there is one span holding every record (private
class) or one per class value (public class). Splitting leaf ``n``

* on a **private** attribute replaces ``n`` by its children in every span containing it; the
  records of a span do not change, so such a split never breaches (the printed line 19 of
  Algorithm 1, "if att ∈ Q then return true", is read as "no breach");
* on a **public** attribute divides every span containing ``n`` by the records' values: the
  records with value ``v`` form a new span whose leaves are the old ones with ``n`` replaced by
  child ``v``. The split breaches when one of these new spans holds between 1 and k−1 records
  (Definition 6 concerns the records of the table only, so a new span with no record is no
  breach), or, for the ℓ-diverse variant, when its class entropy is below log2 ℓ.

Decisions where the paper leaves room (also in ``docs/kanonymity.md``):

* **Generalization** (Algorithm 1 line 15). A refused split on a categorical public attribute is
  retried at the next coarser level of the attribute's hierarchy (``Hierarchy.cut_at_depth``
  from the leaves up), *at the same node*: the printed "insert (root, a′, ...)" is read as a typo
  for the node being split. Levels that group the values present identically are skipped, and a
  level whose split is not allowed (e.g. one non-empty branch) passes on to the next one. A
  node split on a value group may be split again below on a finer level of the same attribute
  (different generalizations for different groups of records, §4.1). An attribute without a
  hierarchy is not generalized. With k-anonymity alone, levels that already breach when a
  refused split is retried are passed over at once: spans only shrink as the tree grows, so a
  k-breach never heals and such a level would only be refused again when popped (the tree is
  the same; the ℓ-diverse variant proposes every level as Algorithm 1 does).
* **Numeric attributes** (C4.5, §3.3): a refused threshold is replaced by the best threshold
  among those that keep every new span admissible (all of them are checked in one vectorised
  pass). Numeric hierarchies are therefore not needed by kADET.
* **Private attributes** are varied over the whole real line (numeric) or the domain
  (categorical); a private split only reaches the children compatible with the path's earlier
  conditions on the same attribute, narrowed by :func:`ppdm.tree.routing.narrow`, the step the
  path-consistent routing of any tree (:func:`ppdm.tree.routing.reachable_leaves`) takes too.
* **Ties** go to the candidate generated first: the attribute listed first in ``X``.
* The queue orders candidates by gain (ID3) or by C4.5's rule (gain ratio among the candidates
  whose gain is at least their node's average gain first).
* **Pruning** (C4.5): subtree discarding only, never subtree raising (§3.3); the spans of the
  pruned tree are the images of the grown tree's spans, so populations only merge.
* **Confidence cap** (§4.2): ``max_confidence=c`` is entropy ℓ-diversity with
  ``ℓ = 2^H(c, 1−c)`` (85 % ⇒ ℓ = 1.526, logarithms base 2 as in the paper); for two classes
  this is exactly "no span lets the attacker be more than c confident".
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from ppdm.data.hierarchy import Hierarchy
from ppdm.errors import AnonymityError, DataError, HierarchyError, PpdmError
from ppdm.learn.admissibility import GroupedProposal, Proposal, ThresholdProposal
from ppdm.learn.criteria import entropy
from ppdm.learn.encoding import EncodedTable
from ppdm.learn.estimators import MAX_DISTINCT_ROWS, _TreeClassifier
from ppdm.learn.grower import StoppingRules
from ppdm.learn.pruning import error_based_prune
from ppdm.learn.splitter import Candidate, SplitRules
from ppdm.tree.model import Tree
from ppdm.tree.routing import Possible, narrow
from ppdm.tree.spans import Spans
from ppdm.tree.splits import CategoricalSplit, Split, ThresholdSplit

__all__ = [
    "KAnonymousTreeClassifier", "SpanAdmissibility", "confidence_to_l",
]


def confidence_to_l(confidence: float) -> float:
    """The ℓ of entropy ℓ-diversity that caps a two-class attacker's confidence at ``confidence``.

    Paper 002 §4.2: to deny confidence above 85 %, keep the entropy above
    −0.85·log 0.85 − 0.15·log 0.15 = 0.61 bits, i.e. ℓ = 2^0.61 = 1.526.
    """
    if not 0.5 <= confidence < 1:
        raise PpdmError(f"max_confidence must be in [0.5, 1), got {confidence!r}")
    return float(2.0 ** entropy(np.array([confidence, 1 - confidence])))


class SpanAdmissibility:
    """The :class:`~ppdm.learn.admissibility.Admissibility` of kADET (paper 002 §3.1, §4.2).

    ``table``: the encoded training table; ``public``: the public attributes; ``k``: the
    anonymity parameter (1 = no requirement); ``l``: entropy ℓ-diversity of the class in every
    span (``None``: none); ``class_public``: whether the attacker knows every record's class;
    ``hierarchies``: generalization hierarchies of categorical public attributes.
    """

    def __init__(
        self,
        table: EncodedTable,
        public: Sequence[str],
        k: int = 1,
        l: float | None = None,  # noqa: E741 (l-diversity's l)
        class_public: bool = False,
        hierarchies: Mapping[str, Hierarchy] | None = None,
    ) -> None:
        self.table = table
        self.public = set(public)
        self.k = int(k)
        self.log_l = math.log2(l) if l is not None else None
        self.class_public = class_public
        self.attributes = {a.name: a for a in table.attributes}
        self.levels = {
            name: _hierarchy_levels(h, self.attributes[name].categories)
            for name, h in (hierarchies or {}).items()
            if name in self.public and name in self.attributes and self.attributes[name].is_categorical
        }

    # -- Admissibility protocol -------------------------------------------------------------
    def start(self) -> None:
        """Initial bins and spans (Algorithm 1 lines 4–9); raises if they already breach."""
        y = self.table.y
        n = self.table.n_rows
        self.row_span = np.zeros(n, dtype=np.intp) if not self.class_public else y.copy()
        groups = [np.arange(n)] if not self.class_public else [np.flatnonzero(y == c) for c in range(self.table.n_classes)]
        self.span_rows: list[np.ndarray | None] = []
        self.span_leaves: list[set[int]] = []
        self.span_class: list[int | None] = []
        self.node_spans: dict[int, set[int]] = {0: set()}
        self.private_allowed: dict[int, dict[str, Possible]] = {0: {}}
        self._value_tables: dict[tuple[int, str], np.ndarray] = {}
        self._luts: dict[int, tuple[Split, np.ndarray]] = {}
        self._version: dict[int, int] = {}
        self._onehots: dict[int, np.ndarray] = {}
        self._verified: dict[tuple[int, str, tuple[tuple[object, ...], ...]], int] = {}
        for c, rows in enumerate(groups):
            self._new_span(rows, {0}, c if self.class_public else None)
        counts = self._class_counts([r for r in self.span_rows if r is not None])
        if self._violates(counts).any():
            raise AnonymityError(self._root_message(counts))

    def admissible(self, node_id: int, candidate: Candidate) -> bool:
        """Whether the split keeps every span k-anonymous / ℓ-diverse (procedure BREACH)."""
        if candidate.attribute not in self.public:
            return True
        split = candidate.split
        if isinstance(split, CategoricalSplit):
            verified = self._verified.pop((node_id, candidate.attribute, split.groups), None)
            if verified is not None and verified == self._version.get(node_id, 0):
                return True  # checked when proposed, and no span of the node has changed since
        return not self._violates(self._split_counts(node_id, candidate.split)).any()

    def alternatives(self, node_id: int, candidate: Candidate) -> Iterator[Proposal]:
        """The split one level up the hierarchy (then the next), or the best threshold that keeps k (§3.1, §3.3)."""
        name = candidate.attribute
        if name not in self.public:
            return
        if isinstance(candidate.split, ThresholdSplit):
            yield ThresholdProposal(name, lambda t: self._allowed_thresholds(node_id, name, t))
            return
        levels = self.levels.get(name, [])
        key = _partition_key(candidate.split.groups)
        coarser = levels[levels.index(key) + 1 :] if key in levels else []
        if candidate.split.is_multiway and len(candidate.split.groups) == len(self.attributes[name].categories):
            self._value_tables[(node_id, name)] = candidate.children  # per-value class counts
        table = self._value_tables.get((node_id, name))
        value_counts = self._value_span_counts(node_id, name) if self.log_l is None else None
        for groups in coarser:
            if value_counts is not None and self._violates(self._grouped_counts(name, groups, value_counts)).any():
                continue  # would be refused when popped: k-breaches never heal (spans only shrink)
            if value_counts is not None:
                self._verified[(node_id, name, groups)] = self._version.get(node_id, 0)
            yield GroupedProposal(name, groups, table)

    def _value_span_counts(self, node_id: int, name: str) -> np.ndarray:
        """Class counts of the node's spans by value of categorical ``name``: (spans, values, classes)."""
        spans = sorted(self.node_spans[node_id])
        rows = [self.span_rows[s] for s in spans]
        every = np.concatenate(rows)
        local = np.repeat(np.arange(len(spans)), [len(r) for r in rows])
        v, k = len(self.attributes[name].categories), self.table.n_classes
        key = (local * v + self.table.columns[name][every]) * k + self.table.y[every]
        return np.bincount(key, weights=self._weights(every), minlength=len(spans) * v * k).reshape(len(spans), v, k)

    def _grouped_counts(self, name: str, groups: tuple[tuple[object, ...], ...], value_counts: np.ndarray) -> np.ndarray:
        """``value_counts`` summed over each value group: (spans, groups, classes)."""
        onehot = self._onehots.get(id(groups))
        if onehot is None:
            index = {c: i for i, c in enumerate(self.attributes[name].categories)}
            onehot = np.zeros((len(index), len(groups)))
            for j, g in enumerate(groups):
                onehot[[index[v] for v in g], j] = 1.0
            self._onehots[id(groups)] = onehot
        return np.einsum("svk,vg->sgk", value_counts, onehot)

    def on_split(self, node_id: int, candidate: Candidate, child_ids: list[int]) -> None:
        """Update bins and spans after the split (procedure SPLIT)."""
        split = candidate.split
        spans = sorted(self.node_spans.pop(node_id))
        for child in child_ids:
            self.node_spans[child] = set()
        if candidate.attribute not in self.public:
            self._split_private(node_id, split, spans, child_ids)
            return
        for child in child_ids:
            self.private_allowed[child] = self.private_allowed[node_id]
        for s in spans:
            rows = self.span_rows[s]
            assert rows is not None
            branch = self._branch(split, rows)
            others = self.span_leaves[s] - {node_id}
            for leaf in others:  # the populations of these leaves' spans change
                self._version[leaf] = self._version.get(leaf, 0) + 1
            self._kill_span(s)
            order = np.argsort(branch, kind="stable")
            bounds = np.searchsorted(branch[order], np.arange(len(child_ids) + 1))
            for b, child in enumerate(child_ids):
                part = rows[order[bounds[b] : bounds[b + 1]]]
                if len(part):
                    self._new_span(part, others | {child}, self.span_class[s])

    # -- spans ------------------------------------------------------------------------------
    def _new_span(self, rows: np.ndarray, leaves: set[int], cls: int | None) -> None:
        s = len(self.span_rows)
        self.span_rows.append(rows)
        self.span_leaves.append(set(leaves))
        self.span_class.append(cls)
        self.row_span[rows] = s
        for leaf in leaves:
            self.node_spans[leaf].add(s)

    def _kill_span(self, s: int) -> None:
        for leaf in self.span_leaves[s]:
            self.node_spans.get(leaf, set()).discard(s)
        self.span_rows[s] = None

    def _split_private(self, node_id: int, split: Split, spans: list[int], child_ids: list[int]) -> None:
        allowed = self.private_allowed[node_id]
        reachable = []
        for b, child in enumerate(child_ids):
            narrowed = narrow(split, b, allowed.get(split.attribute), self.attributes[split.attribute].categories)
            self.private_allowed[child] = {**allowed, split.attribute: narrowed} if narrowed is not None else allowed
            if narrowed is not None:
                reachable.append(child)
        for s in spans:
            self.span_leaves[s].discard(node_id)
            self.span_leaves[s].update(reachable)
            for child in reachable:
                self.node_spans[child].add(s)

    def spans(self) -> Spans:
        """The current spans of the training records."""
        live = [s for s, rows in enumerate(self.span_rows) if rows is not None]
        index = np.full(len(self.span_rows), -1, dtype=np.intp)
        index[live] = np.arange(len(live))
        counts = self._class_counts([self.span_rows[s] for s in live])  # type: ignore[misc]
        return Spans(
            [tuple(sorted(self.span_leaves[s])) for s in live],
            np.array([self.span_class[s] for s in live], dtype=np.intp) if self.class_public else None,
            index[self.row_span],
            counts.sum(axis=1).astype(np.intp),
            counts,
        )

    # -- the breach test ----------------------------------------------------------------------
    def _weights(self, rows: np.ndarray) -> np.ndarray | None:
        """The records each of ``rows`` stands for (``None``: one each; see EncodedTable.weights)."""
        return None if self.table.weights is None else self.table.weights[rows]

    def _class_counts(self, groups: Sequence[np.ndarray]) -> np.ndarray:
        k = self.table.n_classes
        return np.stack([np.bincount(self.table.y[r], weights=self._weights(r), minlength=k) for r in groups]).astype(float)

    def _violates(self, counts: np.ndarray) -> np.ndarray:
        """Which groups (class counts along the last axis) breach k or ℓ; empty groups never do."""
        n = counts.sum(axis=-1)
        bad = (n > 0) & (n < self.k)
        if self.log_l is not None:
            bad |= (n > 0) & (entropy(counts) < self.log_l - 1e-9)
        return bad

    def _branch(self, split: Split, rows: np.ndarray) -> np.ndarray:
        values = self.table.columns[split.attribute][rows]
        if isinstance(split, ThresholdSplit):
            return split.branch(values)
        cached = self._luts.get(id(split))
        if cached is None or cached[0] is not split:
            cached = (split, split.lookup(self.attributes[split.attribute].categories))
            self._luts[id(split)] = cached
        return cached[1][values]

    def _split_counts(self, node_id: int, split: Split) -> np.ndarray:
        """Class counts of the spans a public split would create: (spans, branches, classes)."""
        spans = sorted(self.node_spans[node_id])
        rows = [self.span_rows[s] for s in spans]
        sizes = np.array([len(r) for r in rows])
        every = np.concatenate(rows)
        local = np.repeat(np.arange(len(spans)), sizes)
        nb, k = split.n_branches, self.table.n_classes
        key = (local * nb + self._branch(split, every)) * k + self.table.y[every]
        return np.bincount(key, weights=self._weights(every), minlength=len(spans) * nb * k).reshape(len(spans), nb, k).astype(float)

    def _allowed_thresholds(self, node_id: int, name: str, thresholds: np.ndarray) -> np.ndarray:
        """For each threshold of numeric ``name`` at the node, whether no new span breaches."""
        ok = np.ones(len(thresholds), dtype=bool)
        k = self.table.n_classes
        for s in self.node_spans[node_id]:
            rows = self.span_rows[s]
            assert rows is not None
            values = self.table.columns[name][rows]
            order = np.argsort(values, kind="stable")
            onehot = np.zeros((len(rows) + 1, k))
            w = self._weights(rows)
            onehot[np.arange(1, len(rows) + 1), self.table.y[rows][order]] = 1 if w is None else w[order]
            cum = np.cumsum(onehot, axis=0)
            left = cum[np.searchsorted(values[order], thresholds, side="right")]
            both = np.stack([left, cum[-1] - left], axis=1)
            ok &= ~self._violates(both).any(axis=1)
        return ok

    def _root_message(self, counts: np.ndarray) -> str:
        n = counts.sum(axis=1)
        if (n < self.k).any():
            return f"the training table breaches k = {self.k} already: a span holds only {int(n.min())} record(s)"
        ent = float(entropy(counts).min())
        return (
            f"the training table is not entropy ℓ-diverse for ℓ = {2 ** self.log_l:.4g}: its class entropy is "  # type: ignore[operator]
            f"{ent:.4f} bits (ℓ = {2 ** ent:.4g}); no tree can meet the requirement"
        )


def _partition_key(groups: Sequence[Sequence[object]]) -> tuple[tuple[object, ...], ...]:
    return tuple(tuple(g) for g in groups if len(g))


def _hierarchy_levels(hierarchy: Hierarchy, categories: Sequence[object]) -> list[tuple[tuple[object, ...], ...]]:
    """The value groups of each hierarchy level, finest first, restricted to ``categories``.

    The first entry is the multiway split (one value per group); levels that group the
    categories identically to a finer one, and the single group of the root, are left out.
    """
    try:
        hierarchy.check_covers(list(categories))
    except HierarchyError as exc:
        raise HierarchyError(f"attribute {hierarchy.attribute!r}: {exc}") from None
    known = set(categories)
    out: list[tuple[tuple[object, ...], ...]] = [tuple((c,) for c in categories)]
    for depth in range(hierarchy.height - 1, 0, -1):
        groups = _partition_key([[v for v in leaves if v in known] for _, leaves in hierarchy.groups_at_depth(depth)])
        if len(groups) > 1 and {frozenset(g) for g in groups} != {frozenset(g) for g in out[-1]}:
            out.append(groups)
    return out


def _leaf_map(grown: Tree, pruned: Tree) -> dict[int, int]:
    """Each leaf of ``grown`` → the leaf of ``pruned`` (a subtree-discarded copy) holding it."""
    out: dict[int, int] = {}
    stack = [(0, 0)]
    while stack:
        old, new = stack.pop()
        if pruned.nodes[new].is_leaf:
            out.update({d.id: new for d in [grown.nodes[old], *grown.descendants(old)] if d.is_leaf})
            continue
        stack.extend(zip(grown.nodes[old].children, pruned.nodes[new].children))
    return out


def remap_spans(spans: Spans, leaf_map: Mapping[int, int]) -> Spans:
    """The spans after discarding subtrees: each span's leaves mapped, equal spans merged."""
    assert spans.class_counts is not None  # the learner always knows its records' classes
    classes = [None] * len(spans.leaves) if spans.span_class is None else [int(c) for c in spans.span_class]
    keys = [(tuple(sorted({leaf_map[leaf] for leaf in leaves})), c) for leaves, c in zip(spans.leaves, classes)]
    unique = list(dict.fromkeys(keys))
    index = {key: i for i, key in enumerate(unique)}
    new_of_old = np.array([index[key] for key in keys], dtype=np.intp)
    counts = np.zeros((len(unique), spans.class_counts.shape[1]))
    np.add.at(counts, new_of_old, spans.class_counts)
    return Spans(
        [key[0] for key in unique],
        None if spans.span_class is None else np.array([key[1] for key in unique], dtype=np.intp),
        new_of_old[spans.span_of],
        counts.sum(axis=1).astype(np.intp),
        counts,
    )


class KAnonymousTreeClassifier(_TreeClassifier):
    """kADET: a decision tree that is k-anonymous (optionally ℓ-diverse) w.r.t. its training data.

    Paper 002 §3.1 (Algorithm 1) with the ID3 grower, §3.3 with the C4.5 one, §4.2 for the
    ℓ-diverse variant; see the module docstring for the decisions taken where the paper is vague.
    The fitted tree ``tree_`` is guaranteed: the linking attack of §2 on the training records
    groups them into spans of at least ``k`` records each (and class entropy ≥ log2 ℓ).

    Parameters
    ----------
    k: the anonymity parameter (≥ 1).
    quasi_identifiers: the public attributes (default: every column of ``X``); the other columns
        are private.
    hierarchies: generalization hierarchies of categorical public attributes (name → Hierarchy,
        e.g. :func:`ppdm.data.hierarchy.adult_hierarchies`); attributes without one are not
        generalized.
    algorithm: ``"id3"`` (information gain, categorical attributes only) or ``"c45"`` (gain
        ratio, numeric thresholds, error-based pruning by subtree discarding).
    l_diversity: require entropy ℓ-diversity of the class in every span (None: no).
    max_confidence: cap on the attacker's confidence in a span's class (sets ℓ, §4.2).
    class_public: whether the attacker knows each person's class (default: private).
    confidence, prune: C4.5 pruning (``algorithm="c45"`` only).
    min_samples_leaf, min_gain, max_depth, categorical: as for :class:`~ppdm.learn.C45Classifier`
        (``min_samples_leaf`` defaults to 1 for ID3 and 2 for C4.5).
    max_distinct_rows: with a Dask X, the most distinct (attributes, class) rows counted in memory
        (default :data:`~ppdm.learn.estimators.MAX_DISTINCT_ROWS`, 5,000,000); kADET tracks every
        one of them, so beyond it refuses.

    Fitted attributes: ``tree_``, ``spans_`` (:class:`~ppdm.tree.spans.Spans` of the training
    records), ``anonymity_`` (the smallest span population), ``l_diversity_``, ``exposed_share_``
    (share of records whose span is class-homogeneous), ``unpruned_tree_`` (C4.5).
    """

    def __init__(
        self,
        k: int = 10,
        quasi_identifiers: Sequence[str] | None = None,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        algorithm: str = "id3",
        l_diversity: float | None = None,
        max_confidence: float | None = None,
        class_public: bool = False,
        confidence: float = 0.25,
        prune: bool = True,
        min_samples_leaf: int | None = None,
        min_gain: float = 0.0,
        max_depth: int | None = None,
        categorical: Sequence[str] | None = None,
        max_distinct_rows: int = MAX_DISTINCT_ROWS,
    ) -> None:
        self.k = k
        self.quasi_identifiers = quasi_identifiers
        self.hierarchies = hierarchies
        self.algorithm = algorithm
        self.l_diversity = l_diversity
        self.max_confidence = max_confidence
        self.class_public = class_public
        self.confidence = confidence
        self.prune = prune
        self.min_samples_leaf = min_samples_leaf
        self.min_gain = min_gain
        self.max_depth = max_depth
        self.categorical = categorical
        self.max_distinct_rows = max_distinct_rows

    @property
    def _algorithm(self) -> str:
        return f"kadet-{self.algorithm}"

    @property
    def criterion(self) -> str:
        return "gain_ratio" if self.algorithm == "c45" else "entropy"

    def _check_params(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise PpdmError(f"k must be an integer >= 1, got {self.k!r}")
        if self.algorithm not in ("id3", "c45"):
            raise PpdmError(f"algorithm must be 'id3' or 'c45', got {self.algorithm!r}")
        if self.l_diversity is not None and self.max_confidence is not None:
            raise PpdmError("give l_diversity or max_confidence, not both")
        if self.l_diversity is not None and not self.l_diversity >= 1:
            raise PpdmError(f"l_diversity must be at least 1, got {self.l_diversity!r}")
        if self.algorithm == "c45" and not 0 < self.confidence < 1:
            raise PpdmError(f"confidence must be in (0, 1), got {self.confidence!r}")
        if self.max_depth is not None and (not isinstance(self.max_depth, (int, np.integer)) or self.max_depth < 0):
            raise PpdmError(f"max_depth must be a non-negative integer or None, got {self.max_depth!r}")
        if self._min_leaf() < 1 or self.min_gain < 0:
            raise PpdmError("min_samples_leaf must be at least 1 and min_gain non-negative")

    def _min_leaf(self) -> int:
        if self.min_samples_leaf is not None:
            return int(self.min_samples_leaf)
        return 2 if self.algorithm == "c45" else 1

    def _ell(self) -> float | None:
        if self.max_confidence is not None:
            return confidence_to_l(self.max_confidence)
        return self.l_diversity

    def _public(self, table: EncodedTable) -> list[str]:
        names = [a.name for a in table.attributes]
        if self.quasi_identifiers is None:
            return names
        if isinstance(self.quasi_identifiers, str):
            raise DataError(f"quasi_identifiers must be a list of column names, not the string {self.quasi_identifiers!r}")
        unknown = [q for q in self.quasi_identifiers if q not in names]
        if unknown:
            raise DataError(f"quasi-identifier(s) not among the columns of X: {', '.join(map(repr, unknown))}")
        return list(self.quasi_identifiers)

    def fit(self, X: pd.DataFrame, y: Sequence | pd.Series | np.ndarray) -> KAnonymousTreeClassifier:
        """Grow (and for C4.5 prune) a k-anonymous tree on ``X`` and class labels ``y``."""
        self._remember_y_name(y)
        table = self._encode(X, y)
        if table is None:
            raise DataError(
                f"kADET tracks the spans of every distinct (attributes, class) row: X has more than {self.max_distinct_rows:,} "
                "of them; coarsen its numeric columns (bins) before fitting on Dask"
            )
        if self.algorithm == "id3":
            self._require_categorical(table, "kADET-ID3", "use algorithm='c45'")
        ell = self._ell()
        if ell is not None and self.class_public:
            raise PpdmError("ℓ-diversity of the class needs a private class (class_public=False)")
        admissibility = SpanAdmissibility(table, self._public(table), self.k, ell, self.class_public, self.hierarchies)
        c45 = self.algorithm == "c45"
        grower = self._grower(
            table,
            split_rules=SplitRules(self._min_leaf(), self.min_gain, c45_thresholds=c45),
            stopping=StoppingRules(self.max_depth, 4 if c45 else 2),
            admissibility=admissibility,
            builder="best-first",
            selection="c45" if c45 else "best",
        )
        tree = grower.grow()
        spans = admissibility.spans()
        if c45 and self.prune:
            self.unpruned_tree_ = tree
            pruned = error_based_prune(tree, self.confidence)
            spans = remap_spans(spans, _leaf_map(tree, pruned))
            tree = pruned
        self.tree_ = tree
        self.spans_ = spans
        self.anonymity_ = spans.k
        self.l_diversity_ = spans.l_diversity
        self.exposed_share_ = spans.exposed_share
        return self
