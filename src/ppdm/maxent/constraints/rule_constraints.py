"""Constraints an attacker derives from published association rules (paper 004 §V).

Variables are the joint probabilities P(q, x) of the full QI combinations q (the attacker's table)
and sensitive values x. With N records, s and c the published thresholds:

* **AR constraints** (§V-A), one per published rule Q_s ⇒ x, expanded to full QI combinations by
  Theorem 1 (P(Q_s, x) = Σ_{q ⊇ Q_s} P(q, x): a sparse row over the groups matching Q_s):
  P(Q_s, x) ≥ max(s, c·P(Q_s)) when only thresholds are published (equation 3), written as a ≤ row
  with negated sign; P(Q_s, x) = s′ when exact values are (equation 4).
* **NAR constraints** (§V-B), one per pattern Q_s ⇒ x over an itemset present in the table that is
  *not* published: P(Q_s, x) < max(s, c·P(Q_s)) (equation 6).
* **Pruning** (§V-C, Theorem 3 and Figure 3): patterns are generated level by level, and a NAR
  pattern is dropped when one of its (k−1)-subsets J gives a NAR pattern J ⇒ x with
  c·P(J) ≤ s (then P(J, x) < s, and P(Q_s, x) ≤ P(J, x) implies the dropped row). Such a J makes
  every extension redundant, so the test is inherited: a k-itemset is only examined when each of
  its (k−1)-subsets still carries a kept AR or NAR pattern (Figure 3's L_{k−1}).
* **QI constraints** (§V-D, equation 8) are implicit in the variables (Σ_x p(x | q) = 1).
* **SA constraints** (equation 9), optional: Σ_q P(q, x) = P(x) for every x but the last.

*Strict inequalities.* The engine has only ≤ and =. ``strict="integer"`` (default) uses that the
attacker knows N and that every support is a whole number of records: P(Q_s, x) < b becomes
N·P(Q_s, x) ≤ ⌈N·b⌉ − 1, a valid rounding (every row has coefficients 1 on record counts), and the
≥ rows become N·P ≥ ⌈N·b⌉; exact supports are snapped to the nearest whole count. This is what
lets the paper's Example 2 conclude that the third person earns 50K−. ``strict="closed"`` is the
plain relaxation P(Q_s, x) ≤ b of the paper's formulation: every conclusion it draws is valid but
weaker; it cannot exclude a value a group could hold only fractionally.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from ppdm.data.qigroups import QIGroups
from ppdm.errors import RulesError
from ppdm.maxent.rows.problem import LinearBlock, MaxEntProblem
from ppdm.rules.items import (
    ItemCodes,
    at_least,
    count_itemsets,
    first_group,
    itemsets_present,
    subsets_by_level,
)
from ppdm.rules.ruleset import RuleSet

Strictness = Literal["integer", "closed"]


@dataclass(frozen=True)
class RuleKnowledge:
    """Which constraint families the attacker uses (paper 004 §V; §VI-C compares with/without NAR)."""

    ar: bool = True
    nar: bool = True
    prune: bool = True
    sa: bool = False
    strict: Strictness = "integer"


@dataclass
class RuleConstraintStats:
    """Sizes of what was generated (paper 004 §VI-D reports NAR counts and variables)."""

    ar_rows: int = 0
    ar_variables: int = 0
    nar_patterns: int = 0
    nar_generated: int = 0
    nar_pruned: int = 0
    nar_variables: int = 0
    itemsets_examined: int = 0
    levels: list[dict[str, int]] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "levels"} | {"levels": list(self.levels)}


# -- bounds on record counts ----------------------------------------------------------------------
def _delta(v: np.ndarray) -> np.ndarray:
    return 1e-9 * np.maximum(1.0, np.abs(v))


def strictly_below(v: np.ndarray, n_total: int, strict: Strictness) -> np.ndarray:
    """Right-hand side (probability scale) of P < v/N: ⌈v⌉ − 1 records, or v itself when closed."""
    v = np.asarray(v, dtype=float)
    return (np.ceil(v - _delta(v)) - 1.0) / n_total if strict == "integer" else v / n_total


def at_least_bound(v: np.ndarray, n_total: int, strict: Strictness) -> np.ndarray:
    """Right-hand side of P ≥ v/N: ⌈v⌉ records, or v itself when closed."""
    v = np.asarray(v, dtype=float)
    return np.ceil(v - _delta(v)) / n_total if strict == "integer" else v / n_total


# -- incidence of itemsets and groups -------------------------------------------------------------
def _ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, position) for the concatenation of ``range(lo[i], hi[i])`` over i, vectorised."""
    lengths = hi - lo
    owner = np.repeat(np.arange(len(lo)), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return owner, np.repeat(lo, lengths) + np.arange(lengths.sum()) - starts


def _rule_itemsets(rules: RuleSet, items: ItemCodes) -> tuple[np.ndarray, list[tuple[int, ...]], np.ndarray]:
    """Per rule: its itemset key, attribute subset and value index (raises, naming the rule)."""
    value_index = {str(v): i for i, v in enumerate(rules.values)}
    keys, subsets = [], []
    for i, rule in enumerate(rules.rules):
        try:
            key = items.key_of(rule.items)
        except RulesError as exc:
            raise RulesError(f"rules[{i}]: {exc}") from None
        if key < 0:
            raise RulesError(f"rules[{i}] ({rule.describe(rules.sensitive)}): its antecedent matches no one in the attacker's table")
        keys.append(key)
        subsets.append(tuple(sorted(items.attributes.index(a) for a, _ in rule.antecedent)))
    xs = np.array([value_index[str(r.consequent)] for r in rules.rules], dtype=np.intp)
    return np.array(keys, dtype=np.int64), subsets, xs


def _published_keys(rules: RuleSet, items: ItemCodes) -> dict[tuple[int, ...], list[np.ndarray]]:
    """Sorted itemset keys of the published rules, per attribute subset and value."""
    keys, subsets, xs = _rule_itemsets(rules, items)
    k = len(rules.values)
    out: dict[tuple[int, ...], list[np.ndarray]] = {}
    for subset in set(subsets):
        mine = np.array([s == subset for s in subsets])
        out[subset] = [np.unique(keys[mine & (xs == x)]) for x in range(k)]
    return out


# -- AR constraints (§V-A, Theorem 1) -------------------------------------------------------------
def ar_block(rules: RuleSet, items: ItemCodes, strict: Strictness = "integer") -> LinearBlock:
    """One row per published rule over the P(q, x) of the groups its antecedent matches."""
    keys, subsets, xs = _rule_itemsets(rules, items)
    k, n_total = len(rules.values), items.n_records
    rows, cols = [], []
    for subset in sorted(set(subsets)):
        mine = np.flatnonzero(np.array([s == subset for s in subsets]))
        gkeys = items.keys(subset)
        order = np.argsort(gkeys, kind="stable")
        lo = np.searchsorted(gkeys[order], keys[mine], "left")
        hi = np.searchsorted(gkeys[order], keys[mine], "right")
        owner, pos = _ranges(lo, hi)
        rows.append(mine[owner])
        cols.append(order[pos])
    row = np.concatenate(rows) if rows else np.zeros(0, np.intp)
    grp = np.concatenate(cols) if cols else np.zeros(0, np.intp)
    n_itemset = np.bincount(row, weights=items.counts[grp], minlength=len(keys))
    A = sp.csr_matrix((np.ones(len(row)), (row, grp * k + xs[row])), shape=(len(keys), len(items.counts) * k))
    names = [f"AR({r.describe(rules.sensitive)})" for r in rules.rules]
    if rules.publish == "exact":
        return LinearBlock("AR", A, _exact_counts(rules, n_itemset, n_total, strict) / n_total, "eq", names)
    bound = np.maximum(rules.min_support * n_total, rules.min_confidence * n_itemset)
    return LinearBlock("AR", -A, -at_least_bound(bound, n_total, strict), "le", names)


def _exact_counts(rules: RuleSet, n_itemset: np.ndarray, n_total: int, strict: Strictness) -> np.ndarray:
    """Published supports as record counts, checked against the table and the published confidences."""
    support = np.array([r.support for r in rules.rules], dtype=float) * n_total
    counts = np.round(support) if strict == "integer" else support
    bad = np.flatnonzero(counts > n_itemset + 1e-6)
    if len(bad):
        i = int(bad[0])
        raise RulesError(f"rules[{i}].support: {rules.rules[i].support:g} exceeds P(antecedent) = {n_itemset[i] / n_total:.4g} in the attacker's table")
    conf = np.array([np.nan if r.confidence is None else r.confidence for r in rules.rules])
    bad = np.flatnonzero(np.abs(conf * n_itemset - counts) > 0.5 + 0.005 * n_itemset)  # NaN (unpublished) compares False
    if len(bad):
        i = int(bad[0])
        raise RulesError(f"rules[{i}].confidence: {conf[i]:g} does not match support {rules.rules[i].support:g} on the {n_itemset[i]:g} records its antecedent matches")
    return counts


# -- NAR constraints (§V-B, §V-C, Figure 3) -------------------------------------------------------
@dataclass
class _Level:
    """Itemsets examined on one attribute subset: sorted keys, which stay in L_k, which are 'dead'."""

    keys: np.ndarray
    in_l: np.ndarray
    dead: np.ndarray


def _lookup(level: _Level, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(found, position) of ``keys`` among the level's sorted keys."""
    if not len(level.keys):
        return np.zeros(len(keys), dtype=bool), np.zeros(len(keys), dtype=np.intp)
    pos = np.minimum(np.searchsorted(level.keys, keys), len(level.keys) - 1)
    return level.keys[pos] == keys, pos


def nar_block(rules: RuleSet, items: ItemCodes, strict: Strictness = "integer", prune: bool = True) -> tuple[LinearBlock, RuleConstraintStats]:
    """NAR rows for every unpublished pattern, level by level, with Theorem 3's pruning if ``prune``."""
    if not rules.complete:
        raise RulesError("NAR constraints need the complete rule set (every pattern meeting the thresholds); this one is a selection")
    published = _published_keys(rules, items)
    k, n_total = len(rules.values), items.n_records
    s_count = rules.min_support * n_total
    stats = RuleConstraintStats()
    seen: dict[tuple[int, ...], _Level] = {}
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]] = []
    n_rows = 0
    for depth, level in subsets_by_level(items.n_attributes):
        examined = kept_here = pruned_here = 0
        for subset in level:
            mask = _candidates(items, subset, seen) if prune else None
            if mask is not None and not mask.any():
                continue
            keys, index, n_itemset = itemsets_present(items, subset, mask)
            first = first_group(index, len(keys))
            is_rule = _is_published(published.get(subset), keys, k)
            nar = ~is_rule
            parent_dead = _parent_dead(items, subset, seen, first, len(keys), k) if prune else np.zeros_like(nar)
            kept = nar & ~parent_dead
            dead = nar & (parent_dead | at_least(s_count, rules.min_confidence * n_itemset)[:, None])
            seen[subset] = _Level(keys, (is_rule | kept).any(axis=1), dead)
            examined += len(keys)
            kept_here += int(kept.sum())
            pruned_here += int((nar & parent_dead).sum())
            if kept.any():
                part = _nar_rows(items, subset, rules, index, kept, n_itemset, first, n_rows, strict)
                parts.append(part)
                n_rows += len(part[3])
        stats.levels.append({"level": depth, "itemsets_examined": examined, "nar_generated": kept_here, "nar_pruned_on_examined": pruned_here})
        stats.itemsets_examined += examined
    row = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.intp)
    col = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.intp)
    b = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0)
    names = [n for p in parts for n in p[3]]
    A = sp.csr_matrix((np.ones(len(row)), (row, col)), shape=(n_rows, len(items.counts) * k))
    stats.nar_generated = n_rows
    stats.nar_variables = int(A.nnz)
    return LinearBlock("NAR", A, b, "le", names), stats


