"""Errors ppdm raises on bad input.

Every error names the column, value, field or file line at fault, so that the CLI can print it
as one line and exit with status 2.
"""

from __future__ import annotations


class PpdmError(Exception):
    """Base class of every error ppdm raises deliberately."""


class DataError(PpdmError, ValueError):
    """A table, column or value is unusable (missing column, wrong type, empty table, ...)."""


class HierarchyError(PpdmError, ValueError):
    """A generalization hierarchy is malformed or does not cover an attribute's values."""


class TreeFormatError(PpdmError, ValueError):
    """A serialized tree is malformed; the message names the JSON field at fault."""


class NotFittedError(PpdmError, AttributeError):
    """An estimator was used before ``fit``."""


class MaxEntError(PpdmError):
    """A maximum-entropy problem is malformed or cannot be solved."""


class UninformativeKnowledgeWarning(UserWarning):
    """The attacker's knowledge cannot move the maximum-entropy estimate off the uniform one."""
