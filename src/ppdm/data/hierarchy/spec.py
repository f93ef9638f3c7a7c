"""Hierarchy specs: the nested structures (from Python, JSON or YAML) that describe a
generalization hierarchy, checked and turned into the tree a :class:`Hierarchy` is built from.

Three ways to write a hierarchy (paper 002 §3.1, §4; TDS, Fung, Wang & Yu, ICDE 2005):

* categorical, a value tree: ``{"ANY": ["Private", {"Government": ["Federal-gov", ...]}]}``;
  a mapping maps internal node names to their children, a list holds leaf values (the
  attribute's domain values) and ``{name: children}`` groups (:func:`categorical_spec`);
* numeric, nested intervals: ``{"range": [lo, hi], "children": [...]}`` nodes, ``null``,
  ``"-inf"`` or ``"inf"`` for unbounded ends (:func:`numeric_spec`);
* numeric, increasingly fine lists of cut points: ``[[40], [20, 30, 40, 50, 60]]`` inside an
  optional ``range`` (:func:`cuts_spec`).

An entry of a hierarchy file, ``{"kind": ..., "tree" | "cuts": ..., "range": ...}``, is read by
:func:`parse_entry`. Every error is a :class:`HierarchyError` naming the attribute and the field
or node at fault; the helpers that write node labels and list offending values live here too.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from ppdm.errors import HierarchyError

__all__ = [
    "HierarchySpec",
    "categorical_spec",
    "cuts_spec",
    "interval_label",
    "numeric_spec",
    "parse_entry",
]

Label = Hashable
"""A node: a domain value or an internal node's name (categorical), an interval label (numeric)."""
Kind = Literal["categorical", "numeric"]

KINDS: tuple[str, ...] = ("categorical", "numeric")
MAX_SHOWN = 5  # offending values named in an error message


class HierarchySpec(NamedTuple):
    """A parsed hierarchy: the arguments of the :class:`Hierarchy` constructor, which checks the
    tree itself (every value once, numeric children partitioning their parent)."""

    attribute: str
    kind: Kind
    root: Label
    children: dict[Label, list[Label]]
    intervals: dict[Label, tuple[float, float]] | None  # numeric: each node's [lo, hi)


# --------------------------------------------------------------------------------------------
# Labels and messages
# --------------------------------------------------------------------------------------------


@contextmanager
def prefixed(prefix: str) -> Iterator[None]:
    """Re-raise a :class:`HierarchyError` with ``prefix`` (a file, attribute or field) in front."""
    try:
        yield
    except HierarchyError as exc:
        raise HierarchyError(f"{prefix}: {exc}") from None


def format_number(x: float) -> str:
    """``20`` for 20.0, ``2.5`` for 2.5, ``inf``/``-inf`` for the unbounded ends."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def interval_label(lo: float, hi: float) -> str:
    """The label of the interval ``[lo, hi)``, e.g. ``"[20, 30)"``."""
    return f"[{format_number(lo)}, {format_number(hi)})"


def dump_number(x: float) -> int | float | str:
    """A bound as written to dicts/files: an int when integral, ``"inf"``/``"-inf"`` strings."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return int(x) if float(x).is_integer() else float(x)


def _parse_bound(raw: Any, unbounded: float, what: str) -> float:
    """Read one interval bound: a number, ``null`` (unbounded), or ``"inf"``/``"-inf"``."""
    if raw is None:
        return unbounded
    if isinstance(raw, bool):
        raise HierarchyError(f"{what}: expected a number, got {raw!r}")
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text in ("inf", "+inf", "infinity", "+infinity"):
            return math.inf
        if text in ("-inf", "-infinity"):
            return -math.inf
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        raise HierarchyError(f"{what}: expected a number, null or 'inf'/'-inf', got {raw!r}") from None
    if math.isnan(value):
        raise HierarchyError(f"{what}: NaN is not a valid bound")
    return value


def show_values(values: Iterable[Any]) -> str:
    """Comma-separated reprs, NaN/None shown as 'NaN (missing)'."""
    parts = []
    for v in values:
        v = v.item() if isinstance(v, np.generic) else v
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            parts.append("NaN (missing)")
        else:
            parts.append(format_number(v) if isinstance(v, float) else repr(v))
    return ", ".join(parts)


