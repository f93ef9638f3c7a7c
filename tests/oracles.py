"""Deliberately simple references the fast code is tested against (loaded by ``tests/conftest.py``).

:func:`brute_force_spans` is the reference for model k-anonymity (paper 002 §2): it enumerates
every combination of private values for every record and routes it with :meth:`Tree.apply`, so
it shares no code with the path-consistent routing of ``ppdm.tree.routing``.
:func:`brute_force_forest_spans` does the same over a forest: one combination of private values
routes a record through every tree at once, and its span is the set of leaf tuples it reaches.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from ppdm.data.roles import Roles
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree
from ppdm.tree.splits import ThresholdSplit


def _private_choices(tree: Tree | Forest, attribute: str) -> list[object]:
    """Values that reach every region of a private attribute: its domain, or one number per
    interval between the thresholds on it (of every tree of a forest)."""
    attr = tree.attributes[attribute]
    if attr.is_categorical:
        return list(attr.categories)
    trees = tree.trees if isinstance(tree, Forest) else [tree]
    cuts = sorted(
        {n.split.threshold for t in trees for n in t.nodes if isinstance(n.split, ThresholdSplit) and n.split.attribute == attribute}
    )
    if not cuts:
        return [0.0]
    inner = [(a + b) / 2 for a, b in zip(cuts, cuts[1:])]
    return [cuts[0] - 1.0, *cuts, *inner, cuts[-1] + 1.0]


def brute_force_spans(
    tree: Tree,
    data: pd.DataFrame,
    roles: Roles | Sequence[str],
    class_public: bool | None = None,
) -> tuple[list[tuple], np.ndarray]:
    """Reference for :func:`ppdm.attacks.leaf.anonymity.model_anonymity`: enumerate every combination
    of private values.

    For each combination, every record's private columns are overwritten with it and the record
    is routed by :meth:`Tree.apply`; a record's span is the set of leaves it reached (with its
    class when the class is public). Returns each record's span key and each record's span
    population. Exponential in the number of private attributes.
    """
    public = list(roles.quasi_identifiers if isinstance(roles, Roles) else roles)
    split_attributes = sorted({n.split.attribute for n in tree.nodes if n.split is not None})
    private = [a for a in split_attributes if a not in public]
    n = len(data)
    reached: list[set[int]] = [set() for _ in range(n)]
    base = data.reset_index(drop=True).copy()
    for combo in itertools.product(*[_private_choices(tree, a) for a in private]):
        frame = base.copy()
        for attribute, value in zip(private, combo):
            frame[attribute] = value
        for i, leaf in enumerate(tree.apply(frame)):
            reached[i].add(int(leaf))
    is_public = tree.class_attribute in public if class_public is None else bool(class_public)
    labels = list(base[tree.class_attribute]) if is_public else [None] * n
    keys = [(tuple(sorted(s)), label) for s, label in zip(reached, labels)]
    sizes = Counter(keys)
    return keys, np.array([sizes[key] for key in keys])


def partition(keys) -> set[frozenset[int]]:
    """The partition of record indices induced by per-record keys."""
    groups: dict[object, set[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, set()).add(i)
    return {frozenset(g) for g in groups.values()}


def sklearn_tree(frame: pd.DataFrame, features: Sequence[str], target: str, depth: int) -> Tree:
    """A scikit-learn ``DecisionTreeClassifier`` of ``depth`` fitted on ordinal codes, imported."""
    from sklearn.tree import DecisionTreeClassifier

    from ppdm.tree import tree_from_sklearn

    X = frame[list(features)].copy()
    for c in features:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            X[c] = X[c].cat.codes
    est = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, frame[target])
    return tree_from_sklearn(est, frame[list(features)], class_attribute=target)


def brute_force_forest_spans(forest: Forest, data: pd.DataFrame, public: Sequence[str]) -> tuple[list, np.ndarray]:
    """Reference for :func:`ppdm.attacks.leaf.anonymity.model_anonymity` over a forest (private class).

    Every combination of the private attributes' values is written into a copy of every record
    (all copies in one table), which is then routed through every tree by :meth:`Tree.apply`; a
    record's span is the set of tuples (one leaf per tree) its copies reached. Returns each record's span key and its span population.
    """
    split_attributes = sorted({n.split.attribute for t in forest.trees for n in t.nodes if n.split is not None})
    private = [a for a in split_attributes if a not in public]
    n = len(data)
    base = data.reset_index(drop=True)
    combos = list(itertools.product(*[_private_choices(forest, a) for a in private]))
    frame = pd.concat([base] * len(combos), ignore_index=True)  # record i of combination c is row c*n + i
    for j, attribute in enumerate(private):
        frame[attribute] = np.repeat(np.array([combo[j] for combo in combos], dtype=object), n)
    leaves = np.column_stack([tree.apply(frame) for tree in forest.trees]).reshape(len(combos), n, -1)
    keys = [frozenset(map(tuple, leaves[:, i, :].tolist())) for i in range(n)]
    sizes = Counter(keys)
    return keys, np.array([sizes[key] for key in keys])


def clarabel_slots(problem) -> np.ndarray:
    """The reference estimate: relative-entropy maximisation over an explicit slot problem by
    cvxpy + Clarabel, p(slot | q) (groups × slots). Skips the test when cvxpy is missing."""
    import pytest

    cp = pytest.importorskip("cvxpy")
    A, b, le, _ = problem.stacked()
    G, K = problem.n_groups, problem.n_values
    possible = np.isfinite(problem.log_base).ravel()
    P = cp.Variable(G * K, nonneg=True)
    cons = [cp.reshape(P, (G, K), order="C").sum(axis=1) == problem.weights]
    if (~possible).any():
        cons.append(P[np.flatnonzero(~possible)] == 0)
    if (~le).any():
        cons.append(A[~le] @ P == b[~le])
    if le.any():
        cons.append(A[le] @ P <= b[le])
    idx = np.flatnonzero(possible)
    objective = cp.sum(cp.entr(P[idx])) + cp.sum(cp.multiply(P[idx], problem.log_base.ravel()[idx]))
    cp.Problem(cp.Maximize(objective), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    joint = np.maximum(np.asarray(P.value).reshape(G, K), 0)
    return joint / joint.sum(axis=1, keepdims=True)



def possible_by_enumeration(forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str, values: Sequence[object]) -> np.ndarray:
    """Records × ``values``: the sensitive values for which some completion of the record's unknown
    columns (every value of every unknown split attribute, :func:`_private_choices`; the class
    when unknown) lands, in every tree holding the record, in a leaf whose published counts leave
    room for it (at least its multiplicity m of its class; with sample counts only, m rows; with
    error rates, ``n − e`` for the label and ``e`` for any other class). ``values``: the sensitive
    attribute's cells as the audit names them, matched by the value routed (the classes, a
    category, or an interval's representative)."""
    from ppdm.attacks.leaf.leaves import row_multiplicities
    from ppdm.tree.disclosure import Disclosure

    klass = forest.class_attribute
    split = list(forest.split_attributes)
    unknown = [a for a in split if a not in known]
    choices = [_private_choices(forest, a) for a in unknown]
    if sensitive != klass and sensitive not in split:  # no tree splits on it: every value of it, unconstrained
        unknown.append(sensitive)
        choices.append(list(values))
    class_unknown = klass not in known
    classes = list(range(len(forest.classes))) if class_unknown else [None]
    mults = [row_multiplicities(forest, t, len(data)) for t in range(forest.n_trees)]
    out = np.zeros((len(data), len(values)), dtype=bool)
    combos = [dict(zip(unknown, combo)) for combo in itertools.product(*choices)]
    for r in range(len(data)):
        base = data.iloc[[r]].reset_index(drop=True)
        frame = pd.concat([base] * len(combos), ignore_index=True)
        for a in unknown:
            frame[a] = [c[a] for c in combos]
        leaves = [tree.apply(frame) for tree in forest.trees]
        own = forest.classes.index(data[klass].iloc[r]) if not class_unknown else None
        for c in classes:
            k = own if c is None else c
            ok = np.ones(len(combos), dtype=bool)
            for t, tree in enumerate(forest.trees):
                m = mults[t]
                if m is None or m[r] == 0:
                    continue
                for i, leaf in enumerate(leaves[t]):
                    node = tree.nodes[leaf]
                    if tree.disclosure is Disclosure.CLASS_COUNTS and node.counts is not None:
                        room = node.counts[k]
                    elif node.n_samples is not None and node.n_errors is not None:
                        room = node.n_samples - node.n_errors if k == node.label else node.n_errors
                        if len(forest.classes) > 2:
                            room = room if room == 0 else m[r]  # shared errors: only their being positive is known
                    elif node.n_samples is not None:
                        room = node.n_samples
                    else:
                        room = m[r]
                    ok[i] &= room >= m[r] - 1e-6
            for i in np.flatnonzero(ok):
                value = forest.classes[k] if sensitive == klass else frame[sensitive].iloc[i]
                out[r, _cell_of(value, sensitive, values, forest)] = True
    return out


