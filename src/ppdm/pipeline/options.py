"""How one audit runs (:func:`ppdm.audit`), in one frozen object: :class:`AuditOptions`.

The options say how the audit computes, never what it audits (the model, the table, the
attacker, the question): which steps run (the maximum-entropy estimate, paper 000 §3–4; the exact
proof on whole counts), what the estimate reads (the leaves' labels, the split choices of paper
000 §4.2), missing values, the time budgets (their defaults defined once, in
:mod:`ppdm.defaults`), and the solver options that already exist, nested as they are: a forest's
estimate (:class:`~ppdm.attacks.models.explicit.ForestAuditOptions`, with its solve's
:class:`~ppdm.maxent.solvers.forest_solve.ForestSolveOptions`) and the exact audit's integer
search (:class:`~ppdm.exact.options.SearchOptions`).

``ppdm.audit``'s keyword arguments of the same names keep working: one given other than its
default overrides the options' value (:meth:`AuditOptions.with_keywords`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from ppdm.attacks.models.estimate import SoundStepOptions
from ppdm.attacks.models.explicit import ForestAuditOptions
from ppdm.defaults import EXACT_SECONDS
from ppdm.errors import PpdmError, check_flags, check_options
from ppdm.exact.options import SearchOptions
from ppdm.maxent.constraints.rule_constraints import RuleKnowledge
from ppdm.maxent.table.unknowns import TableOptions
from ppdm.pipeline.capabilities import check_method

__all__ = ["LEAF_ATTACKS", "AuditOptions", "LeafOptions", "Missing"]

#: What the audit does with missing values in the columns it reads (:mod:`ppdm.data.missing`).
Missing = Literal["error", "drop", "as-value"]


#: The leaf attacks of paper 003 an audit can run instead of the maximum-entropy estimate.
LEAF_ATTACKS = ("homogeneity", "uniqueness", "background", "reconstruction")


@dataclass(frozen=True)
class LeafOptions:
    """Which leaf attack of paper 003 the audit runs instead of the estimate: ``"homogeneity"``
    (§3.1), ``"uniqueness"`` (§2.2.1), ``"background"`` (§3.2: the threat's known individuals
    taken out of the counts; ``threshold``, default 0.9, is the confidence that counts as
    exposed) or ``"reconstruction"`` (the people found certain taken out, round after round).
    They read the published leaves and the attacker's table only: not the training table's size."""

    attack: Literal["homogeneity", "uniqueness", "background", "reconstruction"] = "homogeneity"
    threshold: float = 0.9

    def __post_init__(self) -> None:
        check_options(self)
        if self.attack not in LEAF_ATTACKS:
            raise PpdmError(f"unknown leaf attack {self.attack!r} (choose one of: {', '.join(LEAF_ATTACKS)})")
        if not 0 < self.threshold <= 1:
            raise PpdmError(f"LeafOptions.threshold must be in (0, 1], got {self.threshold}")


@dataclass(frozen=True)
class AuditOptions:
    """How :func:`ppdm.audit` runs (see the module docstring); every default is the audit's own.

    ``estimate``: run the maximum-entropy estimate (default ``True``); ``exact``: also prove, on
    whole counts, who is certain in every dataset consistent with the model (default ``False``).
    ``labels``: the estimate reads the leaves' labels (default ``True``); ``internal``: the split
    choices too (default ``False``; a local optimum within ``time_limit``). ``missing``:
    ``"error"`` (default), ``"drop"`` or ``"as-value"`` for missing values in the columns read.
    ``time_limit`` (seconds): a forest's estimate, building its problem included (``None``, the
    default: :data:`~ppdm.defaults.FOREST_SECONDS`, 300 s; a membership audit's estimate: 60 s),
    or a tree's split-choice solve. ``exact_time_limit`` (seconds): the exact audit's integer search
    (``None``: :data:`~ppdm.defaults.EXACT_SECONDS`, 300 s; a membership proof: 30 s); what it
    leaves open is undecided, never certain. ``exact_detail``: ``"certainty"`` (default) leaves the
    minima and maxima other than certain and impossible ones as proved intervals, ``"bounds"``
    settles each. ``forest``: a forest's estimate (``None``: :class:`ForestAuditOptions`'s
    defaults: the explicit joint table, the solve within ``time_limit``). ``search``: the exact
    audit's integer search (``None``: its defaults for the model). ``sound``: the fast sound steps
    after the estimate (``None``: :class:`~ppdm.attacks.models.estimate.SoundStepOptions`' defaults).
    ``table``: how large a tree's attacker table may grow (``None``: :class:`~ppdm.maxent.table.unknowns.TableOptions`' defaults).

    ``method``: the estimate's method, one of :data:`~ppdm.pipeline.capabilities.METHODS`
    (``"auto"``, the default: each model's own road, falling back as it says; ``"factored"``,
    ``"explicit"``, ``"split-choice"``, ``"pooled"``, ``"possible"``: that road alone; the sampled
    forest estimate was removed and ``"sampled"`` is refused, saying what to use); what each reads
    is in that table, and an estimate says what its method did not read.
    ``policy``: the output checker's policy the audit is judged against
    (:func:`ppdm.check.policy.with_policy`: a preset's name or a YAML file; default ``None``, the
    target). ``blackbox``: a membership audit's black-box attacks
    (:class:`~ppdm.attacks.membership.blackbox.BlackboxOptions`, ``False``, or predicted
    probabilities per candidate; default ``None``, their defaults where they apply). ``rules``: a
    published rule set's constraint families (``None``: :class:`RuleKnowledge`'s defaults, AR and
    NAR rows, pruned; paper 004 §V). ``leaf``: a leaf attack of paper 003 instead of the estimate
    (:class:`LeafOptions`; ``None``: the estimate).

    ``baselines``: an attribute's estimate is measured against the simpler attackers with the same
    knowledge (the estimates with less knowledge, the likelihood rules, the prior, with
    ``reference=`` the model-free attacker) and the strongest is reported, held within the exact
    audit's possible values (default ``True``: habits 2 and 3). ``False``: the method's estimate as
    it computed it, nothing measured beside it (what a paper's reproduction compares with the
    paper's figures; ``reference=`` and ``holdout=`` need the baselines).
    """

    estimate: bool = True
    exact: bool = False
    labels: bool = True
    internal: bool = False
    missing: Missing = "error"
    time_limit: float | None = None
    exact_time_limit: float | None = None
    exact_detail: Literal["certainty", "bounds"] = "certainty"
    forest: ForestAuditOptions | None = None
    search: SearchOptions | None = None
    sound: SoundStepOptions | None = None
    table: TableOptions | None = None
    method: str = "auto"
    policy: Any = None
    blackbox: Any = None
    rules: RuleKnowledge | None = None
    leaf: LeafOptions | None = None
    baselines: bool = True

    def __post_init__(self) -> None:
        for name in ("time_limit", "exact_time_limit"):  # named as ppdm.audit's keywords of the same names
            seconds = getattr(self, name)
            if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0):
                raise PpdmError(f"{name} must be a finite number of seconds >= 0, got {seconds!r}")
        check_options(self)
        nested = {"forest": ForestAuditOptions, "search": SearchOptions, "sound": SoundStepOptions, "table": TableOptions, "rules": RuleKnowledge, "leaf": LeafOptions}
        for name, kind in nested.items():  # each nested options object of its own type, or None (its defaults)
            given = getattr(self, name)
            if given is not None and not isinstance(given, kind):
                raise PpdmError(f"AuditOptions.{name} must be a {kind.__name__}, got {type(given).__name__}")
        check_method(self.method)
        if self.internal and self.method not in ("auto", "split-choice"):
            raise PpdmError(f"internal=True reads the split choices, which method {self.method!r} does not: give method='split-choice' (or 'auto')")

    @property
    def split_choices(self) -> bool:
        """Whether the estimate reads a tree's split choices (``internal=True`` or ``method='split-choice'``)."""
        return self.internal or self.method == "split-choice"

    def with_keywords(self, **given: Any) -> AuditOptions:
        """These options, with each of ``given`` (``ppdm.audit``'s keyword arguments of the same
        names) that differs from its default in its place."""
        defaults = {f.name: f.default for f in fields(AuditOptions)}
        unknown = [k for k in given if k not in defaults]
        if unknown:
            raise PpdmError(f"AuditOptions has no option {unknown[0]!r} (options: {', '.join(defaults)})")
        changed = {k: v for k, v in given.items() if not _same(v, defaults[k])}
        check_flags(**{f.name: changed[f.name] for f in fields(AuditOptions) if f.name in changed and str(f.type) == "bool"})  # named as given
        return replace(self, **changed) if changed else self

    @property
    def exact_seconds(self) -> float:
        """The exact audit's time budget: ``exact_time_limit``, else :data:`~ppdm.defaults.EXACT_SECONDS`."""
        return EXACT_SECONDS if self.exact_time_limit is None else self.exact_time_limit


def _same(value: Any, default: Any) -> bool:
    """Whether a keyword argument was left at its default (``True`` is not ``1``, ``None`` only ``None``)."""
    return value is default or (type(value) is type(default) and value == default)