def first_distinct(values: np.ndarray, limit: int = MAX_SHOWN) -> list[Any]:
    """The first ``limit`` distinct values of ``values``, in order of appearance."""
    series = pd.Series(values, dtype=object)
    series = series.where(series.notna(), np.nan)  # None, pd.NA and NaN count as one value
    return list(pd.unique(series))[:limit]


def _is_scalar_label(x: Any) -> bool:
    return isinstance(x, (str, int, float, bool, np.generic)) and not (
        isinstance(x, float) and math.isnan(x)
    )

# --------------------------------------------------------------------------------------------
# The three ways to write a hierarchy, and file entries
# --------------------------------------------------------------------------------------------


def categorical_spec(attribute: str, tree: Any) -> HierarchySpec:
    """A value tree from ``{root: children}`` (see the module docstring)."""
    with prefixed(f"hierarchy {attribute!r}"):
        root, children = _parse_categorical(tree)
    return HierarchySpec(attribute, "categorical", root, children, None)


def numeric_spec(attribute: str, tree: Any) -> HierarchySpec:
    """Nested intervals from ``{"range": [lo, hi], "children": [...]}`` nodes."""
    with prefixed(f"hierarchy {attribute!r}"):
        root, children, intervals = _parse_numeric(tree)
    return HierarchySpec(attribute, "numeric", root, children, intervals)


def cuts_spec(attribute: str, levels: Any, lower: Any = -math.inf, upper: Any = math.inf) -> HierarchySpec:
    """Nested intervals from increasingly fine lists of cut points (see
    :meth:`Hierarchy.from_cuts`); ``lower``/``upper`` bound the root."""
    with prefixed(f"hierarchy {attribute!r}"):
        lo = _parse_bound(lower, -math.inf, "lower")
        hi = _parse_bound(upper, math.inf, "upper")
        if not lo < hi:
            raise HierarchyError(f"lower bound {lower} is not below upper bound {upper}")
        root, children, intervals = _tree_from_levels(_parse_levels(levels, lo, hi), lo, hi)
    return HierarchySpec(attribute, "numeric", root, children, intervals)


_FIELDS = {"attribute", "kind", "tree", "cuts", "range"}


def parse_entry(spec: Any, attribute: str | None, where: str) -> HierarchySpec:
    """Read one ``{"kind": ..., "tree"|"cuts": ...}`` entry; ``where`` (e.g. ``hierarchies.age``)
    prefixes the field named in an error. ``attribute`` is needed when ``spec`` has none."""
    if not isinstance(spec, Mapping):
        raise HierarchyError(
            f"{where}: expected a mapping with fields 'kind' and 'tree' or 'cuts', got {spec!r:.60}"
        )
    name = spec.get("attribute", attribute)
    if attribute is not None and name != attribute:
        raise HierarchyError(f"{where}.attribute: {name!r} does not match the entry's name {attribute!r}")
    if not isinstance(name, str) or not name:
        raise HierarchyError(f"{where}.attribute: missing or not a string ({name!r})")
    unknown = sorted(str(k) for k in set(spec) - _FIELDS)
    if unknown:
        raise HierarchyError(f"{where}: unknown field(s) {unknown} (expected {sorted(_FIELDS)})")
    kind = spec.get("kind")
    if kind not in KINDS:
        raise HierarchyError(f"{where}.kind: unknown kind {kind!r} (expected 'categorical' or 'numeric')")
    return _kind_spec(spec, name, kind, where)


def _kind_spec(spec: Mapping[str, Any], name: str, kind: str, where: str) -> HierarchySpec:
    has_tree, has_cuts = "tree" in spec, "cuts" in spec
    if kind == "categorical":
        if has_cuts or "range" in spec:
            raise HierarchyError(f"{where}: 'cuts' and 'range' are for numeric hierarchies")
        if not has_tree:
            raise HierarchyError(f"{where}: missing field 'tree'")
        return categorical_spec(name, spec["tree"])
    if has_tree == has_cuts:
        raise HierarchyError(f"{where}: a numeric hierarchy needs exactly one of 'tree' and 'cuts'")
    if has_tree:
        if "range" in spec:
            raise HierarchyError(f"{where}.range: give the range inside 'tree', not beside it")
        return numeric_spec(name, spec["tree"])
    lower, upper = _parse_outer_range(spec.get("range"), f"{where}.range")
    return cuts_spec(name, spec["cuts"], lower=lower, upper=upper)


