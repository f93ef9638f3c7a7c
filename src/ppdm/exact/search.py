"""The exact audit by integer programming (OR-Tools CP-SAT), for rows that are not a network.

Forests, a tree with the published SA distribution, error-rate and label rows, rule sets: the
count problem is an integer program. The question is not one optimum but 2 · groups · values of
them, so the search is organised to answer many at once, soundly:

1. **Components.** Groups that share no row (directly or through other groups) are independent:
   each connected component of the variables–rows incidence is searched on its own.
2. **Seen bounds.** Every consistent dataset found (the real records first, when known) shows
   where the minima are at most and the maxima at least (:meth:`ExactBounds.see`); datasets one
   or two record moves from the first (:mod:`ppdm.exact.moves`) refute candidates for free.
3. **LP bounds.** The linear relaxation (scipy's HiGHS) contains every integer solution, so its
   minimum, rounded up, bounds the integer minimum from below (the maximum likewise): it proves
   certain and impossible values without an integer solve wherever it is tight, a whole set of
   candidates per LP (their sum cannot drop; the candidates it can move found by one LP over
   the homogenised rows), then single counts when few are left. Then CP-SAT settles the
   remaining certainty questions with linear objectives, before any other bound, every
   component's certain values before any component's impossible ones and those before the
   rest (the components' searches advance stage by stage); every dataset CP-SAT meets on the
   way is kept, and a question that refutes nothing within its time cap is asked again for
   twice as long.
4. **Backbone search.** For all open maxima at once: is there a dataset exceeding at least one
   of them (a Boolean per open value, at least one true)? If not, every open maximum is proved;
   if so, the dataset found (CP-SAT maximises how many it exceeds) raises every one it exceeds,
   and the search repeats. Minima likewise.
5. **Budget.** When the time is up, what is still open stays open: reported *undecided*, with
   the proved bounds, never as certain.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.sparse.csgraph import connected_components

from ppdm.errors import InfeasibleError, MaxEntError
from ppdm.exact.bounds import ExactBounds
from ppdm.exact.cycles import MoveCycles, refute
from ppdm.exact.freed import FreedGroups
from ppdm.exact.local import Neighbourhood
from ppdm.exact.milp import MilpModel
from ppdm.exact.moves import paired_moves
from ppdm.exact.options import ENGINES, SearchOptions, SearchProgress
from ppdm.exact.pairs import PairMoves, PairSettings
from ppdm.exact.problem import CountProblem
from ppdm.exact.propagate import propagate

if TYPE_CHECKING:
    from ortools.sat.python import cp_model


def components(problem: CountProblem) -> tuple[int, np.ndarray]:
    """Each group's independent component (groups linked by a row are in one component)."""
    A, _, _, _ = problem.stacked()
    n_g = problem.n_groups
    coo = sp.csr_matrix(A).tocoo()
    rows = problem.n_groups + coo.row
    groups = problem.var_group[coo.col]
    graph = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (groups, rows)), shape=(n_g + A.shape[0],) * 2)
    n, label = connected_components(graph, directed=False)
    return n, label[:n_g]


@dataclass
class _Part:
    """One component: its groups, variables, rows (over its own variables) and pairs (group, label)."""

    groups: np.ndarray
    vars: np.ndarray
    rows: list[tuple[sp.csr_matrix, np.ndarray, str, np.ndarray | None, list[str]]]
    pair_group: np.ndarray
    pair_label: np.ndarray
    pair_of_var: np.ndarray
    #: per row of ``rows`` (stacked in order), the published family it comes from (its
    #: :class:`~ppdm.exact.problem.CountRows`: one tree's leaves, say)
    families: np.ndarray | None = None


@dataclass
class SearchStats:
    """What the search did, reported in :attr:`ExactBounds.stats`: components searched, solver
    calls, LP solves and the bounds they proved; and, when those stages ran, the datasets the
    record moves found (in the last component that had candidates) and the neighbourhood
    search's solves and datasets."""

    components: int = 0
    solves: int = 0
    lp_solves: int = 0
    proved_by_lp: int = 0
    move_datasets: int | None = None
    cycle_datasets: int | None = None
    proved_by_propagation: int | None = None
    pair_solves: int | None = None
    pair_datasets: int | None = None
    freed_solves: int | None = None
    freed_datasets: int | None = None
    local_solves: int | None = None
    local_datasets: int | None = None

    def as_dict(self) -> dict[str, int]:
        """The counts of the stages that ran, in this order."""
        return {name: value for name, value in asdict(self).items() if value is not None}


@dataclass
class _Search:
    """The search of one component, as every stage sees it: the problem and the component, the
    bounds the stages tighten (shared by every component), the deadline, the settings, the
    counts reported, and the last consistent dataset seen (over the component's variables)."""

    problem: CountProblem
    part: _Part
    bounds: ExactBounds
    deadline: float | None
    options: SearchOptions
    stats: SearchStats
    last: np.ndarray | None = None
    report: Callable[[], None] | None = None
    #: Bounds on every count of the component that every consistent dataset meets (propagation).
    var_bounds: tuple[np.ndarray, np.ndarray] | None = None

    def see(self, x_local: np.ndarray) -> None:
        """A consistent dataset: the minima are at most, the maxima at least, what it shows; it
        becomes the last one seen."""
        g, lab = self.part.pair_group, self.part.pair_label
        counts = np.bincount(self.part.pair_of_var, weights=x_local, minlength=len(g)).astype(np.int64)
        self.bounds.min_hi[g, lab] = np.minimum(self.bounds.min_hi[g, lab], counts)
        self.bounds.max_lo[g, lab] = np.maximum(self.bounds.max_lo[g, lab], counts)
        self.last = x_local
        if self.report is not None:
            self.report()

    def left(self) -> float | None:
        """Seconds left of the budget (``None``: no budget)."""
        return _left(self.deadline)

    def out_of_time(self) -> bool:
        left = self.left()
        return left is not None and left <= 0


@dataclass
class _Reporter:
    """Tells :attr:`SearchOptions.progress` where the search is (a :class:`SearchProgress`)."""

    bounds: ExactBounds
    options: SearchOptions
    start: float
    time_limit: float | None
    total: int = 0
    active: int = 0

    def __call__(self, phase: str | None = None) -> None:
        if self.options.progress is None:
            return
        b = self.bounds
        certain = b.certain_groups
        open_ = int((~certain & ~b.refuted_groups & (b.sizes > 0)).sum())
        phase = phase or ("certainty" if open_ else "bounds")
        seconds = time.perf_counter() - self.start
        self.options.progress(SearchProgress(phase, self.active, self.total, int(certain.sum()), open_, seconds, self.time_limit))


