"""The maximum-entropy engine: problems over P(X | Q), constraint blocks, solvers, builders."""

from ppdm.maxent.problem import LinearBlock, MaxEntProblem
from ppdm.maxent.solve import Solution, conflicting_rows, solve_linear

__all__ = ["LinearBlock", "MaxEntProblem", "Solution", "conflicting_rows", "solve_linear"]

from ppdm.maxent.rule_constraints import (
    RuleConstraintStats,
    RuleKnowledge,
    rules_problem,
)

__all__ += ["RuleConstraintStats", "RuleKnowledge", "rules_problem"]
