"""The attacker's table in factored form: groups, the leaves they reach, and the slot types.

:mod:`ppdm.maxent.table.unknowns` lays a threat model out as slots, one row of slots per group. What a
tree publishes only sees a slot's *type*, (leaf, class, sensitive cell), with the base measure
the leaf's path gives it (paper 000 §4's rows over P(q, u), merged by what they depend on), so
the same table is held here as the groups' reach (groups × leaves), each group's known class (or
none) and the list of types: the input of :class:`~ppdm.maxent.solvers.factored.FactoredProblem`, with
no array over groups × slots. Each record's true type is kept when the data holds every unknown
column, so the truth (type counts) is computed from the records directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.table import unknowns
from ppdm.maxent.table.outputs import OUTPUT_KEY, answering, leaf_answers, record_answers, unique_codes
from ppdm.maxent.table.unknowns import (
    UnknownDomain,
    class_of_groups,
    known_groups,
    leaf_reach,
    size_error,
)
from ppdm.tree.leaf_pairs import LeafPairs
from ppdm.tree.model import Tree, encode_categories


@dataclass
class AttackerTypes:
    """Groups of known values, the leaves they reach and the types (leaf, class, sensitive cell).

    ``leaves``: node ids of the leaves some group reaches (the blocks); ``reach``: groups ×
    blocks, 0/1; ``group_class``: each group's known class index (−1: unknown). Per type:
    ``type_block`` (index into ``leaves``), ``type_class``, ``type_sens`` and ``log_base`` (log
    of the cells of u it holds). ``true_type``: each record's type, when the data holds every
    unknown column; ``known_group`` marks fully known individuals' groups.
    """

    groups: QIGroups
    domain: UnknownDomain
    class_attribute: str
    class_known: bool
    leaves: np.ndarray
    reach: sp.csr_matrix
    group_class: np.ndarray
    type_block: np.ndarray
    type_class: np.ndarray
    type_sens: np.ndarray
    log_base: np.ndarray
    true_type: np.ndarray | None
    known_group: np.ndarray | None = None

    @property
    def n_types(self) -> int:
        return len(self.type_block)

    @property
    def type_leaf(self) -> np.ndarray:
        return self.leaves[self.type_block]

    @property
    def is_paper_setting(self) -> bool:
        return len(self.domain.components) == 1 and self.domain.sensitive.name == self.class_attribute

    def problem(self) -> FactoredProblem:
        """The factored problem without rows: groups, reach, tags (known classes), types."""
        pinned = None
        if self.known_group is not None and self.known_group.any():
            pinned = np.where(self.known_group, self.true_type[self.groups.first_rows()], -1)  # type: ignore[index]
        base = None if not self.log_base.any() else self.log_base
        return FactoredProblem(
            self.groups.weights, self.reach, self.group_class, self.type_block, self.type_class, self.type_sens,
            self.domain.sensitive.size, log_base=base, pinned=pinned,
        )

    def truth(self) -> np.ndarray | None:
        """The records' distribution over the types, P(t), if every unknown column is in the data."""
        if self.true_type is None:
            return None
        return np.bincount(self.true_type, weights=self.groups.record_weights, minlength=self.n_types) / self.groups.n_records

    def true_sensitive(self) -> np.ndarray | None:
        """Each record's true sensitive cell."""
        return None if self.true_type is None else self.type_sens[self.true_type]

    def true_marginal(self) -> np.ndarray | None:
        """``(groups, sensitive values)``: the records' own distribution of the sensitive cell per group."""
        sens = self.true_sensitive()
        if sens is None:
            return None
        return self.groups.value_counts(sens, self.domain.sensitive.size) / self.groups.counts[:, None]

    def sensitive_distribution(self) -> np.ndarray | None:
        """P(x) of the records' sensitive cells."""
        sens = self.true_sensitive()
        if sens is None:
            return None
        return np.bincount(sens, weights=self.groups.record_weights, minlength=self.domain.sensitive.size) / self.groups.n_records

    def leaf_pairs(self) -> LeafPairs:
        """Per group, the leaves it can land in, as (tree 0, leaf) pairs."""
        return LeafPairs.from_reach(self.reach, self.leaves)

    def provenance(self) -> list[str]:
        """Per group, the leaves it can land in ("leaf 4", "leaves 3, 7")."""
        reach = sp.csr_matrix(self.reach)
        reach.sort_indices()
        signature = np.asarray(reach @ np.random.default_rng(0).standard_normal((reach.shape[1], 2)))
        signature = np.hstack([signature, np.diff(reach.indptr)[:, None]])
        _, first, inverse = np.unique(signature, axis=0, return_index=True, return_inverse=True)
        text = []
        for g in first:
            ids = self.leaves[reach.indices[reach.indptr[g] : reach.indptr[g + 1]]]
            text.append(("leaf " if len(ids) == 1 else "leaves ") + ", ".join(map(str, ids)))
        return [text[i] for i in inverse.ravel()]


