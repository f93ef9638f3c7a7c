"""From a solved maximum-entropy problem to an :class:`AttackResult`: one step for trees and forests.

Whatever the attacker's table (explicit slots :class:`~ppdm.maxent.table.unknowns.AttackerTable`, a
tree's types :class:`~ppdm.maxent.table.attacker_types.AttackerTypes`, a forest's
:class:`~ppdm.maxent.table.forest_types.ForestTypes`) and whichever solver ran, the result holds the
same things: per group the posterior P(sensitive | q) (paper 000 §3), its provenance and leaf
pairs, the targets (everyone but the fully known individuals), the certain ones as exposed, and
the details every output prints (threat model, problem size, solver status, divergences, §5).

The certain ones are every group the estimate holds at one value and every group the exact
audit's fast sound steps prove certain on whole counts (:func:`proved_certain`: integer bound
propagation and the LP relaxation, no integer search): a point the solver only approaches (a
share of 1 − 10⁻⁸ where the relaxation forces 1) is counted once proved, never on the solver's
word alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

import numpy as np

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, MaxEntError, check_options
from ppdm.exact.build import factored_counts, n_factored_pairs
from ppdm.exact.solve import SOUND_LP_NONZEROS, SOUND_LP_SECONDS, sound_bounds
from ppdm.maxent.constraints.boosting_rows import REAL_ROWS
from ppdm.maxent.rows.factored_problem import FactoredProblem
from ppdm.maxent.rows.problem import MaxEntProblem
from ppdm.metrics.baseline import CERTAINTY_TOL
from ppdm.metrics.divergence import individual_divergence, overall_divergence
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.leaf_pairs import LeafPairs


class AttackerTableLike(Protocol):
    """What the three attacker's tables share and the result reads."""

    groups: QIGroups
    known_group: np.ndarray | None

    @property
    def domain(self) -> Any: ...

    def true_sensitive(self) -> np.ndarray | None: ...

    def true_marginal(self) -> np.ndarray | None: ...

    def provenance(self) -> list[str]: ...

    def leaf_pairs(self) -> LeafPairs: ...


def solve_details(
    table: AttackerTableLike, threat: ThreatModel, disclosure: Disclosure, problem: MaxEntProblem | FactoredProblem, solution: Any,
    posterior: np.ndarray, coverage: str = "exact",
) -> dict[str, object]:
    """The details of one maximum-entropy audit: the threat model in one line, the unknowns, the
    problem's size and rows by family (a forest's trees added up), the solver's status and
    residuals, and the divergences from the truth when the table holds it."""
    rows: dict[str, int] = {}
    for block in problem.blocks:
        family = block.name.split(" tree ")[0]
        rows[family] = rows.get(family, 0) + block.n_rows
    details: dict[str, object] = {
        "threat_model": threat.describe(disclosure),
        "unknowns": table.domain.describe(),
        "coverage": coverage,
        "solver_seconds": round(solution.seconds, 4),
        "max_violation": solution.max_violation,
        "kkt_residual": solution.kkt_residual,
        "iterations": solution.iterations,
        "newton_steps": solution.newton_steps,
        "variables": problem.n_slots if isinstance(problem, FactoredProblem) else problem.n_variables,
        "constraint_rows": rows,
        "status": solution.status,
        "entropy": solution.entropy,
        "form": "factored" if isinstance(problem, FactoredProblem) else "slots",
    }
    if isinstance(problem, FactoredProblem):
        details["types"] = problem.n_types
    true = table.true_marginal()
    if true is not None:
        details["overall_divergence"] = overall_divergence(true, posterior, table.groups.weights)
        details["min_individual_divergence"] = float(individual_divergence(true, posterior).min())
    return details


