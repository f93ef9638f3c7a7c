"""Leaf attacks on a published forest: the names they had before a tree and a forest shared one view.

A tree is now read as a forest of one: the view, the sound rule over every tree's leaves and the
subtraction of known individuals live in :mod:`ppdm.attacks.leaf.leaves`, and the attacks
(:func:`~ppdm.attacks.leaf.homogeneity.homogeneity_attack`,
:func:`~ppdm.attacks.leaf.homogeneity.uniqueness_attack`,
:func:`~ppdm.attacks.leaf.background.background_knowledge_attack`) take either. This module keeps the
old names for one release; the ``forest_*`` attacks warn (:class:`DeprecationWarning`).
"""

from __future__ import annotations

from ppdm.attacks.core.threat import deprecated_alias
from ppdm.attacks.leaf.background import background_knowledge_attack
from ppdm.attacks.leaf.homogeneity import homogeneity_attack, uniqueness_attack
from ppdm.attacks.leaf.leaves import ForestView, forest_view, row_multiplicities

__all__ = [
    "ForestView",
    "forest_background_attack",
    "forest_homogeneity_attack",
    "forest_uniqueness_attack",
    "forest_view",
    "row_multiplicities",
]

forest_homogeneity_attack = deprecated_alias(homogeneity_attack, "forest_homogeneity_attack")
forest_uniqueness_attack = deprecated_alias(uniqueness_attack, "forest_uniqueness_attack")
forest_background_attack = deprecated_alias(background_knowledge_attack, "forest_background_attack")