def search_bounds(
    problem: CountProblem, time_limit: float | None = None, truth: np.ndarray | None = None, lp: bool = True,
    interior: np.ndarray | None = None, options: SearchOptions | None = None, certainty_only: bool = False,
) -> ExactBounds:
    """Min and max of every (group, value) count over the consistent datasets (module docstring).

    ``options``: the search's settings, its integer engine among them (:class:`SearchOptions`;
    ``None``: the defaults). ``certainty_only``: stop each component once its certain values
    are settled; its other minima and maxima (impossible values among them) stay the proved
    intervals found so far (sound, not tight)."""
    options = SearchOptions() if options is None else options
    engine = "cp-sat" if options.engine is None else options.engine
    if engine not in ENGINES:
        raise MaxEntError(f"unknown integer engine {engine!r} (auto, milp or cp-sat)")
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    bounds = ExactBounds.trivial(problem.sizes, problem.possible_labels())
    stats = SearchStats()
    engines: list[str] = []
    if truth is not None:
        if not problem.satisfied(truth):
            raise InfeasibleError("the real records do not reproduce what is published", ["truth"])
        bounds.see(problem.group_label(truth))
    n, comp = components(problem)
    report = _Reporter(bounds, options, start, time_limit)
    searches = []
    for part in _parts(problem, comp, n):
        if not part.rows:  # no row: the trivial bounds are exact
            g, lab = part.pair_group, part.pair_label
            bounds.min_hi[g, lab] = bounds.min_lo[g, lab]
            bounds.max_lo[g, lab] = bounds.max_hi[g, lab]
            continue
        stats.components += 1
        used = engine if engine != "auto" else "milp" if len(part.vars) >= options.milp_min_vars else "cp-sat"
        if used not in engines:
            engines.append(used)
        searches.append(_search_part(_Search(problem, part, bounds, deadline, options, stats, report=report), truth, lp, interior, used, certainty_only))
    # stage by stage over every component: one component's bounds never take the budget
    # another needs to settle its certainty
    report.total = report.active = len(searches)
    report("certainty" if truth is not None else "first dataset")
    while searches:
        searches = [s for s in searches if next(s, _DONE) is not _DONE]
        report.active = len(searches)
        report()
    bounds.method = "+".join(sorted(engines)) or "cp-sat"
    bounds.seconds = time.perf_counter() - start
    bounds.stats = stats.as_dict()
    bounds.tighten()  # the maxima of two-valued groups the search left to the minima
    bounds.check()
    return bounds


def sound_steps(
    problem: CountProblem, truth: np.ndarray | None = None, interior: np.ndarray | None = None, options: SearchOptions | None = None,
    lp_nonzeros: int | None = None, time_limit: float | None = None, small_only: bool = False,
) -> ExactBounds:
    """What the search's stages that need no integer solve prove: integer bound propagation
    (:func:`_propagated`) and, on components of at most ``lp_nonzeros`` row entries (``None``:
    every one), the LP step (:func:`_lp_certainty`) over the candidates ``interior`` holds at an
    end (a point of the relaxation as shares, groups × labels: the maximum-entropy estimate).
    Every bound proved holds in every consistent dataset, so a value proved certain here is
    certain. Only the proved ends (``min_lo``, ``max_hi``) are claims: ``min_hi`` and ``max_lo``
    are what ``truth`` shows (the real records' counts), the trivial bounds without it.
    ``time_limit``: seconds for the LP step (what it leaves open stays open). ``small_only``: the
    components the LP step takes alone (the others keep their trivial bounds: a second pass after
    one with ``lp_nonzeros=0``, when an estimate has come to be the interior point)."""
    options = SearchOptions() if options is None else options
    start = time.perf_counter()
    bounds = ExactBounds.trivial(problem.sizes, problem.possible_labels())
    stats = SearchStats()
    if truth is not None:
        if not problem.satisfied(truth):
            raise InfeasibleError("the real records do not reproduce what is published", ["truth"])
        bounds.see(problem.group_label(truth))
    deadline = None if time_limit is None else start + time_limit
    n, comp = components(problem)
    seconds = {"propagation": 0.0, "lp": 0.0}
    largest, smallest = 0, 0
    for part in _parts(problem, comp, n):
        if not part.rows:
            continue  # the trivial bounds are all the rows say
        nnz = sum(r[0].nnz for r in part.rows)
        if small_only and lp_nonzeros is not None and nnz > lp_nonzeros:
            continue
        stats.components += 1
        smallest = nnz if stats.components == 1 else min(smallest, nnz)
        s = _Search(problem, part, bounds, deadline, options, stats)
        begin = time.perf_counter()
        _propagated(s)
        seconds["propagation"] += time.perf_counter() - begin
        largest = max(largest, nnz)
        if (lp_nonzeros is None or nnz <= lp_nonzeros) and _candidates(bounds, part, certain=True).any():
            begin = time.perf_counter()
            _lp_certainty(s, interior)
            seconds["lp"] += time.perf_counter() - begin
    bounds.method = "propagation+lp"
    bounds.seconds = time.perf_counter() - start
    bounds.stats = stats.as_dict() | {f"{k}_seconds": round(v, 4) for k, v in seconds.items()} | {"largest_component_nonzeros": largest, "smallest_component_nonzeros": smallest}
    bounds.tighten()
    return bounds