@dataclass(frozen=True)
class SoundStepOptions:
    """The fast sound steps after the estimate (:func:`proved_certain`): ``pairs``, they run on
    count problems of at most this many (group, type) counts (default 1,000,000): building,
    merging and propagating take about 5 s per million (the README's tree on Adult under a
    6-column attacker: 2.1 million counts, 10.7 s, nobody proved beyond the estimate; under the
    insider: 0.25 s, 30 people added). ``lp_seconds``: the LP step's time limit (default
    :data:`~ppdm.exact.solve.SOUND_LP_SECONDS`; what it leaves open stays open, still sound); a
    forest's estimate with a time limit lowers it to what its deadline leaves."""

    pairs: int = 1_000_000
    lp_seconds: float = SOUND_LP_SECONDS

    def __post_init__(self) -> None:
        check_options(self)  # a count '5' or 2.5 is refused here, naming the field


def maxent_result(
    table: AttackerTableLike, threat: ThreatModel, posterior: np.ndarray, details: dict[str, object],
    problem: MaxEntProblem | FactoredProblem | None = None, sound: SoundStepOptions | None = None, proof: SoundProof | None = None,
) -> AttackResult:
    """The :class:`AttackResult` of a maximum-entropy audit over ``table``: certain groups exposed,
    fully known individuals not targets. With the factored ``problem`` solved, the groups the
    exact audit's fast sound steps prove certain are certain too (:func:`proved_certain`;
    ``details["sound_steps"]`` says what they proved and took; ``sound``: their settings), or
    those of ``proof`` when it was made already (:func:`sound_proof`, before the solve)."""
    if proof is not None:
        posterior, details["sound_steps"] = hold_proved(posterior, proof, table.groups.counts)
    elif isinstance(problem, FactoredProblem):
        posterior, details["sound_steps"] = proved_certain(table, problem, posterior, sound)
    groups = table.groups
    n = len(groups.group_of_record)  # rows of the table (counted combinations on a Dask table)
    targets = np.ones(n, dtype=bool)
    if table.known_group is not None:
        targets = ~table.known_group[groups.group_of_record]
    result = AttackResult(
        attack="maxent",
        sensitive=str(threat.sensitive),
        values=tuple(table.domain.sensitive.cells),
        groups=groups,
        posterior=posterior,
        provenance=table.provenance(),
        targets=targets,
        exposed=np.zeros(n, dtype=bool),
        true_codes=table.true_sensitive(),
        details=details,
        leaf_pairs=table.leaf_pairs(),
    )
    result.exposed = result.certain_groups[groups.group_of_record]
    return result


@dataclass(frozen=True)
class SoundProof:
    """What the fast sound steps proved over a problem's rows: per group × value whether the
    value is proved certain (``None`` when they did not run, ``details["skipped"]`` says why),
    and what they did."""

    certain: np.ndarray | None
    details: dict[str, object]
    #: the count problem and the records' truth it was proved over (for :func:`with_lp`)
    counts: Any = None
    truth: Any = None
    #: whether a component is small enough for the LP step (:data:`~ppdm.exact.solve.SOUND_LP_NONZEROS`)
    small_parts: bool = True


def proved_certain(
    table: AttackerTableLike, problem: FactoredProblem, posterior: np.ndarray, options: SoundStepOptions | None = None,
) -> tuple[np.ndarray, dict[str, object]]:
    """``posterior`` with every group the fast sound steps of the exact audit prove certain held
    at its one value (:func:`sound_proof`, the estimate as the LP step's interior point), and
    what they did."""
    return hold_proved(posterior, sound_proof(table, problem, posterior, options), table.groups.counts)


