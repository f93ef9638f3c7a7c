"""The attacker's unknowns: what a record holds that the attacker does not know, slot by slot.

Paper 000 §3 lets the attacker know every quasi-identifier and estimate P(X | Q) of the class X.
A general threat model splits a record into the part q the attacker knows (any columns, the class
among them or not) and the part u the model uses that they do not know:

* the sensitive attribute (always: it is what the attack is about);
* the class, when it is unknown and not itself the sensitive attribute;
* every attribute the tree splits on that is neither known nor sensitive.

u ranges over the product of these *components*. A categorical component takes the tree's domain
(the sensitive column's own values when the tree does not use it); a numeric one takes the
intervals that the tree's own thresholds on it cut (``x <= t_1``, ``t_1 < x <= t_2``, ...): values
inside one interval route every record identically, so the attacker cannot and need not tell them
apart. The maximum-entropy estimate is over this product, P(u | q).

What a leaf publishes depends on u only through three things: the leaf (q, u) lands in, its class
and its sensitive value. So the cells u of a group that agree on these are merged into one *slot*
(leaf, sensitive value, class) holding ``m`` cells, the product over the other unknown split
attributes of how many of their cells the leaf's path allows (paper 000's objective over the
cells becomes entropy relative to the base measure m over the slots: the same optimum, with far
fewer variables). A group's slots are its reachable leaves (path-consistent: an attribute split
twice on a path only reaches what both splits allow) times the sensitive values and classes each
leaf allows. Paper 000's setting is the special case u = class = sensitive: one leaf per group and
one slot per class.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, MaxEntError, check_options
from ppdm.tree.forest import Forest
from ppdm.tree.leaf_pairs import LeafPairs
from ppdm.tree.model import Tree, encode_categories
from ppdm.tree.splits import Interval, Split, ThresholdSplit


@dataclass(frozen=True)
class TableOptions:
    """How large an attacker's table may grow: ``max_variables``, the most slots (known-value
    groups × slots per group, padded), (group, leaf) pairs or slot types an audit builds before
    refusing, naming the unknowns to coarsen (default 30,000,000)."""

    max_variables: int = 30_000_000

    def __post_init__(self) -> None:
        check_options(self)  # a count '10' or 2.5 is refused here, naming the field


#: A sensitive column that the tree does not use, with more distinct values than this, must be binned.
MAX_SENSITIVE_VALUES = 200


@dataclass(frozen=True)
class Component:
    """One unknown column of u and its cells.

    ``role`` says why it is unknown; ``cells`` are the values shown to a user (a category, or an
    interval such as ``"30 < age <= 40"``); ``thresholds`` (numeric components) are the sorted cut
    points; ``in_tree`` whether the tree splits on it.
    """

    name: str
    role: Literal["sensitive", "class", "split"]
    cells: tuple
    thresholds: np.ndarray | None = None
    in_tree: bool = True

    @property
    def size(self) -> int:
        return len(self.cells)

    @property
    def is_numeric(self) -> bool:
        return self.thresholds is not None

    def cell_codes(self, column: pd.Series) -> np.ndarray:
        """Cell of each value of ``column``, −1 where it has none (not a number, or not one of the cells)."""
        if self.is_numeric:
            values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
            cells = np.searchsorted(self.thresholds, np.nan_to_num(values), side="left").astype(np.intp)
            return np.where(np.isnan(values), -1, cells)
        return encode_categories(column, self.cells)

    def codes(self, column: pd.Series) -> np.ndarray:
        """Cell of each value of ``column``; a value outside the cells raises, naming the row."""
        codes = self.cell_codes(column)
        bad = codes < 0
        if bad.any() and self.is_numeric:
            first = int(np.flatnonzero(bad)[0])
            raise DataError(f"column {self.name!r}: value {column.iloc[first]!r} (row {first}) is not a number")
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"column {self.name!r}: value {column.iloc[first]!r} (row {first}) is not one of the "
                f"{self.size} values the audit knows for it ({', '.join(map(str, self.cells[:8]))}"
                f"{', ...' if self.size > 8 else ''})"
            )
        return codes


@dataclass
class UnknownDomain:
    """The unknown components: the sensitive attribute first, then the class (when unknown), then
    the unknown split attributes."""

    components: tuple[Component, ...]

    @property
    def sensitive(self) -> Component:
        return self.components[0]

    @property
    def size(self) -> int:
        """The number of cells u (the product of the components' sizes)."""
        return math.prod(c.size for c in self.components)

    def describe(self) -> str:
        return " × ".join(f"{c.name} ({c.size})" for c in self.components)


@dataclass
class AttackerTable:
    """The attacker's table under a threat model: groups of known values and their slots.

    Arrays ``(groups, slots)``: ``leaf`` the leaf a slot lands in, ``klass`` its class index,
    ``sens`` its sensitive cell, ``log_base`` the log of how many cells of u it holds (``None``:
    one each; ``-inf`` on padding, where ``valid`` is false). ``true_slot`` is each record's slot
    when the data holds every unknown column (``None`` otherwise); ``known_group`` marks the
    groups that are single individuals the attacker fully knows.
    """

    groups: QIGroups
    domain: UnknownDomain
    leaf: np.ndarray
    klass: np.ndarray
    sens: np.ndarray
    valid: np.ndarray
    log_base: np.ndarray | None
    true_slot: np.ndarray | None
    class_known: bool
    class_attribute: str
    known_group: np.ndarray | None = None

    @property
    def n_slots(self) -> int:
        return self.leaf.shape[1]

    @property
    def is_paper_setting(self) -> bool:
        """u is the class only and every split attribute is known (paper 000 §3)."""
        return len(self.domain.components) == 1 and self.domain.sensitive.name == self.class_attribute

    def truth(self) -> np.ndarray | None:
        """The real joint distribution P(q, slot) of the records (groups × slots), if known."""
        if self.true_slot is None:
            return None
        g, n = self.groups.n_groups, self.n_slots
        keys = self.groups.group_of_record * n + self.true_slot
        return np.bincount(keys, weights=self.groups.record_weights, minlength=g * n).reshape(g, n) / self.groups.n_records

    def sensitive_marginal(self, p: np.ndarray) -> np.ndarray:
        """``(groups, sensitive values)`` from ``(groups, slots)``."""
        n_values = self.domain.sensitive.size
        g = np.repeat(np.arange(p.shape[0]), p.shape[1]).reshape(p.shape)
        keys = (g * n_values + np.maximum(self.sens, 0))[self.valid]
        out = np.bincount(keys, weights=p[self.valid], minlength=p.shape[0] * n_values)
        return out.reshape(p.shape[0], n_values)

    def true_sensitive(self) -> np.ndarray | None:
        """Each record's true sensitive cell."""
        if self.true_slot is None:
            return None
        return self.sens[self.groups.group_of_record, self.true_slot]

    def true_marginal(self) -> np.ndarray | None:
        """``(groups, sensitive values)``: the records' own distribution of the sensitive cell per group."""
        joint = self.truth()
        return None if joint is None else self.sensitive_marginal(joint / self.groups.weights[:, None])

    def leaf_pairs(self) -> LeafPairs:
        """Per group, the leaves its valid slots land in, as (tree 0, leaf) pairs."""
        group, slot = np.nonzero(self.valid)
        return LeafPairs.from_triples(group, np.zeros(len(group), dtype=np.int64), self.leaf[group, slot], self.leaf.shape[0])

    def provenance(self) -> list[str]:
        """Per group, the leaves its slots land in ("leaf 4", "leaves 3, 7")."""
        patterns, inverse = np.unique(np.sort(np.where(self.valid, self.leaf, -1), axis=1), axis=0, return_inverse=True)
        text = []
        for row in patterns:
            row = row[row >= 0]
            ids = row[np.r_[True, row[1:] != row[:-1]]]
            text.append(("leaf " if len(ids) == 1 else "leaves ") + ", ".join(map(str, ids)))
        return [text[i] for i in inverse.ravel()]


def split_attributes(tree: Tree | Forest) -> list[str]:
    """The attributes the model splits on, in order of first appearance (the model's own
    :attr:`~ppdm.tree.model.Tree.split_attributes`, as a list; kept for its callers)."""
    return list(tree.split_attributes)


def _thresholds(tree: Tree, attribute: str) -> np.ndarray:
    cuts = {n.split.threshold for n in tree.nodes if isinstance(n.split, ThresholdSplit) and n.split.attribute == attribute}
    return np.array(sorted(cuts), dtype=float)


def interval_cells(name: str, thresholds: np.ndarray) -> tuple[str, ...]:
    """Readable names of the intervals that ``thresholds`` cut (``x <= t`` goes left), at the
    data's precision (:meth:`~ppdm.tree.splits.Interval.describe`)."""
    if len(thresholds) == 0:
        return (f"any {name}",)
    bounds = [-math.inf, *(float(v) for v in thresholds), math.inf]
    names = tuple(Interval(lo, hi).describe(name) for lo, hi in zip(bounds, bounds[1:]))
    if len(set(names)) == len(names):
        return names
    t = [repr(float(v)) for v in thresholds]  # decimals that coincide: every digit
    inner = [f"{a} < {name} <= {b}" for a, b in zip(t, t[1:])]
    return (f"{name} <= {t[0]}", *inner, f"{name} > {t[-1]}")


def _tree_component(tree: Tree, name: str, role: Literal["sensitive", "split"]) -> Component:
    attr = tree.attributes[name]
    if attr.is_categorical:
        return Component(name, role, tuple(attr.categories))
    cuts = _thresholds(tree, name)
    return Component(name, role, interval_cells(name, cuts), thresholds=cuts)


def sensitive_component(tree: Tree, data: pd.DataFrame | None, sensitive: str) -> Component:
    """The sensitive attribute's cells: the classes, the tree's domain, or the column's values."""
    if sensitive == tree.class_attribute:
        return Component(sensitive, "sensitive", tuple(tree.classes), in_tree=False)
    if sensitive in tree.split_attributes:
        return _tree_component(tree, sensitive, "sensitive")
    if data is None or sensitive not in data.columns:
        raise DataError(f"the sensitive column {sensitive!r} is not in the data and the tree does not use it: its values are unknown")
    column = data[sensitive]
    if isinstance(column.dtype, pd.CategoricalDtype):
        values = tuple(column.cat.categories)
    else:
        values = tuple(pd.unique(column.dropna()))
        try:
            values = tuple(sorted(values))
        except TypeError:
            values = tuple(sorted(values, key=str))
    if len(values) > MAX_SENSITIVE_VALUES:
        raise DataError(
            f"the sensitive column {sensitive!r} has {len(values):,} distinct values: bin it into at most "
            f"{MAX_SENSITIVE_VALUES} (a hierarchy level or numeric intervals) before auditing"
        )
    return Component(sensitive, "sensitive", values, in_tree=False)


def unknown_domain(tree: Tree, data: pd.DataFrame | None, known: Sequence[str], sensitive: str) -> UnknownDomain:
    """The components of u for an attacker who knows ``known`` and wants ``sensitive``."""
    known_set = set(known)
    if sensitive in known_set:
        raise DataError(f"the sensitive column {sensitive!r} cannot also be a known column")
    components = [sensitive_component(tree, data, sensitive)]
    if tree.class_attribute != sensitive and tree.class_attribute not in known_set:
        components.append(Component(tree.class_attribute, "class", tuple(tree.classes), in_tree=False))
    for name in tree.split_attributes:
        if name not in known_set and name != sensitive:
            components.append(_tree_component(tree, name, "split"))
    return UnknownDomain(tuple(components))


# -- what each group reaches -----------------------------------------------------------------------


@dataclass
class LeafReach:
    """What the groups can reach in the tree, found in one traversal.

    ``reach`` (groups × tree nodes, 0/1): the leaves each group's known values reach for some
    values of its unknowns (path-consistent: an attribute split twice on a path only reaches what
    both splits allow). ``leaves``: the leaves some group reaches (ascending ids); per leaf, the
    sensitive cells its path allows and the log of how many cells of the other unknown split
    attributes it holds (``log_mult``).
    """

    reach: sp.csr_matrix
    leaves: np.ndarray
    sensitive: list[np.ndarray]
    log_mult: np.ndarray

    def position(self, n_nodes: int) -> np.ndarray:
        """Index of each node id in ``leaves`` (-1 for nodes no group reaches)."""
        index = np.full(n_nodes, -1, dtype=np.intp)
        index[self.leaves] = np.arange(len(self.leaves))
        return index


def leaf_reach(tree: Tree, groups: QIGroups, domain: UnknownDomain) -> LeafReach:
    """Send the groups down the tree: known splits route them, unknown ones narrow the unknowns."""
    known_split = [a for a in tree.split_attributes if a in groups.quasi_identifiers]
    encoded = tree.encode(groups.table, strict=True, columns=known_split)
    _check_routable(tree, groups, encoded, known_split)
    unknown = {c.name: c for c in domain.components if c.role != "class" and c.in_tree}
    found = sorted(route_unknowns(tree, encoded, groups.n_groups, unknown), key=lambda hit: hit[0])
    leaves = np.array([leaf for leaf, _, _ in found], dtype=np.intp)
    rows = np.concatenate([r for _, r, _ in found]) if found else np.zeros(0, dtype=np.intp)
    cols = np.repeat(leaves, [len(r) for _, r, _ in found]) if found else np.zeros(0, dtype=np.intp)
    reach = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(groups.n_groups, tree.n_nodes))
    s = domain.sensitive
    everything = np.arange(s.size)
    sensitive = [np.flatnonzero(masks[s.name]) if s.name in masks else everything for _, _, masks in found]
    others = [c.name for c in domain.components[1:] if c.role == "split"]
    log_mult = np.array([float(sum(math.log(masks[n].sum()) for n in others)) for _, _, masks in found])
    return LeafReach(reach, leaves, sensitive, log_mult)


