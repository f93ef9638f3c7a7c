"""The maximum-entropy attack on a forest when the attacker misses split columns: sampled, not enumerated.

The explicit audit (:mod:`ppdm.attacks.models.forest_maxent`) lists every joint route of a group's
unknown columns through all the trees, a number exponential in the number of trees; it refuses
beyond :data:`~ppdm.maxent.table.forest_types.MAX_ROUTED`. This attack solves the same problem on
the factor graph whose factors are the trees (:mod:`ppdm.maxent.constraints.forest_factors`), by Gibbs
sampling and iterative scaling (:mod:`ppdm.maxent.solvers.sampled`): its cost grows with chains ×
trees × depth per sweep, not with the product of the trees' partitions.

The answer is an estimate and says so: ``details["status"]`` is ``"sampled"``, every posterior has
a Monte-Carlo standard error (``AttackResult.std_error``; the largest in ``details``), the rows'
remaining violation is reported in records with its own standard error, and no group counts as
certain (a posterior of 1 from samples proves nothing). The truth is feasible: the training
records' own leaf counts meet every row, checked before sampling.

:class:`ForestAuditOptions` chooses the method: ``"explicit"`` (the default), ``"auto"``
(explicit when the enumeration fits the cap, sampled otherwise) or ``"sampled"``. Sampling is
asked for, not the default, until it converges in time: on Adult (30,162 records, 3 known
columns) a 10-tree forest took 1,123 s and left its rows 436 records off (the first-order fit
converges like 1/t where posteriors reach 0 or 1; ``benchmarks/README.md``,
``bench_partial_knowledge.py``). Beyond the cap, ``ppdm.audit`` reports each person's possible
values instead (:mod:`ppdm.attacks.models.possible`), fast and sound.

Boosted models: the factors are the trees' own rows over (leaf, class); a round after the first
publishes rows whose coefficients are each record's probability before the round
(:mod:`ppdm.maxent.constraints.boosting_rows`), a function of its leaves in every earlier tree,
which no factor over one tree's leaves carries. Those rounds' leaf values are not read (their row
counts are, where the library stores them); ``details["rounds"]`` and the note say so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.scope import Scope
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.core.truth import TRUTH_TOLERANCE
from ppdm.defaults import FOREST_SECONDS
from ppdm.errors import DataError, PpdmError, check_options
from ppdm.maxent.constraints.boosting_rows import rounds_read
from ppdm.maxent.constraints.forest_factors import ForestFactors, forest_factors
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.solvers.forest_solve import ForestSolveOptions
from ppdm.maxent.solvers.sampled import SampledOptions, SampledSolution, solve_sampled
from ppdm.maxent.table import forest_types as explicit_table
from ppdm.metrics.divergence import individual_divergence, overall_divergence
from ppdm.tree.forest import Forest

Method = Literal["auto", "explicit", "sampled"]

#: Why the sampled estimate reads no boosting round without its own class counts.
UNSAMPLED_ROUNDS = (
    "a later round's leaf values are rows over each record's score before it, which no factor over one tree's leaves "
    "carries (its row counts are read where stored)"
)




@dataclass(frozen=True)
class ForestAuditOptions:
    """How a forest's maximum-entropy audit is computed.

    ``method``: ``"explicit"`` enumerates every joint route (exact, within
    :data:`~ppdm.maxent.table.forest_types.MAX_ROUTED`), ``"sampled"`` estimates by sampling
    (:class:`~ppdm.maxent.solvers.sampled.SampledOptions` in ``sampled``: chains, sweeps, seed),
    ``"auto"`` the first when it fits (default ``"explicit"``: see the module docstring).
    """

    method: Method = "explicit"
    sampled: SampledOptions = field(default_factory=SampledOptions)
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
    #: 180.2 s for 180 s).
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

    def __post_init__(self) -> None:
        check_options(self)
        if self.method not in ("auto", "explicit", "sampled"):
            raise PpdmError(f"method must be 'auto', 'explicit' or 'sampled', got {self.method!r}")
        if not 0 <= self.after_share < 10:
            raise PpdmError(f"after_share must be a share of the build's time in [0, 10), got {self.after_share!r}")
        if not 0 < self.build_share <= 1:
            raise PpdmError(f"build_share must be a share of the time limit in (0, 1], got {self.build_share!r}")
        if not 0 <= self.margin < 1:
            raise PpdmError(f"margin must be a share of the time limit in [0, 1), got {self.margin!r}")


def explicit_routes(forest: Forest, data: pd.DataFrame, known: list[str], sensitive: str) -> int:
    """The (group, cell, tree) triples the explicit enumeration would route (what it caps)."""
    domain = explicit_table.forest_domain(forest, data, known, sensitive)
    cells = math.prod(c.size for c in domain.components if c.role != "class" and c.in_tree)
    weights, used = explicit_table.tree_weights(forest, len(data))
    signature = explicit_table.unique_rows(weights[:, used])[1] if used.any() else np.zeros(len(data), dtype=np.intp)
    frame = data[known].assign(__ppdm_signature__=signature) if known else pd.DataFrame({"s": signature})
    n_groups = len(frame.drop_duplicates())
    return n_groups * cells * forest.n_trees


def use_sampling(forest: Forest, data: pd.DataFrame, threat: ThreatModel, options: ForestAuditOptions) -> bool:
    """Whether ``options`` send this audit to the sampled method."""
    if threat.outputs and options.method == "sampled":
        raise PpdmError(
            f"the sampled estimate does not read the model's outputs (outputs={threat.outputs!r}): use method='explicit' or 'auto'"
        )
    if options.method != "auto":
        return options.method == "sampled"
    if threat.outputs:  # only the explicit table reads them: past its cap the audit falls back as it says
        return False
    return explicit_routes(forest, data, list(threat.known or ()), str(threat.sensitive)) > explicit_table.MAX_ROUTED


def sampled_forest_attack(
    forest: Forest, data: pd.DataFrame, threat: ThreatModel, knowledge: Knowledge, options: SampledOptions | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> AttackResult:
    """The estimate for a resolved ``threat`` on a ``forest`` as published (see the module docstring);
    ``progress(done, total)`` is called after every sweep."""
    options = SampledOptions() if options is None else options
    f = forest_factors(forest, data, list(threat.known or ()), str(threat.sensitive), knowledge, threat.known_individuals)
    check_factor_truth(f)
    solution = solve_sampled(f, options, progress)
    groups = f.groups
    targets = np.ones(len(groups.group_of_record), dtype=bool)
    if f.known_group is not None:
        targets = ~f.known_group[groups.group_of_record]
    result = AttackResult(
        attack="maxent",
        sensitive=str(threat.sensitive),
        values=tuple(f.domain.sensitive.cells),
        groups=groups,
        posterior=solution.posterior,
        provenance=f.provenance(),
        targets=targets,
        exposed=np.zeros(len(targets), dtype=bool),  # nothing is proved by sampling
        true_codes=f.true_sensitive(),
        details=_details(f, threat, solution, options),
        std_error=solution.std_error,
    )
    if pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result


def check_factor_truth(f: ForestFactors) -> None:
    """The records' own leaf counts must meet every row (else the table is not the training data)."""
    values = f.truth_rows()
    if values is None:
        return
    off = np.abs(values - f.b) * f.groups.n_records
    off[f.le] = np.maximum(values[f.le] - f.b[f.le], 0.0) * f.groups.n_records
    if off.max(initial=0.0) > TRUTH_TOLERANCE:
        r = int(np.argmax(off))
        raise DataError(
            f"the table contradicts what the model publishes: {f.row_names[r]} is off by {off[r]:g} "
            "records on the table's own values (audit the model against the records it was trained on)"
        )