def _parts(problem: CountProblem, comp: np.ndarray, n: int) -> list[_Part]:
    A, b, le, names = problem.stacked()
    strict = np.concatenate([r.strict if r.strict is not None else np.zeros(r.n_rows, bool) for r in problem.rows]) if problem.rows else np.zeros(0, bool)
    family = np.repeat(np.arange(len(problem.rows)), [r.n_rows for r in problem.rows])
    A = sp.csr_matrix(A)
    A_csc = A.tocsc()
    var_comp = comp[problem.var_group]
    row_comp = np.full(A.shape[0], -1)
    coo = A.tocoo()
    row_comp[coo.row] = var_comp[coo.col]
    out = []
    var_order = np.argsort(var_comp, kind="stable")
    var_first = np.searchsorted(var_comp[var_order], np.arange(n + 1))
    group_order = np.argsort(comp, kind="stable")
    group_first = np.searchsorted(comp[group_order], np.arange(n + 1))
    row_order = np.argsort(row_comp, kind="stable")
    row_first = np.searchsorted(row_comp[row_order], np.arange(n + 1))
    for c in range(n):
        vars_ = var_order[var_first[c] : var_first[c + 1]]
        groups = group_order[group_first[c] : group_first[c + 1]]
        rows_here = row_order[row_first[c] : row_first[c + 1]]
        rows = []
        families = np.zeros(0, dtype=np.intp)
        if len(rows_here):
            sub = sp.csr_matrix(A_csc[:, vars_])[rows_here]
            rows = _split_sense(sub, b[rows_here], le[rows_here], strict[rows_here], [names[i] for i in rows_here])
            fam = family[rows_here]
            families = np.r_[fam[~le[rows_here]], fam[le[rows_here]]]  # _split_sense's order
        key = problem.var_group[vars_].astype(np.int64) * problem.n_labels + problem.var_label[vars_]
        pairs, pair_of_var = np.unique(key, return_inverse=True)
        out.append(_Part(groups, vars_, rows, pairs // problem.n_labels, pairs % problem.n_labels, pair_of_var.ravel(), families))
    return out


def _split_sense(
    A: sp.csr_matrix, b: np.ndarray, le: np.ndarray, strict: np.ndarray, names: list[str],
) -> list[tuple[sp.csr_matrix, np.ndarray, str, np.ndarray | None, list[str]]]:
    """The rows of one component as an equality block and a ≤ block (with its strict flags)."""
    out = []
    for mask, sense in ((~le, "eq"), (le, "le")):
        if mask.any():
            idx = np.flatnonzero(mask)
            st = strict[idx] if sense == "le" and strict[idx].any() else None
            out.append((A[idx], b[idx], sense, st, [names[i] for i in idx]))
    return out


class _Model:
    """A CP-SAT model of one component, rebuilt cheaply (cloned) for each question."""

    def __init__(self, problem: CountProblem, part: _Part, options: SearchOptions) -> None:
        from ortools.sat.python import cp_model

        self.cp = cp_model
        self.options = options
        m = cp_model.CpModel()
        sizes = problem.sizes[problem.var_group[part.vars]]
        x = [m.new_int_var(0, int(s), f"x{i}") for i, s in enumerate(sizes)]
        local_group = np.searchsorted(part.groups, problem.var_group[part.vars])
        order = np.argsort(local_group, kind="stable")
        first = np.searchsorted(local_group[order], np.arange(len(part.groups) + 1))
        for j, g in enumerate(part.groups):
            m.add(sum(x[i] for i in order[first[j] : first[j + 1]]) == int(problem.sizes[g]))
        for A, b, sense, strict, _ in part.rows:
            for r in range(A.shape[0]):
                lo, hi = A.indptr[r], A.indptr[r + 1]
                expr = sum(int(a) * x[i] for a, i in zip(A.data[lo:hi], A.indices[lo:hi]))
                if sense == "eq":
                    m.add(expr == int(b[r]))
                elif strict is not None and strict[r]:
                    neg = [(int(-a), x[i]) for a, i in zip(A.data[lo:hi], A.indices[lo:hi]) if a < 0]
                    empty = m.new_bool_var(f"empty{r}")
                    m.add(sum(a * v for a, v in neg) == 0).only_enforce_if(empty)
                    m.add(expr <= int(b[r]) - 1).only_enforce_if(empty.Not())
                    m.add(expr <= int(b[r]))
                else:
                    m.add(expr <= int(b[r]))
        self.model, self.x = m, x
        n_pairs = len(part.pair_group)
        order = np.argsort(part.pair_of_var, kind="stable")
        first = np.searchsorted(part.pair_of_var[order], np.arange(n_pairs + 1))
        self.pair_vars = [order[first[p] : first[p + 1]] for p in range(n_pairs)]

    def pair_expr(self, p: int) -> cp_model.LinearExprT:
        return sum(self.x[i] for i in self.pair_vars[p])

    def solve(
        self, extra: Callable[[cp_model.CpModel], cp_model.LinearExprT | None], seconds: float | None, maximize: bool = False,
        hint: np.ndarray | None = None, harvest: list[np.ndarray] | None = None,
    ) -> tuple[str, np.ndarray | None, float]:
        """Add ``extra(model)`` (returning an expression to maximise, or ``None``) to a copy and
        solve, starting from ``hint`` (a consistent dataset) when given: the status, the counts
        found and the objective's value. ``harvest``: a list that receives every improving
        solution met on the way (each a consistent dataset, at most ``options.harvest``)."""
        model = self.model.clone()
        objective = extra(model)
        if maximize and objective is not None:
            model.maximize(objective)
        if hint is not None:
            for v, h in zip(self.x, hint.tolist()):
                model.add_hint(v, h)
        solver = self.cp.CpSolver()
        solver.parameters.num_workers = self.options.workers
        if seconds is not None:
            solver.parameters.max_time_in_seconds = max(seconds, 0.05)
        if harvest is None:
            status = solver.solve(model)
        else:
            status = solver.solve(model, _harvester(self.cp, self.x, harvest, self.options.harvest))
        name = solver.status_name(status)
        if status in (self.cp.OPTIMAL, self.cp.FEASIBLE):
            value = solver.objective_value if maximize and objective is not None else 0.0
            return name, np.array([solver.value(v) for v in self.x], dtype=np.int64), value
        return name, None, 0.0


_DONE = object()


def _harvester(cp_model, x: list, out: list, most: int):  # type: ignore[no-untyped-def]
    """A CP-SAT solution callback appending each solution's counts to ``out`` (``most`` at most)."""

    class Harvest(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            if len(out) < most:
                out.append(np.array([self.value(v) for v in x], dtype=np.int64))

    return Harvest()


def _search_part(
    s: _Search, truth: np.ndarray | None, lp: bool, interior: np.ndarray | None = None, engine: str = "cp-sat", certainty_only: bool = False,
) -> Iterator[None]:
    """The search of one component, in stages (a generator: it pauses after each so that every
    component settles its certain values, then its impossible ones, before any other bound;
    ``certainty_only`` stops after the certain ones)."""
    problem, part = s.problem, s.part
    if truth is None:
        status, x, _ = _Model(problem, part, s.options).solve(lambda m: None, s.left())
        s.stats.solves += 1
        if x is None:
            if status == "INFEASIBLE":
                raise InfeasibleError("no dataset reproduces what is published", [n for *_, names in part.rows for n in names][:5])
            return  # out of time: everything stays open
        reference = x
    else:
        reference = truth[part.vars]
    s.see(reference)
    yield
    if s.options.record_moves:
        _moves(s, reference)
        _cycles(s, reference, certainty_only)
    if lp:
        _propagated(s)
    if s.options.swap_pairs:
        _swap_pairs(s, reference)
    if s.options.freed_groups:
        _freed(s, reference, interior)
    if lp:
        _lp_certainty(s, interior)
    if s.out_of_time():
        return
    if engine == "milp":
        local_group = np.searchsorted(part.groups, problem.var_group[part.vars])
        milp = MilpModel(local_group, problem.sizes[part.groups], part.rows, part.pair_of_var, len(part.pair_group), s.options.milp_gap)
        hood: list[Neighbourhood] = []

        def local(certainty: bool) -> None:
            if not hood:
                hood.append(Neighbourhood(local_group, problem.var_label[part.vars], problem.sizes[part.groups], part.rows, reference, s.options.local_records))
            _local(s, hood[0], milp, reference, certainty)

        for certainty in (True,) if certainty_only else (True, False):
            yield
            _harvest(s, milp, certainty, local)
        return
    if certainty_only and not _candidates(s.bounds, part, certain=True).any():
        return  # every candidate refuted or proved: no integer model needed
    left = s.left()
    if left is not None and left < s.options.cp_sat_build_seconds * sum(r[0].nnz for r in part.rows):
        return  # the model would not be built in time, let alone solved: what is open stays open
    model = _Model(problem, part, s.options)
    yield
    _certainty(s, model, signs=(-1,))
    yield
    if certainty_only:
        return
    _certainty(s, model, signs=(1,))
    yield
    if lp:
        _lp_bounds(s)
    for direction in ("max", "min"):
        _backbone(s, model, direction)


def _candidates(bounds: ExactBounds, part: _Part, certain: bool) -> np.ndarray:
    """Per pair of the component, whether it is a candidate certain value (every dataset seen
    gives the whole group, not proved) or, not ``certain``, a candidate impossible one."""
    g, lab = part.pair_group, part.pair_label
    if certain:
        return (bounds.min_hi[g, lab] == bounds.sizes[g]) & (bounds.min_lo[g, lab] < bounds.sizes[g])
    return (bounds.max_lo[g, lab] == 0) & (bounds.max_hi[g, lab] > 0)


def _moves(s: _Search, x: np.ndarray) -> None:
    """Refute candidate certain values with datasets one or two record moves from ``x``."""
    part, bounds = s.part, s.bounds
    g, lab = part.pair_group, part.pair_label
    size = bounds.sizes[g]
    cand = (bounds.min_hi[g, lab] == size) & (bounds.min_lo[g, lab] < size)
    if not cand.any():
        return
    found = paired_moves(s.problem.var_group[part.vars], part.rows, x, cand[part.pair_of_var], s.deadline, s.options.move_partners)
    for idx, change in found:  # each checked row by row against the rows' slack when found
        y = x.copy()
        np.add.at(y, idx, change)
        s.see(y)
    s.stats.move_datasets = len(found)
    if found:
        s.see(x)  # the last dataset seen stays the starting point


def _cycles(s: _Search, x: np.ndarray, certainty_only: bool) -> None:
    """Refute candidate certain (and, unless ``certainty_only``, impossible) values with datasets
    along cycles of record moves from ``x`` (:mod:`ppdm.exact.cycles`): no solver."""
    part = s.part
    g, lab = part.pair_group, part.pair_label
    cycles: MoveCycles | None = None
    for certain in (True,) if certainty_only else (True, False):
        cand = np.flatnonzero(_candidates(s.bounds, part, certain))
        if not len(cand) or s.out_of_time():
            continue
        if cycles is None:
            local_group = np.searchsorted(part.groups, s.problem.var_group[part.vars])
            cycles = MoveCycles(local_group, part.rows, x)
        found = refute(cycles, part.pair_of_var, s.problem.var_label[part.vars], np.searchsorted(part.groups, g), lab, cand, certain, s.deadline)
        for y in found:
            s.see(y)
        s.stats.cycle_datasets = (s.stats.cycle_datasets or 0) + len(found)
    if cycles is not None:
        s.see(x)  # the last dataset seen stays the starting point


def _propagated(s: _Search) -> None:
    """Certain and impossible values integer bound propagation proves (:mod:`ppdm.exact.propagate`)."""
    part, bounds = s.part, s.bounds
    g, lab = part.pair_group, part.pair_label
    local_group = np.searchsorted(part.groups, s.problem.var_group[part.vars])
    lo, hi = propagate(local_group, s.problem.sizes[part.groups], part.rows)
    if (lo > hi).any():
        raise InfeasibleError("no dataset reproduces what is published (bound propagation)", [n for *_, names in part.rows for n in names][:5])
    pair_lo = np.bincount(part.pair_of_var, weights=lo, minlength=len(g)).astype(np.int64)
    pair_hi = np.bincount(part.pair_of_var, weights=hi, minlength=len(g)).astype(np.int64)
    bounds.min_lo[g, lab] = np.maximum(bounds.min_lo[g, lab], np.minimum(pair_lo, bounds.min_hi[g, lab]))
    bounds.max_hi[g, lab] = np.minimum(bounds.max_hi[g, lab], np.maximum(pair_hi, bounds.max_lo[g, lab]))
    s.stats.proved_by_propagation = int(((pair_lo == bounds.sizes[g]) | (pair_hi == 0)).sum())
    s.var_bounds = (lo, hi)


def _swap_pairs(s: _Search, x: np.ndarray) -> None:
    """Refute candidate certain values with datasets made of pairs of record moves that nearly
    cancel (:mod:`ppdm.exact.pairs`), each maximising the people of open candidates it moves:
    with the helpers at most ``pair_helpers[0]`` apart, pairs at most ``pair_distances[0]``
    trees apart until a dataset moves fewer than ``pair_stall`` people, then the next distance;
    then the next helpers; the stage ends at the first solve with no dataset. Not run with
    fewer than ``pair_min_people`` people open. At most ``pair_seconds``
    (and ``pair_share`` of the budget left)."""
    part, bounds, options = s.part, s.bounds, s.options
    g = part.pair_group
    open_ = _candidates(bounds, part, certain=True)
    if int(bounds.sizes[g[open_]].sum()) < options.pair_min_people or part.families is None or not options.pair_distances:
        return  # few open: the freed groups answer each in hundredths of a second
    left = s.left()
    budget = options.pair_seconds if left is None else min(options.pair_seconds, options.pair_share * left)
    deadline = time.perf_counter() + budget
    local_group = np.searchsorted(part.groups, s.problem.var_group[part.vars])
    settings = PairSettings(distance=max(options.pair_distances + options.pair_helpers))
    moves = PairMoves(local_group, part.rows, part.families, x, s.var_bounds, settings)
    found, stuck = 0, False
    for helpers, distance in itertools.product(options.pair_helpers, options.pair_distances):
        while not stuck and (remaining := deadline - time.perf_counter()) > 0:
            cand = _candidates(bounds, part, certain=True)
            # a record leaving a candidate's value refutes it: weigh each such variable by its people
            weight = np.where(cand[part.pair_of_var], bounds.sizes[g[part.pair_of_var]], 0)
            y = moves.dataset(weight, min(remaining, options.pair_solve_seconds), distance, helpers)
            s.stats.pair_solves = (s.stats.pair_solves or 0) + 1
            if y is None:
                stuck = True  # farther pairs or more helpers only make the solves slower
                break
            s.see(y)
            found += 1
            refuted = cand & ~_candidates(bounds, part, certain=True)
            if int(bounds.sizes[g[refuted]].sum()) < options.pair_stall:
                break
    s.stats.pair_datasets = (s.stats.pair_datasets or 0) + found
    if found:
        s.see(x)  # the last dataset seen stays the starting point


def _freed(s: _Search, x: np.ndarray, interior: np.ndarray | None) -> None:
    """Refute candidate certain values with datasets changing only the groups most alike to each
    (:mod:`ppdm.exact.freed`), the candidates the interior point moves most first; those it holds
    at the group (the LP step's) are left to the proofs. At most ``freed_seconds``."""
    part, bounds, options = s.part, s.bounds, s.options
    g, lab = part.pair_group, part.pair_label
    cand = np.flatnonzero(_candidates(bounds, part, certain=True))
    if interior is not None:
        share = interior[g[cand], lab[cand]]
        cand = cand[share < 1 - options.interior_tol]
        cand = cand[np.argsort(share[share < 1 - options.interior_tol], kind="stable")]
    if not len(cand):
        return
    left = s.left()
    budget = options.freed_seconds if left is None else min(options.freed_seconds, options.freed_share * left)
    deadline = time.perf_counter() + budget
    local_group = np.searchsorted(part.groups, s.problem.var_group[part.vars])
    pair_local = np.searchsorted(part.groups, g)
    movable = None
    if interior is not None:  # groups the relaxation holds still cannot move
        share = interior[part.groups]
        movable = ((share > options.interior_tol) & (share < 1 - options.interior_tol)).any(axis=1)
    freed = FreedGroups(local_group, s.problem.sizes[part.groups], part.rows, x, s.var_bounds, movable)
    order = np.argsort(part.pair_of_var, kind="stable")
    first = np.searchsorted(part.pair_of_var[order], np.arange(len(g) + 1))
    open_ = _candidates(bounds, part, certain=True)
    held = np.bincount(part.pair_of_var, weights=x, minlength=len(g)).astype(np.int64)
    found = 0
    for p in cand:
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        if not open_[p]:
            continue
        # groups that can take the candidate's value: records elsewhere, the value possible
        gains = np.zeros(len(part.groups), dtype=bool)
        gains[pair_local[(lab == lab[p]) & (held < bounds.sizes[g])]] = True
        if options.freed_most:
            groups = freed.alike(int(pair_local[p]), options.freed_sizes[-1], gains)
            weight = np.where(open_[part.pair_of_var], bounds.sizes[g[part.pair_of_var]], 0)
            if _freed_dataset(s, freed.most(groups, weight, min(left, options.freed_solve_seconds))):
                found += 1
                open_ = _candidates(bounds, part, certain=True)
            continue
        for k in options.freed_sizes:
            groups = freed.alike(int(pair_local[p]), k, gains)
            inside = np.zeros(len(part.groups), dtype=bool)
            inside[groups] = True
            wanted = [order[first[q] : first[q + 1]] for q in np.flatnonzero(open_ & inside[pair_local]) if q != p] if options.freed_flags else []
            if _freed_dataset(s, freed.change(groups, order[first[p] : first[p + 1]], True, wanted, min(left, options.freed_solve_seconds))):
                found += 1
                open_ = _candidates(bounds, part, certain=True)
                break
    s.stats.freed_datasets = (s.stats.freed_datasets or 0) + found
    if found:
        s.see(x)  # the last dataset seen stays the starting point


def _freed_dataset(s: _Search, y: np.ndarray | None) -> bool:
    """Count one freed-groups solve, and see the dataset it found (``None``: none)."""
    s.stats.freed_solves = (s.stats.freed_solves or 0) + 1
    if y is None:
        return False
    s.see(y)
    return True


def _certainty(s: _Search, model: _Model, signs: tuple[int, ...] = (-1, 1)) -> None:
    """Settle certainty first, with linear objectives (easy for CP-SAT): push down the total of
    every count no dataset seen has taken below the whole group. At the optimum either some of
    them drop (refuted: not certain) or the total cannot drop at all, and then every one of them
    is certain (a sum at its largest has every term at its largest). Impossible values likewise,
    pushing up the counts every dataset seen has left at 0. Each question may take
    ``backbone_seconds``, twice as long after one that refuted nothing."""
    bounds = s.bounds
    g, lab = s.part.pair_group, s.part.pair_label
    size = bounds.sizes[g]
    cap = s.options.backbone_seconds
    for sign in signs:
        chunk: int | None = None  # how many candidates one question holds (None: all)
        while True:
            if sign < 0:
                cand = np.flatnonzero((bounds.min_hi[g, lab] == size) & (bounds.min_lo[g, lab] < size))
            else:
                cand = np.flatnonzero((bounds.max_lo[g, lab] == 0) & (bounds.max_hi[g, lab] > 0))
            cand = cand[:chunk]
            left = s.left()
            if not len(cand) or (left is not None and left <= 0):
                break
            found: list[np.ndarray] = []
            seconds = cap if left is None else min(cap, left)
            capped = left is None or seconds < left
            def push(m: cp_model.CpModel, c: np.ndarray = cand, sg: int = sign) -> cp_model.LinearExprT:
                return sg * sum(model.pair_expr(p) for p in c)

            status, x, value = model.solve(push, seconds, maximize=True, hint=s.last, harvest=found)
            s.stats.solves += 1
            for y in found:
                s.see(y)
            if x is not None:
                s.see(x)
            extreme = -int(size[cand].sum()) if sign < 0 else 0
            if x is not None and round(value) == extreme and status == "OPTIMAL":
                # the total cannot move: every candidate of the question is settled
                if sign < 0:
                    bounds.min_lo[g[cand], lab[cand]] = size[cand]
                else:
                    bounds.max_hi[g[cand], lab[cand]] = 0
                continue
            if x is not None and round(value) != extreme:
                continue  # some refuted
            if status in ("FEASIBLE", "UNKNOWN") and capped:
                # nothing refuted within the cap: ask about half as many, for twice as long
                cap *= 2
                chunk = max(1, len(cand) // 2)
                continue
            break  # out of time


def _open_bounds(s: _Search, certainty: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The open bounds: pairs, whether each is a minimum, and the count a dataset must reach to
    go beyond it. ``certainty``: only candidate certain (minimum seen at the whole group) and
    impossible (maximum seen at 0) values."""
    bounds = s.bounds
    g, lab = s.part.pair_group, s.part.pair_label
    size = bounds.sizes[g]
    lo_open = bounds.min_lo[g, lab] < bounds.min_hi[g, lab]
    hi_open = bounds.max_lo[g, lab] < bounds.max_hi[g, lab]
    if certainty:
        lo_open &= bounds.min_hi[g, lab] == size
        hi_open &= bounds.max_lo[g, lab] == 0
    # with two possible values a group's maximum of one is its size minus its minimum of the other
    # (ExactBounds.tighten): only the minima are asked about
    two = (bounds.max_hi > 0).sum(axis=1) == 2
    hi_open &= ~two[g]
    lo, hi = np.flatnonzero(lo_open), np.flatnonzero(hi_open)
    pairs = np.r_[lo, hi]
    minimum = np.r_[np.ones(len(lo), bool), np.zeros(len(hi), bool)]
    target = np.r_[bounds.min_hi[g[lo], lab[lo]] - 1, bounds.max_lo[g[hi], lab[hi]] + 1]
    return pairs, minimum, target


def _harvest(s: _Search, milp: MilpModel, certainty: bool, local: Callable[[bool], None]) -> None:
    """Settle open bounds (certainty candidates first) ``milp_chunk`` at a time: a dataset
    going beyond as many of them as possible; an optimum of 0, proved, settles the chunk. When a
    solve passes fewer than ``stall`` bounds, the neighbourhood of the reference dataset is
    searched bound by bound first (``local``, :mod:`ppdm.exact.local`)."""
    bounds, chunk = s.bounds, s.options.milp_chunk
    g, lab = s.part.pair_group, s.part.pair_label
    searched_locally = False
    while True:
        pairs, minimum, target = _open_bounds(s, certainty)
        if not len(pairs):
            return
        pairs, minimum, target = pairs[:chunk], minimum[:chunk], target[:chunk]
        left = s.left()
        if left is not None and left <= 0:
            return
        out = milp.beyond(pairs, bounds.sizes[g[pairs]], minimum, target, left)
        s.stats.solves += 1
        if out.x is not None and out.beyond > 0:
            s.see(out.x)
            if out.beyond < s.options.stall and not searched_locally:
                searched_locally = True
                local(certainty)
            continue
        if not out.proved:
            return  # out of time (or no dataset): what is open stays open
        lo, hi = pairs[minimum], pairs[~minimum]
        bounds.min_lo[g[lo], lab[lo]] = bounds.min_hi[g[lo], lab[lo]]
        bounds.max_hi[g[hi], lab[hi]] = bounds.max_lo[g[hi], lab[hi]]


def _local(s: _Search, hood: Neighbourhood, milp: MilpModel, reference: np.ndarray, certainty: bool) -> None:
    """Open bounds passed by datasets a few records from ``reference``: one small solve per open
    bound still open, its answer spread over every open bound of the classes it moves."""
    part, bounds = s.part, s.bounds
    g, lab = part.pair_group, part.pair_label
    pair_local = np.searchsorted(part.groups, g)
    pair_class = hood.group_class[pair_local]
    ref_count = np.bincount(part.pair_of_var, weights=reference, minlength=len(g)).astype(np.int64)
    pairs, minimum, _ = _open_bounds(s, certainty)
    failed: set[tuple[int, int, bool, int]] = set()  # the same question for another member of a class
    for i in range(len(pairs)):
        left = s.left()
        if left is not None and left <= 0:
            return
        p, is_min = pairs[i], bool(minimum[i])
        if not _still_open(bounds, g[p], lab[p], is_min):
            continue
        t = bounds.min_hi[g[p], lab[p]] - 1 if is_min else bounds.max_lo[g[p], lab[p]] + 1
        need = int(ref_count[p] - t if is_min else t - ref_count[p])
        question = (int(pair_class[p]), int(lab[p]), is_min, need)
        if need <= 0 or question in failed:
            continue
        delta = hood.change(int(pair_local[p]), int(lab[p]), need, is_min, left)
        s.stats.local_solves = (s.stats.local_solves or 0) + 1
        if delta is None:
            failed.add(question)
            continue
        moved = np.unique(hood.col_class[delta != 0])
        for j in np.flatnonzero(np.isin(pair_class[pairs], moved)):
            q, q_min = pairs[j], bool(minimum[j])
            if not _still_open(bounds, g[q], lab[q], q_min):
                continue
            x = hood.spread(delta, int(pair_local[q]), int(lab[q]), q_min)
            if x is not None and milp.holds(x):
                s.see(x)
                s.stats.local_datasets = (s.stats.local_datasets or 0) + 1
    s.see(reference)  # keep a dataset near the reference as the last one seen


def _still_open(bounds: ExactBounds, group: int, label: int, minimum: bool) -> bool:
    if minimum:
        return bool(bounds.min_lo[group, label] < bounds.min_hi[group, label])
    return bool(bounds.max_lo[group, label] < bounds.max_hi[group, label])


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.perf_counter()


def _backbone(s: _Search, model: _Model, direction: str) -> None:
    """Settle the open maxima (or minima), ``chunk`` at a time: a dataset exceeding as many of
    them as possible, from the last one found; none (proved optimal) settles the chunk. Each
    question may take ``backbone_seconds``, twice as long after one that found nothing."""
    bounds = s.bounds
    g, lab = s.part.pair_group, s.part.pair_label
    cap = s.options.backbone_seconds
    while True:
        if direction == "max":
            open_ = np.flatnonzero(bounds.max_lo[g, lab] < bounds.max_hi[g, lab])
        else:
            open_ = np.flatnonzero(bounds.min_lo[g, lab] < bounds.min_hi[g, lab])
        if not len(open_):
            return
        open_ = open_[: s.options.chunk]
        left = s.left()
        if left is not None and left <= 0:
            return

        def extra(m: cp_model.CpModel, open_: np.ndarray = open_) -> cp_model.LinearExprT:
            flags = []
            for p in open_:
                b = m.new_bool_var(f"beyond{p}")
                if direction == "max":
                    m.add(model.pair_expr(p) >= int(bounds.max_lo[g[p], lab[p]]) + 1).only_enforce_if(b)
                else:
                    m.add(model.pair_expr(p) <= int(bounds.min_hi[g[p], lab[p]]) - 1).only_enforce_if(b)
                flags.append(b)
            return sum(flags)

        found: list[np.ndarray] = []
        seconds = cap if left is None else min(cap, left)
        status, x, value = model.solve(extra, seconds, maximize=True, hint=s.last, harvest=found)
        s.stats.solves += 1
        for y in found:
            s.see(y)
        if x is not None and value >= 0.5:
            s.see(x)
            continue
        if status not in ("OPTIMAL", "INFEASIBLE") and seconds < (left if left is not None else np.inf):
            cap *= 2  # nothing beyond within the cap: ask again for longer
            continue
        if status == "OPTIMAL" or status == "INFEASIBLE":
            if direction == "max":
                bounds.max_hi[g[open_], lab[open_]] = bounds.max_lo[g[open_], lab[open_]]
            else:
                bounds.min_lo[g[open_], lab[open_]] = bounds.min_hi[g[open_], lab[open_]]
            continue
        return  # out of time: what is open stays open


def _lp_certainty(s: _Search, interior: np.ndarray | None = None) -> None:
    """Certain and impossible values the linear relaxation already proves, whole sets at a time.

    For the candidates (counts every dataset seen gives the whole group), minimise their sum
    over the relaxation: where it cannot drop below the sum of the group sizes, every candidate
    is certain. Otherwise drop the candidates the relaxed optimum lowers and ask again; what
    remains when the sum holds is exactly what the relaxation proves (a count it proves stays at
    its group size in every relaxed solution). Impossible values likewise, maximising.

    ``interior``: a point in the relative interior of the relaxation, as shares (groups ×
    labels; the maximum-entropy estimate is one): a count it holds strictly inside its range
    (farther than ``interior_tol`` from its ends) is not proved by the relaxation, so only the
    others are asked about. The counts are bounded as propagation found (every consistent
    dataset meets those bounds, so the relaxation still contains them all). No LP starts with
    less than ``lp_reserve`` seconds of the budget left. Without one, a single LP over the homogenised rows
    (:meth:`_Relaxation.forced`) sets aside every candidate some relaxed solution moves before
    the sums are asked about."""
    bounds, deadline, stats, tol = s.bounds, s.deadline, s.stats, s.options.interior_tol
    g, lab = s.part.pair_group, s.part.pair_label
    size = bounds.sizes[g]
    lp = _Relaxation(s.problem, s.part, deadline, s.options.lp_method, s.var_bounds)
    for sign in (1.0, -1.0):
        if sign > 0:
            cand = np.flatnonzero((bounds.min_hi[g, lab] == size) & (bounds.min_lo[g, lab] < size))
            if interior is not None:
                cand = cand[interior[g[cand], lab[cand]] >= 1 - tol]
        else:
            cand = np.flatnonzero((bounds.max_lo[g, lab] == 0) & (bounds.max_hi[g, lab] > 0))
            if interior is not None:
                cand = cand[interior[g[cand], lab[cand]] <= tol]
        if interior is None and len(cand) > 1:
            # one LP finds every candidate the relaxation cannot move; the loop below confirms them
            forced = lp.forced(cand, sign)
            stats.lp_solves += 1
            if forced is not None:
                cand = cand[forced]
        while len(cand):
            if deadline is not None and time.perf_counter() > deadline - s.options.lp_reserve:
                return  # HiGHS's interior point overruns its time limit: no LP started this late
            per_pair = lp.solve(cand, sign)
            stats.lp_solves += 1
            if per_pair is None:
                break
            target = size[cand] if sign > 0 else np.zeros(len(cand))
            moved = np.abs(per_pair - target) > 1e-6
            if not moved.any():
                if sign > 0:
                    bounds.min_lo[g[cand], lab[cand]] = size[cand]
                else:
                    bounds.max_hi[g[cand], lab[cand]] = 0
                stats.proved_by_lp += len(cand)
                break
            cand = cand[~moved]


class _Relaxation:
    """The linear relaxation of one component (scipy's HiGHS), asked about sums of counts."""

    def __init__(
        self, problem: CountProblem, part: _Part, deadline: float | None = None, method: str = "highs",
        var_bounds: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.deadline = deadline
        n = len(part.vars)
        local_group = np.searchsorted(part.groups, problem.var_group[part.vars])
        G = sp.csr_matrix((np.ones(n), (local_group, np.arange(n))), shape=(len(part.groups), n))
        eq_A, eq_b = [G], [problem.sizes[part.groups]]
        ub_A: list[sp.csr_matrix] = []
        ub_b: list[np.ndarray] = []
        for A, b, sense, _, _ in part.rows:  # strict rows relaxed to ≤ b: still a relaxation
            (eq_A if sense == "eq" else ub_A).append(A)
            (eq_b if sense == "eq" else ub_b).append(b)
        self.kw: dict[str, Any] = {
            "A_eq": sp.vstack(eq_A).tocsr(), "b_eq": np.concatenate(eq_b).astype(float),
            "A_ub": sp.vstack(ub_A).tocsr() if ub_A else None, "b_ub": np.concatenate(ub_b).astype(float) if ub_b else None,
            "bounds": (0, None), "method": method,
        }
        # bounds every consistent dataset meets (propagation) keep the relaxation one of them
        self.var_bounds = None if var_bounds is None else np.c_[var_bounds[0], var_bounds[1]].astype(float)
        self.part, self.n = part, n
        self.sizes = problem.sizes

    def forced(self, pairs: np.ndarray, sign: float) -> np.ndarray | None:
        """Which of the ``pairs``' counts every relaxed solution keeps at the whole group (``sign``
        1) or at 0 (−1), in one LP (``None`` if the solver fails).

        The rows are homogenised (x over a scale λ ≥ 1: A x = b λ, A x ≤ b λ, group sums n λ)
        and a slack t_p ∈ [0, 1] per pair asks its count to leave its bound (t_p ≤ n_g λ − count,
        or t_p ≤ count); maximising Σ t_p, every pair some relaxed solution moves reaches t_p = 1
        (the sum of points moving each, scaled up, moves all) and a pair no solution moves keeps
        t_p = 0: the implicit equalities of the relaxation (Freund, Roundy & Todd 1985)."""
        kw = self.kw
        n, k = self.n, len(pairs)
        order = np.argsort(self.part.pair_of_var, kind="stable")
        pos = np.searchsorted(pairs, self.part.pair_of_var[order])
        pos = np.minimum(pos, max(k - 1, 0))
        mine = pairs[pos] == self.part.pair_of_var[order] if k else np.zeros(len(order), bool)
        rows_t, cols_x = pos[mine], order[mine]
        size = self.sizes[self.part.pair_group[pairs]].astype(float)
        # t_p + sign·count_p − (n_g λ if sign > 0 else 0) ≤ 0
        link = sp.csr_matrix(
            (np.full(len(rows_t), sign), (rows_t, cols_x)), shape=(k, n),
        )
        lam_col = -size if sign > 0 else np.zeros(k)
        eq = sp.hstack([kw["A_eq"], -sp.csr_matrix(kw["b_eq"]).T, sp.csr_matrix((kw["A_eq"].shape[0], k))]).tocsr()
        ub_parts = [sp.hstack([link, sp.csr_matrix(lam_col).T, sp.identity(k, format="csr")])]
        if kw["A_ub"] is not None:
            ub_parts.insert(0, sp.hstack([kw["A_ub"], -sp.csr_matrix(kw["b_ub"]).T, sp.csr_matrix((kw["A_ub"].shape[0], k))]))
        A_ub = sp.vstack(ub_parts).tocsr()
        c = np.r_[np.zeros(n + 1), -np.ones(k)]
        bounds = [(0, None)] * n + [(1, None)] + [(0, 1)] * k
        res = linprog(c, A_eq=eq, b_eq=np.zeros(eq.shape[0]), A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), bounds=bounds, method=kw["method"], options=_lp_options(self.deadline))
        if res.status != 0:
            return None
        return res.x[n + 1 :] < 0.5

    def solve(self, pairs: np.ndarray, sign: float) -> np.ndarray | None:
        """Minimise (``sign`` 1) or maximise (−1) the sum of the ``pairs``' counts; each pair's count
        at the optimum (``None`` if the solver fails). Raises when the relaxation is infeasible."""
        mask = np.isin(self.part.pair_of_var, pairs)
        c = np.where(mask, sign, 0.0)
        kw = self.kw if self.var_bounds is None else self.kw | {"bounds": self.var_bounds}
        res = linprog(c, **kw, options=_lp_options(self.deadline))
        if res.status == 2:
            raise InfeasibleError("no dataset reproduces what is published (the LP relaxation is infeasible)", ["lp"])
        if res.status != 0:
            return None
        per_pair = np.bincount(self.part.pair_of_var, weights=res.x, minlength=len(self.part.pair_group))
        return per_pair[pairs]


def _lp_options(deadline: float | None) -> dict:
    """HiGHS's own time limit: what is left of the budget (a timed-out LP proves nothing)."""
    return {} if deadline is None else {"time_limit": max(deadline - time.perf_counter(), 0.01)}


def _lp_bounds(s: _Search) -> None:
    """LP-relaxation bounds for the candidates: values every dataset seen gives all of a group
    (is the minimum the whole group?) or none of it (is the maximum 0?), one LP each, when there
    are at most ``lp_candidates`` of them."""
    problem, part, bounds, stats, deadline = s.problem, s.part, s.bounds, s.stats, s.deadline
    g, lab = part.pair_group, part.pair_label
    size = bounds.sizes[g]
    cand_min = np.flatnonzero((bounds.min_hi[g, lab] == size) & (bounds.min_lo[g, lab] < size))
    cand_max = np.flatnonzero((bounds.max_lo[g, lab] == 0) & (bounds.max_hi[g, lab] > 0))
    if len(cand_min) + len(cand_max) == 0 or len(cand_min) + len(cand_max) > s.options.lp_candidates:
        return
    n = len(part.vars)
    local_group = np.searchsorted(part.groups, problem.var_group[part.vars])
    G = sp.csr_matrix((np.ones(n), (local_group, np.arange(n))), shape=(len(part.groups), n))
    eq_A, eq_b = [G], [problem.sizes[part.groups]]
    ub_A: list[sp.csr_matrix] = []
    ub_b: list[np.ndarray] = []
    for A, b, sense, _, _ in part.rows:  # strict rows relaxed to ≤ b: a relaxation still
        (eq_A if sense == "eq" else ub_A).append(A)
        (eq_b if sense == "eq" else ub_b).append(b)
    kw: dict[str, Any] = {
        "A_eq": sp.vstack(eq_A).tocsr(), "b_eq": np.concatenate(eq_b).astype(float),
        "A_ub": sp.vstack(ub_A).tocsr() if ub_A else None, "b_ub": np.concatenate(ub_b).astype(float) if ub_b else None,
        "bounds": (0, None), "method": "highs",
    }
    for p, sign in [(p, 1.0) for p in cand_min] + [(p, -1.0) for p in cand_max]:
        if deadline is not None and time.perf_counter() > deadline:
            return
        c = np.zeros(n)
        c[part.pair_of_var == p] = sign
        res = linprog(c, **kw, options=_lp_options(deadline))
        stats.lp_solves += 1
        if res.status == 2:
            raise InfeasibleError("no dataset reproduces what is published (the LP relaxation is infeasible)", ["lp"])
        if res.status != 0:
            continue
        value = sign * res.fun
        gi, li = g[p], lab[p]
        if sign > 0:
            lo = int(np.ceil(value - 1e-6))
            if lo > bounds.min_lo[gi, li]:
                bounds.min_lo[gi, li] = min(lo, bounds.min_hi[gi, li])
                stats.proved_by_lp += int(bounds.min_lo[gi, li] == bounds.min_hi[gi, li])
        else:
            hi = int(np.floor(value + 1e-6))
            if hi < bounds.max_hi[gi, li]:
                bounds.max_hi[gi, li] = max(hi, bounds.max_lo[gi, li])
                stats.proved_by_lp += int(bounds.max_lo[gi, li] == bounds.max_hi[gi, li])
