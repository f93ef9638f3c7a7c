"""The ``Tree`` model: what a learner produces, what is published, and what attacks read.

A :class:`Tree` is a list of :class:`Node` objects (node 0 is the root; a parent's id is always
smaller than its children's), the attributes it splits on with their domains, and the class
values. Every node keeps its training class counts (possibly estimated, hence floats) and, for
internal nodes, the candidate attributes the learner weighed and the criterion it used: that is
what the attacker of paper 000 §4.2 knows. The :class:`~ppdm.tree.disclosure.Disclosure` level
says how much of the counts is published.

Reading and writing JSON (:mod:`ppdm.tree.io`), rendering (:mod:`ppdm.tree.render`) and
importing scikit-learn trees (:mod:`ppdm.tree.sklearn`) are functions on a ``Tree`` in those
modules, which import this one (never the other way round).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ppdm.data.roles import plain_value
from ppdm.errors import DataError, PpdmError
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.levels import Stacked, flat_routing, route
from ppdm.tree.splits import CategoricalSplit, Prefix, Scalar, Split, ThresholdSplit


class TreeModel:
    """A published tree model: a :class:`Tree`, or a :class:`~ppdm.tree.forest.Forest` of them.

    ``isinstance(value, TreeModel)`` asks whether ``value`` is one of ppdm's models, never which:
    a tree answers what the audit reads of a forest as a forest of one (:attr:`Tree.trees`,
    :meth:`Tree.apply_all`, :attr:`Tree.combine`, :attr:`Tree.n_outputs`, :attr:`Tree.multiplicities`).
    """


@dataclass(frozen=True)
class Attribute:
    """An attribute a tree may split on: categorical with its domain, or numeric."""

    name: str
    kind: Literal["categorical", "numeric"]
    categories: tuple[Scalar, ...] = ()

    @property
    def is_categorical(self) -> bool:
        return self.kind == "categorical"


@dataclass
class Node:
    """One node of a :class:`Tree`.

    ``counts`` are the per-class training counts (``None`` when not published); ``n_samples``
    and ``n_errors`` are what an error-rate disclosure publishes and are derived from the counts
    when those are known. ``candidates`` are the attributes the learner weighed at an internal
    node, ``score`` the criterion's value for the chosen split.

    Trees of a boosted :class:`~ppdm.tree.forest.Forest` also carry ``value``, the score a leaf
    adds to its class's raw prediction, and ``cover``, the sum of the training rows' hessians at
    the node (XGBoost, LightGBM); such a node may know ``n_samples`` without class counts
    (``n_errors`` is then ``None``).
    """

    id: int
    parent: int | None
    depth: int
    label: int
    counts: np.ndarray | None = None
    split: Split | None = None
    children: list[int] = field(default_factory=list)
    candidates: tuple[str, ...] = ()
    score: float | None = None
    _n_samples: float | None = None
    _n_errors: float | None = None
    value: float | None = None
    cover: float | None = None

    @property
    def is_leaf(self) -> bool:
        return self.split is None

    @property
    def n_samples(self) -> float | None:
        if self.counts is not None:
            return float(self.counts.sum())
        return self._n_samples

    @property
    def n_errors(self) -> float | None:
        if self.counts is not None:
            return float(self.counts.sum() - self.counts[self.label])
        return self._n_errors

    @property
    def error_rate(self) -> float | None:
        n, e = self.n_samples, self.n_errors
        if n is None or e is None:
            return None
        return e / n if n > 0 else 0.0


class Tree(TreeModel):
    """A decision tree over named attributes, as learned, imported or read from JSON.

    Parameters
    ----------
    nodes: the nodes, root first, every parent before its children.
    attributes: the attributes the tree may split on (categorical domains included).
    classes: the class values; ``Node.label`` and ``Node.counts`` index into them.
    class_attribute: the name of the class column.
    criterion: the split criterion the learner used ("entropy", "gini", "gain_ratio", ...).
    algorithm: the learner ("id3", "c45", "sklearn", ...).
    disclosure: how much of the counts is published (see :class:`Disclosure`).
    removed_records: training records deleted from the published counts by pruning Method 1
        (paper 003 §4.1): the training table has the root's count plus these.
    """

    def __init__(
        self,
        nodes: Sequence[Node],
        attributes: Sequence[Attribute],
        classes: Sequence[Scalar],
        class_attribute: str = "class",
        criterion: str | None = None,
        algorithm: str | None = None,
        disclosure: Disclosure | str = Disclosure.CLASS_COUNTS,
        removed_records: float = 0.0,
    ) -> None:
        self.nodes = list(nodes)
        self.removed_records = float(removed_records)
        self.attributes = {a.name: a for a in attributes}
        self.classes = tuple(classes)
        self.class_attribute = class_attribute
        self.criterion = criterion
        self.algorithm = algorithm
        self.disclosure = Disclosure.parse(disclosure)

    # -- structure ---------------------------------------------------------------------------
    @property
    def is_regressor(self) -> bool:
        """Whether the tree predicts a number: no classes, ``class_attribute`` names the numeric
        target and every leaf's ``value`` is the mean target of its rows (a regression tree)."""
        return not self.classes

    @property
    def root(self) -> Node:
        return self.nodes[0]

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def trees(self) -> list[Tree]:
        """The tree as a forest of one: ``[self]`` (so that code reads ``model.trees`` of a tree or a forest)."""
        return [self]

    @property
    def n_trees(self) -> int:
        return 1

    @property
    def combine(self) -> str:
        """How the tree's one prediction combines, as a forest of one: ``"mean"`` for a regression
        tree (its leaf's value), else ``"vote"`` (its leaf's label; see :data:`ppdm.tree.forest.COMBINES`)."""
        return "mean" if self.is_regressor else "vote"

    @property
    def n_outputs(self) -> int:
        """Raw scores per row, as a forest of one: 1 (see :attr:`Forest.n_outputs`)."""
        return 1

    @property
    def multiplicities(self) -> list[np.ndarray | None]:
        """Each training row's multiplicity per tree, as a forest of one: ``[None]`` (a tree records none)."""
        return [None]

    @property
    def n_records(self) -> int | None:
        """The training rows per-row multiplicities count: ``None`` (a tree records none; see :attr:`Forest.n_records`)."""
        return None

    @property
    def family(self) -> str:
        """The model's family, in words: ``"decision tree"`` or ``"regression tree"``."""
        return "regression tree" if self.is_regressor else "decision tree"

    @property
    def known(self) -> list[frozenset[str]]:
        """What the tree publishes, as a forest of one: ``[quantities]`` (see :attr:`Forest.known`)."""
        return [published_quantities(self)]

    @property
    def n_training_records(self) -> float | None:
        """The training records the tree was fitted on, as far as it publishes them: the root's
        count plus the records pruning Method 1 removed (``None``: only labels published)."""
        n = self.root.n_samples
        return None if n is None else n + self.removed_records

    @property
    def n_leaves(self) -> int:
        return sum(1 for n in self.nodes if n.is_leaf)

    @property
    def depth(self) -> int:
        return max(n.depth for n in self.nodes)

    @property
    def split_attributes(self) -> tuple[str, ...]:
        """The attributes the tree splits on, each once, in order of first appearance (node order)."""
        return tuple(dict.fromkeys(n.split.attribute for n in self.nodes if n.split is not None))

    def leaves(self) -> list[Node]:
        return [n for n in self.nodes if n.is_leaf]

    def internal_nodes(self) -> list[Node]:
        return [n for n in self.nodes if not n.is_leaf]

    def path(self, node_id: int) -> list[tuple[Node, int]]:
        """``(ancestor, branch taken)`` pairs from the root down to ``node_id``."""
        out: list[tuple[Node, int]] = []
        node = self.nodes[node_id]
        while node.parent is not None:
            parent = self.nodes[node.parent]
            out.append((parent, parent.children.index(node.id)))
            node = parent
        return out[::-1]

    def prefix(self, node_id: int) -> Prefix:
        """The attribute prefix Λ of a node (paper 000 §4)."""
        prefix = Prefix()
        for parent, branch in self.path(node_id):
            assert parent.split is not None
            prefix = prefix.with_condition(parent.split.attribute, parent.split.condition(branch))
        return prefix

    def prefixes(self) -> dict[int, Prefix]:
        """Every node's attribute prefix (:meth:`prefix`), in one walk from the root: linear in
        the nodes, where a prefix per node walks each path again (quadratic in a deep tree)."""
        out = {self.root.id: Prefix()}
        stack = [self.root]
        while stack:
            node = stack.pop()
            for branch, child in enumerate(node.children):
                assert node.split is not None
                out[child] = out[node.id].with_condition(node.split.attribute, node.split.condition(branch))
                stack.append(self.nodes[child])
        return out

    def descendants(self, node_id: int) -> Iterator[Node]:
        stack = list(self.nodes[node_id].children)
        while stack:
            node = self.nodes[stack.pop()]
            yield node
            stack.extend(node.children)

    def domains(self) -> dict[str, tuple[Scalar, ...]]:
        return {a.name: a.categories for a in self.attributes.values() if a.is_categorical}

    # -- routing -----------------------------------------------------------------------------
    def encode(self, X: pd.DataFrame, strict: bool = False, columns: Iterable[str] | None = None) -> dict[str, np.ndarray]:
        """Columns of ``X`` the tree splits on: category codes (-1 = unknown) or floats.

        With ``strict``, a value outside an attribute's domain raises :class:`DataError` naming
        the column and value (an attack must not silently route a person down a default branch).
        """
        used = set(self.split_attributes)
        if columns is not None:
            used &= set(columns)
        return encode_columns(X, self.attributes, used, "tree", strict)

    def apply(self, X: pd.DataFrame) -> np.ndarray:
        """The id of the leaf each row of ``X`` lands in (vectorised over rows)."""
        return self.apply_encoded(self.encode(X), len(X))

    def apply_all(self, X: pd.DataFrame) -> np.ndarray:
        """The leaf each row of ``X`` lands in, as a forest of one: rows × 1 (see :meth:`Forest.apply_all`)."""
        return self.apply(X)[:, None]

    def apply_encoded(self, encoded: Mapping[str, np.ndarray] | Stacked, n_rows: int) -> np.ndarray:
        """:meth:`apply` on columns already encoded as :meth:`encode` gives them (or stacked once
        for a forest's trees, :func:`ppdm.tree.levels.stack`): every row at once, one level per
        step (:mod:`ppdm.tree.levels`)."""
        return route(flat_routing(self.nodes, {name: a.categories for name, a in self.attributes.items()}), encoded, n_rows)

    def branch_of(self, split: Split, values: np.ndarray) -> np.ndarray:
        """Branch index of each value of ``split``'s attribute (codes for categorical ones)."""
        if isinstance(split, ThresholdSplit):
            return split.branch(values)
        return split.branch(values, self.attributes[split.attribute].categories)

    def leaf_labels(self) -> np.ndarray:
        """Class index of every node (indexed by node id)."""
        return np.array([n.label for n in self.nodes], dtype=np.intp)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Predicted class values for the rows of ``X`` (a regression tree's leaf values)."""
        if self.is_regressor:
            return np.array([np.nan if n.value is None else n.value for n in self.nodes])[self.apply(X)]
        classes = np.asarray(self.classes, dtype=object)
        return classes[self.leaf_labels()[self.apply(X)]]

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class frequencies of each row's leaf (one-hot on the label when counts are hidden)."""
        return self.leaf_distributions()[self.apply(X)]

    def leaf_distributions(self) -> np.ndarray:
        """Per-node class distribution (n_nodes × n_classes); empty nodes give their label."""
        k = len(self.classes)
        counts = np.zeros((self.n_nodes, k))
        ids = [n.id for n in self.nodes if n.counts is not None]
        if ids:  # one stacking of the published counts, not a sum per node (a forest has 10⁵–10⁶ nodes)
            counts[ids] = np.vstack([n.counts for n in self.nodes if n.counts is not None])
        total = counts.sum(axis=1)
        out = np.divide(counts, total[:, None], out=np.zeros_like(counts), where=total[:, None] > 0)
        empty = np.flatnonzero(total <= 0)
        out[empty, self.leaf_labels()[empty]] = 1.0
        return out

    # -- publishing --------------------------------------------------------------------------
    def published(self, disclosure: Disclosure | str | None = None) -> Tree:
        """A copy holding only what ``disclosure`` (default: the tree's own level) reveals."""
        level = self.disclosure if disclosure is None else Disclosure.parse(disclosure)
        out = copy.copy(self)  # node by node, not copy.deepcopy: linear in the nodes, whatever the depth
        out.nodes = [_copy_node(node) for node in self.nodes]
        out.attributes = dict(self.attributes)
        out.disclosure = level
        if level is Disclosure.CLASS_COUNTS:
            return out
        for node in out.nodes:
            n, e = node.n_samples, node.n_errors
            node.counts = None
            node._n_samples = n if level.reveals_rates else None
            node._n_errors = e if level.reveals_rates else None
        return out

    def without_values(self, values: Mapping[str, Iterable[Scalar]]) -> Tree:
        """A copy whose categorical domains leave out ``values`` (attribute → values), in its
        domains and in its splits' groups: the tree an audit reads once it knows no training row
        holds them. Every row routes as before (a value no row holds sends none); removing a
        value that alone makes up a branch raises :class:`~ppdm.errors.PpdmError`."""
        return self.recoded({name: dict.fromkeys(vs, ()) for name, vs in values.items()})

    def recoded(self, recode: Mapping[str, Mapping[Scalar, tuple[Scalar, ...]]]) -> Tree:
        """A copy where each listed value of a categorical attribute stands for the values
        ``recode[attribute][value]`` gives (none: left out; several: a value read as the ones it
        stood for), in its domain and in its splits' groups, in place; other values stay. A split
        left with a branch of no value raises :class:`~ppdm.errors.PpdmError`."""
        out = self.published()
        recode = {name: r for name, r in recode.items() if name in self.attributes and self.attributes[name].is_categorical}

        def spread(values: Iterable[Scalar], name: str) -> tuple[Scalar, ...]:
            return tuple(x for v in values for x in recode[name].get(v, (v,)))

        for name in recode:
            out.attributes[name] = Attribute(name, "categorical", spread(self.attributes[name].categories, name))
        for node in out.nodes:
            split = node.split
            if isinstance(split, CategoricalSplit) and split.attribute in recode:
                groups = tuple(spread(g, split.attribute) for g in split.groups)
                if not all(groups):
                    raise PpdmError(f"node {node.id} splits {split.attribute!r} on values that would all be left out")
                node.split = CategoricalSplit(split.attribute, groups, split.default)
        return out

    def _repr_html_(self) -> str:
        """What a notebook shows: the tree's facts as a small table (``ppdm.audit`` tells what it discloses)."""
        kind = "regression tree" if self.is_regressor else "decision tree"
        return facts_html(f"{kind} predicting {self.class_attribute!r}", [
            ("learner", f"{self.algorithm or 'unknown'}" + (f" ({self.criterion})" if self.criterion else "")),
            ("size", f"{self.n_nodes:,} nodes, {self.n_leaves:,} leaves, depth {self.depth}"),
            ("splits on", ", ".join(sorted(self.split_attributes)) or "nothing (one leaf)"),
            *([] if self.is_regressor else [("classes", ", ".join(map(str, self.classes)))]),
            ("publishes", self.disclosure.value),
        ])

    def __repr__(self) -> str:
        return (
            f"Tree(algorithm={self.algorithm!r}, criterion={self.criterion!r}, "
            f"nodes={self.n_nodes}, leaves={self.n_leaves}, depth={self.depth}, "
            f"classes={list(self.classes)!r}, disclosure={self.disclosure.value!r})"
        )


def _copy_node(node: Node) -> Node:
    """A copy of ``node`` sharing nothing mutable with it (its counts and children are copied;
    its split and candidates are immutable)."""
    out = copy.copy(node)
    out.counts = None if node.counts is None else node.counts.copy()
    out.children = list(node.children)
    return out


def encode_columns(
    X: pd.DataFrame, attributes: Mapping[str, Attribute], used: Iterable[str], model: str = "tree", strict: bool = False
) -> dict[str, np.ndarray]:
    """The ``used`` columns of ``X``: category codes (-1 = unknown) or floats (see :meth:`Tree.encode`).

    ``model`` names what splits on them in the errors ("tree", "forest").
    """
    missing = sorted(a for a in used if a not in X.columns)
    if missing:
        raise DataError(f"the {model} splits on column(s) missing from the data: {', '.join(missing)}")
    out: dict[str, np.ndarray] = {}
    for name in used:
        col = X[name]
        if attributes[name].is_categorical:
            out[name] = encode_categories(col, attributes[name].categories)
            if strict:
                check_in_domain(col, out[name], name, model)
            continue
        try:
            out[name] = col.to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise DataError(f"column {name!r} must be numeric for this {model}") from None
    return out


def encode_categories(column: pd.Series, categories: Sequence[Scalar]) -> np.ndarray:
    """Codes of ``column``'s values in ``categories`` (-1 for values outside them or missing).

    Values are matched as they are; if some do not match but every value matches by its text
    (a CSV read ``1`` where the tree has ``"1"``), the text is used.
    """
    if isinstance(column.dtype, pd.CategoricalDtype) and tuple(column.cat.categories) == tuple(categories):
        return column.cat.codes.to_numpy(dtype=np.intp)
    values = column.to_numpy(dtype=object)
    codes = pd.Index(list(categories), dtype=object).get_indexer(pd.Index(values, dtype=object))
    unmatched = (codes < 0) & ~pd.isna(values)
    if unmatched.any():
        as_text = pd.Index([str(c) for c in categories], dtype=object).get_indexer(
            pd.Index([str(v) for v in values], dtype=object)
        )
        if not ((as_text < 0) & ~pd.isna(values)).any():
            codes = np.where(pd.isna(values), -1, as_text)
    return codes.astype(np.intp)


def check_in_domain(column: pd.Series, codes: np.ndarray, name: str, model: str = "tree") -> None:
    """Refuse a value of ``column`` outside its attribute's categories (``codes`` −1, the value
    not missing), naming the column, the value, its row label and how many rows hold such values."""
    bad = (codes < 0) & column.notna().to_numpy()
    if bad.any():
        at = int(np.argmax(bad))
        raise DataError(
            f"column {name!r}: value {plain_value(column.iloc[at])!r} (row {plain_value(column.index[at])!r}) is not in the "
            f"{model}'s domain for this attribute ({int(bad.sum()):,} such row(s))"
        )


def facts_html(title: str, facts: Sequence[tuple[str, str]]) -> str:
    """A model's facts as an HTML fragment: a title over a two-column table, every text escaped."""
    from html import escape

    rows = "".join(f'<tr><th style="text-align:left;padding-right:12px">{escape(k)}</th><td style="text-align:left">{escape(v)}</td></tr>' for k, v in facts)
    return f"<div><strong>{escape(title)}</strong><table>{rows}</table></div>"


def published_quantities(tree: Tree, additive: bool = False) -> frozenset[str]:
    """The quantities every node of ``tree`` carries and its disclosure publishes (``labels``,
    ``class-counts``, ``error-rates``, ``sample-counts``, ``cover``, ``leaf-values``); ``additive``:
    the tree is a round of a boosted model, whose labels are placeholders."""
    nodes = tree.nodes
    out = set()
    if not additive:
        out.add("labels")
    if tree.disclosure is Disclosure.CLASS_COUNTS and all(n.counts is not None for n in nodes):
        out.add("class-counts")
    if tree.disclosure is Disclosure.ERROR_RATES and all(n.n_samples is not None and n.n_errors is not None for n in nodes):
        out.add("error-rates")
    if all(n.n_samples is not None for n in nodes) and (additive or out & {"class-counts", "error-rates"}):
        out.add("sample-counts")
    if all(n.cover is not None for n in nodes):
        out.add("cover")
    if all(n.value is not None for n in nodes if n.is_leaf):
        out.add("leaf-values")
    return frozenset(out)
