"""The maximum-entropy attack on a forest when the attacker misses split columns: sampled, not enumerated.

The explicit audit (:mod:`ppdm.attacks.models.explicit`) lists every joint route of a group's
unknown columns through all the trees, a number exponential in the number of trees; it refuses
beyond :attr:`~ppdm.attacks.models.explicit.ForestAuditOptions.max_routed`. This attack solves the same problem on
the factor graph whose factors are the trees (:mod:`ppdm.maxent.constraints.forest_factors`), by Gibbs
sampling and iterative scaling (:mod:`ppdm.maxent.solvers.sampled`): its cost grows with chains ×
trees × depth per sweep, not with the product of the trees' partitions.

The answer is an estimate and says so: ``details["status"]`` is ``"sampled"``, every posterior has
a Monte-Carlo standard error (``AttackResult.std_error``; the largest in ``details``), the rows'
remaining violation is reported in records with its own standard error, and no group counts as
certain (a posterior of 1 from samples proves nothing). The truth is feasible: the training
records' own leaf counts meet every row, checked before sampling.

:class:`~ppdm.attacks.models.explicit.ForestAuditOptions` chooses the method: ``"explicit"`` (the default), ``"auto"``
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

from collections.abc import Callable

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.scope import Scope
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.core.truth import TRUTH_TOLERANCE
from ppdm.errors import DataError
from ppdm.maxent.constraints.boosting_rows import rounds_read
from ppdm.maxent.constraints.forest_factors import ForestFactors, forest_factors
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.solvers.sampled import SampledOptions, SampledSolution, solve_sampled
from ppdm.metrics.divergence import individual_divergence, overall_divergence
from ppdm.tree.forest import Forest

#: Why the sampled estimate reads no boosting round without its own class counts.
UNSAMPLED_ROUNDS = (
    "a later round's leaf values are rows over each record's score before it, which no factor over one tree's leaves "
    "carries (its row counts are read where stored)"
)


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
