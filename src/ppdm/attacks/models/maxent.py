"""The maximum-entropy attack on a published tree (paper 000), under any threat model.

The attacker's best unbiased estimate of P(u | q) given everything the tree reveals, where q is
what the attacker knows of a record and u what the model uses that they do not know
(:mod:`ppdm.maxent.table.unknowns`); their belief about the sensitive attribute is its marginal. Paper
000's setting (every split attribute known, the class sensitive) is the special case u = class.

Outside paper 000's setting the problem is laid out in factored form (groups reach leaves, the
rows see only the slot types: :mod:`ppdm.maxent.solvers.factored`), which costs time and memory in the
number of (group, leaf) pairs rather than (group, slot) pairs; ``factored=False`` keeps the
explicit slot form, the reference the factored one is tested against.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel, audited, checked_threat
from ppdm.attacks.core.truth import TRUTH_TOLERANCE, check_truth
from ppdm.attacks.models.estimate import SoundStepOptions, maxent_result, solve_details
from ppdm.attacks.models.explicit import ForestAuditOptions, forest_maxent_attack
from ppdm.data.counting import compress, is_dask
from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, MaxEntError, UninformativeKnowledgeWarning
from ppdm.maxent.constraints.internal import internal_constraints
from ppdm.maxent.constraints.tree_constraints import Coverage, Knowledge, table_problem, type_problem
from ppdm.maxent.rows.problem import LinearBlock, MaxEntProblem
from ppdm.maxent.solvers.factored import FactoredProblem, FactoredSolution, solve_factored
from ppdm.maxent.solvers.forest_solve import ForestProgress
from ppdm.maxent.solvers.nonlinear import solve_with_internal
from ppdm.maxent.solvers.solve import Solution, solve_linear
from ppdm.maxent.table.attacker_types import AttackerTypes, attacker_types
from ppdm.maxent.table.unknowns import AttackerTable, TableOptions, attacker_table
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

UNIFORM_NOTE = (
    "only labels are known (no error rates, class counts or SA distribution): the uniform estimate "
    "meets every label and internal-node constraint with equality, so the maximum-entropy attacker "
    "learns nothing from this tree; publish-level 'error-rates' or the SA distribution (--sa) make the audit informative"
)

_KNOWN_KEY = "__ppdm_known_individual__"


def maxent_attack(
    tree: Tree | Forest,
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
    *,
    knowledge: Knowledge = Knowledge(),
    tol: float = 1e-9,
    time_limit: float | None = None,
    factored: bool | None = None,
    client: object = None,
    progress: bool | None = None,
    weights: np.ndarray | None = None,
    tree_progress: Callable[[int, int], None] | None = None,
    solver_progress: Callable[[ForestProgress], None] | None = None,
    forest_options: ForestAuditOptions | None = None,
    prove: bool = True,
    sound: SoundStepOptions | None = None,
    table_options: TableOptions | None = None,
) -> AttackResult:
    """Estimate every known-value group's P(sensitive | q) by maximum entropy (paper 000 §3–4).

    ``data``: the training records as the attacker's table; it must hold the columns the attacker
    knows and, to measure the attack, the sensitive column. ``threat``: the attacker
    (:class:`~ppdm.attacks.core.threat.ThreatModel`, resolved against ``data``): the columns they know
    (any columns, the class among them or not), the sensitive one (any column), what is published,
    the known individuals; its ``sa_published``, when declared, overrides ``knowledge.sa``. Without
    one: they know the tree's attributes in ``data`` but the sensitive one, which is the class.
    Split attributes outside the known columns, an unknown class and the sensitive attribute become
    the attacker's unknowns.

    With ``knowledge.sa`` the sensitive attribute's distribution is taken as published (from
    ``data``; the default for a sensitive input, see :class:`~ppdm.attacks.core.threat.ThreatModel`); with ``knowledge.internal`` the attacker also uses the split choices (paper 000 §4.2,
    paper 000's setting only), and the estimate is a local optimum of a nonconvex problem
    (``details["status"]``); ``time_limit`` (seconds) stops that solver early. ``factored``: see
    :func:`audit_problem`.

    ``data`` may be a ``dask.dataframe`` (e.g. ``dd.read_parquet("part-*.parquet")``): the
    records are then counted partition by partition (on ``client``, a ``distributed.Client``, when
    given; ``progress``: a bar over partitions, default on a terminal) into the distinct
    combinations of the columns the audit reads, and the audit runs on those counts: the same
    groups, counts and posteriors as on the same records in pandas. The result's per-record
    arrays are then per combination (``groups.record_weights`` records each); each record's group
    is written back with :meth:`ppdm.data.counting.DaskCounting.with_group_ids`. ``weights``: a
    table already counted that way (:func:`ppdm.data.counting.compress`), the records per row.

    ``tree`` may be a :class:`~ppdm.tree.forest.Forest`: one problem then holds every tree's rows
    (:func:`ppdm.attacks.models.explicit.forest_maxent_attack`; internal-node constraints do not
    apply, ``factored`` is always true; ``tree_progress(done, total)`` is called after each tree's
    rows are built, ``solver_progress`` with the solver's
    :class:`~ppdm.maxent.solvers.forest_solve.ForestProgress` as it goes); ``forest_options`` holds the
    explicit enumeration's settings and its solve's (:class:`~ppdm.attacks.models.explicit.ForestAuditOptions`). ``time_limit`` bounds the forest's explicit solve too
    (default :data:`~ppdm.attacks.models.explicit.FOREST_SECONDS`): past it the answer is the point
    reached, status ``inaccurate``, with only proved certainties.

    ``prove`` (default): the groups the exact audit's fast sound steps prove certain on whole
    counts are certain too (:func:`~ppdm.attacks.models.estimate.proved_certain`; factored rows only);
    ``False`` leaves them out (the audit's estimates with less knowledge, which are compared
    within the main estimate's possible values and so keep its certainties anyway); ``sound``: the
    sound steps' settings (:class:`~ppdm.attacks.models.estimate.SoundStepOptions`);
    ``table_options``: how large a tree's attacker table may grow (:class:`~ppdm.maxent.table.unknowns.TableOptions`).
    """
    threat = checked_threat("maxent_attack", threat)
    if isinstance(tree, Forest):
        if is_dask(data):
            raise DataError("a forest is audited on an in-memory (pandas) table, not a Dask one")
        if knowledge.internal:
            raise MaxEntError("internal-node constraints are built for a single tree, not for a forest")
        threat = _threat(tree, data, knowledge, threat)
        options = forest_options if forest_options is not None else ForestAuditOptions()
        solve = replace(options.solve, progress=solver_progress if solver_progress is not None else options.solve.progress)
        if time_limit is not None:
            solve = replace(solve, time_limit=time_limit)
        return forest_maxent_attack(tree, data, threat, knowledge, tol, tree_progress, replace(options, solve=solve), prove=prove, sound=sound)
    if is_dask(data):
        if threat is not None and threat.known_individuals:
            raise DataError("known individuals name rows of an in-memory table: audit a pandas DataFrame to use them")
        threat = _threat(tree, data._meta, knowledge, threat)
        data, weights = compress(data, _audit_columns(tree, data._meta, threat), client, progress)
    else:
        threat = _threat(tree, data, knowledge, threat)
    audit = audit_problem(tree, data, threat, replace(knowledge, sa=threat.sa_published), factored=factored, weights=weights, table_options=table_options)
    problem, table = audit.problem, audit.table
    uninformative = not any(blk.name in ("rate", "class-count", "sa", "size") for blk in problem.blocks)
    if uninformative:
        warnings.warn(UNIFORM_NOTE, UninformativeKnowledgeWarning, stacklevel=2)
    solution, posterior, n_internal = _solve(audit, tol, time_limit)
    details = _details(audit, solution, posterior, n_internal)
    if uninformative:
        details["note"] = UNIFORM_NOTE
    result = maxent_result(table, threat, posterior, details, problem if prove else None, sound)
    if weights is None and pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result


@dataclass
class AuditProblem:
    """Everything an audit solves: the tree as audited, the attacker's table and the rows."""

    tree: Tree
    table: AttackerTable | AttackerTypes
    problem: MaxEntProblem | FactoredProblem
    threat: ThreatModel
    knowledge: Knowledge
    coverage: Coverage

    @property
    def factored(self) -> bool:
        return isinstance(self.problem, FactoredProblem)


def _audit_columns(tree: Tree, data: pd.DataFrame, threat: ThreatModel) -> list[str]:
    """The columns of ``data`` a resolved threat's audit reads: the known ones, the sensitive one,
    the class and the tree's split attributes."""
    wanted = [*(threat.known or ()), threat.sensitive, tree.class_attribute, *tree.split_attributes]
    return [c for c in dict.fromkeys(wanted) if c in data.columns]


def audit_problem(
    tree: Tree, data: pd.DataFrame, threat: ThreatModel, knowledge: Knowledge = Knowledge(), check: bool = True,
    factored: bool | None = None, weights: np.ndarray | None = None, table_options: TableOptions | None = None,
) -> AuditProblem:
    """The attacker's table and every linear row of the audit for a resolved ``threat``.

    With ``check`` (default) the table's own records must satisfy every row (:func:`check_truth`).
    ``factored``: lay the problem out over slot types (an :class:`AttackerTypes` and a
    :class:`FactoredProblem`) or over explicit slots (an :class:`AttackerTable` and a
    :class:`MaxEntProblem`). Default: factored, except in paper 000's setting and with
    internal-node constraints, which keep the explicit form. ``weights``: the records each row of
    ``data`` stands for (``None``: the rows are the records; see :func:`ppdm.data.counting.compress`).
    ``table_options``: how large the attacker's table may grow (:class:`TableOptions`).
    """
    tree = _published(tree, threat.publish)
    if factored is None:
        factored = not knowledge.internal and not is_paper_setting(tree, threat)
    if factored:
        return _factored_audit(tree, data, threat, knowledge, check, weights, table_options)
    table = _table(tree, data, threat, functools.partial(attacker_table, options=table_options), weights)
    coverage = counts_coverage(tree, table.groups.n_records)
    sa = _sa_distribution(table) if knowledge.sa else None
    problem = table_problem(tree, table, knowledge, sa, coverage)
    _add_known_individuals(problem, table)
    if check:
        check_truth(problem, table)
    return AuditProblem(tree, table, problem, threat, knowledge, coverage)


def is_paper_setting(tree: Tree, threat: ThreatModel) -> bool:
    """Paper 000's setting: the class is sensitive and the attacker knows every split attribute."""
    return threat.sensitive == tree.class_attribute and set(tree.split_attributes) <= set(threat.known or ())


def _factored_audit(
    tree: Tree, data: pd.DataFrame, threat: ThreatModel, knowledge: Knowledge, check: bool, weights: np.ndarray | None = None,
    table_options: TableOptions | None = None,
) -> AuditProblem:
    types = _table(tree, data, threat, functools.partial(attacker_types, outputs=threat.outputs, options=table_options), weights)
    coverage = counts_coverage(tree, types.groups.n_records)
    sa = None
    if knowledge.sa:
        sa = types.sensitive_distribution()
        if sa is None:
            raise DataError("SA constraints need the sensitive column in the data (its distribution is published)")
    problem = type_problem(tree, types, knowledge, sa, coverage)
    if check:
        check_truth(problem, types)
    return AuditProblem(tree, types, problem, threat, knowledge, coverage)


def _threat(tree: Tree | Forest, data: pd.DataFrame, knowledge: Knowledge, threat: ThreatModel | None) -> ThreatModel:
    """``threat`` resolved against ``data``; without one, :func:`maxent_attack`'s default attacker
    (the model's attributes in ``data`` known, the class sensitive)."""
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"the records must be a pandas DataFrame (its columns named), got {type(data).__name__}")
    if threat is None:
        known = tuple(a for a in tree.attributes if a in data.columns and a != tree.class_attribute)
        threat = ThreatModel(sensitive=tree.class_attribute, known=known, sa_published=knowledge.sa or None)
    elif threat.sa_published is None and knowledge.sa:  # undeclared: knowledge.sa says it is published
        threat = replace(threat, sa_published=True)
    return threat.resolve(data, tree.class_attribute, splits=tree.split_attributes)


def _published(tree: Tree, publish: Disclosure | None) -> Tree:
    """The tree as audited: what the file holds, or less when the threat model says so."""
    return audited(tree, publish)


_Table = TypeVar("_Table", AttackerTable, AttackerTypes)


def _table(
    tree: Tree, data: pd.DataFrame, threat: ThreatModel,
    build: Callable[[Tree, pd.DataFrame, Sequence[str], str, np.ndarray | None], _Table], weights: np.ndarray | None = None,
) -> _Table:
    """The attacker's table (``build``: :func:`attacker_table` or :func:`attacker_types`); each
    fully known individual becomes a group of its own."""
    known = list(threat.known or ())
    if not threat.known_individuals:
        return build(tree, data, known, threat.sensitive, weights)
    key = np.full(len(data), -1)
    key[list(threat.known_individuals)] = np.arange(len(threat.known_individuals))
    table = build(tree, data.assign(**{_KNOWN_KEY: key}), [*known, _KNOWN_KEY], threat.sensitive)
    if table.true_sensitive() is None:
        raise DataError("known individuals need their full records in the data (every unknown column)")
    groups = table.groups
    table.groups = QIGroups(tuple(known), groups.table.drop(columns=_KNOWN_KEY), groups.counts, groups.group_of_record)
    table.known_group = groups.table[_KNOWN_KEY].to_numpy() >= 0
    return table


def counts_coverage(tree: Tree, n_records: int) -> Coverage:
    """Whether the published counts are over the table's records, a subset or a superset of them.

    The root's published size against the table's: fewer after pruning Method 1 (records of removed
    leaves are deleted from the counts), more when the table lacks training rows (dropped for
    missing values). Labels alone publish no size: taken as exact.
    """
    n = tree.root.n_samples
    if n is None or abs(n - n_records) <= TRUTH_TOLERANCE:
        return "exact"
    return "subset" if n < n_records else "superset"


def _sa_distribution(table: AttackerTable) -> np.ndarray:
    if table.true_slot is None:
        raise DataError(
            f"SA constraints need the sensitive column {table.domain.sensitive.name!r} in the data (its distribution is published)"
        )
    joint = table.truth()
    assert joint is not None
    return table.sensitive_marginal(joint).sum(axis=0)


def _add_known_individuals(problem: MaxEntProblem, table: AttackerTable) -> None:
    """P(q, u_true) = P(q) for every fully known individual's own group."""
    if table.known_group is None or not table.known_group.any():
        return
    groups = np.flatnonzero(table.known_group)
    first_record = table.groups.first_rows()
    slots = table.true_slot[first_record[groups]]  # type: ignore[index]
    cols = groups * table.n_slots + slots
    A = sp.csr_matrix((np.ones(len(groups)), (np.arange(len(groups)), cols)), shape=(len(groups), problem.n_variables))
    names = [f"known individual (row {int(first_record[g])})" for g in groups]
    problem.add(LinearBlock("known-individual", A, table.groups.weights[groups], "eq", names))


def _solve(audit: AuditProblem, tol: float, time_limit: float | None) -> tuple[Solution | FactoredSolution, np.ndarray, int | None]:
    """The solution, the posterior P(sensitive | q) per group, and the number of internal-node rows."""
    problem, table = audit.problem, audit.table
    if isinstance(problem, FactoredProblem):
        if audit.knowledge.internal:
            raise MaxEntError("internal-node constraints need the explicit form (factored=False) in paper 000's setting")
        solution = solve_factored(problem, tol=tol)
        return solution, solution.marginal, None
    assert isinstance(table, AttackerTable)
    explicit, n_internal = _solve_explicit(audit.tree, table, problem, audit.knowledge, tol, time_limit)
    return explicit, table.sensitive_marginal(explicit.p), n_internal


def _solve_explicit(tree: Tree, table: AttackerTable, problem: MaxEntProblem, knowledge: Knowledge, tol: float, time_limit: float | None) -> tuple[Solution, int | None]:
    if not knowledge.internal:
        return solve_linear(problem, tol=tol), None
    if not table.is_paper_setting:
        raise MaxEntError(
            "internal-node constraints need paper 000's setting: every split attribute known and the class sensitive"
        )
    internal = internal_constraints(tree, table.groups, table.leaf[:, 0])
    if internal is None:
        return solve_linear(problem, tol=tol), 0
    return solve_with_internal(problem, internal, tol=tol, time_limit=time_limit), internal.n_constraints


def _details(audit: AuditProblem, solution: Solution | FactoredSolution, posterior: np.ndarray, n_internal: int | None) -> dict[str, object]:
    details = solve_details(audit.table, audit.threat, audit.tree.disclosure, audit.problem, solution, posterior, audit.coverage)
    if n_internal is not None:
        rows = details["constraint_rows"]
        assert isinstance(rows, dict)
        rows["internal"] = n_internal
    return details
