"""What leaf-reading attacks share: the published leaf counts and the attacker's view of the data.

The attacker of paper 003 §3.1 holds the published tree (with its per-leaf class counts, or the
error rates from which they follow for two classes) and the quasi-identifiers of the training
records. Routing each QI group through the tree gives its *span*: one leaf when every split
attribute is a quasi-identifier, several when the tree splits on attributes the attacker lacks
(only those compatible with the path's earlier conditions on the same attribute: the one routing
of :func:`ppdm.tree.routing.reachable_leaves`, which model k-anonymity and the maximum-entropy
audit use too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.attacks.result import AttackResult
from ppdm.data.qigroups import QIGroups
from ppdm.errors import AttackError, DataError
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.leaf_pairs import LeafPairs
from ppdm.tree.model import Tree
from ppdm.tree.routing import reachable_leaves


def published_leaf_counts(tree: Tree) -> tuple[np.ndarray, bool]:
    """Per-node class counts an attacker can read off the published tree, and whether exact.

    Class counts are exact. With error rates only, the label gets ``n − errors`` and the other
    classes share ``errors`` equally: exact for two classes (or no errors), otherwise the
    maximum-entropy reading of what is published. Labels alone reveal no counts.
    """
    k = len(tree.classes)
    if tree.disclosure is Disclosure.LABELS:
        raise AttackError("the tree publishes labels only; this attack needs error rates or class counts")
    out = np.zeros((tree.n_nodes, k))
    exact = True
    for node in tree.nodes:
        if tree.disclosure is Disclosure.CLASS_COUNTS and node.counts is not None:
            out[node.id] = node.counts
            continue
        n, e = node.n_samples, node.n_errors
        if n is None or e is None:
            raise AttackError(f"node {node.id} publishes no record count")
        if k > 1:
            out[node.id] = e / (k - 1)
        out[node.id, node.label] = n - e
        exact &= k <= 2 or e == 0
    return out, exact


@dataclass
class AttackerView:
    """The attacker's table and where each QI group lands in the tree."""

    groups: QIGroups
    span: sp.csr_matrix  # groups × nodes, 1 where the group can land
    values: tuple
    true_codes: np.ndarray | None
    sensitive: str

    def result(self, attack: str, posterior: np.ndarray, details: dict, targets: np.ndarray | None = None) -> AttackResult:
        """An :class:`AttackResult` for this view; ``exposed`` = targets in groups the attacker is certain about."""
        n = self.groups.n_records
        result = AttackResult(
            attack=attack,
            sensitive=self.sensitive,
            values=self.values,
            groups=self.groups,
            posterior=posterior,
            provenance=self.provenance(),
            targets=np.ones(n, dtype=bool) if targets is None else targets,
            exposed=np.zeros(n, dtype=bool),
            true_codes=self.true_codes,
            details=details,
            leaf_pairs=LeafPairs.from_spans([self.span]),
        )
        result.exposed = result.certain_groups[self.groups.group_of_record]
        return result

    def provenance(self) -> list[str]:
        out = []
        for g in range(self.span.shape[0]):
            leaves = self.span.indices[self.span.indptr[g] : self.span.indptr[g + 1]]
            out.append(("leaf " if len(leaves) == 1 else "leaves ") + ", ".join(map(str, sorted(leaves))))
        return out


def attacker_view(
    tree: Tree,
    data: pd.DataFrame,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: str | None = None,
) -> AttackerView:
    """Group ``data`` by its quasi-identifiers and route the groups through ``tree``.

    ``quasi_identifiers`` default to the tree's attributes present in ``data`` (paper 003's
    attacker knows every feature); ``sensitive`` defaults to the tree's class attribute, which
    leaf-reading attacks require. If ``data`` has the sensitive column, its values are kept to
    measure the attack.
    """
    sensitive = sensitive or tree.class_attribute
    if sensitive != tree.class_attribute:
        raise AttackError(
            f"leaf counts are counts of the class {tree.class_attribute!r}; "
            f"the sensitive attribute {sensitive!r} must be the class for this attack"
        )
    if quasi_identifiers is None:
        quasi_identifiers = [a for a in tree.attributes if a in data.columns]
    missing = [c for c in quasi_identifiers if c not in data.columns]
    if missing:
        raise DataError(f"quasi-identifier column(s) missing from the data: {', '.join(map(repr, missing))}")
    if not quasi_identifiers:
        raise DataError("the data holds none of the tree's attributes: the attacker cannot route anyone")
    groups = QIGroups.from_frame(data, quasi_identifiers)
    span = reachable_leaves(tree, groups.table, known=quasi_identifiers)
    true_codes = class_codes(tree, data[sensitive], sensitive) if sensitive in data.columns else None
    return AttackerView(groups, span, tuple(tree.classes), true_codes, sensitive)


def class_codes(tree: Tree, column: pd.Series, name: str) -> np.ndarray:
    """Index of each value of ``column`` among the tree's classes; unknown values are an error."""
    values = column.to_numpy(dtype=object)
    codes = pd.Index(list(tree.classes), dtype=object).get_indexer(pd.Index(values, dtype=object))
    if (codes < 0).any():
        text = pd.Index([str(c) for c in tree.classes], dtype=object).get_indexer(pd.Index([str(v) for v in values], dtype=object))
        if (text < 0).any():
            first = int(np.flatnonzero(text < 0)[0])
            raise DataError(f"column {name!r}: value {values[first]!r} (row {first}) is not one of the tree's classes {list(tree.classes)}")
        codes = text
    return codes.astype(np.intp)


def span_posterior(span: sp.csr_matrix, leaf_counts: np.ndarray) -> np.ndarray:
    """Each group's class distribution over the records of the leaves it can land in.

    A group whose span holds no record (only empty leaves) gets the uniform distribution.
    """
    counts = np.asarray(span @ leaf_counts)
    totals = counts.sum(axis=1, keepdims=True)
    k = leaf_counts.shape[1]
    return np.divide(counts, totals, out=np.full_like(counts, 1.0 / k), where=totals > 0)
