"""Counts in words, for every report and printout: ``1 person``, ``2 people``, ``1 record``,
``1,000 records``, ``1 tree``, ``3 trees``, with thousands separators."""

from __future__ import annotations

import re

#: Nouns whose plural is not the noun with an ``s``.
IRREGULAR = {"person": "people", "leaf": "leaves", "more leaf": "more leaves", "candidate": "candidates", "known individual": "known individuals"}


def plural(n: int | float, noun: str, many: str | None = None) -> str:
    """``noun`` for one, else its plural (``many``, else :data:`IRREGULAR`'s, else ``noun + "s"``)."""
    if n == 1:
        return noun
    return many or IRREGULAR.get(noun, noun + "s")


def counted(n: int | float, noun: str, many: str | None = None) -> str:
    """``n`` and its noun: ``1 person``, ``2,000 people``, ``1 record``."""
    shown = f"{n:,}" if isinstance(n, int) or float(n).is_integer() else f"{n:,.4g}"
    if not isinstance(n, int) and float(n).is_integer():
        shown = f"{int(n):,}"
    return f"{shown} {plural(n, noun, many)}"


def people(n: int | float) -> str:
    """``1 person``, ``2 people``."""
    return counted(n, "person")


def records(n: int | float) -> str:
    """``1 record``, ``2 records``."""
    return counted(n, "record")


def trees(n: int | float) -> str:
    """``1 tree``, ``2 trees``."""
    return counted(n, "tree")


def candidates(n: int | float) -> str:
    """``1 candidate``, ``2 candidates``."""
    return counted(n, "candidate")


#: An attack's method codes as a reader names them (the JSON keeps the codes).
METHODS = (
    (re.compile(r"\bmaxent\b"), "maximum-entropy estimate"),
    (re.compile(r"^exact$"), "exact audit"),
    (re.compile(r"^homogeneity$"), "homogeneity attack"),
    (re.compile(r"knowing only no column"), "knowing no column"),
)


def attacker_words(attack: str) -> str:
    """An attacker's name in words: ``maxent within the exact audit's possible values`` →
    ``maximum-entropy estimate within the exact audit's possible values``."""
    for code, words in METHODS:
        attack = code.sub(words, attack)
    return attack


def attack_title(attack: str, sensitive: str) -> str:
    """A report heading for one attack: ``Maximum-entropy estimate: what it infers about 'race'``."""
    name = attacker_words(attack)
    return f"{name[:1].upper()}{name[1:]}: what it infers about {sensitive!r}"
