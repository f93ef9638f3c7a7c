"""Which leaf causes which disclosure: the attack's people counted by the leaves they land in.

An attack names, per QI group, what its posterior comes from (``provenance``): the leaves of the
group's span for a tree ("leaf 7", "leaves 3, 7": the leaves a person with those known values can
reach, paper 000 §4's span), a constraint family for rule sets. Every person is counted under
each leaf of their span; ``sole`` counts those whose span is that one leaf, whose disclosure the
leaf causes alone. Provenance that names no leaf is tabled as it is, one row per distinct text.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import scipy.sparse as sp

from ppdm.metrics.baseline import at_least
from ppdm.report.persons import Persons

LEAVES = re.compile(r"^(?:tree (\d+) )?leaf (\d+)$|^(?:tree (\d+) )?leaves (\d+(?:, \d+)*)$")

#: The confidence in the true value that the per-leaf table and the plots count people at.
HIGH = 0.9


def parse_leaves(provenance: str) -> tuple[int | None, list[int]] | None:
    """``(tree index or None, leaf ids)`` of a provenance text, ``None`` if it names no leaf."""
    m = LEAVES.match(provenance.strip())
    if m is None:
        return None
    if m.group(2) is not None:
        return (int(m.group(1)) if m.group(1) else None), [int(m.group(2))]
    return (int(m.group(3)) if m.group(3) else None), [int(x) for x in m.group(4).split(", ")]


def _sources(provenance: list[str]) -> tuple[list[dict[str, Any]], sp.csr_matrix, bool]:
    """The distinct sources (leaves, or provenance texts) and the groups × sources incidence."""
    distinct = {text: parse_leaves(text) for text in dict.fromkeys(provenance)}
    by_leaf = all(v is not None for v in distinct.values())
    keys: dict[tuple[int | None, int | str], int] = {}
    members: dict[str, list[int]] = {}
    for text, parsed in distinct.items():
        names = [(parsed[0], leaf) for leaf in parsed[1]] if by_leaf and parsed else [(None, text)]
        members[text] = [keys.setdefault(name, len(keys)) for name in names]
    rows, cols = [], []
    for g, text in enumerate(provenance):
        cols.extend(members[text])
        rows.extend([g] * len(members[text]))
    matrix = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(provenance), len(keys)))
    sources = [{"tree": tree, "leaf": key if by_leaf else None, "source": key if not by_leaf else f"leaf {key}"} for tree, key in keys]
    return sources, matrix, by_leaf


def exposure_table(persons: Persons, provenance: list[str], values: list[str], leaf_info: dict | None) -> list[dict[str, Any]]:
    """Per leaf (or provenance text): people reaching it, those it alone decides, those held at
    ≥ :data:`HIGH` in their true value (and beyond the prior), proved right and wrong, and what
    it discloses (the guessed value of its proved people). Sorted by exposure, largest first.
    ``leaf_info`` (from :func:`ppdm.report.model_view.model_view`) adds each leaf's rule."""
    sources, incidence, by_leaf = _sources(provenance)
    n_groups = len(provenance)
    span = np.asarray(incidence.sum(axis=1)).ravel()
    per_group = {
        "people": _per_group(persons, persons.target, n_groups),
        "certain_right": _per_group(persons, persons.certain_right(), n_groups),
    }
    sole = incidence.multiply((span == 1)[:, None]).tocsr()
    conf, prior = persons.confidence(), persons.prior_confidence()
    if conf is not None:
        high = at_high(conf) & persons.target
        per_group["high"] = _per_group(persons, high, n_groups)
        per_group["certain_wrong"] = _per_group(persons, persons.certain_group[persons.group] & persons.target & ~persons.right(), n_groups)
        per_group["conf_sum"] = _per_group(persons, np.where(persons.target, conf, 0.0), n_groups)
        if prior is not None:
            per_group["beyond"] = _per_group(persons, high & ~at_high(prior), n_groups)
            per_group["prior_sum"] = _per_group(persons, np.where(persons.target, prior, 0.0), n_groups)
    totals = {k: incidence.T @ v for k, v in per_group.items()}
    totals["sole"] = sole.T @ per_group["people"]
    disclosed = _disclosed(persons, incidence, values)
    table = []
    for j, source in enumerate(sources):
        row = {**source, **{k: _num(v[j]) for k, v in totals.items() if not k.endswith("_sum")}}
        if "conf_sum" in totals and totals["people"][j] > 0:
            row["mean_confidence"] = float(totals["conf_sum"][j] / totals["people"][j])
            if "prior_sum" in totals:
                row["mean_prior"] = float(totals["prior_sum"][j] / totals["people"][j])
        row["discloses"] = disclosed[j]
        if by_leaf and leaf_info is not None:
            info = _leaf_info(leaf_info, source["tree"], source["leaf"])
            row.update(info or {})
        table.append(row)
    table.sort(key=lambda r: (-r["certain_right"], -r.get("beyond", r.get("high", 0)), -added(r), -r["people"], str(r["source"])))
    return table


def added(row: dict[str, Any]) -> float:
    """How much confidence in the true values the model adds over the prior for a leaf's people."""
    return row["people"] * (row.get("mean_confidence", 0.0) - row.get("mean_prior", 0.0))


def at_high(confidence: np.ndarray) -> np.ndarray:
    return at_least(confidence, HIGH)


def _per_group(persons: Persons, mask: np.ndarray, n_groups: int) -> np.ndarray:
    return np.bincount(persons.group, weights=np.asarray(mask, dtype=float), minlength=n_groups)


def _num(v: float) -> int | float:
    return int(round(v)) if abs(v - round(v)) < 1e-9 else float(v)


def _disclosed(persons: Persons, incidence: sp.csr_matrix, values: list[str]) -> list[str]:
    """Per source: the values proved of its people, most frequent first ("Husband: 120")."""
    proved = persons.certain_right()
    if not proved.any():
        return [""] * incidence.shape[1]
    k = len(values)
    guess = persons.guess[persons.group]
    counts = np.zeros((incidence.shape[0], k))
    np.add.at(counts, (persons.group[proved], guess[proved]), 1.0)
    by_source = np.asarray(incidence.T @ counts)
    out = []
    for row in by_source:
        order = np.argsort(-row, kind="stable")
        out.append(", ".join(f"{values[i]}: {int(row[i]):,}" for i in order if row[i] > 0))
    return out


def _leaf_info(model: dict, tree: int | None, leaf: int) -> dict[str, Any] | None:
    trees = model["trees"]
    index = tree or 0
    if index >= len(trees):
        return None
    return trees[index]["leaf_info"].get(str(leaf))