def route_unknowns(
    tree: Tree, encoded: dict[str, np.ndarray], n_groups: int, unknown: dict[str, Component],
) -> list[tuple[int, np.ndarray, dict[str, np.ndarray]]]:
    """``(leaf, groups, cells)`` for every leaf some group reaches: the groups (index array) whose
    known values lead there and, per unknown attribute, the cells the path allows (boolean mask).

    Groups are sent down known splits as index arrays; an unknown split sends them down every
    branch whose narrowed cells are not empty.
    """
    out: list[tuple[int, np.ndarray, dict[str, np.ndarray]]] = []
    start = {name: np.ones(c.size, dtype=bool) for name, c in unknown.items()}
    stack: list[tuple[int, np.ndarray, dict[str, np.ndarray]]] = [(0, np.arange(n_groups), start)]
    while stack:
        node_id, rows, masks = stack.pop()
        node = tree.nodes[node_id]
        if len(rows) == 0:
            continue
        if node.split is None:
            out.append((node_id, rows, masks))
            continue
        name = node.split.attribute
        if name in unknown:
            narrowed = narrow(tree, node.split, unknown[name], masks[name])
            stack.extend((child, rows, {**masks, name: m}) for child, m in zip(node.children, narrowed) if m.any())
            continue
        branch = tree.branch_of(node.split, encoded[name][rows])
        order = np.argsort(branch, kind="stable")
        bounds = np.searchsorted(branch[order], np.arange(len(node.children) + 1))
        stack.extend((child, rows[order[bounds[b] : bounds[b + 1]]], masks) for b, child in enumerate(node.children))
    return out


