"""Sound possible values under partial knowledge: per person, what a published forest still allows.

The attacker knows some columns of each training record and holds the model. A record lands, in
every tree that holds it, in one leaf; that leaf's published counts must make room for it (the
sound rule of :mod:`ppdm.attacks.leaf.leaves`: a tree that drew the record ``m`` times holds at least
``m`` rows of the record's class in that leaf). A value of the sensitive attribute is *possible*
for the record when some completion of its unknown columns reaches, in every tree holding it, a
leaf whose counts allow it; a record with one possible value is *certain*.

Deciding that exactly is a constraint satisfaction problem per record (CSP): a variable per
unknown column (its cells: the intervals every tree's thresholds cut, or its categories), the
class when unknown, and one constraint per tree: "the completion reaches an allowed leaf", a union
of boxes. It is solved in two steps, both vectorised over the records:

1. **Generalized arc consistency** (propagation). For each tree, the records are routed down with
   their current domains (a branch is taken when some value left in the domain takes it, path
   by path, as :func:`ppdm.tree.routing.reachable_leaves` routes an unknown attribute); the
   leaves reached whose counts allow the record are its *supports*, and each variable keeps only
   the cells some support's box allows. Every tree narrows every record; the passes repeat until
   nothing changes (or ``max_passes``). Only values no completion can take are removed, so the
   truth always survives and the result is a superset of the exact possible set: a record left
   with one value is certain, proved.
2. **Search** (optional, per record, within a budget): each value left is fixed in turn and the
   other variables are split until every domain is one cell (a witness: a completion every tree
   allows) or empty (the value is impossible). Values the budget leaves undecided stay possible
   (``decided`` says which records are exact).

Rows the counts tie together (two records cannot both fill a leaf of count 1) are the exact
audit's business (:mod:`ppdm.exact`); this is what each record alone proves, at any number of
trees: the cost grows with the leaves a record can reach in each tree, never with their product.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.scope import Scope
from ppdm.attacks.core.threat import ThreatModel, audited, checked_threat
from ppdm.attacks.leaf.leaves import row_multiplicities
from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, check_options
from ppdm.maxent.table.forest_types import split_component
from ppdm.maxent.table.unknowns import Component, sensitive_component
from ppdm.metrics.baseline import prior_distribution
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest, as_forest
from ppdm.tree.model import Tree
from ppdm.tree.splits import ThresholdSplit

__all__ = ["PossibleOptions", "PossibleValues", "possible_attack", "possible_values"]

#: Counts read from stored fractions are whole up to rounding (as in :mod:`ppdm.attacks.leaf.leaves`).
TOLERANCE = 1e-6


@dataclass(frozen=True)
class PossibleOptions:
    """Settings of :func:`possible_values`.

    ``max_passes``: propagation passes over every tree (stopping early is still sound: fewer
    values removed). ``search_nodes``: per record, the most search nodes spent proving its values
    possible (0: propagation only; the result is then exact only where one value is left).
    ``chunk``: records propagated together (memory grows with it).
    """

    max_passes: int = 50
    search_nodes: int = 0
    chunk: int = 20_000

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


@dataclass
class PossibleValues:
    """Per record, the sensitive values still possible (records × values, boolean).

    ``certain``: one value left (proved). ``decided``: the row is the exact possible set (the
    search proved every value left possible), not only a superset. ``values``: the sensitive
    attribute's cells (its categories, the classes, or the intervals the trees cut).
    ``trees_used``: the trees whose counts could be tied to the records. ``passes``: propagation
    passes run; ``converged``: the last pass changed nothing.
    """

    sensitive: str
    values: tuple
    possible: np.ndarray
    decided: np.ndarray
    trees_used: int
    passes: int
    converged: bool
    true_codes: np.ndarray | None = None
    details: dict = field(default_factory=dict)

    @property
    def certain(self) -> np.ndarray:
        return self.possible.sum(axis=1) == 1

    @property
    def n_possible(self) -> np.ndarray:
        return self.possible.sum(axis=1)

    def truth_kept(self) -> bool:
        """Every record's true value is among its possible ones (always, for the training table)."""
        if self.true_codes is None:
            return True
        return bool(self.possible[np.arange(len(self.possible)), self.true_codes].all())


