"""Every boosting round under partial knowledge: each person's completions and the rows they meet.

An attacker who knows a few columns of each training record misses the other split columns
(and the sensitive one). A *completion* of a person is a value (a cell: a category, or an interval
between the trees' thresholds) for each unknown split column, the sensitive cell and the class.
A completion fixes the person's leaf in **every** round, hence the score before each round, hence
the probability p and hessian h = s p (1 − p) every round's Newton step weighs them by
(:mod:`ppdm.tree.newton`; Chen & Guestrin 2016, eq. 5). Each published leaf Λ of tree t is then a
*linear* row over the completions' probabilities, with coefficients known per completion:

* class counts (a first round): Σ_{i ∈ Λ} m_i [y_i = k] = n_{Λ,k};
* leaf values: Σ_{i ∈ Λ} m_i ([y_i = k] − α_i) = λ v_Λ / η, α = p + (v_Λ / η) h;
* covers (XGBoost's ``sum_hessian``, LightGBM's ``leaf_weight``): Σ_{i ∈ Λ} m_i h_i = H_Λ;
* row counts: Σ_{i ∈ Λ} m_i = n_Λ;

the same rows :mod:`ppdm.maxent.constraints.boosting_rows` builds over the joint table's types.
The joint table enumerates, per group of known values, every combination of the unknown cells
over all trees, and refuses beyond a cap (58 M routes on Adult with 3 known columns). Here the
rows are built per *completion*, their cost grows with (completions × trees), and the
completions of a group are either all of them (:func:`enumerate_completions`, when their number
is bounded: few unknown columns with small domains) or a sample (:func:`sample_completions`,
from a product proposal, each with its importance weight against the counting measure over the
cells the explicit audit puts on them). The maximum-entropy fit over them is
:mod:`ppdm.maxent.solvers.completion_dual`.

:func:`truth_rows` evaluates every row on the training records themselves: they meet every row
up to the library's precision (:func:`check_truth_rows`), whatever the sample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError
from ppdm.maxent.table.forest_types import UNTIED, RoundsUsed, forest_domain, tree_weights, unique_rows
from ppdm.maxent.table.unknowns import Component, UnknownDomain
from ppdm.tree.forest import Forest, leaf_values
from ppdm.tree.model import encode_categories
from ppdm.tree.newton import NewtonStep, newton_step, round_probabilities, tree_rounds

__all__ = [
    "CompletionRows", "Completions", "Features", "check_truth_rows", "completion_rows", "enumerate_completions",
    "features", "n_completions", "row_values", "sample_completions", "truth_rows",
]

#: Records by which a recomputed row may always miss (as :data:`ppdm.maxent.constraints.boosting_rows.ABSOLUTE`).
ABSOLUTE = 0.05

#: The row kinds, in the order their rows are numbered.
KINDS = ("counts", "values", "covers", "sizes")


@dataclass
class CompletionRows:
    """The rows every round publishes, numbered: per kind, the trees giving them and, per tree,
    each node's row (−1: none; a class-count leaf's first row, one per class after it).

    ``b``: per row the published value over the records (a share); ``slack``: per row how many
    records the library's precision lets the truth miss it by; ``names``: per row what it is.
    ``targets``: per tree the class its leaf values are the step of. ``rounds``: which trees gave
    rows and why the others did not."""

    trees: dict[str, np.ndarray]
    row_of_node: dict[str, np.ndarray]
    b: np.ndarray
    slack: np.ndarray
    names: list[str]
    targets: np.ndarray
    step: NewtonStep | None
    rounds: RoundsUsed
    n_classes: int
    n_records: int
    sa_row: int = -1

    @property
    def n_rows(self) -> int:
        return len(self.b)

    def real_trees(self) -> list[int]:
        """Trees some of whose rows have real coefficients (leaf values, covers)."""
        return sorted({int(t) for k in ("values", "covers") for t in self.trees[k]})


def completion_rows(forest: Forest, n_records: int, used: np.ndarray, sa: np.ndarray | None = None) -> CompletionRows:
    """The rows of every tree of the boosted ``forest`` the records can be tied to (``used``) and
    the published distribution of the sensitive cells ``sa`` (counts, or ``None``)."""
    step = newton_step(forest)
    round_of = tree_rounds(forest)
    k = len(forest.classes)
    rounds = RoundsUsed(forest.n_trees, per_round=forest.n_outputs)
    trees: dict[str, list[int]] = {kind: [] for kind in KINDS}
    maps: dict[str, list[np.ndarray]] = {kind: [] for kind in KINDS}
    b: list[float] = []
    slack: list[float] = []
    names: list[str] = []
    targets = np.array([1 if forest.link == "logistic" else int(forest.outputs[t]) for t in range(forest.n_trees)])

    def add(kind: str, t: int, leaves: np.ndarray, values: np.ndarray, label: str, per: int = 1, tol: np.ndarray | None = None) -> None:
        row = np.full(forest.trees[t].n_nodes, -1, dtype=np.int64)
        row[leaves] = len(b) + per * np.arange(len(leaves))
        trees[kind].append(t)
        maps[kind].append(row)
        b.extend((values / n_records).ravel().tolist())
        slack.extend((np.full(values.size, ABSOLUTE) if tol is None else np.repeat(tol, per)).tolist())
        names.extend(f"{label}(tree {t} leaf {i}{'' if per == 1 else f', {forest.classes[c]}'})" for i in leaves.tolist() for c in range(per))

    for t, tree in enumerate(forest.trees):
        if not used[t]:
            rounds.leave_out(t, UNTIED)
            continue
        leaves = np.array([n.id for n in tree.nodes if n.is_leaf], dtype=np.int64)
        nodes = [tree.nodes[i] for i in leaves.tolist()]
        known = forest.known[t]
        read = False
        if "class-counts" in known and all(n.counts is not None for n in nodes):
            add("counts", t, leaves, np.array([n.counts for n in nodes], dtype=float), "count", per=k)
            read = True
        elif isinstance(step, NewtonStep) and round_of is not None and not (step.biased_first_round and round_of[t] == 0):
            v = leaf_values(tree)[leaves]
            keep = leaves if step.min_hessian <= 0 else leaves[v != 0.0]
            size = np.array([tree.nodes[i].n_samples or n_records for i in keep.tolist()], dtype=float)
            add("values", t, keep, step.l2 * leaf_values(tree)[keep] / step.learning_rate, "leaf value", tol=ABSOLUTE + step.tolerance * size)
            read = True
        biased = isinstance(step, NewtonStep) and step.biased_first_round and round_of is not None and round_of[t] == 0
        if "cover" in known and all(n.cover is not None for n in nodes) and not biased:  # a biased first round's hessians are at a score not stored
            size = np.array([n.n_samples or n_records for n in nodes], dtype=float)
            tol = ABSOLUTE + (step.tolerance if isinstance(step, NewtonStep) else 1e-6) * size
            add("covers", t, leaves, np.array([n.cover for n in nodes], dtype=float), "cover", tol=tol)
            read = True
        if "sample-counts" in known and "class-counts" not in known and all(n.n_samples is not None for n in nodes):
            add("sizes", t, leaves, np.array([n.n_samples for n in nodes], dtype=float), "rows")
            read = True
        if read:
            rounds.used.append(t)
            if t in trees["values"] or t in trees["covers"]:
                rounds.real.append(t)
        else:
            rounds.leave_out(t, step if isinstance(step, str) else "it publishes no leaf counts, values or covers")
    sa_row = -1
    if sa is not None:
        sa_row = len(b)
        b.extend((np.asarray(sa, dtype=float) / n_records).tolist())
        slack.extend([ABSOLUTE] * len(sa))
        names.extend(f"sensitive cell {i}" for i in range(len(sa)))
    width = max((tr.n_nodes for tr in forest.trees), default=1)
    row_of_node = {
        kind: np.array([np.pad(m, (0, width - len(m)), constant_values=-1) for m in maps[kind]], dtype=np.int64).reshape(len(maps[kind]), width)
        for kind in KINDS
    }
    return CompletionRows(
        {kind: np.array(trees[kind], dtype=np.intp) for kind in KINDS}, row_of_node, np.array(b), np.array(slack), names,
        targets, step if isinstance(step, NewtonStep) else None, rounds, k, n_records, sa_row,
    )


# -- the completions ------------------------------------------------------------------------------


@dataclass
class Completions:
    """Per group of known values, its completions (contiguous: group g holds ``start[g]:start[g+1]``).

    Per completion: ``cells`` (completions × routed components: the cell of each unknown column
    the trees split on), ``leaves`` (completions × trees), ``log_weight`` (the log of its weight
    against the counting measure over the cells: 0 when enumerated, minus the log of its proposal
    probability when sampled) and ``sens`` (its sensitive cell, −1 when the sensitive column is
    the class). ``exact``: every completion of every group is listed."""

    groups: QIGroups
    domain: UnknownDomain
    routed: tuple[Component, ...]
    start: np.ndarray
    cells: np.ndarray
    leaves: np.ndarray
    log_weight: np.ndarray
    sens: np.ndarray
    group_class: np.ndarray
    multiplicity: np.ndarray
    exact: bool
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.log_weight)

    @property
    def group_of(self) -> np.ndarray:
        return np.repeat(np.arange(self.groups.n_groups), np.diff(self.start))


def routed_components(domain: UnknownDomain) -> tuple[Component, ...]:
    """The unknown columns a completion gives a cell: every one but the class (the sensitive one
    first when it is not the class)."""
    return tuple(c for c in domain.components if c.role != "class")


def n_completions(domain: UnknownDomain) -> int:
    """How many completions each group has (the class aside)."""
    return math.prod(c.size for c in routed_components(domain))


def attacker_groups(forest: Forest, data: pd.DataFrame, known: Sequence[str]) -> tuple[QIGroups, np.ndarray, np.ndarray]:
    """The groups of (known values, multiplicity vector), each group's multiplicities (groups ×
    trees) and which trees are tied to the records."""
    weights, used = tree_weights(forest, len(data))
    signature = unique_rows(weights[:, used])[1] if used.any() else np.zeros(len(data), dtype=np.intp)
    frame = data[list(known)].assign(__ppdm_multiplicities__=signature)
    full = QIGroups.from_frame(frame, [*known, "__ppdm_multiplicities__"])
    groups = QIGroups(tuple(known), full.table.drop(columns=["__ppdm_multiplicities__"]), full.counts, full.group_of_record)
    return groups, weights[groups.first_rows()], used


def _group_class(forest: Forest, groups: QIGroups) -> np.ndarray:
    if forest.class_attribute not in groups.table.columns:
        return np.full(groups.n_groups, -1, dtype=np.intp)
    return encode_categories(groups.table[forest.class_attribute], forest.classes)


def _representatives(component: Component) -> np.ndarray:
    """One value per cell that every tree routes as the whole cell (an interval's upper end)."""
    if not component.is_numeric:
        return np.asarray(component.cells, dtype=object)
    t = component.thresholds
    assert t is not None
    return np.array([0.0]) if len(t) == 0 else np.r_[t, t[-1] + 1.0 + abs(t[-1])]


def _leaves(forest: Forest, groups: QIGroups, group_of: np.ndarray, routed: Sequence[Component], cells: np.ndarray, chunk: int = 200_000) -> np.ndarray:
    """Every completion's leaf in every tree (completions × trees), routed in chunks."""
    out = np.empty((len(group_of), forest.n_trees), dtype=np.int32)
    reps = [_representatives(c) for c in routed]
    for a in range(0, len(group_of), chunk):
        z = min(a + chunk, len(group_of))
        frame = groups.table.iloc[group_of[a:z]].reset_index(drop=True)
        for j, c in enumerate(routed):
            if c.in_tree:
                frame[c.name] = reps[j][cells[a:z, j]]
        out[a:z] = forest.apply(frame)
    return out


def _sens(domain: UnknownDomain, routed: Sequence[Component], cells: np.ndarray) -> np.ndarray:
    if domain.sensitive.role == "sensitive" and routed and routed[0].name == domain.sensitive.name:
        return cells[:, 0].astype(np.intp)
    return np.full(len(cells), -1, dtype=np.intp)


def _setup(forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str) -> tuple[QIGroups, np.ndarray, np.ndarray, UnknownDomain, tuple[Component, ...]]:
    missing = [c for c in known if c not in data.columns]
    if missing:
        raise DataError(f"known column(s) missing from the data: {', '.join(map(repr, missing))}")
    domain = forest_domain(forest, data, known, sensitive)
    groups, mult, used = attacker_groups(forest, data, known)
    if not used.any():
        raise DataError(f"no tree's counts can be tied to the table's records ({len(data):,} rows): pass the training rows the model was fitted on")
    return groups, mult, used, domain, routed_components(domain)


def enumerate_completions(forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str) -> tuple[Completions, np.ndarray]:
    """Every completion of every group (their number per group is :func:`n_completions`), and the
    trees tied to the records."""
    groups, mult, used, domain, routed = _setup(forest, data, known, sensitive)
    sizes = [c.size for c in routed]
    per = math.prod(sizes)
    one = np.array(np.unravel_index(np.arange(per), sizes)).T if routed else np.zeros((1, 0), dtype=np.intp)
    cells = np.tile(one, (groups.n_groups, 1)).astype(np.intp)
    group_of = np.repeat(np.arange(groups.n_groups), per)
    leaves = _leaves(forest, groups, group_of, routed, cells)
    start = np.arange(groups.n_groups + 1) * per
    c = Completions(groups, domain, routed, start, cells, leaves, np.zeros(len(cells)), _sens(domain, routed, cells), _group_class(forest, groups), mult, True)
    return c, used


@dataclass(frozen=True)
class Proposal:
    """A product distribution over each routed component's cells (rows sum to 1)."""

    probabilities: tuple[np.ndarray, ...]

    @classmethod
    def uniform(cls, routed: Sequence[Component]) -> Proposal:
        return cls(tuple(np.full(c.size, 1.0 / c.size) for c in routed))

    def mixed(self, other: Proposal, share: float) -> Proposal:
        """``share`` of ``other`` and the rest of this one (a defensive mixture, Hesterberg 1995)."""
        return Proposal(tuple((1 - share) * a + share * b for a, b in zip(self.probabilities, other.probabilities)))


def sample_completions(
    forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str, per_group: np.ndarray | int,
    proposal: Proposal | None = None, rng: np.random.Generator | None = None,
) -> tuple[Completions, np.ndarray]:
    """``per_group`` completions of each group drawn from ``proposal`` (default: every cell alike),
    each weighted by 1 / its proposal probability, and the trees tied to the records."""
    groups, mult, used, domain, routed = _setup(forest, data, known, sensitive)
    rng = np.random.default_rng(0) if rng is None else rng
    counts = np.broadcast_to(np.asarray(per_group, dtype=np.int64), (groups.n_groups,)).copy()
    counts = np.maximum(counts, 1)
    total = int(counts.sum())
    proposal = Proposal.uniform(routed) if proposal is None else proposal
    cells = np.empty((total, len(routed)), dtype=np.intp)
    log_weight = np.zeros(total)
    for j, p in enumerate(proposal.probabilities):
        cells[:, j] = rng.choice(len(p), size=total, p=p)
        log_weight -= np.log(p[cells[:, j]])
    group_of = np.repeat(np.arange(groups.n_groups), counts)
    leaves = _leaves(forest, groups, group_of, routed, cells)
    start = np.r_[0, np.cumsum(counts)]
    c = Completions(groups, domain, routed, start, cells, leaves, log_weight, _sens(domain, routed, cells), _group_class(forest, groups), mult, False)
    return c, used


# -- the rows' coefficients per completion ----------------------------------------------------------


@dataclass
class Features:
    """Per kind of row, each completion's row in every tree of that kind (completions × trees,
    ``n_rows`` for none: the solvers append a row of zeros) and, for leaf values and covers, its coefficient there (α and h); ``mult``: the
    multiplicity with which each tree counts the completion's group (``None``: once each)."""

    rows: dict[str, np.ndarray]
    alpha: np.ndarray
    hessian: np.ndarray
    value_targets: np.ndarray
    mult: dict[str, np.ndarray] | None


def features(rows: CompletionRows, forest: Forest, leaves: np.ndarray, mult: np.ndarray | None = None) -> Features:
    """The coefficients of every row on each completion whose leaves (completions × trees) are
    given; ``mult``: per completion its multiplicity in every tree (``None``: all ones)."""
    out: dict[str, np.ndarray] = {}
    for kind in KINDS:
        t = rows.trees[kind]
        r = np.take_along_axis(rows.row_of_node[kind], leaves[:, t].T.astype(np.int64), axis=1).T if len(t) else np.zeros((len(leaves), 0), np.int64)
        out[kind] = np.ascontiguousarray(np.where(r >= 0, r, rows.n_rows))  # none: the appended row n_rows
    needs = np.union1d(rows.trees["values"], rows.trees["covers"])
    alpha = np.zeros((len(leaves), len(rows.trees["values"])))
    hessian = np.zeros((len(leaves), len(rows.trees["covers"])))
    if len(needs) and rows.step is not None:
        step = rows.step
        p = round_probabilities(forest, leaves, step.float32)
        h = step.hessian_scale * p * (1.0 - p)
        tv = rows.trees["values"]
        if len(tv):
            r = np.column_stack([leaf_values(forest.trees[t])[leaves[:, t]] for t in tv]) / step.learning_rate
            alpha = p[:, tv] + r * h[:, tv]
        hessian = h[:, rows.trees["covers"]]
    elif len(rows.trees["covers"]):
        raise DataError("covers without the model's Newton step cannot be tied to the records")
    m = None
    if mult is not None and not (mult == 1).all():
        m = {kind: mult[:, rows.trees[kind]].astype(float) for kind in KINDS}
    return Features(out, alpha, hessian, rows.targets[rows.trees["values"]], m)


def completion_features(rows: CompletionRows, forest: Forest, c: Completions) -> Features:
    """:func:`features` of ``c``'s completions, with their groups' multiplicities."""
    return features(rows, forest, c.leaves, c.multiplicity[c.group_of])


def row_values(rows: CompletionRows, f: Features, w: np.ndarray, sens: np.ndarray) -> np.ndarray:
    """Every row's value under the weights ``w`` (completions × classes: the share of the records
    each (completion, class) stands for): Σ w × the row's coefficient. ``sens``: each completion's
    sensitive cell (−1: the class is the sensitive column)."""
    n = rows.n_rows
    out = np.zeros(n + 2 * rows.n_classes + 1)  # the counts' rows of a missing leaf land past n
    total = w.sum(axis=1)
    m = f.mult or {}

    def put(kind: str, idx: np.ndarray, vals: np.ndarray) -> None:
        if kind in m:
            vals = vals * m[kind]
        out[:] += np.bincount(idx.ravel(), weights=vals.ravel(), minlength=len(out))[: len(out)]

    idx = f.rows["counts"]
    for c in range(w.shape[1]):
        if idx.shape[1]:
            put("counts", np.where(idx < n, idx + c, n), np.broadcast_to(w[:, c : c + 1], idx.shape))
    if f.rows["values"].shape[1]:
        put("values", f.rows["values"], w[:, f.value_targets] - total[:, None] * f.alpha)
    if f.rows["covers"].shape[1]:
        put("covers", f.rows["covers"], total[:, None] * f.hessian)
    if f.rows["sizes"].shape[1]:
        put("sizes", f.rows["sizes"], np.broadcast_to(total[:, None], f.rows["sizes"].shape))
    if rows.sa_row >= 0:
        if (sens >= 0).all():
            out[:n] += np.bincount(rows.sa_row + sens, weights=total, minlength=n)[:n]
        else:
            out[rows.sa_row : rows.sa_row + w.shape[1]] += w.sum(axis=0)
    return out[:n]


def truth_rows(rows: CompletionRows, forest: Forest, data: pd.DataFrame, mult: np.ndarray, sens: np.ndarray | None) -> np.ndarray:
    """Every row's value on the training records themselves (each record its own completion):
    ``mult`` records × trees, ``sens`` each record's sensitive cell (``None``: the class is sensitive)."""
    f = features(rows, forest, forest.apply(data).astype(np.int32), mult)
    y = encode_categories(data[forest.class_attribute], forest.classes)
    if (y < 0).any():
        raise DataError(f"column {forest.class_attribute!r}: a value is not one of the model's classes {list(forest.classes)}")
    w = np.zeros((len(data), rows.n_classes))
    w[np.arange(len(data)), y] = 1.0 / len(data)
    return row_values(rows, f, w, sens if sens is not None else y)


def check_truth_rows(rows: CompletionRows, values: np.ndarray) -> None:
    """The training records must meet every row up to its slack (else the table is not the training data)."""
    off = np.abs(values - rows.b) * rows.n_records
    bad = off > rows.slack
    if bad.any():
        r = int(np.argmax(off - rows.slack))
        raise DataError(
            f"the table contradicts what the model publishes: {rows.names[r]} is off by {off[r]:g} records on the "
            "table's own values (audit the model against the records it was trained on)"
        )


# -- completions stratified by the first tree's leaves ---------------------------------------------


def leaf_boxes(forest: Forest, t: int, components: Sequence[Component]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Tree ``t``'s leaves (node ids) and, per component, which of its cells each leaf's path
    allows (leaves × cells, boolean): cells are routed whole (:func:`_representatives`)."""
    from ppdm.tree.splits import ThresholdSplit

    tree = forest.trees[t]
    index = {c.name: j for j, c in enumerate(components)}
    reps = [_representatives(c) for c in components]
    masks: dict[int, list[np.ndarray]] = {tree.root.id: [np.ones(c.size, dtype=bool) for c in components]}
    leaves: list[int] = []
    out: list[list[np.ndarray]] = []
    for node in sorted(tree.nodes, key=lambda n: n.depth):
        mine = masks.pop(node.id)
        if node.split is None:
            leaves.append(node.id)
            out.append(mine)
            continue
        j = index.get(node.split.attribute)
        if j is None:  # pragma: no cover - every split attribute is a component
            raise DataError(f"tree {t} splits on {node.split.attribute!r}, which is not a column of the table")
        c = components[j]
        branch = node.split.branch(reps[j]) if isinstance(node.split, ThresholdSplit) else node.split.lookup(c.cells)[: c.size]
        for b, kid in enumerate(node.children):
            masks[kid] = [m & (branch == b) if i == j else m for i, m in enumerate(mine)]
    return np.array(leaves, dtype=np.intp), [np.array([o[j] for o in out]) for j in range(len(components))]


def stratified_completions(
    forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str, per_group: np.ndarray, rng: np.random.Generator,
    expand_sensitive: bool = False, proposal: Proposal | None = None,
) -> tuple[Completions, np.ndarray]:
    """Completions drawn leaf by leaf of the first tree: for every group and every first-tree leaf
    its known values can reach, at least one draw of the unknown split columns, uniform over the
    cells the leaf's path allows, with every sensitive cell the path allows; ``per_group`` draws
    in all per group spread over its leaves in proportion to their cells (``expand_sensitive``:
    every sensitive cell the path allows with every draw, else one drawn too). ``proposal``: the
    cells of each column drawn in proportion to it within the leaf's path (default: alike), each
    draw weighted by 1 / its probability (importance sampling). Each completion weighs
    the cells its draw stands for (the leaf's cells over its draws): the first tree's base measure
    is exact, leaf by leaf, whatever the sample."""
    from ppdm.maxent.table.forest_types import split_component

    groups, mult, used, domain, routed = _setup(forest, data, known, sensitive)
    knowns = [split_component(forest, n) for n in forest.split_attributes if n in set(known)]
    comps = [*routed, *knowns]
    leaf_ids, boxes = leaf_boxes(forest, 0, comps)
    reach = np.ones((groups.n_groups, len(leaf_ids)), dtype=bool)
    for j, kc in enumerate(knowns, len(routed)):
        reach &= boxes[j][:, kc.codes(groups.table[kc.name])].T
    sens_routed = domain.sensitive.role == "sensitive" and bool(routed) and routed[0].name == domain.sensitive.name
    others = list(range(1 if sens_routed and expand_sensitive else 0, len(routed)))
    volume = np.prod([boxes[j].sum(axis=1).astype(float) for j in others], axis=0) if others else np.ones(len(leaf_ids))
    n_sens = boxes[0].sum(axis=1) if sens_routed and expand_sensitive else np.ones(len(leaf_ids), dtype=np.int64)
    reach &= (volume > 0) & (n_sens > 0)
    q, leaf = np.nonzero(reach)
    share = (volume * n_sens)[leaf]
    share = share / np.bincount(q, weights=share, minlength=groups.n_groups)[q]
    draws = np.maximum(1, np.floor(share * np.asarray(per_group)[q] + rng.random(len(q)))).astype(np.int64)
    pair = np.repeat(np.arange(len(q)), draws)
    cells = np.zeros((len(pair), len(routed)), dtype=np.intp)
    log_weight = -np.log(draws[pair].astype(float))
    for j in others:
        p = np.ones(routed[j].size) if proposal is None else proposal.probabilities[j]
        allowed = boxes[j][leaf[pair]] * p[None, :]  # draws × cells: the proposal within the path
        z = allowed.sum(axis=1)
        pick = rng.random(len(pair)) * z
        cells[:, j] = np.minimum(np.argmax(np.cumsum(allowed, axis=1) > pick[:, None], axis=1), routed[j].size - 1)
        log_weight += np.log(z) - np.log(p[cells[:, j]])
    if sens_routed and expand_sensitive:  # every sensitive cell the leaf allows, for every draw
        s_ok = boxes[0][leaf[pair]]
        d, s = np.nonzero(s_ok)
        pair_d, cells, log_weight = pair[d], cells[d], log_weight[d]
        cells[:, 0] = s
    else:
        pair_d = pair
    order = np.argsort(q[pair_d], kind="stable")
    cells, log_weight, group_of = cells[order], log_weight[order], q[pair_d][order]
    leaves = _leaves(forest, groups, group_of, routed, cells)
    start = np.r_[0, np.cumsum(np.bincount(group_of, minlength=groups.n_groups))]
    c = Completions(groups, domain, routed, start, cells, leaves, log_weight, _sens(domain, routed, cells), _group_class(forest, groups), mult, False)
    return c, used


def _reference_cells(routed: Sequence[Component], reference: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each reference row's cell of every routed column and which rows have one in every column."""
    codes = np.column_stack([c.cell_codes(reference[c.name]) for c in routed]) if routed else np.zeros((len(reference), 0), dtype=np.intp)
    ok = np.asarray((codes >= 0).all(axis=1))
    return np.maximum(codes, 0), ok


def reference_completions(
    forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str, reference: pd.DataFrame, per_group: np.ndarray,
    rng: np.random.Generator, share: float = 0.5,
) -> tuple[Completions, np.ndarray]:
    """Each group's completions from a reference sample of the population: every distinct completion
    of the reference rows sharing the group's known values, weighed by its frequency there
    (``1 − share`` of the group's base measure), and the first tree's stratified draws
    (:func:`stratified_completions`, ``share`` of it, every cell the group reaches alike) so that
    no completion the rows allow is left out of reach. The base measure is then a defensive mixture
    (Hesterberg 1995) of the reference distribution and the counting measure."""
    strat, used = stratified_completions(forest, data, known, sensitive, per_group, rng)
    groups, routed = strat.groups, strat.routed
    missing = [c for c in [*known, *(r.name for r in routed)] if c not in reference.columns]
    if missing:
        raise DataError(f"the reference sample lacks column(s) {', '.join(map(repr, missing))}")
    cells_ref, ok = _reference_cells(routed, reference)
    keys = groups.table[list(known)].reset_index(drop=True).assign(__ppdm_group__=np.arange(groups.n_groups))
    ref = reference[list(known)].reset_index(drop=True).assign(__ppdm_row__=np.arange(len(reference)))[ok]
    pairs = ref.merge(keys, on=list(known), how="inner")
    g_ref, r_ref = pairs["__ppdm_group__"].to_numpy(np.intp), pairs["__ppdm_row__"].to_numpy(np.intp)
    joint, inverse, count = np.unique(np.column_stack([g_ref, cells_ref[r_ref]]), axis=0, return_inverse=True, return_counts=True)
    g_u = joint[:, 0].astype(np.intp) if len(joint) else np.zeros(0, dtype=np.intp)
    total = np.bincount(g_u, weights=count, minlength=groups.n_groups)
    has_ref = total > 0
    lw_ref = np.log(1 - share) + np.log(count) - np.log(np.maximum(total[g_u], 1.0))
    g_s = strat.group_of
    norm = np.log(np.maximum(np.bincount(g_s, weights=np.exp(strat.log_weight), minlength=groups.n_groups), 1e-300))
    lw_s = strat.log_weight - norm[g_s] + np.where(has_ref[g_s], np.log(share), 0.0)
    group_of = np.r_[g_s, g_u]
    cells = np.vstack([strat.cells, joint[:, 1:].astype(np.intp)]) if len(joint) else strat.cells
    log_weight = np.r_[lw_s, lw_ref]
    order = np.argsort(group_of, kind="stable")
    cells, log_weight, group_of = cells[order], log_weight[order], group_of[order]
    leaves = _leaves(forest, groups, group_of, routed, cells)
    start = np.r_[0, np.cumsum(np.bincount(group_of, minlength=groups.n_groups))]
    extra: dict[str, object] = {"reference_completions": int(len(joint)), "groups_without_reference": int((~has_ref).sum())}
    c = Completions(groups, strat.domain, routed, start, cells, leaves, log_weight, _sens(strat.domain, routed, cells), strat.group_class, strat.multiplicity, False, extra)
    return c, used