def _parse_outer_range(rng: Any, where: str) -> tuple[float, float]:
    if rng is None:
        return -math.inf, math.inf
    if not isinstance(rng, (list, tuple)) or len(rng) != 2:
        raise HierarchyError(f"{where}: expected [lo, hi], got {rng!r}")
    return _parse_bound(rng[0], -math.inf, where), _parse_bound(rng[1], math.inf, where)

# --------------------------------------------------------------------------------------------
# Parsing the nested structures
# --------------------------------------------------------------------------------------------


class _TreeBuilder:
    """Collects ``parent → children`` while checking that no name is used twice."""

    def __init__(self, root: Label) -> None:
        self.root = root
        self.children: dict[Label, list[Label]] = {root: []}
        self.parent: dict[Label, Label | None] = {root: None}

    def add(self, node: Label, parent: Label) -> None:
        if node in self.parent:
            where = "the root" if self.parent[node] is None else f"under {self.parent[node]!r}"
            raise HierarchyError(
                f"node {node!r} is used twice ({where} and under {parent!r}); "
                "every name and domain value must appear exactly once"
            )
        self.parent[node] = parent
        self.children[node] = []
        self.children[parent].append(node)


def _parse_categorical(tree: Any) -> tuple[Label, dict[Label, list[Label]]]:
    """``{root: children}`` → (root, children); see :func:`categorical_spec`."""
    if not isinstance(tree, Mapping) or len(tree) != 1:
        raise HierarchyError(
            "a categorical tree must be a mapping with exactly one key, the root's name "
            f"(e.g. {{'ANY': [...]}}), got {tree!r:.80}"
        )
    ((root, spec),) = tree.items()
    if not isinstance(root, str):
        raise HierarchyError(f"the root's name must be a string, got {root!r}")
    builder = _TreeBuilder(root)
    _parse_internal(builder, root, spec)
    return root, builder.children


def _parse_internal(builder: _TreeBuilder, name: Label, spec: Any) -> None:
    """Add the children ``spec`` (a mapping or a list) of internal node ``name``."""
    if isinstance(spec, Mapping):
        items: list[Any] = [{k: v} for k, v in spec.items()]
    elif isinstance(spec, (list, tuple)):
        items = list(spec)
    else:
        raise HierarchyError(
            f"internal node {name!r}: children must be a list or a mapping, got {spec!r}"
        )
    if not items:
        raise HierarchyError(f"internal node {name!r} has no children")
    for item in items:
        _parse_item(builder, name, item)


def _parse_item(builder: _TreeBuilder, parent: Label, item: Any) -> None:
    """One entry of a children list: a leaf value or a ``{name: children}`` mapping."""
    if isinstance(item, Mapping):
        if not item:
            raise HierarchyError(f"node {parent!r}: empty mapping among its children")
        for child, spec in item.items():
            if not isinstance(child, str):
                raise HierarchyError(f"node {parent!r}: internal node names must be strings, got {child!r}")
            builder.add(child, parent)
            _parse_internal(builder, child, spec)
    elif _is_scalar_label(item):
        builder.add(item.item() if isinstance(item, np.generic) else item, parent)
    elif isinstance(item, (list, tuple)):
        raise HierarchyError(
            f"node {parent!r}: a list inside a list ({item!r:.60}); write a group as {{name: [...]}}"
        )
    else:
        raise HierarchyError(f"node {parent!r}: invalid leaf value {item!r}")


def _parse_range(node: Any, where: str) -> tuple[float, float]:
    if not isinstance(node, Mapping) or "range" not in node:
        raise HierarchyError(f"{where}: expected a mapping with a 'range' field, got {node!r:.80}")
    unknown = set(node) - {"range", "children"}
    if unknown:
        raise HierarchyError(f"{where}: unknown field(s) {sorted(map(str, unknown))}")
    rng = node["range"]
    if not isinstance(rng, (list, tuple)) or len(rng) != 2:
        raise HierarchyError(f"{where}.range: expected [lo, hi], got {rng!r}")
    return (
        _parse_bound(rng[0], -math.inf, f"{where}.range[0]"),
        _parse_bound(rng[1], math.inf, f"{where}.range[1]"),
    )


