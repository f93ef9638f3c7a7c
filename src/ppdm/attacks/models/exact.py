"""The exact audit as an attack: who is *proved* to hold a sensitive value, in every dataset
consistent with the published model (docs/exact_disclosure.md).

The maximum-entropy attack (:mod:`ppdm.attacks.models.maxent`, paper 000; :mod:`ppdm.attacks.models.rules`,
paper 004) gives the attacker's most neutral belief; this one gives the worst case, proved, on
whole record counts: per group of records sharing the known columns and per sensitive value, the
minimum and maximum number of the group's records holding it over all consistent datasets. The
rows are the maximum-entropy builders' own (class counts, error rates, labels under the tree's
tie rule, the SA distribution; AR and NAR rows), scaled to counts (:mod:`ppdm.exact.build`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.scope import Scope
from ppdm.attacks.core.threat import ThreatModel, checked_threat
from ppdm.attacks.models.explicit import rounds_details
from ppdm.attacks.models.maxent import _threat, audit_problem
from ppdm.attacks.models.rules import rules_audit_problem, rules_threat
from ppdm.data.qigroups import QIGroups
from ppdm.errors import MaxEntError, PpdmError
from ppdm.exact.bounds import ExactBounds
from ppdm.exact.build import Ties, factored_counts, from_joint, truth_counts
from ppdm.exact.options import SearchOptions, SearchProgress
from ppdm.exact.problem import CountProblem
from ppdm.exact.solve import Detail, Method, exact_bounds
from ppdm.maxent.constraints.boosting_rows import REAL_ROWS
from ppdm.maxent.constraints.rule_constraints import RuleKnowledge
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.table.attacker_types import AttackerTypes
from ppdm.maxent.table.forest_types import ForestTypes
from ppdm.rules.ruleset import RuleSet
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree


def exact_attack(
    model: Tree | Forest | RuleSet,
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
    *,
    time_limit: float | None = None,
    method: Method = "auto",
    ties: Ties = "first",
    rule_knowledge: RuleKnowledge | None = None,
    detail: Detail = "bounds",
    options: SearchOptions | None = None,
    progress: Callable[[SearchProgress], None] | None = None,
) -> AttackResult:
    """Per group and sensitive value, the proved min and max count over every consistent dataset.

    ``model``: a published tree or forest (audited under ``threat`` as in
    :func:`~ppdm.attacks.models.maxent.maxent_attack`, with the same default; a forest's rows are every
    used tree's, each record counted with its bootstrap multiplicity where the model stores it:
    :mod:`ppdm.maxent.constraints.forest_constraints`) or a rule set (paper 004; the attacker as in
    :func:`~ppdm.attacks.models.rules.rules_attack`, knowing the rules' quasi-identifiers by default).
    ``time_limit`` (seconds) bounds the integer search; values it leaves open are reported undecided, never certain. ``ties``: label rows
    follow the tree's tie rule (``"first"``: the first class of highest count wins, as argmax;
    ``"any"``: the paper's ≥ rows). The result's certain groups are the proved ones; its
    posterior is the midpoint of each value's proved [min, max], normalised (a point inside what
    is proved, not a belief); ``bounds`` and ``details["exact"]`` hold the rest. ``detail``:
    ``"certainty"`` may leave minima and maxima other than certain and impossible ones as proved
    intervals (faster on one tree; see :func:`ppdm.exact.exact_bounds`). ``options``: the integer
    search's settings (:class:`~ppdm.exact.options.SearchOptions`); without an engine named there,
    rule sets go to ``"auto"`` (HiGHS branch and bound on large components), trees and forests to
    CP-SAT. ``progress``: called with the integer search's :class:`~ppdm.exact.options.SearchProgress`
    as it goes (its settings otherwise those ``options`` gives, or the defaults for the model).
    """
    threat = checked_threat("exact_attack", threat)
    if time_limit is not None and time_limit <= 0:
        raise PpdmError(f"time_limit must be positive seconds, got {time_limit!r}")
    if isinstance(model, RuleSet):
        knowledge = rule_knowledge or RuleKnowledge()
        quasi_identifiers: list[str] | None = None  # the rules' own
        if threat is not None:
            resolved, knowledge = rules_threat(model, data, threat, knowledge)
            quasi_identifiers = list(resolved.known or ())
        return _rules(model, data, quasi_identifiers, time_limit, method, knowledge, detail, _progressed(options, SearchOptions(), progress))
    if isinstance(model, Forest):
        return _forest(model, data, time_limit, threat, method, ties, detail, _progressed(options, _forest_options(), progress))
    if not isinstance(model, Tree):
        raise PpdmError(f"the exact audit takes a Tree, a Forest or a RuleSet, got {type(model).__name__}")
    return _tree(model, data, time_limit, threat, method, ties, detail, _progressed(options, SearchOptions(), progress))


def _progressed(options: SearchOptions | None, default: SearchOptions, progress: Callable[[SearchProgress], None] | None) -> SearchOptions | None:
    """``options`` (``default`` when none are given) reporting to ``progress``, when there is one."""
    return options if progress is None else replace(options if options is not None else default, progress=progress)


def _forest_options() -> SearchOptions:
    """The integer search's settings for a forest when none are given: a forest's LPs are large and
    degenerate, so interior point (:attr:`SearchOptions.lp_method`), and its candidates are
    refuted by pairs of record moves that nearly cancel (:attr:`SearchOptions.swap_pairs`), then
    by freeing the groups alike to each (:attr:`SearchOptions.freed_groups`), both measured on
    boosting rounds (a tree's and a rule set's are the defaults)."""
    return SearchOptions(lp_method="highs-ipm", interior_tol=1e-9, swap_pairs=True, freed_groups=True)


def tree_count_problem(tree: Tree, data: pd.DataFrame, threat: ThreatModel, ties: Ties = "first") -> tuple[CountProblem, AttackerTypes, np.ndarray | None]:
    """The count problem of a tree audit under a resolved ``threat``, the attacker's table and the
    records' counts (``None`` without every unknown column in ``data``)."""
    from ppdm.maxent.constraints.tree_constraints import Knowledge

    audit = audit_problem(tree, data, threat, Knowledge(sa=bool(threat.sa_published)), factored=True)
    problem, types = audit.problem, audit.table
    assert isinstance(problem, FactoredProblem) and isinstance(types, AttackerTypes)
    names = {blk.name for blk in problem.blocks}
    # with class counts published the label rows are differences of count rows: implied
    blocks = [blk for blk in problem.blocks if not (blk.name == "label" and "class-count" in names)]
    return _counts(problem, types, blocks, ties)


