"""A numeric input of a published regressor as the secret, the target known to the attacker.

The attacker knows every other input of each training record and its target y (the insider of
:class:`~ppdm.attacks.core.threat.ThreatModel`); the secret is one numeric input s the trees split on.
Each leaf's count and value are linear rows over how many records of each group lie in each
block of s's cells (:mod:`ppdm.exact.input_rows`, the rows a classifier's numeric sensitive input
gives, with the target's sums added), and :mod:`ppdm.exact.input_bounds` proves which blocks
each group can take:

* the **proved interval** of a person is ``[lowest lower edge, highest upper edge]`` of the
  cells of its possible blocks (cells clipped to the domain: the column's range, or declared);
  by default arc consistency and bound propagation over whole numbers (sound); with
  ``exact=True`` integer programmes settle each end (tight, within the time budget);
* **the estimate** is the posterior mean of s under the maximum-entropy distribution over the
  types (block, target, cell) that meets every row (paper 000 §3's estimate, solved by
  :func:`~ppdm.maxent.solvers.forest_solve.solve_forest`), each cell taken at its midpoint and
  weighted by its width (the base measure: a density over the values, uniform inside a cell,
  so a wide cell is not a single value). The mean is the guess with the least expected squared
  error under that belief; clipped to the proved interval. When the solve fails, or stops at its
  time limit off the rows (:data:`MISSED`; e.g. 20 XGBoost rounds over Bank Loan's 5,000 rows,
  140,000 types), or would need more than :data:`MAX_TYPES` types, the estimate is the interval's centre — never a point that misses what the
  model publishes — and ``details["estimate"]`` says which;
* **pinned**: an interval at most ``tolerance`` wide; **the baseline**: the prior's domain.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.attacks.core.scope import Scope
from ppdm.attacks.core.threat import ThreatModel, required_threat
from ppdm.attacks.models.regression import CENTRE, LP_SECONDS, IntervalResult, _domain, _truth
from ppdm.errors import DataError, MaxEntError, PpdmError
from ppdm.exact.input_bounds import InputBounds, possible_blocks
from ppdm.exact.input_rows import InputRows, input_rows
from ppdm.exact.options import SearchProgress
from ppdm.exact.target_rows import as_forest
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.rows.problem import LinearBlock
from ppdm.maxent.solvers.forest_solve import ForestSolveOptions, solve_forest
from ppdm.maxent.solvers.solution import OPTIMAL
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

#: What ``details["estimate"]`` says of the maximum-entropy estimate.
POSTERIOR_MEAN = "maximum-entropy posterior mean"

#: Seconds for the maximum-entropy estimate when no ``time_limit`` is given.
ESTIMATE_SECONDS = 60.0

#: A solve stopped short is used when it misses no (scaled) row by more than this; else the centre.
MISSED = 1e-6

#: The most types the estimate is solved over; beyond, the interval's centre.
MAX_TYPES = 1_000_000


def input_interval_attack(
    model: Tree | Forest,
    table: pd.DataFrame,
    threat: ThreatModel,
    *,
    tolerance: float = 0.0,
    domain: Sequence[float] | None = None,
    exact: bool = False,
    time_limit: float | None = None,
    exact_time_limit: float | None = None,
    row_ids: np.ndarray | None = None,
    progress: Callable[[SearchProgress], None] | None = None,
) -> IntervalResult:
    """Each person's proved interval of the regressor's input ``threat.sensitive`` (module docstring).

    ``domain``: the prior's ``(lo, hi)`` of the input (default: the column's range in ``table``);
    ``exact``: settle each interval's ends by integer programmes within ``exact_time_limit``
    seconds (default :data:`~ppdm.attacks.models.regression.LP_SECONDS`); ``time_limit``: seconds for
    the maximum-entropy estimate (default :data:`ESTIMATE_SECONDS`); ``progress``: called as the
    integer programmes settle the groups (:func:`~ppdm.exact.input_bounds.possible_blocks`).
    """
    start = time.monotonic()
    sensitive = str(required_threat("input_interval_attack", threat).sensitive)
    forest = as_forest(model)
    if forest.class_attribute not in table.columns:
        raise DataError(f"the table has no column {forest.class_attribute!r}: the attacker of a sensitive input knows each target")
    if forest.attributes[sensitive].is_categorical:
        raise PpdmError(f"the sensitive input {sensitive!r} is categorical: a regressor's audit proves intervals of a numeric input only")
    truth = _truth(table, sensitive, "sensitive input")
    lo, hi = _domain(domain, truth, sensitive)
    individuals = tuple(threat.known_individuals)
    if individuals and truth is None:
        raise DataError(f"known individuals need their values: the table has no column {sensitive!r}")
    rows = input_rows(forest, table, list(threat.known or ()), sensitive, (lo, hi), individuals)
    _check_truth(rows)
    seconds = LP_SECONDS if exact_time_limit is None else exact_time_limit
    order = _narrowest_first(rows, possible_blocks(rows)) if exact else None
    bounds = possible_blocks(rows, exact=exact, time_limit=seconds, groups=order, progress=progress)
    lower_g, upper_g = _group_intervals(rows, bounds)
    record_group = rows.groups.group_of_record
    lower, upper = lower_g[record_group], upper_g[record_group]
    targets = np.ones(len(table), dtype=bool)
    targets[list(individuals)] = False
    method = np.where(bounds.solved[record_group], "integer programme", "propagation").astype(object)
    details: dict[str, Any] = {
        "secret": "input", "rows": int(rows.matrix.shape[0]), "groups": rows.groups.n_groups, "cells": rows.cells.n_cells,
        "variables": rows.n_vars, "possible": int(bounds.possible.sum()), "propagation_passes": bounds.passes,
        "rounds": rows.rounds.summary(), "scope": Scope.of_model_rows(rows.rounds, forest.combine == "additive"),
        "bounds": _bounds_name(exact, bounds, order),
    }  # fmt: skip
    if order is not None:
        details.update({
            "programmes": bounds.programmes, "exact_seconds": round(bounds.seconds, 3),
            "exact_solved": int(bounds.solved[order].sum()), "exact_open": int(len(order)),
        })  # fmt: skip
    group_point, how = _maxent_estimate(rows, bounds, ESTIMATE_SECONDS if time_limit is None else time_limit)
    details["estimate"] = how["estimate"]
    details.update({k: v for k, v in how.items() if k != "estimate"})
    point = None
    if group_point is not None:
        point = np.clip(group_point[record_group], lower, upper)
    details["seconds"] = round(time.monotonic() - start, 3)
    return IntervalResult(sensitive, threat, lower, upper, method, targets, (lo, hi), float(tolerance), truth, row_ids, details, point)


def _check_truth(rows: InputRows) -> None:
    """The records' own cells meet every row, or a one-line error names the tree and leaf."""
    x = rows.truth()
    if x is None:
        return
    off = rows.violations(x)
    if off.any():
        j = int(np.argmax(off))
        raise DataError(
            f"tree {int(rows.tree[j])}, leaf {int(rows.leaf[j])}: the table's records miss the {rows.kind[j]} the model "
            f"publishes there by {float(off[j]):.6g}: audit the rows the model was fitted on, in its order"
        )


