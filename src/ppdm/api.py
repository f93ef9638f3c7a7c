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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult, result_json
from ppdm.attacks.core.target import Target, default_target, parse_target
from ppdm.attacks.core.threat import ThreatModel, load_threat
from ppdm.attacks.membership.audit import MembershipResult
from ppdm.defend.search import defend  # the function itself, so that help() and inspect.signature show it
from ppdm.errors import ReportError
from ppdm.files import ReadFiles, recording_reads, write_atomic
from ppdm.pipeline.checks import options_of
from ppdm.pipeline.findings import Findings
from ppdm.pipeline.options import AuditOptions, Missing
from ppdm.pipeline.phases import hearing, with_progress
from ppdm.pipeline.run import run
from ppdm.progress import Progress
from ppdm.report import words
from ppdm.rules.ruleset import RuleSet
from ppdm.tree.estimator import from_estimator
from ppdm.tree.forest import Forest
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
        from ppdm.attacks.core.target import Certain, Target
        from ppdm.report.membership import membership_summary, membership_target, membership_verdict
        from ppdm.report.verdict import target_line

        if self.membership is not None and not self.results:
            return [membership_verdict(membership_summary(self.membership, membership_target(self.target)), self.target)["lines"][-1]]
        out = []
        if self.estimate is not None:
            out.append(f"estimate: {target_line(self.estimate.summary(self.thresholds()), self.target)[1]}")
        if self.proved is not None:
            # beside an estimate the proof judges what it measures, certainty (its people are held at 0 or 1:
            # read as confidence, they said "met" where the estimate holds 36 % at 0.9)
            certain = tuple(m for m in self.target.measures if isinstance(m, Certain))
            judged = self.target if self.estimate is None else Target(certain) if certain else None
            if judged is not None:
                said = "exact audit" if judged is self.target else "exact audit (what it proves: certainty)"
                out.append(f"{said}: {target_line(self.proved.summary(self.thresholds()), judged)[1]}")
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
        """Write :meth:`to_dict` as JSON, whole or not at all (never over a file the audit read,
        nor to a name ending ``.html``: :meth:`report` writes the page)."""
        _check_json_path(path)
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
        """Write :meth:`to_dict` as JSON, whole or not at all (never over a file the audit read,
        nor to a name ending ``.html``: :meth:`report` writes the page)."""
        _check_json_path(path)
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




@with_progress
def audit(
    model: Model | str | Path | Any,
    data: pd.DataFrame | str | Path | Any = None,
    threat: ThreatModel | dict[str, Any] | str | Path | None = None,
    *,
    membership: pd.DataFrame | str | Path | None = None,
    member_column: str | None = "member",
    member_ids: Any = None,
    id_column: str | None = None,
    non_members: str | Sequence[bool] | np.ndarray | None = None,
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

    ``options``: how the audit runs (:class:`~ppdm.pipeline.options.AuditOptions`: the estimate
    and the exact proof, the estimate's ``method`` and what it reads, missing values, the time
    budgets and the nested solver options, each default documented there); ``estimate``,
    ``exact``, ``labels``, ``internal``, ``missing``, ``time_limit``, ``exact_time_limit``,
    ``exact_detail``, ``policy`` and ``blackbox`` are its fields, and each given here other than its default overrides it (past a forest's
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

    ``membership``: a population of candidates (every model input; the class with ``class_known``):
    their membership audit (:func:`~ppdm.attacks.membership.audit.membership_attack`; ``model`` may be a
    rule set) in ``Audit.membership``. Its truth: the boolean ``member_column``, or ``member_ids``
    matched against ``id_column``; ``non_members``: who the attacker knows was no training record
    (a true/false column or one boolean per candidate; left out of the rates). A fitted classifier or a
    model file also meets the black-box attacks, the strongest reported (:func:`~ppdm.attacks.membership.audit.with_blackbox`;
    ``blackbox``: their :class:`~ppdm.attacks.membership.blackbox.BlackboxOptions`, ``False``, or predicted probabilities per candidate).

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

    how = options_of(options).with_keywords(
        estimate=estimate, exact=exact, labels=labels, internal=internal, missing=missing, time_limit=time_limit,
        exact_time_limit=exact_time_limit, exact_detail=exact_detail, policy=policy, blackbox=blackbox,
    )  # fmt: skip
    with recording_reads() as read:
        target, rules = with_policy(how.policy, target, membership is not None)
        found = run(
            model, data, threat, how, hearing(progress, solver_progress, exact_progress), membership=membership, member_column=member_column,
            member_ids=member_ids, id_column=id_column, non_members=non_members, class_known=class_known, class_attribute=class_attribute, sample=sample, trees=trees,
            reference=reference, holdout=holdout, client=client, tolerance=tolerance, domain=domain, target=target,
        )  # fmt: skip
    done = _targeted(_viewed(found), target)
    read.update(ReadFiles(v for v in (model, data, threat, membership, member_ids, reference, holdout, how.blackbox) if isinstance(v, (str, Path))))
    done.read = read
    return cite_policy(done, rules)


def _check_json_path(path: str | Path) -> None:
    """Refuse to save an audit's JSON under a page's name (``audit.html``: the report's)."""
    if Path(path).suffix.lower() in (".html", ".htm"):
        raise ReportError(f"{path}: the audit is saved as JSON and the page is the report's; name it .json (audit.report() writes the page)")


def _viewed(found: Findings) -> Audit | RegressionAudit:
    """The pipeline's findings with the views, outputs and report of their kind."""
    if found.intervals is not None:
        return RegressionAudit(found.model, found.threat, found.intervals, found.table, found.dropped_rows, sources=found.sources)
    return Audit(
        found.model, found.threat, found.estimate, found.proved, found.table, found.weights, found.dropped_rows, found.reference, found.membership,
        sources=found.sources,
    )


def _targeted(done: Audit | RegressionAudit, target: Target | str | None) -> Audit | RegressionAudit:
    """``done`` with the target it is judged against (the default one when ``target`` is ``None``)."""
    chosen = parse_target(target) if isinstance(target, str) else target
    done.target = chosen if chosen is not None else default_target(done.membership is not None and not done.results if isinstance(done, Audit) else False)
    done.target_given = chosen is not None
    return done


# -- inputs --------------------------------------------------------------------------------------
def _frontier(frontier: Any) -> Any:
    """A defense search's frontier: as given, or read from its JSON file (``ppdm defend --frontier``)."""
    if isinstance(frontier, (str, Path)):
        from ppdm.report.load import load_frontier

        return load_frontier(frontier)
    if hasattr(frontier, "frontier_records"):  # a DefenseResult
        return frontier.frontier_records()
    return frontier


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