def forest_count_problem(forest: Forest, data: pd.DataFrame, threat: ThreatModel, ties: Ties = "first") -> tuple[CountProblem, ForestTypes, np.ndarray | None]:
    """The count problem of a forest audit under a resolved ``threat``: every used tree's rows
    (:func:`~ppdm.maxent.constraints.forest_constraints.forest_type_problem`, multiplicities as coefficients),
    the attacker's table and the records' counts (``None`` without every unknown column)."""
    from ppdm.maxent.constraints.forest_constraints import forest_type_problem
    from ppdm.maxent.constraints.tree_constraints import Knowledge

    forest = forest.published(threat.publish)
    knowledge = Knowledge(sa=bool(threat.sa_published))
    problem, types = forest_type_problem(
        forest, data, list(threat.known or ()), str(threat.sensitive), knowledge, threat.known_individuals, outputs=threat.outputs,
    )
    # leaf-value and cover rows of boosting rounds have real coefficients (the records' gradients):
    # whole counts cannot be held to them exactly, so the exact audit proves from the other rows only
    # (fewer rows: every bound stays sound, possibly wider than the estimate's)
    blocks = [b for b in problem.blocks if not b.name.startswith(REAL_ROWS)]
    counts, types, truth = _counts(problem, types, blocks, ties)
    counts.interior = _estimate(replace(problem, blocks=blocks), types)
    return counts, types, truth


