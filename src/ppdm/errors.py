"""Errors ppdm raises on bad input, and the warnings it issues.

Every error names the column, value, field or file line at fault, so that the CLI can print it
as one line and exit with status 2. Every ppdm error class lives here; the modules that raise
them import them from this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "AnonymityError",
    "AttackError",
    "DataError",
    "HierarchyError",
    "InfeasibleError",
    "MaxEntError",
    "ModelImportError",
    "NotFittedError",
    "NotIdentifiableError",
    "PpdmError",
    "ReportError",
    "RulesError",
    "TreeFormatError",
    "UninformativeKnowledgeWarning",
    "YamlSyntaxError",
]


class PpdmError(Exception):
    """Base class of every error ppdm raises deliberately."""


# --------------------------------------------------------------------------------------------
# Data, hierarchies, trees
# --------------------------------------------------------------------------------------------


class DataError(PpdmError, ValueError):
    """A table, column or value is unusable (missing column, wrong type, empty table, ...)."""


class HierarchyError(PpdmError, ValueError):
    """A generalization hierarchy is malformed or does not cover an attribute's values."""


class TreeFormatError(PpdmError, ValueError):
    """A serialized tree is malformed; the message names the JSON field at fault."""


class NotFittedError(PpdmError, AttributeError):
    """An estimator was used before ``fit``."""


class ModelImportError(DataError):
    """A fitted model from another library cannot be imported faithfully (not a classifier, an
    input column not traceable to the data, or an imported tree that routes rows differently)."""


# --------------------------------------------------------------------------------------------
# Randomization, learning, rules
# --------------------------------------------------------------------------------------------


class NotIdentifiableError(PpdmError, ValueError):
    """The randomization cannot be inverted (e.g. θ = 0.5 for binary data, paper 001 §3)."""


class AnonymityError(PpdmError, ValueError):
    """The training table itself breaches the requirement (Algorithm 1 line 9 returns nil)."""


class RulesError(PpdmError, ValueError):
    """Association rules, their thresholds or their JSON are unusable; the message names the field."""


# --------------------------------------------------------------------------------------------
# Maximum entropy and attacks
# --------------------------------------------------------------------------------------------


class MaxEntError(PpdmError):
    """A maximum-entropy problem is malformed or cannot be solved."""


class InfeasibleError(MaxEntError):
    """The constraints contradict each other; ``conflict`` names a small conflicting set."""

    def __init__(self, message: str, conflict: Sequence[str]) -> None:
        super().__init__(message)
        self.conflict = list(conflict)


class AttackError(PpdmError):
    """The published model does not reveal what an attack needs."""


class ReportError(PpdmError):
    """A report cannot be made or printed: an input that is not an attack result, no browser for the PDF."""


class YamlSyntaxError(PpdmError):
    """Text that is not YAML; ``mark`` (line and column from 0) and ``problem`` say where and why."""

    mark: Any = None
    problem: str = ""


# --------------------------------------------------------------------------------------------
# ppdm warnings
# --------------------------------------------------------------------------------------------


class UninformativeKnowledgeWarning(UserWarning):
    """The attacker's knowledge cannot move the maximum-entropy estimate off the uniform one."""
