"""Attacks on published models; each returns an :class:`AttackResult`."""

from ppdm.attacks.background import background_knowledge_attack
from ppdm.attacks.homogeneity import homogeneity_attack, homogeneous_leaves, single_record_leaves, uniqueness_attack
from ppdm.attacks.leaves import attacker_view, published_leaf_counts
from ppdm.attacks.result import AttackResult
from ppdm.attacks.table import tree_as_table

__all__ = [
    "AttackResult", "attacker_view", "background_knowledge_attack", "homogeneity_attack",
    "homogeneous_leaves", "published_leaf_counts", "single_record_leaves", "tree_as_table", "uniqueness_attack",
]

from ppdm.attacks.anonymity import exposed_tuples, model_anonymity

__all__ += ["exposed_tuples", "model_anonymity"]

from ppdm.attacks.forest_leaves import forest_view, row_multiplicities  # noqa: E402
from ppdm.attacks.forest_reconstruction import reconstruction_attack  # noqa: E402

__all__ += ["forest_view", "reconstruction_attack", "row_multiplicities"]

from ppdm.attacks.rules import most_exposed, nar_impact, rules_attack  # noqa: E402

__all__ += ["most_exposed", "nar_impact", "rules_attack"]

from ppdm.attacks.exact import exact_attack  # noqa: E402

__all__ += ["exact_attack"]
