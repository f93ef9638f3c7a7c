"""The maximum-entropy attack on a published tree (paper 000): the attacker's best unbiased
estimate of P(SA | QI) given everything the tree reveals, as an :class:`AttackResult`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ppdm.attacks.leaves import attacker_view
from ppdm.attacks.result import AttackResult
from ppdm.errors import DataError, UninformativeKnowledgeWarning
from ppdm.maxent.internal import internal_constraints
from ppdm.maxent.nonlinear import solve_with_internal
from ppdm.maxent.solve import solve_linear
from ppdm.maxent.tree_constraints import Knowledge, tree_problem
from ppdm.metrics.divergence import individual_divergence, overall_divergence
from ppdm.tree.model import Tree


UNIFORM_NOTE = (
    "only labels are known (no error rates, class counts or SA distribution): the uniform estimate "
    "meets every label and internal-node constraint with equality, so the maximum-entropy attacker "
    "learns nothing from this tree; publish-level 'error-rates' or the SA distribution (--sa) make the audit informative"
)


def maxent_attack(
    tree: Tree,
    data: pd.DataFrame,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: str | None = None,
    knowledge: Knowledge = Knowledge(),
    tol: float = 1e-9,
    time_limit: float | None = None,
) -> AttackResult:
    """Estimate every QI group's P(SA | q) by maximum entropy from ``tree`` (paper 000 §3–4).

    ``data`` is the attacker's table (the training records' quasi-identifiers); if it holds the
    sensitive column, the result also reports the paper's individual and overall divergences
    (natural log) and the attacker's confidence in each record's true value. With
    ``knowledge.sa`` the sensitive attribute's distribution is taken as published (from ``data``);
    with ``knowledge.internal`` the attacker also uses the split choices (paper 000 §4.2), and the
    estimate is a local optimum of a nonconvex problem (``details["status"]``); ``time_limit``
    (seconds) stops that solver early with its best feasible estimate ("time limit").
    """
    view = attacker_view(tree, data, quasi_identifiers, sensitive)
    k = len(view.values)
    sa = None
    if knowledge.sa:
        if view.true_codes is None:
            raise DataError(f"SA constraints need the sensitive column {view.sensitive!r} in the data (its distribution is published)")
        sa = np.bincount(view.true_codes, minlength=k) / len(view.true_codes)
    problem, leaf = tree_problem(tree, view.groups, knowledge, sa)
    uninformative = not any(blk.name in ("rate", "class-count", "sa") for blk in problem.blocks)
    if uninformative:
        warnings.warn(UNIFORM_NOTE, UninformativeKnowledgeWarning, stacklevel=2)
    internal = internal_constraints(tree, view.groups, leaf) if knowledge.internal else None
    if internal is not None:
        solution = solve_with_internal(problem, internal, tol=tol, time_limit=time_limit)
    else:
        solution = solve_linear(problem, tol=tol)
    details: dict[str, object] = {
        "solver_seconds": round(solution.seconds, 4),
        "max_violation": solution.max_violation,
        "kkt_residual": solution.kkt_residual,
        "iterations": solution.iterations,
        "newton_steps": solution.newton_steps,
        "variables": problem.n_variables,
        "constraint_rows": {blk.name: blk.n_rows for blk in problem.blocks}
        | ({"internal": internal.n_constraints} if internal is not None else {}),
        "status": solution.status,
        "entropy": solution.entropy,
    }
    if uninformative:
        details["note"] = UNIFORM_NOTE
    if view.true_codes is not None:
        true = view.groups.value_counts(view.true_codes, k) / view.groups.counts[:, None]
        details["overall_divergence"] = overall_divergence(true, solution.p, view.groups.weights)
        individual = individual_divergence(true, solution.p)
        details["min_individual_divergence"] = float(individual.min())
    return view.result("maxent", solution.p, details)
