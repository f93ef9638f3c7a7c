"""The exact audit as a flow problem, when the rows form a network (one tree with class counts).

With one tree publishing its class counts, every (group, slot) count sits in exactly two rows:
its group's size and its leaf's count of its class (paper 000 §4.1's class-count rows; the
sensitive value as class or as input, the class known or not). Then the consistent datasets are
the integral flows of a transportation network: groups supply their records, the (leaf, class)
cells demand their published counts, and a group sends records to a cell through one arc per
sensitive value the slot allows. The matrix is totally unimodular, and everything is polynomial:

1. one feasible flow (the real records when known, else a maximum flow);
2. groups with the same arcs are interchangeable: merged into *classes*; a member g of class K
   holds between max(0, min_K − (n_K − n_g)) and min(n_g, max_K) records of a value when the
   class as a whole holds between min_K and max_K (any split of the class's flow among its
   members is feasible: they all have every arc);
3. the residual network's strongly connected components: a flow can only be rerouted along
   residual cycles, which stay inside one component, so the class's count of value v is fixed
   unless its component holds cells of both kinds, and otherwise its minimum (maximum) is the
   current count minus (plus) one maximum flow, in the component without the class, from the
   cells it may send other values (value v) to the cells it now sends value v (other values),
   each capped by what it sends there.

No solver is called; :func:`network_form` says when the rows qualify (equalities, 0/1
coefficients, each count in at most one row once rows implied by others are set aside).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, maximum_flow

from ppdm.errors import InfeasibleError
from ppdm.exact.bounds import ExactBounds
from ppdm.exact.problem import CountProblem

#: Arcs per batch of side-by-side maximum flows (memory: about 40 bytes each).
BATCH_ARCS = 2_000_000


@dataclass
class NetworkForm:
    """Each variable's cell (−1: no row; such variables share a free cell) and the demands."""

    cell: np.ndarray
    demand: np.ndarray
    dropped: list[str]


def network_form(problem: CountProblem) -> NetworkForm | None:
    """The transportation form of ``problem``, or ``None`` when its rows are not a network.

    Rows must be equalities with coefficients 1. A row whose variables are exactly those of
    other rows (the SA rows when the class is sensitive: sums of class-count rows) is implied;
    it is checked against their sum and set aside.
    """
    if any(r.sense != "eq" for r in problem.rows):
        return None
    A, b, _, names = problem.stacked()
    A = sp.csr_matrix(A)
    if A.nnz and (A.data != 1).any():
        return None
    keep = np.ones(A.shape[0], dtype=bool)
    per_var = np.asarray(A.sum(axis=0)).ravel()
    dropped: list[str] = []
    if (per_var > 1).any():
        keep = _set_aside_implied(A, b, names, dropped)
        if keep is None:
            return None
    A, b = A[keep], b[keep]
    cell = np.full(problem.n_vars, -1, dtype=np.intp)
    coo = A.tocoo()
    cell[coo.col] = coo.row
    return NetworkForm(cell, b.astype(np.int64), dropped)


def _set_aside_implied(A: sp.csr_matrix, b: np.ndarray, names: list[str], dropped: list[str]) -> np.ndarray | None:
    """Rows to keep so that each variable is in at most one row, the others being sums of kept rows.

    The widest rows are tried first. A row can be a union of the other kept rows only if each of
    its variables sits in exactly one other kept row; rows failing that (every row of a forest
    whose trees cut the records differently) are skipped without slicing, so the rows of many
    trees are turned down at once."""
    n_rows = A.shape[0]
    keep = np.ones(n_rows, dtype=bool)
    sizes = np.diff(A.indptr)
    per_var = np.bincount(A.indices, minlength=A.shape[1])
    order = np.argsort(-sizes, kind="stable")
    start = 0
    while start < n_rows:
        candidate = _twice_covered(A, per_var, sizes)[order[start:]]
        hits = np.flatnonzero(candidate)
        if not len(hits):
            break
        start += int(hits[0])
        r = int(order[start])
        start += 1
        if _union_of_others(A, b, names, keep, r):
            keep[r] = False
            per_var[A.indices[A.indptr[r] : A.indptr[r + 1]]] -= 1
            dropped.append(names[r])
    return keep if (per_var <= 1).all() else None


