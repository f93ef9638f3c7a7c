"""Hierarchies meet a table: the checks that no entry of a hierarchy file is silently ignored, the
binning of numeric columns by their interval hierarchies, and the starting hierarchy of a column.

A learner such as kADET (paper 002 §3.1) generalizes a public attribute along its hierarchy.
An entry that names no column, a column the learner does not split on, or a column of the other
kind would be dropped without a word; :func:`check_hierarchies` makes each an error with a hint.
kADET picks its own thresholds on numeric columns (§3.3), so a numeric hierarchy is honoured by
:func:`bin_by_hierarchies`: the column becomes categorical, its values the hierarchy's leaf
intervals (``"[20, 30)"``), and the hierarchy a value tree over those labels.
:func:`starting_hierarchy` writes a first hierarchy for a new table: quantile intervals for a
numeric column, one level (every value under ``ANY``) for a categorical one.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from ppdm.data.hierarchy.model import Hierarchy
from ppdm.errors import HierarchyError

__all__ = ["bin_by_hierarchies", "check_hierarchies", "starting_hierarchy"]


def _is_numeric(column: pd.Series) -> bool:
    return is_numeric_dtype(column) and not is_bool_dtype(column)


def _unknown_column(name: str, columns: Sequence[str], source: str) -> HierarchyError:
    close = difflib.get_close_matches(name, [str(c) for c in columns], n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return HierarchyError(
        f"{source}: hierarchy for unknown column {name!r} ({hint}the table has: {', '.join(map(str, columns))})"
    )


def check_hierarchies(
    hierarchies: Mapping[str, Hierarchy],
    frame: pd.DataFrame,
    public: Sequence[str],
    source: str = "hierarchies",
) -> None:
    """Raise :class:`HierarchyError` for an entry a learner on ``public`` would ignore or misread.

    ``public``: the attributes the learner may generalize (kADET: the quasi-identifiers among
    its inputs). Errors: a column not in ``frame``, a column not in ``public``, a categorical
    hierarchy on a numeric column or the reverse, values of the column the hierarchy does not
    cover (missing values aside). ``source`` (e.g. the file) starts the message.
    """
    for name, hierarchy in hierarchies.items():
        if name not in frame.columns:
            raise _unknown_column(name, list(frame.columns), source)
        if name not in public:
            raise HierarchyError(
                f"{source}: the hierarchy of {name!r} would be ignored: {name!r} is not a public attribute "
                f"the tree splits on (those are: {', '.join(public) or 'none'}); remove the entry or make it one"
            )
        numeric = _is_numeric(frame[name])
        if numeric and hierarchy.kind == "categorical":
            raise HierarchyError(
                f"{source}: column {name!r} holds numbers but its hierarchy is categorical; "
                "write it as kind: numeric with cuts (see `ppdm hierarchy --column`)"
            )
        if not numeric and hierarchy.kind == "numeric":
            raise HierarchyError(
                f"{source}: the numeric hierarchy of {name!r} would be ignored: the column holds text "
                f"(e.g. {frame[name].dropna().iloc[0]!r}); write a categorical tree of its values"
            )
        try:
            hierarchy.check_covers(frame[name].dropna())
        except HierarchyError as exc:
            raise HierarchyError(f"{source}: {exc}") from None


def _value_tree(hierarchy: Hierarchy, node: Any) -> Any:
    """The nested ``{name: children}`` structure of ``node`` with interval labels as names."""
    kids = hierarchy.children(node)
    if not kids:
        return node
    return {node: [_value_tree(hierarchy, k) for k in kids]}


def bin_by_hierarchies(
    frame: pd.DataFrame, hierarchies: Mapping[str, Hierarchy]
) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """``frame`` with every numeric column that has a numeric hierarchy replaced by its leaf
    interval (categorical, categories in interval order), and the hierarchies with those turned
    into value trees over the interval labels. Other columns and hierarchies are unchanged."""
    out = frame.copy()
    result: dict[str, Hierarchy] = {}
    for name, hierarchy in hierarchies.items():
        if hierarchy.kind != "numeric" or name not in frame.columns or not _is_numeric(frame[name]):
            result[name] = hierarchy
            continue
        column = frame[name]
        binned = pd.Series(pd.NA, index=column.index, dtype=object)
        present = column.notna()
        binned[present] = hierarchy.generalize(column[present], hierarchy.height).astype(object)
        out[name] = binned.astype(pd.CategoricalDtype(hierarchy.leaves(), ordered=False))
        if hierarchy.height == 0:
            tree: Any = {"ANY": [hierarchy.root]}
        else:
            tree = _value_tree(hierarchy, hierarchy.root)
        result[name] = Hierarchy.categorical(name, tree)
    return out, result


def _quantile_levels(values: np.ndarray, bins: int) -> list[list[float]]:
    """Nested cut points at the 1/2, 1/4, ... quantiles, the finest level with ``bins`` intervals
    at most; levels that add no new point are left out.

    A level only cuts intervals the level before it cut (a hierarchy's branch that stops cannot
    split again deeper down): where the values run out of distinct quantiles, so does the branch.
    """
    bins = min(bins, 2 * len(np.unique(values)))  # more parts than values add no point, only work
    levels: list[list[float]] = []
    points: list[float] = []
    depth = [0]  # per interval between consecutive points (from -inf): the level that made it
    low = float(values.min())
    parts, level = 2, 1
    while parts <= max(bins, 2):
        quantiles = {float(q) for q in np.quantile(values, np.arange(1, parts) / parts) if q > low}
        edges = np.array(points)
        added = [q for q in sorted(quantiles - set(points)) if depth[int(np.searchsorted(edges, q, side="right"))] == level - 1]
        if added:
            split = {int(np.searchsorted(edges, q, side="right")) for q in added}
            new_points = sorted([*points, *added])
            new_edges = np.array(points)
            new_depth = []
            for lo_index in range(len(new_points) + 1):
                # the interval below new point lo_index (or the last one) lies in old interval i
                anchor = new_points[lo_index - 1] if lo_index else -np.inf
                i = int(np.searchsorted(new_edges, anchor, side="right")) if lo_index else 0
                new_depth.append(level if i in split else depth[i])
            points, depth = new_points, new_depth
            levels.append(list(points))
            level += 1
        else:
            break
        if parts >= bins:
            break
        parts = min(parts * 2, bins)
    return levels


def starting_hierarchy(column: pd.Series, bins: int = 4) -> Hierarchy:
    """A first hierarchy of ``column`` to edit: nested quantile intervals for numbers (halves,
    then quarters, ... down to ``bins`` intervals, unbounded at both ends), every distinct value
    under one root ``ANY`` for text. Missing values are left out."""
    name = str(column.name)
    if not isinstance(bins, (int, np.integer)) or bins < 2:
        raise HierarchyError(f"bins must be an integer >= 2, got {bins!r}")
    present = column.dropna()
    if present.empty:
        raise HierarchyError(f"column {name!r} has no values to build a hierarchy from")
    if _is_numeric(column):
        return Hierarchy.from_cuts(name, _quantile_levels(present.to_numpy(dtype=float), bins))
    seen = pd.unique(present.astype(object))
    if isinstance(column.dtype, pd.CategoricalDtype):
        seen_set = set(seen)
        seen = [v for v in column.cat.categories if v in seen_set]
    used = [v.item() if isinstance(v, np.generic) else v for v in seen]
    return Hierarchy.categorical(name, {"ANY": used})
