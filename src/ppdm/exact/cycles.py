"""Consistent datasets along cycles of record moves: refutations without a solver.

From a consistent dataset x, a *move* takes one record of group h from variable u to variable u'
of the same group; the rows change by A[:, u'] − A[:, u]. Call a variable's column of the rows
its *pattern* (the leaves, classes and sensitive cells it counts in; for a tree with a sensitive
input, its (leaf, class) cell and its sensitive value). Moves whose patterns form a cycle
P₀ → P₁ → … → P₀ (the record leaving Pᵢ lands in Pᵢ₊₁, the next one leaves Pᵢ₊₁) change every
row by Σ (Pᵢ₊₁ − Pᵢ) = 0, whatever the rows' senses and coefficients: x plus such a cycle is
consistent as soon as it stays non-negative, which holds when each record leaving Pᵢ is one x
already holds there. This generalises the one- and two-record moves of :mod:`ppdm.exact.moves`
to moves of any length, and, on one tree's class counts, is the residual-cycle argument of
:mod:`ppdm.exact.network` with the sensitive rows kept.

The search is on one directed graph, bipartite between patterns and groups: P → h when group h
has a record in a variable of pattern P, h → P when h has a variable of pattern P. A candidate
certain value (g, v) (every dataset seen gives all of g's records value v) is refuted by a move of
g from a v-variable of pattern P to a variable of another value of pattern P' together with a path
P' → … → P: the strongly connected components of the graph say at once which candidates have
one; a breadth-first search then builds the cycle. Impossible values likewise (a move into the
value). Every dataset built is checked against every row in whole numbers before it is used; a
candidate with no cycle is not proved anything (longer combinations, or cycles from another
dataset, may still refute it).
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ppdm.exact.problem import Rows, change_holds


class MoveCycles:
    """The pattern–group graph of one consistent dataset ``x`` (module docstring)."""

    def __init__(self, var_group: np.ndarray, rows: Rows, x: np.ndarray, pattern: np.ndarray | None = None) -> None:
        self.var_group = np.asarray(var_group)
        self.x = np.asarray(x, dtype=np.int64)
        self.rows = rows
        self.pattern = patterns(rows, len(x)) if pattern is None else pattern
        n_pat = int(self.pattern.max(initial=-1)) + 1
        n_groups = int(self.var_group.max(initial=-1)) + 1
        self.n_pat = n_pat
        held = np.flatnonzero(self.x > 0)
        # nodes: patterns 0..n_pat-1, groups n_pat..; P → h (a record of h there), h → P (a variable of h there)
        src = np.r_[self.pattern[held], n_pat + self.var_group]
        dst = np.r_[n_pat + self.var_group[held], self.pattern]
        size = n_pat + n_groups
        self.graph = sp.csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(size, size))
        self.graph.sum_duplicates()
        _, self.scc = connected_components(self.graph, directed=True, connection="strong")
        # per (group, pattern): a variable with a record there, and any variable there
        key = self.var_group.astype(np.int64) * n_pat + self.pattern
        self._key_all = _first_of(key, np.arange(len(key)))
        self._key_held = _first_of(key[held], held)

    def reachable(self, source: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Per move (a record out of variable ``source`` into ``target``, of one group), whether
        a cycle closes it: ``target``'s pattern reaches ``source``'s."""
        return self.scc[self.pattern[target]] == self.scc[self.pattern[source]]

    def dataset(self, source: int, target: int, deadline: float | None = None) -> np.ndarray | None:
        """A consistent dataset moving one record from ``source`` to ``target`` (variables of one
        group) and closing the cycle along a shortest path avoiding the group; ``None`` when no
        such path is found or the result fails a row."""
        g = int(self.var_group[source])
        start, goal = int(self.pattern[target]), int(self.pattern[source])
        y = self.x.copy()
        y[source] -= 1
        y[target] += 1
        if start != goal:
            path = self._path(start, goal, self.n_pat + g, deadline)
            if path is None:
                return None
            for a, h, b in zip(path[0::2], path[1::2], path[2::2]):
                group = h - self.n_pat
                out = self._key_held.get(group * self.n_pat + a)
                into = self._key_all.get(group * self.n_pat + b)
                if out is None or into is None:
                    return None
                y[out] -= 1
                y[into] += 1
        if (y < 0).any() or not change_holds(self.rows, self.x, y):
            return None
        return y

    def _path(self, start: int, goal: int, avoid: int, deadline: float | None) -> list[int] | None:
        """Nodes of a shortest path start → … → goal (breadth first), never through ``avoid``."""
        indptr, indices = self.graph.indptr, self.graph.indices
        parent = {start: -1}
        queue = deque([start])
        steps = 0
        while queue:
            node = queue.popleft()
            steps += 1
            if deadline is not None and steps % 4096 == 0 and time.perf_counter() > deadline:
                return None
            for nxt in indices[indptr[node] : indptr[node + 1]].tolist():
                if nxt in parent or nxt == avoid:
                    continue
                parent[nxt] = node
                if nxt == goal:
                    path = [goal]
                    while parent[path[-1]] != -1:
                        path.append(parent[path[-1]])
                    return path[::-1]
                queue.append(nxt)
        return None