# -- the variables --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Variables:
    """The CSP's variables: one component per split attribute of the forest (known or not), the
    sensitive attribute and the class; ``known`` marks those whose cell each record gives."""

    components: tuple[Component, ...]
    known: np.ndarray
    sensitive: int
    klass: int

    def index(self, name: str) -> int:
        return [c.name for c in self.components].index(name)


def _variables(forest: Forest, data: pd.DataFrame, known: Sequence[str], sensitive: str) -> _Variables:
    split = list(forest.split_attributes)
    comps = [split_component(forest, name) for name in split]
    klass = forest.class_attribute
    if sensitive == klass:
        s = len(comps)
        comps.append(Component(klass, "sensitive", tuple(forest.classes), in_tree=False))
        c = s
    else:
        if sensitive in split:
            s = split.index(sensitive)
        else:
            s = len(comps)
            comps.append(sensitive_component(forest.trees[0], data, sensitive))
        c = len(comps)
        comps.append(Component(klass, "class", tuple(forest.classes), in_tree=False))
    names = [comp.name for comp in comps]
    known_mask = np.array([n in set(known) and n != sensitive for n in names])
    return _Variables(tuple(comps), known_mask, s, c)


# -- one tree, compiled ---------------------------------------------------------------------------


@dataclass
class _CompiledTree:
    """One tree as arrays: per node its split variable (−1: a leaf) and edges; per edge the cells of
    the split variable the path allows below it (a cell range for a numeric variable, a mask
    otherwise); per leaf the cells every variable's path allows and what its counts allow."""

    node_var: np.ndarray
    edge_ptr: np.ndarray
    edge_child: np.ndarray
    edge_lo: np.ndarray
    edge_hi: np.ndarray
    edge_mask: np.ndarray  # edges × max cells (categorical edges; unused for numeric)
    leaf_of_node: np.ndarray
    leaf_ranges: dict[int, tuple[np.ndarray, np.ndarray]]  # numeric variable -> per leaf (lo, hi)
    leaf_masks: dict[int, np.ndarray]  # categorical variable -> leaves × cells
    counts: np.ndarray | None  # leaves × classes: class counts (exact or positive-only), or None
    sizes: np.ndarray | None  # leaves: sample counts (when no class counts), or None
    exact: bool
    numeric: frozenset[int] = frozenset()


def _cell_branches(split: object, comp: Component) -> np.ndarray:
    """The branch every cell of ``comp`` takes at ``split`` (cells are routed whole)."""
    if isinstance(split, ThresholdSplit):
        t = comp.thresholds
        assert t is not None
        reps = np.r_[t, (t[-1] + 1.0 + abs(t[-1])) if len(t) else 0.0]
        return split.branch(reps)
    return split.lookup(comp.cells)[: comp.size]  # type: ignore[attr-defined]


