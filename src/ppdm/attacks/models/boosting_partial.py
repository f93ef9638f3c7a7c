"""A boosted model against an attacker who knows a few columns: every round read, per completion.

The joint table of a boosted model under partial knowledge holds, per group of known values,
every combination of the unknown columns' cells over all rounds: beyond a cap (58 M routes on
Adult with 3 known columns) it is not built, and the pooled estimate reads the first round only
(:mod:`ppdm.attacks.models.pooled`). Here each group's *completions* (a cell of every unknown
split column and the sensitive one) are the unknowns: a completion fixes the person's leaf, score,
probability and hessian in every round, so every round's class counts, leaf values, covers and
row counts are linear rows over the completions' probabilities
(:mod:`ppdm.maxent.table.boosting_completions`), and the maximum-entropy belief over them is one
convex dual (:mod:`ppdm.maxent.solvers.completion_dual`), whose cost grows with completions × rounds.

* **Enumerated** where a group's completions number at most :attr:`CompletionOptions.enumerate`:
  every completion listed; the answer is the maximum-entropy one over every round's rows, each met
  to the ridge's violation (reported in records).
* **Sampled** otherwise: completions drawn leaf by leaf of the first tree, at least one for
  every leaf a group can reach, uniform over the cells the leaf's path allows (with every
  sensitive cell it allows, ``expand_sensitive``, or one drawn) and weighted by the cells it stands for
  (:func:`~ppdm.maxent.table.boosting_completions.stratified_completions`: the first tree's base
  measure is exact leaf by leaf, so its rows alone give its exact answer); optionally ``stages``
  redraws from the product of the cells' fitted shares (adaptive importance sampling, Cappé et
  al. 2004). The answer is an **approximation** and says so (``status`` ``"approximate"``):
  each posterior's Monte-Carlo standard error (``details["max_std_error"]``) and every row's
  remaining violation in records (``details["max_violation_records"]``).

Measured (``benchmarks/README.md``, ``bench_partial_knowledge.py --method completions``): on
Adult with 3 known columns the stratified sample reproduces the first round's exact estimate
(``marital-status`` accuracy 0.620, as the pooled estimate), but a sample of ~60 k completions
cannot meet the later rounds' rows (thousands of records off: the counting measure over the
cells is far from the data, which the later rounds' leaves reveal), and the estimate over all
100 rounds is then worse than the first round's. It is therefore not the road ``ppdm.audit``
takes past the joint table's cap; the enumerated form is exact where it fits. Drawn among a
reference sample's rows sharing the known values too (``reference=``), the rows are met to
60–1,300 records, but the accuracy (0.57–0.59 on Adult, 3 and 5 known) stays below the first
round's 0.620: still not the audit's road.

The truth is feasible: every row is checked on the training records themselves before the fit
(:func:`~ppdm.maxent.table.boosting_completions.check_truth_rows`). Nobody is certain on the
estimate's word: the certain are those each person's possible values over all trees leave one
value (:func:`ppdm.attacks.models.possible.possible_values`, sound), to which the posterior is restricted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.scope import Scope
from ppdm.attacks.core.threat import ThreatModel, required_threat
from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, check_options
from ppdm.maxent.solvers.completion_dual import CompletionDualOptions, CompletionSolution, ScalingOptions, scale_completions, solve_completions
from ppdm.maxent.table.boosting_completions import (
    CompletionRows,
    Completions,
    Proposal,
    attacker_groups,
    check_truth_rows,
    completion_features,
    completion_rows,
    enumerate_completions,
    n_completions,
    reference_completions,
    stratified_completions,
    truth_rows,
)
from ppdm.maxent.table.forest_types import forest_domain
from ppdm.tree.forest import Forest
from ppdm.tree.model import encode_categories

__all__ = ["CompletionOptions", "completions_attack"]


@dataclass(frozen=True)
class CompletionOptions:
    """``enumerate``: the most completions per group listed whole; beyond, ``budget`` draws in all
    are made leaf by leaf of the first tree (at least ``min_per_group`` and at most
    ``max_per_group`` per group, in proportion to its records; at least one per leaf the group
    reaches; ``expand_sensitive``: each with every sensitive cell the leaf allows), then ``stages``
    adaptive redraws from the product of the cells' fitted shares, ``uniform_share`` of them with
    every cell alike; ``dual``: the fit's settings."""

    enumerate: int = 4096
    budget: int = 20_000
    min_per_group: int = 1
    max_per_group: int = 2048
    stages: int = 0
    expand_sensitive: bool = False
    uniform_share: float = 0.2
    stage_seconds: float = 6.0
    random_state: int = 0
    dual: CompletionDualOptions = CompletionDualOptions()
    scaling: ScalingOptions = ScalingOptions()
    #: ``"scaling"`` (cyclic iterative scaling) or ``"lbfgs"`` (the ridge dual).
    solver: str = "scaling"
    #: with a reference sample: the share of each group's base measure left to the stratified draws
    #: (the rest: the reference rows' completions, :func:`~ppdm.maxent.table.boosting_completions.reference_completions`).
    reference_share: float = 0.5

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


