"""What a published regressor says about its training targets: one linear row per leaf and tree.

A regressor's leaf values are linear in the targets y of the records routed to the leaf, each
with its multiplicity m_i in the tree (:mod:`ppdm.tree.regression`):

* a regression tree or a tree of a random forest (``"mean"``) publishes the leaf's mean target
  and its (weighted) rows N, so ``Σ_{i ∈ Λ} m_i y_i = v N``;
* round m of a squared-error boosted model (``"additive"``, ``"identity"`` link) publishes
  ``v = −η Σ m_i (F_{m−1}(x_i) − y_i) / (N + λ)`` (Friedman 2001, LS_Boost; Chen & Guestrin 2016,
  eq. 5 with hessian 1), so with ``r = v/η``

      Σ_{i ∈ Λ} m_i y_i = Σ_{i ∈ Λ} m_i F_{m−1}(x_i) + r (N + λ).

``F_{m−1}(x_i)``, the record's score before round m, is the base score plus the values of the
leaves it reaches in rounds 1…m−1: anyone who knows the record's inputs computes it (in float32
where the library does: XGBoost). LightGBM adds the starting score b (the mean target,
``boost_from_average``) to the first round's leaves and does not store it; the first round's rows
sum to ``n b``, which gives ``b = Σ_Λ v_Λ (N_Λ + λ) / Σ_Λ (N_Λ + λ)`` from the leaves alone.

Each row is kept as the interval ``b ± τ``, τ the library's precision
(:attr:`~ppdm.tree.newton.NewtonStep.tolerance`, relative) times the magnitudes it multiplies
(``Σ m_i (|F_i| + M) + |r| (N + λ)``, M the largest target magnitude of the domain): the true
targets meet every row.

The attacker's knowledge decides which rows are known. A record's leaf in a tree is known when
its path splits on known columns only; a leaf that a record of undecided path may reach gives no
row (its member set is unknown), nor does a boosting leaf holding a record whose earlier leaves
are undecided (its score, hence the row's constant, is unknown). Leaving rows out is sound: fewer
rows, wider intervals, never a false one. A tree whose rows the model does not tie to the
records (unknown multiplicities) or whose step it hides is left out, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.errors import DataError
from ppdm.maxent.table.forest_types import UNTIED, RoundsUsed
from ppdm.tree.forest import Forest, as_forest, leaf_values
from ppdm.tree.forest_check import weights_of
from ppdm.tree.model import Tree
from ppdm.tree.newton import FLOAT64_TOLERANCE, NewtonStep, newton_step

#: Absolute slack of every row beside the relative precision (float noise in the sums themselves).
ABSOLUTE = 1e-9


@dataclass
class TargetRows:
    """Rows ``lower ≤ A y ≤ upper`` over the records' targets (``A``: rows × records, entries m_i ≥ 0).

    ``tree`` and ``leaf`` name each row's tree and leaf (node id); ``rounds`` which trees gave
    rows and why the others did not; ``decided`` per record whether its leaf is known in every tree.
    """

    matrix: sp.csr_matrix
    lower: np.ndarray
    upper: np.ndarray
    tree: np.ndarray
    leaf: np.ndarray
    rounds: RoundsUsed
    decided: np.ndarray
    notes: list[str] = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return int(self.matrix.shape[0])

    def violations(self, y: np.ndarray) -> np.ndarray:
        """How far ``A y`` falls outside each row's interval (0 where met)."""
        ay = self.matrix @ y
        return np.maximum(self.lower - ay, 0.0) + np.maximum(ay - self.upper, 0.0)


