"""The defense search: the most accurate model to publish that meets a privacy target.

Given a model (or the training data to learn one), a threat model and a target
(:mod:`ppdm.attacks.core.target`), :func:`defend` builds the candidates (:mod:`ppdm.defend.candidates`:
pruning Methods 1 and 2 of paper 003 §4.1, retraining with limits, kADET of paper 002, publishing
less, an ε-DP tree as the baseline), audits each under the *same* threat model
(:mod:`ppdm.defend.audits`), measures its accuracy, and returns the most accurate candidate that
meets the target together with every candidate's accuracy and risk: the accuracy–privacy frontier.

The search stops once ``time_budget`` seconds have passed: no candidate starts after it, and the
one under way is stopped (:mod:`ppdm.defend.deadline`); those it did not reach or finish are in
the frontier as ``unfinished``, never dropped. A candidate whose training or audit fails is kept
too, with the one-line reason. Families are taken in turn (one candidate of each, then the next
of each), so a budget cuts each family short alike; the input model is audited first. A forest's
candidates (:mod:`ppdm.defend.forest_candidates`) are taken cheapest to audit first instead.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from ppdm.attacks.baselines.likelihood import applies
from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.target import DEFAULT_TARGET, Evidence, Target, parse_target
from ppdm.attacks.core.threat import ThreatModel, check_varies, text_columns
from ppdm.defaults import DEFENSE_SECONDS
from ppdm.defend.audits import (
    DEFAULT_AUDITORS,
    Auditor,
    Model,
    audit_until,
    cheap_first,
    reported_attacker,
    spans_of,
)
from ppdm.defend.candidates import (
    FAMILIES,
    Candidate,
    Grids,
    Learner,
    boosted_kind,
    check_families,
    dp_candidates,
    interleave,
    kadet_candidates,
    learner_for,
    pruning_candidates,
    publish_less_candidates,
    retrain_candidates,
)
from ppdm.defend.deadline import OutOfTime, stop_at
from ppdm.defend.forest_candidates import (
    audit_cost,
    black_box_candidates,
    dp_forest_candidates,
    forest_retrain_candidates,
    min_leaf_of,
    retrain_cost,
)
from ppdm.defend.membership import MembershipPopulation, membership_evidence, membership_population
from ppdm.errors import ArgumentTypeError, DataError, ModelImportError, PpdmError, advising, shown
from ppdm.files import write_atomic
from ppdm.learn.estimators import C45Classifier, ID3Classifier
from ppdm.progress import Progress, Step, resolve
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest, as_forest, is_model
from ppdm.tree.forest_check import verify_counts
from ppdm.tree.model import Tree
from ppdm.tree.sklearn import tree_from_sklearn
from ppdm.tree.sklearn_forest import GROWTH, forest_from_sklearn

__all__ = ["DEFAULT_TARGET", "DefenseResult", "defend"]

UNFINISHED = "unfinished (time budget)"


@dataclass
class DefenseResult:
    """What :func:`defend` found.

    ``chosen``: the most accurate candidate meeting the target, as published (a :class:`Tree`, or a
    :class:`Forest` when a forest was defended; ``None`` if none does); ``frontier``: one row per
    candidate (label, family, params, accuracy, risk = the value of the measure ``risk``,
    meets_target, one column per measure of the target, status, seconds, leaves, partial = the
    audits stopped once the target was missed, so the measures are lower bounds, pareto = on the
    accuracy–risk frontier); ``accuracy_on``: the rows ``accuracy`` was measured on: ``"held-out"``
    (the split the search held out, :attr:`held_out`), ``"test"`` (the rows given as ``test``) or
    ``"training"`` (``test_size=0``: the rows every candidate was fitted on, which flatters a model
    that memorises them). ``held_out``: the split (rows, share, seed, whether stratified), or
    ``None``; ``train``: the rows every candidate was fitted and audited on (the training part
    when a split was held out: audit what you publish on these).
    """

    chosen: Tree | Forest | None
    chosen_label: str | None
    frontier: pd.DataFrame
    target: Target
    risk: str
    threat: ThreatModel
    accuracy_on: str
    seconds: float
    time_budget: float | None
    held_out: dict[str, Any] | None = None
    train: pd.DataFrame | None = None

    def __repr__(self) -> str:
        """One line: the target, the candidates and the one chosen, not the frontier's rows or
        the training table (:attr:`frontier`, :attr:`train` hold them)."""
        met = int(self.frontier["meets_target"].fillna(False).astype(bool).sum()) if "meets_target" in self.frontier else 0
        chosen = "none meets it" if self.chosen_label is None else f"chosen {self.chosen_label!r}"
        row = self.chosen_row()
        accuracy = "" if row is None or not isinstance(row.get("accuracy"), float) else f" (accuracy {row['accuracy']:.3f} on {self.accuracy_on} rows)"
        return f"<DefenseResult for {self.target.to_text()!r}: {len(self.frontier):,} candidates, {met:,} meet the target; {chosen}{accuracy}; {self.seconds:.0f} s>"

    def _repr_html_(self) -> str:
        """What a notebook shows: the chosen model (or that none meets the target) beside the model
        as given, its facts, and how many candidates met the target; audit the chosen model
        (``ppdm.audit(result.chosen, result.train, ...)``) for its report's cards."""
        from html import escape

        row, first = self.chosen_row(), self.unprotected
        level, badge = ("meets", "target met") if row is not None else ("fails", "no candidate meets the target")
        lines = [f"target: {self.target.to_text()}", f"{len(self.frontier):,} candidates tried in {self.seconds:.0f} s"]
        lines.append(f"the model as given ({first['label']}): accuracy {_accuracy_text(first)} on {self.accuracy_on} rows, meets the target: {_yes_text(first.get('meets_target'))}")
        if row is not None:
            lines.append(f"chosen: {row['label']} ({row['family']}), accuracy {_accuracy_text(row)}")
        if self.unfinished:
            lines.append(f"{len(self.unfinished):,} candidates unfinished at the time budget")
        items = "".join(f"<li>{escape(line)}</li>" for line in lines)
        head = "release the chosen model" if row is not None else "keep the model unpublished or change the target"
        return (
            f'<div style="border:1px solid #e5e7eb;border-left:6px solid {"#15803d" if row is not None else "#b91c1c"};border-radius:6px;padding:10px 16px" '
            f'data-verdict="{level}"><strong>{escape(badge)}</strong>: {escape(head)}<ul>{items}</ul></div>'
        )

    @property
    def unfinished(self) -> list[str]:
        return self.frontier.loc[self.frontier["status"] == UNFINISHED, "label"].tolist()

    @property
    def unprotected(self) -> pd.Series:
        return self.frontier.iloc[0]

    def chosen_row(self) -> pd.Series | None:
        if self.chosen_label is None:
            return None
        return self.frontier.loc[self.frontier["label"] == self.chosen_label].iloc[0]

    def frontier_records(self) -> list[dict[str, Any]]:
        """The frontier as JSON-ready records: ``label``, ``accuracy``, ``risk``, ``meets_target``
        first (what a frontier plot reads), then family, params, status, pareto, every measure of
        the target, ``chosen``, ``risk_measure`` (the measure ``risk`` holds) and ``accuracy_on``
        (``"held-out"``, ``"test"`` or ``"training"``: the rows ``accuracy`` was measured on), ``target``
        (the text of the target searched for) and ``held_out`` (the split, or ``null``); missing
        values as ``null``."""
        records = []
        for row in self.frontier.to_dict("records"):
            record = {k: _plain(row[k]) for k in ("label", "accuracy", "risk", "meets_target")}
            record.update({k: _plain(v) for k, v in row.items() if k not in record})
            record["params"] = json.loads(row["params"])
            record["chosen"] = row["label"] == self.chosen_label
            record["risk_measure"] = self.risk
            record["accuracy_on"] = self.accuracy_on
            record["target"] = self.target.to_text()
            record["held_out"] = self.held_out
            records.append(record)
        return records

    def save_frontier(self, path: str | Path) -> None:
        """Write :meth:`frontier_records` as a JSON list."""
        write_atomic(path, json.dumps(self.frontier_records(), indent=1, ensure_ascii=False) + "\n")


