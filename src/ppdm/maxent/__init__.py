"""The maximum-entropy engine, in four layers (each may import only the ones above it here):

* :mod:`ppdm.maxent.rows`: the problems' rows (linear blocks over the variables);
* :mod:`ppdm.maxent.table`: the attacker's table (known groups, unknowns, types);
* :mod:`ppdm.maxent.constraints`: the rows a tree, a forest or a rule set publishes;
* :mod:`ppdm.maxent.solvers`: the dual and its Newton solvers.
"""

from ppdm.maxent.constraints import RuleConstraintStats, RuleKnowledge, rules_problem
from ppdm.maxent.rows import LinearBlock, MaxEntProblem
from ppdm.maxent.solvers import Solution, conflicting_rows, solve_linear

__all__ = [
    "LinearBlock", "MaxEntProblem", "RuleConstraintStats", "RuleKnowledge", "Solution", "conflicting_rows", "rules_problem",
    "solve_linear",
]
