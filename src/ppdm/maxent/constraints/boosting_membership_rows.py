"""Every boosting round's leaf values and covers as membership rows (issue 45).

The membership attacker knows every candidate's whole record, so for every round m they compute
each candidate's score before the round from the published model itself, hence its probability
``p_i`` of the tree's class k and its hessian ``h_i = s p_i (1 − p_i)`` (:mod:`ppdm.tree.newton`:
``s`` the library's hessian scale). Round m was fitted to the members' gradients at those scores
(Friedman 2001; Chen & Guestrin, *XGBoost*, KDD 2016, eq. 5), so with ``r = v/η`` per leaf (``v``
its value, ``η`` the learning rate, ``λ`` the L2 penalty) and ``α_i = p_i + r h_i``:

* **leaf value**: ``Σ_{i → leaf} b_i ([y_i = k] − α_i) = r λ`` — a row over the membership bits
  with real coefficients, known per candidate when the class is known and the population holds
  every member (a member outside it would add an unknown term: no row otherwise);
* **cover** (XGBoost's ``sum_hessian``, LightGBM's ``leaf_weight``): ``Σ_{i → leaf} b_i h_i = H``,
  an equality over a complete population, an upper bound (``h ≥ 0``) over an incomplete one.

Each is an interval row ``lo ≤ A b ≤ hi`` widened by the library's precision
(:data:`~ppdm.maxent.constraints.boosting_rows.ABSOLUTE` plus :attr:`NewtonStep.tolerance` per
candidate reaching the leaf, the margins the attribute audit's rows take), so the true members
meet it. Read only in rounds that count every training row once (``mode == "once"``) and whose
model says how its leaf values were computed (:func:`~ppdm.tree.newton.newton_step`); a first
round whose class counts are published already gives the exact rows of
:mod:`ppdm.maxent.constraints.membership_rows` (its value and cover add nothing); a first round
whose values hold the starting score (LightGBM's ``boost_from_average``) gives none (the scores
before it are that hidden score; the rounds after read it from the first round's values), and a
leaf valued exactly 0 under XGBoost's ``min_child_weight`` floor no value row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ppdm.maxent.constraints.boosting_rows import ABSOLUTE
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest, as_forest, leaf_values
from ppdm.tree.model import Tree
from ppdm.tree.newton import NewtonStep, newton_step, round_probabilities, tree_rounds

__all__ = ["COVER", "LEAF_VALUE", "RealRows", "boosting_membership_rows"]

#: The ``cell`` codes of the real rows: a leaf value's (gradient) row and a cover's (hessian) row.
LEAF_VALUE, COVER = -4, -5


@dataclass
class RealRows:
    """Interval rows ``lo ≤ A b ≤ hi`` with real coefficients, what each is (``tree``, ``leaf``
    node id, ``cell``: :data:`LEAF_VALUE` or :data:`COVER`), and per tree read what its rows are."""

    A: sp.csr_matrix
    lo: np.ndarray
    hi: np.ndarray
    tree: np.ndarray
    leaf: np.ndarray
    cell: np.ndarray
    kinds: dict[int, str]


def boosting_membership_rows(
    model: Tree | Forest, leaves: np.ndarray, codes: np.ndarray | None, once: list[bool], complete: bool,
) -> RealRows | None:
    """The leaf-value and cover rows of ``forest``'s rounds over the candidates (module docstring).

    ``leaves``: candidates × trees, the leaf each reaches; ``codes``: each candidate's class index
    (``None``: the class unknown, covers only); ``once[t]``: tree ``t`` counts every training row
    once. ``None`` when the model is not boosted (a tree, a voting forest) or hides its step.
    """
    if model.combine != "additive":
        return None
    forest = as_forest(model)
    step, round_of = newton_step(forest), tree_rounds(forest)
    if isinstance(step, str) or round_of is None:
        return None
    first = round_of == 0
    p = round_probabilities(forest, leaves, step.float32)
    parts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]] = []
    kinds: dict[int, str] = {}
    for t, tree in enumerate(forest.trees):
        if not once[t] or tree.disclosure is Disclosure.CLASS_COUNTS or (step.biased_first_round and first[t]):
            continue  # a biased first round's scores before it are the starting score the model does not store
        made = _tree_rows(forest, t, step, p[:, t], leaves[:, t], codes, complete)
        if made:
            parts.extend(made)
            kinds[t] = " and ".join(sorted({"leaf values" if m[6] == LEAF_VALUE else "covers" for m in made})) + " (real coefficients)"
    if not parts:
        return None
    return _stacked(parts, len(leaves), kinds)


def _tree_rows(
    forest: Forest, t: int, step: NewtonStep, p: np.ndarray, leaf: np.ndarray, codes: np.ndarray | None, complete: bool,
) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]]:
    """Tree ``t``'s rows as (tree, leaf ids, each candidate's row index, coefficients, lo, hi, cell)."""
    tree = forest.trees[t]
    values = leaf_values(tree)
    reached, row = np.unique(leaf, return_inverse=True)
    reach = np.bincount(row, minlength=len(reached)).astype(float)
    tol = ABSOLUTE + step.tolerance * reach
    h = step.hessian_scale * p * (1.0 - p)
    out = []
    if codes is not None and complete:
        k = 1 if forest.link == "logistic" else int(forest.outputs[t])
        r = values[leaf] / step.learning_rate
        coef = (codes == k) - (p + r * h)
        target = step.l2 * values[reached] / step.learning_rate
        keep = values[reached] != 0.0 if step.min_hessian > 0 else np.ones(len(reached), dtype=bool)
        out.append(_kept(t, reached, row, coef, target - tol, target + tol, LEAF_VALUE, keep))
    if "cover" in forest.known[t]:
        cover = np.array([np.nan if n.cover is None else n.cover for n in tree.nodes])[reached]
        keep = np.isfinite(cover)
        lo = np.where(keep, cover - tol, 0.0) if complete else np.zeros(len(reached))
        out.append(_kept(t, reached, row, h, lo, np.nan_to_num(cover) + tol, COVER, keep))
    return [o for o in out if len(o[1])]


def _kept(
    t: int, reached: np.ndarray, row: np.ndarray, coef: np.ndarray, lo: np.ndarray, hi: np.ndarray, cell: int, keep: np.ndarray,
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The rows of the ``keep`` leaves only, renumbered (a candidate of a dropped leaf gets -1)."""
    renumber = np.where(keep, np.cumsum(keep) - 1, -1)
    return t, reached[keep], renumber[row], coef, lo[keep], hi[keep], cell


def _stacked(parts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]], n: int, kinds: dict[int, str]) -> RealRows:
    mats, los, his, trees, leaf_ids, cells = [], [], [], [], [], []
    for t, ids, row, coef, lo, hi, cell in parts:
        on = row >= 0
        mats.append(sp.csr_matrix((coef[on], (row[on], np.flatnonzero(on))), shape=(len(ids), n)))
        los.append(lo)
        his.append(hi)
        trees.append(np.full(len(ids), t))
        leaf_ids.append(ids)
        cells.append(np.full(len(ids), cell))
    A = sp.vstack(mats, format="csr")
    A.eliminate_zeros()
    lo_all, hi_all, tree_of, leaf_of, cell_of = (np.concatenate(v) for v in (los, his, trees, leaf_ids, cells))
    return RealRows(A, lo_all, hi_all, tree_of, leaf_of, cell_of, kinds)
