"""Background-knowledge attack on a published tree (paper 003 §2.2.3, §3.1).

The attacker knows the full records (every attribute and the class) of some individuals. Routing
them through the tree and subtracting them from the published leaf counts leaves the class counts
of everybody else in each leaf; a target whose remaining leaf counts show one class is exposed
for certain (§3.1: knowing that user A is healthy reveals that user B is not), and one whose
remaining distribution gives some class at least ``threshold`` is exposed with that confidence.

The known individuals are rows of the attacker's table identified by their index labels in
``data``; they are not targets. Class counts must be exact (class counts published, or error
rates of a two-class tree). Given a :class:`~ppdm.tree.forest.Forest`, every tree that holds
the known individuals a known number of times is subtracted from
(:func:`ppdm.attacks.forest_leaves.forest_background_attack`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ppdm.attacks.forest_leaves import forest_background_attack
from ppdm.attacks.leaves import attacker_view, class_codes, published_leaf_counts, span_posterior
from ppdm.attacks.result import AttackResult
from ppdm.data.roles import check_columns
from ppdm.errors import AttackError, DataError
from ppdm.metrics.baseline import at_least, is_certain
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree
from ppdm.tree.routing import reachable_leaves


def background_knowledge_attack(
    tree: Tree | Forest,
    data: pd.DataFrame,
    known: pd.DataFrame,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: str | None = None,
    threshold: float = 0.9,
) -> AttackResult:
    """Subtract known individuals from the leaf counts and re-read every other person's leaf."""
    if isinstance(tree, Forest):
        return forest_background_attack(tree, data, known, quasi_identifiers, sensitive, threshold)
    if not 0 < threshold <= 1:
        raise DataError(f"threshold must be in (0, 1], got {threshold}")
    view = attacker_view(tree, data, quasi_identifiers, sensitive)
    counts, exact = published_leaf_counts(tree)
    if not exact:
        raise AttackError("subtracting known individuals needs exact class counts (publish class counts)")
    remaining = counts - _known_counts(tree, known, view.sensitive)
    if (remaining < -1e-9).any():
        node = int(np.argwhere(remaining < -1e-9)[0][0])
        raise DataError(f"the known individuals do not fit the published counts (more than node {node} holds)")
    posterior = span_posterior(view.span, np.maximum(remaining, 0.0))
    before = span_posterior(view.span, counts)
    unknown_index = ~data.index.isin(known.index)
    if unknown_index.sum() == len(data) and len(known):
        raise DataError("none of the known individuals is a row of the data (they are matched by index label)")
    result = view.result("background-knowledge", posterior, {}, targets=unknown_index)
    g = view.groups.group_of_record
    above = at_least(posterior.max(axis=1), threshold)
    newly_certain = result.certain_groups & ~is_certain(before.max(axis=1))
    result.exposed = above[g]
    result.details = {
        "known_individuals": int(len(known)),
        "threshold": threshold,
        "targets_above_threshold": int((above[g] & unknown_index).sum()),
        "targets_newly_certain": int((newly_certain[g] & unknown_index).sum()),
    }
    return result


def _known_counts(tree: Tree, known: pd.DataFrame, sensitive: str) -> np.ndarray:
    split_attributes = sorted(tree.split_attributes)
    check_columns(known, split_attributes + [sensitive])
    leaf = reachable_leaves(tree, known, known=split_attributes).indices  # one leaf per full record
    codes = class_codes(tree, known[sensitive], sensitive)
    out = np.zeros((tree.n_nodes, len(tree.classes)))
    np.add.at(out, (leaf, codes), 1.0)
    return out