def _details(f: ForestFactors, threat: ThreatModel, solution: SampledSolution, options: SampledOptions) -> dict[str, object]:
    n = f.groups.n_records
    violation = solution.max_violation(f.b, f.le)
    details: dict[str, object] = {
        "threat_model": threat.describe(f.forest.trees[0].disclosure),
        "unknowns": f.domain.describe(),
        "coverage": "exact",
        "method": "sampled",
        "status": "sampled",
        "solver_seconds": round(solution.seconds, 4),
        "max_violation": violation,
        "max_violation_records": violation * n,
        "violation_std_error_records": float(solution.row_std_error.max(initial=0.0)) * n,
        "max_std_error": float(solution.std_error.max(initial=0.0)),
        "mean_std_error": float(solution.std_error.mean()) if solution.std_error.size else 0.0,
        "chains": solution.chains,
        "sweeps": solution.sweeps,
        "random_state": options.random_state,
        "constraint_rows": int(len(f.b)),
        "form": "factors",
        "model": f"{f.forest.algorithm or 'forest'}: {f.forest.n_trees} trees ({f.forest.combine})",
        "trees_used": int(len(f.trees)),
        "trees_left_out": f.left_out,
        "multiplicities": "known" if any(m is not None for m in f.forest.multiplicities) else "each record once",
        "note": (
            "estimated by sampling the unknown columns (Gibbs sampling, iterative scaling): each posterior has a "
            "Monte-Carlo standard error, the rows are met only approximately, and no one is reported certain"
        ),
    }
    if not len(f.b) and f.sa is None:
        details["note"] = "no tree publishes a row: the estimate is uniform"
    rounds = rounds_read(f.forest, [t for t in f.trees.tolist() if "class-counts" in f.forest.known[t]], UNSAMPLED_ROUNDS)
    details["scope"] = Scope.of_forest(f.forest.n_trees, f.left_out)
    if rounds is not None:
        details["rounds"] = rounds.summary()
        details["scope"] = Scope.of_rounds(rounds)
    true = f.true_marginal()
    if true is not None:
        details["overall_divergence"] = overall_divergence(true, solution.posterior, f.groups.weights)
        details["min_individual_divergence"] = float(individual_divergence(true, solution.posterior).min())
    return details
