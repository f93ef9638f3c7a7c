"""The attacker's unknowns: what a record holds that the attacker does not know, cell by cell.

Paper 000 §3 lets the attacker know every quasi-identifier and estimate P(X | Q) of the class X.
A general threat model splits a record into the part q the attacker knows (any columns, the class
among them or not) and the part u the model uses that the attacker does not know:

* the sensitive attribute (always: it is what the attack is about);
* the class, when it is unknown and not itself the sensitive attribute;
* every attribute the tree splits on that is neither known nor sensitive.

u ranges over the product of these *components*. A categorical component takes the tree's domain
(the sensitive column's own values when the tree does not use it); a numeric one takes the
intervals that the tree's own thresholds on it cut (``x <= t_1``, ``t_1 < x <= t_2``, ...): values
inside one interval route every record identically, so the attacker cannot and need not tell them
apart. Each (q, u) then routes to exactly one leaf and has one class, which is all the constraint
builders of :mod:`ppdm.maxent.tree_constraints` need. Paper 000's setting is the special case
u = class = sensitive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, MaxEntError
from ppdm.tree.model import Tree, encode_categories
from ppdm.tree.splits import ThresholdSplit

#: The most variables (QI groups × cells of u) an audit builds before refusing.
MAX_VARIABLES = 20_000_000

#: A sensitive column that the tree does not use, with more distinct values than this, must be binned.
MAX_SENSITIVE_VALUES = 200


@dataclass(frozen=True)
class Component:
    """One unknown column of u and its cells.

    ``role`` says why it is unknown; ``cells`` are the values shown to a user (a category, or an
    interval such as ``"30 < age <= 40"``); ``thresholds`` (numeric components) are the sorted cut
    points; ``in_tree`` whether the tree splits on it (only those take part in routing).
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

    def codes(self, column: pd.Series) -> np.ndarray:
        """Cell of each value of ``column``; a value outside the cells raises, naming the row."""
        if self.is_numeric:
            values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
            bad = np.isnan(values)
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                raise DataError(f"column {self.name!r}: value {column.iloc[first]!r} (row {first}) is not a number")
            return np.searchsorted(self.thresholds, values, side="left").astype(np.intp)  # type: ignore[arg-type]
        codes = encode_categories(column, self.cells)
        bad = codes < 0
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"column {self.name!r}: value {column.iloc[first]!r} (row {first}) is not one of the "
                f"{self.size} values the audit knows for it ({', '.join(map(str, self.cells[:8]))}"
                f"{', ...' if self.size > 8 else ''})"
            )
        return codes

    def routing_values(self) -> np.ndarray:
        """A value per cell that routes like every value of the cell (what ``Tree.encode`` gives)."""
        if not self.is_numeric:
            return np.arange(self.size, dtype=np.intp)
        t = self.thresholds
        assert t is not None
        last = t[-1] + max(1.0, abs(t[-1])) if len(t) else 0.0
        return np.append(t, last).astype(float)


@dataclass
class UnknownDomain:
    """The product of the unknown components; cell ``u`` is a mixed-radix index, the first
    component (the sensitive attribute) varying slowest."""

    components: tuple[Component, ...]

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(c.size for c in self.components)

    @property
    def size(self) -> int:
        return math.prod(self.sizes)

    @property
    def sensitive(self) -> Component:
        return self.components[0]

    def component_codes(self) -> np.ndarray:
        """``(size, n_components)``: each cell's code in every component."""
        grids = np.indices(self.sizes).reshape(len(self.components), -1)
        return grids.T.astype(np.intp)

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """The cell of every row of ``frame`` (which must hold every component's column)."""
        u = np.zeros(len(frame), dtype=np.intp)
        for comp in self.components:
            u = u * comp.size + comp.codes(frame[comp.name])
        return u

    def sensitive_marginal(self, p: np.ndarray) -> np.ndarray:
        """``(groups, sensitive values)`` from ``(groups, cells)``: sum over the other components."""
        return p.reshape(p.shape[0], self.sensitive.size, -1).sum(axis=2)

    def describe(self) -> str:
        return " × ".join(f"{c.name} ({c.size})" for c in self.components)


@dataclass
class AttackerTable:
    """The attacker's table under a threat model: groups of known values, cells of unknowns, and
    where each (group, cell) lands in the tree.

    ``leaf[q, u]`` is the leaf (group q, cell u) routes to; ``klass[q, u]`` its class index;
    ``true_cells`` each record's true cell when the data holds every unknown column (``None``
    otherwise). ``class_known`` says whether the class is among the known columns;
    ``known_group`` marks the groups that are single individuals the attacker fully knows.
    """

    groups: QIGroups
    domain: UnknownDomain
    leaf: np.ndarray
    klass: np.ndarray
    true_cells: np.ndarray | None
    class_known: bool
    class_attribute: str
    known_group: np.ndarray | None = None  # per group, whether it is one fully known individual

    @property
    def is_paper_setting(self) -> bool:
        """u is the class only and every split attribute is known (paper 000 §3)."""
        return len(self.domain.components) == 1 and self.domain.sensitive.name == self.class_attribute

    def truth(self) -> np.ndarray | None:
        """The real joint distribution P(q, u) of the records (groups × cells), if known."""
        if self.true_cells is None:
            return None
        g, n = self.groups.n_groups, self.domain.size
        keys = self.groups.group_of_record * n + self.true_cells
        return np.bincount(keys, minlength=g * n).reshape(g, n) / self.groups.n_records