def _estimate(problem: FactoredProblem, types: ForestTypes) -> np.ndarray | None:
    """The maximum-entropy estimate of the rows (groups × labels): positive wherever some
    relaxed dataset is, so the exact audit's LP step asks only about counts it holds at 0 or at
    the whole group (one LP over every candidate otherwise takes longer than the rest of the
    audit on a hundred boosting rounds). ``None`` when the solver does not meet the rows."""
    from ppdm.maxent.solvers.forest_solve import solve_forest

    if not problem.blocks:
        return None
    try:
        solution = solve_forest(problem, feasible=types.truth())
    except MaxEntError:
        return None
    return solution.marginal if solution.status == "optimal" else None


def _counts(problem: FactoredProblem, types: AttackerTypes | ForestTypes, blocks: list | None, ties: Ties) -> tuple[CountProblem, Any, np.ndarray | None]:
    """The count problem of factored rows, label rows under the model's tie rule, and the truth."""
    counts, _, truth = factored_counts(problem, types.groups.counts, types.groups.group_of_record, types.true_type, blocks, ties)
    return counts, types, truth


_Model = TypeVar("_Model", Tree, Forest)
_Types = TypeVar("_Types", bound=AttackerTypes | ForestTypes)


def _solved(
    model: _Model, data: pd.DataFrame, time_limit: float | None,
    threat: ThreatModel | None, method: Method, ties: Ties, detail: Detail,
    build: Callable[[_Model, pd.DataFrame, ThreatModel, Ties], tuple[CountProblem, _Types, np.ndarray | None]], options: SearchOptions | None,
) -> tuple[ThreatModel, CountProblem, _Types, ExactBounds, np.ndarray]:
    """The threat model, the count problem ``build`` makes of the model, its bounds, and which
    records the result is about (not those whose full record the attacker holds)."""
    from ppdm.maxent.constraints.tree_constraints import Knowledge

    threat = _threat(model, data, Knowledge(), threat)
    counts, types, truth = build(model, data, threat, ties)
    bounds = exact_bounds(counts, time_limit, truth, method, detail=detail, options=options)
    targets = np.ones(types.groups.n_records, dtype=bool)
    if types.known_group is not None:
        targets = ~types.known_group[types.groups.group_of_record]
    return threat, counts, types, bounds, targets


def _tree(
    tree: Tree, data: pd.DataFrame, time_limit: float | None,
    threat: ThreatModel | None, method: Method, ties: Ties, detail: Detail, options: SearchOptions | None,
) -> AttackResult:
    threat, counts, types, bounds, targets = _solved(tree, data, time_limit, threat, method, ties, detail, tree_count_problem, options)
    groups = types.groups
    details = {"threat_model": threat.describe(tree.disclosure), "unknowns": types.domain.describe()}
    result = _result("exact", str(threat.sensitive), tuple(types.domain.sensitive.cells), groups, bounds, counts, types.true_sensitive(), targets, details)
    result.leaf_pairs = types.leaf_pairs()
    if pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result


def _forest(
    forest: Forest, data: pd.DataFrame, time_limit: float | None,
    threat: ThreatModel | None, method: Method, ties: Ties, detail: Detail, options: SearchOptions | None,
) -> AttackResult:
    options = _forest_options() if options is None else options
    threat, counts, types, bounds, targets = _solved(forest, data, time_limit, threat, method, ties, detail, forest_count_problem, options)
    groups = types.groups
    details = {
        "threat_model": threat.describe(forest.trees[0].disclosure),
        "model": f"{forest.algorithm or 'forest'}: {forest.n_trees} trees ({forest.combine})",
        "trees_used": int(types.used.sum()), "trees_left_out": types.left_out,
        "multiplicities": "known" if any(m is not None for m in forest.multiplicities) else "each record once",
        "unknowns": types.domain.describe(),
    }
    details.update(rounds_details(types))
    if types.rounds is not None and types.rounds.real:
        details["note"] = (
            f"the proof reads {len(types.rounds.real)} of the boosting rounds only where the known columns decide "
            "a leaf's records (there a leaf value is a whole class count; elsewhere it is a row with real coefficients)"
        )
        details.update(_partly_read(details["scope"], types.rounds.real))
    result = _result("exact", str(threat.sensitive), tuple(types.domain.sensitive.cells), groups, bounds, counts, types.true_sensitive(), targets, details)
    result.leaf_pairs = types.leaf_pairs()
    if pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result