def _compile(tree: Tree, variables: _Variables) -> _CompiledTree:
    comps = variables.components
    var_of = {c.name: i for i, c in enumerate(comps)}
    width = max(c.size for c in comps)
    n_nodes = tree.n_nodes
    node_var = np.full(n_nodes, -1, dtype=np.intp)
    edge_ptr = np.zeros(n_nodes + 1, dtype=np.intp)
    leaves = [n.id for n in tree.nodes if n.is_leaf]
    leaf_of_node = np.full(n_nodes, -1, dtype=np.intp)
    leaf_of_node[leaves] = np.arange(len(leaves))
    numeric = {i for i, c in enumerate(comps) if c.is_numeric}
    split_vars = {var_of[n.split.attribute] for n in tree.nodes if n.split is not None}
    leaf_ranges = {v: (np.zeros(len(leaves), np.intp), np.full(len(leaves), comps[v].size - 1, np.intp)) for v in split_vars & numeric}
    leaf_masks = {v: np.ones((len(leaves), comps[v].size), dtype=bool) for v in split_vars - numeric}
    # what the path to each node allows: per numeric variable a cell range, per other a mask
    # (built root first: a node's depth exceeds its parent's)
    ranges: dict[int, dict[int, tuple[int, int]]] = {tree.root.id: {}}
    sets: dict[int, dict[int, np.ndarray]] = {tree.root.id: {}}
    edges: list[tuple[int, int, int, int, np.ndarray]] = []  # parent, child, lo, hi, mask
    for node in sorted(tree.nodes, key=lambda n: n.depth):
        path_ranges, path_sets = ranges.pop(node.id), sets.pop(node.id)
        if node.split is None:
            leaf = leaf_of_node[node.id]
            for v, (a, z) in path_ranges.items():
                leaf_ranges[v][0][leaf], leaf_ranges[v][1][leaf] = a, z
            for v, m in path_sets.items():
                leaf_masks[v][leaf] = m
            continue
        v = var_of[node.split.attribute]
        node_var[node.id] = v
        branch = _cell_branches(node.split, comps[v])
        for b, kid in enumerate(node.children):
            goes = branch == b
            ranges[kid], sets[kid] = path_ranges, path_sets
            row = np.zeros(width, dtype=bool)
            if v in numeric:
                cells = np.flatnonzero(goes)
                above = path_ranges.get(v, (0, comps[v].size - 1))
                a, z = (max(int(cells[0]), above[0]), min(int(cells[-1]), above[1])) if len(cells) else (1, 0)
                ranges[kid] = {**path_ranges, v: (a, z)}
                edges.append((node.id, kid, a, z, row))
            else:
                m = goes & path_sets.get(v, np.ones(comps[v].size, dtype=bool))
                row[: comps[v].size] = m
                sets[kid] = {**path_sets, v: m}
                edges.append((node.id, kid, 0, -1, row))
        edge_ptr[node.id + 1] = len(node.children)
    counts, sizes, exact = _leaf_counts(tree, leaves)
    edges.sort(key=lambda e: e[0])  # grouped by parent id (stable: children in branch order)
    parent, child, lo, hi, masks = zip(*edges) if edges else ((), (), (), (), ())
    return _CompiledTree(
        node_var, np.cumsum(edge_ptr), np.array(child, dtype=np.intp), np.array(lo, dtype=np.intp),
        np.array(hi, dtype=np.intp), np.array(masks, dtype=bool).reshape(len(child), width), leaf_of_node,
        leaf_ranges, leaf_masks, counts, sizes, exact, frozenset(numeric),
    )


def _leaf_counts(tree: Tree, leaves: list[int]) -> tuple[np.ndarray | None, np.ndarray | None, bool]:
    """What the leaves publish that bounds who is in them: class counts (exact, or only their
    being positive: error rates of more than two classes), else sample counts, else nothing."""
    k = len(tree.classes)
    nodes = [tree.nodes[i] for i in leaves]
    if tree.disclosure is Disclosure.CLASS_COUNTS and all(n.counts is not None for n in nodes):
        return np.array([n.counts for n in nodes], dtype=float), None, True
    n = [node.n_samples for node in nodes]
    e = [node.n_errors for node in nodes]
    if all(v is not None for v in n) and all(v is not None for v in e):
        out = np.zeros((len(nodes), k))
        for i, node in enumerate(nodes):  # the label holds n − e, each other class at most e
            out[i] = e[i]
            out[i, node.label] = n[i] - e[i]  # type: ignore[operator]
        return out, None, k <= 2
    if all(v is not None for v in n):
        return None, np.array(n, dtype=float), True
    return None, None, True