def split_attributes(tree: Tree) -> list[str]:
    """The attributes the tree splits on, in order of first appearance."""
    seen: dict[str, None] = {}
    for node in tree.nodes:
        if node.split is not None:
            seen.setdefault(node.split.attribute, None)
    return list(seen)


def _thresholds(tree: Tree, attribute: str) -> np.ndarray:
    cuts = {n.split.threshold for n in tree.nodes if isinstance(n.split, ThresholdSplit) and n.split.attribute == attribute}
    return np.array(sorted(cuts), dtype=float)


def interval_cells(name: str, thresholds: np.ndarray) -> tuple[str, ...]:
    """Readable names of the intervals that ``thresholds`` cut (``x <= t`` goes left)."""
    if len(thresholds) == 0:
        return (f"any {name}",)
    t = [format(float(v), "g") for v in thresholds]
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
    if sensitive in split_attributes(tree):
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
        components.append(Component(tree.class_attribute, "class", tuple(tree.classes)))
    for name in split_attributes(tree):
        if name not in known_set and name != sensitive:
            components.append(_tree_component(tree, name, "split"))
    return UnknownDomain(tuple(components))


def _check_size(domain: UnknownDomain, n_groups: int) -> None:
    n_var = n_groups * domain.size
    if n_var <= MAX_VARIABLES:
        return
    widest = sorted(domain.components[1:], key=lambda c: -c.size)
    hint = ", ".join(f"{c.name!r} ({c.size} cells)" for c in widest[:3]) or "the known columns"
    raise MaxEntError(
        f"the attacker's unknowns {domain.describe()} over {n_groups:,} known-value groups make "
        f"{n_var:,} variables (at most {MAX_VARIABLES:,}): coarsen {hint}, or declare more columns known"
    )


def route_cells(tree: Tree, groups: QIGroups, domain: UnknownDomain) -> np.ndarray:
    """``(groups, cells)``: the leaf every (known group, unknown cell) lands in."""
    n_groups, n_cells = groups.n_groups, domain.size
    known_split = [a for a in split_attributes(tree) if a in groups.quasi_identifiers]
    encoded = {name: np.repeat(col, n_cells) for name, col in tree.encode(groups.table, strict=True, columns=known_split).items()}
    codes = domain.component_codes()
    for j, comp in enumerate(domain.components):
        if comp.in_tree and comp.role != "class":
            encoded[comp.name] = np.tile(comp.routing_values()[codes[:, j]], n_groups)
    _check_routable(tree, groups, encoded, known_split)
    return tree.apply_encoded(encoded, n_groups * n_cells).reshape(n_groups, n_cells)


def _check_routable(tree: Tree, groups: QIGroups, encoded: dict[str, np.ndarray], known_split: Sequence[str]) -> None:
    """A known split value that is missing would take a default branch silently: refuse."""
    for name in known_split:
        values = encoded[name]
        missing = values < 0 if tree.attributes[name].is_categorical else np.isnan(values)
        if missing.any():
            first = int(np.flatnonzero(groups.table[name].isna().to_numpy())[0])
            raise DataError(f"column {name!r}: a missing value (group {first}) cannot be routed through the tree; drop or fill it")


def class_of_cells(tree: Tree, groups: QIGroups, domain: UnknownDomain) -> np.ndarray:
    """``(groups, cells)``: the class index of every (group, cell)."""
    codes = domain.component_codes()
    n_groups = groups.n_groups
    for j, comp in enumerate(domain.components):
        if comp.name == tree.class_attribute:
            return np.broadcast_to(codes[:, j], (n_groups, domain.size)).copy()
    known = encode_categories(groups.table[tree.class_attribute], tree.classes)
    if (known < 0).any():
        first = int(np.flatnonzero(known < 0)[0])
        raise DataError(
            f"column {tree.class_attribute!r}: value {groups.table[tree.class_attribute].iloc[first]!r} "
            f"is not one of the tree's classes {list(tree.classes)}"
        )
    return np.repeat(known[:, None], domain.size, axis=1)


def attacker_table(tree: Tree, data: pd.DataFrame, known: Sequence[str], sensitive: str) -> AttackerTable:
    """Group ``data`` by the ``known`` columns and route every (group, cell of u) through ``tree``.

    ``known`` may hold any columns of ``data`` (the class among them or not); split attributes
    outside it, the sensitive attribute and an unknown class become the cells u. The true cell of
    each record is kept when ``data`` holds every unknown column.
    """
    known = list(known)
    missing = [c for c in known if c not in data.columns]
    if missing:
        raise DataError(f"known column(s) missing from the data: {', '.join(map(repr, missing))}")
    domain = unknown_domain(tree, data, known, sensitive)
    groups = QIGroups.from_frame(data, known)
    _check_size(domain, groups.n_groups)
    leaf = route_cells(tree, groups, domain)
    klass = class_of_cells(tree, groups, domain)
    has_truth = all(c.name in data.columns for c in domain.components)
    true_cells = domain.encode(data) if has_truth else None
    return AttackerTable(groups, domain, leaf, klass, true_cells, tree.class_attribute in known, tree.class_attribute)
