"""Which leaf causes which disclosure: the attack's people counted by the leaves they land in.

An attack of a tree or forest gives, per QI group, the (tree, leaf) pairs its known values can
reach (``leaf_pairs``, :class:`~ppdm.tree.leaf_pairs.LeafPairs`: paper 000 §4's span, one per
tree of a forest). Every person is counted under each leaf of their span; ``sole`` counts those
who can reach that leaf alone in its tree, whose landing there (in that tree) it decides. An
attack without leaf pairs (a rule set's, whose provenance names constraint rows, or a result
written before ppdm recorded the pairs) is tabled by its provenance texts as they are, one row per
distinct text: nothing here reads leaf ids out of a text.

A person who can reach several leaves is counted under each of them, so the per-leaf counts do not
add up to people. Where people must be counted once (how many of the proved people pruning some
leaves would touch), each person is attributed to their *leaf set*, the leaves they can reach
(:func:`leaf_sets`): the sets' counts add up to the verdict's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ppdm.metrics.baseline import at_least
from ppdm.report.persons import Persons
from ppdm.tree.leaf_pairs import LeafPairs

#: The confidence in the true value that the per-leaf table and the plots count people at.
HIGH = 0.9


@dataclass
class Sources:
    """What the per-leaf table has a row for: each source's ``tree`` (``None`` for a single tree
    and for texts), ``leaf`` (``None`` for texts) and ``source`` (its name); the groups × sources
    0/1 ``incidence``, and ``sole``: 1 where the group can reach that leaf alone in its tree."""

    rows: list[dict[str, Any]]
    incidence: sp.csr_matrix
    sole: sp.csr_matrix

    @property
    def by_leaf(self) -> bool:
        return bool(self.rows) and self.rows[0]["leaf"] is not None


def leaf_sources(pairs: LeafPairs, forest: bool) -> Sources:
    """One source per distinct (tree, leaf) pair; a single tree's (``forest`` false) named "leaf 7"."""
    tree, leaf, column = pairs.distinct()
    shape = (pairs.n_groups, len(tree))
    incidence = sp.csr_matrix((np.ones(pairs.n_pairs), (pairs.group, column)), shape=shape)
    alone = (pairs.leaves_in_tree() == 1).astype(float)
    sole = sp.csr_matrix((alone, (pairs.group, column)), shape=shape)
    rows = [
        {"tree": t if forest else None, "leaf": n, "source": f"tree {t} leaf {n}" if forest else f"leaf {n}"}
        for t, n in zip(tree.tolist(), leaf.tolist())
    ]
    return Sources(rows, incidence, sole)


def text_sources(provenance: list[str]) -> Sources:
    """One source per distinct provenance text (each group has one)."""
    distinct = {text: j for j, text in enumerate(dict.fromkeys(provenance))}
    column = np.array([distinct[text] for text in provenance], dtype=np.intp)
    n = len(provenance)
    incidence = sp.csr_matrix((np.ones(n), (np.arange(n), column)), shape=(n, len(distinct)))
    rows = [{"tree": None, "leaf": None, "source": text} for text in distinct]
    return Sources(rows, incidence, incidence.copy())


def exposure_table(persons: Persons, sources: Sources, values: list[str], leaf_info: dict | None) -> list[dict[str, Any]]:
    """Per source (leaf, or provenance text): people reaching it, those it alone decides, those
    held at ≥ :data:`HIGH` in their true value (and beyond the prior), proved right and wrong, and
    what it discloses (the guessed value of its proved people). Sorted by exposure, largest
    first. ``leaf_info`` (from :func:`ppdm.report.model_view.model_view`) adds each leaf's anchor;
    its rule and what is published about it are read from there (:func:`leaf_of`), not copied."""
    incidence, by_leaf = sources.incidence, sources.by_leaf
    n_groups = incidence.shape[0]
    per_group = {
        "people": _per_group(persons, persons.target, n_groups),
        "certain_right": _per_group(persons, persons.certain_right(), n_groups),
    }
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
    totals["sole"] = sources.sole.T @ per_group["people"]
    disclosed = _disclosed(persons, incidence, values)
    table = []
    for j, source in enumerate(sources.rows):
        row = {**source, **{k: _num(v[j]) for k, v in totals.items() if not k.endswith("_sum")}}
        if "conf_sum" in totals and totals["people"][j] > 0:
            row["mean_confidence"] = float(totals["conf_sum"][j] / totals["people"][j])
            if "prior_sum" in totals:
                row["mean_prior"] = float(totals["prior_sum"][j] / totals["people"][j])
        row["discloses"] = disclosed[j]
        if by_leaf and leaf_info is not None:  # its rule and what is published stay in the model's leaf_info, once
            row["anchor"] = (leaf_of(leaf_info, source["tree"], source["leaf"]) or {}).get("anchor")
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


def leaf_sets(persons: Persons, sources: Sources, top: int = 500) -> list[dict[str, Any]]:
    """The people counted once each, under the set of leaves they can reach: per distinct set,
    its ``sources`` (names), ``leaves`` (``[tree, leaf]`` pairs), ``people``, ``certain_right``
    and, with the truth, ``high`` (and ``beyond``, with the prior): the ``top`` sets with someone
    proved or held at ≥ :data:`HIGH`, most proved first. Summed over every set, each count is the
    attack's own (the verdict's), never a person twice."""
    if not sources.by_leaf:
        return []
    incidence = sources.incidence
    n_groups = incidence.shape[0]
    # one set id per group: groups with the same row of the incidence matrix share it (two random
    # projections of the row tell distinct rows apart)
    keys = np.asarray(incidence @ np.random.default_rng(0).random((incidence.shape[1], 2)))
    _, first, set_of = np.unique(np.round(keys, 9), axis=0, return_index=True, return_inverse=True)
    set_of = set_of.ravel()
    per_group = {"people": _per_group(persons, persons.target, n_groups), "certain_right": _per_group(persons, persons.certain_right(), n_groups)}
    conf, prior = persons.confidence(), persons.prior_confidence()
    if conf is not None:
        high = at_high(conf) & persons.target
        per_group["high"] = _per_group(persons, high, n_groups)
        if prior is not None:
            per_group["beyond"] = _per_group(persons, high & ~at_high(prior), n_groups)
    totals = {k: np.bincount(set_of, weights=v, minlength=len(first)) for k, v in per_group.items()}
    key = "beyond" if "beyond" in totals else "high"
    exposed = np.flatnonzero((totals["certain_right"] > 0) | (totals.get(key, totals["certain_right"]) > 0))
    order = exposed[np.lexsort((-totals.get(key, totals["certain_right"])[exposed], -totals["certain_right"][exposed]))][:top]
    out = []
    for j in order:
        columns = incidence[int(first[j])].indices
        rows = sorted((sources.rows[c] for c in columns), key=lambda r: (r["tree"] or 0, r["leaf"]))
        out.append({
            "sources": [r["source"] for r in rows],
            "leaves": [[r["tree"], r["leaf"]] for r in rows],
            **{k: _num(v[j]) for k, v in totals.items()},
        })
    return out


def leaf_of(model: dict, tree: int | None, leaf: int) -> dict[str, Any] | None:
    """A leaf's rule, what is published about it and its anchor (``None``: not in the model)."""
    trees = model["trees"]
    index = tree or 0
    if index >= len(trees):
        return None
    return trees[index]["leaf_info"].get(str(leaf))
