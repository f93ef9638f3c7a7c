"""The attacker's table: what the attacker knows of each record and what is left unknown.

Groups of records sharing the known values, and the unknowns u of each group as explicit slots
(:class:`AttackerTable`), as types of one tree (:class:`AttackerTypes`) or of a forest's joint
leaves (:class:`ForestTypes`): the variables of the maximum-entropy problem (paper 000 §3).
Built on :mod:`ppdm.maxent.rows` (a table lays out its own problem); below the constraint builders.
"""

from ppdm.maxent.table.attacker_types import AttackerTypes
from ppdm.maxent.table.forest_types import ForestTypes
from ppdm.maxent.table.unknowns import AttackerTable, attacker_table

# the builders attacker_types() and forest_types() share their modules' names: import them from
# their modules, so that ppdm.maxent.table.attacker_types stays the module
__all__ = ["AttackerTable", "AttackerTypes", "ForestTypes", "attacker_table"]
