"""Apriori mining of QI ⇒ SA association rules (paper 004 §V-A, after Agrawal & Srikant).

A rule Q_s ⇒ x has quasi-identifier items on the left and one sensitive value on the right; its
support is P(Q_s, x) and its confidence P(x | Q_s). Mining is level-wise over attribute subsets:
a k-itemset Q_s is counted with value x only if every (k−1)-subset of Q_s is frequent with x
(support is anti-monotone), and all counting is a group-by over the distinct QI combinations
(the attacker's table), vectorised with numpy: the loops run over attribute subsets, never rows.
Thresholds are inclusive: a pattern is a rule when support ≥ s and confidence ≥ c.

Before mining, :func:`frequent_itemset_bound` bounds the work from above without mining: on each
attribute subset the itemsets partition the records, so at most ⌊1/s⌋ of them reach support s,
and never more than the distinct itemsets present. A caller can refuse a support too small for
the table (``s = 0`` makes every itemset of every subset frequent).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.counting import compress
from ppdm.data.qigroups import QIGroups
from ppdm.data.roles import check_columns
from ppdm.errors import RulesError
from ppdm.rules.items import ItemCodes, at_least, first_group, itemsets_present, subsets_by_level
from ppdm.rules.ruleset import Rule, RuleSet

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` as each attribute subset is taken up (``done`` from 1)."""


def sensitive_codes(column: pd.Series, values: Sequence[Any] | None = None) -> tuple[np.ndarray, tuple[Any, ...]]:
    """Codes of the sensitive column in ``values`` (default: its sorted distinct values)."""
    name = column.name
    if column.isna().any():
        raise RulesError(f"sensitive column {name!r} has missing values at row(s) {np.flatnonzero(column.isna().to_numpy())[:5].tolist()}")
    if values is None:
        cat = pd.Categorical(column)
        values = tuple(cat.categories)
    values = tuple(values)
    lookup = {str(v): i for i, v in enumerate(values)}
    text = column.astype(str).to_numpy()
    codes = np.array([lookup.get(t, -1) for t in pd.unique(text)])
    unknown = pd.unique(text)[codes < 0]
    if len(unknown):
        raise RulesError(f"sensitive column {name!r} holds {unknown[0]!r}, which is not one of the values {list(values)}")
    inverse = pd.Index(pd.unique(text)).get_indexer(text)
    return codes[inverse].astype(np.intp), values


def frequent_itemset_bound(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    min_support: float,
    max_length: int | None = None,
) -> int:
    """An upper bound on the itemsets with support ≥ ``min_support`` over every attribute subset
    (of at most ``max_length`` attributes): per subset, the smaller of ⌊1/s⌋ and the number of
    distinct itemsets present. Linear in the QI groups per subset; nothing is mined."""
    check_columns(frame, list(quasi_identifiers))
    groups = QIGroups.from_frame(frame, quasi_identifiers)
    items = ItemCodes.from_table(groups.table, groups.counts, quasi_identifiers)
    per_subset = np.inf if min_support <= 0 else np.floor(1 / min_support + 1e-9)
    total = 0
    for _, level in subsets_by_level(items.n_attributes, max_length):
        for subset in level:
            total += int(min(per_subset, len(np.unique(items.keys(subset)))))
    return total