def _accuracy_text(row: pd.Series) -> str:
    value = row.get("accuracy")
    return "not measured" if value is None or value != value else f"{float(value):.3f}"


def _yes_text(value: Any) -> str:
    return "not measured" if value is None or value != value else ("yes" if bool(value) else "no")


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def defend(
    model: Any = None,
    /,
    data: pd.DataFrame | None = None,
    threat: ThreatModel | None = None,
    target: Target | str = DEFAULT_TARGET,
    *,
    class_attribute: str | None = None,
    learner: Learner | Any | None = None,
    test: pd.DataFrame | None = None,
    test_size: float = 0.25,
    families: Sequence[str] = FAMILIES,
    grids: Grids | None = None,
    hierarchies: Mapping[str, Any] | None = None,
    auditors: Sequence[Auditor] = DEFAULT_AUDITORS,
    risk: str | None = None,
    time_budget: float | None = DEFENSE_SECONDS,
    random_state: int | None = 0,
    progress: bool | Progress | None = None,
    membership: pd.DataFrame | None = None,
    reference: pd.DataFrame | None = None,
    split: dict[str, Any] | None = None,
    **legacy: Any,
) -> DefenseResult:
    """Search the candidates for the most accurate model meeting ``target`` under ``threat``.

    Called model first, as every audit: ``defend(model, data, threat, target)`` (the older
    ``defend(data, threat, target, model=...)`` still works, with a :class:`DeprecationWarning`).
    The model may be a forest (a ppdm :class:`~ppdm.tree.forest.Forest`, or a fitted scikit-learn
    random forest, extra trees or boosted model): the candidates are then forests
    (:mod:`ppdm.defend.forest_candidates`), audited with every tree's leaves at once, cheapest first.

    ``data``: the training records, with the class and the sensitive column (the audits measure
    each person's exposure against their true value); for a bootstrap forest, in the order it was
    fitted on (its counts count them with the multiplicities each tree drew).
    ``model``: the model to defend: a ppdm :class:`~ppdm.tree.Tree`, a fitted ppdm estimator or
    scikit-learn ``DecisionTreeClassifier`` (fitted on ``data``'s columns, one-hot ``column_value`` or ordinal codes); ``None`` trains one
    on ``data`` with ``learner`` (default: ID3 when every column is categorical, else C4.5) and
    ``class_attribute``. ``learner``: how ``retrain`` candidates are trained (default: the
    model's own learner). ``threat``: the attacker (default: :class:`ThreatModel` defaults, paper
    000's); its ``publish`` caps what every candidate publishes (default: what the model holds).
    ``target``: a :class:`Target` or its text (:func:`~ppdm.attacks.core.target.parse_target`).
    ``test``: rows to measure accuracy on. Without it, a stratified share ``test_size`` of ``data``
    (seeded by ``random_state``; :func:`held_out_split`) is held out for accuracy and every
    candidate is fitted and audited on the rest: the model to publish is trained on the training
    part, and its audit is over those rows (``DefenseResult.train``). A given ``model`` (fitted on
    all of ``data``) is then fitted again on the training part with its learner (a scikit-learn
    estimator's own settings; a model file's algorithm and criterion, a forest's kind, trees and
    bootstrap: what the file records), so that its held-out accuracy is one: give ``test`` to keep
    the model as it is. ``test_size=0`` holds nothing out and measures accuracy on the training
    rows, labelled so (``accuracy_on``). ``split``: when the caller held ``test`` out of its data
    itself (:func:`held_out_split`, e.g. to train the model on the training part), the statement
    of that split, reported as the search's own (``accuracy_on="held-out"``).
    ``families``, ``grids``: which candidates (:mod:`ppdm.defend.candidates`); ``hierarchies``: for
    kADET. ``auditors``: the audits run on every candidate. ``risk``: the target measure on the
    frontier's risk axis (default: its first).
    ``time_budget``: seconds after which no candidate starts and the one under way stops (``None``: no limit).
    ``progress``: the candidates audited, the one under way and the time spent: by default a bar
    on standard error when it is a terminal, else lines there after a couple of seconds
    (:class:`~ppdm.progress.Printer`); ``True``: the bar; ``False``: silent; or any
    ``Callable[[Step], None]``.
    ``membership``: people who were not training records (with the model's inputs and class),
    for a target with membership measures (``members_proved=0,mia_tpr@1%<=0.02``): every
    candidate's membership audit runs over the training rows (members) and these (non-members)
    (:mod:`ppdm.defend.membership`); a target of membership measures only runs no other audit.
    """
    start = time.monotonic()
    model, data, threat, target = _model_first(model, data, threat, target, legacy)
    data = _check_data(data)
    target, risk_name, families = _checked_arguments(data, threat, target, risk, families, time_budget, model, class_attribute, test_size)
    data, test, held_out, tree, learner = _split_and_model(model, data, test, split, test_size, class_attribute, learner, random_state)
    threat = _resolved_threat(threat, data, tree)
    level = threat.publish or tree.disclosure
    audit_threat = replace(threat, publish=None)
    wanted = {*tree.attributes, *learner.columns(data)}
    features = [c for c in data.columns if c in wanted]
    X, y = data[features], data[tree.class_attribute]
    population = _population(target, membership, data, [*features, tree.class_attribute])
    reference_of = _reference(target, reference)
    refitted = held_out is not None and held_out["refitted"]
    name = "unprotected (input model, fitted again on the training part)" if refitted else "unprotected (input model)"
    forest = isinstance(tree, Forest)  # the one place the search tells a forest from a tree: other candidates, cheapest first
    found = _forest_candidates(families, grids or Grids.full(), tree, learner, X, y, level, random_state, threat) if forest else (
        _candidates(families, grids or Grids.full(), tree, learner, X, y, level, threat, hierarchies, random_state))  # fmt: skip
    candidates = [Candidate(name, "unprotected", {}, lambda: tree), *found]
    accuracy = _accuracy(test if test is not None else data, tree.class_attribute, features)
    deadline = None if time_budget is None else start + float(time_budget)
    audit = partial(
        _evaluate, level=level, data=data, threat=audit_threat, target=target, auditors=cheap_first(auditors) if forest else auditors,
        accuracy=accuracy, risk=risk_name, stop_when_missed=forest, population=population, reference_of=reference_of,
    )
    rows, trees = _run(candidates, audit, deadline, progress, time_budget, _order(candidates, tree, level, learner) if forest else range(len(candidates)))
    if "accuracy" not in rows[0]:  # the input model's audit was not reached: its accuracy is still known
        with contextlib.suppress(PpdmError):
            rows[0].update(_measured(tree.published(level), accuracy))
    frontier = _frontier(rows, target, risk_name)
    chosen_label = _choose(frontier, target.measure(risk_name).higher_is_riskier)
    chosen = trees.get(chosen_label) if chosen_label is not None else None
    on = "held-out" if held_out is not None else "test" if test is not None else "training"
    return DefenseResult(chosen, chosen_label, frontier, target, risk_name, threat, on, time.monotonic() - start, time_budget, held_out, data)


