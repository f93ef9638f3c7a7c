"""Errors ppdm raises on bad input, and the warnings it issues.

Every error names the column, value, field or file line at fault, so that the CLI can print it
as one line and exit with status 2. Every ppdm error class lives here; the modules that raise
them import them from this one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, TypeVar

__all__ = [
    "AnonymityError",
    "ArgumentTypeError",
    "AttackError",
    "DataError",
    "HierarchyError",
    "InfeasibleError",
    "MaxEntError",
    "ModelImportError",
    "NotFittedError",
    "NotIdentifiableError",
    "PolicyError",
    "PpdmError",
    "ReportError",
    "RoutingLimitError",
    "RulesError",
    "TreeFormatError",
    "UnheldValueWarning",
    "UninformativeKnowledgeWarning",
    "UnseenValueWarning",
    "YamlSyntaxError",
]


class PpdmError(Exception):
    """Base class of every error ppdm raises deliberately.

    An error whose remedy is a Python argument says so in words a Python caller follows
    (``"pass class_attribute"``); :func:`advising` marks that part, ``python_advice``, with the
    ``argument`` and the ``advice`` to print instead on the command line, followed by the
    command's own option for ``argument`` when it has one (``"name the class column (--class)"``).
    """

    argument: str | None = None
    python_advice: str | None = None
    advice: str = ""

    def __str__(self) -> str:
        """The message on one line: a line break inside a quoted value (a key, a cell) is shown
        as ``\\n``, so that no message spreads over lines."""
        text = super().__str__()
        return text.replace("\r", "\\r").replace("\n", "\\n") if "\n" in text or "\r" in text else text

    def _render_traceback_(self) -> list[str]:
        """What IPython and Jupyter show for this error: its one line (``DataError: …``), not
        the frames of ppdm's code it passed through (a user's input is at fault, not a line of
        ppdm; outside IPython the whole traceback is printed as usual)."""
        return [f"{type(self).__name__}: {self}"]

    def with_prefix(self, prefix: str) -> PpdmError:
        """The same error (class and advice) with ``prefix`` (a file name) in front."""
        try:
            error = type(self)(f"{prefix}: {self}")
        except TypeError:  # an error class that takes more than a message
            error = PpdmError(f"{prefix}: {self}")
        error.argument, error.python_advice, error.advice = self.argument, self.python_advice, self.advice
        return error

    def for_command_line(self, options: dict[str, str] | None = None) -> str:
        """The message with its Python-only advice replaced by the command line's: the option
        ``options`` maps ``argument`` to (when the command has one), else the advice in words."""
        message = str(self)
        if not self.python_advice or self.python_advice not in message:
            return message
        option = (options or {}).get(self.argument or "")
        instead = (f"{self.advice} ({option})" if self.advice else option) if option else self.advice
        return " ".join(message.replace(self.python_advice, instead).split())


E = TypeVar("E", bound=PpdmError)


def advising(error: E, python_advice: str, argument: str | None = None, advice: str = "") -> E:
    """``error`` whose message holds ``python_advice``, advice only a Python caller can follow
    (an ``argument``); the command line prints ``advice`` instead (see :class:`PpdmError`)."""
    error.python_advice, error.argument, error.advice = python_advice, argument, advice
    return error


class ArgumentTypeError(PpdmError, TypeError):
    """A Python argument of the wrong type (the text ``'no'`` where a flag takes True or False)."""


def plain(value: Any) -> Any:
    """``value`` as the plain Python value a message prints: a numpy scalar (``np.int64(3)``,
    ``np.str_('personal')``) as its ``int``, ``float``, ``str`` or ``bool``; a tuple or list of them likewise."""
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    item = getattr(value, "item", None)
    if type(value).__module__ == "numpy" and callable(item) and getattr(value, "ndim", None) == 0:
        return item()
    return value


def shown(value: Any, width: int = 80) -> str:
    """How a message shows a value: the ``repr`` of its :func:`plain` form, cut to ``width`` characters."""
    text = repr(plain(value))
    return text if len(text) <= width else text[: width - 3] + "..."


def check_flags(**flags: Any) -> None:
    """Refuse a flag that is not ``True`` or ``False`` (a numpy boolean counts as one): the text
    ``'no'`` would otherwise read as true. :class:`ArgumentTypeError` naming the parameter."""
    for name, value in flags.items():
        if not (isinstance(value, bool) or type(value).__name__ == "bool" and type(value).__module__ == "numpy"):
            raise ArgumentTypeError(f"{name} must be True or False, got {shown(value)} ({type(value).__name__})")


_NUMBERS = {"int": int, "float": float, "int | None": int, "float | None": float}


def check_options(options: Any) -> None:
    """Refuse an options dataclass whose flag is not ``True``/``False`` or whose number is text,
    NaN, fractional for an ``int`` field or negative for a time (``*time_limit``, ``*seconds``),
    read from the fields' annotations: ``'no'`` for a flag, ``'5'`` or ``-1`` for a time limit
    would otherwise pass silently into a solver (elsewhere a negative number may mean "off").
    :class:`ArgumentTypeError` (a flag, a text) or :class:`PpdmError` (a value), naming the field."""
    name = type(options).__name__
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        if kind == "bool":
            check_flags(**{f"{name}.{f.name}": value})
        elif kind in _NUMBERS and not (value is None and kind.endswith("None")):
            if isinstance(value, bool) or not isinstance(plain(value), (int, float)):
                raise ArgumentTypeError(f"{name}.{f.name} must be a number, got {shown(value)} ({type(value).__name__})")
            number = plain(value)
            if math.isnan(number):
                raise PpdmError(f"{name}.{f.name} must be a number, got nan")
            if _NUMBERS[kind] is int and math.isfinite(number) and not float(number).is_integer():
                raise PpdmError(f"{name}.{f.name} must be a whole number, got {shown(value)}")
            if number < 0 and (f.name.endswith("time_limit") or f.name.endswith("seconds")):
                raise PpdmError(f"{name}.{f.name} must be non-negative seconds, got {shown(value)}")


# --------------------------------------------------------------------------------------------
# Data, hierarchies, trees
# --------------------------------------------------------------------------------------------


class PolicyError(PpdmError, ValueError):
    """A checker's policy file or mapping that does not follow its schema (one line, naming the key)."""


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