# -- propagation ----------------------------------------------------------------------------------
#
# A record's domain holds, per variable, either a mask over its cells (categorical variables, the
# class and the sensitive attribute: records × cells, boolean) or, for a numeric split attribute,
# a range of cells (records × 2: first and last cell). A range keeps the hull of what the leaves
# support (bounds consistency): weaker than a mask by the holes it fills, never unsound, and its
# cost does not grow with the thousands of cells a hundred trees' thresholds cut.


@dataclass
class _Domains:
    """Per variable, each record's cells still possible: masks and ranges (see above)."""

    masks: dict[int, np.ndarray]
    ranges: dict[int, np.ndarray]

    def __len__(self) -> int:
        first = next(iter(self.masks.values()))
        return len(first)

    def take(self, rows: np.ndarray) -> _Domains:
        return _Domains({v: d[rows] for v, d in self.masks.items()}, {v: r[rows] for v, r in self.ranges.items()})

    def copy(self) -> _Domains:
        return _Domains({v: d.copy() for v, d in self.masks.items()}, {v: r.copy() for v, r in self.ranges.items()})

    def put(self, rows: np.ndarray, other: _Domains) -> None:
        for v, d in other.masks.items():
            self.masks[v][rows] = d
        for v, r in other.ranges.items():
            self.ranges[v][rows] = r

    def sizes(self) -> np.ndarray:
        """Records × variables: how many cells each domain holds (0: wiped out)."""
        cols = [d.sum(axis=1) for d in self.masks.values()]
        cols += [np.maximum(r[:, 1] - r[:, 0] + 1, 0) for r in self.ranges.values()]
        return np.column_stack(cols)

    def variables(self) -> list[int]:
        return [*self.masks, *self.ranges]

    def signature(self) -> np.ndarray:
        """One byte row per record: equal rows, equal domains."""
        parts = [np.packbits(d, axis=1) for d in self.masks.values()]
        parts += [np.ascontiguousarray(r, dtype=np.int32).view(np.uint8) for r in self.ranges.values()]
        return np.concatenate(parts, axis=1)

    def changed(self, other: _Domains) -> np.ndarray:
        out = np.zeros(len(self), dtype=bool)
        for v, d in self.masks.items():
            out |= (d != other.masks[v]).any(axis=1)
        for v, r in self.ranges.items():
            out |= (r != other.ranges[v]).any(axis=1)
        return out