def _parse_numeric(
    tree: Any,
) -> tuple[Label, dict[Label, list[Label]], dict[Label, tuple[float, float]]]:
    """``{"range": [lo, hi], "children": [...]}`` → (root, children, intervals)."""
    intervals: dict[Label, tuple[float, float]] = {}
    builder: _TreeBuilder | None = None

    def visit(node: Any, parent: Label | None, where: str) -> None:
        nonlocal builder
        lo, hi = _parse_range(node, where)
        label = interval_label(lo, hi)
        if builder is None:
            builder = _TreeBuilder(label)
        else:
            builder.add(label, parent)
        intervals[label] = (lo, hi)
        kids = node.get("children") or []
        if not isinstance(kids, (list, tuple)):
            raise HierarchyError(f"{where}.children: expected a list, got {kids!r:.60}")
        if len(kids) == 1:
            raise HierarchyError(
                f"{where} ({label}): a single child cannot split it; omit 'children' for a leaf"
            )
        for i, kid in enumerate(kids):
            visit(kid, label, f"{where}.children[{i}]")

    visit(tree, None, "tree")
    assert builder is not None
    return builder.root, builder.children, intervals


def _parse_levels(levels: Any, lower: float, upper: float) -> list[np.ndarray]:
    """Check and sort the cut points of :func:`cuts_spec`."""
    if isinstance(levels, (str, bytes)) or not isinstance(levels, (Sequence, np.ndarray)):
        raise HierarchyError(f"levels must be a list of lists of cut points, got {levels!r:.60}")
    parsed: list[np.ndarray] = []
    for d, level in enumerate(levels, start=1):
        if isinstance(level, (str, bytes)) or not isinstance(level, (Sequence, np.ndarray)):
            raise HierarchyError(f"level {d}: expected a list of cut points, got {level!r:.60}")
        points = np.array([_parse_bound(p, math.nan, f"level {d}") for p in level], dtype=float)
        points.sort()
        _check_level(d, points, parsed[-1] if parsed else np.empty(0), lower, upper)
        parsed.append(points)
    return parsed


def _check_level(d: int, points: np.ndarray, previous: np.ndarray, lower: float, upper: float) -> None:
    outside = points[(points <= lower) | (points >= upper) | np.isnan(points)]
    if outside.size:
        raise HierarchyError(
            f"level {d}: cut point(s) {show_values(outside)} not strictly inside "
            f"the root {interval_label(lower, upper)}"
        )
    dupes = points[1:][np.diff(points) == 0]
    if dupes.size:
        raise HierarchyError(f"level {d}: cut point(s) {show_values(np.unique(dupes))} repeated")
    missing = np.setdiff1d(previous, points)
    if missing.size:
        raise HierarchyError(
            f"level {d} drops cut point(s) {show_values(missing)} of level {d - 1}; "
            "each level must include the previous level's cut points"
        )
    if points.size == previous.size:
        raise HierarchyError(f"level {d} adds no cut point to level {d - 1}")


def _tree_from_levels(
    levels: list[np.ndarray], lower: float, upper: float
) -> tuple[Label, dict[Label, list[Label]], dict[Label, tuple[float, float]]]:
    """Nested intervals whose depth-d cut is the partition by ``levels[d-1]``.

    An interval that a level leaves unsplit is a leaf: a later level may not split it (its
    children would sit deeper than the level that creates them).
    """
    root = interval_label(lower, upper)
    builder = _TreeBuilder(root)
    intervals = {root: (lower, upper)}
    edges, depths = np.array([lower, upper]), [0]  # the previous level's partition
    for d, points in enumerate(levels, start=1):
        new_edges = np.concatenate([[lower], points, [upper]])
        new_depths = []
        for lo, hi in zip(new_edges[:-1].tolist(), new_edges[1:].tolist()):
            i = int(np.searchsorted(edges, lo, side="right")) - 1
            parent = (float(edges[i]), float(edges[i + 1]))
            if parent == (lo, hi):  # left unsplit: stays a leaf at its own depth
                new_depths.append(depths[i])
                continue
            if depths[i] != d - 1:
                raise HierarchyError(
                    f"level {d} splits {interval_label(*parent)}, which level {depths[i] + 1} "
                    "left unsplit; once a branch stops, later levels cannot split it"
                )
            label = interval_label(lo, hi)
            builder.add(label, interval_label(*parent))
            intervals[label] = (lo, hi)
            new_depths.append(d)
        edges, depths = new_edges, new_depths
    return root, builder.children, intervals