def attacker_types(
    tree: Tree, data: pd.DataFrame, known: Sequence[str], sensitive: str, weights: np.ndarray | None = None,
    outputs: str | None = None, options: unknowns.TableOptions | None = None,
) -> AttackerTypes:
    """:func:`ppdm.maxent.table.unknowns.attacker_table` in factored form (same groups, same cells).

    ``outputs`` (``"label"`` or ``"score"``): the attacker also sees the tree's answer about each
    person, which splits the groups by answer and keeps only the leaves that give it
    (:mod:`ppdm.maxent.table.outputs`). ``options``: how large the table may grow
    (:class:`~ppdm.maxent.table.unknowns.TableOptions`)."""
    answers = None
    if outputs:
        answers = record_answers(tree, data, outputs)
        data = data.assign(**{OUTPUT_KEY: unique_codes(answers)})
    domain, groups, class_known = known_groups(tree, data, [*known, OUTPUT_KEY] if outputs else known, sensitive, weights)
    cells = leaf_reach(tree, groups, domain)
    reach = sp.csr_matrix(cells.reach[:, cells.leaves])
    if answers is not None:
        groups = QIGroups(tuple(known), groups.table.drop(columns=OUTPUT_KEY), groups.counts, groups.group_of_record, groups.record_weights)
        reach = answering(reach, leaf_answers(tree, cells.leaves[:, None], str(outputs)), answers[groups.first_rows()])
    limit = (options or unknowns.TableOptions()).max_variables
    if reach.nnz > limit:
        raise size_error(domain, groups.n_groups, reach.nnz, "(group, leaf) pairs", limit)
    group_class = class_of_groups(tree, groups) if class_known else np.full(groups.n_groups, -1, dtype=np.intp)
    block, klass, sens, log_base = _types(tree, domain, cells.sensitive, cells.log_mult, reach, group_class)
    if len(block) > limit:
        raise size_error(domain, groups.n_groups, len(block), "slot types", limit)
    has_truth = all(c.name in data.columns for c in domain.components)
    table = AttackerTypes(
        groups, domain, tree.class_attribute, class_known, cells.leaves, reach, group_class, block, klass, sens, log_base, None,
    )
    if has_truth:
        table.true_type = _true_types(tree, data, table)
    return table


def _types(
    tree: Tree, domain: UnknownDomain, sensitive: list[np.ndarray], log_mult: np.ndarray, reach: sp.csr_matrix, group_class: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (block, class, sensitive cell) some group can take, in that order."""
    k = len(tree.classes)
    n_s = domain.sensitive.size
    blocks = np.arange(len(sensitive))
    n_sens = np.array([len(s) for s in sensitive], dtype=np.intp)
    flat_s = np.concatenate(sensitive) if sensitive else np.zeros(0, dtype=np.intp)
    block_of_s = np.repeat(blocks, n_sens)
    if domain.sensitive.name == tree.class_attribute:
        block, klass, sens = block_of_s, flat_s, flat_s
    else:
        # the (block, class) pairs some group can take: every class, or the groups' own
        if (group_class < 0).all():
            pairs = (blocks[:, None] * k + np.arange(k)).ravel()
        else:
            coo = reach.tocoo()
            pairs = np.unique(coo.col.astype(np.int64) * k + group_class[coo.row])
        pair_block = pairs // k
        start = np.cumsum(n_sens) - n_sens
        count = n_sens[pair_block]
        pair = np.repeat(np.arange(len(pairs)), count)
        offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        block = pair_block[pair]
        klass = (pairs % k)[pair]
        sens = flat_s[start[block] + offset]
    key = (block.astype(np.int64) * k + klass) * n_s + sens
    order = np.argsort(key, kind="stable")
    block, klass, sens = block[order], klass[order], sens[order]
    return block.astype(np.intp), klass.astype(np.intp), sens.astype(np.intp), log_mult[block]


def _true_types(tree: Tree, data: pd.DataFrame, table: AttackerTypes) -> np.ndarray:
    """Each record's type: the leaf its full values reach, its class and its sensitive cell."""
    position = np.full(tree.n_nodes, -1, dtype=np.intp)
    position[table.leaves] = np.arange(len(table.leaves))
    return record_types(table, data, position[tree.apply(data)], tree.class_attribute, tree.classes, "tree")


def record_types(
    table: AttackerTypes, data: pd.DataFrame, rec_block: np.ndarray, class_attribute: str, classes: Sequence, model: str
) -> np.ndarray:
    """Each record's type in ``table`` (a tree's or a forest's) given the block its own values reach
    (``rec_block``, -1 for none), its class and its sensitive cell; ``model`` names the model in errors."""
    k, n_s = len(classes), table.domain.sensitive.size
    rec_class = encode_categories(data[class_attribute], classes)
    if (rec_class < 0).any():
        first = int(np.flatnonzero(rec_class < 0)[0])
        raise DataError(f"column {class_attribute!r}: value {data[class_attribute].iloc[first]!r} (row {first}) is not one of the {model}'s classes")
    rec_sens = table.domain.sensitive.codes(data[table.domain.sensitive.name])
    keys = (table.type_block.astype(np.int64) * k + table.type_class) * n_s + table.type_sens
    wanted = (rec_block.astype(np.int64) * k + rec_class) * n_s + rec_sens
    pos = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    found = (rec_block >= 0) & (keys[pos] == wanted) if len(keys) else np.zeros(len(wanted), dtype=bool)
    if not found.all():  # pragma: no cover - a record always reaches its own leaf
        first = int(np.flatnonzero(~found)[0])
        raise DataError(f"row {first}: its own values reach no type of its group (please report this)")
    return pos
