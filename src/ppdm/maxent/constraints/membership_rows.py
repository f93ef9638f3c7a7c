"""Membership rows: what a published tree or forest's counts say about *who* was trained on.

The attacker holds a population of candidates (issue 27), each with the record they know of it,
and an unknown membership bit ``b_i``. A published leaf count counts the members that reach the
leaf (with their multiplicity), so every count is a linear row over the bits:

* a tree that holds every training row once (a single tree, a forest fitted without bootstrap,
  a boosting round fitted on every row): the members reaching leaf ``l`` with class ``k`` number
  exactly the leaf's count ``c_lk`` — ``Σ_{i reaches (l, k)} b_i = c_lk`` — when the population
  holds every training record (``complete``), and at most ``c_lk`` otherwise; a tree pruned by
  paper 003's Method 1 deletes the ``R`` records of its removed leaves from its counts, yet they
  still reach some leaf (their sibling's), so ``c_lk ≤ Σ b_i ≤ c_lk + R``;
* a bagged tree (bootstrap multiplicities ``m``, redrawn from the tree's seed as
  :mod:`ppdm.tree.sklearn_forest` does; which member holds which draw is unknown): a leaf
  cell's weighted count ``W`` is the sum of its drawn members' multiplicities, so at least
  ``L(W)`` members reach it, the fewest of the tree's multiplicities (largest first) that add up
  to ``W``; at most ``W`` of them were drawn and the tree's ``n − D`` undrawn members may be
  anywhere, so at most ``W + n − D`` reach it. Every member was drawn by at least ``r`` trees
  (the fewest trees any training position was drawn by): a candidate whose cells are empty in
  more than ``T − r`` bagged trees is no member (:attr:`MembershipRows.positive_trees`).
  For the estimate a bagged cell also gives a *soft* row: a member's multiplicity has mean 1
  (the draws sum to ``n``), so ``E[Σ b_i] ≈ W`` with variance ``≈ W`` (maximum entropy with
  Gaussian-penalised rows, Dudík, Phillips & Schapire, COLT 2004 §3; Chen & Rosenfeld 2000).

Cells: with the class known (the attacker knows every candidate's full record), a leaf's class
counts give one row per (leaf, class); with error rates only, the label's count and the others';
with the class unknown, or sample counts only, one row per leaf. A tree publishing labels only
gives none. The population's size row ``Σ b_i = n`` (the training size the model publishes)
closes the system. A boosted model's rounds also give rows with real coefficients, from the
candidates' gradients and hessians at the scores of the rounds before
(:mod:`ppdm.maxent.constraints.boosting_membership_rows`). The truth satisfies every row
(``truth_violations``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.defaults import WHOLE
from ppdm.errors import DataError, advising
from ppdm.maxent.constraints.boosting_membership_rows import boosting_membership_rows
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

__all__ = ["MembershipRows", "Mode", "column_patterns", "membership_rows", "tree_modes"]

#: How a tree counts the training rows: each once, with bootstrap multiplicities, or unknown.
Mode = Literal["once", "bootstrap", "unknown"]



@dataclass
class MembershipRows:
    """The sparse rows ``lo <= A b <= hi`` over the candidates' membership bits (rows × candidates,
    coefficients 0/1 but in a boosting round's leaf-value and cover rows, whose coefficients are
    the candidates' gradients and hessians, :mod:`ppdm.maxent.constraints.boosting_membership_rows`),
    what each row is (``tree``, ``leaf`` node id, ``cell``: the class code, ``-1`` for a whole
    leaf, ``-2`` for "not the label", ``-3`` for the population's size row, ``-4`` for a leaf
    value's row, ``-5`` for a cover's), and a bagged tree's soft target per row (``target``, NaN
    for none, and its ``variance``). A tree's 0/1 rows share no candidate.

    ``positive_trees[i]``: in how many bagged trees candidate ``i``'s cell has a positive count;
    ``min_drawn``: every member was drawn by at least this many of them (0 without bagged trees), a
    property of the forest's draws that holds whatever the pool of candidates holds: a member is
    in its leaf, with a positive count, in every tree that drew it.
    ``modes[t]``: how tree ``t`` counts the rows; ``n_members``: the training size published;
    ``count``: each row's published count (a cell's records, a bagged cell's draws; NaN for the
    size row and a round's real rows), which the bounds ``lo``/``hi`` may no longer state.
    """

    A: sp.csr_matrix
    lo: np.ndarray
    hi: np.ndarray
    tree: np.ndarray
    leaf: np.ndarray
    cell: np.ndarray
    target: np.ndarray
    variance: np.ndarray
    positive_trees: np.ndarray
    min_drawn: int
    modes: list[Mode]
    n_members: int
    complete: bool
    cells_per_tree: dict[int, str] = field(default_factory=dict)
    count: np.ndarray | None = None

    @property
    def n_candidates(self) -> int:
        return int(self.A.shape[1])

    @property
    def n_rows(self) -> int:
        return int(self.A.shape[0])

    @property
    def real(self) -> bool:
        """Whether some row's coefficients are real numbers (a boosting round's gradients or hessians)."""
        return bool((self.cell <= -4).any())

    def truth_violations(self, truth: np.ndarray) -> np.ndarray:
        """Rows the membership vector ``truth`` breaks (indices): none when the model was trained
        on exactly the members (habit 1: the truth is feasible)."""
        x = self.A @ truth.astype(float)
        return np.flatnonzero((x < self.lo - WHOLE) | (x > self.hi + WHOLE))


def tree_modes(model: Tree | Forest) -> tuple[list[Mode], int]:
    """How each tree counts the training rows (see the module docstring) and the training size ``n``.

    A single tree holds every row once (its root counts them all, plus what pruning removed); a
    forest's recorded multiplicities decide (all ones: once); without them, a tree whose root holds
    ``n`` rows holds each once (boosting samples without replacement), otherwise it is left out.
    """
    if isinstance(model, Tree):
        n = model.n_training_records
        if n is None:
            raise DataError("the tree publishes labels only: no count says who was trained on it")
        return ["once"], int(round(n))
    n_rec = model.n_records
    roots = [t.root.n_samples for t in model.trees]
    if n_rec is None:
        counted = [r for r in roots if r is not None]
        if not counted:
            raise DataError("no tree of the forest publishes a count: nothing says who was trained on it")
        n_rec = int(round(max(counted)))
    modes: list[Mode] = []
    for m, root in zip(model.multiplicities, roots):
        if m is not None:
            modes.append("once" if (m == 1).all() else "bootstrap")
        elif root is not None and abs(root - n_rec) <= WHOLE * max(n_rec, 1):
            modes.append("once")
        else:
            modes.append("unknown")
    return modes, int(n_rec)


def membership_rows(model: Tree | Forest, population: pd.DataFrame, class_known: bool, complete: bool = True, *, rounds: bool = True) -> MembershipRows:
    """The membership rows of ``model`` over ``population``'s candidates (see the module docstring).

    ``population`` holds every column the model splits on (and the class column when
    ``class_known``); ``complete``: it holds every training record (else counts bound from above only);
    ``rounds``: a boosted model's leaf values and covers give rows too (real coefficients).
    """
    modes, n = tree_modes(model)
    trees = model.trees
    codes = _class_codes(model, population) if class_known else None
    leaves = model.apply_all(population)
    N = len(population)
    blocks: list[_Block] = []
    bagged = [t for t, mode in enumerate(modes) if mode == "bootstrap"]
    positive = np.zeros(N, dtype=np.int64)
    described: dict[int, str] = {}
    for t, tree in enumerate(trees):
        if modes[t] == "unknown":
            continue
        cells = _cells(tree, codes)
        if cells is None:
            continue
        count, of_cell, cell_code, kind = cells
        described[t] = kind
        node_cell = of_cell(leaves[:, t])  # each candidate's cell index into count
        reach = np.bincount(node_cell, minlength=len(count))
        published = count > WHOLE
        if modes[t] == "once":
            removed = round(float(getattr(tree, "removed_records", 0.0) or 0.0))
            if complete and (count > reach + WHOLE).any():
                at = int(np.argmax(count - reach))
                raise incomplete_population(
                    f"tree {t} leaf {cell_code[at][0]} counts {count[at]:g} training records{_cell_words(cell_code[at][1], model)} but only "
                    f"{reach[at]} candidates reach it"
                )
            used = (reach > 0) | published
            lo = np.round(count) if complete else np.zeros(len(count))
            hi = np.round(count) + removed  # Method 1's removed records reach some cell uncounted
            blocks.append(_Block(t, node_cell, used, lo, hi, cell_code, None, np.round(count)))
        else:
            m = np.asarray(model.multiplicities[t])
            W = np.round(count)
            least = _fewest_draws(m, W)
            drawn = int((m > 0).sum())
            if complete and (least > reach).any():
                at = int(np.argmax(least - reach))
                raise incomplete_population(
                    f"tree {t} leaf {cell_code[at][0]} holds at least {least[at]:g} drawn training records{_cell_words(cell_code[at][1], model)} "
                    f"but only {reach[at]} candidates reach it"
                )
            lo = least.astype(float) if complete else np.zeros(len(W))
            hi = np.minimum(W + (n - drawn), reach).astype(float)
            used = (reach > 0) | published
            soft = (W, np.maximum(W, 1.0)) if complete else None
            blocks.append(_Block(t, node_cell, used, lo, hi, cell_code, soft, W))
            positive += (W[node_cell] > 0).astype(np.int64)
    real = boosting_membership_rows(model, leaves, codes, [m == "once" for m in modes], complete) if rounds else None
    if not blocks and real is None:
        raise DataError("no tree publishes counts the candidates can be tied to (labels only, or rows drawn in an unknown way)")
    min_drawn = _min_drawn(model, bagged) if bagged else 0  # the forest's draws: the same whatever the pool holds
    A, lo, hi, tree_of, leaf_of, cell_of, target, variance, published_count = _stack(blocks, N)
    if real is not None:
        A = sp.vstack([A, real.A], format="csr")
        lo, hi, tree_of, leaf_of, cell_of = (np.r_[a, b] for a, b in zip((lo, hi, tree_of, leaf_of, cell_of), (real.lo, real.hi, real.tree, real.leaf, real.cell)))
        target, variance = np.r_[target, np.full(real.A.shape[0], np.nan)], np.r_[variance, np.zeros(real.A.shape[0])]
        published_count = np.r_[published_count, np.full(real.A.shape[0], np.nan)]
        for t, kind in real.kinds.items():
            described[t] = f"{described[t]}, {kind}" if t in described else kind
    size = sp.csr_matrix(np.ones((1, N)))
    A = sp.vstack([A, size], format="csr")
    lo = np.r_[lo, float(n) if complete else 0.0]
    hi = np.r_[hi, float(n)]
    tree_of, leaf_of, cell_of = np.r_[tree_of, -1], np.r_[leaf_of, -1], np.r_[cell_of, -3]
    target, variance, published_count = np.r_[target, np.nan], np.r_[variance, 0.0], np.r_[published_count, np.nan]
    return MembershipRows(A, lo, hi, tree_of, leaf_of, cell_of, target, variance, positive, min_drawn, modes, n, complete, described, published_count)


# -- cells -----------------------------------------------------------------------------------------


@dataclass
class _Block:
    tree: int
    node_cell: np.ndarray
    used: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    cell_code: list[tuple[int, int]]
    soft: tuple[np.ndarray, np.ndarray] | None
    count: np.ndarray


def _cells(tree: Tree, codes: np.ndarray | None) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray], list[tuple[int, int]], str] | None:
    """A tree's published cells: the count of each, a map from (candidates' leaf ids) to cell
    indices, each cell's (leaf id, class code or -1/-2), and what the cells are in words."""
    leaves = tree.leaves()
    ids = np.array([leaf.id for leaf in leaves], dtype=np.intp)
    position = np.full(tree.n_nodes, -1, dtype=np.intp)
    position[ids] = np.arange(len(ids))
    k = len(tree.classes)
    counts = None
    if tree.disclosure is Disclosure.CLASS_COUNTS and all(leaf.counts is not None for leaf in leaves):
        counts = np.array([leaf.counts for leaf in leaves], dtype=float)
    n_samples = [leaf.n_samples for leaf in leaves]
    if codes is not None and counts is not None:
        return _class_cells(counts, ids, position, codes, k)
    if codes is not None and tree.disclosure is Disclosure.ERROR_RATES and all(leaf.n_errors is not None for leaf in leaves):
        labels = np.array([leaf.label for leaf in leaves], dtype=np.intp)
        n = np.array(n_samples, dtype=float)
        e = np.array([leaf.n_errors for leaf in leaves], dtype=float)
        count = np.c_[n - e, e].ravel()  # cell 2j: the label's records; 2j + 1: the others'

        def of_label(nodes: np.ndarray) -> np.ndarray:
            j = position[nodes]
            return 2 * j + (codes != labels[j])

        code = [(int(i), c) for i, lab in zip(ids, labels) for c in (int(lab), -2)]
        return count, of_label, code, "the label's and the other classes' records per leaf (error rates)"
    if counts is not None or all(s is not None for s in n_samples):
        total = counts.sum(axis=1) if counts is not None else np.array(n_samples, dtype=float)

        def of_leaf(nodes: np.ndarray) -> np.ndarray:
            return position[nodes]

        return total, of_leaf, [(int(i), -1) for i in ids], "records per leaf"
    return None


