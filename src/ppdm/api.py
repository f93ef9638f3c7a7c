"""The front door: read a published model, declare the attacker, audit it, defend it.

Everything a Python user needs is re-exported from :mod:`ppdm`::

    import ppdm
    model = ppdm.load_model("forest.json", data)              # or ppdm.from_estimator(estimator, X, y)
    threat = ppdm.ThreatModel(sensitive="sex", known=["age", "race"], class_known=True)
    audit = ppdm.audit(model, data, threat, exact=False)
    print(audit)                                              # what ``ppdm audit`` prints
    audit.people(); audit.leaves(); audit.save("audit.json"); audit.report("audit.html")

:func:`audit` is the whole audit ``ppdm audit`` runs: the maximum-entropy estimate (papers 000
§3–4 and its forest form, :func:`ppdm.attacks.models.maxent.maxent_attack`), the exact audit on whole
counts (:func:`ppdm.attacks.models.exact.exact_attack`), the missing-value policy, and the JSON and the
report they make. A tree is audited like a forest of one: the same :class:`Audit` comes back.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial, wraps
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult, result_json
from ppdm.attacks.core.target import Target, default_target, parse_target
from ppdm.attacks.core.threat import ThreatModel, load_threat, threat_from_dict
from ppdm.attacks.core.value_names import data_value_names
from ppdm.attacks.membership.audit import MembershipResult
from ppdm.attacks.models.options import AuditOptions, Missing
from ppdm.data.counting import compress, is_dask
from ppdm.data.missing import POLICIES, handle_missing, handle_missing_counted
from ppdm.data.roles import check_varies, plain_value, text_columns
from ppdm.defend.search import defend  # the function itself, so that help() and inspect.signature show it
from ppdm.errors import ArgumentTypeError, DataError, ModelImportError, PpdmError, RoutingLimitError, UninformativeKnowledgeWarning, advising, check_flags, shown
from ppdm.files import ReadFiles, recording_reads, write_atomic
from ppdm.progress import Progress, Step, reporting
from ppdm.progress import report as report_step
from ppdm.report import words
from ppdm.rules.ruleset import RuleSet
from ppdm.tree.estimator import from_estimator
from ppdm.tree.forest import Forest, is_model
from ppdm.tree.model import Tree
from ppdm.tree.model_files import load_model

__all__ = ["Audit", "AuditOptions", "RegressionAudit", "ThreatModel", "audit", "defend", "from_estimator", "load_model", "load_threat"]



Model = Tree | Forest


@dataclass
class Audit:
    """One audit of a published model: the estimate, the proof, and views of both.

    ``estimate``: the maximum-entropy attack (``None`` with ``estimate=False``); ``proved``: the
    exact audit (``None`` unless ``exact=True``, or when it was too large to run: the estimate's
    ``details["exact_not_run"]`` then says why). ``model`` is the model as read, ``threat`` the
    threat model resolved against the table, ``table`` the records audited (after the
    missing-value policy) and ``dropped_rows`` how many were left out. ``target``: the privacy
    target the audit is judged against (printed, stored in :meth:`to_dict` and used by
    :meth:`report`); ``target_given``: whether it was chosen (``False``: the default one).
    """

    model: Model | RuleSet  # a rule set only in a membership audit of published rules
    threat: ThreatModel
    estimate: AttackResult | None
    proved: AttackResult | None
    table: pd.DataFrame
    weights: np.ndarray | None = None
    dropped_rows: int = 0
    reference: AttackResult | None = None
    membership: MembershipResult | None = None
    target: Target = field(default_factory=default_target)
    target_given: bool = False
    sources: dict[str, Any] = field(default_factory=dict)
    read: ReadFiles = field(default_factory=ReadFiles, repr=False)  # every file the audit read: never written over

    @property
    def results(self) -> list[AttackResult]:
        """The attack results, estimate first."""
        return [r for r in (self.estimate, self.proved) if r is not None]

    @property
    def main(self) -> AttackResult:
        """The result the people view reads first: the estimate, else the exact audit."""
        return self.results[0]

    def lines(self, top: int = 5) -> list[str]:
        """The summary ``ppdm audit`` prints, line by line (``top`` riskiest groups)."""
        from ppdm.report.summary import audit_lines

        if self.membership is not None:
            return self.membership.lines() + (audit_lines(self.estimate, self.proved, top) if self.results else []) + self.target_lines()
        return audit_lines(self.estimate, self.proved, top) + self.target_lines()

    def target_lines(self) -> list[str]:
        """The target and whether each result meets it (the report's verdict line)."""
        from ppdm.report.membership import membership_summary, membership_target, membership_verdict
        from ppdm.report.verdict import target_line

        if self.membership is not None and not self.results:
            return [membership_verdict(membership_summary(self.membership, membership_target(self.target)), self.target)["lines"][-1]]
        out = []
        for name, r in (("estimate", self.estimate), ("exact audit", self.proved)):
            if r is not None:
                out.append(f"{name}: {target_line(r.summary(self.thresholds()), self.target)[1]}")
        return out

    def thresholds(self) -> tuple[float, ...]:
        """The confidence levels the summaries count: the usual ones and the target's."""
        from ppdm.metrics.baseline import DEFAULT_THRESHOLDS

        return tuple(sorted({*DEFAULT_THRESHOLDS, *self.target.confidences}))

    def release_record(self, *, frontier: Any = None, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        """The release record a disclosure-control team files with the model
        (:func:`ppdm.report.record.release_record`): what was audited, against which target,
        every attack's result beside its baseline, and the decision with its reasons.
        ``frontier``: the defense search that chose this model (:meth:`DefenseResult.frontier_records`
        or its JSON), so that the decision can say "release the defended model"; ``inputs``: the
        input files by role (``{"model": path, "data": path}``), hashed with SHA-256 (default: what
        :func:`audit` was given as paths)."""
        from ppdm.report.record import release_record

        return release_record(self, frontier=_frontier(frontier), inputs=inputs if inputs is not None else self.sources)

    def save_record(self, path: str | Path, **kwargs: Any) -> dict[str, Any]:
        """Write :meth:`release_record` as JSON, whole or not at all; returns it."""
        from ppdm.report.record import record_json

        record = self.release_record(**kwargs)
        write_atomic(path, record_json(record), inputs=self.read)
        return record

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def summary(self) -> dict[str, Any]:
        """The main result's summary (:meth:`AttackResult.summary`), with the exact audit's under ``"exact"``."""
        if self.membership is not None and not self.results:
            return self.membership.summary()
        out = self.main.summary()
        if self.estimate is not None and self.proved is not None:
            out["exact"] = self.proved.summary()
        return out

    # -- views -----------------------------------------------------------------------------------
    def people(self) -> pd.DataFrame:
        """One row per record audited: its row id, its group of known values, the attacker's
        posterior over the sensitive values, best guess and confidence, whether the estimate is
        certain (and, with the truth known, right), and with ``exact=True`` what is proved.

        On a counted (Dask) table the rows are the distinct combinations, ``records`` each. A
        membership audit: one row per candidate (:meth:`MembershipResult.people`).
        """
        if self.membership is not None and not self.results:
            return self.membership.people()
        main = self.main
        groups = main.groups
        g = groups.group_of_record
        out = pd.DataFrame({"row": np.arange(groups.n_records) if main.row_ids is None else main.row_ids, "group": g})
        if groups.record_weights is not None:
            out["records"] = groups.record_weights
        out["target"] = main.targets
        if main.true_codes is not None:
            out["truth"] = _values(main.values, main.true_codes)
        if self.estimate is not None:
            est = self.estimate
            for j, value in enumerate(est.values):
                out[f"P({value})"] = est.posterior[est.groups.group_of_record, j]
            out["guess"] = _values(est.values, est.predicted())
            out["confidence"] = est.posterior.max(axis=1)[est.groups.group_of_record]
            if est.true_codes is not None:
                out["confidence_in_truth"] = est.confidence_in_truth()
            out["certain"] = est.certain_groups[est.groups.group_of_record] & est.targets
        if self.proved is not None:
            proved = self.proved
            pg = proved.groups.group_of_record
            out["proved_certain"] = proved.certain_groups[pg] & proved.targets
            value = _values(proved.values, proved.predicted())
            value[~out["proved_certain"].to_numpy(bool)] = None
            out["proved_value"] = value
            if proved.bounds is not None:
                out["undecided"] = proved.bounds["undecided"][pg]
                for j, value in enumerate(proved.values):
                    out[f"min({value})"] = proved.bounds["min"][pg, j]
                    out[f"max({value})"] = proved.bounds["max"][pg, j]
        return out

    def leaves(self) -> pd.DataFrame:
        """One row per (tree, leaf) of the model (a tree is tree 0): what the leaf publishes
        (its label and training size) and, routing every audited record by its true values, how
        many records land there and how many of them the estimate holds certain or exposes
        (certain and right), and the exact audit proves. A membership audit: its riskiest cells
        (:meth:`MembershipResult.leaves`)."""
        if self.membership is not None and not self.results:
            return self.membership.leaves()
        assert not isinstance(self.model, RuleSet)  # a rule set is only ever audited for membership
        trees = self.model.trees
        people = self.people()
        weights = people["records"].to_numpy(float) if "records" in people else np.ones(len(people))
        frames = [_leaf_rows(t, tree, self.model.known[t], self.table, people, weights) for t, tree in enumerate(trees)]
        return pd.concat(frames, ignore_index=True)

    # -- output ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """What ``ppdm audit --out`` writes: the estimate's JSON with the exact audit's under ``"exact"``
        (or the exact audit's alone); a membership audit's under ``"membership"`` and ``"candidates"``."""
        if self.membership is not None and not self.results:
            return {**self.membership.to_dict(), "target": self.target.to_dict(self.target_given)}
        if self.estimate is None:
            assert self.proved is not None
            return {**self.proved.to_dict(self.thresholds()), "target": self.target.to_dict(self.target_given)}
        payload = self.estimate.to_dict(self.thresholds())
        if self.proved is not None:
            payload["exact"] = self.proved.to_dict(self.thresholds())
        payload["target"] = self.target.to_dict(self.target_given)
        return payload

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_dict` as JSON, whole or not at all (never over a file the audit read)."""
        write_atomic(path, result_json(self.to_dict()), inputs=self.read)

    def report(
        self,
        path: str | Path,
        *,
        json: str | Path | None = None,
        pdf: str | Path | None = None,
        frontier: Any = None,
        title: str | None = None,
    ) -> dict[str, Any]:
        """Write the HTML report (and its JSON beside it, or at ``json``; a PDF with ``pdf``) and
        return the report's data (:func:`ppdm.report.build_report`; a membership audit gets its section)."""
        from ppdm.report import build_report, write_report

        frontier = _frontier(frontier)
        report = build_report(
            self.results, self.model, self.threat if self.results else None, frontier, title=title, membership=self.membership,
            target=self.target if self.target_given else None, record=self.release_record(frontier=frontier),
        )
        write_report(report, path, json, pdf, inputs=self.read)
        return report

    def _repr_html_(self) -> str:
        """What a notebook shows: the report's first cards, what was audited and the verdict
        against the target (:func:`ppdm.report.html.cards_html`); :meth:`report` writes the whole report."""
        from ppdm.report import build_report
        from ppdm.report.html import cards_html

        report = build_report(
            self.results, self.model, self.threat if self.results else None, membership=self.membership, target=self.target if self.target_given else None,
        )
        return cards_html(report)

    def __repr__(self) -> str:
        if self.membership is not None and not self.results:
            return f"<Audit of membership over {words.candidates(self.membership.n_candidates)}>"
        parts = [p for p, r in (("estimate", self.estimate), ("exact", self.proved)) if r is not None]
        return f"<Audit of {self.main.sensitive!r} over {words.records(self.main.groups.n_records)}: {' + '.join(parts)}>"


@dataclass
class RegressionAudit:
    """The audit of a regressor's numeric target: each person's proved interval
    (:class:`~ppdm.attacks.models.regression.IntervalResult`), with the views an :class:`Audit` has."""

    model: Model | RuleSet  # a rule set only in a membership audit of published rules
    threat: ThreatModel
    intervals: Any
    table: pd.DataFrame
    dropped_rows: int = 0
    target: Target = field(default_factory=default_target)
    target_given: bool = False
    sources: dict[str, Any] = field(default_factory=dict)
    read: ReadFiles = field(default_factory=ReadFiles, repr=False)  # every file the audit read: never written over

    def release_record(self, *, frontier: Any = None, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        """The release record (:meth:`Audit.release_record`): a person whose interval is at most
        ``tolerance`` wide counts as certain."""
        from ppdm.report.record import release_record

        return release_record(self, frontier=_frontier(frontier), inputs=inputs if inputs is not None else self.sources)

    def save_record(self, path: str | Path, **kwargs: Any) -> dict[str, Any]:
        """Write :meth:`release_record` as JSON, whole or not at all; returns it."""
        from ppdm.report.record import record_json

        record = self.release_record(**kwargs)
        write_atomic(path, record_json(record), inputs=self.read)
        return record

    def lines(self, top: int = 5) -> list[str]:
        """The summary ``ppdm audit`` prints (``top`` narrowest intervals)."""
        from ppdm.report.intervals import interval_lines

        return interval_lines(self.intervals, top)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def summary(self) -> dict[str, Any]:
        return dict(self.intervals.summary())

    def people(self) -> pd.DataFrame:
        """One row per record: its proved interval, estimate, whether pinned, and the truth when known."""
        return self.intervals.people()

    def to_dict(self) -> dict[str, Any]:
        return dict(self.intervals.to_dict())

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_dict` as JSON, whole or not at all (never over a file the audit read)."""
        write_atomic(path, result_json(self.to_dict()), inputs=self.read)

    def report(self, path: str | Path, *, json: str | Path | None = None, title: str | None = None) -> dict[str, Any]:
        """Write the HTML report (an interval per person, the pinned count beside the prior's) and its JSON."""
        from ppdm.report.intervals import write_interval_report

        return write_interval_report(self.intervals, self.model, path, json, title=title, inputs=self.read)

    def _repr_html_(self) -> str:
        """What a notebook shows: the interval report's first cards (:func:`ppdm.report.intervals.interval_cards_html`)."""
        from ppdm.report.intervals import interval_cards_html, interval_report

        return interval_cards_html(interval_report(self.intervals, self.model))

    def __repr__(self) -> str:
        r = self.intervals
        return f"<RegressionAudit of {r.sensitive!r} over {words.records(len(r.lower))}: {r.details.get('bounds', 'propagation')}>"


def _with_progress(run: Callable[..., Any]) -> Callable[..., Any]:
    """``run`` with its ``progress`` resolved (:func:`ppdm.progress.resolve`) and installed
    around it (:func:`ppdm.progress.reporting`), so that the loops deep inside report to it."""

    @wraps(run)
    def reported(*args: Any, progress: Progress | bool | None = None, **kwargs: Any) -> Any:
        if callable(progress) and _takes_two(progress):
            warnings.warn(
                "progress(done, total) over a forest's trees is deprecated: progress= now takes a ppdm.progress.Step (every long step reports)",
                DeprecationWarning, stacklevel=2,
            )  # fmt: skip
            progress = _trees_only(progress)
        with reporting(progress) as told:
            return run(*args, progress=told, **kwargs)

    return reported


@_with_progress
def audit(
    model: Model | str | Path | Any,
    data: pd.DataFrame | str | Path | Any = None,
    threat: ThreatModel | dict[str, Any] | str | Path | None = None,
    *,
    membership: pd.DataFrame | str | Path | None = None,
    member_column: str | None = "member",
    member_ids: Any = None,
    id_column: str | None = None,
    class_known: bool | None = None,
    exact: bool = False,
    estimate: bool = True,
    missing: Missing = "error",
    labels: bool = True,
    internal: bool = False,
    time_limit: float | None = None,
    exact_time_limit: float | None = None,
    exact_detail: Literal["certainty", "bounds"] = "certainty",
    class_attribute: str | None = None,
    sample: bool = False,
    trees: str | Sequence[int] | range | slice | None = None,
    reference: pd.DataFrame | str | Path | None = None,
    holdout: pd.DataFrame | str | Path | None = None,
    progress: Progress | bool | None = None,
    solver_progress: Callable[[Any], None] | None = None,
    exact_progress: Callable[[Any], None] | None = None,
    client: Any = None,
    tolerance: float = 0.0,
    domain: Sequence[float] | None = None,
    target: Target | str | None = None,
    policy: Any = None,
    blackbox: Any = None,
    options: AuditOptions | None = None,
) -> Audit | RegressionAudit:
    """Audit what ``model`` discloses about ``data``'s people to the attacker ``threat``.

    ``model``: a :class:`Tree` or :class:`Forest`, a model file (:func:`load_model`) or a fitted
    estimator (:func:`from_estimator`). ``data``: the training records (a DataFrame, a CSV path,
    or a ``dask.dataframe`` for tables beyond memory, trees only), in the order the model was
    fitted on when it counts rows with multiplicities. ``threat``: a :class:`ThreatModel`, its
    mapping or YAML file (default: paper 000's attacker, who knows the declared quasi-identifiers
    and wants the class), resolved once against ``data`` and handed to every step.

    ``options``: how the audit runs (:class:`~ppdm.attacks.models.options.AuditOptions`: the estimate
    and the exact proof, what the estimate reads, missing values, the time budgets and the
    nested solver options, each default documented there); ``estimate``, ``exact``, ``labels``,
    ``internal``, ``missing``, ``time_limit``, ``exact_time_limit`` and ``exact_detail`` are its
    fields, and each given here other than its default overrides it (past a forest's
    ``time_limit``: the solver's best point, status ``inaccurate``, only what is proved held
    certain; a table too large to build: the pooled estimate, ``details["note"]``). ``progress``: who hears the long steps
    (:mod:`ppdm.progress`: by default lines on standard error after a couple of seconds;
    ``False``: silent; any ``Callable[[Step], None]``); ``solver_progress`` and ``exact_progress``
    hear the forest solver's and the exact search's own reports instead.

    ``data`` must be the training table: a table of another size than the model publishes is
    refused with both numbers, unless ``sample=True`` declares it a sample (the published counts
    then read as bounds, said in ``details["sample"]``). ``trees``: audit only these trees of a
    forest (``"0:10"``, ``range(10)``, ``[0, 3]``): a lower bound, said in
    ``details["trees_audited"]``. ``reference``: people of the same population who are not
    targets: the model-free attacker fitted on them, in ``Audit.reference``. ``holdout``: people
    outside the training set: the estimate's guess rule applied to them (``details["control"]``).

    ``membership``: a population of candidates (with every model input and, with ``class_known``,
    the class): the membership audit (:func:`ppdm.attacks.membership.audit.membership_attack`) replaces
    the audit of the sensitive value, in ``Audit.membership``; ``model`` may then be a published
    rule set. Its truth: the boolean ``member_column``, or ``member_ids`` matched against the
    population's ``id_column`` (:func:`~ppdm.attacks.membership.audit.members_by_id`). A fitted
    classifier (any scikit-learn one) also meets the black-box attacks, the strongest reported
    (:func:`ppdm.attacks.membership.audit.with_blackbox`); ``blackbox``: their
    :class:`~ppdm.attacks.membership.blackbox.BlackboxOptions`, ``False``, or predicted probabilities per candidate.

    A **regressor**'s numeric target (or a numeric input as ``threat.sensitive``): a
    :class:`RegressionAudit` of proved intervals (:func:`ppdm.attacks.models.regression.interval_attack`),
    how many pinned to within ``tolerance``, beside the prior's ``domain`` (default: the column's range).

    ``target``: the privacy target the audit is judged against (a
    :class:`~ppdm.attacks.core.target.Target` or its text, ``"certain=0,confident=5%@0.9"``; default
    :data:`~ppdm.attacks.core.target.DEFAULT_TARGET`, or for a membership audit
    :data:`~ppdm.attacks.core.target.MEMBERSHIP_TARGET`): printed with the audit, stored in its JSON,
    and what its report and release record (:meth:`Audit.release_record`) judge against.
    ``policy``: the output checker's policy instead (:func:`ppdm.check.policy.with_policy`: a
    preset's name such as ``"acro"`` or a YAML file), cited with its SHA-256 in the release record.
    """
    from ppdm.check.policy import cite_policy, with_policy

    how = _options(options).with_keywords(
        estimate=estimate, exact=exact, labels=labels, internal=internal, missing=missing, time_limit=time_limit,
        exact_time_limit=exact_time_limit, exact_detail=exact_detail,
    )  # fmt: skip
    with recording_reads() as read:
        target, rules = with_policy(policy, target, membership is not None)
        done = _audit(
            model, data, threat, how, membership=membership, member_column=member_column, member_ids=member_ids, id_column=id_column,
            class_known=class_known, class_attribute=class_attribute, sample=sample, trees=trees, reference=reference, holdout=holdout,
            progress=progress, solver_progress=solver_progress, exact_progress=exact_progress, client=client, tolerance=tolerance,
            domain=domain, target=target, blackbox=blackbox,
        )  # fmt: skip
    read.update(ReadFiles(v for v in (model, data, threat, membership, member_ids, reference, holdout, blackbox) if isinstance(v, (str, Path))))
    done.read = read
    return cite_policy(done, rules)


def _options(options: Any) -> AuditOptions:
    """``options=`` as given, or the defaults; anything else refused naming it."""
    if options is None:
        return AuditOptions()
    if not isinstance(options, AuditOptions):
        raise ArgumentTypeError(f"options must be an AuditOptions (ppdm.attacks.models.options), got {type(options).__name__}")
    return options


def _audit(
    model: Any, data: Any, threat: Any, how: AuditOptions, *, membership: Any, member_column: str | None, member_ids: Any, id_column: str | None,
    class_known: bool | None, class_attribute: str | None, sample: bool, trees: Any, reference: Any, holdout: Any, progress: Progress | bool | None,
    solver_progress: Callable[[Any], None] | None, exact_progress: Callable[[Any], None] | None, client: Any, tolerance: float,
    domain: Sequence[float] | None, target: Target | str | None, blackbox: Any = None,
) -> Audit | RegressionAudit:
    """:func:`audit`, its files read within a recording (the audit's writers refuse them)."""
    tree_rows = _tree_rows(progress)
    solver_progress = solver_progress if solver_progress is not None else _solver_steps(progress)
    exact_progress = exact_progress if exact_progress is not None else _exact_steps(progress)
    _check_options(how, class_known, sample, target)
    sources = {k: v for k, v in (("model", model), ("data", data), ("population", membership), ("member_ids", member_ids),
                                 ("reference", reference), ("holdout", holdout)) if _hashable(v)}  # fmt: skip
    if membership is not None:
        truth = _membership_truth(membership, member_column, member_ids, id_column)
        members = _membership_audit(model, data, truth, class_known, class_attribute, how.exact_time_limit, how.time_limit, sample, reference, blackbox)
        return _targeted(members, target, sources)
    if member_ids is not None or id_column is not None:
        raise PpdmError("member_ids= and id_column= give a membership audit's truth: add membership=, the population of candidates")
    if data is None:
        raise DataError("data must be the training table (a pandas DataFrame or a CSV path), got NoneType; or give membership=, a population of candidates")
    _check_steps(how)
    table = _as_table(data)
    rules = _as_rules(model)
    if rules is not None:
        return _targeted(_rules_audit(rules, table, _as_threat(threat), how), target, sources)
    published = _as_model(model, table, class_attribute)
    subset = None
    if trees is not None:
        published, subset = _subset(published, trees)
    declared = _as_threat(threat)
    if how.leaf is not None:
        return _targeted(_leaf_audit(published, table, declared, how), target, sources)
    if getattr(published, "is_regressor", False):
        done = _regression_audit(published, table, declared, how, sample, reference, holdout, tolerance, domain, subset, exact_progress)
        return _targeted(done, target, sources)
    if tolerance or domain is not None:
        raise advising(
            PpdmError("tolerance= and domain= belong to the audit of a regressor's numeric target; this model predicts classes"),
            "tolerance= and domain=", None, "--tolerance and --domain",
        )
    _check_split_columns(table, published)
    if is_dask(table):
        if how.exact:
            raise PpdmError("the exact audit works on a pandas table: audit the counted groups in memory")
        counted, weights, dropped, resolved = _counted(table, published, declared, how.missing, client)
    else:
        counted, weights = table, None
        counted, dropped, resolved = _with_missing(table, published, declared, how.missing)
    sampled = _check_training_size(published, counted, weights, dropped, sample)
    _check_sensitive_varies(counted, resolved)
    _check_finite(counted, published)
    result = _estimate(published, counted, resolved, weights, how, tree_rows, solver_progress) if how.estimate else None
    proved, not_run = _prove(published, counted, resolved, how, exact_progress, result) if how.exact else (None, None)
    baseline = None
    if result is not None and weights is None:
        coarser = _coarser(published, counted, resolved, how.labels) if not how.internal else []
        result, baseline = _baselines(result, counted, reference, holdout, _audited(published, resolved), resolved, coarser)
        if proved is not None:  # the reported attacker holds every proved certainty too
            from ppdm.attacks.baselines.portfolio import within_proof

            result = within_proof(result, proved)
    elif reference is not None or holdout is not None:
        raise PpdmError("reference= and holdout= measure the estimate on an in-memory table: give estimate=True and a pandas table")
    _annotate([r for r in (result, proved) if r is not None], counted, resolved, sampled, subset, dropped)
    if result is not None and not_run is not None:
        result.details["exact_not_run"] = not_run
    return _targeted(Audit(published, resolved, result, proved, counted, weights, dropped, baseline), target, sources)


def _check_options(how: AuditOptions, class_known: bool | None, sample: bool, target: Target | str | None) -> None:
    """Refuse flags that are not ``True``/``False``, a target of another type and budgets that are not seconds."""
    check_flags(exact=how.exact, estimate=how.estimate, labels=how.labels, internal=how.internal, sample=sample)
    if class_known is not None:
        check_flags(class_known=class_known)
    _check_target(target)


def _check_steps(how: AuditOptions) -> None:
    """Refuse an attribute audit's steps that cannot run together (before any file is read)."""
    if not how.estimate and not how.exact:
        raise PpdmError("estimate=False leaves nothing to do: ask for exact=True for the exact audit alone")
    if how.exact_time_limit is not None and not how.exact:
        raise PpdmError("exact_time_limit needs exact=True")
    if how.exact and how.internal:
        raise PpdmError("the exact audit does not use the split choices (internal=True): run them separately")
    if how.missing not in POLICIES:
        raise PpdmError(f"unknown missing-value policy {how.missing!r} (choose one of: {', '.join(POLICIES)})")


def _regression_audit(
    published: Model, table: Any, declared: ThreatModel, how: AuditOptions, sample: bool, reference: Any, holdout: Any, tolerance: float,
    domain: Sequence[float] | None, subset: str | None, exact_progress: Callable[[Any], None] | None,
) -> RegressionAudit:
    """A regressor's audit: each person's proved interval of the numeric secret."""
    unsupported = {"a dask table": is_dask(table), "sample=True": sample, "reference=": reference is not None, "holdout=": holdout is not None, "internal=True": how.internal}
    named = [k for k, v in unsupported.items() if v]
    if named:
        raise PpdmError(f"the audit of a regressor does not take {named[0]}: give the training rows as a pandas table")
    counted, dropped, resolved = _with_missing(table, published, declared, how.missing)
    _check_training_size(published, counted, None, dropped, False)
    _check_finite(counted, published)
    ids = counted.index.to_numpy() if pd.api.types.is_integer_dtype(counted.index) else None  # as a classifier's audit names people
    intervals = _interval_attack(published, counted, resolved, exact_progress)(
        published, counted, resolved, tolerance=tolerance, domain=domain, exact=how.exact, time_limit=how.time_limit,
        exact_time_limit=how.exact_time_limit, row_ids=ids,
    )  # fmt: skip
    if subset is not None:
        intervals.details["trees_audited"] = subset
    if dropped:
        intervals.details["dropped_rows"] = dropped
    return RegressionAudit(published, resolved, intervals, counted, dropped)


def _rules_audit(rules: RuleSet, table: pd.DataFrame, declared: ThreatModel, how: AuditOptions) -> Audit:
    """A published rule set's audit (paper 004): the maximum-entropy estimate of everyone's
    sensitive value from the rules, under the threat resolved once."""
    from ppdm.attacks.models.rules import rules_estimate, rules_threat
    from ppdm.maxent.constraints.rule_constraints import RuleKnowledge

    if how.exact or how.internal or how.forest is not None or how.search is not None or how.leaf is not None:
        raise PpdmError("a rule set's audit is its maximum-entropy estimate (paper 004): no exact proof, split choices, forest, search or leaf options")
    if how.missing != "error":
        raise PpdmError("a rule set's audit reads the attacker's table as it is: no missing-value policy")
    resolved, knowledge = rules_threat(rules, table, declared, how.rules or RuleKnowledge())
    return Audit(rules, resolved, rules_estimate(rules, table, knowledge, resolved), None, table)


def _leaf_audit(published: Model, table: pd.DataFrame, declared: ThreatModel, how: AuditOptions) -> Audit:
    """A leaf attack of paper 003 (:class:`~ppdm.attacks.models.options.LeafOptions`) under the
    threat resolved once: the published leaves read with the attacker's table, whose size the
    model need not publish."""
    from ppdm.attacks.leaf.background import background_knowledge_attack
    from ppdm.attacks.leaf.forest_reconstruction import reconstruction_attack
    from ppdm.attacks.leaf.homogeneity import homogeneity_attack, uniqueness_attack

    assert how.leaf is not None
    if how.exact or how.internal or not how.estimate or how.missing != "error":
        raise PpdmError("a leaf attack reads the published leaves alone: no exact proof, split choices or missing-value policy")
    resolved = declared.resolve(table, published.class_attribute, splits=published.split_attributes)
    if how.leaf.attack == "background":
        result = background_knowledge_attack(published, table, threshold=how.leaf.threshold, threat=resolved)
    else:
        attack = {"homogeneity": homogeneity_attack, "uniqueness": uniqueness_attack, "reconstruction": reconstruction_attack}[how.leaf.attack]
        result = attack(published, table, resolved)
    return Audit(published, resolved, result, None, table)


def _prove(
    published: Model, counted: pd.DataFrame, resolved: ThreatModel, how: AuditOptions, progress: Callable[[Any], None] | None,
    result: AttackResult | None,
) -> tuple[AttackResult | None, str | None]:
    """The exact audit under the resolved threat, and why it did not run when its table was too large."""
    from ppdm.attacks.models.exact import exact_attack

    try:
        seconds = how.exact_seconds
        return exact_attack(published, counted, time_limit=seconds, threat=resolved, detail=how.exact_detail, options=how.search, progress=progress), None
    except RoutingLimitError as why:
        if result is None:  # the exact audit alone: nothing else was measured
            raise
        return None, _not_run(why, str(result.details.get("note_details", "")))


def _annotate(results: list[AttackResult], counted: pd.DataFrame, resolved: ThreatModel, sampled: Any, subset: str | None, dropped: int) -> None:
    """What each result read, in its details: the sensitive value's names, the sample, the trees and the rows dropped."""
    for r in results:
        if r.true_codes is not None and str(resolved.sensitive) in counted.columns:
            names = data_value_names(r.values, r.true_codes, counted[str(resolved.sensitive)])
            if names:
                r.details["value_names"] = names
        if sampled:
            r.details["sample"] = sampled
        if subset is not None:
            r.details["trees_audited"] = subset
        if dropped:  # what was read, rows too: the result's scope (ppdm.attacks.core.scope)
            r.details["dropped_rows"] = dropped


#: The phase of a forest's rows built, tree by tree.
TREE_ROWS = "building each tree's rows"


def _trees_only(trees: Callable[..., Any]) -> Progress:
    """The older ``trees(done, total)`` as a reporter hearing a forest's rows built, nothing else."""

    def hear(step: Step) -> None:
        if step.phase == TREE_ROWS and step.done is not None:
            trees(step.done, step.total)

    return hear


def _takes_two(progress: Callable[..., Any]) -> bool:
    """Whether ``progress`` is the older ``progress(done, total)`` (two positional parameters, no default)."""
    import inspect

    try:
        parameters = inspect.signature(progress).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: a Step reporter such as list.append
        return False
    required = [p for p in parameters if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(required) == 2


#: The forest solver's phases (:class:`~ppdm.maxent.solvers.forest_solve.ForestProgress`), in words.
SOLVER_PHASES = {
    "bounds": "solving: proving empty types by bound propagation", "newton": "solving: Newton's method",
    "face": "solving: finding the face (linear programme)", "general": "solving: Newton's method (general driver)",
}
#: The exact audit's phases (:class:`~ppdm.exact.options.SearchProgress`), in words.
EXACT_PHASES = {
    "first dataset": "proving: finding a dataset consistent with the model", "certainty": "proving: settling who is certain",
    "bounds": "proving: settling the other counts", "interval ends": "proving: each group's interval ends by integer programmes",
}


def _tree_rows(progress: Progress | bool | None) -> Callable[[int, int], None] | None:
    """A forest's rows built, tree by tree, as steps to ``progress``."""
    if not callable(progress):
        return None
    return lambda done, total: report_step(TREE_ROWS, done, total, "trees")


def _solver_steps(progress: Progress | bool | None) -> Callable[[Any], None] | None:
    """The forest solver's :class:`~ppdm.maxent.solvers.forest_solve.ForestProgress` as steps to ``progress``."""
    if not callable(progress):
        return None

    def step(p: Any) -> None:
        off = "" if p.violation != p.violation else f"rows off by {p.violation:.1e}"  # NaN before the first step
        counted = p.budget is not None
        progress(Step(SOLVER_PHASES.get(p.phase, p.phase), p.step if counted else None, p.budget, "Newton steps at most" if counted else "", p.seconds, p.time_limit, off))

    return step


def _exact_steps(progress: Progress | bool | None) -> Callable[[Any], None] | None:
    """The exact audit's :class:`~ppdm.exact.options.SearchProgress` as steps to ``progress``."""
    if not callable(progress):
        return None

    def step(p: Any) -> None:
        if p.phase == "interval ends":
            progress(Step(EXACT_PHASES[p.phase], p.components, p.total, "groups tried", p.seconds, p.time_limit, f"{p.proved:,} settled"))
            return
        parts = p.total > 1  # independent parts of the problem, searched one after the other
        progress(Step(EXACT_PHASES.get(p.phase, p.phase), p.components if parts else None, p.total if parts else None, "parts searched" if parts else "",
                      p.seconds, p.time_limit, f"{p.proved:,} groups proved certain, {p.open:,} open"))  # fmt: skip

    return step


@dataclass
class _Population:
    """The candidates of a membership audit, the truth when known and where it came from."""

    table: pd.DataFrame
    truth: str | np.ndarray | None
    hidden: list[str]
    details: dict[str, Any]


def _hashable(value: Any) -> bool:
    """An input the release record hashes: a file (its bytes), a pandas table (its CSV text) or a
    ppdm model in memory (its ppdm JSON; :func:`ppdm.report.record.input_hash`)."""
    if is_model(value):  # a regression tree has no ppdm JSON file to hash
        return not any(t.is_regressor for t in value.trees)
    return isinstance(value, (str, Path, pd.DataFrame))


def _check_target(target: Any) -> None:
    """Refuse a ``target=`` that is neither a :class:`Target`, its text nor ``None``."""
    if target is not None and not isinstance(target, (Target, str)):
        raise ArgumentTypeError(
            f"target must be a Target or its text (such as 'certain=0,confident=5%@0.9'), got {shown(target, 60)} ({type(target).__name__})"
        )


def _targeted(done: Any, target: Target | str | None, sources: dict[str, Any]) -> Any:
    """``done`` (an :class:`Audit` or :class:`RegressionAudit`) with the target it is judged
    against (the default one when ``target`` is ``None``) and the input files it read."""
    chosen = parse_target(target) if isinstance(target, str) else target
    done.target = chosen if chosen is not None else default_target(done.membership is not None and not done.results if isinstance(done, Audit) else False)
    done.target_given = chosen is not None
    done.sources = sources
    return done


def _membership_truth(population: Any, member_column: str | None, member_ids: Any, id_column: str | None) -> _Population:
    """The population and its truth: a member column, or the training rows' identifiers."""
    from ppdm.attacks.membership.audit import members_by_id

    table = _as_table(population)
    column = member_column if member_column is not None and member_column in table.columns else None
    if member_ids is None:
        if id_column is not None:
            raise PpdmError("id_column= names the candidates' identifiers for member_ids=: give the training rows' identifiers too")
        return _Population(table, column, [column] if column else [], {})
    if id_column is None:
        raise advising(
            PpdmError("member_ids= are matched against the population's identifier column: give id_column= (e.g. 'ID')"),
            "give id_column= (e.g. 'ID')", "id_column", "give the population's column of identifiers",
        )
    if column is not None:
        raise PpdmError(f"two truths: the population's column {column!r} and member_ids=; give one")
    ids = _read_ids(member_ids, id_column) if isinstance(member_ids, (str, Path)) else member_ids
    members, details = members_by_id(table, id_column, ids)
    return _Population(table, members, [id_column], details)


def _read_ids(path: str | Path, id_column: str) -> Any:
    """Identifiers from a CSV with the column ``id_column`` or a file of one identifier per line."""
    file = Path(path)
    if not file.is_file():
        raise DataError(f"{file}: no such file of training-row identifiers")
    first = file.read_text(encoding="utf-8", errors="replace").splitlines()[:1]
    header = [h.strip() for h in first[0].split(",")] if first else []
    if id_column in header:
        return pd.read_csv(file, usecols=[id_column], dtype=str)[id_column].dropna()
    if len(header) > 1:
        raise DataError(f"{file}: a CSV of identifiers needs the column {id_column!r} (it has {', '.join(header[:6])})")
    return pd.read_csv(file, header=None, dtype=str)[0].dropna()


def _not_run(why: RoutingLimitError, note: str) -> str:
    """Why the exact audit did not run: the routing refusal, shortened to its advice when the
    estimate's note already gives the same table's size (the pooled estimate's, in its details)."""
    if why.advice and why.cause in note:
        return f"exact audit not run: it would route the same table the joint estimate found too large to build; {why.advice}"
    return f"exact audit not run: {why}"


def _membership_audit(
    model: Any, data: Any, population: _Population, class_known: bool | None, class_attribute: str | None,
    proof_seconds: float | None, estimate_seconds: float | None, sample: bool = False, reference: Any = None, blackbox: Any = None,
) -> Audit:
    """The membership audit of ``population`` (see :func:`audit`; ``sample``: it holds some of the
    training records only, the published counts then upper bounds)."""
    from dataclasses import replace

    from ppdm.attacks.membership.audit import MembershipOptions, membership_attack, with_blackbox

    if data is not None:
        raise PpdmError("membership= audits a population of candidates: leave data out (the truth is the population's member column)")
    table, truth = population.table, population.truth
    candidates = table.drop(columns=population.hidden)
    try:
        published = _as_rules(model) or _as_model(model, candidates, class_attribute)
    except ModelImportError:
        if blackbox is False or not (hasattr(model, "predict_proba") or isinstance(blackbox, (pd.DataFrame, str, Path))):
            raise
        published = None  # not readable as trees: the black-box attacks alone
    options = MembershipOptions()
    if proof_seconds is not None:
        options = replace(options, proof=replace(options.proof, time_limit=float(proof_seconds)))
    if estimate_seconds is not None:
        options = replace(options, solver=replace(options.solver, time_limit=float(estimate_seconds)))
    audited = table if isinstance(truth, str) else candidates  # a truth column is read by name; identifiers are not the attacker's
    result = None if published is None else membership_attack(published, audited, class_known=class_known, truth=truth, complete=not sample, options=options)
    klass = class_attribute or getattr(published, "class_attribute", None)
    ref = _as_table(reference) if reference is not None else None
    result = with_blackbox(result, model, audited, truth, class_attribute=klass, class_known=class_known, reference=ref, options=blackbox)
    result.details.update(population.details)
    return Audit(published if published is not None else model, ThreatModel(), None, None, table, membership=result)


# -- inputs --------------------------------------------------------------------------------------
def _frontier(frontier: Any) -> Any:
    """A defense search's frontier: as given, or read from its JSON file (``ppdm defend --frontier``)."""
    if isinstance(frontier, (str, Path)):
        from ppdm.report.load import load_frontier

        return load_frontier(frontier)
    if hasattr(frontier, "frontier_records"):  # a DefenseResult
        return frontier.frontier_records()
    return frontier


def _as_table(data: Any) -> Any:
    if isinstance(data, (str, Path)):
        from ppdm.data.datasets import load_csv

        return load_csv(data)[0]
    if type(data).__module__.split(".")[0] == "polars":
        try:
            data = data.to_pandas()
        except Exception as exc:  # polars needs pyarrow to convert
            raise DataError(f"data is a polars DataFrame and converting it failed ({type(exc).__name__}): pass data.to_pandas()") from None
    if isinstance(data, pd.DataFrame):
        if not data.index.is_unique:
            repeated = data.index[data.index.duplicated()][0]
            raise DataError(
                f"data's index repeats the row id {shown(repeated)}: people() names each person by it; "
                "pass data.reset_index(drop=True) (row ids from 0) or give each row its own id"
            )
        return text_columns(data)
    if is_dask(data):
        return data
    raise DataError(f"data must be the training table (a pandas DataFrame or a CSV path), got {type(data).__name__}")


def _as_model(model: Any, table: Any, class_attribute: str | None) -> Model:
    if is_model(model):
        return model
    frame = table._meta if is_dask(table) else table
    if isinstance(model, (str, Path)):
        return load_model(model, None if is_dask(table) else frame, class_attribute=class_attribute)
    return from_estimator(model, frame, class_attribute=class_attribute)


def _as_rules(model: Any) -> RuleSet | None:
    """``model`` as a published rule set when it is one (a :class:`RuleSet`, or a JSON file of
    format ``ppdm-rules``), else None."""
    if isinstance(model, RuleSet):
        return model
    if isinstance(model, (str, Path)) and Path(model).is_file():
        with open(model, "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
        if re.search(r'"format"\s*:\s*"ppdm-rules"', head):
            return RuleSet.load(model)
    return None


def _as_threat(threat: ThreatModel | dict[str, Any] | str | Path | None) -> ThreatModel:
    if threat is None:
        return ThreatModel()
    if isinstance(threat, ThreatModel):
        return threat
    if isinstance(threat, dict):
        return threat_from_dict(threat)
    if isinstance(threat, (str, Path)):
        return load_threat(threat)
    raise PpdmError(f"threat must be a ThreatModel, a mapping of its keys or a YAML file, got {type(threat).__name__}")


def _check_split_columns(table: Any, model: Model) -> None:
    """Refuse a table without a column the model splits on, naming it, before the attacker is
    resolved (a later constraint named the sensitive column instead)."""
    missing = [c for c in model.split_attributes if c not in set(table.columns)]
    if missing:
        raise DataError(f"the {type(model).__name__.lower()} splits on column(s) missing from the data: {', '.join(map(repr, missing))}")
    if model.class_attribute not in set(table.columns):
        raise advising(
            DataError(f"the data has no column {model.class_attribute!r}, the class the model's leaves count (pass class_attribute= if it is called otherwise)"),
            "pass class_attribute=", "class_attribute", "give its name",
        )


def audit_columns(model: Model, threat: ThreatModel) -> list[str]:
    """The columns an audit reads under a resolved ``threat``: the known ones, the sensitive one,
    the class and every split attribute of the model."""
    return list(dict.fromkeys([*(threat.known or ()), str(threat.sensitive), model.class_attribute, *model.split_attributes]))


def _interval_attack(model: Model, table: pd.DataFrame, threat: ThreatModel, progress: Callable[[Any], None] | None = None) -> Callable[..., Any]:
    """A regressor's attack: its target's intervals (linear programmes, quick), or a numeric
    input's (the target known; ``progress`` follows its integer programmes)."""
    from ppdm.attacks.models.regression import interval_attack
    from ppdm.attacks.models.regression_input import input_interval_attack

    if threat.sensitive == model.class_attribute:
        return interval_attack
    if threat.sensitive not in model.attributes:
        raise PpdmError(
            f"a regressor's audit proves intervals of its target {model.class_attribute!r} or of one of its numeric inputs: "
            f"{threat.sensitive!r} is neither"
        )
    return partial(input_interval_attack, progress=progress)


def _with_missing(table: pd.DataFrame, model: Model, threat: ThreatModel, policy: Missing) -> tuple[pd.DataFrame, int, ThreatModel]:
    """The table with the missing values of the columns the audit reads dealt with by ``policy``."""
    resolved = threat.resolve(table, model.class_attribute, splits=model.split_attributes)
    kept, dropped = handle_missing(table, audit_columns(model, resolved), policy, model.split_attributes)
    if dropped and model.n_records == len(table):
        raise _refused_drop(dropped, len(table), "the forest's trees count every one of them (per-row multiplicities)")
    if dropped and model.is_regressor and model.n_training_records == len(table):
        raise _refused_drop(dropped, len(table), "each of the regressor's leaves sums the targets of every one of its rows")
    return kept, dropped, resolved


def _refused_drop(dropped: int, rows: int, why: str) -> DataError:
    """Refuse ``missing="drop"`` on a model whose published rows count every training row."""
    python = f"missing='drop' would leave out {dropped:,} of the {rows:,} training rows"
    error = DataError(f"{python}, but {why}: audit all the rows the model was fitted on")
    return advising(error, python, "missing", f"--missing drop would leave out {dropped:,} of the {rows:,} training rows")


def _counted(frame: Any, model: Model, threat: ThreatModel, policy: Missing, client: Any) -> tuple[pd.DataFrame, np.ndarray, int, ThreatModel]:
    """A lazily read table counted partition by partition into the distinct combinations of the
    columns the audit reads (with the records each stands for), missing values dealt with."""
    if isinstance(model, Forest):
        raise DataError("a forest is audited on an in-memory (pandas) table, not a Dask one")
    resolved = threat.resolve(frame._meta, model.class_attribute, splits=model.split_attributes)
    columns = [c for c in audit_columns(model, resolved) if c in frame.columns]
    found = compress(frame, columns, client)
    assert found is not None  # no limit asked
    table, weights = found
    assert weights is not None
    table, weights, dropped = handle_missing_counted(table, weights, columns, policy, model.split_attributes)
    return table, weights, dropped, resolved


def _estimate(
    model: Model, table: pd.DataFrame, threat: ThreatModel, weights: np.ndarray | None, how: AuditOptions,
    progress: Callable[[int, int], None] | None, solver_progress: Callable[[Any], None] | None = None,
) -> AttackResult:
    from ppdm.attacks.models.possible import estimate_or_possible
    from ppdm.maxent.constraints.tree_constraints import Knowledge

    knowledge = Knowledge(rate=True, label=how.labels, internal=how.internal)
    forest = {"forest_options": how.forest} if how.forest is not None else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UninformativeKnowledgeWarning)  # the note is in the summary
        return estimate_or_possible(
            model, table, threat, knowledge=knowledge, time_limit=how.time_limit, weights=weights, tree_progress=progress,
            solver_progress=solver_progress, **forest,
        )


def _baselines(
    result: AttackResult, table: pd.DataFrame, reference: Any, holdout: Any, model: Model, threat: ThreatModel,
    coarser: list[AttackResult] | None = None,
) -> tuple[AttackResult, AttackResult | None]:
    """The attacker the audit reports (:func:`~ppdm.attacks.baselines.portfolio.strongest_attacker`: the
    strongest of the model's estimate, the estimates with less knowledge (``coarser``), the
    likelihood rules, the prior's majority guess and, with ``reference``, the model-free attacker fitted on it), with the
    control on ``holdout`` when given; and the model-free attacker's result."""
    from ppdm.attacks.baselines.likelihood import art_white_box_rule, likelihood_attacks, prior_rule
    from ppdm.attacks.baselines.portfolio import strongest_attacker
    from ppdm.attacks.baselines.reference import control_summary, fit_imputation, model_outputs

    others, shown = [], []
    if result.true_codes is not None:
        prior = prior_rule(table, threat, result.values)  # the baseline itself, whatever is known
        others = [*(coarser or []), *likelihood_attacks(model, table, threat, result.values), *([prior] if prior is not None else [])]
        art = art_white_box_rule(model, table, threat, result.values)
        shown = [art] if art is not None else []
    imputed, rule = None, None
    if reference is not None:
        sample = _as_table(reference)
        outputs = None
        if threat.outputs:
            outputs = (model_outputs(model, table, threat.outputs, "the audited table"), model_outputs(model, sample, threat.outputs, "the reference sample"))
        alternatives: list[AttackResult] = []
        imputed, rule = fit_imputation(result, table, sample, outputs, also=alternatives)
        if outputs is not None:  # an attacker seeing the outputs may also ignore them
            alone, _ = fit_imputation(result, table, sample, None, also=alternatives)
            alone.attack = "imputation ignoring the model's outputs"
            alternatives[-1].attack += ", ignoring the model's outputs"
            alternatives.append(alone)
        others += [imputed, *alternatives]
    result = strongest_attacker(result, others, [imputed] if imputed is not None else [], shown)
    if imputed is not None:
        ours, theirs = result.summary(), imputed.summary()
        if "attacker_accuracy" in ours:
            result.details["reference"] = {
                "model": imputed.details["model"],
                "accuracy": theirs["attacker_accuracy"],
                "ci95": theirs["attacker_accuracy_ci95"],
                "model_adds": ours["attacker_accuracy"] - max(theirs["attacker_accuracy"], ours["baseline"]["accuracy"]),
                "outputs": threat.outputs,
                "confidence_in_true_value": theirs.get("confidence_in_true_value", {}),
            }
    if holdout is not None:
        people = _as_table(holdout)
        unseen = None
        if rule is not None and "imputation" in str(result.details.get("reported_attacker", "")) and set(result.groups.quasi_identifiers) <= set(people.columns):
            unseen = _holdout_rule(rule, people, model, threat)
        result.details["control"] = control_summary(result, people, unseen)
    return result, imputed


def _holdout_rule(rule: Callable[[pd.DataFrame], np.ndarray], people: pd.DataFrame, model: Model, threat: ThreatModel) -> np.ndarray | None:
    """The model-free attacker's posterior for the holdout's people, when it can be computed."""
    from ppdm.attacks.baselines.reference import model_outputs

    if threat.outputs:
        if not set(model.split_attributes) <= set(people.columns):
            return None
        people = pd.concat([people.reset_index(drop=True), model_outputs(model, people, threat.outputs, "the holdout").reset_index(drop=True)], axis=1)
    return rule(people)


#: A tree's audit also measures the estimate under every subset of the known columns when there
#: are at most this many.
LATTICE_MAX = 6


def _coarser(model: Model, table: pd.DataFrame, threat: ThreatModel, labels: bool) -> list[AttackResult]:
    """A single tree's maximum-entropy estimates with less knowledge (habit 2: an attacker who
    knows more can ignore a column, so knowing more must never be reported as weaker): under
    every proper subset of the known columns when there are at most :data:`LATTICE_MAX` of them
    (then knowing more is never reported as weaker); none beyond (the insider's simple attackers
    are the likelihood rules), for a forest (each is a whole audit) or without the true values.
    When the attacker sees the model's outputs, also the estimate that ignores them (and, from a
    score, the one seeing the label alone), for trees and forests alike: seeing more never
    reports weaker."""
    from itertools import combinations

    from ppdm.attacks.models.maxent import maxent_attack
    from ppdm.maxent.constraints.tree_constraints import Knowledge

    known = [c for c in (threat.known or ()) if c != threat.sensitive]
    if threat.sensitive not in table.columns:
        return []
    lattice = []
    if isinstance(model, Tree) and known and len(known) <= LATTICE_MAX:
        lattice = [
            replace(threat, known=subset, preset=None, class_known=model.class_attribute in subset) for size in range(len(known)) for subset in combinations(known, size)
        ]  # each still resolved: class_known says whether its known columns hold the class
    # an attacker who sees the model's answer can ignore it, and a score gives the label
    ignoring = [replace(threat, known=tuple(known), preset=None, class_known=model.class_attribute in known, outputs=o) for o in _weaker_outputs(threat.outputs)]
    out = []
    for fewer in [*lattice, *ignoring]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UninformativeKnowledgeWarning)
            try:
                # compared within the main estimate's possible values: its proved certainties are kept
                r = maxent_attack(model, table, threat=fewer, knowledge=Knowledge(rate=True, label=labels), prove=False)
            except PpdmError:
                continue
        r.attack = (f"maxent knowing only {', '.join(fewer.known)}" if fewer.known else "maxent knowing no column") if fewer.outputs == threat.outputs else {
            "label": "maxent seeing only the predicted label", None: "maxent ignoring the model's outputs"}[fewer.outputs]
        out.append(r)
    return out


def _weaker_outputs(outputs: str | None) -> list[str | None]:
    """What an attacker seeing ``outputs`` also knows with less: the label from a score, nothing."""
    if outputs == "score":
        return ["label", None]
    return [None] if outputs == "label" else []


def _audited(model: Model, threat: ThreatModel) -> Model:
    from ppdm.attacks.core.threat import audited

    return audited(model, threat.publish)


def _subset(model: Model, trees: str | Sequence[int] | range | slice) -> tuple[Model, str]:
    """The forest's trees ``trees`` names, and how the result says so."""
    from ppdm.tree.forest import parse_trees

    if not isinstance(model, Forest):
        raise advising(PpdmError("trees= selects trees of a forest: this model is a single tree"), "trees=", None, "--trees")
    chosen = parse_trees(trees, model.n_trees)
    shown = f"{chosen[0]}:{chosen[-1] + 1}" if chosen == list(range(chosen[0], chosen[-1] + 1)) else ",".join(map(str, chosen))
    text = f"trees {shown} of {model.n_trees} (a lower bound on what the whole forest discloses: the other trees publish more)"
    return model.select(chosen), text


def _check_sensitive_varies(table: pd.DataFrame, threat: ThreatModel) -> None:
    """Refuse a sensitive column that holds one value: everyone would be "certain" from the data
    alone, which no audit of the model should report."""
    check_varies(table, str(threat.sensitive), "sensitive", "there is nothing to infer, with or without the model")


def _check_finite(table: pd.DataFrame, model: Model) -> None:
    """Refuse an infinite number in a column the model splits on: it would silently go to one
    side of every threshold, and the counts it upsets would be all an error could name."""
    for column in model.split_attributes:
        if column not in table.columns or not pd.api.types.is_numeric_dtype(table[column]) or pd.api.types.is_bool_dtype(table[column]):
            continue
        values = table[column].to_numpy(dtype=float, na_value=np.nan)
        infinite = np.isinf(values)
        if infinite.any():
            at = int(np.argmax(infinite))
            raise DataError(
                f"column {column!r} holds {float(values[at])!r} (row {plain_value(table.index[at])!r}), not a finite number: the model splits on it "
                f"({int(infinite.sum()):,} such value(s))"
            )


def _check_training_size(model: Model, table: pd.DataFrame, weights: np.ndarray | None, dropped: int, sample: bool) -> str | None:
    """Refuse a table that cannot be the model's training data, unless ``sample`` declares it;
    with ``sample``, the sentence every output states (``None`` when the sizes agree)."""
    expected = model.n_training_records
    rows = float(weights.sum()) if weights is not None else float(len(table))
    if expected is None or abs(rows + dropped - expected) <= 1e-6 * max(expected, 1.0):
        return None
    left_out = f" (and {dropped:,} left out for missing values)" if dropped else ""
    weighted = (
        " (a scikit-learn model fitted with sample_weight or class_weight counts weighted records: its counts are sums of weights, "
        "which no table of records matches; refit it without weights to audit it)"
        if getattr(model, "algorithm", None) == "sklearn" else ""
    )
    if not sample:
        raise advising(
            DataError(
                f"the table has {rows:,.0f} record{'' if rows == 1 else 's'}{left_out} but the model was trained on {expected:,.0f}{weighted}: audit the rows the "
                "model was fitted on, or declare the table a sample (sample=True)"
            ),
            "sample=True", "sample",
        )
    return f"audited a sample: {rows:,.0f} record{'' if rows == 1 else 's'}{left_out}; the model was trained on {expected:,.0f}"


# -- views -----------------------------------------------------------------------------------------
def _values(values: Sequence[Any], codes: np.ndarray) -> np.ndarray:
    return np.asarray(list(values), dtype=object)[np.asarray(codes)]


def _leaf_rows(
    t: int, tree: Tree, publishes: frozenset[str], table: pd.DataFrame, people: pd.DataFrame, weights: np.ndarray,
) -> pd.DataFrame:
    """The leaves of tree ``t`` with what they publish (a label, or a boosting round's leaf value;
    the training size) and the audited records that land there (see :meth:`Audit.leaves`)."""
    leaves = tree.leaves()
    ids = np.array([leaf.id for leaf in leaves], dtype=np.intp)
    out = pd.DataFrame({"tree": t, "leaf": ids})
    if "labels" in publishes:
        out["label"] = [tree.classes[leaf.label] for leaf in leaves]
    if "leaf-values" in publishes:
        out["value"] = [leaf.value for leaf in leaves]
    out["samples"] = [leaf.n_samples for leaf in leaves]
    landing = tree.apply(table)
    position = np.full(max(n.id for n in tree.nodes) + 1, -1, dtype=np.intp)
    position[ids] = np.arange(len(ids))
    at = position[landing]

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(at, weights=weights * mask, minlength=len(ids))

    out["records"] = count(np.ones(len(people), dtype=bool))
    for column in ("certain", "proved_certain"):
        if column in people:
            out[column] = count(people[column].to_numpy(bool))
    if "certain" in people and "truth" in people:
        out["exposed"] = count(people["certain"].to_numpy(bool) & (people["guess"] == people["truth"]).to_numpy())
    return out
