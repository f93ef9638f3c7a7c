"""What a published model lets the attacker write down: constraint rows over the attacker's table.

One tree's leaf rows (:mod:`~ppdm.maxent.constraints.leaf_rows`, for a tree alone and for every
tree of a forest), the problems of a tree (:mod:`~ppdm.maxent.constraints.tree_constraints`)
and of a forest (:mod:`~ppdm.maxent.constraints.forest_constraints`), association rules
(:mod:`~ppdm.maxent.constraints.rule_constraints`, paper 004) and the split choices
(:mod:`~ppdm.maxent.constraints.internal`, paper 000 §4.2). Above the table, below the solvers.
"""

from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.maxent.constraints.leaf_rows import Coverage, LeafRows
from ppdm.maxent.constraints.rule_constraints import RuleConstraintStats, RuleKnowledge, rules_problem
from ppdm.maxent.constraints.tree_constraints import Knowledge, table_problem, tree_problem, type_problem

__all__ = [
    "Coverage", "Knowledge", "LeafRows", "RuleConstraintStats", "RuleKnowledge", "forest_type_problem", "rules_problem",
    "table_problem", "tree_problem", "type_problem",
]
