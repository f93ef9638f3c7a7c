"""Gibbs sampling of the unknown columns under a forest's dual distribution, vectorised over chains.

Each group q of a :class:`~ppdm.maxent.constraints.forest_factors.ForestFactors` has the distribution
P(u, c | q) ∝ exp(−Σ_t m_t Θ[leaf_t(q, u), c] − θ_SA[s]) over the cells u of its unknown split
columns and its class c (its sensitive cell s is one of them, or the class). Persistent chains,
several per group, are updated one column at a time from the column's exact conditional, the class
summed out (collapsed Gibbs sampling: Liu 1994), in one vectorised pass over every chain and tree:

* a tree whose current path never splits on the column keeps its leaf whatever the column's
  value (:attr:`FlatTrees.first <ppdm.maxent.constraints.forest_factors.FlatTrees.first>`); the others are
  routed again from the first node on the path that does, with the column *free*: a numeric column
  as an interval of its cells, split at each threshold it meets; a categorical one as a set of its
  categories (a 64-bit mask), split by each node's branches. Each tree then gives the column's
  cells as a partition into pieces, each piece one leaf;
* a numeric column's energy is piecewise constant between the pieces' ends: its conditional is
  computed per segment between consecutive ends (a segment of ℓ cells weighs ℓ·e^{−E}, one per
  cell as the base measure says), a segment drawn, then a cell uniformly inside it; a categorical
  column's energy is summed per category (each tree's largest piece added to every category, the
  others' differences to theirs).

The chains also hold the exact conditional of the class given their cells, and of the sensitive
cell at its own update: the Rao–Blackwellised estimates (Gelfand & Smith 1990) the solver
averages.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ppdm.maxent.constraints.forest_factors import ForestFactors

#: Columns with at most this many categories are routed as sets (64-bit masks); larger ones once
#: per category.
MASK_BITS = 64


class GibbsChains:
    """Persistent chains over the unknown columns of every group (see the module docstring).

    ``per_group`` chains per group that is not a fully known individual; ``chunk_floats`` bounds the
    per-cell energy arrays of one update.
    """

    def __init__(self, f: ForestFactors, per_group: np.ndarray, rng: np.random.Generator, chunk_floats: int = 4_000_000) -> None:
        self.f, self.rng, self.chunk_floats = f, rng, chunk_floats
        self.group = np.repeat(np.arange(f.groups.n_groups), per_group)
        self.weight = (f.groups.weights / np.maximum(per_group, 1))[self.group]
        self.n_chains = len(self.group)
        self.k = f.n_classes
        self.categorical = np.array([f.forest.attributes[a].is_categorical for a in f.attributes], dtype=bool)
        self.cells = np.where(self.categorical, f.n_codes - 1, f.n_codes)
        self.columns = np.flatnonzero(f.unknown)
        self.masks = _branch_masks(f, self.categorical, self.cells)
        X = f.codes[self.group].copy()
        for j in self.columns:
            X[:, j] = rng.integers(0, self.cells[j], self.n_chains)
        self.X = X
        self.M = f.mult[self.group].astype(float)
        self.class_mask = np.zeros((self.n_chains, self.k))
        gc = f.group_class[self.group]
        self.class_mask[(gc >= 0)[:, None] & (np.arange(self.k)[None, :] != gc[:, None])] = -np.inf
        T = len(f.trees)
        rows = np.repeat(np.arange(self.n_chains), T)
        self.L = f.flat.route(self.X, rows, np.tile(f.flat.roots, self.n_chains)).reshape(self.n_chains, T)
        self.theta = np.zeros((f.flat.n_nodes, self.k))
        n_s = f.domain.sensitive.size
        self.sa_sens = np.zeros(n_s)
        self.cur = self.energy()
        self.sens_p = np.full((self.n_chains, n_s), 1.0 / n_s)
        self._class_sum: np.ndarray | None = None

    # -- energies ---------------------------------------------------------------------------------
    def energy(self) -> np.ndarray:
        """Σ_t m_t Θ[leaf_t, c] per chain and class."""
        out = np.zeros((self.n_chains, self.k))
        for c in range(self.k):
            out[:, c] = (self.M * self.theta[self.L, c]).sum(axis=1)
        return out

    def set_theta(self, theta: np.ndarray, sa_sens: np.ndarray) -> None:
        """New energies per (node, class) and sensitive cell."""
        self.theta, self.sa_sens = theta, sa_sens
        self.cur = self.energy()

    def sa_class(self) -> np.ndarray:
        return self.sa_sens if self.f.sens_is_class else np.zeros(self.k)

    def class_posterior(self) -> np.ndarray:
        """P(c | the chain's cells), per chain."""
        return softmax(-self.cur - self.sa_class()[None, :] + self.class_mask)

    # -- one sweep --------------------------------------------------------------------------------
    def sweep(self) -> None:
        """One update of every unknown column of every chain (the columns in a random order)."""
        self._class_sum = np.zeros((self.n_chains, self.k)) if self.f.sens_is_class else None
        for j in self.rng.permutation(self.columns):
            width = (int(self.cells[j]) + 1) * self.k * 4
            size = max(1, self.chunk_floats // width)
            for start in range(0, self.n_chains, size):
                self._update(int(j), np.arange(start, min(start + size, self.n_chains)))
        f = self.f
        if self._class_sum is not None:
            self.sens_p = (self._class_sum + self.class_posterior()) / (len(self.columns) + 1)
        elif f.sens_attr < 0:
            self.sens_p = np.broadcast_to(softmax(-self.sa_sens[None, :]), self.sens_p.shape)

    def _update(self, j: int, rows: np.ndarray) -> None:
        """Draw column ``j`` of the chains ``rows`` from its conditional over all its cells."""
        f, k = self.f, self.k
        Lr = self.L[rows]
        start = f.flat.first[Lr, j]
        pr, pt = np.nonzero(start >= 0)
        m = self.M[rows[pr], pt]
        r = len(rows)
        base = self.cur[rows] - per_row(pr, m[:, None] * self.theta[Lr[pr, pt]], r, k)
        if self.masks[j] is not None:
            item, leaf, mask = self._route_sets(j, rows, pr, start[pr, pt])
            v = self._draw_category(j, rows, pr, item, leaf, mask, m, base)
            hit = ((mask >> v[pr[item]].astype(np.uint64)) & np.uint64(1)).astype(bool)
        else:
            item, leaf, lo, hi = self._route_intervals(j, rows, pr, start[pr, pt])
            v = self._draw_segment(j, rows, pr, item, leaf, lo, hi, m, base)
            chosen = v[pr[item]]
            hit = (lo <= chosen) & (chosen < hi)
        new = np.empty(len(pr), dtype=np.intp)
        new[item[hit]] = leaf[hit]
        self.L[rows[pr], pt] = new
        self.cur[rows] = base + per_row(pr, m[:, None] * self.theta[new], r, k)
        self.X[rows, j] = v

    # -- routing with one column free ---------------------------------------------------------------
    def _route_sets(self, j: int, rows: np.ndarray, pr: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pair i (chain ``rows[pr[i]]``) routed from ``start[i]`` with categorical column ``j`` free:
        (pair, leaf, mask of the categories that reach it)."""
        flat, masks = self.f.flat, self.masks[j]
        assert masks is not None
        item = np.arange(len(pr))
        node = start.astype(np.intp)
        mask = np.full(len(pr), (np.uint64(1) << np.uint64(int(self.cells[j]))) - np.uint64(1), dtype=np.uint64)
        out: list[tuple[np.ndarray, ...]] = []
        while len(node):
            attr = flat.attr[node]
            done = attr < 0
            if done.any():
                out.append((item[done], node[done], mask[done]))
                item, node, mask, attr = item[~done], node[~done], mask[~done], attr[~done]
                if not len(node):
                    break
            on = attr == j
            off = ~on
            parts_i, parts_n, parts_m = [item[off]], [], [mask[off]]
            n_off = node[off]
            parts_n.append(flat.child[n_off, flat.take(n_off, self.X[rows[pr[item[off]]], attr[off]])])
            n_on, lut = node[on], flat.lut[node[on]]
            for b in range(flat.child.shape[1]):
                sub = mask[on] & masks[lut, b]
                keep = sub != 0
                parts_i.append(item[on][keep])
                parts_n.append(flat.child[n_on[keep], b])
                parts_m.append(sub[keep])
            item, node, mask = np.concatenate(parts_i), np.concatenate(parts_n), np.concatenate(parts_m)
        if not out:
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.uint64)
        return _joined(out, 3)  # type: ignore[return-value]

    def _route_intervals(self, j: int, rows: np.ndarray, pr: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, ...]:
        """The same for a numeric column (an interval [lo, hi) of its cells, split at each threshold)
        or a categorical one with too many categories for a mask (routed once per category)."""
        flat, n_cells = self.f.flat, int(self.cells[j])
        item = np.arange(len(pr))
        node = start.astype(np.intp)
        numeric = not self.categorical[j]
        if numeric:
            lo, hi = np.zeros(len(pr), dtype=np.intp), np.full(len(pr), n_cells, dtype=np.intp)
        else:
            item, node = np.repeat(item, n_cells), np.repeat(node, n_cells)
            lo = np.tile(np.arange(n_cells, dtype=np.intp), len(pr))
            hi = lo + 1
        out: list[tuple[np.ndarray, ...]] = []
        while len(node):
            attr = flat.attr[node]
            done = attr < 0
            if done.any():
                out.append((item[done], node[done], lo[done], hi[done]))
                keep = ~done
                item, node, lo, hi, attr = item[keep], node[keep], lo[keep], hi[keep], attr[keep]
                if not len(node):
                    break
            on = attr == j
            code = np.where(on, lo, self.X[rows[pr[item]], np.where(on, 0, attr)])
            branch = flat.take(node, code)
            if not numeric or not on.any():
                node = flat.child[node, branch]
                continue
            cut = flat.cut[node[on]] + 1
            l_lo, l_hi = lo[on], np.minimum(hi[on], cut)
            r_lo, r_hi = np.maximum(lo[on], cut), hi[on]
            lft, rgt = l_lo < l_hi, r_lo < r_hi
            kids = flat.child[node[on]]
            off = ~on
            item = np.concatenate([item[off], item[on][lft], item[on][rgt]])
            node = np.concatenate([flat.child[node[off], branch[off]], kids[lft, 0], kids[rgt, 1]])
            lo = np.concatenate([lo[off], l_lo[lft], r_lo[rgt]])
            hi = np.concatenate([hi[off], l_hi[lft], r_hi[rgt]])
        return _joined(out, 4)

    # -- drawing a cell -----------------------------------------------------------------------------
    def _draw_category(
        self, j: int, rows: np.ndarray, pr: np.ndarray, item: np.ndarray, leaf: np.ndarray, mask: np.ndarray, m: np.ndarray, base: np.ndarray,
    ) -> np.ndarray:
        """A category per chain from the conditional of column ``j`` (dense over its categories)."""
        k, n, r = self.k, int(self.cells[j]), len(rows)
        e = m[item][:, None] * self.theta[leaf]
        # each pair's largest piece counts for every category, the others by their difference
        order = np.lexsort((-np.bitwise_count(mask).astype(np.int64), item))
        first = np.r_[True, item[order][1:] != item[order][:-1]] if len(item) else np.zeros(0, dtype=bool)
        default = np.zeros((len(pr), k))
        default[item[order][first]] = e[order][first]
        E = base + per_row(pr, default, r, k)
        E = np.repeat(E[:, None, :], n, axis=1)
        others = order[~first]
        if len(others):
            bits = np.unpackbits(mask[others].view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")[:, :n]
            at, cat = np.nonzero(bits)
            idx = pr[item[others]][at] * n + cat
            delta = e[others][at] - default[item[others]][at]
            flat = E.reshape(r * n, k)
            for c in range(k):
                flat[:, c] += np.bincount(idx, weights=delta[:, c], minlength=r * n)
        joint = -E - self.sa_class()[None, None, :] + self.class_mask[rows][:, None, :]
        if self._class_sum is not None:
            self._class_sum[rows] += softmax(logsumexp(joint.transpose(0, 2, 1)))
        logit = logsumexp(joint)
        if j == self.f.sens_attr:
            logit = logit - self.sa_sens[None, :]
            self.sens_p[rows] = softmax(logit)
        return np.argmax(logit + self.rng.gumbel(size=logit.shape), axis=1)

    def _draw_segment(
        self, j: int, rows: np.ndarray, pr: np.ndarray, item: np.ndarray, leaf: np.ndarray, lo: np.ndarray, hi: np.ndarray,
        m: np.ndarray, base: np.ndarray,
    ) -> np.ndarray:
        """A cell per chain from the conditional of column ``j``, segment by segment between the
        pieces' ends (every cell its own segment when ``j`` is the sensitive column)."""
        k, n, r = self.k, int(self.cells[j]), len(rows)
        e = m[item][:, None] * self.theta[leaf]
        sens = j == self.f.sens_attr
        every = np.arange(r) if not sens else np.repeat(np.arange(r), n + 1)
        ends = np.zeros(r, dtype=np.intp) if not sens else np.tile(np.arange(n + 1), r)
        ev_row = np.concatenate([pr[item], pr[item], every, np.arange(r)])
        ev_pos = np.concatenate([lo, hi, ends, np.full(r, n)])
        ev_e = np.concatenate([e, -e, np.zeros((len(every) + r, k))])
        key = ev_row.astype(np.int64) * (n + 1) + ev_pos
        order = np.argsort(key, kind="stable")
        key = key[order]
        total = np.cumsum(ev_e[order], axis=0)
        last = np.r_[key[1:] != key[:-1], True]
        seg_key, seg_E = key[last], total[last]
        seg_row, seg_pos = seg_key // (n + 1), seg_key % (n + 1)
        length = np.r_[seg_pos[1:], 0] - seg_pos
        valid = seg_pos < n
        seg_row, seg_pos, seg_E, length = seg_row[valid], seg_pos[valid], seg_E[valid], length[valid]
        joint = -(base[seg_row] + seg_E) - self.sa_class()[None, :] + self.class_mask[rows][seg_row] + np.log(length)[:, None]
        starts = np.flatnonzero(np.r_[True, seg_row[1:] != seg_row[:-1]])
        if self._class_sum is not None:
            top = np.maximum.reduceat(joint, starts, axis=0)
            top[~np.isfinite(top)] = 0.0
            spread = np.exp(joint - top[np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(seg_row)]))])
            with np.errstate(divide="ignore"):
                per_class = np.log(np.add.reduceat(spread, starts, axis=0)) + top
            self._class_sum[rows[seg_row[starts]]] += softmax(per_class)
        logit = logsumexp(joint)
        if sens:
            logit = logit - self.sa_sens[seg_pos]
            dense = np.full((r, n), -np.inf)
            dense[seg_row, seg_pos] = logit
            self.sens_p[rows] = softmax(dense)
        score = logit + self.rng.gumbel(size=len(logit))
        best = np.maximum.reduceat(score, starts)
        win = np.flatnonzero(score == best[seg_row])
        win = win[np.r_[True, seg_row[win][1:] != seg_row[win][:-1]]]
        return (seg_pos[win] + np.floor(self.rng.random(len(win)) * length[win]).astype(np.intp)).astype(np.intp)

    # -- what the rows see ------------------------------------------------------------------------
    def leaf_counts(self) -> np.ndarray:
        """N (nodes × classes): the chains' weighted leaf counts, the class summed out exactly."""
        pc = self.class_posterior()
        k = self.k
        out = np.zeros((self.f.flat.n_nodes, k))
        wm = self.weight[:, None] * self.M
        for c in range(k):
            out[:, c] = np.bincount(self.L.ravel(), weights=(wm * pc[:, c : c + 1]).ravel(), minlength=self.f.flat.n_nodes)
        return out

    def sa_values(self) -> np.ndarray:
        """The chains' weighted distribution of the sensitive cell."""
        return np.asarray(self.weight @ self.sens_p)


