"""Homogeneity and uniqueness attacks on a published tree (paper 003 §2.2, §3.1–3.2).

*Homogeneity*: a leaf whose published counts show a single class (N_ℓ such leaves) reveals the
class of every person routed to it (N_u people), whatever the leaf's size; with more than two
classes the same holds for any single nonzero class.

*Uniqueness*: a leaf holding a single record reveals that record's class (Table 5 counts such
leaves); a person whose QI combination is unique in the attacker's table and who lands in a leaf
that reveals their class is identified and exposed.

Both read only the published model; the training table's known part is the attacker's table. A
tree is read as a forest of one; over a :class:`~ppdm.tree.forest.Forest` both intersect what
every tree holding a person says (the sound rule of :mod:`ppdm.attacks.leaf.leaves`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel, checked_threat, deprecated_alias
from ppdm.attacks.leaf.anonymity import span_ids
from ppdm.attacks.leaf.leaves import AttackerView, attacker_view, published_leaf_counts
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree


def homogeneous_leaves(tree: Tree) -> tuple[np.ndarray, float]:
    """Ids of the leaves whose published counts show one class, and the records they hold (N_ℓ, N_u)."""
    counts, _ = published_leaf_counts(tree)
    return _homogeneous(tree, counts, 0.0)


def _homogeneous(tree: Tree, counts: np.ndarray, tolerance: float) -> tuple[np.ndarray, float]:
    leaves = np.array([n.id for n in tree.leaves()], dtype=np.intp)
    c = counts[leaves]
    mask = (c.sum(axis=1) > 0) & ((c > tolerance).sum(axis=1) == 1)
    return leaves[mask], float(c[mask].sum())


def single_record_leaves(tree: Tree) -> np.ndarray:
    """Ids of the leaves that hold exactly one training record (paper 003, Table 5)."""
    counts, _ = published_leaf_counts(tree)
    return np.array([n.id for n in tree.leaves() if abs(counts[n.id].sum() - 1) < 1e-9], dtype=np.intp)


def homogeneity_attack(
    model: Tree | Forest,
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
) -> AttackResult:
    """Expose everyone whose span holds one class only (paper 003 §3.1, Table 6); over a forest,
    everyone whose candidate classes, intersected over the trees holding them, are one.

    ``threat``: the attacker (see :func:`~ppdm.attacks.leaf.leaves.attacker_view`; the sensitive
    column is the class; default: they know the model's attributes in ``data``). Details: the leaves whose
    counts show one class (over every tree) and the records they hold.

    With a sensitive *input* (not the class), the leaves' counts count the class, not it: the
    attack reads each person's possible values instead (:func:`ppdm.attacks.models.possible.possible_attack`:
    the values some completion of their unknown columns allows in every tree), and exposes
    everyone left with one.
    """
    threat = checked_threat("homogeneity_attack", threat)
    if threat is not None and threat.sensitive is not None and threat.sensitive != model.class_attribute:
        return _on_input(model, data, threat)
    view = attacker_view(model, data, threat)
    return view.result("homogeneity", None, _homogeneous_details(view))


def _on_input(model: Tree | Forest, data: pd.DataFrame, threat: ThreatModel) -> AttackResult:
    """The homogeneity attack on a sensitive input: one possible value left."""
    from ppdm.attacks.models.possible import possible_attack

    result = possible_attack(model, data, threat)
    result.attack = "homogeneity"
    return result


def _homogeneous_details(view: AttackerView) -> dict[str, object]:
    leaves, records = 0, 0.0
    for t, c in enumerate(view.counts):
        if c is not None:
            found, held = _homogeneous(view.forest.trees[t], c, view.tolerance)
            leaves, records = leaves + len(found), records + held
    return {"homogeneous_leaves": leaves, "homogeneous_leaf_records": records}


def uniqueness_attack(
    model: Tree | Forest,
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
) -> AttackResult:
    """Expose people whose known values are unique and whose span reveals their class (§2.2.1,
    Table 5); over a forest, whose class the trees leave certain.

    ``threat`` as for :func:`homogeneity_attack`. Details: leaves publishing one training row
    (over all trees), people whose known values are unique, and the records alone in their
    (intersection of) spans: no other record reaches the same leaves in every tree.
    """
    view = attacker_view(model, data, checked_threat("uniqueness_attack", threat))
    unique = view.groups.counts == 1
    details = {
        "single_record_leaves": _single_record_leaves(view),
        "unique_qi_records": int(unique.sum()),
        "records_alone_in_their_leaves": _alone(view),
    }
    result = view.result("uniqueness", None, details)
    result.exposed = (unique & result.certain_groups)[view.groups.group_of_record]
    return result


def _single_record_leaves(view: AttackerView) -> int:
    """Leaves (over all trees) that publish exactly one training row."""
    total = 0
    for tree in view.forest.trees:
        total += sum(1 for n in tree.leaves() if n.n_samples is not None and abs(n.n_samples - 1) < 1e-9)
    return total


def _alone(view: AttackerView) -> int:
    """Records no other record shares every tree's span with (a model span of one, paper 002 §2)."""
    ids = span_ids(sp.hstack(view.spans, format="csr"))
    population = np.bincount(ids, weights=view.groups.counts)
    return int((population[ids] == 1).sum())


#: :func:`homogeneity_attack` and :func:`uniqueness_attack`, by their names when they took forests only.
forest_homogeneity_attack = deprecated_alias(homogeneity_attack, "forest_homogeneity_attack")
forest_uniqueness_attack = deprecated_alias(uniqueness_attack, "forest_uniqueness_attack")
