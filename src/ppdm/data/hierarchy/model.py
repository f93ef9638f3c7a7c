"""Generalization hierarchies: value trees for categorical attributes, nested intervals for
numeric ones.

A hierarchy tells how far a quasi-identifier can be coarsened. Paper 002 §3.1 (kADET): when a
split on an attribute would breach k-anonymity, "if the attribute can be generalized, a new
candidate is inserted with the generalized attribute"; paper 002 §4 reuses the taxonomy trees of
TDS (Fung, Wang & Yu, ICDE 2005) for Adult, and TDS itself starts at the root of every hierarchy
and specializes downward one node at a time (a *cut*, see :class:`Cut`).

Two kinds of hierarchy:

* ``"categorical"``: a tree whose leaves are the attribute's domain values and whose internal
  nodes have names (``ANY`` → ``Government`` → ``Federal-gov``, ...).
* ``"numeric"``: nested half-open intervals ``[lo, hi)`` (``lo`` may be ``-inf``, ``hi`` may be
  ``inf``); the children of a node partition it exactly and contiguously. A node's label is its
  interval written ``"[20, 30)"``.

Depths count from the root (depth 0). Generalizing "to depth d" maps a value to its ancestor at
depth d, or to its own leaf when its branch is shallower than d (so every depth yields a partition
of the domain, and depth d refines depth d-1).

The nested structures the constructors read are parsed in :mod:`ppdm.data.hierarchy.spec`;
files in :mod:`ppdm.data.hierarchy.files`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.hierarchy.spec import (
    KINDS,
    MAX_SHOWN,
    HierarchySpec,
    Kind,
    Label,
    categorical_spec,
    cuts_spec,
    dump_number,
    first_distinct,
    format_number,
    interval_label,
    numeric_spec,
    parse_entry,
    prefixed,
    show_values,
)
from ppdm.errors import HierarchyError

__all__ = ["Cut", "Hierarchy"]

Values = pd.Series | np.ndarray | Sequence[Any]


class Hierarchy:
    """A generalization hierarchy of one attribute (paper 002 §3.1; TDS, Fung et al. 2005).

    Build one with :meth:`categorical`, :meth:`numeric`, :meth:`from_cuts`, :meth:`from_dict` or
    :func:`~ppdm.data.hierarchy.load_hierarchies`. The constructor itself takes the tree as ``root`` plus a
    ``children`` mapping (and, for numeric hierarchies, each node's ``(lo, hi)`` interval) and
    validates it: a proper tree, every domain value a leaf exactly once, numeric children
    contiguous, non-overlapping and covering their parent exactly. A hierarchy is immutable.
    """

    def __init__(
        self,
        attribute: str,
        kind: Kind,
        root: Label,
        children: Mapping[Label, Sequence[Label]],
        intervals: Mapping[Label, tuple[float, float]] | None = None,
    ) -> None:
        if not isinstance(attribute, str) or not attribute:
            raise HierarchyError(f"a hierarchy's attribute must be a non-empty string, got {attribute!r}")
        if kind not in KINDS:
            raise HierarchyError(f"hierarchy {attribute!r}: unknown kind {kind!r} (expected one of {KINDS})")
        self._attribute = attribute
        self._kind: Kind = kind
        with prefixed(f"hierarchy {attribute!r}"):
            self._intervals = self._check_intervals(root, children, intervals)
            kids = self._ordered_children(children)
            self._build(root, kids)

    # -- construction -------------------------------------------------------------------------

    def _check_intervals(
        self,
        root: Label,
        children: Mapping[Label, Sequence[Label]],
        intervals: Mapping[Label, tuple[float, float]] | None,
    ) -> dict[Label, tuple[float, float]]:
        if self._kind == "categorical":
            if intervals is not None:
                raise HierarchyError("a categorical hierarchy takes no intervals")
            return {}
        if intervals is None:
            raise HierarchyError("a numeric hierarchy needs the interval of every node")
        nodes = {root, *children, *(c for kids in children.values() for c in kids)}
        missing = [n for n in nodes if n not in intervals]
        if missing:
            raise HierarchyError(f"no interval given for node(s) {show_values(missing[:MAX_SHOWN])}")
        checked = {}
        for node in nodes:
            lo, hi = (float(b) for b in intervals[node])
            if not lo < hi:
                raise HierarchyError(
                    f"node {node!r}: empty interval, lower bound {format_number(lo)} "
                    f"is not below upper bound {format_number(hi)}"
                )
            checked[node] = (lo, hi)
        return checked

    def _ordered_children(self, children: Mapping[Label, Sequence[Label]]) -> dict[Label, tuple[Label, ...]]:
        """Children as tuples; numeric children sorted and checked to partition their parent."""
        kids = {node: tuple(c) for node, c in children.items()}
        if self._kind == "numeric":
            for node, c in kids.items():
                if c:
                    kids[node] = tuple(sorted(c, key=lambda n: self._intervals[n]))
                    self._check_partition(node, kids[node])
        return kids

    def _check_partition(self, node: Label, kids: tuple[Label, ...]) -> None:
        """Numeric children must cover ``node``'s interval exactly, without gap or overlap."""
        lo, hi = self._intervals[node]
        first, last = self._intervals[kids[0]], self._intervals[kids[-1]]
        if first[0] != lo:
            raise HierarchyError(
                f"children of {node!r} start at {format_number(first[0])}, "
                f"not at its lower bound {format_number(lo)}"
            )
        if last[1] != hi:
            raise HierarchyError(
                f"children of {node!r} end at {format_number(last[1])}, "
                f"not at its upper bound {format_number(hi)}"
            )
        for a, b in zip(kids[:-1], kids[1:]):
            end, start = self._intervals[a][1], self._intervals[b][0]
            if end < start:
                raise HierarchyError(f"children of {node!r} leave a gap between {a!r} and {b!r}")
            if end > start:
                raise HierarchyError(f"children of {node!r} overlap: {a!r} and {b!r}")

    def _build(self, root: Label, kids: Mapping[Label, tuple[Label, ...]]) -> None:
        """Walk the tree from the root, check that it spans every node, and index its leaves."""
        self._root = root
        order, leaves = self._walk(root, kids)
        self._check_spans_all(root, kids)
        self._order = tuple(order)
        self._leaves = tuple(leaves)
        self._leaf_index = pd.Index(leaves)
        self._height = max(self._depth.values())
        self._cut_cache: dict[int, Cut] = {}
        if self._kind == "numeric":
            ends = [self._intervals[leaf][0] for leaf in leaves] + [self._intervals[root][1]]
            self._leaf_edges = np.asarray(ends, dtype=float)

    def _walk(self, root: Label, kids: Mapping[Label, tuple[Label, ...]]) -> tuple[list[Label], list[Label]]:
        """Pre-order walk: parents, depths and each node's span of leaves; returns the nodes in
        pre-order and the leaves in tree order."""
        self._children: dict[Label, tuple[Label, ...]] = {}
        self._parent: dict[Label, Label | None] = {root: None}
        self._depth: dict[Label, int] = {root: 0}
        self._span: dict[Label, tuple[int, int]] = {}
        leaves: list[Label] = []
        order: list[Label] = []
        stack: list[tuple[Label, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                self._span[node] = (self._span[node][0], len(leaves))
                continue
            order.append(node)
            self._children[node] = kids.get(node, ())
            self._span[node] = (len(leaves), -1)
            if not self._children[node]:
                leaves.append(node)
            stack.append((node, True))
            for child in reversed(self._children[node]):
                self._adopt(child, node)
                stack.append((child, False))
        return order, leaves

    def _check_spans_all(self, root: Label, kids: Mapping[Label, tuple[Label, ...]]) -> None:
        """Every node given children must hang under the root; a value tree needs a child."""
        unreachable = [n for n in kids if n not in self._parent]
        if unreachable:
            shown = show_values(unreachable[:MAX_SHOWN])
            raise HierarchyError(f"node(s) {shown} not reachable from the root {root!r}")
        if self._kind == "categorical" and not self._children[root]:
            raise HierarchyError(f"the root {root!r} has no children")

    def _adopt(self, child: Label, parent: Label) -> None:
        if child in self._parent:
            raise HierarchyError(
                f"node {child!r} is used twice (under {self._parent[child]!r} and under {parent!r}); "
                "every name and domain value must appear exactly once"
            )
        self._parent[child] = parent
        self._depth[child] = self._depth[parent] + 1

    @classmethod
    def categorical(cls, attribute: str, tree: Mapping[Label, Any]) -> Hierarchy:
        """A value tree from a nested structure (TDS taxonomy trees, paper 002 §4).

        ``tree`` has one key, the root's name. A mapping maps internal node names to their
        children; a list holds leaf values (the attribute's domain values) and ``{name:
        children}`` mappings for nested groups, e.g. ``{"ANY": ["Private", {"Government":
        ["Federal-gov", "Local-gov", "State-gov"]}]}``.
        """
        return cls.from_spec(categorical_spec(attribute, tree))

    @classmethod
    def numeric(cls, attribute: str, tree: Mapping[str, Any]) -> Hierarchy:
        """Nested intervals from ``{"range": [lo, hi], "children": [...]}`` nodes.

        Bounds are numbers, or ``null``/``"-inf"``/``"inf"`` for unbounded ends; a node without
        ``children`` is a leaf. Children may be listed in any order.
        """
        return cls.from_spec(numeric_spec(attribute, tree))

    @classmethod
    def from_cuts(
        cls,
        attribute: str,
        levels: Sequence[Sequence[float]],
        *,
        lower: float = -math.inf,
        upper: float = math.inf,
    ) -> Hierarchy:
        """Nested intervals from increasingly fine lists of cut points.

        ``levels[d-1]`` holds the interior cut points of depth d (the root is ``[lower,
        upper)``); each level must contain the previous level's points and add at least one.
        An interval a level leaves unsplit becomes a leaf, and a later level may not split it.
        ``from_cuts(a, [[40], [20, 40, 60]], lower=0)`` has ``[0, inf)`` → ``[0, 40)``,
        ``[40, inf)`` → ``[0, 20)``, ``[20, 40)``, ``[40, 60)``, ``[60, inf)``.
        """
        return cls.from_spec(cuts_spec(attribute, levels, lower=lower, upper=upper))

    @classmethod
    def from_spec(cls, spec: HierarchySpec) -> Hierarchy:
        """The hierarchy a parsed spec describes (see :mod:`ppdm.data.hierarchy.spec`)."""
        return cls(spec.attribute, spec.kind, spec.root, spec.children, spec.intervals)

    # -- navigation ---------------------------------------------------------------------------

    @property
    def attribute(self) -> str:
        """The attribute (column) this hierarchy generalizes."""
        return self._attribute

    @property
    def kind(self) -> Kind:
        """``"categorical"`` or ``"numeric"``."""
        return self._kind

    @property
    def root(self) -> Label:
        """The most general node (``ANY``, or the whole range for numeric hierarchies)."""
        return self._root

    @property
    def height(self) -> int:
        """The largest depth of a node (0 for a hierarchy with a single node)."""
        return self._height

    @property
    def nodes(self) -> tuple[Label, ...]:
        """Every node, in pre-order (parents before children, siblings in order)."""
        return self._order

    def _node(self, node: Any) -> Label:
        """``node`` itself, or the label of a ``(lo, hi)`` pair for numeric hierarchies."""
        if self._kind == "numeric" and isinstance(node, tuple) and len(node) == 2:
            node = interval_label(float(node[0]), float(node[1]))
        try:
            known = node in self._parent
        except TypeError:
            known = False
        if not known:
            raise HierarchyError(f"hierarchy {self._attribute!r} has no node {node!r}")
        return node

    def children(self, node: Label) -> tuple[Label, ...]:
        """The children of ``node`` (empty for a leaf); numeric children in increasing order."""
        return self._children[self._node(node)]

    def parent(self, node: Label) -> Label | None:
        """The parent of ``node``, ``None`` for the root."""
        return self._parent[self._node(node)]

    def depth(self, node: Label) -> int:
        """The number of edges from the root to ``node``."""
        return self._depth[self._node(node)]

    def is_leaf(self, node: Label) -> bool:
        """Whether ``node`` has no children."""
        return not self._children[self._node(node)]

    def leaves(self, node: Label | None = None) -> list[Label]:
        """The domain values under ``node`` (default: the root), in tree order.

        For numeric hierarchies these are the labels of the leaf intervals.
        """
        start, end = self._span[self._root if node is None else self._node(node)]
        return list(self._leaves[start:end])

    def interval(self, node: Label) -> tuple[float, float]:
        """The ``(lo, hi)`` bounds of a numeric node's half-open interval."""
        self._require("numeric", "interval")
        return self._intervals[self._node(node)]

    def path(self, node: Label) -> list[Label]:
        """The nodes from the root down to ``node``."""
        node = self._node(node)
        path = [node]
        while self._parent[path[-1]] is not None:
            path.append(self._parent[path[-1]])
        return path[::-1]

    def ancestor(self, value: Any, depth: int) -> Label:
        """The node at ``depth`` above ``value`` (its own leaf when its branch is shallower).

        ``value`` is a domain value (categorical) or a number (numeric).
        """
        self._check_depth(depth)
        leaf = self._leaves[int(self._leaf_positions(np.asarray([value], dtype=object))[0])]
        path = self.path(leaf)
        return path[min(depth, len(path) - 1)]

    def _require(self, kind: Kind, what: str) -> None:
        if self._kind != kind:
            raise HierarchyError(
                f"hierarchy {self._attribute!r} is {self._kind}; {what} needs a {kind} hierarchy"
            )

    def _check_depth(self, depth: int) -> None:
        if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 0:
            raise HierarchyError(
                f"hierarchy {self._attribute!r}: depth must be an integer >= 0, got {depth!r}"
            )

    # -- coverage and vectorised mapping --------------------------------------------------------

    def check_covers(self, values: Values) -> None:
        """Raise :class:`HierarchyError` naming the first values the hierarchy does not cover.

        Categorical: values that are not leaves (internal names count as uncovered); numeric:
        values outside the root interval. Missing values (NaN) are errors too.
        """
        self._leaf_positions(values)

    def _leaf_positions(self, values: Values) -> np.ndarray:
        """Index (into the leaves, in tree order) of each value's leaf; raises when uncovered."""
        if self._kind == "numeric":
            numbers = self._as_numbers(values)
            pos = np.searchsorted(self._leaf_edges, numbers, side="right") - 1
            bad = (pos < 0) | (pos >= len(self._leaves)) | np.isnan(numbers)
            if bad.any():
                self._uncovered(numbers[bad], len(numbers), f"outside {self._root}")
            return pos
        pos = self._categorical_positions(values)
        bad = pos < 0
        if bad.any():
            self._uncovered(_values_array(values)[bad], len(pos), "not leaves of the hierarchy")
        return pos

    def _categorical_positions(self, values: Values) -> np.ndarray:
        if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
            values = values.array
        if isinstance(values, pd.Categorical):
            per_category = self._leaf_index.get_indexer(values.categories)
            codes = values.codes
            return np.where(codes >= 0, per_category[codes], -1)
        return self._leaf_index.get_indexer(_values_array(values))

    def _as_numbers(self, values: Values) -> np.ndarray:
        """``values`` as floats; non-numeric values are an error naming them."""
        if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
            return values.astype(float, copy=False)
        if isinstance(values, pd.Series) and values.dtype.kind in "iuf":
            return values.to_numpy(dtype=float, na_value=np.nan)
        if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        series = values if isinstance(values, pd.Series) else pd.Series(_values_array(values), dtype=object)
        numbers = pd.to_numeric(series, errors="coerce")
        bad = numbers.isna().to_numpy() & series.notna().to_numpy()
        if bad.any():
            raise HierarchyError(
                f"hierarchy {self._attribute!r} is numeric; non-numeric value(s) "
                f"{show_values(first_distinct(series.to_numpy(dtype=object)[bad]))}"
            )
        return numbers.to_numpy(dtype=float, na_value=np.nan)

    def _uncovered(self, bad: np.ndarray, total: int, why: str) -> None:
        """Raise naming the first distinct values of ``bad`` (``total``: how many were mapped)."""
        shown = first_distinct(bad, MAX_SHOWN + 1)
        more = ", ..." if len(shown) > MAX_SHOWN else ""
        shown = shown[:MAX_SHOWN]
        raise HierarchyError(
            f"hierarchy {self._attribute!r} does not cover {len(bad)} of {total} value(s): "
            f"{show_values(shown)}{more} ({why})"
        )

    # -- generalization -------------------------------------------------------------------------

    def cut_at_depth(self, depth: int) -> Cut:
        """The cut of every node at ``depth`` plus the shallower leaves (a partition of the domain)."""
        self._check_depth(depth)
        depth = min(int(depth), self._height)
        if depth not in self._cut_cache:
            nodes = [n for n in self._order if self._in_depth_cut(n, depth)]
            self._cut_cache[depth] = Cut(self, nodes)
        return self._cut_cache[depth]

    def _in_depth_cut(self, node: Label, depth: int) -> bool:
        return self._depth[node] == depth or (self._depth[node] < depth and not self._children[node])

    def generalize(self, values: Values, depth: int) -> pd.Series:
        """Map each value to the label of its ancestor at ``depth`` (paper 002 §3.1).

        Depth 0 is the root; a value whose branch is shallower than ``depth`` keeps its leaf.
        Returns a categorical Series (categories: the cut's labels in tree order, ordered for
        numeric hierarchies) with the input's index when ``values`` is a Series.
        """
        return self.cut_at_depth(depth).apply(values)

    def groups_at_depth(self, depth: int) -> list[tuple[Label, list[Label]]]:
        """The partition of the domain at ``depth``: ``(node label, leaves under it)`` pairs.

        Meant for categorical hierarchies (the value groups of a generalized split, paper 002
        §3.1); for numeric ones the "leaves" are leaf interval labels.
        """
        return [(node, self.leaves(node)) for node in self.cut_at_depth(depth)]

    def cuts_at_depth(self, depth: int) -> np.ndarray:
        """The interior cut points of the numeric partition at ``depth`` (empty at depth 0).

        The intervals are ``[lower, c1), [c1, c2), ..., [ck, upper)`` with ``(lower, upper)`` the
        root's interval; :attr:`Cut.boundaries` includes both ends.
        """
        self._require("numeric", "cuts_at_depth")
        return self.cut_at_depth(depth).boundaries[1:-1]

    # -- top-down specialization ------------------------------------------------------------------

    def top_cut(self) -> Cut:
        """The most general cut, ``{root}``, where top-down specialization starts (TDS)."""
        return Cut(self, [self._root])

    def specializations(self, cut: Cut) -> list[Label]:
        """The nodes of ``cut`` that can be replaced by their children (non-leaves), in order."""
        if cut.hierarchy is not self:
            raise HierarchyError(f"the cut {cut!r} belongs to another hierarchy than {self!r}")
        return [n for n in cut.nodes if self._children[n]]

    # -- serialisation ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """``{"attribute", "kind", "tree"}``; the tree in the format of :meth:`categorical` or
        :meth:`numeric` (unbounded ends written ``"-inf"``/``"inf"``, valid JSON)."""
        if self._kind == "categorical":
            tree: Any = {self._root: self._dump_children(self._root)}
        else:
            tree = self._dump_interval(self._root)
        return {"attribute": self._attribute, "kind": self._kind, "tree": tree}

    def _dump_children(self, node: Label) -> list[Any] | dict[Label, Any]:
        kids = self._children[node]
        if all(self._children[k] for k in kids):
            return {k: self._dump_children(k) for k in kids}
        return [k if not self._children[k] else {k: self._dump_children(k)} for k in kids]

    def _dump_interval(self, node: Label) -> dict[str, Any]:
        lo, hi = self._intervals[node]
        out: dict[str, Any] = {"range": [dump_number(lo), dump_number(hi)]}
        if self._children[node]:
            out["children"] = [self._dump_interval(k) for k in self._children[node]]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], attribute: str | None = None) -> Hierarchy:
        """Inverse of :meth:`to_dict`; also accepts ``{"kind": "numeric", "cuts": [...],
        "range": [lo, hi]}``. ``attribute`` is needed when ``data`` has no ``"attribute"``."""
        return cls.from_spec(parse_entry(data, attribute, where="hierarchy"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hierarchy):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self._attribute, self._kind, self._order))

    def __repr__(self) -> str:
        return (
            f"Hierarchy({self._attribute!r}, {self._kind}, root={self._root!r}, "
            f"height={self._height}, leaves={len(self._leaves)})"
        )


def _values_array(values: Values) -> np.ndarray:
    """Any 1-d array-like as an object array (for hashing lookups and error messages)."""
    array = np.asarray(values, dtype=object)
    if array.ndim != 1:
        raise HierarchyError(f"values must be one-dimensional, got an array of shape {array.shape}")
    return array


# --------------------------------------------------------------------------------------------
# Cuts
# --------------------------------------------------------------------------------------------


class Cut:
    """A set of hierarchy nodes that partitions the leaves (TDS, Fung et al. 2005 §3).

    Top-down specialization starts from :meth:`Hierarchy.top_cut` (``{root}``) and repeatedly
    replaces a node by its children (:meth:`specialize`). :meth:`apply` maps values to the cut
    node containing them. Nodes are kept in tree (leaf) order; cuts are immutable and hashable.
    """

    def __init__(self, hierarchy: Hierarchy, nodes: Iterable[Label]) -> None:
        self._hierarchy = hierarchy
        nodes = [hierarchy._node(n) for n in nodes]
        ordered = sorted(nodes, key=lambda n: hierarchy._span[n])
        self._check_partition(ordered)
        self._nodes = tuple(ordered)
        sizes = [hierarchy._span[n][1] - hierarchy._span[n][0] for n in ordered]
        self._leaf_to_node = np.repeat(np.arange(len(ordered)), sizes)
        self._categories = pd.Index(list(ordered))
        if hierarchy.kind == "numeric":
            ends = [hierarchy._intervals[n][0] for n in ordered] + [hierarchy._intervals[ordered[-1]][1]]
            self._boundaries = np.asarray(ends, dtype=float)

    def _check_partition(self, ordered: list[Label]) -> None:
        h = self._hierarchy
        if not ordered:
            raise HierarchyError(f"hierarchy {h.attribute!r}: a cut needs at least one node")
        position = 0
        for node in ordered:
            start, end = h._span[node]
            if start < position:
                raise HierarchyError(f"hierarchy {h.attribute!r}: cut nodes overlap at {node!r}")
            if start > position:
                raise HierarchyError(
                    f"hierarchy {h.attribute!r}: the cut misses leaf {h._leaves[position]!r}"
                )
            position = end
        if position != len(h._leaves):
            raise HierarchyError(f"hierarchy {h.attribute!r}: the cut misses leaf {h._leaves[position]!r}")

    @property
    def hierarchy(self) -> Hierarchy:
        """The hierarchy whose nodes this cut holds."""
        return self._hierarchy

    @property
    def nodes(self) -> tuple[Label, ...]:
        """The cut's nodes in tree order (increasing intervals for numeric hierarchies)."""
        return self._nodes

    @property
    def boundaries(self) -> np.ndarray:
        """Numeric cuts: the ``len(cut) + 1`` interval edges, both outer bounds included."""
        self._hierarchy._require("numeric", "boundaries")
        return self._boundaries.copy()

    def specializations(self) -> list[Label]:
        """The nodes that can be replaced by their children (see :meth:`Hierarchy.specializations`)."""
        return self._hierarchy.specializations(self)

    def specialize(self, node: Label) -> Cut:
        """The cut with ``node`` replaced by its children (one TDS specialization step)."""
        h = self._hierarchy
        node = h._node(node)
        if node not in self._nodes:
            raise HierarchyError(
                f"hierarchy {h.attribute!r}: node {node!r} is not in the cut {list(self._nodes)}"
            )
        if not h._children[node]:
            raise HierarchyError(
                f"hierarchy {h.attribute!r}: node {node!r} is a leaf and cannot be specialized"
            )
        i = self._nodes.index(node)
        return Cut(h, self._nodes[:i] + h._children[node] + self._nodes[i + 1 :])

    def apply(self, values: Values) -> pd.Series:
        """Map each value to the cut node containing it, as a categorical Series.

        Numeric: one ``np.searchsorted`` on the cut's boundaries; categorical: values are looked
        up once among the leaves (via the categories' codes when ``values`` is categorical) and
        mapped through a leaf → cut-node table. Uncovered or missing values raise.
        """
        h = self._hierarchy
        if h.kind == "numeric":
            codes = self._numeric_codes(h._as_numbers(values))
        else:
            codes = self._leaf_to_node[h._leaf_positions(values)]
        ordered = h.kind == "numeric"
        categorical = pd.Categorical.from_codes(codes, categories=self._categories, ordered=ordered)
        index = values.index if isinstance(values, pd.Series) else None
        return pd.Series(categorical, index=index, name=h.attribute)

    def _numeric_codes(self, numbers: np.ndarray) -> np.ndarray:
        codes = np.searchsorted(self._boundaries, numbers, side="right") - 1
        bad = (codes < 0) | (codes >= len(self._nodes)) | np.isnan(numbers)
        if bad.any():
            self._hierarchy._uncovered(numbers[bad], len(numbers), f"outside {self._hierarchy.root}")
        return codes

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[Label]:
        return iter(self._nodes)

    def __contains__(self, node: object) -> bool:
        return node in self._nodes

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cut):
            return NotImplemented
        return self._hierarchy is other._hierarchy and self._nodes == other._nodes

    def __hash__(self) -> int:
        return hash((id(self._hierarchy), self._nodes))

    def __repr__(self) -> str:
        return f"Cut({self._hierarchy.attribute!r}, {list(self._nodes)!r})"
