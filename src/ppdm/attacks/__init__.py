"""Attacks on published models; each returns an :class:`AttackResult`.

Every attack takes the model first, the data second and the attacker as ``threat``
(:class:`~ppdm.attacks.threat.ThreatModel`); a tree is read as a forest of one.
"""

from ppdm.attacks.anonymity import exposed_tuples, model_anonymity
from ppdm.attacks.background import background_knowledge_attack
from ppdm.attacks.exact import exact_attack
from ppdm.attacks.forest_reconstruction import reconstruction_attack
from ppdm.attacks.homogeneity import homogeneity_attack, homogeneous_leaves, single_record_leaves, uniqueness_attack
from ppdm.attacks.leaves import AttackerView, attacker_view, forest_view, published_leaf_counts, row_multiplicities
from ppdm.attacks.possible import possible_attack, possible_values
from ppdm.attacks.result import AttackResult
from ppdm.attacks.rules import most_exposed, nar_impact, rules_attack
from ppdm.attacks.table import tree_as_table
from ppdm.attacks.threat import ThreatModel

__all__ = [
    "AttackResult", "AttackerView", "ThreatModel", "attacker_view", "background_knowledge_attack", "exact_attack", "exposed_tuples",
    "forest_view", "homogeneity_attack", "homogeneous_leaves", "model_anonymity", "most_exposed", "nar_impact", "possible_attack", "possible_values", "published_leaf_counts",
    "reconstruction_attack", "row_multiplicities", "rules_attack", "single_record_leaves", "tree_as_table", "uniqueness_attack",
]