def _cell_of(value: object, sensitive: str, values: Sequence[object], forest: Forest) -> int:
    if value in list(values):
        return list(values).index(value)
    cuts = sorted({n.split.threshold for t in forest.trees for n in t.nodes if isinstance(n.split, ThresholdSplit) and n.split.attribute == sensitive})
    return int(np.searchsorted(cuts, float(value), side="left"))  # type: ignore[arg-type]


def feasible_memberships(rows) -> np.ndarray:
    """Every 0/1 vector meeting the rows (brute force)."""
    n = rows.n_candidates
    all_b = np.array(list(itertools.product([0, 1], repeat=n)), dtype=float)
    x = all_b @ rows.A.T.toarray()
    ok = ((x >= rows.lo - 1e-9) & (x <= rows.hi + 1e-9)).all(axis=1)
    if rows.min_drawn > 0:
        ok &= ~(all_b[:, rows.positive_trees < rows.min_drawn] > 0).any(axis=1)
    return all_b[ok]


def brute_force_membership_maxent(rows, state) -> np.ndarray:
    """Marginals of the maximum-entropy distribution over all 2^N vectors (agreeing with the proofs)
    whose expectations meet the rows: the Gibbs form q(b) ∝ exp(λ·Ab) over every vector, its dual
    minimised by a general solver (no product form assumed)."""
    n = rows.n_candidates
    all_b = np.array(list(itertools.product([0, 1], repeat=n)), dtype=float)
    agree = ((state < 0) | (all_b == state)).all(axis=1)
    B = all_b[agree]
    M = B @ rows.A.T.toarray()  # vectors × rows
    eq = np.abs(rows.hi - rows.lo) < 1e-9
    G = np.c_[M[:, eq], M[:, ~eq], -M[:, ~eq]]
    c = np.r_[rows.lo[eq], rows.lo[~eq], -rows.hi[~eq]]
    bounds = [(None, None)] * int(eq.sum()) + [(0, None)] * (2 * int((~eq).sum()))

    def dual(z):
        s = G @ z
        top = s.max()
        w = np.exp(s - top)
        return float(top + np.log(w.sum()) - z @ c), G.T @ (w / w.sum()) - c

    res = minimize(dual, np.zeros(G.shape[1]), jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 20000, "gtol": 1e-10, "ftol": 0})
    s = G @ res.x
    q = np.exp(s - s.max())
    return (q / q.sum()) @ B
