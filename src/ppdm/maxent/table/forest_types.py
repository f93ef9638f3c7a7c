"""The attacker's table over a whole forest, in factored form: groups, joint leaves, types.

One tree's audit (:mod:`ppdm.maxent.table.attacker_types`) lets a group q of known values reach some
leaves and takes as *types* the (leaf, class, sensitive cell) triples the rows see. Over a
:class:`~ppdm.tree.forest.Forest` every (q, u) lands in one leaf of *every* tree, so a type's
block is a *joint leaf*: the tuple (leaf in tree 0, ..., leaf in tree T−1) (paper 000 §4's rows,
one tree after the other, over the same P(q, u)). In paper 000's setting (every split attribute
known, the class sensitive) each group reaches one joint leaf; unknown split attributes let a
group reach several, found by sending the group down every tree once per cell of the unknowns
the trees split on (:data:`MAX_ROUTED` caps that enumeration). The groups themselves
(:func:`forest_table`) are the table the joint types are built from.

*Multiplicities.* A tree fitted on a bootstrap sample counts training row r m_{r,t} times (known
to anyone holding a scikit-learn forest: ``Forest.multiplicities``), so a leaf's count is
Σ_r m_{r,t}·[r in leaf]. Records of one known-value group with different multiplicity vectors
contribute differently to the rows and are told apart by the attacker (who knows which row is
whom), so the groups here are the distinct (known values, multiplicity vector) pairs and the
block of a type carries the vector too: its coefficient in tree t's rows is m_t. A tree whose
multiplicities are unknown is used only when its root holds exactly the table's records (each
then counts once); otherwise its counts are over rows the attacker cannot tie to records (a
bootstrap or subsample drawn from a stream the model does not store) and the tree is left out
(``ForestTypes.left_out``): the audit then models what the remaining trees publish, never an
expectation over the draw.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.data.qigroups import QIGroups
from ppdm.data.texts import LazyTexts
from ppdm.errors import DataError, RoutingLimitError
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.table.attacker_types import AttackerTypes, record_types
from ppdm.maxent.table.outputs import OUTPUT_KEY, leaf_answers, record_answers, same_answer, unique_codes
from ppdm.maxent.table.unknowns import (
    MAX_SENSITIVE_VALUES,
    Component,
    UnknownDomain,
    interval_cells,
    sensitive_component,
)
from ppdm.tree.forest import Forest
from ppdm.tree.leaf_pairs import LeafPairs
from ppdm.tree.model import encode_categories
from ppdm.tree.splits import ThresholdSplit

#: The most (group, cell of the routed unknowns, tree) triples routed before refusing (the default
#: of :func:`forest_types`'s ``max_routed``; an audit sets it in its forest options).
MAX_ROUTED = 40_000_000

_MULT_KEY = "__ppdm_multiplicities__"


@dataclass
class ForestTypes:
    """Groups of known values (and multiplicity vectors), the joint leaves they reach, the types.

    ``block_leaves`` (blocks × trees): each joint leaf's leaf per tree; ``block_weight`` (blocks ×
    trees): the multiplicity with which tree t counts a record of the block (0: out of bag);
    ``reach``: groups × blocks, 0/1; ``group_class``: each group's known class (−1: unknown). Per
    type: ``type_block``, ``type_class``, ``type_sens``, ``log_base``. ``used``: the trees whose
    rows the audit builds (``left_out``: the others). ``true_type``: each record's type when the
    data holds every unknown column. ``rounds``: which trees of a boosted model gave rows and
    why the others did not (set by the rows' builder).
    """

    forest: Forest
    groups: QIGroups
    domain: UnknownDomain
    class_known: bool
    block_leaves: np.ndarray
    block_weight: np.ndarray
    reach: sp.csr_matrix
    group_class: np.ndarray
    type_block: np.ndarray
    type_class: np.ndarray
    type_sens: np.ndarray
    log_base: np.ndarray
    used: np.ndarray
    true_type: np.ndarray | None = None
    known_group: np.ndarray | None = None
    left_out: list[int] = field(default_factory=list)
    rounds: RoundsUsed | None = None
    #: Trees whose rows were not built before the audit's build deadline (a lower bound, said so).
    unread: list[int] = field(default_factory=list)
    #: Seconds routing the groups through every tree took (the audit's work after the solve
    #: routes the records through the model about as many times again).
    route_seconds: float = 0.0

    @property
    def class_attribute(self) -> str:
        return self.forest.class_attribute

    @property
    def n_types(self) -> int:
        return len(self.type_block)

    @property
    def n_blocks(self) -> int:
        return len(self.block_leaves)

    def problem(self) -> FactoredProblem:
        """The factored problem without rows: groups, the joint leaves they reach, the types."""
        pinned = None
        if self.known_group is not None and self.known_group.any():
            assert self.true_type is not None
            pinned = np.where(self.known_group, self.true_type[self.groups.first_rows()], -1)
        base = None if not self.log_base.any() else self.log_base
        return FactoredProblem(
            self.groups.weights, self.reach, self.group_class, self.type_block, self.type_class, self.type_sens,
            self.domain.sensitive.size, log_base=base, pinned=pinned,
        )

    def truth(self) -> np.ndarray | None:
        """The records' distribution over the types, P(t), if every unknown column is in the data."""
        if self.true_type is None:
            return None
        return np.bincount(self.true_type, minlength=self.n_types) / self.groups.n_records

    true_sensitive = AttackerTypes.true_sensitive
    true_marginal = AttackerTypes.true_marginal
    sensitive_distribution = AttackerTypes.sensitive_distribution

    def leaf_pairs(self) -> LeafPairs:
        """Per group, the (tree, leaf) pairs of the joint leaves it reaches, over every tree of
        the forest (the trees ``left_out`` too: the routing does not depend on the counts)."""
        return LeafPairs.from_reach(self.reach, self.block_leaves)

    def provenance(self) -> LazyTexts:
        """Per group, its leaf in every tree ("tree 0 leaf 17; tree 1 leaves 3, 9; ..."), written
        when first read (:class:`~ppdm.data.texts.LazyTexts`: a report reads them, an audit does not)."""
        return LazyTexts(self._provenance, self.groups.n_groups)

    def _provenance(self) -> list[str]:
        reach = sp.csr_matrix(self.reach)
        reach.sort_indices()
        trees = np.flatnonzero(self.used)
        if (np.diff(reach.indptr) == 1).all():  # one joint leaf per group: one string per joint leaf
            prefixes = [f"tree {t} leaf " for t in trees]
            text = ["; ".join(p + s for p, s in zip(prefixes, map(str, row))) for row in self.block_leaves[:, trees].tolist()]
            return [text[b] for b in reach.indices]
        return _describe(reach, self.block_leaves[:, trees], trees)


def _describe(reach: sp.csr_matrix, leaves: np.ndarray, trees: np.ndarray) -> list[str]:
    """Per group, its distinct leaves in each tree, from every (group, joint leaf) pair at once."""
    coo = reach.tocoo()
    n_t = len(trees)
    group = np.repeat(coo.row.astype(np.int64), n_t)
    column = np.tile(np.arange(n_t), len(coo.row))
    leaf = leaves[coo.col].ravel().astype(np.int64)
    width = int(leaf.max(initial=0)) + 1
    key = np.unique((group * n_t + column) * width + leaf)
    leaf, gc = key % width, key // width
    start = np.flatnonzero(np.r_[True, gc[1:] != gc[:-1]])
    ends = np.r_[start[1:], len(gc)]
    names = [f"tree {t} leaf " for t in trees]
    plural = [f"tree {t} leaves " for t in trees]
    ids = leaf.astype(str).tolist()
    parts: list[list[str]] = [[] for _ in range(reach.shape[0])]
    for a, b, cell in zip(start.tolist(), ends.tolist(), gc[start].tolist()):
        g, j = divmod(cell, n_t)
        parts[g].append((names[j] if b - a == 1 else plural[j]) + ", ".join(ids[a:b]))
    return ["; ".join(p) for p in parts]


#: Why a round is left out when its rows cannot be tied to the training rows (an XGBoost JSON file
#: does not say whether rows were subsampled; its training configuration does).
UNTIED = "its rows may be a subsample the model does not store (unknown multiplicities; an XGBoost file's training configuration, booster.save_config(), says whether they were)"


@dataclass
class RoundsUsed:
    """Which trees of a model the audit built rows from, and why the others gave none.

    ``used``: trees whose leaves gave rows (class counts or leaf values); ``left_out``: per
    reason, the trees left out; ``per_round``: trees per boosting round (classes of a softmax);
    ``real``: trees some of whose rows have real coefficients (leaf values and covers of leaves
    whose records the known columns do not decide), which the exact audit cannot read.
    """

    n_trees: int
    used: list[int] = field(default_factory=list)
    left_out: dict[str, list[int]] = field(default_factory=dict)
    per_round: int = 1
    real: list[int] = field(default_factory=list)

    def leave_out(self, tree: int, reason: str) -> None:
        self.left_out.setdefault(reason, []).append(tree)

    def summary(self) -> dict[str, object]:
        return {
            "trees": self.n_trees, "used": len(self.used), "per_round": self.per_round,
            "left_out": {reason: len(trees) for reason, trees in self.left_out.items()}, "real_rows": len(self.real),
        }  # fmt: skip

    def note(self) -> str:
        """One line for the audit's summary and the report's first card: how many trees were
        audited and why the others were not."""
        unit = "boosting rounds" if self.per_round == 1 else f"boosting trees ({self.per_round} per round, one per class)"
        if not self.left_out:
            return f"all {self.n_trees} {unit} audited (the leaf values of every round)"
        why = "; ".join(f"{len(trees)} because {reason}" for reason, trees in self.left_out.items())
        return f"{len(self.used)} of {self.n_trees} {unit} audited, the others left out: {why}"


# -- the unknowns -------------------------------------------------------------------------------


def split_component(forest: Forest, name: str, role: str = "split") -> Component:
    """An attribute some tree splits on: its categories, or the intervals every tree's thresholds cut."""
    attr = forest.attributes[name]
    if attr.is_categorical:
        return Component(name, role, tuple(attr.categories))  # type: ignore[arg-type]
    thresholds = forest_thresholds(forest, name)
    return Component(name, role, interval_cells(name, thresholds), thresholds=thresholds)  # type: ignore[arg-type]


def forest_thresholds(forest: Forest, name: str) -> np.ndarray:
    """Every threshold some tree of ``forest`` cuts the numeric column ``name`` at, sorted: the
    bounds of its cells (interval ``i`` holds the values ``x`` with ``thresholds[i-1] < x <= thresholds[i]``)."""
    return np.array(sorted({
        n.split.threshold for t in forest.trees for n in t.nodes if isinstance(n.split, ThresholdSplit) and n.split.attribute == name
    }), dtype=float)


def forest_domain(forest: Forest, data: pd.DataFrame | None, known: Sequence[str], sensitive: str) -> UnknownDomain:
    """The components of u over every tree (see :func:`ppdm.maxent.table.unknowns.unknown_domain`)."""
    known_set = set(known)
    if sensitive in known_set:
        raise DataError(f"the sensitive column {sensitive!r} cannot also be a known column")
    split = forest.split_attributes
    if sensitive == forest.class_attribute:
        components = [Component(sensitive, "sensitive", tuple(forest.classes), in_tree=False)]
    elif sensitive in split:
        components = [split_component(forest, sensitive, "sensitive")]
    else:
        components = [sensitive_component(forest.trees[0], data, sensitive)]
        if components[0].size > MAX_SENSITIVE_VALUES:  # pragma: no cover - sensitive_component refuses first
            raise DataError(f"the sensitive column {sensitive!r} has too many values")
    if forest.class_attribute != sensitive and forest.class_attribute not in known_set:
        components.append(Component(forest.class_attribute, "class", tuple(forest.classes), in_tree=False))
    components += [split_component(forest, n, "split") for n in split if n not in known_set and n != sensitive]
    return UnknownDomain(tuple(components))


def _representatives(component: Component) -> np.ndarray | pd.Categorical:
    """One value per cell that every tree routes as the whole cell (an interval's upper end)."""
    if not component.is_numeric:
        return np.asarray(component.cells, dtype=object)
    t = component.thresholds
    assert t is not None
    if len(t) == 0:
        return np.array([0.0])
    return np.r_[t, t[-1] + 1.0 + abs(t[-1])]


# -- which trees' counts the attacker can tie to the records --------------------------------------


def tree_weights(forest: Forest, n_records: int) -> tuple[np.ndarray, np.ndarray]:
    """Per record and tree, how often the tree counts the record (records × trees, int), and which
    trees are used (see the module docstring); refuses multiplicities of another table size."""
    weights = np.zeros((n_records, forest.n_trees), dtype=np.int64)
    used = np.zeros(forest.n_trees, dtype=bool)
    for i, tree in enumerate(forest.trees):
        m = forest.multiplicities[i]
        if m is not None:
            if len(m) != n_records:
                more = " (a table holding others too, as --sample allows, cannot be tied to a bootstrap tree's draws)" if n_records > len(m) else ""
                raise DataError(
                    f"tree {i}'s multiplicities count {len(m):,} training rows, the table has {n_records:,}{more}: "
                    "pass the training rows in the order the model was fitted on"
                )
            weights[:, i] = m
            used[i] = True
        elif tree.root.n_samples is not None and abs(tree.root.n_samples - n_records) <= 1e-6:
            weights[:, i] = 1
            used[i] = True
    return weights, used


def tied_weights(forest: Forest, n_records: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tree_weights`, refusing a table none of whose trees' counts can be tied to its records."""
    weights, used = tree_weights(forest, n_records)
    if not used.any():
        raise DataError(f"no tree's counts can be tied to the table's records ({n_records:,} rows): {_untied(forest, n_records)}")
    return weights, used


def _untied(forest: Forest, n_records: int) -> str:
    """Why no tree's counts are the table's: the rows the trees count, when every tree counts fewer
    than the table holds, and the reasons a model fitted on this very table may not name them."""
    roots = sorted({float(t.root.n_samples) for t in forest.trees if t.root.n_samples is not None})
    if not roots or roots[-1] > n_records:
        return "pass the training rows the model was fitted on"
    counted = f"{roots[0]:,.0f}" if len(roots) == 1 else f"{roots[0]:,.0f} to {roots[-1]:,.0f}"
    return (
        f"the trees count {counted} of them and the model does not store which: each tree drew a subsample of the rows "
        "(bagging, subsample < 1) or some were held out for early stopping, which histogram gradient boosting does by default "
        "above 10,000 rows; refit with every row (subsample=1, bagging_fraction=1, early_stopping=False), or pass the rows the model was fitted on"
    )


# -- the table -----------------------------------------------------------------------------------


@dataclass
class ForestTable:
    """The attacker's table over a forest before any routing, which the joint types here are built
    from.

    ``domain``: the unknowns; ``weights`` (records × trees): how often each tree counts each record,
    ``used`` the trees whose counts are tied to the records (:func:`tied_weights`); ``groups``: the
    (known values, multiplicity vector[, known individual][, the model's answer]) groups,
    ``known_group`` the fully known individuals' own; ``answers``: per record the model's answer the
    attacker sees (``None``: none); ``group_class``: each group's known class (−1: unknown).
    """

    domain: UnknownDomain
    weights: np.ndarray
    used: np.ndarray
    groups: QIGroups
    known_group: np.ndarray | None
    answers: np.ndarray | None
    class_known: bool
    group_class: np.ndarray

    @property
    def left_out(self) -> list[int]:
        """The trees whose counts cannot be tied to the records."""
        return [int(i) for i in np.flatnonzero(~self.used)]


def forest_table(
    forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str, individuals: Sequence[int] = (),
    outputs: str | None = None,
) -> ForestTable:
    """Group ``data`` by the ``known`` columns and the multiplicity vectors of the trees tied to it
    (see :class:`ForestTable`; ``individuals`` and ``outputs`` as in :func:`forest_types`)."""
    known = list(known)
    missing = [c for c in known if c not in data.columns]
    if missing:
        raise DataError(f"known column(s) missing from the data: {', '.join(map(repr, missing))}")
    domain = forest_domain(forest, data, known, sensitive)
    weights, used = tied_weights(forest, len(data))
    answers = record_answers(forest, data, outputs) if outputs else None
    groups, known_group = _groups(data, known, weights[:, used], individuals, answers)
    class_known = forest.class_attribute in known
    group_class = _group_class(forest, groups) if class_known else np.full(groups.n_groups, -1, dtype=np.intp)
    return ForestTable(domain, weights, used, groups, known_group, answers, class_known, group_class)


def forest_types(
    forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str, individuals: Sequence[int] = (),
    outputs: str | None = None, max_routed: int | None = None,
) -> ForestTypes:
    """Group ``data`` by the ``known`` columns (and multiplicity vectors), route every group down
    every tree for each cell of the unknowns the trees split on, and list the types.

    ``individuals``: rows whose whole record the attacker knows; each becomes a group of its own
    (``known_group``), pinned to its true type. ``outputs`` (``"label"`` or ``"score"``): the
    attacker also sees the forest's answer about each person, which splits the groups by answer
    and keeps only the joint leaves that give it (:mod:`ppdm.maxent.table.outputs`).
    ``max_routed``: the most (group, cell, tree) triples routed before refusing
    (:class:`~ppdm.errors.RoutingLimitError`; ``None``: :data:`MAX_ROUTED`).
    """
    known = list(known)
    table = forest_table(forest, data, known, sensitive, individuals, outputs)
    domain, weights, used, groups, known_group = table.domain, table.weights, table.used, table.groups, table.known_group
    answers, class_known, group_class = table.answers, table.class_known, table.group_class
    first = groups.first_rows()
    mult = weights[first]
    routed = [c for c in domain.components if c.role != "class" and c.in_tree]
    plain = QIGroups.from_frame(data, known) if known else None
    plain_of_group = plain.group_of_record[first] if plain is not None else np.zeros(groups.n_groups, dtype=np.intp)
    began = time.perf_counter()
    plain_pair, pair_cells, leaves = _route(forest, plain, routed, groups.n_groups, max_routed)
    route_seconds = time.perf_counter() - began
    # every full group takes the pairs of its known values (pairs are in plain-group order)
    n_cells = len(pair_cells) // max(plain.n_groups if plain is not None else 1, 1)
    pair_group = np.repeat(np.arange(groups.n_groups), n_cells)
    pair_of = (plain_of_group[:, None] * n_cells + np.arange(n_cells)).ravel()
    pair_cells, leaves = pair_cells[pair_of], leaves[pair_of]
    del plain_pair
    if answers is not None:  # the person's answer rules out the joint leaves that give another
        keep = same_answer(leaf_answers(forest, leaves, str(outputs)), answers[first][pair_group])
        pair_group, pair_cells, leaves = pair_group[keep], pair_cells[keep], leaves[keep]
    block_key = np.column_stack([leaves, mult[pair_group]])
    first_pair, pair_block = unique_rows(block_key)
    keys = block_key[first_pair]
    n_t = forest.n_trees
    block_leaves, block_weight = keys[:, :n_t].astype(np.intp), keys[:, n_t:]
    reach = sp.csr_matrix((np.ones(len(pair_group), dtype=np.int8), (pair_group, pair_block)), shape=(groups.n_groups, len(keys)))
    reach.sum_duplicates()
    reach.data[:] = 1
    block, klass, sens, log_base = _types(forest, domain, routed, pair_group, pair_block, pair_cells, reach, group_class)
    types = ForestTypes(
        forest, groups, domain, class_known, block_leaves, block_weight, reach, group_class, block, klass, sens, log_base,
        used, known_group=known_group, left_out=table.left_out, route_seconds=route_seconds,
    )
    if all(c.name in data.columns for c in domain.components):
        # without routed unknowns a record's joint leaf is its group's (known values and multiplicities)
        rec_block = pair_block[groups.group_of_record] if not routed else None
        types.true_type = _true_types(data, types, keys, weights, rec_block)
    elif known_group is not None:
        raise DataError("known individuals need their full records in the data (every unknown column)")
    return types


def unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first occurrence of each distinct row of the integer matrix ``a`` and each row's index
    among them: rows compared as raw bytes (``np.unique(axis=0)`` sorts field by field, 10× slower
    on 100 columns)."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    view = a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def _groups(
    data: pd.DataFrame, known: list[str], weights: np.ndarray, individuals: Sequence[int], answers: np.ndarray | None = None,
) -> tuple[QIGroups, np.ndarray | None]:
    """Groups of (known values, multiplicity vector[, known individual][, the model's answer])."""
    signature = unique_rows(weights)[1] if weights.size else np.zeros(len(data), dtype=np.intp)
    extra = {_MULT_KEY: signature}
    if answers is not None:
        extra[OUTPUT_KEY] = unique_codes(answers)
    person = None
    if individuals:
        person = np.full(len(data), -1)
        person[list(individuals)] = np.arange(len(individuals))
        extra["__ppdm_known_individual__"] = person
    frame = data[known].assign(**extra)
    full = QIGroups.from_frame(frame, [*known, *extra])
    known_group = None
    if person is not None:
        known_group = full.table["__ppdm_known_individual__"].to_numpy() >= 0
    groups = QIGroups(tuple(known), full.table.drop(columns=list(extra)), full.counts, full.group_of_record)
    return groups, known_group


def _group_class(forest: Forest, groups: QIGroups) -> np.ndarray:
    codes = encode_categories(groups.table[forest.class_attribute], forest.classes)
    if (codes < 0).any():
        first = int(np.flatnonzero(codes < 0)[0])
        raise DataError(
            f"column {forest.class_attribute!r}: value {groups.table[forest.class_attribute].iloc[first]!r} "
            f"is not one of the forest's classes {list(forest.classes)}"
        )
    return codes


def _route(
    forest: Forest, groups: QIGroups | None, routed: list[Component], n_full: int, max_routed: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (group of known values, cell of the routed unknowns) pair, group by group: its group,
    its cells (pairs × routed) and its leaf in every tree (pairs × trees). ``groups`` ``None``: the
    attacker knows no column (one group). ``n_full``: the groups (with multiplicities) the pairs
    are copied to, for the size cap ``max_routed`` (``None``: :data:`MAX_ROUTED`)."""
    max_routed = MAX_ROUTED if max_routed is None else max_routed
    sizes = [c.size for c in routed]
    n_cells = math.prod(sizes)
    n_groups = groups.n_groups if groups is not None else 1
    n_pairs = n_groups * n_cells
    per_tree = max(n_pairs, n_full * n_cells)
    if per_tree * forest.n_trees > max_routed:
        names = ", ".join(f"{c.name!r} ({c.size} cells)" for c in routed)
        raise RoutingLimitError.over(
            f"the forest's unknown split attributes {names} make {n_cells:,} cells for each of {max(n_groups, n_full):,} "
            f"known-value groups over {forest.n_trees} trees: {per_tree * forest.n_trees:,} leaves to route "
            f"(at most {max_routed:,})",
            per_tree, max_routed, instead="declare more columns known",
        )
    cells = np.array(np.unravel_index(np.arange(n_cells), sizes)).T if routed else np.zeros((1, 0), dtype=np.intp)
    pair_group = np.repeat(np.arange(n_groups), n_cells)
    pair_cells = np.tile(cells, (n_groups, 1))
    frame = groups.table.iloc[pair_group].reset_index(drop=True) if groups is not None else pd.DataFrame(index=range(n_pairs))
    for j, c in enumerate(routed):
        frame[c.name] = _representatives(c)[pair_cells[:, j]]
    return pair_group, pair_cells.astype(np.intp), forest.apply(frame)


def _types(
    forest: Forest, domain: UnknownDomain, routed: list[Component], pair_group: np.ndarray, pair_block: np.ndarray,
    pair_cells: np.ndarray, reach: sp.csr_matrix, group_class: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (block, class, sensitive cell) some group can take, sorted, with its log base measure
    (how many cells of the routed unknowns of one group land in the block with that sensitive cell)."""
    s = domain.sensitive
    n_s, k = s.size, len(forest.classes)
    sens_routed = bool(routed) and routed[0].name == s.name
    pair_sens = pair_cells[:, 0] if sens_routed else np.zeros(len(pair_group), dtype=np.intp)
    # cells per (group, block, sensitive cell): the same for every group reaching the block
    key = (pair_group.astype(np.int64) * reach.shape[1] + pair_block) * n_s + pair_sens
    uniq, count = np.unique(key, return_counts=True)
    bs = uniq % (reach.shape[1] * n_s)
    bs_key, first = np.unique(bs, return_index=True)
    blk, sen, cnt = bs_key // n_s, bs_key % n_s, count[first]
    if not sens_routed:  # every sensitive value in every block
        blk, sen, cnt = np.repeat(blk, n_s), np.tile(np.arange(n_s), len(blk)), np.repeat(cnt, n_s)
    if s.name == forest.class_attribute:
        block, klass, sens, c = blk, sen, sen, cnt
    elif (group_class < 0).all():
        block, klass, sens, c = np.repeat(blk, k), np.tile(np.arange(k), len(blk)), np.repeat(sen, k), np.repeat(cnt, k)
    else:
        coo = reach.tocoo()
        pairs = np.unique(coo.col.astype(np.int64) * k + group_class[coo.row])
        pos = np.searchsorted(blk, pairs // k, side="left")
        end = np.searchsorted(blk, pairs // k, side="right")
        n = end - pos
        idx = np.repeat(pos, n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
        block, klass, sens, c = blk[idx], np.repeat(pairs % k, n), sen[idx], cnt[idx]
    order = np.lexsort((sens, klass, block))
    return (
        block[order].astype(np.intp), klass[order].astype(np.intp), sens[order].astype(np.intp), np.log(c[order].astype(float)),
    )


def _true_types(data: pd.DataFrame, types: ForestTypes, keys: np.ndarray, weights: np.ndarray, rec_block: np.ndarray | None) -> np.ndarray:
    """Each record's type: the joint leaf its own values reach (with its multiplicities), its class
    and its sensitive cell."""
    forest = types.forest
    if rec_block is None:
        rec_key = np.column_stack([forest.apply(data), weights])
        _, inverse = unique_rows(np.vstack([keys, rec_key]))  # rows as raw bytes: np.unique(axis=0) took 15 s on 10⁵ records
        block_of = np.full(len(keys) + len(rec_key), -1, dtype=np.intp)
        block_of[inverse[: len(keys)]] = np.arange(len(keys))
        rec_block = block_of[inverse[len(keys) :]]
    return record_types(types, data, rec_block, forest.class_attribute, forest.classes, "forest")  # type: ignore[arg-type]
