"""What each estimate method reads (issue 40), in one table: the methods ``method=`` names
(:class:`~ppdm.pipeline.options.AuditOptions`), the models each estimates, and which of the
attacker's knowledge it reads. Every "not read by this method" note an estimate carries, and every
refusal of a method for a model or a table, is generated here from that table, nowhere else.

The knowledge a method may read (:data:`FEATURES`): the model's outputs the attacker sees
(``ThreatModel.outputs``), a boosted model's later rounds (their leaf values are rows over each
person's score before the round), the known individuals' whole records
(``ThreatModel.known_individuals``), and a table counted into distinct combinations (a Dask table
counted partition by partition). A feature is asked for only where it carries something: outputs
when the attacker misses a split attribute (else the known columns decide them), rounds when the
model is boosted with rounds after the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ppdm.attacks.core.threat import ThreatModel
from ppdm.errors import PpdmError
from ppdm.tree.model import Tree

__all__ = ["FEATURES", "METHODS", "Method", "asked", "check_method", "kind_of", "not_read", "refuse"]

#: The knowledge a method may read, and how a note says that it does not.
FEATURES: dict[str, str] = {
    "outputs": "it does not read the model's {outputs}s the attacker sees (the likelihood rules and a reference attacker do)",
    "rounds": "it does not read a boosted model's rounds after the first (details['rounds'] says which it read and why)",
    "known individuals": "it does not read the known individuals' records (they are not counted as targets)",
    "counted": "it does not read a counted (Dask) table",
}


@dataclass(frozen=True)
class Method:
    """One estimate method: its name, what it computes (one line, the paper's section), and per
    model kind (``"tree"``, ``"forest"``) the :data:`FEATURES` it reads; a kind it has no entry for
    it does not estimate."""

    name: str
    what: str
    reads: dict[str, frozenset[str]]


def _reads(*features: str) -> frozenset[str]:
    unknown = set(features) - set(FEATURES)
    assert not unknown, unknown
    return frozenset(features)


_ALL = _reads(*FEATURES)

#: The methods, in the order errors list them. ``auto`` takes each model's own road and, past a
#: forest's joint table, the pooled estimate or the possible values: its notes are those of the
#: method it took.
METHODS: dict[str, Method] = {m.name: m for m in (
    Method("auto", "each model's own maximum-entropy estimate; past a forest's joint table, the pooled estimate, else the possible values",
           {"tree": _ALL, "forest": _ALL}),
    Method("factored", "a tree's maximum-entropy estimate over the leaves each group reaches (paper 000 §3–4, factored rows)",
           {"tree": _reads("outputs", "known individuals", "counted")}),
    Method("explicit", "the maximum-entropy estimate over explicit slots (a tree), or over every joint route of a forest's trees (refused past its cap)",
           {"tree": _reads("known individuals", "counted"), "forest": _reads("outputs", "rounds", "known individuals")}),
    Method("split-choice", "a tree's maximum-entropy estimate reading its split choices too (paper 000 §4.2, a local optimum)",
           {"tree": _reads("known individuals", "counted")}),
    Method("pooled", "each tree's exact maximum-entropy estimate, pooled within each person's possible values (approximate)",
           {"forest": _reads("known individuals")}),
    Method("possible", "each person's possible values alone (sound), weighted by the table's distribution of the sensitive value",
           {"tree": frozenset(), "forest": frozenset()}),
)}  # fmt: skip


#: What ``method="sampled"`` is refused with: the sampled forest estimate left the library
#: (benchmarks/README.md says what it measured).
REMOVED = (
    "the sampled forest estimate was removed from ppdm (measured: 9-30x slower than 'explicit' and no closer to the truth, "
    "unfinished after 15 min past the joint table's cap): use method='explicit' within the cap, 'pooled' past it, or 'auto' for both"
)


def check_method(name: Any) -> None:
    """Refuse a method the table does not hold, in one line listing those it does (a removed one
    saying what to use instead)."""
    if name == "sampled":
        raise PpdmError(f"method='sampled': {REMOVED}")
    if not isinstance(name, str) or name not in METHODS:
        raise PpdmError(f"unknown estimate method {name!r} (choose one of: {', '.join(METHODS)})")


def kind_of(model: Any) -> str:
    """``"tree"`` or ``"forest"``: the column of the table a model reads."""
    return "tree" if isinstance(model, Tree) else "forest"


def asked(model: Any, threat: ThreatModel, counted: bool = False) -> list[str]:
    """The features this audit asks an estimate to read (see the module docstring)."""
    out = []
    if threat.outputs and not set(model.split_attributes) <= set(threat.known or ()):
        out.append("outputs")
    if getattr(model, "combine", None) == "additive" and model.n_trees > model.n_outputs:
        out.append("rounds")
    if threat.known_individuals:
        out.append("known individuals")
    if counted:
        out.append("counted")
    return out


def refuse(name: str, model: Any, counted: bool) -> None:
    """Refuse method ``name`` for a model kind it does not estimate, or a counted table it does not read."""
    check_method(name)
    method, kind = METHODS[name], kind_of(model)
    if kind not in method.reads:
        fits = [m for m, row in METHODS.items() if kind in row.reads]
        raise PpdmError(f"method {name!r} does not estimate a {kind}: {method.what}; for a {kind} choose one of: {', '.join(fits)}")
    if counted and "counted" not in method.reads[kind]:
        raise PpdmError(f"method {name!r}: {FEATURES['counted']}; audit a pandas table, or choose method 'auto' or 'factored'")


def not_read(name: str, model: Any, threat: ThreatModel, counted: bool = False) -> list[str]:
    """The notes of what method ``name`` does not read of what this audit asks (:func:`asked`)."""
    reads = METHODS[name].reads[kind_of(model)]
    return [FEATURES[f].format(outputs=threat.outputs) for f in asked(model, threat, counted) if f not in reads]


def with_notes(note: str | None, notes: Sequence[str]) -> str | None:
    """A result's note with ``notes`` after it, each once, separated by semicolons."""
    parts = [p for p in (note, *notes) if p]
    return "; ".join(dict.fromkeys(parts)) if parts else None