def _narrowest_first(rows: InputRows, outer: InputBounds) -> np.ndarray:
    """The groups the integer programmes settle, narrowest propagated interval first (targets only)."""
    lo, hi = _group_intervals(rows, outer)
    open_ = np.flatnonzero(hi - lo > 0)
    if rows.known_group is not None:
        open_ = open_[~rows.known_group[open_]]
    return open_[np.argsort(hi[open_] - lo[open_], kind="stable")]


def _group_intervals(rows: InputRows, bounds: InputBounds) -> tuple[np.ndarray, np.ndarray]:
    """Per group the lowest lower edge and highest upper edge of its possible blocks' cells."""
    n_groups = rows.groups.n_groups
    alive = bounds.possible
    first = np.full(n_groups, rows.cells.n_cells, dtype=np.intp)
    last = np.full(n_groups, -1, dtype=np.intp)
    np.minimum.at(first, rows.var_group[alive], rows.first_cell[alive])
    np.maximum.at(last, rows.var_group[alive], rows.last_cell[alive])
    if (last < 0).any():  # pragma: no cover - the truth keeps one block per group
        raise DataError(f"the rows leave group {int(np.argmax(last < 0))} no value: they contradict each other or the domain")
    return rows.cells.lower[first], rows.cells.upper[last]