def completions_attack(
    forest: Forest, data: pd.DataFrame, threat: ThreatModel, options: CompletionOptions = CompletionOptions(),
    possible: np.ndarray | None = None, reference: pd.DataFrame | None = None,
) -> AttackResult:
    """Every group's posterior over the sensitive cells from every round of the boosted ``forest``
    (module docstring). ``threat``: resolved against ``data`` (the training rows); ``possible``:
    per row the values still possible over all trees (sound): the posterior is restricted to them;
    ``reference``: a sample of the population whose completions the sampled ones are drawn among
    (with the stratified draws, ``options.reference_share``; no redraw stages)."""
    began = time.perf_counter()
    threat = required_threat("completions_attack", threat)
    if forest.combine != "additive":
        raise DataError("the completions estimate reads a boosted model (additive trees)")
    known = [c for c in (threat.known or ()) if c != threat.sensitive]
    sensitive = str(threat.sensitive)
    rng = np.random.default_rng(options.random_state)
    domain = forest_domain(forest, data, known, sensitive)
    exact = n_completions(domain) <= options.enumerate
    if exact:
        comp, used = enumerate_completions(forest, data, known, sensitive)
    elif reference is not None:
        options = replace(options, stages=0)
        per = _allocation(data, known, options, forest)
        comp, used = reference_completions(forest, data, known, sensitive, reference, per, rng, options.reference_share)
    else:
        comp, used = stratified_completions(forest, data, known, sensitive, _allocation(data, known, options, forest), rng, options.expand_sensitive)
    sens_true = _true_sens(comp, data, sensitive, forest)
    sa = None
    if threat.sa_published and sens_true is not None:
        sa = np.bincount(sens_true if sens_true.min(initial=0) >= 0 else _classes(data, forest), minlength=domain.sensitive.size).astype(float)
    rows = completion_rows(forest, len(data), used, sa)
    if sens_true is not None:
        check_truth_rows(rows, truth_rows(rows, forest, data, _record_mult(comp), sens_true if sens_true.min(initial=0) >= 0 else None))
    solution, comp = _fit(rows, forest, comp, options, rng, data, known, sensitive)
    posterior, se, ess = _posterior(comp, solution, domain.sensitive.size)
    return _result(forest, data, threat, comp, rows, solution, posterior, se, ess, possible, exact, time.perf_counter() - began)


def _allocation(data: pd.DataFrame, known: list[str], options: CompletionOptions, forest: Forest) -> np.ndarray:
    groups, _, _ = attacker_groups(forest, data, known)
    share = groups.counts / groups.counts.sum()
    k = np.ceil(share * options.budget).astype(np.int64)
    return np.clip(k, options.min_per_group, options.max_per_group)


