"""What of a report's data the HTML page carries: the page stays small enough to mail.

The report's JSON keeps every person, every leaf and the whole model. The page lists the
:data:`PAGE_PEOPLE` people most at risk (fewer for a forest of many trees, :func:`people_limit`) (proved first, then those held at ≥ 0.9, then by
confidence), the :data:`PAGE_LEAVES` most exposed leaves (the order of the per-leaf table), and a
model of more than :data:`PAGE_MODEL_LINES` lines by the paths to the leaves it lists. Its figures
and verdicts are drawn from everyone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdm.metrics.baseline import at_least
from ppdm.report.exposure import leaf_of
from ppdm.report.persons import persons_from_report

#: The most people the page's per-person table lists (the most at risk; the JSON holds everyone).
PAGE_PEOPLE = 1000
#: What the people listed may take of the page, in bytes of embedded data (a forest of many trees
#: lists fewer people: each carries a leaf of every tree).
PAGE_PEOPLE_BYTES = 2_000_000
#: The fewest people the page lists when there are more (whatever their size).
PAGE_PEOPLE_FEWEST = 100
#: The most leaves the page's per-leaf table lists (the most exposed; the JSON holds every leaf).
PAGE_LEAVES = 200
#: A model of more lines than this is shown on the page by the paths to the leaves its table lists.
PAGE_MODEL_LINES = 4000


def people_limit(attack: dict[str, Any]) -> int:
    """How many people the page lists: :data:`PAGE_PEOPLE`, fewer when each person's row (known
    values, leaves) is long enough that they would take more than :data:`PAGE_PEOPLE_BYTES`."""
    groups = attack["groups"]
    pairs = groups.get("leaf_pairs")
    n_groups = max(len(groups["qi"]), 1)
    per_pair = 8 if pairs is None or pairs["tree"] is None else 12  # ", 1234" and, in a forest, its tree
    leaves = 0.0 if pairs is None else per_pair * len(pairs["leaf"]) / n_groups
    known = 4 + sum(len(str(v)) + 3 for v in groups["qi"][0]) if groups["qi"] else 0
    per_person = 40 + known + leaves
    return int(min(PAGE_PEOPLE, max(PAGE_PEOPLE_FEWEST, PAGE_PEOPLE_BYTES // per_person)))


def people_shown(attack: dict[str, Any], most: int | None = None) -> np.ndarray:
    """The indexes (into the attack's ``people`` columns) of the ``most`` people most at risk, in
    their order: proved (certain and right) first, then held at ≥ 0.9, then by confidence in the
    true value (in the guess without the truth); the attacker's known individuals last."""
    persons = persons_from_report(attack)
    most = people_limit(attack) if most is None else most
    if persons.n <= most:
        return np.arange(persons.n)
    confidence = persons.confidence()
    if confidence is None:
        confidence = persons.posterior.max(axis=1)[persons.group]
    rank = persons.certain_right().astype(int) * 2 + (at_least(confidence, 0.9) & persons.target) + persons.target.astype(int) * 4
    order = np.lexsort((np.arange(persons.n), -confidence, -rank))
    return np.sort(order[:most])


def page_attack(attack: dict[str, Any], keys: tuple[str, ...], model: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``keys`` of ``attack`` the page's script needs, with its people and leaves cut to what
    the page lists (:func:`people_shown`, :data:`PAGE_LEAVES`) and the totals beside them; each
    leaf listed with its rule and what is published about it, from ``model``'s ``leaf_info``."""
    out = {k: attack[k] for k in keys}
    people, groups = attack["people"], attack["groups"]
    shown = people_shown(attack)
    kept, group = np.unique(np.asarray(people["group"], dtype=np.intp)[shown], return_inverse=True)
    out["people"] = {
        "row": _take(people["row"], shown),
        "group": group.ravel().tolist(),
        "truth": None if people["truth"] is None else _take(people["truth"], shown),
        "target": None if people["target"] is None else _take(people["target"], shown),
        "prior": people["prior"],
        "total": len(people["row"]),
    }
    out["groups"] = _groups(groups, kept)
    out["exposure"] = [_with_rule(r, model) for r in attack["exposure"][:PAGE_LEAVES]]
    out["exposure_total"] = len(attack["exposure"])
    return out


def _with_rule(row: dict[str, Any], model: dict[str, Any] | None) -> dict[str, Any]:
    """A per-leaf row with its leaf's rule and what is published about it (a report written
    before they were read from the model holds them in the row)."""
    if model is None or row.get("leaf") is None or "rule" in row:
        return row
    info = leaf_of(model, row.get("tree"), int(row["leaf"])) or {}
    return {**row, **{k: info[k] for k in ("rule", "published") if k in info}}


def _take(column: list[Any], at: np.ndarray) -> list[Any]:
    return [column[i] for i in at.tolist()]


def _groups(groups: dict[str, Any], kept: np.ndarray) -> dict[str, Any]:
    """The groups of the people listed, renumbered in order; with leaf pairs the provenance texts
    stay in the JSON (the script draws every cell from the pairs)."""
    out: dict[str, Any] = {"qi": _take(groups["qi"], kept), "posterior": _take(groups["posterior"], kept)}
    pairs = groups.get("leaf_pairs")
    if pairs is None:
        out["provenance"] = _take(groups["provenance"], kept)
        out["leaf_pairs"] = None
        return out
    offsets = np.asarray(pairs["offsets"], dtype=np.int64)
    lo, hi = offsets[kept], offsets[kept + 1]
    at = np.concatenate([np.arange(a, b) for a, b in zip(lo.tolist(), hi.tolist())]) if len(kept) else np.zeros(0, dtype=np.int64)
    out["leaf_pairs"] = {
        "offsets": np.concatenate([[0], np.cumsum(hi - lo)]).tolist(),
        "tree": None if pairs["tree"] is None else _take(pairs["tree"], at),
        "leaf": _take(pairs["leaf"], at),
    }
    return out


def lines_shown(tree: dict[str, Any], leaves: set[int]) -> list[dict[str, Any]] | None:
    """A tree's lines on the paths to ``leaves`` (ids), in order; ``None`` when no leaf is named.
    A line's parent is the last line before it of a lesser depth (the ``|   `` the rendering
    indents by), as ``ppdm show`` draws it."""
    lines = tree["lines"]
    index = {line["id"]: i for i, line in enumerate(lines)}
    wanted = sorted(index[leaf] for leaf in leaves if leaf in index)
    if not wanted:
        return None
    depth = [_depth(line["text"]) for line in lines]
    keep = {0}  # the root's line
    for i in wanted:
        keep.add(i)
        d = depth[i]
        for j in range(i - 1, 0, -1):
            if depth[j] < d:
                if j in keep:
                    break
                keep.add(j)
                d = depth[j]
    return [lines[i] for i in sorted(keep)]


def _depth(text: str) -> int:
    """How deep a rendered line is: the ``|   `` before it (the root's line and its children: 0)."""
    depth = 0
    while text.startswith("|   ", 4 * depth):
        depth += 1
    return depth


def leaves_listed(attacks: list[dict[str, Any]]) -> dict[int, set[int]]:
    """Per tree (0 for a single tree), the leaves the page's per-leaf tables list."""
    out: dict[int, set[int]] = {}
    for a in attacks:
        for r in a["exposure"][:PAGE_LEAVES]:
            if r.get("leaf") is not None:
                out.setdefault(r.get("tree") or 0, set()).add(int(r["leaf"]))
    return out


__all__ = ["PAGE_LEAVES", "PAGE_MODEL_LINES", "PAGE_PEOPLE", "leaves_listed", "people_limit", "lines_shown", "page_attack", "people_shown"]
