"""Attacks on published models; each returns an :class:`AttackResult`.

Every attack takes the model first, the data second and the attacker as ``threat``
(:class:`~ppdm.attacks.core.threat.ThreatModel`); a tree is read as a forest of one. The attacks
are the audit's steps, run by :func:`ppdm.audit` (a leaf attack of paper 003 with
``options=AuditOptions(leaf=LeafOptions(...))``, a rule set's estimate with ``rules=``);
``__all__`` lists what a user reads: the result and threat types and the views.
"""

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.leaf.anonymity import exposed_tuples, model_anonymity
from ppdm.attacks.leaf.background import background_knowledge_attack  # noqa: F401 (audit steps, importable by name)
from ppdm.attacks.leaf.homogeneity import homogeneity_attack, homogeneous_leaves, single_record_leaves, uniqueness_attack  # noqa: F401 (audit steps, importable by name)
from ppdm.attacks.leaf.leaves import AttackerView, attacker_view, forest_view, published_leaf_counts, row_multiplicities  # noqa: F401 (audit steps, importable by name)
from ppdm.attacks.leaf.reconstruction import reconstruction_attack  # noqa: F401 (audit steps, importable by name)
from ppdm.attacks.leaf.table import tree_as_table
from ppdm.attacks.models.exact import exact_attack  # noqa: F401 (audit steps, importable by name)
from ppdm.attacks.models.possible import possible_attack, possible_values  # noqa: F401 (audit steps, importable by name)
from ppdm.attacks.models.rules import most_exposed, nar_impact, rules_attack  # noqa: F401 (audit steps, importable by name)

__all__ = ["AttackResult", "AttackerView", "ThreatModel", "attacker_view", "exposed_tuples", "model_anonymity", "possible_values", "tree_as_table"]
