"""What an audit read of the model and the table, stated once: :class:`Scope`.

Every road that audits a model writes what it read into its result's ``details`` (a forest's
trees whose counts are tied to the records, a boosted model's rounds that gave rows, the trees a
deadline left unread, the subset asked for, the rows left out for missing values). Those facts
overlap: a boosted model's later trees publish no row counts, so they are not trees of class
counts, yet their leaf values are read as rows of their round. :func:`scope_of` reconciles them in
one place, and the summary, the JSON (``"scope"``), the printout, the report's first card, the
verdict and the release record all read the one :class:`Scope` it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ppdm.maxent.table.forest_types import RoundsUsed

#: Why a tree of a forest was left out: its counts are over rows no one can tie to the records.
UNTIED = "their counts are over rows the attacker cannot tie to records (unknown bootstrap or subsample)"
#: Why a tree was not read: building its rows would have taken the audit's time limit.
UNREAD = "building their rows would have taken the time limit"

#: The result details that said, before :class:`Scope`, what was read: the summary and the JSON
#: state them once, as ``"scope"``, instead.
READ_KEYS = ("trees_used", "trees_left_out", "trees_unread", "rounds", "trees_audited", "dropped_rows", "scope")


#: What rows left out for missing values do to the audit: the model's counts still count them.
DROPPED_BOUND = (
    ": the model's counts still count them, so they are read as upper bounds and what the audit finds is a lower bound; "
    "fill the values in to audit every row"
)


@dataclass(frozen=True)
class Scope:
    """What the audit read: ``trees`` of the model audited (its ``unit``: ``"tree"``, or
    ``"rule"`` for a rule set), those ``left_out`` (per reason, their numbers), ``per_round``
    (a boosted model: trees per boosting round; ``None`` otherwise), ``asked`` (the subset of
    trees the user asked for, in words; ``None``: the whole model), and the rows: ``records``
    audited and ``dropped_rows`` left out for missing values."""

    trees: int = 1
    left_out: Mapping[str, Sequence[int]] = field(default_factory=dict)
    per_round: int | None = None
    unit: str = "tree"
    asked: str | None = None
    records: int | None = None
    dropped_rows: int = 0

    # -- built from what a road read ---------------------------------------------------------------
    @classmethod
    def of_rounds(cls, rounds: RoundsUsed) -> Scope:
        """A boosted model's account: the rounds that gave rows (class counts or leaf values) are
        read, whatever their trees' row counts."""
        return cls(rounds.n_trees, {why: sorted(int(t) for t in trees) for why, trees in rounds.left_out.items()}, rounds.per_round)

    @classmethod
    def of_model_rows(cls, rounds: RoundsUsed, boosted: bool) -> Scope:
        """The trees whose rows a regressor's audit built (its rows' ``rounds``): boosting rounds
        when ``boosted``, else plain trees."""
        scope = cls.of_rounds(rounds)
        return scope if boosted else replace(scope, per_round=None)

    @classmethod
    def of_forest(cls, n_trees: int, untied: Iterable[int] = (), unread: Iterable[int] = ()) -> Scope:
        """A forest's trees: those whose counts cannot be tied to the records, and those a deadline left unread."""
        left = {why: sorted(int(t) for t in trees) for why, trees in ((UNTIED, untied), (UNREAD, unread))}
        return cls(int(n_trees), {why: trees for why, trees in left.items() if trees})

    # -- what it says --------------------------------------------------------------------------------
    @property
    def n_left_out(self) -> int:
        return sum(len(t) for t in self.left_out.values())

    @property
    def read(self) -> int:
        """How many of the model's trees (rounds' trees, rules) the audit read."""
        return self.trees - self.n_left_out

    @property
    def whole(self) -> bool:
        """Whether the audit read the whole model (nothing left out, no subset asked for)."""
        return not self.left_out and not self.asked

    @property
    def left_out_trees(self) -> list[int]:
        return sorted(t for trees in self.left_out.values() for t in trees)

    def to_json(self) -> dict[str, Any]:
        return {
            "unit": self.unit, "trees": self.trees, "read": self.read, "per_round": self.per_round,
            "left_out": {why: list(trees) for why, trees in self.left_out.items()}, "asked": self.asked,
            "records": self.records, "dropped_rows": self.dropped_rows,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Scope:
        return cls(
            int(data["trees"]), {str(k): [int(t) for t in v] for k, v in (data.get("left_out") or {}).items()},
            data.get("per_round"), str(data.get("unit", "tree")), data.get("asked"), data.get("records"), int(data.get("dropped_rows") or 0),
        )  # fmt: skip

    def sentence(self) -> str:
        """How many trees (boosting rounds, rules) the audit read of how many, and why it left any out."""
        chosen = f" The audit was asked for {self.asked}." if self.asked else ""
        all_ = "" if chosen else "all "  # a subset asked for: all of it read, not all of the model
        if self.per_round is not None:
            unit = "boosting rounds" if self.per_round == 1 else f"boosting trees ({self.per_round} per round, one per class)"
            if not self.left_out:
                return f"{all_}{self.trees:,} {unit} read (the leaf values of every round).{chosen}"
            why = "; ".join(f"{len(trees):,} because {reason}" for reason, trees in self.left_out.items())
            return f"{self.read:,} of {self.trees:,} {unit} read; left out: {why}. What the audit finds is a lower bound on what the whole model discloses.{chosen}"
        units = f"{self.unit}s"
        if not self.left_out:
            if self.trees == 1:
                return f"the whole {self.unit} read.{chosen}"
            return f"{all_}{self.trees:,} {units} read.{chosen}"
        reasons = [
            f"{len(trees):,} {'not read' if reason == UNREAD else 'left out'} ({units} {_ids(trees)}) because {reason}"
            for reason, trees in self.left_out.items()
        ]
        return f"{self.read:,} of {self.trees:,} {units} read; {'; '.join(reasons)}. What the audit finds is a lower bound.{chosen}"

    def rows(self) -> str:
        """The rows audited and those left out for missing values."""
        if self.records is None:
            return ""
        dropped = f" ({self.dropped_rows:,} more left out for missing values{DROPPED_BOUND})" if self.dropped_rows else ""
        return f"{self.records:,} rows audited{dropped}."

    def line(self) -> str:
        """The printout's one line of what was read: the trees, then the rows."""
        return f"  scope: {self.sentence()} {self.rows()}".rstrip()

    def part(self) -> str:
        """What of the model the audit left out, in words ("" when it read all of it)."""
        if self.per_round is not None and self.left_out:
            return f"{self.read:,} of {self.trees:,} boosting trees read"
        if UNREAD in self.left_out:
            return f"{self.read:,} {self.unit}s read, {len(self.left_out[UNREAD]):,} not read within the time limit"
        if self.left_out:
            return f"{self.read:,} {self.unit}s read, {self.n_left_out:,} left out"
        if self.asked:
            return f"the trees asked for, {self.asked}"
        return ""


def scope_of(details: Mapping[str, Any], records: int | None = None) -> Scope:
    """The one :class:`Scope` of a result's ``details``: the road's own (``details["scope"]``),
    else a single tree (or a rule set's ``rules``) read whole; with the subset asked for and the
    rows left out as the front door recorded them."""
    found = details.get("scope")
    if isinstance(found, Mapping):
        found = Scope.from_json(found)
    if not isinstance(found, Scope):
        found = Scope(int(details["rules"]), unit="rule") if "rules" in details else Scope()
    asked = details.get("trees_audited") or found.asked
    return replace(found, asked=asked, records=records if records is not None else found.records, dropped_rows=int(details.get("dropped_rows") or 0))


def with_scope(summary: dict[str, Any], details: Mapping[str, Any], records: int | None = None) -> dict[str, Any]:
    """``summary`` with what was read stated once, as ``"scope"`` (:data:`READ_KEYS` removed)."""
    for key in READ_KEYS:
        summary.pop(key, None)
    summary["scope"] = scope_of(details, records).to_json()
    return summary


def summary_scope(summary: Mapping[str, Any]) -> Scope | None:
    """The :class:`Scope` a summary (or its JSON) states, ``None`` when it states none."""
    found = summary.get("scope")
    return Scope.from_json(found) if isinstance(found, Mapping) else None


def _ids(trees: Sequence[int]) -> str:
    shown = ", ".join(map(str, trees[:8]))
    return shown + (f" and {len(trees) - 8:,} more" if len(trees) > 8 else "")
