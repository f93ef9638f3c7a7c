"""Attacks on published models; each returns an :class:`AttackResult`.

Every attack takes the model first, the data second and the attacker as ``threat``
(:class:`~ppdm.attacks.core.threat.ThreatModel`); a tree is read as a forest of one.
"""

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.leaf.anonymity import exposed_tuples, model_anonymity
from ppdm.attacks.leaf.background import background_knowledge_attack
from ppdm.attacks.leaf.homogeneity import homogeneity_attack, homogeneous_leaves, single_record_leaves, uniqueness_attack
from ppdm.attacks.leaf.leaves import AttackerView, attacker_view, forest_view, published_leaf_counts, row_multiplicities
from ppdm.attacks.leaf.reconstruction import reconstruction_attack
from ppdm.attacks.leaf.table import tree_as_table
from ppdm.attacks.models.exact import exact_attack
from ppdm.attacks.models.possible import possible_attack, possible_values
from ppdm.attacks.models.rules import most_exposed, nar_impact, rules_attack

__all__ = [
    "AttackResult", "AttackerView", "ThreatModel", "attacker_view", "background_knowledge_attack", "exact_attack", "exposed_tuples",
    "forest_view", "homogeneity_attack", "homogeneous_leaves", "model_anonymity", "most_exposed", "nar_impact", "possible_attack", "possible_values", "published_leaf_counts",
    "reconstruction_attack", "row_multiplicities", "rules_attack", "single_record_leaves", "tree_as_table", "uniqueness_attack",
]