def narrow(tree: Tree, split: Split, component: Component, allowed: np.ndarray) -> list[np.ndarray]:
    """Per branch of ``split``, the cells of its (unknown) attribute still allowed.

    A numeric cell lies wholly on one side of every threshold of the tree; a category goes where
    :meth:`CategoricalSplit.lookup` sends it (values in no group go to the default branch).
    """
    if isinstance(split, ThresholdSplit):
        assert component.thresholds is not None
        left = np.arange(component.size) <= np.searchsorted(component.thresholds, split.threshold)
        return [allowed & left, allowed & ~left]
    branch = split.lookup(tree.attributes[split.attribute].categories)[:-1]
    return [allowed & (branch == b) for b in range(split.n_branches)]


def _check_routable(tree: Tree, groups: QIGroups, encoded: dict[str, np.ndarray], known_split: Sequence[str]) -> None:
    """A known split value that is missing would take a default branch silently: refuse."""
    for name in known_split:
        values = encoded[name]
        missing = values < 0 if tree.attributes[name].is_categorical else np.isnan(values)
        if missing.any():
            first = int(np.flatnonzero(missing)[0])
            raise DataError(f"column {name!r}: a missing value (group {first}) cannot be routed through the tree; drop or fill it")


# -- slots ------------------------------------------------------------------------------------------