def _is_published(keys_by_value: list[np.ndarray] | None, keys: np.ndarray, k: int) -> np.ndarray:
    if keys_by_value is None:
        return np.zeros((len(keys), k), dtype=bool)
    return np.stack([np.isin(keys, keys_by_value[x]) for x in range(k)], axis=1)


def _candidates(items: ItemCodes, subset: tuple[int, ...], seen: dict[tuple[int, ...], _Level]) -> np.ndarray | None:
    """Groups whose itemset on ``subset`` has every (k−1)-subset in L_{k−1} (Figure 3's extension step)."""
    if len(subset) == 1:
        return None
    keys = items.keys(subset)
    ok = np.ones(len(keys), dtype=bool)
    for a in subset:
        parent = seen.get(tuple(b for b in subset if b != a))
        if parent is None:
            return np.zeros(len(keys), dtype=bool)
        found, pos = _lookup(parent, items.drop(keys, a))
        ok &= found & parent.in_l[pos]
    return ok


def _parent_dead(items: ItemCodes, subset: tuple[int, ...], seen: dict[tuple[int, ...], _Level], first: np.ndarray, n: int, k: int) -> np.ndarray:
    """Per itemset and value: some (k−1)-subset J has a NAR pattern J ⇒ x with c·P(J) ≤ s (Theorem 3)."""
    out = np.zeros((n, k), dtype=bool)
    if len(subset) == 1:
        return out
    keys = items.keys(subset)[first]
    for a in subset:
        parent = seen[tuple(b for b in subset if b != a)]
        parent_keys = keys - (items.codes[first, a] + 1) * items.radix[a]
        found, pos = _lookup(parent, parent_keys)
        out |= found[:, None] & parent.dead[pos]
    return out