def _checked_arguments(
    data: pd.DataFrame, threat: Any, target: Any, risk: str | None, families: Sequence[str], time_budget: float | None, model: Any,
    class_attribute: str | None, test_size: Any,
) -> tuple[Target, str, tuple[str, ...]]:
    """:func:`defend`'s arguments checked: the target parsed, the measure on the risk axis named, the families known."""
    if not isinstance(target, (Target, str)):
        raise ArgumentTypeError(
            f"target must be a Target or its text (such as 'certain=0,confident=5%@0.9'), got {shown(target, 60)} ({type(target).__name__}): "
            "defend(model, data, threat, target)"
        )
    if threat is not None and not isinstance(threat, ThreatModel):
        raise ArgumentTypeError(f"threat must be a ThreatModel, got {shown(threat, 60)} ({type(threat).__name__})")
    target = parse_target(target) if isinstance(target, str) else target
    risk_name = target.measure(risk).name if risk is not None else target.measures[0].name
    known = check_families(list(families))
    if time_budget is not None and not time_budget > 0:
        raise PpdmError(f"time_budget must be positive seconds or None, got {time_budget!r}")
    if model is None and class_attribute is not None:
        check_varies(data, class_attribute, "class", "there is nothing to learn")
    if not (isinstance(test_size, (int, float)) and 0 <= test_size < 1):
        raise PpdmError(f"test_size must be a share in [0, 1), got {test_size!r}")
    return target, risk_name, known