def mine_rules(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    min_support: float,
    min_confidence: float,
    max_length: int | None = None,
    values: Sequence[Any] | None = None,
    progress: Progress | None = None,
) -> RuleSet:
    """Every rule Q_s ⇒ x with support ≥ ``min_support`` and confidence ≥ ``min_confidence``.

    ``values`` is the sensitive attribute's domain (default: the values in ``frame``);
    ``max_length`` caps the antecedent size; ``progress(done, total)`` hears of each attribute
    subset counted (``total``: every subset up to ``max_length``; mining may stop early, when a
    level has no frequent itemset, and then reports ``done = total``). The result records exact
    support and confidence (``publish="exact"``); :meth:`RuleSet.published` withholds them.
    ``frame`` may be a ``dask.dataframe``: the itemset counts then come from its distinct (QI,
    sensitive) rows, counted partition by partition (:mod:`ppdm.data.counting`), and the rules are
    the same.
    """
    check_columns(frame, [*quasi_identifiers, sensitive])
    for name, v in (("min_support", min_support), ("min_confidence", min_confidence)):
        if not 0 <= v <= 1:
            raise RulesError(f"{name}: must be in [0, 1], got {v!r}")
    frame, weights = compress(frame, [*dict.fromkeys([*quasi_identifiers, sensitive])])
    groups = QIGroups.from_frame(frame, quasi_identifiers, weights)
    codes, values = sensitive_codes(frame[sensitive], values)
    by_value = groups.value_counts(codes, len(values))
    items = ItemCodes.from_table(groups.table, groups.counts, quasi_identifiers)
    rules = _apriori(items, by_value, min_support, min_confidence, max_length, progress)
    made = [
        Rule(tuple((items.attributes[a], items.categories[a][items.codes[g, a]]) for a in subset), values[x], sup, conf)
        for subset, g, x, sup, conf in rules
    ]
    return RuleSet(sensitive, values, tuple(quasi_identifiers), min_support, min_confidence, made, "exact", groups.n_records)


def _apriori(
    items: ItemCodes, by_value: np.ndarray, s: float, c: float, max_length: int | None, progress: Progress | None = None
) -> list[tuple[tuple[int, ...], int, int, float, float]]:
    """(subset, a representative group, value, support, confidence) for every rule, level by level."""
    n_total = items.n_records
    k_values = by_value.shape[1]
    frequent: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
    out: list[tuple[tuple[int, ...], int, int, float, float]] = []
    levels = list(subsets_by_level(items.n_attributes, max_length))
    total, done = sum(len(level) for _, level in levels), 0
    for _, level in levels:
        found = False
        for subset in level:
            done += 1
            if progress is not None:
                progress(done, total)
            candidate = _candidates(items, subset, frequent, k_values)
            if candidate is not None and not candidate.any():
                continue
            mask = None if candidate is None else candidate.any(axis=1)
            keys, index, n = itemsets_present(items, subset, mask)
            where = index >= 0
            nx = np.stack([np.bincount(index[where], weights=by_value[where, x], minlength=len(keys)) for x in range(k_values)], axis=1)
            first = first_group(index, len(keys))
            allowed = np.ones_like(nx, dtype=bool) if candidate is None else candidate[first]
            freq = allowed & at_least(nx, s * n_total)
            frequent[subset] = (keys, freq)
            found |= bool(freq.any())
            rule = freq & at_least(nx, c * n[:, None])
            for i, x in zip(*np.nonzero(rule)):
                out.append((subset, int(first[i]), int(x), float(nx[i, x] / n_total), float(nx[i, x] / n[i])))
        if not found:
            break
    if progress is not None and done < total:
        progress(total, total)
    return out


def _candidates(items: ItemCodes, subset: tuple[int, ...], frequent: dict, k_values: int) -> np.ndarray | None:
    """Per group and value: whether every (k−1)-subset of the group's itemset is frequent with x."""
    if len(subset) == 1:
        return None
    keys = items.keys(subset)
    ok = np.ones((len(keys), k_values), dtype=bool)
    for a in subset:
        parent = tuple(b for b in subset if b != a)
        if parent not in frequent:
            return np.zeros((len(keys), k_values), dtype=bool)
        pkeys, pfreq = frequent[parent]
        pos = np.searchsorted(pkeys, items.drop(keys, a))
        pos = np.minimum(pos, len(pkeys) - 1)
        hit = (pkeys[pos] == items.drop(keys, a)) if len(pkeys) else np.zeros(len(keys), dtype=bool)
        ok &= hit[:, None] & (pfreq[pos] if len(pkeys) else False)
    return ok
