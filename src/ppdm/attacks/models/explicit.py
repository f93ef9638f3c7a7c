"""The maximum-entropy attack on a published forest, under any threat model.

The attacker's most neutral belief P(u | q) given every tree's published rows at once
(:mod:`ppdm.maxent.constraints.forest_constraints`: one problem over the joint leaves, each tree's rows
weighted by the multiplicities a scikit-learn forest lets anyone redraw), and their belief about
the sensitive attribute, its marginal; the same audit as paper 000 §3–4 for a tree, with every
tree's leaves as constraints. Paper 000's setting (every split attribute known, the class
sensitive) is solved by truncated Newton (:mod:`ppdm.maxent.solvers.forest_solve`), fast for hundreds
of trees; other threat models by the factored form's solver, within a size cap.

Groups are (known values, multiplicity vector) pairs: records of one known-value group that two
trees count differently are told apart (see :mod:`ppdm.maxent.table.forest_types`). Provenance names
every tree's leaf ("tree 0 leaf 17; tree 1 leaf 4; ...").
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.scope import Scope
from ppdm.attacks.core.threat import ThreatModel, required_threat
from ppdm.attacks.core.truth import check_truth
from ppdm.attacks.models.estimate import SoundStepOptions, maxent_result, solve_details, sound_proof, with_lp
from ppdm.defaults import FOREST_SECONDS
from ppdm.errors import InfeasibleError, PpdmError, UninformativeKnowledgeWarning, check_options
from ppdm.maxent.constraints.boosting_rows import REAL_ROWS
from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.solvers.factored import FactoredSolution
from ppdm.maxent.solvers.forest_solve import ForestSolveOptions, solve_forest
from ppdm.maxent.solvers.solution import OPTIMAL
from ppdm.maxent.table import forest_types as explicit_table
from ppdm.maxent.table.forest_types import ForestTypes
from ppdm.tree.forest import Forest

#: Weight of the uniform distribution over a group's possible values mixed into an answer that is
#: not optimal (see :func:`sound_posterior`): no value of an undecided group reaches certainty.
UNDECIDED_MIX = 1e-6

#: Records by which a boosting round's leaf-value and cover intervals are widened, in turn, when
#: the solve does not converge with them (:func:`_solve_with_real_rows`).
WIDEN = (0.1, 1.0, 10.0)

__all__ = ["FOREST_SECONDS", "ForestAuditOptions", "forest_maxent_attack", "sound_posterior"]

UNINFORMATIVE = (
    "no tree publishes anything the known columns do not already decide (no class counts, rates or labels; "
    "sample counts only inform about unknown split attributes): the estimate is uniform"
)


@dataclass(frozen=True)
class ForestAuditOptions:
    """How a forest's maximum-entropy audit is computed.

    Every joint route of the trees is enumerated (exact, within :attr:`max_routed`).
    """

    #: The explicit solve's settings (:func:`~ppdm.maxent.solvers.forest_solve.solve_forest`): by
    #: default its own, with a time limit of :data:`FOREST_SECONDS`.
    solve: ForestSolveOptions = field(default_factory=lambda: ForestSolveOptions(time_limit=FOREST_SECONDS))
    #: The time limit covers the whole audit: the solve gets what building the problem left, less
    #: this share of the build's time, kept for the work after the solve (the result, its
    #: possible values, the audit's baselines), which reads the same types the build made
    #: (100 trees of depth 8 over 30,162 Adult rows: a 20 s build, 3.4 s after the solve), and
    #: as long again as the build spent routing the records through the trees: the baselines
    #: route them once more (100 trees of unlimited depth over 30,162 rows, no bootstrap, a binary
    #: secret: a 22 s build, 10.5 s after the solve, 4.7 s of it routing; the audit had ended at
    #: 180.2 s for 180 s). The fast sound proof runs before the solve, which gets what it left
    #: (after the solve it took 4–5 s the reserve did not cover: 100 trees over 10,000 rows, the
    #: six-valued ``relationship``, audits ending at 61–62 s for 60 s).
    after_share: float = 0.25
    #: And this share of the time limit, for a Newton step that runs longer than the one before it
    #: and the checks of the final point (Adult 3k, 100 trees of depth 5, six-valued secret, 60 s:
    #: without it the audit ended 0.3 s late).
    margin: float = 0.02
    #: Building the rows of a forest whose trees are not added up stops at this share of the time
    #: limit: the trees not reached are left out (a lower bound, said so) and the rest of the time
    #: goes to the solve (100 trees of unlimited depth over 10,000 Adult rows, a six-valued secret,
    #: no bootstrap: the build alone took 100 s at load 6 for a 60 s limit).
    build_share: float = 0.5
    #: The most (group, cell of the unknowns the trees split on, tree) triples the explicit table
    #: routes (default :data:`~ppdm.maxent.table.forest_types.MAX_ROUTED`, 4·10⁷): beyond it
    #: the audit is refused (:class:`~ppdm.errors.RoutingLimitError`), and ``ppdm.audit`` pools
    #: the trees' estimates instead.
    max_routed: int = explicit_table.MAX_ROUTED

    def __post_init__(self) -> None:
        check_options(self)
        if not 0 <= self.after_share < 10:
            raise PpdmError(f"after_share must be a share of the build's time in [0, 10), got {self.after_share!r}")
        if not 0 < self.build_share <= 1:
            raise PpdmError(f"build_share must be a share of the time limit in (0, 1], got {self.build_share!r}")
        if not 0 <= self.margin < 1:
            raise PpdmError(f"margin must be a share of the time limit in [0, 1), got {self.margin!r}")
        if isinstance(self.max_routed, bool) or not isinstance(self.max_routed, int) or self.max_routed < 1:
            raise PpdmError(f"max_routed must be a whole number of routes >= 1, got {self.max_routed!r}")


def forest_maxent_attack(
    forest: Forest,
    data: pd.DataFrame,
    threat: ThreatModel,
    knowledge: Knowledge = Knowledge(),
    tol: float = 1e-9,
    progress: Callable[[int, int], None] | None = None,
    options: ForestAuditOptions | None = None,
    prove: bool = True,
    sound: SoundStepOptions | None = None,
) -> AttackResult:
    """Estimate every group's P(sensitive | q) from every tree of ``forest`` (see the module docstring).

    ``threat`` is resolved against ``data`` (the training rows, in the order the model was fitted
    on when it has multiplicities); ``threat.publish`` audits less than the trees publish;
    ``progress(done, total)`` is called after each tree's rows are built. ``options``: the explicit
    enumeration's (:class:`ForestAuditOptions`), which refuses beyond its cap.
    The explicit solve's settings are ``options.solve``
    (:class:`~ppdm.maxent.solvers.forest_solve.ForestSolveOptions`; by default a time limit of
    :data:`FOREST_SECONDS`). An answer that is not optimal (the time limit reached, or zeros
    guessed) keeps only proved certainties (:func:`sound_posterior`); ``details["possible_values"]``
    counts the groups by how many values remain possible. ``prove``: the groups the exact
    audit's fast sound steps prove certain are certain too (:func:`~ppdm.attacks.models.estimate.sound_proof`,
    run before the solve so that its time comes out of the solve's;
    ``sound``: their settings).
    """
    start = time.perf_counter()
    threat = required_threat("forest_maxent_attack", threat).resolve(data, forest.class_attribute, splits=forest.split_attributes)
    forest = forest.published(threat.publish)
    knowledge = replace(knowledge, sa=bool(threat.sa_published))
    options = ForestAuditOptions() if options is None else options
    limit = options.solve.time_limit
    problem, types = forest_type_problem(
        forest, data, list(threat.known or ()), str(threat.sensitive), knowledge, threat.known_individuals, progress, threat.outputs,
        deadline=None if limit is None else start + options.build_share * limit, max_routed=options.max_routed,
    )
    check_truth(problem, types)
    built = time.perf_counter() - start
    proof = sound_proof(types, problem, None, sound, lp=False) if prove else None  # before the solve, which gets what it left
    solution, relaxed = _solve_with_real_rows(problem, types, tol, _after_build(options, built, types.route_seconds, time.perf_counter() - start - built))
    if solution.status != OPTIMAL and solution.possible.size:
        solution.marginal = sound_posterior(solution.marginal, solution.possible)
    details = _details(forest, threat, problem, types, solution)
    if relaxed:
        details["note"] = f"{details['note']}; {relaxed}" if details.get("note") else relaxed
    if solution.status != OPTIMAL:
        why = _not_the_optimum(solution)
        details["not_the_optimum"] = why
        details["note"] = why + (f"; {str(details['note']).lstrip('; ')}" if details.get("note") else "")
    if not problem.blocks:
        warnings.warn(UNINFORMATIVE, UninformativeKnowledgeWarning, stacklevel=3)
        details["note"] = UNINFORMATIVE + (f"; {details['note']}" if details.get("note") else "")
    if proof is not None:  # the LP step over the small components, the estimate its interior point
        proof = with_lp(proof, solution.marginal, _lp_seconds(sound, options, start, types.route_seconds))
    result = maxent_result(types, threat, solution.marginal, details, proof=proof)
    if pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result


def _not_the_optimum(solution: FactoredSolution) -> str:
    """Why an answer is not the maximum-entropy solution, and what it still claims, in words."""
    open_groups = int((solution.possible.sum(axis=1) > 1).sum()) if solution.possible.size else 0
    why = (
        "the time limit ended the solve (what was left of it after building the problem)"
        if "stopped at the time limit" in solution.face
        else "the solver did not reach the maximum-entropy solution (zeros guessed or rows not met)"
    )
    return (
        f"{why}: the numbers are the best estimate so far, and only proved certainties count as certain "
        f"({open_groups:,} groups keep more than one possible value); a larger time limit gets closer"
    )


def _after_build(options: ForestAuditOptions, spent: float, routing: float = 0.0, proving: float = 0.0) -> ForestAuditOptions:
    """``options`` with the solve's time limit less the ``spent`` seconds of building the problem,
    the share of them kept for the work after the solve (``options.after_share``), the
    ``routing`` seconds the build spent routing the records through the trees (the baselines
    after the solve route them once more: the model's predictions), the ``proving`` seconds the
    fast sound proof took before it and the margin (``options.margin`` of the limit): the
    audit's deadline covers the whole audit, not the solve alone."""
    limit = options.solve.time_limit
    if limit is None:
        return options
    left = max(limit * (1 - options.margin) - spent * (1 + options.after_share) - routing - proving, 0.0)
    return replace(options, solve=replace(options.solve, time_limit=left))


def _lp_seconds(sound: SoundStepOptions | None, options: ForestAuditOptions, start: float, routing: float) -> float:
    """The proof's LP step's time limit: its own, within what the audit's time limit leaves after
    the ``routing`` seconds the baselines will take (what it leaves open stays open: sound)."""
    own = (sound or SoundStepOptions()).lp_seconds
    limit = options.solve.time_limit
    return own if limit is None else min(own, max(start + limit * (1 - options.margin) - time.perf_counter() - routing, 0.0))


def _solve_with_real_rows(problem: FactoredProblem, types: ForestTypes, tol: float, options: ForestAuditOptions) -> tuple[FactoredSolution, str]:
    """The solve, and what it had to relax to converge ('' when nothing).

    Boosting rounds whose leaves' records the known columns do not decide give leaf-value and
    cover rows: intervals :data:`~ppdm.maxent.constraints.boosting_rows.ABSOLUTE` records wide
    about real-valued sums, each a pair of opposite rows, where the dual may stall (both rows of a
    pair active at once, their Hessian singular). Then the intervals are widened by
    :data:`WIDEN` records in turn — a relaxation: the truth still meets them, the rows still say
    almost all they said — and only when none converges is the estimate made without them (a
    weaker attacker, said so), never reported from a solve that missed its rows. The retries share
    the solve's time limit: each gets what the earlier ones left."""
    feasible = types.truth()
    start = time.perf_counter()

    def budget() -> ForestSolveOptions:
        limit = options.solve.time_limit
        return options.solve if limit is None else replace(options.solve, time_limit=max(limit - (time.perf_counter() - start), 0.0))

    try:
        return solve_forest(problem, tol=tol, feasible=feasible, options=options.solve), ""  # the data meets every row
    except InfeasibleError:
        if not any(b.name.startswith(REAL_ROWS) for b in problem.blocks):
            raise
    n_real = len(types.rounds.real) if types.rounds else 0
    blocks, n = problem.blocks, types.groups.n_records
    for extra in WIDEN:
        problem.blocks = [replace(b, b=b.b + extra / n) if b.name.startswith(REAL_ROWS) else b for b in blocks]
        try:
            solution = solve_forest(problem, tol=tol, feasible=feasible, options=budget())
        except InfeasibleError:
            continue
        return solution, (
            f"the leaf-value and cover rows of {n_real} rounds (whose leaves' records the known columns do not decide) "
            f"were widened by {extra:g} records on each side for the solver to converge (a relaxation: the truth meets them)"
        )
    problem.blocks = [b for b in blocks if not b.name.startswith(REAL_ROWS)]
    solution = solve_forest(problem, tol=tol, feasible=feasible, options=budget())
    return solution, (
        f"the solver did not converge with the leaf-value rows of {n_real} rounds (whose leaves' records the known "
        "columns do not decide), even widened: the estimate is made without them"
    )


def sound_posterior(marginal: np.ndarray, possible: np.ndarray) -> np.ndarray:
    """An estimate that is not the optimum, made to claim no more than is proved: 0 on every value
    proved impossible, 1 on a group's value when it alone is possible, and for a group with several
    possible values its estimate mixed with :data:`UNDECIDED_MIX` of the uniform distribution over
    them (no value of it then counts as certain, :func:`ppdm.metrics.baseline.is_certain`). The
    truth is always among the possible values, so no certain value is wrong."""
    p = np.where(possible, np.clip(marginal, 0.0, None), 0.0)
    n = possible.sum(axis=1, keepdims=True)
    total = p.sum(axis=1, keepdims=True)
    uniform = possible / np.maximum(n, 1)
    p = np.where(total > 0, p / np.where(total > 0, total, 1.0), uniform)
    return np.where(n > 1, (1 - UNDECIDED_MIX) * p + UNDECIDED_MIX * uniform, uniform)


def _details(forest: Forest, threat: ThreatModel, problem: FactoredProblem, types: ForestTypes, solution: FactoredSolution) -> dict[str, object]:
    details = solve_details(types, threat, forest.trees[0].disclosure, problem, solution, solution.marginal)
    details.update({
        "model": f"{forest.algorithm or 'forest'}: {forest.n_trees} trees ({forest.combine})",
        "trees_used": int(types.used.sum()),
        "trees_left_out": types.left_out,
        "multiplicities": "known" if any(m is not None for m in forest.multiplicities) else "each record once",
        "joint_leaves": types.n_blocks,
        "face": solution.face,
    })
    if solution.possible.size:
        counts = np.bincount(solution.possible.sum(axis=1), minlength=solution.possible.shape[1] + 1)
        details["possible_values"] = {int(k): int(c) for k, c in enumerate(counts) if c}
    details.update(rounds_details(types))
    return details


def rounds_details(types: ForestTypes) -> dict[str, object]:
    """Which trees gave rows (``scope``, :class:`~ppdm.attacks.core.scope.Scope`, which the summary,
    the printout and the report's first card state): for a boosted model every round's account
    (``rounds``; ``trees_used`` then counts the trees that gave rows, class counts or leaf values),
    else the trees left out for unknown multiplicities and those not read before the build's deadline."""
    if types.rounds is not None:
        scope = Scope.of_rounds(types.rounds)
        return {"rounds": types.rounds.summary(), "scope": scope, "trees_used": scope.read, "trees_left_out": scope.left_out_trees}
    out: dict[str, object] = {"scope": Scope.of_forest(types.forest.n_trees, types.left_out, types.unread)}
    if types.unread:
        out["trees_unread"] = types.unread
    return out
