"""Homogeneity and uniqueness attacks on a published tree (paper 003 §2.2, §3.1–3.2).

*Homogeneity*: a leaf whose published counts show a single class (N_ℓ such leaves) reveals the
class of every person routed to it (N_u people), whatever the leaf's size; with more than two
classes the same holds for any single nonzero class.

*Uniqueness*: a leaf holding a single record reveals that record's class (Table 5 counts such
leaves); a person whose QI combination is unique in the attacker's table and who lands in a leaf
that reveals their class is identified and exposed.

Both read only the published tree; the training table's QI part is the attacker's table. Given a
:class:`~ppdm.tree.forest.Forest`, both intersect what every tree says
(:mod:`ppdm.attacks.forest_leaves`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ppdm.attacks.forest_leaves import forest_homogeneity_attack, forest_uniqueness_attack
from ppdm.attacks.leaves import AttackerView, attacker_view, published_leaf_counts, span_posterior
from ppdm.attacks.result import AttackResult
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree


def homogeneous_leaves(tree: Tree) -> tuple[np.ndarray, float]:
    """Ids of the leaves whose published counts show one class, and the records they hold (N_ℓ, N_u)."""
    counts, _ = published_leaf_counts(tree)
    leaves = np.array([n.id for n in tree.leaves()], dtype=np.intp)
    c = counts[leaves]
    mask = (c.sum(axis=1) > 0) & ((c > 0).sum(axis=1) == 1)
    return leaves[mask], float(c[mask].sum())


def single_record_leaves(tree: Tree) -> np.ndarray:
    """Ids of the leaves that hold exactly one training record (paper 003, Table 5)."""
    counts, _ = published_leaf_counts(tree)
    return np.array([n.id for n in tree.leaves() if abs(counts[n.id].sum() - 1) < 1e-9], dtype=np.intp)


def homogeneity_attack(
    tree: Tree | Forest, data: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None, sensitive: str | None = None
) -> AttackResult:
    """Expose everyone whose span holds one class only (paper 003 §3.1, Table 6)."""
    if isinstance(tree, Forest):
        return forest_homogeneity_attack(tree, data, quasi_identifiers, sensitive)
    view = attacker_view(tree, data, quasi_identifiers, sensitive)
    leaves, users = homogeneous_leaves(tree)
    details = {"homogeneous_leaves": int(len(leaves)), "homogeneous_leaf_records": users}
    return view.result("homogeneity", _leaf_posterior(tree, view), details)


def _leaf_posterior(tree: Tree, view: AttackerView) -> np.ndarray:
    return span_posterior(view.span, published_leaf_counts(tree)[0])


def uniqueness_attack(
    tree: Tree | Forest, data: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None, sensitive: str | None = None
) -> AttackResult:
    """Expose people whose QI combination is unique and whose span reveals their class (§2.2.1, Table 5)."""
    if isinstance(tree, Forest):
        return forest_uniqueness_attack(tree, data, quasi_identifiers, sensitive)
    view = attacker_view(tree, data, quasi_identifiers, sensitive)
    unique = view.groups.counts == 1
    details = {"single_record_leaves": int(len(single_record_leaves(tree))), "unique_qi_records": int(unique.sum())}
    result = view.result("uniqueness", _leaf_posterior(tree, view), details)
    result.exposed = (unique & result.certain_groups)[view.groups.group_of_record]
    return result
