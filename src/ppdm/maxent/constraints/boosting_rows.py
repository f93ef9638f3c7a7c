"""Every boosting round's leaf values as rows over the attacker's types.

A boosted model's round m fits its trees to the gradients at the scores of rounds 1…m−1
(:mod:`ppdm.tree.newton`): per leaf Λ of the tree of class k, with r = v/η and each record's
probability p and hessian h = s p (1 − p) before the round,

    Σ_{i ∈ Λ} m_i [y_i = k] = r λ + Σ_{i ∈ Λ} m_i (p_i + r h_i)          (Chen & Guestrin 2016, eq. 5)

A type of the attacker's table (:class:`~ppdm.maxent.table.forest_types.ForestTypes`: joint leaf,
class, sensitive cell) fixes the leaf of every tree, hence p and h: the leaf is the linear row
Σ_{t → Λ} m_t ([class_t = k] − α_t) P(t) = r λ / N with α = p + r h, coefficients known per type.

* **Class counts** (the insider's case). Where every block (joint leaf) the leaf holds is the only
  one its groups reach, the blocks' record counts n_b are decided and the row is the leaf's
  class-k count: Σ_{t → Λ, class k} m_t P(t) = (r λ + Σ_b m_b α_b n_b) / N, a whole number of
  records — an exact row both the maximum-entropy and the exact audit read. A leaf whose count
  does not come out whole (to the library's precision, :attr:`NewtonStep.tolerance`) shows the
  attacker that the round did not take this step over the table's records: the round is left out.
* **Leaf-value rows** otherwise: the real row, as the interval b ± τ/N (τ the library's
  precision times the records the leaf can hold), which the true records meet by construction.
* **Cover rows**: a published cover H_Λ = Σ m_i h_i (XGBoost's ``sum_hessian``, LightGBM's
  ``leaf_weight``) is checked where the blocks are decided and an interval row where not.

A round whose multiplicities are unknown (a file that does not say whether rows were subsampled:
an XGBoost model without its training configuration) is used, each record once, only when its
covers are checked: every leaf's cover equals the hessians of the table's records routed there.
Rounds after the first are left out, with the reason, when the model hides the step
(:func:`~ppdm.tree.newton.newton_step`) or the rows a tree was fitted on.

These rows need the joint table: a type fixes the leaf of *every* tree, hence the score before
each round. The estimate that reads the trees one at a time (the pooled estimate) cannot weigh a
round's leaf by its records' probabilities; :func:`rounds_read` gives its account of the rounds
it reads and why the others were not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ppdm.maxent.constraints.leaf_rows import Decide, check_decided
from ppdm.maxent.rows.problem import LinearBlock
from ppdm.maxent.table.forest_types import UNTIED, ForestTypes, RoundsUsed
from ppdm.tree.forest import Forest, leaf_values
from ppdm.tree.newton import NewtonStep, newton_step, round_probabilities, tree_rounds

#: Records by which a recomputed count or cover may always miss (besides the per-record tolerance).
ABSOLUTE = 0.05

#: The names of the blocks whose coefficients are real numbers (not whole counts).
REAL_ROWS = ("leaf-value tree ", "cover tree ")

#: Why a round's tree can not be tied to the records (unknown multiplicities, covers not checked).


@dataclass
class _Blocks:
    """What decides each block's records: ``fixed`` (records of groups reaching only it), whether
    any group reaching it reaches others (``open``), and the most records it can hold (``upper``)."""

    fixed: np.ndarray
    open: np.ndarray
    upper: np.ndarray

    @classmethod
    def of(cls, types: ForestTypes) -> _Blocks:
        reach = sp.csr_matrix(types.reach)
        counts = types.groups.counts.astype(float)
        degree = np.diff(reach.indptr)
        pinned = np.full(len(degree), -1) if types.known_group is None or types.true_type is None else np.where(
            types.known_group, types.true_type[types.groups.first_rows()], -1
        )
        single = (degree == 1) & (pinned < 0)
        block_of = np.where(pinned >= 0, types.type_block[np.maximum(pinned, 0)], reach.indices[reach.indptr[:-1]])
        fixed_group = single | (pinned >= 0)
        fixed = np.bincount(block_of[fixed_group], weights=counts[fixed_group], minlength=types.n_blocks)
        open_ = np.zeros(types.n_blocks, dtype=bool)
        loose = np.repeat(~fixed_group, degree)
        open_[reach.indices[loose]] = True
        upper = np.asarray(reach.T @ counts).ravel()
        return cls(fixed, open_, upper)


def rounds_read(forest: Forest, read: Iterable[int], why: str) -> RoundsUsed | None:
    """The account of a boosted ``forest``'s trees an estimate read (``read``) and, for each of the
    others, why not: the model's own reason when it hides its step (:func:`newton_step`), else
    ``why``; ``None`` for a forest that is not boosted."""
    if forest.combine != "additive":
        return None
    rounds = RoundsUsed(forest.n_trees, per_round=forest.n_outputs)
    rounds.used.extend(sorted({int(t) for t in read}))
    step = newton_step(forest)
    for t in sorted(set(range(forest.n_trees)) - set(rounds.used)):
        rounds.leave_out(t, step if isinstance(step, str) and t >= forest.n_outputs else why)
    return rounds


def boosting_rows(types: ForestTypes, decide: Decide) -> tuple[list[LinearBlock], RoundsUsed | None]:
    """The rows of every round of ``types.forest`` not already read as class counts, and which
    trees gave rows (see the module docstring); ``None`` for a forest that is not boosted."""
    forest = types.forest
    if forest.combine != "additive":
        return [], None
    rounds = RoundsUsed(forest.n_trees, per_round=forest.n_outputs)
    counted = [t for t in range(forest.n_trees) if types.used[t] and "class-counts" in forest.known[t]]
    rounds.used.extend(counted)
    rest = [t for t in range(forest.n_trees) if t not in set(counted)]
    step = newton_step(forest)
    round_of = tree_rounds(forest)
    if isinstance(step, str) or round_of is None:
        reason = step if isinstance(step, str) else "its trees are not one per class and round"
        for t in rest:
            rounds.leave_out(t, reason)
        return [], rounds
    p = round_probabilities(forest, types.block_leaves, step.float32)
    blocks = _Blocks.of(types)
    out: list[LinearBlock] = []
    first_round = round_of == 0
    for t in rest:
        if step.biased_first_round and first_round[t]:
            rounds.leave_out(t, "its leaf values also hold the starting score (boost_from_average), which the model does not store apart")
            continue
        built = _tree_rows(types, t, step, p[:, t], blocks, decide)
        if isinstance(built, str):
            rounds.leave_out(t, built)
        else:
            out.extend(built)
            rounds.used.append(t)
            if any(b.name.startswith(REAL_ROWS) for b in built):
                rounds.real.append(t)
    rounds.used.sort()
    return out, rounds


def _tree_rows(types: ForestTypes, t: int, step: NewtonStep, p: np.ndarray, blocks: _Blocks, decide: Decide) -> list[LinearBlock] | str:
    """Tree ``t``'s rows, or why the tree gives none. ``p``: per block, the probability of the
    tree's class before its round."""
    forest, tree = types.forest, types.forest.trees[t]
    leaf = types.block_leaves[:, t]
    tied = bool(types.used[t])
    m = types.block_weight[:, t].astype(float) if tied else np.ones(types.n_blocks)
    live = m > 0
    h = step.hessian_scale * p * (1.0 - p)
    r = leaf_values(tree)[leaf] / step.learning_rate
    alpha = p + r * h
    n_nodes = tree.n_nodes
    decided = ~np.bincount(leaf, weights=(blocks.open & live).astype(float), minlength=n_nodes).astype(bool)
    upper = np.bincount(leaf, weights=m * blocks.upper, minlength=n_nodes)
    tol = ABSOLUTE + step.tolerance * upper
    reached = np.unique(leaf[live])
    covers = np.array([np.nan if n.cover is None else n.cover for n in tree.nodes]) if "cover" in forest.known[t] else None
    if covers is not None:
        held = np.bincount(leaf, weights=m * h * blocks.fixed, minlength=n_nodes)
        off = np.abs(held - covers)[reached]
        if (decided[reached] & (off > tol[reached])).any():
            return "its covers are not the hessians of the table's records (rows subsampled or weighted)"
        tied = tied or bool(decided[reached].all())
    if not tied:
        return UNTIED
    target = 1 if forest.link == "logistic" else int(forest.outputs[t])
    count = step.l2 * leaf_values(tree) / step.learning_rate + np.bincount(leaf, weights=m * alpha * blocks.fixed, minlength=n_nodes)
    if step.min_hessian > 0:  # a leaf valued exactly 0 may be one whose hessian sum fell below the floor: no row
        reached = reached[leaf_values(tree)[reached] != 0.0]
    exact = decided[reached]
    whole = np.rint(count[reached])
    size = np.bincount(leaf, weights=m * blocks.fixed, minlength=n_nodes)[reached]
    if (exact & ((np.abs(count[reached] - whole) > tol[reached]) | (whole < 0) | (whole > size + 0.5))).any():
        return "its leaf values are not a Newton step over whole class counts of the table's records"
    out = [_counts(types, t, target, reached[exact], whole[exact], m, decide)]
    if not exact.all():
        out.append(_leaf_values(types, t, target, reached[~exact], m, alpha, step.l2 * r, tol))
        if covers is not None:
            out.append(_covers(types, t, reached[~exact], m, h, covers, tol))
    return [b for b in out if b.n_rows]


