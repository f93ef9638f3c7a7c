"""Defenses: change a trained tree so that it discloses less, and search for what to publish."""

from ppdm.defend.pruning import collapse_small_children, remove_small_leaves
from ppdm.defend.search import DEFAULT_TARGET, DefenseResult, defend
from ppdm.defend.targets import (
    Certain,
    Confident,
    LDiverse,
    MinSpan,
    Target,
    parse_target,
)

__all__ = [
    "DEFAULT_TARGET", "Certain", "Confident", "DefenseResult", "LDiverse", "MinSpan", "Target", "collapse_small_children",
    "defend", "parse_target", "remove_small_leaves",
]