def _bounds_name(exact: bool, bounds: InputBounds, order: np.ndarray | None) -> str:
    if not exact:
        return "arc consistency and propagation"
    assert order is not None
    return "integer programme" if bounds.solved[order].all() else "integer programme where solved, propagation elsewhere"


# -- the estimate ---------------------------------------------------------------------------------


def _maxent_estimate(rows: InputRows, bounds: InputBounds, seconds: float) -> tuple[np.ndarray | None, dict[str, Any]]:
    """Per group the maximum-entropy posterior mean of the input (module docstring), and what the
    solve says; ``None`` and the reason when it fails (the caller reports the interval's centre)."""
    begin = time.monotonic()
    problem, truth = _type_problem(rows, bounds)
    if problem.n_types > MAX_TYPES:
        return None, {"estimate": CENTRE, "estimate_note": f"{problem.n_types:,} types (more than {MAX_TYPES:,}): the estimate is the interval's centre"}
    if truth is not None and not problem.violations(truth).max(initial=0.0) <= 1e-9:
        truth = None  # the rows held at their published values, the truth meets them only to the library's precision
    try:
        solution = solve_forest(problem, tol=1e-9, feasible=truth, options=ForestSolveOptions(time_limit=seconds))
    except MaxEntError as exc:
        return None, {"estimate": CENTRE, "estimate_note": f"the maximum-entropy solve failed ({str(exc)[:120]}): the estimate is the interval's centre"}
    except MemoryError:  # the presolve's products over groups × cells of a large table: refused at once, nothing held
        return None, {"estimate": CENTRE, "estimate_note": f"the maximum-entropy solve over {problem.n_types:,} types needs more memory than there is: the estimate is the interval's centre"}
    mid = rows.cells.mid
    marginal = np.asarray(solution.marginal, dtype=float)
    total = marginal.sum(axis=1)
    point = marginal @ mid / np.where(total > 0, total, 1.0)
    info: dict[str, Any] = {
        "estimate": POSTERIOR_MEAN, "estimate_status": solution.status, "estimate_seconds": round(time.monotonic() - begin, 3),
        "estimate_violation": float(solution.max_violation), "types": problem.n_types,
    }  # fmt: skip
    if solution.status != OPTIMAL:
        if not solution.max_violation <= MISSED:
            info.update({"estimate": CENTRE, "estimate_note": (
                f"the maximum-entropy solve ended {solution.status}, its best point off the rows by {solution.max_violation:.2g} "
                f"within {seconds:g} s: the estimate is the interval's centre"
            )})  # fmt: skip
            return None, info
        info["estimate_note"] = f"the maximum-entropy solve ended {solution.status} with every row met: the estimate is its best point"
    return point, info


