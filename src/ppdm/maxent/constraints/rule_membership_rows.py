"""Membership rows of a published rule set: a rule's support counts the members it matches.

Paper 004's rules ``Q ⇒ S = x`` (§V-A) are published with their support ``s`` and confidence
``c`` over the ``n`` training records. Of a population of candidates (issue 27) whose whole
record the attacker knows, the members matching the rule's antecedent and consequent number
exactly ``s·n``, and those matching its antecedent ``s·n / c`` — two rows of 0/1 coefficients over
the membership bits, like a leaf's class count and its total
(:mod:`ppdm.maxent.constraints.membership_rows`). With thresholds only (``publish="thresholds"``)
a published rule says its support is at least the threshold: ``Σ b ≥ ⌈s_min·n⌉`` over the
candidates matching it (its confidence bound has fractional coefficients and is not used, nor
what an unpublished pattern's absence says: both sound to leave out, only weaker). The training
size closes the system as for trees.

Rows of different rules share candidates, so each row is placed in a *block* of rows that share
none (greedily, first block that fits), as the membership estimate's block solver needs
(:mod:`ppdm.maxent.solvers.bernoulli`). ``tree`` then names a row's block, ``leaf`` its rule's
index, and ``cell`` what it counts: 0 the rule's records (antecedent and consequent), -1 its
antecedent's, -3 the training size.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.defaults import WHOLE
from ppdm.errors import DataError
from ppdm.maxent.constraints.membership_rows import MembershipRows, incomplete_population
from ppdm.rules.ruleset import RuleSet

__all__ = ["RULE_CELL", "ANTECEDENT_CELL", "rule_columns", "rule_membership_rows"]

#: ``cell`` of a row counting a rule's records (antecedent and consequent).
RULE_CELL = 0

#: ``cell`` of a row counting the records its antecedent matches.
ANTECEDENT_CELL = -1



def rule_columns(rules: RuleSet) -> list[str]:
    """The columns a candidate's record needs for the rules: every antecedent attribute and the sensitive one."""
    used = {a for rule in rules.rules for a, _ in rule.antecedent}
    return [*(q for q in rules.quasi_identifiers if q in used), rules.sensitive]


def rule_membership_rows(rules: RuleSet, population: pd.DataFrame, complete: bool = True) -> MembershipRows:
    """The membership rows of ``rules`` over ``population``'s candidates (see the module docstring).

    ``population`` holds every column :func:`rule_columns` names; ``complete``: it holds every
    training record (else counts bound from above only). The rule set must say how many records
    it was mined from (``n_records``)."""
    if rules.n_records is None:
        raise DataError("the rule set does not say how many records it was mined from (n_records): its supports count nobody")
    if not rules.rules:
        raise DataError("the rule set publishes no rule: nothing says who was trained on it")
    n = int(rules.n_records)
    match = _matches(rules, population)
    rows, lo, hi, rule_of, cell_of = [], [], [], [], []
    for i, rule in enumerate(rules.rules):
        for cell, hits, bounds in _rule_rows(rules, i, match[i], n):
            if not hits.any() and bounds[0] <= 0:
                continue  # no candidate matches a count that may be 0: nothing said
            rows.append(hits)
            rule_of.append(i)
            cell_of.append(cell)
            low, high = bounds
            if complete and low > hits.sum():
                raise incomplete_population(
                    f"rules[{i}] ({rule.describe(rules.sensitive)}) counts at least {low:g} training records but only {int(hits.sum())} "
                    "candidates match it"
                )
            lo.append(low if complete else 0.0)
            hi.append(high)
    N = len(population)
    A = sp.vstack([sp.csr_matrix(r.astype(float)[None, :]) for r in rows] + [sp.csr_matrix(np.ones((1, N)))], format="csr")
    blocks = np.r_[_blocks(A[:-1]), -1]
    return MembershipRows(
        A, np.r_[lo, float(n) if complete else 0.0], np.r_[hi, float(n)], blocks, np.r_[rule_of, -1], np.r_[cell_of, -3],
        np.full(A.shape[0], np.nan), np.zeros(A.shape[0]), np.zeros(N, dtype=np.int64), 0, ["once"], n, complete,
        {0: "records per rule and per antecedent" if rules.publish == "exact" else "records per rule, at least the support threshold"},
    )


def _rule_rows(rules: RuleSet, i: int, hits: tuple[np.ndarray, np.ndarray], n: int) -> list[tuple[int, np.ndarray, tuple[float, float]]]:
    """A rule's rows: (cell, the candidates it counts, the count's bounds)."""
    rule = rules.rules[i]
    both, antecedent = hits
    if rules.publish == "thresholds" or rule.support is None:
        return [(RULE_CELL, both, (float(np.ceil(rules.min_support * n - WHOLE * n)), float(n)))]
    count = _whole(rule.support * n, f"rules[{i}].support {rule.support:g}", n)
    out = [(RULE_CELL, both, (count, count))]
    if rule.confidence is not None and rule.confidence > 0:
        matched = _whole(rule.support * n / rule.confidence, f"rules[{i}]: support {rule.support:g} / confidence {rule.confidence:g}", n)
        out.append((ANTECEDENT_CELL, antecedent, (matched, matched)))
    return out


def _whole(x: float, what: str, n: int) -> float:
    """``x`` as the whole count it stands for, refused when it is none (a rounded support)."""
    near = float(np.round(x))
    if abs(x - near) > WHOLE * max(n, 1) + 1e-9:
        raise DataError(f"{what} is {x:.4f} of the {n:,} records, not a whole number of them: the rule set's values look rounded")
    return near


def _matches(rules: RuleSet, population: pd.DataFrame) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per rule, which candidates match its antecedent and consequent, and its antecedent (values compared as text)."""
    columns = rule_columns(rules)
    for column in columns:
        if column not in population.columns:
            raise DataError(f"the population lacks column {column!r}, which the rules read: the membership audit needs each candidate's whole record")
        missing = population[column].isna().to_numpy()
        if missing.any():
            raise DataError(f"column {column!r}, row {population.index[int(np.argmax(missing))]!r}: missing value (the membership audit needs every candidate's whole record)")
    codes: dict[str, tuple[np.ndarray, dict[str, int]]] = {}
    for column in columns:
        values, names = pd.factorize(population[column].astype(str), sort=False)
        codes[column] = (values, {name: j for j, name in enumerate(names)})
    out = []
    for rule in rules.rules:
        antecedent = np.ones(len(population), dtype=bool)
        for attribute, value in rule.antecedent:
            values, index = codes[attribute]
            antecedent &= values == index.get(str(value), -1)
        values, index = codes[rules.sensitive]
        out.append((antecedent & (values == index.get(str(rule.consequent), -1)), antecedent))
    return out


def _blocks(A: sp.csr_matrix) -> np.ndarray:
    """Each row's block: the first block none of whose rows shares a candidate with it (greedy)."""
    taken: list[np.ndarray] = []
    block = np.zeros(A.shape[0], dtype=np.int64)
    for r in range(A.shape[0]):
        idx = A.indices[A.indptr[r]:A.indptr[r + 1]]
        b = next((j for j, used in enumerate(taken) if not used[idx].any()), len(taken))
        if b == len(taken):
            taken.append(np.zeros(A.shape[1], dtype=bool))
        taken[b][idx] = True
        block[r] = b
    return block