class RoutingLimitError(MaxEntError):
    """The attacker's table over a forest would need more routes than the explicit enumeration
    builds (the unknown split attributes' cells, for every known-value group and tree).
    ``cause``: the routes it would take; ``advice``: what the user can do instead."""

    def __init__(self, cause: str, advice: str = "") -> None:
        super().__init__(f"{cause}; {advice}" if advice else cause)
        self.cause, self.advice = cause, advice

    @classmethod
    def over(cls, cause: str, per_tree: int, cap: int, instead: str | None = None) -> RoutingLimitError:
        """The refusal of ``per_tree`` routes in each tree against ``cap`` in all: it offers
        ``instead`` (e.g. "declare more columns known") and a subset of the trees that fits (a lower
        bound on disclosure), the most trees that do, or none when one tree alone is over the cap."""
        fits = cap // max(per_tree, 1)
        if fits < 1:
            alone = f"one tree alone routes {per_tree:,} leaves"
            return cls(cause, f"{instead} ({alone} over these columns)" if instead else f"no subset of the trees fits ({alone})")
        subset = f"audit a subset of the trees (--trees 0:{fits}, trees=range({fits}): a lower bound on disclosure)"
        return cls(cause, f"{instead}, or {subset}" if instead else subset)


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


class UnheldValueWarning(UserWarning):
    """A categorical column's domain declares values no training row holds (a pandas
    ``Categorical``'s unused categories): the audit leaves them out of the domain, since the
    attacker would otherwise give them belief the rows' values deserve (:mod:`ppdm.pipeline.domains`)."""


class UnseenValueWarning(UserWarning):
    """A table's column holds a category none of the model's one-hot inputs names: the model
    routes it as if every dummy were 0, which its training rows cannot have asked of it."""