def _split_and_model(
    model: Any, data: pd.DataFrame, test: pd.DataFrame | None, split: dict[str, Any] | None, test_size: float, class_attribute: str | None,
    learner: Any, random_state: int | None,
) -> tuple[pd.DataFrame, pd.DataFrame | None, dict[str, Any] | None, Any, Learner]:
    """The training part, the rows accuracy is measured on, the split's statement, the model to
    defend and its learner: a given model fitted again on the training part when ``test_size`` holds rows out."""
    held_out = dict(split) if split is not None and test is not None else None
    if test is None and test_size > 0 and model is None and class_attribute is not None and class_attribute in data.columns:
        data, test, held_out = held_out_split(data, class_attribute, test_size, random_state)
    tree, learner = _model(model, data, class_attribute, learner)
    if test is None and test_size > 0 and held_out is None:  # a given model: fitted again on the training part
        data, test, held_out = held_out_split(data, tree.class_attribute, test_size, random_state)
        tree = _refit(tree, learner, data)
        held_out["refitted"] = True
    return data, test, held_out, tree, learner


def _resolved_threat(threat: ThreatModel | None, data: pd.DataFrame, model: Tree | Forest) -> ThreatModel:
    """The search's attacker, resolved once against the training rows; its sensitive column there and varying."""
    resolved = (threat or ThreatModel()).resolve(data, model.class_attribute, splits=model.split_attributes)
    if resolved.sensitive not in data.columns:
        raise DataError(f"the sensitive column {resolved.sensitive!r} is not in the data: the search measures exposure against it")
    check_varies(data, str(resolved.sensitive), "sensitive", "there is nothing to infer, with or without a model")
    return resolved


def held_out_split(data: pd.DataFrame, class_column: str, share: float, random_state: int | None) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """``data`` split into a training part and a held-out part of ``share`` of its rows, stratified
    by ``class_column`` (each class held out in proportion) and seeded; both keep ``data``'s row
    order. Stratification needs every class twice and a held-out part holding one of each: when
    it cannot be had, the split is a plain seeded one, and says so (``stratified``)."""
    from sklearn.model_selection import train_test_split

    if class_column not in data.columns:
        raise DataError(f"the class column {class_column!r} is not in the data")
    n = len(data)
    n_test = int(math.ceil(share * n))
    if n_test < 1 or n - n_test < 1:
        raise DataError(f"holding out {share:.0%} of {n:,} rows leaves no row on one side: give more rows, a test table, or test_size=0")
    labels = data[class_column].astype(object).to_numpy()
    counts = pd.Series(labels).value_counts()
    stratified = bool(counts.min() >= 2 and n_test >= len(counts) and n - n_test >= len(counts))
    positions = np.arange(n)
    train_at, test_at = train_test_split(positions, test_size=n_test, random_state=random_state, stratify=labels if stratified else None)
    train_at, test_at = np.sort(train_at), np.sort(test_at)
    info = {
        "rows": int(len(test_at)), "of": n, "share": float(share), "seed": random_state, "stratified": stratified, "by": class_column,
        "training_rows": int(len(train_at)), "refitted": False,
        # the training part's most frequent class, its share of the held-out rows: the accuracy of a constant
        "majority_share": float(np.mean(labels[test_at] == pd.Series(labels[train_at]).value_counts().index[0])),
    }  # fmt: skip
    return data.iloc[train_at].reset_index(drop=True), data.iloc[test_at].reset_index(drop=True), info


def _refit(model: Model, learner: Learner, data: pd.DataFrame) -> Model:
    """The given model's learner fitted on ``data`` (the training part): what the model would be
    had it been trained without the held-out rows."""
    wanted = {*model.attributes, *learner.columns(data)}
    X, y = data[[c for c in data.columns if c in wanted]], data[model.class_attribute]
    try:
        refitted = learner.fit(X, y)
    except (PpdmError, ValueError) as exc:
        raise PpdmError(
            f"fitting the input model's learner again on the {len(data):,} training rows failed ({exc}): give test= (rows to measure "
            "accuracy on) to keep the model as it is"
        ) from None
    return refitted.published(model.disclosure) if refitted.disclosure > model.disclosure else refitted


