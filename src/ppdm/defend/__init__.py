"""Defenses: change a trained tree so that it discloses less, and search for what to publish."""

import sys as _sys
from types import ModuleType as _ModuleType

from ppdm.attacks.core.target import (
    Certain,
    Confident,
    LDiverse,
    MembersProved,
    MiaTpr,
    MinSpan,
    Target,
    parse_target,
)
from ppdm.defend.pruning import collapse_small_children, remove_small_leaves
from ppdm.defend.search import DEFAULT_TARGET, DefenseResult, defend

__all__ = [
    "DEFAULT_TARGET", "Certain", "Confident", "DefenseResult", "LDiverse", "MembersProved", "MiaTpr", "MinSpan", "Target", "collapse_small_children",
    "defend", "parse_target", "remove_small_leaves",
]


class _CallablePackage(_ModuleType):
    """``ppdm.defend`` is both this package and the search: ``ppdm.defend(model, data, threat, target)``
    calls :func:`ppdm.defend.search.defend` (the front door's spelling), and
    ``from ppdm.defend import Grids`` reads the package."""

    def __call__(self, *args: object, **kwargs: object) -> DefenseResult:
        return defend(*args, **kwargs)  # type: ignore[arg-type]


_sys.modules[__name__].__class__ = _CallablePackage