def _branch_masks(f: ForestFactors, categorical: np.ndarray, cells: np.ndarray) -> list[np.ndarray | None]:
    """Per column: for a categorical column of at most :data:`MASK_BITS` categories, per categorical
    node (``lut`` row) and branch, the mask of the categories it sends down the branch."""
    flat = f.flat
    out: list[np.ndarray | None] = []
    lut_attr = np.full(len(flat.branch), -1, dtype=np.intp)
    has = flat.lut >= 0
    lut_attr[flat.lut[has]] = flat.attr[has]
    width = flat.child.shape[1]
    for j in range(len(f.attributes)):
        n = int(cells[j])
        if not categorical[j] or n > MASK_BITS:
            out.append(None)
            continue
        masks = np.zeros((len(flat.branch), width), dtype=np.uint64)
        rows = np.flatnonzero(lut_attr == j)
        for v in range(n):
            b = flat.branch[rows, v]
            masks[rows, b] |= np.uint64(1) << np.uint64(v)
        out.append(masks)
    return out


def _joined(parts: Sequence[tuple[np.ndarray, ...]], n: int) -> tuple[np.ndarray, ...]:
    if not parts:
        return tuple(np.zeros(0, dtype=np.intp) for _ in range(n))
    return tuple(np.concatenate(p) for p in zip(*parts))


def per_row(pr: np.ndarray, values: np.ndarray, r: int, k: int) -> np.ndarray:
    """Sums of ``values`` (pairs × k) per row ``pr`` (of ``r``)."""
    out = np.empty((r, k))
    for c in range(k):
        out[:, c] = np.bincount(pr, weights=values[:, c], minlength=r)
    return out


def logsumexp(logit: np.ndarray) -> np.ndarray:
    """log Σ exp over the last axis (−inf where every term is)."""
    top = logit.max(axis=-1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    with np.errstate(divide="ignore"):
        return np.log(np.exp(logit - top).sum(axis=-1)) + top[..., 0]


def softmax(logit: np.ndarray) -> np.ndarray:
    """exp(logit) normalised over the last axis."""
    top = logit.max(axis=-1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    e = np.exp(logit - top)
    return e / e.sum(axis=-1, keepdims=True)
