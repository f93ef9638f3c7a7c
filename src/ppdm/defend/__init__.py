"""Defenses: change a trained tree so that it discloses less."""

from ppdm.defend.pruning import collapse_small_children, remove_small_leaves

__all__ = ["collapse_small_children", "remove_small_leaves"]