def _type_problem(rows: InputRows, bounds: InputBounds) -> tuple[FactoredProblem, np.ndarray | None]:
    """The factored problem over types (block, target, cell) of the possible blocks, its rows the
    leaves' counts and values per record of the table, each held at its published value (the
    centre of its float-precision interval: intervals would send the solve to the general driver,
    which stalls on them), and the truth's distribution over them."""
    n = float(rows.groups.n_records)
    alive = np.flatnonzero(bounds.possible)
    tag_of_group = np.unique(rows.target, return_inverse=True)[1].ravel()
    n_blocks = int(rows.var_block.max()) + 1
    pair = rows.var_block[alive].astype(np.int64) * (tag_of_group.max() + 1) + tag_of_group[rows.var_group[alive]]
    keys, rep = np.unique(pair, return_index=True)
    rep_var = alive[rep]
    length = rows.last_cell[rep_var] - rows.first_cell[rep_var] + 1
    kind = np.repeat(np.arange(len(keys)), length)  # each (block, target) once per cell of its range
    cell = np.repeat(rows.first_cell[rep_var], length) + np.arange(int(length.sum())) - np.repeat(np.cumsum(length) - length, length)
    width = rows.cells.upper - rows.cells.lower
    base = np.log(np.where(width > 0, width, 1.0))[cell]
    reach = sp.csr_matrix((np.ones(len(alive)), (rows.var_group[alive], rows.var_block[alive])), shape=(rows.groups.n_groups, n_blocks))
    problem = FactoredProblem(
        rows.groups.counts / n, reach, tag_of_group, rows.var_block[rep_var][kind], tag_of_group[rows.var_group[rep_var]][kind],
        cell, rows.cells.n_cells, log_base=base, pinned=_pinned(rows, keys, kind, cell, tag_of_group),
    )  # fmt: skip
    leaf_rows = np.flatnonzero(rows.kind != "group")
    A = sp.csr_matrix(rows.matrix)[leaf_rows][:, rep_var][:, kind].tocsr()  # over P(type): records / n
    lower, upper = rows.lower[leaf_rows] / n, rows.upper[leaf_rows] / n
    scale = 1.0 / np.maximum(abs(A).max(axis=1).toarray().ravel(), 1e-300)  # each row's largest coefficient 1: the solver's steps see rows alike
    A = sp.diags(scale) @ A
    lower, upper = lower * scale, upper * scale
    names = [f"{k} tree {t} leaf {leaf}" for k, t, leaf in zip(rows.kind[leaf_rows], rows.tree[leaf_rows], rows.leaf[leaf_rows])]
    if len(leaf_rows):
        problem.add(LinearBlock("leaf rows", A, (lower + upper) / 2, "eq", names))
    return problem, _truth_types(rows, keys, kind, cell, tag_of_group)


def _type_of(rows: InputRows, keys: np.ndarray, kind: np.ndarray, cell: np.ndarray, tag_of_group: np.ndarray, records: np.ndarray) -> np.ndarray:
    """The type (block, target, cell) of the ``records``, from their true variable and value."""
    assert rows.true_var is not None and rows.true_cell is not None
    var = rows.true_var[records]
    key = rows.var_block[var].astype(np.int64) * (tag_of_group.max() + 1) + tag_of_group[rows.var_group[var]]
    k = np.searchsorted(keys, key)
    first_type = np.searchsorted(kind, k)
    return first_type + (rows.true_cell[records] - rows.first_cell[var])


def _truth_types(rows: InputRows, keys: np.ndarray, kind: np.ndarray, cell: np.ndarray, tag_of_group: np.ndarray) -> np.ndarray | None:
    if rows.true_var is None:
        return None
    types = _type_of(rows, keys, kind, cell, tag_of_group, np.arange(rows.groups.n_records))
    return np.bincount(types, minlength=len(kind)) / rows.groups.n_records


def _pinned(rows: InputRows, keys: np.ndarray, kind: np.ndarray, cell: np.ndarray, tag_of_group: np.ndarray) -> np.ndarray | None:
    if rows.known_group is None or not rows.known_group.any():
        return None
    first = rows.groups.first_rows()
    types = _type_of(rows, keys, kind, cell, tag_of_group, first)
    return np.where(rows.known_group, types, -1)