def _counts(types: ForestTypes, t: int, target: int, leaves: np.ndarray, counts: np.ndarray, m: np.ndarray, decide: Decide) -> LinearBlock:
    """Σ_{types → Λ, class k} m P = count / N per leaf Λ whose blocks are all decided; rows the
    groups alone decide (the class known) are checked and dropped."""
    forest, n = types.forest, types.groups.n_records
    row_of = _rows_of(forest.trees[t].n_nodes, leaves)
    b = types.type_block
    cols = np.flatnonzero((row_of[types.block_leaves[b, t]] >= 0) & (types.type_class == target) & (m[b] > 0))
    A = sp.csr_matrix((m[b[cols]], (row_of[types.block_leaves[b[cols], t]], cols)), shape=(len(leaves), types.n_types))
    cls = forest.classes[target]
    names = [f"count(tree {t} leaf {i}, {cls}) = {c:g} (leaf value)" for i, c in zip(leaves.tolist(), counts)]
    block = LinearBlock(f"round-count tree {t}", A, counts / n, "eq", names)
    constant, value = decide(block.A)
    if not constant.any():
        return block
    check_decided(block, constant, value, n, "forest")
    keep = np.flatnonzero(~constant)
    return LinearBlock(block.name, block.A[keep], block.b[keep], "eq", [names[i] for i in keep])