def _nar_rows(
    items: ItemCodes, subset: tuple[int, ...], rules: RuleSet, index: np.ndarray, kept: np.ndarray,
    n_itemset: np.ndarray, first: np.ndarray, row0: int, strict: Strictness,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Rows (Theorem 1 expansion) of the kept patterns on one attribute subset."""
    k, n_total = kept.shape[1], items.n_records
    row_of = np.full(kept.shape, -1, dtype=np.intp)
    itemset, value = np.nonzero(kept)
    row_of[itemset, value] = row0 + np.arange(len(itemset))
    groups = np.flatnonzero(index >= 0)
    g_rows = row_of[index[groups]]  # groups × values
    g, x = np.nonzero(g_rows >= 0)
    bound = np.maximum(rules.min_support * n_total, rules.min_confidence * n_itemset[itemset])
    b = strictly_below(bound, n_total, strict)
    named, which = np.unique(itemset, return_inverse=True)
    lhs = np.asarray(items.describe(subset, first[named]), dtype=object)[which]
    rhs = np.asarray([f" => {rules.sensitive}={v})" for v in rules.values], dtype=object)[value]
    names = ["NAR(" + a + b for a, b in zip(lhs.tolist(), rhs.tolist())]
    return g_rows[g, x], groups[g] * k + x, b, names


# -- SA constraints and the whole problem ---------------------------------------------------------
def sa_block(n_groups: int, values: Sequence[Any], distribution: np.ndarray) -> LinearBlock:
    """Σ_q P(q, x) = P(x) for every sensitive value but the last (paper 004 equation 9)."""
    k = len(values)
    q = np.arange(n_groups)
    cols = (q[:, None] * k + np.arange(k - 1)).ravel()
    rows = np.tile(np.arange(k - 1), n_groups)
    A = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(k - 1, n_groups * k))
    return LinearBlock("SA", A, np.asarray(distribution, dtype=float)[:-1], "eq", [f"SA(P({v}))" for v in values[:-1]])


def count_unpublished_patterns(rules: RuleSet, items: ItemCodes) -> int:
    """How many NAR patterns there are without pruning: every present itemset × value, minus rules."""
    return count_itemsets(items) * len(rules.values) - len(rules.rules)


def rules_problem(
    rules: RuleSet, groups: QIGroups, knowledge: RuleKnowledge = RuleKnowledge(), sa_distribution: np.ndarray | None = None,
) -> tuple[MaxEntProblem, RuleConstraintStats]:
    """The maximum-entropy problem of paper 004 for a published ``rules`` and the attacker's table."""
    start = time.perf_counter()
    missing = [q for q in rules.quasi_identifiers if q not in groups.quasi_identifiers]
    if missing:
        raise RulesError(f"the rules use quasi-identifier {missing[0]!r}, which the attacker's table lacks")
    if rules.n_records is not None and rules.n_records != groups.n_records:
        raise RulesError(f"n_records: the rules were mined from {rules.n_records} records, the attacker's table has {groups.n_records}")
    items = ItemCodes.from_table(groups.table, groups.counts, rules.quasi_identifiers)
    k = len(rules.values)
    problem = MaxEntProblem(groups.weights, k)
    stats = RuleConstraintStats()
    if knowledge.ar and rules.rules:
        block = ar_block(rules, items, knowledge.strict)
        problem.add(block)
        stats.ar_rows, stats.ar_variables = block.n_rows, int(block.A.nnz)
    if knowledge.nar:
        block, nar_stats = nar_block(rules, items, knowledge.strict, knowledge.prune)
        if block.n_rows:
            problem.add(block)
        stats.nar_generated, stats.nar_variables = nar_stats.nar_generated, nar_stats.nar_variables
        stats.itemsets_examined, stats.levels = nar_stats.itemsets_examined, nar_stats.levels
        stats.nar_patterns = count_unpublished_patterns(rules, items) if knowledge.prune else nar_stats.nar_generated
        stats.nar_pruned = stats.nar_patterns - stats.nar_generated
    if knowledge.sa:
        if sa_distribution is None or len(sa_distribution) != k:
            raise RulesError(f"SA constraints need the distribution of the {k} sensitive values")
        problem.add(sa_block(groups.n_groups, rules.values, sa_distribution))
    stats.seconds = time.perf_counter() - start
    return problem, stats
