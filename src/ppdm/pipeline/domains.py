"""The categorical domains an audit reads: the values the training rows hold.

A categorical column may declare values no training row holds: a pandas ``Categorical``'s unused
categories (``pd.get_dummies`` even gives them a dummy column the tree never splits on), or a
model file's domain taken from a larger table. The maximum-entropy attacker (paper 000 §4) spreads
its belief over every value of a domain, so a value no row holds draws belief from the values the
rows do hold, belief an attacker with any sample of the population would not give it: the audit
would understate the risk (a 'ghost' category on Nursery's ``health`` took the estimate's accuracy
from 0.735 to 0.719). The audit of the whole training table therefore leaves those values out of
every domain, and says which for the columns the attacker does not know
(:class:`~ppdm.errors.UnheldValueWarning`; a known column's value no row holds is in no group of
known values, so it changes nothing); the truth stays feasible, since no row holds them. A sample
of the training table proves nothing of the kind, so its domains are kept. The exact audit reads
the same domains: a certainty it proves then takes the unheld value as ruled out, which the
sensitive distribution (``sa_published``) tells the attacker, and the model alone may not (on
Nursery's ``health`` with a 'ghost' category the proved people were the same, 541, either way).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ppdm.attacks.core.threat import ThreatModel
from ppdm.errors import UnheldValueWarning, shown
from ppdm.pipeline.findings import Model
from ppdm.tree.splits import CategoricalSplit


def held_domains(model: Model, table: pd.DataFrame, counted: pd.DataFrame, threat: ThreatModel, sample: bool) -> tuple[Model, pd.DataFrame]:
    """``model`` and the audit's table ``counted`` without the categorical values no row of the
    training ``table`` holds (the module docstring); ``sample``: ``table`` is a sample of it."""
    if sample:
        return model, counted
    unheld = {name: gone for name, attr in model.attributes.items() if attr.is_categorical and name in table.columns
              and (gone := _needless(model, name, _unheld(table[name], attr.categories)))}  # fmt: skip
    sensitive = str(threat.sensitive)
    column = counted[sensitive] if sensitive in counted.columns and sensitive not in model.attributes else None
    if column is not None and isinstance(column.dtype, pd.CategoricalDtype):
        gone = _unheld(table[sensitive], tuple(column.cat.categories))
        if gone:
            unheld[sensitive] = gone
            counted = counted.assign(**{sensitive: column.cat.remove_categories(gone)})
    for name, gone in unheld.items():
        if name not in (threat.known or ()):  # a known column's value no row holds is in no group: nothing to tell
            warnings.warn(UnheldValueWarning(_message(name, gone)), stacklevel=5)
    kept = {name: gone for name, gone in unheld.items() if name in model.attributes}
    return (model.without_values(kept) if kept else model), counted


def _unheld(column: pd.Series, domain: Sequence[Any]) -> list[Any]:
    """The values of ``domain`` no row of ``column`` holds."""
    held = set(pd.unique(column.dropna().astype(object)))
    return [v for v in domain if v not in held]


def _needless(model: Model, name: str, unheld: list[Any]) -> list[Any]:
    """The values of ``unheld`` the model can do without: all but those making up a whole branch
    of some split of ``name`` (the branch would be left with no value)."""
    if not unheld:
        return unheld
    candidates = set(unheld)
    needed = {v for t in model.trees for node in t.nodes if isinstance(node.split, CategoricalSplit) and node.split.attribute == name
              for g in node.split.groups if candidates.issuperset(g) for v in g}  # fmt: skip
    return [v for v in unheld if v not in needed]


def _message(name: str, gone: Sequence[Any]) -> str:
    values = ", ".join(shown(v) for v in gone[:5]) + (f" and {len(gone) - 5:,} more" if len(gone) > 5 else "")
    return (
        f"column {name!r}: no training row holds {values}, though its domain declares {'it' if len(gone) == 1 else 'them'}; "
        f"the audit leaves {'it' if len(gone) == 1 else 'them'} out (an attacker with any sample of the population would give "
        f"{'it' if len(gone) == 1 else 'them'} no belief)"
    )