def _class_cells(counts: np.ndarray, ids: np.ndarray, position: np.ndarray, codes: np.ndarray, k: int) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray], list[tuple[int, int]], str]:
    def of_cell(nodes: np.ndarray) -> np.ndarray:
        return position[nodes] * k + codes

    code = [(int(i), c) for i in ids for c in range(k)]
    return counts.ravel(), of_cell, code, "records per leaf and class"


def _class_codes(model: Tree | Forest, population: pd.DataFrame) -> np.ndarray:
    """Each candidate's class as the model's class index; a value the model never saw is refused."""
    klass = model.class_attribute
    if klass not in population.columns:
        raise DataError(f"the population has no class column {klass!r}: give it, or declare the class unknown")
    index = {c: i for i, c in enumerate(model.classes)}
    values = population[klass].to_numpy(dtype=object)
    codes = np.array([index.get(v, index.get(str(v), -1)) for v in values], dtype=np.intp)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        raise DataError(
            f"column {klass!r}, row {population.index[bad[0]]!r}: value {values[bad[0]]!r} is none of the model's classes {list(model.classes)!r}"
        )
    return codes


def incomplete_population(what: str) -> DataError:
    """A published count more than the candidates can hold: the population lacks training records,
    which ``complete=False`` declares (the counts then read as upper bounds)."""
    return advising(
        DataError(f"{what}: the population does not hold every training record (declare it incomplete: complete=False)"),
        "declare it incomplete: complete=False", "complete", "declare it incomplete",
    )