def target_rows(model: Tree | Forest, table: pd.DataFrame, known: Sequence[str], magnitude: float) -> TargetRows:
    """The rows every tree of the regressor ``model`` publishes over ``table``'s targets, for an
    attacker who knows the columns ``known`` of every record (module docstring).

    ``magnitude``: the largest |y| of the targets' domain (scales each row's float precision).
    Rows whose records' leaves disagree with the model's row counts show that ``table`` is not
    the training data: a :class:`DataError` names the tree and leaf.
    """
    forest = as_forest(model)
    n = len(table)
    leaves, poisoned = known_leaves(forest, table, known)
    additive = forest.combine == "additive"
    step: NewtonStep | str = newton_step(forest) if additive else NewtonStep(1.0, 0.0, 1.0, tolerance=FLOAT64_TOLERANCE)
    rounds = RoundsUsed(forest.n_trees)
    values = [leaf_values(t) for t in forest.trees]
    scores = _scores_before(forest, leaves, values, step) if additive and isinstance(step, NewtonStep) else None
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    offset = 0
    for t, tree in enumerate(forest.trees):
        if isinstance(step, str):
            rounds.leave_out(t, step)
            continue
        weights = weights_of(forest, t, n)
        if weights is None:
            rounds.leave_out(t, UNTIED)
            continue
        bias = scores[0, 0] if scores is not None and t == 0 and step.biased_first_round and len(scores) else 0.0
        built = _tree_rows(forest, t, tree, leaves[:, t], poisoned[t], weights, values[t] - bias, step, scores, magnitude)
        if built is None:
            rounds.leave_out(t, "no leaf's records are decided by the known columns")
            continue
        rounds.used.append(t)
        parts.append((built[0] + offset, *built[1:]))
        offset += len(built[3])
    if parts:
        rows, cols, data, b, tol, where = (np.concatenate(p) for p in zip(*parts))
    else:
        rows = cols = where = np.zeros(0, dtype=np.intp)
        data = b = tol = np.zeros(0)
    n_rows = len(b)
    matrix = sp.csr_matrix((data, (rows, cols)), shape=(n_rows, n))
    tree_of = np.concatenate([np.full(len(p[3]), t) for t, p in zip(rounds.used, parts)]) if parts else np.zeros(0, dtype=np.intp)
    decided = np.asarray((leaves >= 0).all(axis=1))
    return TargetRows(matrix, b - tol, b + tol, tree_of.astype(np.intp), where.astype(np.intp), rounds, decided)


