"""Constraints an attacker derives from a published decision tree (paper 000 §4).

The attacker knows part of every training record (the group q, with known weight P(q)) and
estimates P(u | q) over the rest u (:mod:`ppdm.maxent.table.unknowns`). Every (q, u) lands in one leaf Λ
and has one class, so what a leaf publishes is linear in the joint probabilities P(q, u):

* **class-count constraints** (class counts published): Σ_{(q,u) → Λ, class c} P(q, u) = n_{Λ,c} / N
  for every leaf and class;
* **rate constraint** (§4.1, error rates published): Σ_{(q,u) → Λ, label class} P(q, u) = (n − e) / N,
  and the leaf size Σ_{(q,u) → Λ} P(q, u) = n / N (implied by the groups in paper 000's setting);
* **label constraints** (§4.1): P(C | Λ) ≥ P(W | Λ) for the label C and every other class W;
* **SA constraints** (§4.3, the sensitive attribute's distribution published):
  Σ_{q, u with sensitive value x} P(q, u) = P(x) for every x but the last;
* **QI constraints** (§4.3, Σ_u p(u | q) = 1) are built into the variables.

In paper 000's setting u is the class and every split attribute is known: each group lands in one
leaf, and these are exactly the paper's rows. A row that the groups alone decide (every cell of
each of its groups in it, with one coefficient) carries no information about u: it is checked
against the groups and dropped.

*Coverage.* The published counts are normally those of the table's own records (``"exact"``).
After pruning Method 1 (paper 003 §4.1) they count a subset of the records that route to each
kept leaf (``"subset"``: rows become ``≥``); when the table misses some training records (rows
dropped for missing values) they count a superset (``"superset"``: rows become ``≤``). Label rows
then no longer describe the table's records and are left out.

Internal-node constraints (§4.2) are nonlinear: :mod:`ppdm.maxent.constraints.internal` builds them (paper
000's setting only) and :mod:`ppdm.maxent.solvers.nonlinear` solves with them.
Each family can be switched off to reproduce the paper's with/without comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppdm.data.qigroups import QIGroups
from ppdm.errors import MaxEntError
from ppdm.maxent.constraints.leaf_rows import Coverage, LeafRows, decided_rows, sa_rows
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.rows.problem import LinearBlock, MaxEntProblem
from ppdm.maxent.table.attacker_types import AttackerTypes
from ppdm.maxent.table.unknowns import AttackerTable, Component, UnknownDomain, build_slots
from ppdm.tree.model import Tree, published_quantities


@dataclass(frozen=True)
class Knowledge:
    """Which constraint families the attacker uses (each only if the tree publishes it)."""

    rate: bool = True
    label: bool = True
    sa: bool = False
    internal: bool = False


def paper_table(tree: Tree, groups: QIGroups) -> AttackerTable:
    """Paper 000's attacker: every split attribute is a quasi-identifier, u is the class."""
    unknown = sorted(set(tree.split_attributes) - set(groups.quasi_identifiers))
    if unknown:
        raise MaxEntError(
            f"the tree splits on {', '.join(map(repr, unknown))}, which the attacker does not know: "
            "declare them unknown through a threat model (ppdm.attacks.maxent_attack) instead"
        )
    domain = UnknownDomain((Component(tree.class_attribute, "sensitive", tuple(tree.classes), in_tree=False),))
    leaf, klass, sens, valid, _ = build_slots(tree, groups, domain, class_known=False)
    return AttackerTable(groups, domain, leaf, klass, sens, valid, None, None, False, tree.class_attribute)


def leaf_of_groups(tree: Tree, groups: QIGroups) -> np.ndarray:
    """The leaf every QI group lands in; every split attribute must be a quasi-identifier."""
    return paper_table(tree, groups).leaf[:, 0].copy()


def tree_problem(tree: Tree, groups: QIGroups, knowledge: Knowledge = Knowledge(), sa_distribution: np.ndarray | None = None) -> tuple[MaxEntProblem, np.ndarray]:
    """The maximum-entropy problem of paper 000 for ``tree`` and the attacker's table ``groups``.

    Returns the problem and each group's leaf. ``sa_distribution`` is P(x) when ``knowledge.sa``.
    """
    table = paper_table(tree, groups)
    return table_problem(tree, table, knowledge, sa_distribution), table.leaf[:, 0].copy()


def table_problem(
    tree: Tree,
    table: AttackerTable,
    knowledge: Knowledge = Knowledge(),
    sa_distribution: np.ndarray | None = None,
    coverage: Coverage = "exact",
) -> MaxEntProblem:
    """The maximum-entropy problem over P(u | q) for ``tree`` under ``table``'s threat model."""
    possible = table.valid if table.log_base is None else table.valid & np.isfinite(table.log_base)
    cols = np.flatnonzero(possible.ravel())
    weights, slots_per_group = table.groups.weights, possible.sum(axis=1)
    rows = LeafRows(
        tree, cols, table.leaf.ravel()[cols], table.klass.ravel()[cols], table.leaf.size, table.groups.n_records,
        lambda A: decided_rows(A, weights, slots_per_group), published_quantities(tree), coverage=coverage,
    )
    problem = MaxEntProblem(table.groups.weights, table.n_slots, log_base=_log_base(table))
    for block in rows.blocks(knowledge.rate, knowledge.label):
        problem.add(block)
    if knowledge.sa:
        problem.add(_sa_block(table, sa_distribution))
    return problem


def type_problem(
    tree: Tree,
    types: AttackerTypes,
    knowledge: Knowledge = Knowledge(),
    sa_distribution: np.ndarray | None = None,
    coverage: Coverage = "exact",
) -> FactoredProblem:
    """:func:`table_problem` in factored form: the same rows, over the types of ``types``."""
    problem = types.problem()
    n = types.n_types
    rows = LeafRows(
        tree, np.arange(n), types.type_leaf, types.type_class, n, types.groups.n_records, problem.decided_rows,
        published_quantities(tree), coverage=coverage,
    )
    for block in rows.blocks(knowledge.rate, knowledge.label):
        problem.add(block)
    if knowledge.sa:
        problem.add(sa_rows(types.type_sens, np.arange(n), n, types.domain.sensitive, sa_distribution))
    return problem


def _log_base(table: AttackerTable) -> np.ndarray | None:
    """The base measure of the slots (log cells per slot; -inf on padding), or None if uniform."""
    if table.log_base is not None:
        return table.log_base
    return None if table.valid.all() else np.where(table.valid, 0.0, -np.inf)


def _sa_block(table: AttackerTable, sa_distribution: np.ndarray | None) -> LinearBlock:
    """Σ_q Σ_{slots with sensitive value x} P(q, slot) = P(x) for every sensitive value x but the last."""
    cols = np.flatnonzero(table.valid.ravel())
    return sa_rows(table.sens.ravel()[cols], cols, table.leaf.size, table.domain.sensitive, sa_distribution)