def sound_proof(
    table: AttackerTableLike, problem: FactoredProblem, interior: np.ndarray | None = None, options: SoundStepOptions | None = None,
    *, lp: bool = True,
) -> SoundProof:
    """The groups × values the fast sound steps of the exact audit prove certain
    (:func:`ppdm.exact.solve.sound_bounds` over the same rows on whole counts; ``interior``: an
    estimate as the LP step's interior point). ``lp=False``: propagation alone, which needs no
    estimate (before a solve; :func:`with_lp` adds the LP step after it: without an interior
    point the LP step proves less, 254 against 267 certainties on a 600-row Adult forest). Rows
    with real coefficients (boosting rounds' leaf values) are left out, as the exact audit leaves
    them: a relaxation, still sound. Rows that are not whole counts, or records that do not meet
    them, prove nothing here (``details`` says why)."""
    names = {b.name for b in problem.blocks}
    # as the exact audit: a tree's label rows are implied by its class counts; real rows are not counts
    blocks = [b for b in problem.blocks if not b.name.startswith(REAL_ROWS) and not (b.name == "label" and "class-count" in names)]
    if not blocks:
        return SoundProof(None, {"skipped": "no rows over whole counts"})
    options = options or SoundStepOptions()
    limit = options.pairs
    pairs = n_factored_pairs(problem)
    if pairs > limit:
        return SoundProof(None, {"skipped": f"{pairs:,} counts over whole groups, more than the {limit:,} the fast proof takes{' by default' if limit == SoundStepOptions.pairs else ''} (exact=True proves them)"})
    groups = table.groups
    true_type = getattr(table, "true_type", None) if groups.record_weights is None else None  # counted rows: no per-record truth
    start = time.perf_counter()
    try:
        counts, _, truth = factored_counts(problem, groups.counts, groups.group_of_record, true_type, blocks)
        bounds = sound_bounds(counts, truth, interior, lp_nonzeros=SOUND_LP_NONZEROS if lp else 0, time_limit=options.lp_seconds)
    except (MaxEntError, DataError) as why:
        return SoundProof(None, {"skipped": str(why)})
    details: dict[str, object] = {
        "method": bounds.method if lp else "propagation",
        "seconds": round(time.perf_counter() - start, 4),
        **{k: v for k, v in bounds.stats.items() if k not in ("components", "solves")},
    }
    small = int(bounds.stats.get("smallest_component_nonzeros", 0)) <= SOUND_LP_NONZEROS
    return SoundProof(bounds.certain & bounds.certain_groups[:, None], details, counts, truth, small)


def with_lp(proof: SoundProof, interior: np.ndarray, lp_seconds: float = SOUND_LP_SECONDS) -> SoundProof:
    """``proof`` (propagation alone, :func:`sound_proof` with ``lp=False``) with the LP step over
    the components it takes (at most :data:`~ppdm.exact.solve.SOUND_LP_NONZEROS` entries: the
    small ones, so the second pass is short), ``interior`` (the estimate) its interior point,
    within ``lp_seconds``: what the one pass after the solve proves, the propagation of the large
    components done before it."""
    if proof.certain is None or proof.counts is None:
        return proof
    if not proof.small_parts:  # no component the LP step takes: the propagation was the whole proof
        return replace(proof, details={**proof.details, "method": "propagation+lp"})
    start = time.perf_counter()
    try:
        bounds = sound_bounds(proof.counts, proof.truth, interior, time_limit=lp_seconds, small_only=True)
    except (MaxEntError, DataError) as why:
        return replace(proof, details={**proof.details, "lp_skipped": str(why)})
    details = {
        **proof.details,
        "method": "propagation+lp",
        "seconds": round(cast(float, proof.details["seconds"]) + time.perf_counter() - start, 4),
        **{k: v for k, v in bounds.stats.items() if k.startswith("lp") or k == "proved_by_lp"},
    }
    return replace(proof, certain=proof.certain | (bounds.certain & bounds.certain_groups[:, None]), details=details)


def hold_proved(posterior: np.ndarray, proof: SoundProof, counts: np.ndarray) -> tuple[np.ndarray, dict[str, object]]:
    """``posterior`` (groups × values) with every group ``proof`` proves certain held at its one
    value, and what was proved (``counts``: each group's records)."""
    if proof.certain is None:
        return posterior, proof.details
    held = np.asarray(proof.certain.any(axis=1), dtype=bool)
    before = (posterior.max(axis=1) >= 1.0 - CERTAINTY_TOL)
    out = np.where(held[:, None], proof.certain.astype(float), posterior)
    added = held & ~before
    return out, {
        "method": proof.details["method"],
        "certain_groups": int(held.sum()),
        "certain_records": int(counts[held].sum()),
        "added_records": int(counts[added].sum()),
        **{k: v for k, v in proof.details.items() if k != "method"},
    }