def _cell_words(code: int, model: Tree | Forest) -> str:
    if code >= 0:
        return f" of class {model.classes[code]!r}"
    return " outside the label's class" if code == -2 else ""


def _fewest_draws(m: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Per weighted count ``W``, the fewest rows whose multiplicities (``m``, largest first) add up to it."""
    top = np.sort(m[m > 0])[::-1].cumsum()
    need = np.searchsorted(top, W - WHOLE, side="left") + 1
    return np.where(W > WHOLE, need, 0)


def _min_drawn(model: Tree | Forest, bagged: list[int]) -> int:
    """The fewest bagged trees any training position was drawn by (each member was drawn by at least that many)."""
    drawn = np.zeros(model.n_records or 0, dtype=np.int64)
    for t in bagged:
        drawn += np.asarray(model.multiplicities[t]) > 0
    return int(drawn.min()) if drawn.size else 0


def _stack(blocks: list[_Block], N: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The blocks' used cells as one sparse matrix (each candidate in one cell per block), their
    bounds, what each is, the soft targets and variances, and the published counts."""
    if not blocks:
        empty = np.zeros(0)
        return sp.csr_matrix((0, N)), empty, empty, empty.astype(np.int64), empty.astype(np.int64), empty.astype(np.int64), empty, empty, empty
    mats, los, his, trees, leaves, cells, targets, variances, counts = [], [], [], [], [], [], [], [], []
    for b in blocks:
        used = np.flatnonzero(b.used)
        renumber = np.full(len(b.used), -1, dtype=np.intp)
        renumber[used] = np.arange(len(used))
        row = renumber[b.node_cell]
        mats.append(sp.csr_matrix((np.ones(N), (row, np.arange(N))), shape=(len(used), N)))
        los.append(b.lo[used])
        his.append(b.hi[used])
        trees.append(np.full(len(used), b.tree))
        code = np.asarray(b.cell_code, dtype=np.int64).reshape(-1, 2)[used]
        leaves.append(code[:, 0])
        cells.append(code[:, 1])
        targets.append(np.full(len(used), np.nan) if b.soft is None else b.soft[0][used])
        variances.append(np.zeros(len(used)) if b.soft is None else b.soft[1][used])
        counts.append(np.asarray(b.count, dtype=float)[used])
    return (
        sp.vstack(mats, format="csr"), np.concatenate(los), np.concatenate(his), np.concatenate(trees), np.concatenate(leaves),
        np.concatenate(cells), np.concatenate(targets), np.concatenate(variances), np.concatenate(counts),
    )


def column_patterns(A: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """The distinct columns of ``A`` (candidates reaching the same rows: interchangeable to every
    row), each candidate's pattern and each pattern's number of candidates. Columns are keyed by
    two random hashes of their rows and checked equal to their pattern exactly (no merge on a
    collision)."""
    if A.shape[1] == 0:
        return A, np.zeros(0, dtype=np.intp), np.zeros(0)
    rng = np.random.default_rng(0)
    keys = np.c_[A.T @ rng.random(A.shape[0]), A.T @ rng.random(A.shape[0])]
    _, first, of_bit, weight = np.unique(keys, axis=0, return_index=True, return_inverse=True, return_counts=True)
    of_bit = of_bit.ravel()
    C = A.tocsc()
    if (C - C[:, first[of_bit]]).count_nonzero():
        return A, np.arange(A.shape[1]), np.ones(A.shape[1])
    return C[:, first].tocsr(), of_bit, weight.astype(float)