def patterns(rows: Rows, n_vars: int) -> np.ndarray:
    """Each variable's pattern: equal for variables with the same column in every row (two
    random projections; a collision only costs a dataset that fails its check)."""
    if not rows:
        return np.zeros(n_vars, dtype=np.intp)
    A = sp.vstack([r[0] for r in rows]).tocsc()
    rng = np.random.default_rng(5)
    proj = np.asarray(A.T @ rng.random((A.shape[0], 2)))
    _, pattern = np.unique(np.round(proj, 9), axis=0, return_inverse=True)
    return pattern.ravel().astype(np.intp)


def _first_of(key: np.ndarray, values: np.ndarray) -> dict[int, int]:
    keys, first = np.unique(key, return_index=True)
    return dict(zip(keys.tolist(), values[first].tolist()))


def refute(
    cycles: MoveCycles, var_pair: np.ndarray, var_label: np.ndarray, pair_group: np.ndarray, pair_label: np.ndarray, candidates: np.ndarray,
    certain: bool, deadline: float | None = None,
) -> list[np.ndarray]:
    """Datasets refuting the ``candidates`` (pairs: group and value) the cycles of ``cycles`` can
    refute: certain ones (``certain``: a record of the pair leaves the value) or impossible ones
    (a record of the group arrives in it). One dataset per candidate, at most; a dataset may
    refute others on the way (the caller sees them all)."""
    x, var_group = cycles.x, cycles.var_group
    wanted = np.zeros(len(pair_group), dtype=bool)
    wanted[candidates] = True
    # every move of a candidate's group refuting it: out of a held variable of the pair into
    # another value (certain), or out of another value into the pair (impossible)
    order = np.argsort(var_group, kind="stable")
    first = np.searchsorted(var_group[order], np.arange(int(var_group.max(initial=-1)) + 2))
    src = np.flatnonzero((x > 0) & (wanted[var_pair] if certain else True))
    per = first[var_group[src] + 1] - first[var_group[src]]
    pos = np.repeat(first[var_group[src]], per) + np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    u, w = np.repeat(src, per), order[pos]
    if certain:
        keep = var_label[w] != var_label[u]
        pair = var_pair[u]
    else:
        keep = wanted[var_pair[w]] & (var_label[w] != var_label[u])
        pair = var_pair[w]
    u, w, pair = u[keep], w[keep], pair[keep]
    ok = cycles.reachable(u, w)
    u, w, pair = u[ok], w[ok], pair[ok]
    out: list[np.ndarray] = []
    done = np.zeros(len(pair_group), dtype=bool)
    for i in range(len(u)):
        if done[pair[i]]:
            continue
        if deadline is not None and time.perf_counter() > deadline:
            break
        y = cycles.dataset(int(u[i]), int(w[i]), deadline)
        if y is None:
            continue
        out.append(y)
        counts = np.bincount(var_pair, weights=y, minlength=len(pair_group))
        group_size = np.bincount(var_group, weights=x, minlength=int(pair_group.max(initial=-1)) + 1)[pair_group]
        done |= (counts < group_size) if certain else (counts > 0)
    return out