def known_leaves(forest: Forest, table: pd.DataFrame, known: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per record and tree the leaf the known columns send it to (-1: undecided), and per tree
    the leaves a record of undecided path may reach (a boolean mask over node ids)."""
    used = [a for a in forest.split_attributes if a in set(known)]
    encoded = forest.encode(table[used]) if len(used) == len(forest.split_attributes) else _encode_known(forest, table, used)
    n = len(table)
    out = np.full((n, forest.n_trees), -1, dtype=np.intp)
    poisoned = []
    for t, tree in enumerate(forest.trees):
        out[:, t], mask = _route_known(tree, encoded, n)
        poisoned.append(mask)
    return out, poisoned


def _encode_known(forest: Forest, table: pd.DataFrame, used: Sequence[str]) -> dict[str, np.ndarray]:
    from ppdm.tree.model import encode_columns

    return encode_columns(table, forest.attributes, used, "forest")


def _route_known(tree: Tree, encoded: Mapping[str, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each record's leaf when its path splits on known columns only (-1 otherwise), and the
    leaves under a split on an unknown column that some record reaches."""
    leaf = np.full(n, -1, dtype=np.intp)
    poisoned = np.zeros(tree.n_nodes, dtype=bool)
    stack: list[tuple[int, np.ndarray]] = [(0, np.arange(n))]
    while stack:
        node_id, rows = stack.pop()
        node = tree.nodes[node_id]
        if node.is_leaf:
            leaf[rows] = node_id
            continue
        assert node.split is not None
        if node.split.attribute not in encoded:
            if len(rows):
                poisoned[node_id] = True
                for d in tree.descendants(node_id):
                    poisoned[d.id] = True
            continue
        if not len(rows):
            continue
        branch = tree.branch_of(node.split, encoded[node.split.attribute][rows])
        for b, child in enumerate(node.children):
            stack.append((child, rows[branch == b]))
    return leaf, poisoned


def _scores_before(forest: Forest, leaves: np.ndarray, values: Sequence[np.ndarray], step: NewtonStep) -> np.ndarray:
    """Each record's raw score before every round (records × trees; NaN once a leaf is undecided),
    in float32 where the library keeps its scores so."""
    n = len(leaves)
    dtype: type[np.floating] = np.float32 if step.float32 else np.float64
    start = np.full(n, forest.base_score[0], dtype=dtype)
    if step.biased_first_round:
        start[:] = _starting_score(forest.trees[0], values[0], step)
    per_tree = np.empty(leaves.shape, dtype=dtype)
    for t, v in enumerate(values):
        per_tree[:, t] = np.where(leaves[:, t] >= 0, v.astype(dtype)[np.maximum(leaves[:, t], 0)], np.nan)
    before = np.cumsum(np.concatenate([np.asarray(forest.base_score, dtype=dtype)[None].repeat(n, 0), per_tree[:, :-1]], axis=1), axis=1, dtype=dtype)
    if step.biased_first_round:
        before[:, 0] = start  # LightGBM's first round starts from b, which its leaves then hold
    return before.astype(float)


def _starting_score(tree: Tree, values: np.ndarray, step: NewtonStep) -> float:
    """LightGBM's starting score b from its first tree's leaves (module docstring)."""
    ids = [leaf.id for leaf in tree.leaves()]
    n = np.array([tree.nodes[i].n_samples or 0.0 for i in ids]) + step.l2
    return float(values[ids] @ n / n.sum())


def _tree_rows(
    forest: Forest, t: int, tree: Tree, leaf: np.ndarray, poisoned: np.ndarray, weights: np.ndarray, values: np.ndarray,
    step: NewtonStep, scores: np.ndarray | None, magnitude: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:  # fmt: skip
    """Tree ``t``'s rows as coordinates (row, record, m), constants, tolerances and leaf ids."""
    ids = np.array([node.id for node in tree.leaves()], dtype=np.intp)
    published = np.array([np.nan if tree.nodes[i].n_samples is None else float(tree.nodes[i].n_samples) for i in ids])
    member = leaf >= 0
    if scores is not None:
        member &= ~np.isnan(scores[:, t])
    position = np.full(tree.n_nodes, -1, dtype=np.intp)
    position[ids] = np.arange(len(ids))
    at = np.where(leaf >= 0, position[np.maximum(leaf, 0)], -1)
    # a leaf is usable when no record of undecided path (or score) can be among its rows
    usable = ~poisoned[ids]
    unsure = (leaf >= 0) & ~member & (weights > 0)
    usable[np.unique(at[unsure])] = False
    rows_here = np.bincount(at[member], weights=weights[member], minlength=len(ids))
    missing = np.isnan(published)
    routed = usable & ~missing & (np.abs(rows_here - published) > 1e-6 * np.maximum(published, 1.0))
    if routed.any():
        j = int(np.flatnonzero(routed)[0])
        raise DataError(
            f"tree {t}, leaf {int(ids[j])}: the model records {published[j]:g} training row(s) there, the table's records "
            f"route {rows_here[j]:g}: audit the rows the model was fitted on, in its order"
        )
    usable &= ~missing
    if forest.combine == "additive" and step.min_hessian > 0:  # valued exactly 0: maybe below the hessian floor, no step
        usable &= values[ids] != 0.0
    if not usable.any():
        return None
    take = member & (weights > 0) & usable[np.maximum(at, 0)] & (at >= 0)
    records = np.flatnonzero(take)
    row_of = np.cumsum(usable) - 1
    m = weights[records].astype(float)
    v = values[ids]
    size = published
    if forest.combine == "additive":
        assert scores is not None
        r = v / step.learning_rate
        f = scores[records, t]
        known_part = np.bincount(at[records], weights=m * f, minlength=len(ids))
        scale_part = np.bincount(at[records], weights=m * (np.abs(f) + magnitude), minlength=len(ids))
        b = known_part + r * (size + step.l2)
        tol = step.tolerance * (scale_part + np.abs(r) * (size + step.l2))
    else:
        b = v * size
        tol = step.tolerance * size * (magnitude + np.abs(v))
    tol = tol + ABSOLUTE * np.maximum(1.0, np.abs(b))
    keep = np.flatnonzero(usable)
    return row_of[at[records]], records, m, b[keep], tol[keep], ids[keep]