def _route(ct: _CompiledTree, dom: _Domains, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (state, leaf) pairs the states' domains can reach, path by path."""
    s = states
    node = np.zeros(len(s), dtype=np.intp)
    out_s, out_leaf = [], []
    while len(s):
        var = ct.node_var[node]
        at_leaf = var < 0
        if at_leaf.any():
            out_s.append(s[at_leaf])
            out_leaf.append(ct.leaf_of_node[node[at_leaf]])
        s, node, var = s[~at_leaf], node[~at_leaf], var[~at_leaf]
        if not len(s):
            break
        first, n = ct.edge_ptr[node], ct.edge_ptr[node + 1] - ct.edge_ptr[node]
        edge = np.repeat(first, n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
        s, var = np.repeat(s, n), np.repeat(var, n)
        alive = np.zeros(len(edge), dtype=bool)
        for v in np.unique(var):
            sel = np.flatnonzero(var == v)
            e, st = edge[sel], s[sel]
            if v in dom.ranges:
                r = dom.ranges[v][st]
                alive[sel] = np.maximum(r[:, 0], ct.edge_lo[e]) <= np.minimum(r[:, 1], ct.edge_hi[e])
            elif v in ct.numeric:
                cs = _prefix(dom.masks[v][st])
                rows = np.arange(len(st))
                alive[sel] = cs[rows, ct.edge_hi[e] + 1] > cs[rows, ct.edge_lo[e]]
            else:
                d = dom.masks[v][st]
                alive[sel] = (d & ct.edge_mask[e, : d.shape[1]]).any(axis=1)
        s, node = s[alive], ct.edge_child[edge[alive]]
    if not out_s:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    return np.concatenate(out_s), np.concatenate(out_leaf)


def _prefix(mask: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros((len(mask), 1), dtype=np.int32), np.cumsum(mask, axis=1, dtype=np.int32)], axis=1)


def _allowed(ct: _CompiledTree, leaf: np.ndarray, m: np.ndarray, class_domain: np.ndarray) -> np.ndarray:
    """Pairs × classes: the classes a record drawn ``m`` times may have in ``leaf``, within its class domain."""
    if ct.counts is not None:
        c = ct.counts[leaf]
        ok = c >= m[:, None] - TOLERANCE if ct.exact else c > TOLERANCE
        return ok & class_domain
    if ct.sizes is not None:
        return (ct.sizes[leaf] >= m - TOLERANCE)[:, None] & class_domain
    return class_domain.copy()


def _tree_supports(ct: _CompiledTree, states: _Domains, key_state: np.ndarray, key_m: np.ndarray, klass: int) -> _Domains:
    """Per key (a domain state and a multiplicity ``m ≥ 1``), the cells of every variable the tree
    splits on, and of the class, that some leaf the state reaches and its counts allow supports
    (a range: the hull of the supporting leaves' ranges). Variables the tree does not split on are
    left out (the tree supports their whole domain)."""
    n_keys = len(key_state)
    ps, pl = _route(ct, states, np.unique(key_state))
    order = np.argsort(ps, kind="stable")
    ps, pl = ps[order], pl[order]
    per_state = np.bincount(ps, minlength=len(states))
    start = np.r_[0, np.cumsum(per_state)[:-1]]
    n = per_state[key_state]
    pos = np.repeat(start[key_state], n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    key, leaf = np.repeat(np.arange(n_keys), n), pl[pos]
    allowed = _allowed(ct, leaf, key_m[key], states.masks[klass][key_state[key]])
    keep = allowed.any(axis=1)
    key, leaf, allowed = key[keep], leaf[keep], allowed[keep]
    out = _Domains({}, {})
    k = allowed.shape[1]
    flat = (key[:, None] * k + np.arange(k)).ravel()
    out.masks[klass] = np.bincount(flat, weights=allowed.ravel(), minlength=n_keys * k).reshape(n_keys, k) > 0
    for v, (lo, hi) in ct.leaf_ranges.items():
        if v in states.ranges:
            out.ranges[v] = _hull(key, lo[leaf], hi[leaf], states.ranges[v][key_state], n_keys)
        else:
            size = states.masks[v].shape[1] + 1
            diff = np.bincount(key * size + lo[leaf], minlength=n_keys * size) - np.bincount(key * size + hi[leaf] + 1, minlength=n_keys * size)
            out.masks[v] = np.cumsum(diff.reshape(n_keys, size), axis=1)[:, :-1] > 0
    for v, mask in ct.leaf_masks.items():
        hits = sp.csr_matrix((np.ones(len(key)), (key, leaf)), shape=(n_keys, len(mask)))
        out.masks[v] = np.asarray(hits @ mask.astype(float)) > 0
    return out


def _hull(key: np.ndarray, lo: np.ndarray, hi: np.ndarray, domain: np.ndarray, n_keys: int) -> np.ndarray:
    """Per key, the smallest range holding every supporting leaf's range within the key's domain
    (``key`` sorted; a key with no supporting leaf gets an empty range)."""
    out = np.column_stack([np.ones(n_keys, dtype=np.int64), np.zeros(n_keys, dtype=np.int64)])
    if not len(key):
        return out
    d = domain[key]
    a, z = np.maximum(lo, d[:, 0]), np.minimum(hi, d[:, 1])
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    keys = key[starts]
    out[keys, 0] = np.minimum.reduceat(a, starts)
    out[keys, 1] = np.maximum.reduceat(z, starts)
    return out


def _narrowed(dom: _Domains, held: np.ndarray, support: _Domains, key_of: np.ndarray) -> None:
    """``dom`` (in place) intersected, on rows ``held``, with each row's key's support."""
    for v, sup in support.masks.items():
        dom.masks[v][held] &= sup[key_of]
    for v, sup in support.ranges.items():
        r = dom.ranges[v]
        r[held, 0] = np.maximum(r[held, 0], sup[key_of, 0])
        r[held, 1] = np.minimum(r[held, 1], sup[key_of, 1])


def _propagate(trees: list[_CompiledTree], mults: list[np.ndarray], domains: _Domains, klass: int, max_passes: int) -> tuple[_Domains, int, bool]:
    """Generalized arc consistency to a fixpoint (or ``max_passes``): in each pass every tree's
    supports, from the pass's domains, are intersected. Records are routed once per distinct
    domain state (records of one known-value group share theirs until their counts tell them
    apart), and a pass only revisits the records the last one changed: a record's supports depend
    on its own domains alone."""
    domains = domains.copy()
    active = np.arange(len(domains))
    for done in range(1, max_passes + 1):
        sub = domains.take(active)
        first, state_of = _distinct(sub.signature())
        states = sub.take(first)
        new = sub.copy()
        for ct, m in zip(trees, mults):
            mm = m[active]
            held = np.flatnonzero(mm > 0)
            if not len(held):
                continue
            _, key_first, key_of = np.unique(state_of[held] * (int(mm.max()) + 1) + mm[held], return_index=True, return_inverse=True)
            support = _tree_supports(ct, states, state_of[held][key_first], mm[held][key_first], klass)
            _narrowed(new, held, support, key_of.ravel())
        changed = new.changed(sub)
        domains.put(active, new)
        active = active[changed]
        if not len(active):
            return domains, done, True
    return domains, max_passes, False


def _distinct(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first of each distinct row of a byte matrix, and each row's index among them."""
    a = np.ascontiguousarray(rows)
    view = a.view(np.dtype((np.void, a.shape[1]))).ravel()
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    return first, inverse.ravel()


# -- search ---------------------------------------------------------------------------------------


def _search(trees: list[_CompiledTree], mults: list[np.ndarray], domains: _Domains, variables: _Variables, options: PossibleOptions) -> tuple[np.ndarray, np.ndarray]:
    """Each record's possible sensitive cells made exact where ``options.search_nodes`` allows:
    every (record, value) left is a probe with the value fixed; probes are propagated together,
    a wiped-out probe is dropped, a probe whose every domain is one cell is a witness (the value
    is possible), the others are split in two on their largest domain. Returns the possible cells
    and, per record, whether the row is exact."""
    s, klass = variables.sensitive, variables.klass
    rec, val = np.nonzero(domains.masks[s])
    n_pairs = len(rec)
    proved = np.zeros(n_pairs, dtype=bool)
    abandoned = np.zeros(n_pairs, dtype=bool)
    spent = np.zeros(n_pairs, dtype=np.int64)
    owner = np.arange(n_pairs)
    probe = domains.take(rec)
    probe.masks[s][:] = False
    probe.masks[s][owner, val] = True
    while len(owner):
        probe, _, _ = _propagate(trees, [m[rec[owner]] for m in mults], probe, klass, options.max_passes)
        sizes = probe.sizes()
        empty = (sizes == 0).any(axis=1)
        solved = ~empty & (sizes.max(axis=1) == 1)
        proved[owner[solved]] = True
        np.add.at(spent, owner, 1)
        open_ = ~empty & ~solved & ~proved[owner]
        over = open_ & (spent[owner] >= options.search_nodes)
        abandoned[owner[over]] = True
        live = np.flatnonzero(open_ & ~over)
        if not len(live):
            break
        owner, probe = _split(probe.take(live), owner[live], sizes[live])
    keep = proved | abandoned
    possible = np.zeros_like(domains.masks[s])
    possible[rec[keep], val[keep]] = True
    undecided = np.bincount(rec[abandoned & ~proved], minlength=len(possible)) > 0
    return possible, ~undecided


def _split(probe: _Domains, owner: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, _Domains]:
    """Each probe split in two on its largest domain: the first half of its cells, and the rest."""
    order = probe.variables()
    var = np.asarray(order)[np.argmax(sizes, axis=1)]
    first, second = probe.copy(), probe.copy()
    for j, v in enumerate(order):
        rows = np.flatnonzero(var == v)
        if not len(rows):
            continue
        half = sizes[rows, j] // 2
        if v in probe.ranges:
            r = probe.ranges[v][rows]
            first.ranges[v][rows, 1] = r[:, 0] + half - 1
            second.ranges[v][rows, 0] = r[:, 0] + half
        else:
            d = probe.masks[v][rows]
            low = d & (np.cumsum(d, axis=1) <= half[:, None])
            first.masks[v][rows] = low
            second.masks[v][rows] = d & ~low
    both = _Domains(
        {v: np.concatenate([first.masks[v], second.masks[v]]) for v in probe.masks},
        {v: np.concatenate([first.ranges[v], second.ranges[v]]) for v in probe.ranges},
    )
    return np.r_[owner, owner], both


# -- the entry point ------------------------------------------------------------------------------


def _initial(variables: _Variables, known_codes: dict[int, np.ndarray], rows: np.ndarray) -> _Domains:
    """Every record's domains before propagation: its cell where the column is known, every cell otherwise."""
    comps = variables.components
    masks, ranges = {}, {}
    for v, c in enumerate(comps):
        codes = known_codes.get(v)
        if c.is_numeric and v != variables.sensitive:
            r = np.column_stack([np.zeros(len(rows), dtype=np.int64), np.full(len(rows), c.size - 1, dtype=np.int64)])
            if codes is not None:
                r[:, 0] = r[:, 1] = codes[rows]
            ranges[v] = r
        else:
            m = np.ones((len(rows), c.size), dtype=bool)
            if codes is not None:
                m[:] = False
                m[np.arange(len(rows)), codes[rows]] = True
            masks[v] = m
    return _Domains(masks, ranges)


def possible_values(
    model: Tree | Forest,
    data: pd.DataFrame,
    known: Sequence[str],
    sensitive: str,
    options: PossibleOptions = PossibleOptions(),
    progress: Callable[[int, int], None] | None = None,
) -> PossibleValues:
    """Per record of ``data`` (the training rows, in fitting order when the forest records
    multiplicities), the sensitive values some completion of its unknown columns allows in every
    tree that holds it (see the module docstring). ``known``: the columns the attacker has (the
    class among them when it is known). ``progress(done, total)`` after each chunk of records."""
    forest = as_forest(model)
    missing = [c for c in known if c not in data.columns]
    if missing:
        raise DataError(f"known column(s) missing from the data: {', '.join(map(repr, missing))}")
    variables = _variables(forest, data, known, sensitive)
    comps = variables.components
    mults, used = [], []
    for t in range(forest.n_trees):
        m = np.ones(len(data), dtype=np.int64) if isinstance(model, Tree) else row_multiplicities(forest, t, len(data))
        if m is not None:
            mults.append(np.asarray(m, dtype=np.int64))
            used.append(t)
    compiled = [_compile(forest.trees[t], variables) for t in used]
    known_codes = {int(i): comps[i].codes(data[comps[i].name]) for i in np.flatnonzero(variables.known)}
    n, s = len(data), variables.sensitive
    possible = np.zeros((n, comps[s].size), dtype=bool)
    decided = np.zeros(n, dtype=bool)
    passes, converged = 0, True
    chunks = range(0, n, max(options.chunk, 1))
    for i, lo in enumerate(chunks):
        rows = np.arange(lo, min(lo + options.chunk, n))
        domains, p, ok = _propagate(compiled, [m[rows] for m in mults], _initial(variables, known_codes, rows), variables.klass, options.max_passes)
        passes, converged = max(passes, p), converged and ok
        possible[rows] = domains.masks[s]
        if options.search_nodes > 0:
            several = np.flatnonzero(domains.masks[s].sum(axis=1) > 1)
            decided[rows] = True
            if len(several):
                cells, exact = _search(compiled, [m[rows[several]] for m in mults], domains.take(several), variables, options)
                possible[rows[several]], decided[rows[several]] = cells, exact
        if progress is not None:
            progress(i + 1, len(chunks))
    true_codes = comps[s].codes(data[comps[s].name]) if comps[s].name in data.columns else None
    decided |= possible.sum(axis=1) <= 1
    method = "arc consistency" + (" and search" if options.search_nodes else "")
    return PossibleValues(
        sensitive, comps[s].cells, possible, decided, len(used), passes, converged, true_codes,
        {"trees": forest.n_trees, "trees_used": len(used), "method": method, "scope": Scope.of_forest(forest.n_trees, sorted(set(range(forest.n_trees)) - set(used)))},
    )


def possible_attack(
    model: Tree | Forest,
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
    options: PossibleOptions = PossibleOptions(),
    progress: Callable[[int, int], None] | None = None,
) -> AttackResult:
    """The sound attack under any threat model: each person's possible values
    (:func:`possible_values`), weighted by the table's distribution of the sensitive attribute
    (the prior); a person with one possible value is certain (proved, never wrong on the training
    table). The sensitive attribute may be the class or an input, known columns any.

    It never says less than the prior (a value it rules out is not the person's), and it is what
    a leaf attack reads over a forest when the sensitive attribute is an input (paper 003's
    homogeneity: one value left), or when the maximum-entropy table would be too large to build.
    """
    return _attack(model, data, checked_threat("possible_attack", threat), options, progress)


def _attack(model: Tree | Forest, data: pd.DataFrame, threat: ThreatModel | None, options: PossibleOptions, progress: Callable[[int, int], None] | None) -> AttackResult:
    resolved = (threat or ThreatModel()).resolve(data, model.class_attribute, splits=model.split_attributes)
    model = audited(model, resolved.publish)
    known = [c for c in (resolved.known or ()) if c != resolved.sensitive]
    sensitive = str(resolved.sensitive)
    pv = possible_values(model, data, known, sensitive, options, progress)
    signature = _distinct(np.packbits(pv.possible, axis=1))[1]
    groups = QIGroups.split_by(data, known, signature)
    allowed = pv.possible[groups.first_rows()]
    prior = prior_distribution(pv.true_codes, allowed.shape[1]) if pv.true_codes is not None else np.full(allowed.shape[1], 1.0 / allowed.shape[1])
    weighted = allowed * prior
    mass = weighted.sum(axis=1, keepdims=True)
    posterior = np.where(mass > 0, weighted / np.where(mass > 0, mass, 1.0), allowed / np.maximum(allowed.sum(axis=1, keepdims=True), 1))
    targets = np.ones(groups.n_records, dtype=bool)
    targets[list(resolved.known_individuals)] = False
    n_left = allowed.sum(axis=1)
    result = AttackResult(
        attack="possible values",
        sensitive=sensitive,
        values=pv.values,
        groups=groups,
        posterior=posterior,
        provenance=[f"{k} of {len(pv.values)} values possible" for k in n_left],
        targets=targets,
        exposed=(n_left == 1)[groups.group_of_record],
        true_codes=pv.true_codes,
    )
    result.details = {
        "threat_model": resolved.describe(model.disclosure),
        "method": pv.details["method"],
        "trees": pv.details["trees"],
        "trees_used": pv.trees_used,
        "scope": pv.details["scope"],
        "passes": pv.passes,
        "converged": pv.converged,
        "certain_proved": int((pv.certain & targets).sum()),
        "exact_rows": int(pv.decided.sum()),
        "estimate": "the table's distribution of the sensitive attribute over each person's possible values",
    }
    if pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result