def _twice_covered(A: sp.csr_matrix, per_var: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per row, whether each of its variables sits in exactly two kept rows (itself and one other)."""
    out = np.zeros(A.shape[0], dtype=bool)
    full = sizes > 0
    if not full.any():
        return out
    hit = (per_var[A.indices] == 2).astype(np.int64)
    covered = np.add.reduceat(hit, A.indptr[:-1][full]) if len(hit) else np.zeros(int(full.sum()), np.int64)
    out[full] = covered == sizes[full]
    return out


def _union_of_others(A: sp.csr_matrix, b: np.ndarray, names: list[str], keep: np.ndarray, r: int) -> bool:
    """Whether row ``r`` is exactly the union of the other kept rows touching it (checked against
    their sum when it is)."""
    cols = A.indices[A.indptr[r] : A.indptr[r + 1]]
    others = keep.copy()
    others[r] = False
    sub = A[others][:, cols]
    if sub.nnz == 0:
        return False
    touching = np.flatnonzero(others)[np.unique(sub.tocoo().row)]
    inside = np.asarray(A[touching].sum(axis=1)).ravel() == np.asarray(A[touching][:, cols].sum(axis=1)).ravel()
    covered = np.asarray(A[touching][:, cols].sum(axis=0)).ravel()
    if not (inside.all() and (covered == 1).all()):
        return False
    if b[touching].sum() != b[r]:
        raise InfeasibleError(f"{names[r]} does not equal the sum of the rows it is made of", [names[r]])
    return True


def network_bounds(problem: CountProblem, form: NetworkForm, truth: np.ndarray | None = None, full: bool = True) -> ExactBounds:
    """Min and max of every (group, value) count by flows (see the module docstring).

    Certain and impossible values are always exact (reachability in the residual network);
    with ``full`` every min and max is too (one maximum flow per movable class and value),
    otherwise a movable count gets the proved bounds around it (undecided bounds, decided
    certainty)."""
    start = time.perf_counter()
    n_labels = problem.n_labels
    cell = form.cell.copy()
    free = int(len(form.demand))
    demand = np.append(form.demand, problem.n_total - form.demand.sum())
    if demand[-1] < 0:
        raise InfeasibleError("the published counts exceed the records", ["class-count"])
    cell[cell < 0] = free
    classes, class_of_group, n_class = _classes(problem, cell)
    # arcs of each class: (class, cell) with the labels it may send there
    arc_key = class_of_group[problem.var_group].astype(np.int64) * len(demand) + cell
    rep = classes[class_of_group[problem.var_group]] == problem.var_group  # variables of each class's representative
    k_cell = np.unique(arc_key[rep])
    label_key = np.unique(arc_key[rep] * n_labels + problem.var_label[rep])
    flow = _class_flow(problem, class_of_group, n_class, cell, demand, k_cell, truth)
    bounds = ExactBounds.trivial(problem.sizes, problem.possible_labels())
    k_bounds = _class_bounds(k_cell, label_key, flow, n_class, demand, n_labels, full)
    members = class_of_group
    n_k = n_class[members][:, None]
    n_g = problem.sizes[:, None]
    bounds.min_lo, bounds.min_hi = (np.maximum(0, b[members] - (n_k - n_g)) for b in k_bounds[:2])
    bounds.max_lo, bounds.max_hi = (np.minimum(n_g, b[members]) for b in k_bounds[2:])
    bounds.method = "network"
    bounds.seconds = time.perf_counter() - start
    bounds.stats = {"classes": len(n_class), "cells": len(demand), "implied_rows_set_aside": len(form.dropped)}
    return bounds


def _classes(problem: CountProblem, cell: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Groups with the same (cell, label) arcs: a representative per class, each group's class,
    and the records per class."""
    rng = np.random.default_rng(12345)
    key = cell.astype(np.int64) * problem.n_labels + problem.var_label
    _, key = np.unique(key, return_inverse=True)
    h = rng.random((int(key.max(initial=0)) + 1, 2))
    sig = np.zeros((problem.n_groups, 3))
    np.add.at(sig, problem.var_group, np.c_[h[key], np.ones(len(key))])
    _, first, inverse = np.unique(np.round(sig, 12), axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    return first, inverse, np.bincount(inverse, weights=problem.sizes).astype(np.int64)


def _class_flow(
    problem: CountProblem, class_of_group: np.ndarray, n_class: np.ndarray, cell: np.ndarray, demand: np.ndarray,
    k_cell: np.ndarray, truth: np.ndarray | None,
) -> np.ndarray:
    """Records each class sends to each of its cells (aligned with ``k_cell``) in one consistent dataset."""
    n_cells = len(demand)
    if truth is not None:
        key = class_of_group[problem.var_group].astype(np.int64) * n_cells + cell
        sent = np.bincount(np.searchsorted(k_cell, key), weights=truth, minlength=len(k_cell))
        return np.rint(sent).astype(np.int64)
    n_k = len(n_class)
    s, t = n_k + n_cells, n_k + n_cells + 1
    kc, cc = k_cell // n_cells, k_cell % n_cells
    rows = np.concatenate([np.full(n_k, s), kc, n_k + np.arange(n_cells)])
    cols = np.concatenate([np.arange(n_k), n_k + cc, np.full(n_cells, t)])
    caps = np.concatenate([n_class, n_class[kc], demand]).astype(np.int32)
    graph = sp.csr_matrix((caps, (rows, cols)), shape=(t + 1, t + 1))
    result = maximum_flow(graph, s, t)
    if result.flow_value != problem.n_total:
        raise InfeasibleError(
            f"no dataset reproduces the published counts: at most {result.flow_value:,} of the {problem.n_total:,} records fit",
            ["class-count"],
        )
    f = sp.csr_matrix(result.flow)
    return _entries(f, kc, n_k + cc)


def _class_bounds(
    k_cell: np.ndarray, label_key: np.ndarray, flow: np.ndarray, n_class: np.ndarray, demand: np.ndarray, n_labels: int,
    full: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(classes, labels)`` bounds ``min_lo, min_hi, max_lo, max_hi`` of each class's count of
    each label: exact (lo = hi) for every pair with ``full``, else exact where the count is fixed
    and one record off the current count where it can move."""
    n_k, n_cells = len(n_class), len(demand)
    kc, cc = k_cell // n_cells, k_cell % n_cells
    arc_of_label = np.searchsorted(k_cell, label_key // n_labels)
    labels = np.zeros((len(k_cell), n_labels), dtype=bool)
    labels[arc_of_label, label_key % n_labels] = True
    n_arc_labels = labels.sum(axis=1)
    v_only = labels & (n_arc_labels == 1)[:, None]
    other_only = ~labels
    base_min = np.zeros((n_k, n_labels), dtype=np.int64)
    base_max = np.zeros((n_k, n_labels), dtype=np.int64)
    np.add.at(base_min, kc, v_only * flow[:, None])
    np.add.at(base_max, kc, labels * flow[:, None])
    has = np.zeros((n_k, n_labels), dtype=bool)
    has[kc[arc_of_label], label_key % n_labels] = True
    # lower v: from v-only cells with flow to cells taking another value; raise: the reverse
    lower = _moves(kc, cc, flow, n_k, n_cells, ~v_only & (n_arc_labels[:, None] > 0), v_only & (flow > 0)[:, None], has)
    raise_ = _moves(kc, cc, flow, n_k, n_cells, labels, other_only & (flow > 0)[:, None], has)
    min_lo, min_hi = base_min.copy(), np.where(lower, base_min - 1, base_min)
    max_lo, max_hi = np.where(raise_, base_max + 1, base_max), base_max.copy()
    if full:  # a few more consistent flows settle many counts before any reroute
        seen_min, seen_max = _extreme_flows(kc, cc, labels, n_arc_labels, flow, n_class, demand)
        np.minimum(min_hi, seen_min, out=min_hi)
        np.maximum(max_lo, seen_max, out=max_lo)
        queries = _queries(kc, cc, flow, labels, n_arc_labels, lower & (min_lo > 0) & (min_hi > 0), raise_ & (max_lo < n_class[:, None]))
        graphs = _ComponentGraphs(kc, cc, flow, n_class, _components(kc, cc, flow, n_k, n_cells), n_k)
        moved = graphs.reroute_all(queries)
        for (k, v, sign, *_), r in zip(queries, moved):
            if sign < 0:
                min_lo[k, v] = min_hi[k, v] = base_min[k, v] - r
            else:
                max_lo[k, v] = max_hi[k, v] = min(base_max[k, v] + r, n_class[k])
        # movable with nothing to ask: down to 0, or up to the whole class
        min_lo[lower & (min_hi == 0)] = 0
        done = raise_ & (max_lo == n_class[:, None])
        max_hi[done] = max_lo[done]
    else:
        # proved: nothing below what the group sizes and the cells' demands leave
        cap = np.minimum(n_class[kc], demand[cc])
        reach_other = np.zeros((n_k, n_labels), dtype=np.int64)
        reach_v = np.zeros((n_k, n_labels), dtype=np.int64)
        np.add.at(reach_other, kc, (n_arc_labels[:, None] - labels > 0) * cap[:, None])
        np.add.at(reach_v, kc, labels * cap[:, None])
        min_lo = np.where(lower, np.maximum(0, n_class[:, None] - reach_other), min_lo)
        max_hi = np.where(raise_, np.minimum(n_class[:, None], reach_v), max_hi)
        min_lo = np.minimum(min_lo, min_hi)
        max_hi = np.maximum(max_hi, max_lo)
    return min_lo, min_hi, max_lo, np.minimum(max_hi, n_class[:, None])


def _queries(
    kc: np.ndarray, cc: np.ndarray, flow: np.ndarray, labels: np.ndarray, n_arc_labels: np.ndarray, lower: np.ndarray, raise_: np.ndarray,
) -> list[tuple[int, int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """The reroutes that settle the movable pairs exactly: ``(k, v, sign, cells, sources, caps)``."""
    order = np.argsort(kc, kind="stable")
    first = np.searchsorted(kc[order], np.arange(lower.shape[0] + 1))
    out = []
    for k, v in zip(*np.nonzero(lower | raise_)):
        arcs = order[first[k] : first[k + 1]]
        can_v = labels[arcs, v]
        other = n_arc_labels[arcs] - can_v > 0
        if lower[k, v]:
            out.append((k, v, -1, cc[arcs], other, np.where(can_v & ~other, flow[arcs], 0)))
        if raise_[k, v]:
            out.append((k, v, 1, cc[arcs], can_v, np.where(~can_v, flow[arcs], 0)))
    return out


def _moves(
    kc: np.ndarray, cc: np.ndarray, flow: np.ndarray, n_k: int, n_cells: int, start: np.ndarray, end: np.ndarray, has: np.ndarray,
) -> np.ndarray:
    """``(classes, labels)``: whether the class can move a record from an ``end`` arc to a
    ``start`` arc (per label, arcs × labels masks), the other classes rerouting.

    Reachability in the cell graph without the class: a cell C1 leads to C2 when some class
    sends records to C1 and may send them to C2 (it can then take one from C1 and put it in C2).
    Each edge counts its supporting classes; a query subtracts its own class's support. All
    queries advance together, breadth first, over a dense cells × queries array.
    """
    order = np.argsort(kc, kind="stable")
    first = np.searchsorted(kc[order], np.arange(n_k + 1))
    # support of the cell graph: per class, its cells with flow × all its cells
    per = np.diff(first)
    f_arcs = np.flatnonzero(flow > 0)
    reps = per[kc[f_arcs]]
    total = int(reps.sum())
    pos = np.repeat(first[kc[f_arcs]], reps) + np.arange(total) - np.repeat(np.cumsum(reps) - reps, reps)
    src, dst, cls = np.repeat(cc[f_arcs], reps), cc[order[pos]], np.repeat(kc[f_arcs], reps)
    keep = src != dst
    src, dst, cls = src[keep], dst[keep], cls[keep]
    H = sp.csr_matrix((np.ones(len(src), dtype=np.float32), (dst, src)), shape=(n_cells, n_cells))  # transposed: to ← from
    H.sum_duplicates()
    # queries: classes × labels with a start and an end
    n_labels = start.shape[1]
    has_start = np.zeros((n_k, n_labels), dtype=bool)
    has_end = np.zeros((n_k, n_labels), dtype=bool)
    np.logical_or.at(has_start, kc, start)
    np.logical_or.at(has_end, kc, end)
    qk, qv = np.nonzero(has_start & has_end & has)
    out = np.zeros((n_k, n_labels), dtype=bool)
    # a start arc that is also an end arc cannot occur (start and end are disjoint by construction)
    for chunk in np.array_split(np.arange(len(qk)), max(1, len(qk) // 2000)):
        if len(chunk):
            out[qk[chunk], qv[chunk]] = _bfs(H, src, dst, cls, kc, cc, order, first, start, end, qk[chunk], qv[chunk], n_cells)
    return out


def _bfs(
    H: sp.csr_matrix, src: np.ndarray, dst: np.ndarray, cls: np.ndarray, kc: np.ndarray, cc: np.ndarray, order: np.ndarray, first: np.ndarray,
    start: np.ndarray, end: np.ndarray, qk: np.ndarray, qv: np.ndarray, n_cells: int,
) -> np.ndarray:
    q = len(qk)
    reached = np.zeros((n_cells, q), dtype=bool)
    target = np.zeros((n_cells, q), dtype=bool)
    # the queries' own arcs
    counts = first[qk + 1] - first[qk]
    qi = np.repeat(np.arange(q), counts)
    arcs = order[np.repeat(first[qk], counts) + np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)]
    st, en = start[arcs, qv[qi]], end[arcs, qv[qi]]
    reached[cc[arcs[st]], qi[st]] = True
    target[cc[arcs[en]], qi[en]] = True
    # the queries' own support, to subtract: edges of class k
    cls_order = np.argsort(cls, kind="stable")
    cls_first = np.searchsorted(cls[cls_order], np.arange(int(kc.max(initial=0)) + 2))
    sc = cls_first[qk + 1] - cls_first[qk]
    si = np.repeat(np.arange(q), sc)
    edges = cls_order[np.repeat(cls_first[qk], sc) + np.arange(int(sc.sum())) - np.repeat(np.cumsum(sc) - sc, sc)]
    e_src, e_dst = src[edges], dst[edges]
    hit = (reached & target).any(axis=0)
    # advance only the open queries, compacted: columns of the arrays = positions in ``live``
    live = np.flatnonzero(~hit)
    reached, target, frontier = reached[:, live], target[:, live], reached[:, live]
    col_of = np.full(q, -1)
    col_of[live] = np.arange(len(live))
    while len(live):
        m = np.asarray(H @ frontier.astype(np.float32))
        own = col_of[si] >= 0
        cols = col_of[si[own]]
        np.subtract.at(m, (e_dst[own], cols), frontier[e_src[own], cols])
        new = (m > 0.5) & ~reached
        reached |= new
        done = (new & target).any(axis=0)
        hit[live[done]] = True
        keep = ~done & new.any(axis=0)
        live = live[keep]
        reached, target, frontier = reached[:, keep], target[:, keep], new[:, keep]
        col_of[:] = -1
        col_of[live] = np.arange(len(live))
    return hit


def _extreme_flows(
    kc: np.ndarray, cc: np.ndarray, labels: np.ndarray, n_arc_labels: np.ndarray, flow: np.ndarray, n_class: np.ndarray, demand: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, labels)`` least and most counts seen over a few consistent flows: per label,
    one that sends as little of it as it can (every other arc first, then the rest) and one that
    sends as much (its arcs first). They only make the seen bounds wider; the reroutes prove."""
    n_k, n_labels = len(n_class), labels.shape[1]
    seen_min = np.full((n_k, n_labels), np.iinfo(np.int64).max)
    seen_max = np.zeros((n_k, n_labels), dtype=np.int64)
    for v in range(n_labels):
        can_v = labels[:, v]
        other = n_arc_labels - can_v > 0
        for first, counted in ((other, ~other), (can_v, can_v)):
            f = _two_phase(kc, cc, first, n_class, demand)
            if f is None:
                continue
            count = np.bincount(kc, weights=f * counted, minlength=n_k).astype(np.int64)
            if counted is can_v:
                seen_max[:, v] = np.maximum(seen_max[:, v], count)
            else:
                seen_min[:, v] = np.minimum(seen_min[:, v], count)
    return seen_min, seen_max


def _two_phase(kc: np.ndarray, cc: np.ndarray, first: np.ndarray, n_class: np.ndarray, demand: np.ndarray) -> np.ndarray | None:
    """A maximum flow over the arcs ``first`` only, completed over all arcs; per arc its flow
    (``None`` if the completion is not a full flow: it always is for a feasible network)."""
    n_k, n_cells = len(n_class), len(demand)
    s, t = n_k + n_cells, n_k + n_cells + 1
    f1 = _flow(kc[first], cc[first], n_class, demand, n_k, n_cells)
    arc_flow = np.zeros(len(kc), dtype=np.int64)
    arc_flow[first] = f1
    # the residual network of the first flow, over every arc (no arc of it has a reverse twin)
    out_k = np.bincount(kc, weights=arc_flow, minlength=n_k).astype(np.int64)
    in_c = np.bincount(cc, weights=arc_flow, minlength=n_cells).astype(np.int64)
    fwd = n_class[kc] - arc_flow
    rows = np.concatenate([np.full(n_k, s), np.arange(n_k), kc, n_k + cc[arc_flow > 0], n_k + np.arange(n_cells), np.full(n_cells, t)])
    cols = np.concatenate([np.arange(n_k), np.full(n_k, s), n_k + cc, kc[arc_flow > 0], np.full(n_cells, t), n_k + np.arange(n_cells)])
    caps = np.concatenate([n_class - out_k, out_k, fwd, arc_flow[arc_flow > 0], demand - in_c, in_c])
    keep = caps > 0
    graph = sp.csr_matrix((caps[keep].astype(np.int32), (rows[keep], cols[keep])), shape=(t + 1, t + 1))
    res = maximum_flow(graph, s, t)
    if res.flow_value + int(out_k.sum()) != int(n_class.sum()):
        return None
    F = sp.csr_matrix(res.flow)
    extra = _entries(F, kc, n_k + cc)
    return arc_flow + extra


def _flow(kc: np.ndarray, cc: np.ndarray, n_class: np.ndarray, demand: np.ndarray, n_k: int, n_cells: int) -> np.ndarray:
    """A maximum flow from the classes to the cells over the given arcs; per arc its flow."""
    s, t = n_k + n_cells, n_k + n_cells + 1
    rows = np.concatenate([np.full(n_k, s), kc, n_k + np.arange(n_cells)])
    cols = np.concatenate([np.arange(n_k), n_k + cc, np.full(n_cells, t)])
    caps = np.concatenate([n_class, n_class[kc], demand]).astype(np.int32)
    graph = sp.csr_matrix((caps, (rows, cols)), shape=(t + 1, t + 1))
    F = sp.csr_matrix(maximum_flow(graph, s, t).flow)
    return _entries(F, kc, n_k + cc)


def _entries(M: sp.spmatrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``M[rows[i], cols[i]]`` for every i (0 where ``M`` has no entry), as whole numbers."""
    coo = sp.coo_matrix(M)
    keys = coo.row.astype(np.int64) * M.shape[1] + coo.col
    order = np.argsort(keys)
    keys, data = keys[order], coo.data[order]
    wanted = np.asarray(rows, dtype=np.int64) * M.shape[1] + cols
    if not len(keys):
        return np.zeros(len(wanted), dtype=np.int64)
    pos = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[pos] == wanted, data[pos], 0).astype(np.int64)


def _components(kc: np.ndarray, cc: np.ndarray, flow: np.ndarray, n_k: int, n_cells: int) -> np.ndarray:
    n = n_k + n_cells
    back = flow > 0
    rows = np.concatenate([kc, n_k + cc[back]])
    cols = np.concatenate([n_k + cc, kc[back]])
    graph = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, n))
    return connected_components(graph, directed=True, connection="strong")[1]


class _ComponentGraphs:
    """The residual network of each strongly connected component, for maximum flows inside it."""

    def __init__(self, kc: np.ndarray, cc: np.ndarray, flow: np.ndarray, n_class: np.ndarray, comp: np.ndarray, n_k: int) -> None:
        head, tail_c = kc, n_k + cc
        inside = comp[head] == comp[tail_c]
        back = inside & (flow > 0)
        self.src = np.concatenate([head[inside], tail_c[back]])
        self.dst = np.concatenate([tail_c[inside], head[back]])
        self.cap = np.concatenate([n_class[head[inside]], flow[back]]).astype(np.int64)
        arc_comp = comp[self.src]
        self.order = np.argsort(arc_comp, kind="stable")
        self.first = np.searchsorted(arc_comp[self.order], np.arange(int(comp.max(initial=0)) + 2))
        self.comp = comp
        self.n_k = n_k
        self.big = int(n_class.sum()) + 1

    def reroute_all(self, queries: list[tuple[int, int, int, np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
        """Per query ``(k, v, sign, cells, sources, caps)``: the most records class ``k`` can move
        from its ``cells`` (at most ``caps`` each) to its cells ``sources`` (a mask), rerouting
        the other classes of its component. Queries are solved side by side, each in its own copy
        of its component without the class, in a few large maximum flows (one per batch)."""
        out = np.zeros(len(queries), dtype=np.int64)
        batch: list[int] = []
        size = 0
        for i, q in enumerate(queries):
            c = self.comp[q[0]]
            batch.append(i)
            size += self.first[c + 1] - self.first[c] + 2 * len(q[3])
            if size > BATCH_ARCS:
                out[batch] = self._batch([queries[j] for j in batch])
                batch, size = [], 0
        if batch:
            out[batch] = self._batch([queries[j] for j in batch])
        return out

    def _batch(self, queries: list[tuple[int, int, int, np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
        big = min(self.big, np.iinfo(np.int32).max)
        rows, cols, caps, sink_query, sink_node = [], [], [], [], []
        offset = 0
        n_nodes = self.n_k + int(self.comp.size - self.n_k)
        for i, (k, _, _, cells, sources, cap) in enumerate(queries):
            c = self.comp[k]
            arcs = self.order[self.first[c] : self.first[c + 1]]
            keep = (self.src[arcs] != k) & (self.dst[arcs] != k)
            arcs = arcs[keep]
            rows.append(offset + self.src[arcs])
            cols.append(offset + self.dst[arcs])
            caps.append(self.cap[arcs])
            nodes = offset + self.n_k + cells
            rows.append(np.full(int(sources.sum()), -1))  # from the global source
            cols.append(nodes[sources])
            caps.append(np.full(int(sources.sum()), big))
            sinks = ~sources & (cap > 0)
            rows.append(nodes[sinks])
            cols.append(np.full(int(sinks.sum()), -2))  # to the global sink
            caps.append(cap[sinks])
            sink_query.append(np.full(int(sinks.sum()), i))
            sink_node.append(nodes[sinks])
            offset += n_nodes
        s, t = offset, offset + 1
        r, c = np.concatenate(rows), np.concatenate(cols)
        r = np.where(r == -1, s, r)
        c = np.where(c == -2, t, c)
        # nodes are numbered per copy over the whole network; keep only those used
        used, local = np.unique(np.concatenate([r, c]), return_inverse=True)
        lr, lc = local[: len(r)], local[len(r) :]
        m = len(used)
        graph = sp.csr_matrix((np.minimum(np.concatenate(caps), big).astype(np.int32), (lr, lc)), shape=(m, m))
        graph.sum_duplicates()
        ls, lt = int(np.searchsorted(used, s)), int(np.searchsorted(used, t))
        flow = sp.csc_matrix(maximum_flow(graph, ls, lt).flow)
        into_t = np.asarray(flow[:, lt].todense()).ravel()
        nodes = np.searchsorted(used, np.concatenate(sink_node))
        return np.bincount(np.concatenate(sink_query), weights=into_t[nodes], minlength=len(queries)).astype(np.int64)