#: Why the proof counts a boosting tree among those it left out when some of its rows are real.
PARTLY_READ = "their rows with real coefficients (leaf values, covers) are read by the proof only where the known columns decide a leaf's records"


def _partly_read(scope: Scope, real: Sequence[int]) -> dict[str, Any]:
    """The proof's scope with the trees it read in part (``real``) left out: a proof over fewer
    rows proves fewer certainties, so "nobody proved certain" there judges a part of the model
    only (:func:`~ppdm.report.verdict.not_judged`), never the whole of it."""
    out = {t for trees in scope.left_out.values() for t in trees}
    partly = sorted(int(t) for t in real if int(t) not in out)
    if not partly:
        return {}
    found = replace(scope, left_out={**scope.left_out, PARTLY_READ: partly})
    return {"scope": found, "trees_used": found.read, "trees_left_out": found.left_out_trees}


def _rules(
    rules: RuleSet, data: pd.DataFrame, quasi_identifiers: Sequence[str] | None, time_limit: float | None, method: Method,
    knowledge: RuleKnowledge, detail: Detail, options: SearchOptions | None,
) -> AttackResult:
    if knowledge.strict != "integer":
        raise PpdmError("the exact audit reads NAR rows on whole counts (strict='integer')")
    groups, true_codes, problem, stats = rules_audit_problem(rules, data, knowledge, quasi_identifiers)
    counts = from_joint(problem, groups.counts)
    truth = None
    if true_codes is not None:
        truth = truth_counts(counts.var_group, counts.var_label, groups.group_of_record, true_codes)
    counts.truth = truth
    interior = None
    if method != "network":
        from ppdm.maxent.solvers.solve import solve_linear

        interior = solve_linear(problem).p  # relative interior of the relaxation: the LP step's candidates
    options = SearchOptions() if options is None else options
    if options.engine is None:  # HiGHS branch and bound on large components: measured on paper 004's rule set (benchmarks/README.md)
        options = replace(options, engine="auto")
    bounds = exact_bounds(counts, time_limit, truth, method, detail=detail, interior=interior, options=options)
    details = {"rules": len(rules), "publish": rules.publish, "constraint_rows": {r.name: r.n_rows for r in counts.rows}}
    n = groups.n_records
    return _result("exact-rules", rules.sensitive, tuple(rules.values), groups, bounds, counts, true_codes, np.ones(n, dtype=bool), details)


def _result(
    attack: str, sensitive: str, values: tuple, groups: QIGroups, bounds: ExactBounds, counts: CountProblem,
    true_codes: np.ndarray | None, targets: np.ndarray, details: dict[str, object],
) -> AttackResult:
    mid = (bounds.min_lo + bounds.max_hi) / 2.0
    total = mid.sum(axis=1, keepdims=True)
    posterior = np.divide(mid, total, out=np.full(mid.shape, 1.0 / mid.shape[1]), where=total > 0)
    posterior[bounds.certain_groups] = bounds.certain[bounds.certain_groups].astype(float)
    details = details | {
        "exact": bounds.summary(),
        "variables": counts.n_vars,
        "rows": {r.name: r.n_rows for r in counts.rows},
    }
    result = AttackResult(
        attack=attack, sensitive=sensitive, values=values, groups=groups, posterior=posterior,
        provenance=_provenance(bounds), targets=targets, exposed=np.zeros(groups.n_records, dtype=bool),
        true_codes=true_codes, details=details,
    )
    result.bounds = {"min": bounds.min_lo, "max": bounds.max_hi, "undecided": bounds.undecided_groups}
    result.exposed = bounds.certain_groups[groups.group_of_record]
    return result


def _provenance(bounds: ExactBounds) -> list[str]:
    text = np.where(bounds.certain_groups, "proved certain", np.where(bounds.undecided_groups, "undecided", "proved not certain"))
    return text.tolist()
