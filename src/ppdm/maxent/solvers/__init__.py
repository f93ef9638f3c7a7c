"""Solvers of the maximum-entropy problem: the dual, by Newton's method, with presolves.

Explicit slots (:func:`solve_linear`: presolve, active-set Newton on the sparse dual), the
factored form (:func:`solve_factored`), forests (:func:`solve_forest`: truncated Newton with
bound propagation and the exact face by one linear programme) and the split-choice rows
(:func:`solve_with_internal`, a sequential convex method). Every one returns a :class:`Solution`
(:mod:`ppdm.maxent.solvers.solution`). The top layer of maxent: it reads
:mod:`ppdm.maxent.rows` and nothing that builds them.
"""

from ppdm.maxent.solvers.factored import FactoredSolution, solve_factored
from ppdm.maxent.solvers.forest_solve import ForestSolveOptions, solve_forest
from ppdm.maxent.solvers.nonlinear import solve_with_internal
from ppdm.maxent.solvers.solution import Solution
from ppdm.maxent.solvers.solve import conflicting_rows, solve_linear

__all__ = [
    "FactoredSolution", "ForestSolveOptions", "Solution", "conflicting_rows", "solve_factored", "solve_forest",
    "solve_linear", "solve_with_internal",
]
