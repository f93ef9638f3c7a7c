"""The maximum-entropy attack on a published forest, under any threat model.

The attacker's most neutral belief P(u | q) given every tree's published rows at once
(:mod:`ppdm.maxent.forest_constraints`: one problem over the joint leaves, each tree's rows
weighted by the multiplicities a scikit-learn forest lets anyone redraw), and their belief about
the sensitive attribute, its marginal; the same audit as paper 000 §3–4 for a tree, with every
tree's leaves as constraints. Paper 000's setting (every split attribute known, the class
sensitive) is solved by truncated Newton (:mod:`ppdm.maxent.forest_solve`), fast for hundreds
of trees; other threat models by the factored form's solver, within a size cap.

Groups are (known values, multiplicity vector) pairs: records of one known-value group that two
trees count differently are told apart (see :mod:`ppdm.maxent.forest_types`). Provenance names
every tree's leaf ("tree 0 leaf 17; tree 1 leaf 4; ...").
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from ppdm.attacks.result import AttackResult
from ppdm.attacks.threat import ThreatModel
from ppdm.attacks.truth import check_truth
from ppdm.errors import UninformativeKnowledgeWarning
from ppdm.maxent.factored import FactoredSolution
from ppdm.maxent.factored_problem import FactoredProblem
from ppdm.maxent.forest_constraints import forest_type_problem
from ppdm.maxent.forest_solve import solve_forest
from ppdm.maxent.forest_types import ForestTypes
from ppdm.maxent.tree_constraints import Knowledge
from ppdm.metrics.divergence import individual_divergence, overall_divergence
from ppdm.tree.forest import Forest

UNINFORMATIVE = (
    "no tree publishes anything the known columns do not already decide (no class counts, rates or labels; "
    "sample counts only inform about unknown split attributes): the estimate is uniform"
)


def forest_maxent_attack(
    forest: Forest,
    data: pd.DataFrame,
    threat: ThreatModel,
    knowledge: Knowledge = Knowledge(),
    tol: float = 1e-9,
    progress: Callable[[int, int], None] | None = None,
) -> AttackResult:
    """Estimate every group's P(sensitive | q) from every tree of ``forest`` (see the module docstring).

    ``threat`` is resolved against ``data`` (the training rows, in the order the model was fitted
    on when it has multiplicities); ``threat.publish`` audits less than the trees publish;
    ``progress(done, total)`` is called after each tree's rows are built.
    """
    threat = threat.resolve(data, forest.class_attribute)
    forest = forest.published(threat.publish)
    knowledge = replace(knowledge, sa=bool(threat.sa_published))
    problem, types = forest_type_problem(
        forest, data, list(threat.known or ()), str(threat.sensitive), knowledge, threat.known_individuals, progress,
    )
    check_truth(problem, types)
    solution = solve_forest(problem, tol=tol, feasible=types.truth())  # the data meets every row
    details = _details(forest, threat, problem, types, solution)
    if not problem.blocks:
        warnings.warn(UNINFORMATIVE, UninformativeKnowledgeWarning, stacklevel=3)
        details["note"] = UNINFORMATIVE
    result = _result(types, threat, solution.marginal, details)
    if pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result


def _details(forest: Forest, threat: ThreatModel, problem: FactoredProblem, types: ForestTypes, solution: FactoredSolution) -> dict[str, object]:
    rows: dict[str, int] = {}
    for blk in problem.blocks:
        family = blk.name.split(" tree ")[0]
        rows[family] = rows.get(family, 0) + blk.n_rows
    details: dict[str, object] = {
        "threat_model": threat.describe(forest.trees[0].disclosure),
        "model": f"{forest.algorithm or 'forest'}: {forest.n_trees} trees ({forest.combine})",
        "trees_used": int(types.used.sum()),
        "trees_left_out": types.left_out,
        "multiplicities": "known" if any(m is not None for m in forest.multiplicities) else "each record once",
        "unknowns": types.domain.describe(),
        "coverage": "exact",
        "solver_seconds": round(solution.seconds, 4),
        "max_violation": solution.max_violation,
        "kkt_residual": solution.kkt_residual,
        "iterations": solution.iterations,
        "newton_steps": solution.newton_steps,
        "variables": problem.n_slots,
        "types": problem.n_types,
        "joint_leaves": types.n_blocks,
        "constraint_rows": rows,
        "status": solution.status,
        "face": solution.face,
        "entropy": solution.entropy,
        "form": "factored",
    }
    if types.left_out:
        details["note"] = (
            f"{len(types.left_out)} tree(s) left out: their counts are over rows the attacker cannot tie to records "
            "(unknown bootstrap or subsample)"
        )
    true = types.true_marginal()
    if true is not None:
        details["overall_divergence"] = overall_divergence(true, solution.marginal, types.groups.weights)
        details["min_individual_divergence"] = float(individual_divergence(true, solution.marginal).min())
    return details


def _result(types: ForestTypes, threat: ThreatModel, posterior: np.ndarray, details: dict[str, object]) -> AttackResult:
    groups = types.groups
    targets = np.ones(groups.n_records, dtype=bool)
    if types.known_group is not None:
        targets = ~types.known_group[groups.group_of_record]
    result = AttackResult(
        attack="maxent",
        sensitive=str(threat.sensitive),
        values=tuple(types.domain.sensitive.cells),
        groups=groups,
        posterior=posterior,
        provenance=types.provenance(),
        targets=targets,
        exposed=np.zeros(groups.n_records, dtype=bool),
        true_codes=types.true_sensitive(),
        details=details,
        leaf_pairs=types.leaf_pairs(),
    )
    result.exposed = result.certain_groups[groups.group_of_record]
    return result