def _leaf_values(
    types: ForestTypes, t: int, target: int, leaves: np.ndarray, m: np.ndarray, alpha: np.ndarray, rhs: np.ndarray, tol: np.ndarray,
) -> LinearBlock:
    """b − τ ≤ Σ_{t → Λ} m ([class = k] − α) P ≤ b + τ (over N) per leaf Λ some group may or may
    not land in: two ≤ rows per leaf."""
    n = types.groups.n_records
    row_of = _rows_of(types.forest.trees[t].n_nodes, leaves)
    b = types.type_block
    cols = np.flatnonzero((row_of[types.block_leaves[b, t]] >= 0) & (m[b] > 0))
    coef = m[b[cols]] * ((types.type_class[cols] == target) - alpha[b[cols]])
    rows = row_of[types.block_leaves[b[cols], t]]
    leaf_rhs = np.zeros(types.forest.trees[t].n_nodes)
    leaf_rhs[types.block_leaves[:, t]] = rhs
    names = [f"leaf value(tree {t} leaf {i})" for i in leaves.tolist()]
    return _interval(f"leaf-value tree {t}", rows, cols, coef, len(leaves), types.n_types, leaf_rhs[leaves] / n, tol[leaves] / n, names)


def _covers(types: ForestTypes, t: int, leaves: np.ndarray, m: np.ndarray, h: np.ndarray, covers: np.ndarray, tol: np.ndarray) -> LinearBlock:
    """H_Λ − τ ≤ Σ_{t → Λ} m h P · N ≤ H_Λ + τ per leaf Λ whose records are not decided."""
    n = types.groups.n_records
    row_of = _rows_of(types.forest.trees[t].n_nodes, leaves)
    b = types.type_block
    cols = np.flatnonzero((row_of[types.block_leaves[b, t]] >= 0) & (m[b] > 0))
    rows = row_of[types.block_leaves[b[cols], t]]
    names = [f"cover(tree {t} leaf {i}) = {covers[i]:.6g}" for i in leaves.tolist()]
    return _interval(f"cover tree {t}", rows, cols, m[b[cols]] * h[b[cols]], len(leaves), types.n_types, covers[leaves] / n, tol[leaves] / n, names)


def _interval(
    name: str, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n_rows: int, n_var: int, b: np.ndarray, tol: np.ndarray, names: list[str],
) -> LinearBlock:
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, n_var))
    both = sp.vstack([A, -A], format="csr")
    labels = [f"{x} ≤ {v:.9g}" for x, v in zip(names, (b + tol))] + [f"{x} ≥ {v:.9g}" for x, v in zip(names, (b - tol))]
    return LinearBlock(name, both, np.concatenate([b + tol, -(b - tol)]), "le", labels)


def _rows_of(n_nodes: int, leaves: np.ndarray) -> np.ndarray:
    out = np.full(n_nodes, -1)
    out[leaves] = np.arange(len(leaves))
    return out