def _fit(
    rows: CompletionRows, forest: Forest, comp: Completions, options: CompletionOptions, rng: np.random.Generator,
    data: pd.DataFrame, known: list[str], sensitive: str,
) -> tuple[CompletionSolution, Completions]:
    """The dual over the completions, then, when sampled, ``options.stages`` redraws from the
    cells' fitted shares (each stage's fit a short one, ``options.stage_seconds``, but the last)."""
    theta = None
    stages = 0 if comp.exact else options.stages
    per = _allocation(data, known, options, forest)
    for stage in range(stages + 1):
        f = completion_features(rows, forest, comp)
        allowed = _allowed(comp, rows.n_classes)
        group_w = comp.groups.counts / comp.groups.counts.sum()
        sens = comp.sens if comp.sens.min(initial=0) >= 0 else np.full(comp.n, -1)
        last = stage == stages
        dual = options.dual if last else replace(options.dual, time_limit=options.stage_seconds)
        if options.solver == "scaling":
            scaling = options.scaling if last else replace(options.scaling, time_limit=options.stage_seconds)
            solution = scale_completions(rows, f, comp.log_weight, allowed, comp.start, group_w, sens, scaling)
            if last and comp.exact and not solution.converged:  # polished by the ridge dual from where scaling stopped
                solution = solve_completions(rows, f, comp.log_weight, allowed, comp.start, group_w, sens, dual, solution.theta)
        else:
            solution = solve_completions(rows, f, comp.log_weight, allowed, comp.start, group_w, sens, dual, theta)
        theta = solution.theta
        if last:
            return solution, comp
        proposal = _proposal(comp, solution).mixed(Proposal.uniform(comp.routed), options.uniform_share)
        comp, _ = stratified_completions(forest, data, known, sensitive, per, rng, options.expand_sensitive, proposal)
    raise AssertionError("unreachable")  # pragma: no cover


def _proposal(comp: Completions, solution: CompletionSolution) -> Proposal:
    """Each routed column's cells weighted by the fit's shares of the records (a product proposal)."""
    mass = solution.weights.sum(axis=1)
    out = []
    for j, c in enumerate(comp.routed):
        p = np.bincount(comp.cells[:, j], weights=mass, minlength=c.size)
        out.append(p / p.sum())
    return Proposal(tuple(out))


def _allowed(comp: Completions, k: int) -> np.ndarray:
    gc = comp.group_class[comp.group_of]
    allowed = np.ones((comp.n, k), dtype=bool)
    fixed = gc >= 0
    allowed[fixed] = False
    allowed[np.flatnonzero(fixed), gc[fixed]] = True
    return allowed


def _classes(data: pd.DataFrame, forest: Forest) -> np.ndarray:
    return encode_categories(data[forest.class_attribute], forest.classes)


def _true_sens(comp: Completions, data: pd.DataFrame, sensitive: str, forest: Forest) -> np.ndarray | None:
    """Each record's sensitive cell (−1 each when the class is sensitive), ``None`` without the column."""
    if sensitive not in data.columns:
        return None
    if sensitive == forest.class_attribute:
        return np.full(len(data), -1)
    try:
        return comp.domain.sensitive.codes(data[sensitive])
    except DataError:
        return None


def _record_mult(comp: Completions) -> np.ndarray:
    return comp.multiplicity[comp.groups.group_of_record]