def class_of_groups(tree: Tree, groups: QIGroups) -> np.ndarray:
    """Each group's class index (the class is one of the known columns)."""
    known = encode_categories(groups.table[tree.class_attribute], tree.classes)
    if (known < 0).any():
        first = int(np.flatnonzero(known < 0)[0])
        raise DataError(
            f"column {tree.class_attribute!r}: value {groups.table[tree.class_attribute].iloc[first]!r} "
            f"is not one of the tree's classes {list(tree.classes)}"
        )
    return known


def size_error(domain: UnknownDomain, n_groups: int, size: int, what: str = "variables", limit: int = TableOptions.max_variables) -> MaxEntError:
    """The error that stops an audit too large to build, naming the unknowns to coarsen."""
    widest = sorted(domain.components[1:], key=lambda c: -c.size)
    hint = ", ".join(f"{c.name!r} ({c.size} cells)" for c in widest[:3]) or "the sensitive column"
    return MaxEntError(
        f"the attacker's unknowns {domain.describe()} over {n_groups:,} known-value groups make "
        f"{size:,} {what} (at most {limit:,}): coarsen {hint}, or declare more columns known"
    )


def build_slots(
    tree: Tree, groups: QIGroups, domain: UnknownDomain, class_known: bool, max_variables: int = TableOptions.max_variables,
) -> tuple[np.ndarray, ...]:
    """``leaf, klass, sens, valid, log_base`` arrays (groups × slots) for every reachable slot,
    refused beyond ``max_variables`` slots (:class:`TableOptions`)."""
    cells = leaf_reach(tree, groups, domain)
    reach = cells.reach.tocoo()
    order = np.lexsort((reach.col, reach.row))
    pg, pl = reach.row[order].astype(np.intp), reach.col[order].astype(np.intp)
    index = cells.position(tree.n_nodes)
    n_s = np.array([len(s) for s in cells.sensitive], dtype=np.intp)[index[pl]]
    k = len(tree.classes)
    class_is_sensitive = domain.sensitive.name == tree.class_attribute
    n_c = 1 if (class_known or class_is_sensitive) else k
    per_pair = n_s * n_c
    per_group = np.bincount(pg, weights=per_pair, minlength=groups.n_groups).astype(np.intp)
    width = int(per_group.max(initial=0))
    if groups.n_groups * width > max_variables:
        raise size_error(domain, groups.n_groups, groups.n_groups * width, limit=max_variables)
    total = int(per_pair.sum())
    pair = np.repeat(np.arange(len(pg)), per_pair)
    pair_start = np.cumsum(per_pair) - per_pair
    offset = np.arange(total) - pair_start[pair]
    flat_s = np.concatenate(cells.sensitive) if cells.sensitive else np.zeros(0, dtype=np.intp)
    s_start = (np.cumsum([len(s) for s in cells.sensitive]) - [len(s) for s in cells.sensitive])[index[pl]]
    sens = flat_s[s_start[pair] + offset // n_c]
    if class_is_sensitive:
        klass = sens
    elif class_known:
        klass = class_of_groups(tree, groups)[pg[pair]]
    else:
        klass = offset % n_c
    group_start = np.cumsum(per_group) - per_group
    g = pg[pair]
    col = np.arange(total) - group_start[g]
    shape = (groups.n_groups, width)
    out = [np.full(shape, -1, dtype=np.intp) for _ in range(3)]
    for arr, vals in zip(out, (pl[pair], klass, sens)):
        arr[g, col] = vals
    valid = np.zeros(shape, dtype=bool)
    valid[g, col] = True
    log_base = np.full(shape, -math.inf)
    log_base[g, col] = cells.log_mult[index[pl[pair]]]
    return out[0], out[1], out[2], valid, log_base


def _true_slots(tree: Tree, data: pd.DataFrame, table_arrays: tuple[np.ndarray, ...], groups: QIGroups, domain: UnknownDomain) -> np.ndarray:
    """Each record's slot: the leaf its full values reach, its class and its sensitive cell."""
    leaf, klass, sens, valid, _ = table_arrays
    k, n_s = len(tree.classes), domain.sensitive.size
    rec_leaf = tree.apply(data)
    rec_class = encode_categories(data[tree.class_attribute], tree.classes)
    rec_sens = domain.sensitive.codes(data[domain.sensitive.name])
    if (rec_class < 0).any():
        first = int(np.flatnonzero(rec_class < 0)[0])
        raise DataError(f"column {tree.class_attribute!r}: value {data[tree.class_attribute].iloc[first]!r} (row {first}) is not one of the tree's classes")

    def key(g: np.ndarray, leaf: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
        return ((g.astype(np.int64) * tree.n_nodes + leaf) * k + c) * n_s + s

    gi, si = np.nonzero(valid)
    slot_keys = key(gi, leaf[gi, si], klass[gi, si], sens[gi, si])
    order = np.argsort(slot_keys)
    wanted = key(groups.group_of_record, rec_leaf, rec_class, rec_sens)
    pos = np.searchsorted(slot_keys[order], wanted)
    pos = np.minimum(pos, len(order) - 1)
    found = slot_keys[order][pos] == wanted
    if not found.all():  # pragma: no cover - a record always reaches its own leaf
        first = int(np.flatnonzero(~found)[0])
        raise DataError(f"row {first}: its own values reach no slot of its group (please report this)")
    return si[order][pos]


def known_groups(
    tree: Tree, data: pd.DataFrame, known: Sequence[str], sensitive: str, weights: np.ndarray | None = None,
) -> tuple[UnknownDomain, QIGroups, bool]:
    """The unknowns' domain, the groups of records sharing the ``known`` columns, and whether the
    class is among them (what every layout of the attacker's table starts from). ``weights``: the
    records each row of ``data`` stands for (``None``: one each; see :mod:`ppdm.data.counting`)."""
    known = list(known)
    missing = [c for c in known if c not in data.columns]
    if missing:
        raise DataError(f"known column(s) missing from the data: {', '.join(map(repr, missing))}")
    domain = unknown_domain(tree, data, known, sensitive)
    return domain, QIGroups.from_frame(data, known, weights), tree.class_attribute in known


def attacker_table(
    tree: Tree, data: pd.DataFrame, known: Sequence[str], sensitive: str, weights: np.ndarray | None = None,
    options: TableOptions | None = None,
) -> AttackerTable:
    """Group ``data`` by the ``known`` columns and enumerate every group's slots in ``tree``.

    ``known`` may hold any columns of ``data`` (the class among them or not); split attributes
    outside it, the sensitive attribute and an unknown class are the attacker's unknowns. Each
    record's true slot is kept when ``data`` holds every unknown column. ``weights``: the records
    each row of ``data`` stands for (``None``: the rows are the records). ``options``: how large
    the table may grow (:class:`TableOptions`).
    """
    domain, groups, class_known = known_groups(tree, data, known, sensitive, weights)
    arrays = build_slots(tree, groups, domain, class_known, (options or TableOptions()).max_variables)
    has_truth = all(c.name in data.columns for c in domain.components)
    true_slot = _true_slots(tree, data, arrays, groups, domain) if has_truth else None
    leaf, klass, sens, valid, log_base = arrays
    uniform = bool(np.all(log_base[valid] == 0.0)) and bool(valid.all())
    return AttackerTable(groups, domain, leaf, klass, sens, valid, None if uniform else log_base, true_slot, class_known, tree.class_attribute)