# -- inputs -----------------------------------------------------------------------------------
def _model_first(model: Any, data: Any, threat: Any, target: Any, legacy: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """The arguments in today's order, from either spelling (the data-first one warns)."""
    if isinstance(model, pd.DataFrame) or "model" in legacy:
        warnings.warn(
            "defend(data, threat, target, model=...) is deprecated: call defend(model, data, threat, target)",
            DeprecationWarning, stacklevel=3,
        )
        if isinstance(model, pd.DataFrame) and data is not None:  # defend(data, threat[, target], ...)
            model, data, threat, target = legacy.pop("model", None), model, data, threat if threat is not None else target
        elif isinstance(model, pd.DataFrame):  # defend(data, threat=..., target=..., ...)
            model, data = legacy.pop("model", None), model
        else:
            model = legacy.pop("model")
    if legacy:
        raise TypeError(f"defend() got an unexpected keyword argument {next(iter(legacy))!r}")
    return model, data, threat, target


def _population(target: Target, membership: Any, data: pd.DataFrame, columns: list[str]) -> MembershipPopulation | None:
    """The membership audits' population, when the target has a membership measure (refused
    without ``membership``, and ``membership`` without such a measure)."""
    if target.needs_membership and membership is None:
        named = next(m.name for m in target.measures if m.needs_membership)
        raise PpdmError(
            f"the target's {named} is a membership measure: give membership= (people who were not training records, "
            "with the model's inputs and class; ppdm defend --membership --population P.csv)"
        )
    if membership is None:
        return None
    if not target.needs_membership:
        raise PpdmError("membership= is read by membership measures only: add members_proved=N or mia_tpr@F<=X to the target")
    return membership_population(data, membership, list(dict.fromkeys(columns)))


def _reference(target: Target, reference: Any) -> Callable[[AttackResult], AttackResult] | None:
    """The model-free attacker fitted on ``reference`` (once, over the first audit's people), when
    the target has ``lift_over_reference`` (refused without ``reference``, and ``reference``
    without that measure)."""
    if target.needs_reference and reference is None:
        raise PpdmError(
            "the target's lift_over_reference compares with a model-free attacker: give reference= (people of the same "
            "population who are not targets; ppdm defend --reference sample.csv)"
        )
    if reference is None:
        return None
    if not target.needs_reference:
        raise PpdmError("reference= is read by lift_over_reference only: add lift_over_reference<=X to the target")
    if not isinstance(reference, pd.DataFrame):
        raise DataError(f"reference= must be a DataFrame of people of the same population, got {type(reference).__name__}")
    cache: dict[str, AttackResult] = {}

    def fitted(template: AttackResult) -> AttackResult:
        if "imputed" not in cache:
            from ppdm.attacks.baselines.reference import imputation_attack

            cache["imputed"] = imputation_attack(template, template.groups.table.iloc[template.groups.group_of_record].reset_index(drop=True), reference)
        return cache["imputed"]

    return fitted


def _lift(results: Sequence[AttackResult], imputed: AttackResult) -> float:
    """The strongest attacker's accuracy (the audits', and each pooled with or restricting the
    model-free one: :func:`~ppdm.attacks.baselines.portfolio.strongest_attacker`) minus the stronger of the
    model-free attacker's and the prior's."""
    from ppdm.attacks.baselines.portfolio import strongest_attacker

    def accuracy(r: AttackResult) -> float:
        return float(r.summary().get("attacker_accuracy") or 0.0)

    best = max(accuracy(r) for r in results)
    both = accuracy(strongest_attacker(results[0], [imputed], [imputed]))
    baseline = max(accuracy(imputed), float(results[0].summary()["baseline"]["accuracy"]))
    return max(best, both) - baseline


def _check_data(data: Any) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame of the training records (got {type(data).__name__})")
    if len(data) == 0:
        raise DataError("data has no rows")
    return text_columns(data)


def _model(model: Any, data: pd.DataFrame, class_attribute: str | None, learner: Any) -> tuple[Model, Learner]:
    """The tree (or forest) to defend and the learner that trains its variants."""
    given = learner if isinstance(learner, Learner) or learner is None else Learner(learner)
    if model is None:
        if class_attribute is None:
            raise PpdmError("give a model, or class_attribute to train one on the data")
        if class_attribute not in data.columns:
            raise DataError(f"the class column {class_attribute!r} is not in the data")
        X = data.drop(columns=[class_attribute])
        numeric = any(pd.api.types.is_numeric_dtype(X[c]) and not isinstance(X[c].dtype, pd.CategoricalDtype) for c in X.columns)
        chosen = given or Learner(C45Classifier() if numeric else ID3Classifier())
        return chosen.fit_tree(X, data[class_attribute]), chosen
    if isinstance(model, Tree):
        _check_tree_rows(model, data)
        return model, given or learner_for(model)
    if is_model(model) or hasattr(model, "estimators_") or hasattr(model, "n_estimators"):  # a ppdm tree went above
        return _forest(model, data, class_attribute, given)
    if isinstance(getattr(model, "tree_", None), Tree):
        tree = model.tree_
        if class_attribute is not None:
            tree.class_attribute = class_attribute
        return tree, given or Learner(clone(model))
    if hasattr(model, "tree_") and hasattr(model, "classes_"):  # scikit-learn
        y = data[class_attribute] if class_attribute in data.columns else None
        tree = tree_from_sklearn(model, data, y=y, class_attribute=class_attribute)
        return tree, given or Learner(clone(model), list(getattr(model, "feature_names_in_", [])) or None)
    raise PpdmError(f"cannot defend a {type(model).__name__}: give a ppdm Tree, a fitted ppdm or scikit-learn tree, or None")


def _check_tree_rows(tree: Tree, data: pd.DataFrame) -> None:
    """``data`` must be the tree's training rows (as for a forest, and as an audit asks): every
    candidate is audited and retrained on them, and another table's counts would not be the tree's."""
    expected = tree.n_training_records
    if expected is not None and abs(expected - len(data)) > 1e-6 * max(expected, 1.0):
        raise DataError(
            f"the tree was trained on {expected:,.0f} rows, the data has {len(data):,}: give the rows it was trained on "
            "(ppdm train --train-out writes them)"
        )


def _forest(model: Any, data: pd.DataFrame, class_attribute: str | None, given: Learner | None) -> tuple[Forest, Learner]:
    """The forest to defend (checked against ``data``, its training rows) and the estimator that retrains it:
    the user's own (a fitted scikit-learn forest), else one of the forest's kind with its number of
    trees and bootstrap setting (all a ``ppdm-forest`` file records of the training parameters)."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    kinds = {"sklearn-random-forest": RandomForestClassifier, "sklearn-extra-trees": ExtraTreesClassifier}
    if not is_model(model):
        if not isinstance(model, (RandomForestClassifier, ExtraTreesClassifier)) and boosted_kind(model) is None:
            raise PpdmError(
                f"cannot defend a {type(model).__name__}: the forests the search retrains are scikit-learn random forests and extra "
                "trees and boosted models (XGBoost, LightGBM, scikit-learn's gradient boosting)"
            )
        y = data[class_attribute] if class_attribute in data.columns else None
        if boosted_kind(model) is not None:
            from ppdm.tree.estimator import from_estimator

            forest = as_forest(from_estimator(model, data, y, class_attribute=class_attribute, verify=False))
        else:
            forest = forest_from_sklearn(model, data, y=y, class_attribute=class_attribute, verify=False)
        given = given or Learner(clone(model), list(getattr(model, "feature_names_in_", [])) or None)
    else:
        forest = as_forest(model)
    if given is None and forest.algorithm not in kinds and boosted_learner(forest) is None:
        raise advising(
            PpdmError(
                f"cannot defend a {forest.algorithm or 'forest of unknown origin'} forest: the search retrains scikit-learn "
                "random forests and extra trees, XGBoost, LightGBM and scikit-learn boosted models (or give learner=)"
            ),
            " (or give learner=)", "learner",
        )
    _check_training_rows(forest, data)
    if given is not None:
        return forest, given
    boosted = boosted_learner(forest)
    if boosted is not None:
        return forest, boosted
    bootstrap = bool(forest.params.get("bootstrap", forest.algorithm == "sklearn-random-forest"))
    grown = {k: v for k, v in forest.params.items() if k in GROWTH}  # the settings the forest was grown with, when its file kept them
    return forest, Learner(kinds[str(forest.algorithm)](n_estimators=forest.n_trees, bootstrap=bootstrap, random_state=0, **grown))


def boosted_learner(forest: Forest) -> Learner | None:
    """An estimator that trains ``forest``'s kind of boosted model again, with the settings its
    file records (rounds, depth, learning rate, regularization); ``None`` for another kind.
    The search changes rounds, depth and the minimum leaf only, so settings the file does not
    record are the library's defaults in every candidate and in none of the input's counts."""
    if forest.combine != "additive":
        return None
    rounds = forest.n_trees // forest.n_outputs
    p, depth = forest.params, forest.depth
    try:
        if forest.algorithm == "xgboost":
            from xgboost import XGBClassifier

            keep = {k: p[k] for k in ("learning_rate", "reg_lambda", "reg_alpha", "max_delta_step", "subsample") if k in p}
            return Learner(XGBClassifier(n_estimators=rounds, max_depth=depth, random_state=0, n_jobs=1, **keep))
        if forest.algorithm == "lightgbm":
            from lightgbm import LGBMClassifier

            rate = p.get("learning_rate")
            keep = {"learning_rate": rate} if isinstance(rate, float) and rate == rate else {}
            return Learner(LGBMClassifier(n_estimators=rounds, max_depth=depth, num_leaves=max(2, 2**depth), random_state=0, n_jobs=1, verbose=-1, **keep))
    except ImportError:
        return None
    if forest.algorithm == "sklearn-gradient-boosting":
        from sklearn.ensemble import GradientBoostingClassifier

        keep = {k: p[k] for k in ("learning_rate", "subsample") if k in p}
        return Learner(GradientBoostingClassifier(n_estimators=rounds, max_depth=depth, random_state=0, **keep))
    if forest.algorithm == "sklearn-hist-gradient-boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        keep = {k: p[k] for k in ("learning_rate", "l2_regularization") if k in p}
        return Learner(HistGradientBoostingClassifier(max_iter=rounds, max_depth=depth, early_stopping=False, random_state=0, **keep))
    return None


def _check_training_rows(forest: Forest, data: pd.DataFrame) -> None:
    """``data`` must be the forest's training rows in fitting order: its counts are theirs, with multiplicities."""
    if forest.class_attribute not in data.columns:
        raise DataError(f"the forest's class column {forest.class_attribute!r} is not in the data")
    if forest.n_records is not None and forest.n_records != len(data):
        raise DataError(
            f"the forest was trained on {forest.n_records:,} rows, the data has {len(data):,}: "
            "give the rows it was trained on, in the order it was fitted on"
        )
    labels = data[forest.class_attribute].astype(object).to_numpy()
    try:
        verify_counts(forest, data, pd.Index(forest.classes, dtype=object).get_indexer(labels))
    except ModelImportError as exc:
        raise DataError(f"the data is not the forest's training table: {str(exc).removesuffix(', or verify=False')}") from None


def _candidates(
    families: Sequence[str], grids: Grids, tree: Tree, learner: Learner, X: pd.DataFrame, y: pd.Series,
    level: Disclosure, threat: ThreatModel, hierarchies: Mapping[str, Any] | None, random_state: int | None,
) -> list[Candidate]:
    """Other trees, in the order ``families`` lists them, interleaved."""
    groups: list[list[Candidate]] = []
    for family in families:
        if family == "pruning":
            groups.append(pruning_candidates(tree, grids.s, len(X)))
        elif family == "retrain":
            depths = [d for d in grids.max_depth if d < tree.depth]
            groups.append(retrain_candidates(learner, X, y, depths, grids.min_samples_leaf))
        elif family == "kadet":
            groups.append(kadet_candidates(X, y, threat.known or (), grids.k, grids.l, hierarchies=hierarchies, class_public=threat.class_known))
        elif family == "publish-less":
            groups.append(publish_less_candidates(tree, level))
        elif family == "dp":
            groups.append(dp_candidates(X, y, grids.epsilon, grids.dp_depth, random_state))
    return interleave(groups)


def _forest_candidates(
    families: Sequence[str], grids: Grids, forest: Forest, learner: Learner, X: pd.DataFrame, y: pd.Series,
    level: Disclosure, random_state: int | None, threat: ThreatModel,
) -> list[Candidate]:
    """Other forests (:mod:`ppdm.defend.forest_candidates`), cheapest to audit first: the ε-DP
    forests (no maximum-entropy audit applies to them), then the rest by the rows of their audit
    (:func:`~ppdm.defend.forest_candidates.audit_cost`); ``pruning`` and ``kadet`` give none."""
    out: list[Candidate] = []
    if "dp" in families:
        out += dp_forest_candidates(X, y, grids.epsilon, grids.dp_depth, grids.dp_trees, random_state)
    k = len(forest.classes)
    ranked: list[Candidate] = []
    if "retrain" in families and learner.is_forest:
        ranked += [
            replace(c, cost=audit_cost(retrain_cost(c.params, forest, len(X)), level, k, min_leaf_of(c.params, learner)))
            for c in forest_retrain_candidates(learner, forest, X, y, grids)
        ]
    if "publish-less" in families:
        ranked += [replace(c, cost=_input_cost(forest, _cap(level, c.publish), learner)) for c in publish_less_candidates(forest, level)]
        if forest.combine == "additive" and applies(forest, threat):
            ranked += [replace(c, cost=0.0) for c in black_box_candidates(forest, level)]  # no maximum-entropy audit: cheap
    return out + sorted(ranked, key=lambda c: c.cost)


def _input_cost(forest: Forest, level: Disclosure, learner: Learner) -> float:
    """The estimated cost of auditing the input forest published at ``level``."""
    min_leaf = min_leaf_of({}, learner) if learner.is_forest else 1
    return audit_cost(forest.n_leaves, level, len(forest.classes), min_leaf)


def _order(candidates: Sequence[Candidate], model: Forest, level: Disclosure, learner: Learner) -> list[int]:
    """The order a forest's candidates are audited in: cheapest first, the input model (often the
    dearest: its audit can take minutes) in its turn (a tree's are audited as listed)."""
    costs = [_input_cost(model, level, learner) if c.family == "unprotected" else c.cost for c in candidates]
    return sorted(range(len(candidates)), key=lambda i: costs[i])


def _cap(level: Disclosure, cap: Disclosure | None) -> Disclosure:
    return level if cap is None else min(level, cap)


def _run(
    candidates: Sequence[Candidate], audit: Callable[[Candidate], tuple[dict[str, Any], Model | None]], deadline: float | None,
    progress: bool | Progress | None, budget: float | None, order: Sequence[int],
) -> tuple[list[dict[str, Any]], dict[str, Model | None]]:
    """Every candidate's row, in the candidates' order, audited in ``order``; those not started
    before ``deadline``, or still under way at it (:func:`~ppdm.defend.deadline.stop_at`), are unfinished."""
    rows: list[dict[str, Any]] = [{} for _ in candidates]
    trees: dict[str, Model | None] = {}
    with _bar(progress, len(candidates), budget) as step:
        for i in order:
            cand = candidates[i]
            step(cand.label, 0)
            t0, done = time.monotonic(), None
            started = deadline is None or t0 <= deadline
            if started:
                try:
                    with stop_at(deadline):
                        done = audit(cand)
                except OutOfTime:
                    pass
            if done is None:
                rows[i] = _row(cand, status=UNFINISHED, **({"seconds": time.monotonic() - t0} if started else {}))
            else:
                rows[i], trees[cand.label] = done
            step(cand.label, 1)
    return rows, trees


# -- one candidate ----------------------------------------------------------------------------
def _accuracy(table: pd.DataFrame, class_attribute: str, features: list[str]) -> Callable[[Tree], float]:
    if class_attribute not in table.columns:
        raise DataError(f"the test data lacks the class column {class_attribute!r}")
    missing = [c for c in features if c not in table.columns]
    if missing:
        raise DataError(f"the test data lacks column {missing[0]!r}")
    truth = table[class_attribute].astype(object).to_numpy()

    def accuracy(tree: Model) -> float:
        return float(np.mean(tree.predict(table[features]).astype(object) == truth))

    return accuracy


def _measured(model: Model, accuracy: Callable[[Model], float]) -> dict[str, Any]:
    """What a candidate's row says without an audit: its accuracy, leaves and disclosure."""
    return {"accuracy": accuracy(model), "leaves": model.n_leaves, "publish": model.disclosure.value}


def _row(cand: Candidate, status: str, **values: Any) -> dict[str, Any]:
    return {"label": cand.label, "family": cand.family, "params": json.dumps(cand.params), "status": status, **values}


def _evaluate(
    cand: Candidate, *, level: Disclosure, data: pd.DataFrame, threat: ThreatModel, target: Target,
    auditors: Sequence[Auditor], accuracy: Callable[[Model], float], risk: str, stop_when_missed: bool = False,
    population: MembershipPopulation | None = None, reference_of: Callable[[AttackResult], AttackResult] | None = None,
) -> tuple[dict[str, Any], Model | None]:
    """The candidate's row of the frontier (audited, or failed with the reason) and its published tree.

    Its accuracy is measured before the audits: a candidate whose audits the time budget stops is
    unfinished with its accuracy. ``stop_when_missed`` (forests): once the audits run so far miss
    the target, the others are skipped; the row's measures are then lower bounds (``partial``).
    With ``population``, the membership audit runs too (:func:`~ppdm.defend.membership.membership_evidence`);
    a target of membership measures only runs no other audit.
    """
    t0 = time.monotonic()
    try:
        tree = cand.build().published(_cap(level, cand.publish))
        measured = _measured(tree, accuracy)
    except PpdmError as exc:
        return _row(cand, f"failed: {exc}", seconds=time.monotonic() - t0), None
    if cand.black_box is not None:
        measured["publish"] = f"predicted {cand.black_box}s only"
    try:
        evidence, complete = None, True
        if target.needs_attacks and cand.black_box is not None:
            results = _black_box(tree, data, threat, cand.black_box)
            evidence = Evidence.from_results(results)
        elif target.needs_attacks:
            enough = (lambda done: target.missed_by(Evidence.from_results(done))) if stop_when_missed else None
            results, complete = audit_until(tree, data, threat, auditors, cand.noisy, enough)
            strongest = reported_attacker(results, tree, data, threat)  # the attacker the chosen model's audit will report
            results = [*results, strongest] if strongest is not None else results
            spans = spans_of(tree, data, threat) if target.needs_spans else None
            evidence = Evidence.from_results(results, spans)
            if reference_of is not None:
                evidence = replace(evidence, lift=_lift(results, reference_of(results[0])))
        if population is not None:
            member = membership_evidence(tree, population, cand)
            evidence = Evidence.of_membership(member) if evidence is None else replace(evidence, membership=member, sources=(*evidence.sources, member.source))
        assert evidence is not None  # a target has a measure
        values = target.values(evidence)
    except PpdmError as exc:
        return _row(cand, f"failed: {exc}", seconds=time.monotonic() - t0), None
    except OutOfTime:
        return _row(cand, UNFINISHED, seconds=time.monotonic() - t0, **measured), None
    row = _row(
        cand, "audited", risk=values[risk], meets_target=target.meets(values), **values, **measured,
        audits="+".join(evidence.sources), partial=not complete, seconds=time.monotonic() - t0,
    )
    return row, tree


def _black_box(model: Model, data: pd.DataFrame, threat: ThreatModel, output: str) -> list[AttackResult]:
    """The attackers of a model answering queries with its ``output`` only, over the sensitive
    column's values (:func:`~ppdm.attacks.baselines.likelihood.black_box_attacks`), and the
    prior's majority guess beside them: no candidate is rated below the attacker who ignores it."""
    from ppdm.attacks.baselines.likelihood import black_box_attacks, prior_rule

    resolved = threat.resolve(data, model.class_attribute, splits=model.split_attributes)
    column = data[str(resolved.sensitive)]
    values = tuple(column.cat.categories) if isinstance(column.dtype, pd.CategoricalDtype) else tuple(sorted(pd.unique(column.dropna()), key=lambda v: (str(type(v)), v)))
    prior = prior_rule(data, resolved, values)
    return [*black_box_attacks(model, data, resolved, values, output), *([prior] if prior is not None else [])]


# -- the frontier -----------------------------------------------------------------------------
def _frontier(rows: list[dict[str, Any]], target: Target, risk: str) -> pd.DataFrame:
    columns = ["label", "family", "params", "publish", "accuracy", "risk", "meets_target", *(m.name for m in target.measures),
               "leaves", "audits", "partial", "status", "seconds"]  # fmt: skip
    frame = pd.DataFrame(rows).reindex(columns=columns)
    frame["meets_target"] = frame["meets_target"].astype("boolean").fillna(False).astype(bool)
    frame["partial"] = frame["partial"].astype("boolean").fillna(False).astype(bool)
    for c in ("accuracy", "risk", "seconds", *(m.name for m in target.measures)):
        frame[c] = frame[c].astype(float)
    frame["pareto"] = _pareto(frame, target.measure(risk).higher_is_riskier)
    return frame


def _pareto(frame: pd.DataFrame, higher_is_riskier: bool) -> np.ndarray:
    """Audited candidates no other beats on both accuracy and risk."""
    acc = frame["accuracy"].to_numpy()
    risk = frame["risk"].to_numpy() * (1 if higher_is_riskier else -1)
    done = np.isfinite(acc) & np.isfinite(risk)
    out = np.zeros(len(frame), dtype=bool)
    for i in np.flatnonzero(done):
        better = done & (acc >= acc[i]) & (risk <= risk[i]) & ((acc > acc[i]) | (risk < risk[i]))
        out[i] = not better.any()
    return out


def _choose(frame: pd.DataFrame, higher_is_riskier: bool) -> str | None:
    """The most accurate candidate meeting the target; ties to the lower risk, then the earlier."""
    ok = frame[frame["meets_target"] & frame["accuracy"].notna()]
    if ok.empty:
        return None
    sign = 1 if higher_is_riskier else -1
    order = np.lexsort((np.arange(len(ok)), sign * ok["risk"].to_numpy(), -ok["accuracy"].to_numpy()))
    return str(ok["label"].iloc[order[0]])


@contextmanager
def _bar(enabled: bool | Progress | None, total: int, budget: float | None = None) -> Iterator[Callable[[str, int], None]]:
    """``step(label, advance)`` of a rich progress bar on standard error when it is a terminal (or
    ``enabled`` is true); a reporter's steps (``enabled`` a reporter, or by default off a terminal:
    :class:`~ppdm.progress.Printer`); else a step that does nothing."""
    if enabled is False:
        yield lambda label, advance: None
        return
    if callable(enabled) or (enabled is None and not sys.stderr.isatty()):
        told, began, done = resolve(enabled), time.monotonic(), [0]

        def step(label: str, advance: int) -> None:
            done[0] += advance
            if told is not None:
                told(Step("defense search", done[0], total, "candidates audited", time.monotonic() - began, budget, f"now {label}" if not advance else f"{label} done"))

        yield step
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as RichBar

    columns = (TextColumn("defense search"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.description}"))
    with RichBar(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=total)
        yield lambda label, advance: bar.update(task, advance=advance, description=label)