def _posterior(comp: Completions, solution: CompletionSolution, n_s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group P(s | q), its Monte-Carlo standard error (0 when enumerated) and the completions'
    effective sample size."""
    g = comp.group_of
    group_mass = np.bincount(g, weights=solution.weights.sum(axis=1), minlength=comp.groups.n_groups)
    omega = solution.weights.sum(axis=1) / np.maximum(group_mass[g], 1e-300)
    if comp.sens.min(initial=0) >= 0:
        a = np.zeros((comp.n, n_s))
        a[np.arange(comp.n), comp.sens] = 1.0
    else:
        a = solution.weights / np.maximum(solution.weights.sum(axis=1, keepdims=True), 1e-300)
    post = np.zeros((comp.groups.n_groups, n_s))
    np.add.at(post, g, omega[:, None] * a)
    post /= np.maximum(post.sum(axis=1, keepdims=True), 1e-300)
    if comp.exact:
        return post, np.zeros_like(post), np.bincount(g, minlength=comp.groups.n_groups).astype(float)
    var = np.zeros_like(post)
    np.add.at(var, g, (omega[:, None] ** 2) * (a - post[g]) ** 2)
    ess = 1.0 / np.maximum(np.bincount(g, weights=omega**2, minlength=comp.groups.n_groups), 1e-300)
    return post, np.sqrt(var), ess


def _result(
    forest: Forest, data: pd.DataFrame, threat: ThreatModel, comp: Completions, rows: CompletionRows, solution: CompletionSolution,
    posterior: np.ndarray, se: np.ndarray, ess: np.ndarray, possible: np.ndarray | None, exact: bool, seconds: float,
) -> AttackResult:
    """The result over the records: each group's posterior restricted to each person's possible values."""
    groups = comp.groups
    per_record = posterior[groups.group_of_record]
    allowed = np.ones_like(per_record, dtype=bool) if possible is None else possible.astype(bool)
    per_record = per_record * allowed
    per_record /= np.maximum(per_record.sum(axis=1, keepdims=True), 1e-300)
    signature = np.unique(np.round(per_record, 12), axis=0, return_inverse=True)[1].ravel()
    known = [c for c in (threat.known or ()) if c != threat.sensitive]
    out_groups = QIGroups.split_by(data, known, signature)
    first = out_groups.first_rows()
    certain = allowed.sum(axis=1) == 1
    targets = np.ones(len(data), dtype=bool)
    targets[list(threat.known_individuals)] = False
    truth = _true_sens(comp, data, str(threat.sensitive), forest)
    if truth is not None and truth.min(initial=0) < 0:
        truth = _classes(data, forest)
    slack_hit = solution.violation_records > rows.slack
    fitted = exact and solution.converged and not slack_hit.any()
    result = AttackResult(
        attack="maxent", sensitive=str(threat.sensitive), values=tuple(comp.domain.sensitive.cells), groups=out_groups,
        posterior=per_record[first], provenance=[f"{'every' if exact else f'{int(np.diff(comp.start)[groups.group_of_record[i]])} sampled'} completions, every round" for i in first],
        targets=targets, exposed=certain & targets, true_codes=truth,
        std_error=se[groups.group_of_record][first],
    )
    rounds = rows.rounds
    result.details = {
        "threat_model": threat.describe(),
        "method": "completions (enumerated)" if exact else "completions (sampled)",
        "status": "optimal" if fitted else "approximate",
        "estimate": (
            "the maximum-entropy belief over each group's completions (a cell of every unknown split column), every "
            "round's class counts, leaf values, covers and row counts as rows" + ("" if exact else ", the completions sampled")
        ),
        "completions": int(comp.n),
        "completions_per_group": n_completions(comp.domain),
        "rows": int(rows.n_rows),
        "solver_seconds": round(solution.seconds, 3),
        "seconds": round(seconds, 3),
        "iterations": solution.iterations,
        "converged": solution.converged,
        "max_violation_records": float(solution.violation_records.max(initial=0.0)),
        "rows_beyond_slack": int(slack_hit.sum()),
        "max_std_error": float(se.max(initial=0.0)),
        "mean_std_error": float((se.max(axis=1) * groups.counts).sum() / groups.counts.sum()) if se.size else 0.0,
        "min_effective_sample": float(ess.min(initial=0.0)),
        "certain_proved": int((certain & targets).sum()),
        "rounds": rounds.summary(),
        "scope": Scope.of_rounds(rounds),
        "real_rows_trees": rows.real_trees(),
        **{k: v for k, v in comp.extra.items() if isinstance(v, int)},  # reference completions, when drawn among a sample
    }
    if not fitted:
        details_note = (
            f"an approximate estimate: every round read over {'every completion' if exact else 'sampled completions'} of each "
            f"group; rows met to {result.details['max_violation_records']:.2g} records, posteriors to a standard error of "
            f"{result.details['max_std_error']:.2g} at most"
        )
        result.details["note"] = details_note
    if pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result
