"""The defense search: the most accurate model to publish that meets a privacy target.

Given a model (or the training data to learn one), a threat model and a target
(:mod:`ppdm.defend.targets`), :func:`defend` builds the candidates (:mod:`ppdm.defend.candidates`:
pruning Methods 1 and 2 of paper 003 §4.1, retraining with limits, kADET of paper 002, publishing
less, an ε-DP tree as the baseline), audits each under the *same* threat model
(:mod:`ppdm.defend.audits`), measures its accuracy, and returns the most accurate candidate that
meets the target together with every candidate's accuracy and risk: the accuracy–privacy frontier.

The search stops starting candidates once ``time_budget`` seconds have passed (a candidate under
way finishes first); those it did not reach are in the frontier as ``unfinished``, never dropped.
A candidate whose training or audit fails is kept too, with the one-line reason. Families are
taken in turn (one candidate of each, then the next of each), so a budget cuts each family short
alike; the input model is audited first.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from ppdm.attacks.threat import ThreatModel
from ppdm.defend.audits import DEFAULT_AUDITORS, Auditor, run_audits, spans_of
from ppdm.defend.candidates import (
    FAMILIES,
    Candidate,
    Grids,
    Learner,
    check_families,
    dp_candidates,
    interleave,
    kadet_candidates,
    learner_for,
    pruning_candidates,
    publish_less_candidates,
    retrain_candidates,
)
from ppdm.defend.targets import Evidence, Target, parse_target
from ppdm.errors import DataError, PpdmError
from ppdm.learn.estimators import C45Classifier, ID3Classifier
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.model import Tree
from ppdm.tree.sklearn import tree_from_sklearn

__all__ = ["DEFAULT_TARGET", "DefenseResult", "defend"]

DEFAULT_TARGET = "certain=0,confident=0.01@0.9"
"""Nobody certain; at most 1 % of the people at confidence ≥ 0.9 in their true value."""

_LEVELS = (Disclosure.LABELS, Disclosure.ERROR_RATES, Disclosure.CLASS_COUNTS)
UNFINISHED = "unfinished (time budget)"


@dataclass
class DefenseResult:
    """What :func:`defend` found.

    ``chosen``: the most accurate candidate meeting the target, as published (``None`` if none
    does); ``frontier``: one row per candidate (label, family, params, accuracy, risk = the value of
    the measure ``risk``, meets_target, one column per measure of the target, status, seconds,
    leaves, pareto = on the accuracy–risk frontier); ``accuracy_on``: "test" or "training" data.
    """

    chosen: Tree | None
    chosen_label: str | None
    frontier: pd.DataFrame
    target: Target
    risk: str
    threat: ThreatModel
    accuracy_on: str
    seconds: float
    time_budget: float | None

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
        the target, ``chosen`` and ``risk_measure`` (the measure ``risk`` holds; missing values as
        ``null``)."""
        records = []
        for row in self.frontier.to_dict("records"):
            record = {k: _plain(row[k]) for k in ("label", "accuracy", "risk", "meets_target")}
            record.update({k: _plain(v) for k, v in row.items() if k not in record})
            record["params"] = json.loads(row["params"])
            record["chosen"] = row["label"] == self.chosen_label
            record["risk_measure"] = self.risk
            records.append(record)
        return records

    def save_frontier(self, path: str | Path) -> None:
        """Write :meth:`frontier_records` as a JSON list."""
        Path(path).write_text(json.dumps(self.frontier_records(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def defend(
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
    target: Target | str = DEFAULT_TARGET,
    *,
    model: Any = None,
    class_attribute: str | None = None,
    learner: Learner | Any | None = None,
    test: pd.DataFrame | None = None,
    families: Sequence[str] = FAMILIES,
    grids: Grids | None = None,
    hierarchies: Mapping[str, Any] | None = None,
    auditors: Sequence[Auditor] = DEFAULT_AUDITORS,
    risk: str | None = None,
    time_budget: float | None = 300.0,
    random_state: int | None = 0,
    progress: bool | None = None,
) -> DefenseResult:
    """Search the candidates for the most accurate model meeting ``target`` under ``threat``.

    ``data``: the training records, with the class and the sensitive column (the audits measure
    each person's exposure against their true value). ``model``: the model to defend: a ppdm
    :class:`~ppdm.tree.Tree`, a fitted ppdm estimator or scikit-learn ``DecisionTreeClassifier``
    (fitted on ``data``'s columns, one-hot ``column_value`` or ordinal codes); ``None`` trains one
    on ``data`` with ``learner`` (default: ID3 when every column is categorical, else C4.5) and
    ``class_attribute``. ``learner``: how ``retrain`` candidates are trained (default: the
    model's own learner). ``threat``: the attacker (default: :class:`ThreatModel` defaults, paper
    000's); its ``publish`` caps what every candidate publishes (default: what the model holds).
    ``target``: a :class:`Target` or its text (:func:`~ppdm.defend.targets.parse_target`).
    ``test``: rows to measure accuracy on (default: the training rows, stated in ``accuracy_on``).
    ``families``, ``grids``: which candidates (:mod:`ppdm.defend.candidates`); ``hierarchies``:
    generalization hierarchies for kADET. ``auditors``: the audits run on every candidate.
    ``risk``: the target measure on the frontier's risk axis (default: its first).
    ``time_budget``: seconds after which no new candidate starts (``None``: no limit).
    ``progress``: a progress bar on standard error (default: when it is a terminal).
    """
    start = time.monotonic()
    data = _check_data(data)
    target = parse_target(target) if isinstance(target, str) else target
    risk_name = target.measure(risk).name if risk is not None else target.measures[0].name
    families = check_families(list(families))
    if time_budget is not None and not time_budget > 0:
        raise PpdmError(f"time_budget must be positive seconds or None, got {time_budget!r}")
    tree, learner = _model(model, data, class_attribute, learner)
    threat = (threat or ThreatModel()).resolve(data, tree.class_attribute)
    if threat.sensitive not in data.columns:
        raise DataError(f"the sensitive column {threat.sensitive!r} is not in the data: the search measures exposure against it")
    level = threat.publish or tree.disclosure
    audit_threat = replace(threat, publish=None)
    wanted = {*tree.attributes, *learner.columns(data)}
    features = [c for c in data.columns if c in wanted]
    X, y = data[features], data[tree.class_attribute]
    candidates = [Candidate("unprotected (input model)", "unprotected", {}, lambda: tree)]
    candidates += _candidates(families, grids or Grids.full(), tree, learner, X, y, level, threat, hierarchies, random_state)
    accuracy = _accuracy(test if test is not None else data, tree.class_attribute, features)
    deadline = None if time_budget is None else start + float(time_budget)
    audit = partial(_evaluate, level=level, data=data, threat=audit_threat, target=target, auditors=auditors, accuracy=accuracy, risk=risk_name)
    rows, trees = _run(candidates, audit, deadline, progress)
    frontier = _frontier(rows, target, risk_name)
    chosen_label = _choose(frontier, target.measure(risk_name).higher_is_riskier)
    chosen = trees.get(chosen_label) if chosen_label is not None else None
    return DefenseResult(
        chosen, chosen_label, frontier, target, risk_name, threat, "test" if test is not None else "training",
        time.monotonic() - start, time_budget,
    )


# -- inputs -----------------------------------------------------------------------------------
def _check_data(data: Any) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"data must be a pandas DataFrame of the training records (got {type(data).__name__})")
    if len(data) == 0:
        raise DataError("data has no rows")
    return data


def _model(model: Any, data: pd.DataFrame, class_attribute: str | None, learner: Any) -> tuple[Tree, Learner]:
    """The tree to defend and the learner that trains its variants."""
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
        return model, given or learner_for(model)
    if type(model).__name__ in ("Forest",) or hasattr(model, "estimators_"):
        raise PpdmError("the defense search takes one tree: the audit of a forest is not available to it yet")
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


def _candidates(
    families: Sequence[str], grids: Grids, tree: Tree, learner: Learner, X: pd.DataFrame, y: pd.Series,
    level: Disclosure, threat: ThreatModel, hierarchies: Mapping[str, Any] | None, random_state: int | None,
) -> list[Candidate]:
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


def _cap(level: Disclosure, cap: Disclosure | None) -> Disclosure:
    return level if cap is None else min(level, cap, key=_LEVELS.index)


def _run(
    candidates: Sequence[Candidate], audit: Callable[[Candidate], tuple[dict[str, Any], Tree | None]], deadline: float | None,
    progress: bool | None,
) -> tuple[list[dict[str, Any]], dict[str, Tree | None]]:
    """Every candidate's row, in order; those not started before ``deadline`` are unfinished."""
    rows, trees = [], {}
    with _bar(progress, len(candidates)) as step:
        for cand in candidates:
            step(cand.label, 0)
            if deadline is not None and time.monotonic() > deadline:
                rows.append(_row(cand, status=UNFINISHED))
            else:
                row, trees[cand.label] = audit(cand)
                rows.append(row)
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

    def accuracy(tree: Tree) -> float:
        return float(np.mean(tree.predict(table[features]).astype(object) == truth))

    return accuracy


def _row(cand: Candidate, status: str, **values: Any) -> dict[str, Any]:
    return {"label": cand.label, "family": cand.family, "params": json.dumps(cand.params), "status": status, **values}


def _evaluate(
    cand: Candidate, *, level: Disclosure, data: pd.DataFrame, threat: ThreatModel, target: Target,
    auditors: Sequence[Auditor], accuracy: Callable[[Tree], float], risk: str,
) -> tuple[dict[str, Any], Tree | None]:
    """The candidate's row of the frontier (audited, or failed with the reason) and its published tree."""
    t0 = time.monotonic()
    try:
        tree = cand.build().published(_cap(level, cand.publish))
        results = run_audits(tree, data, threat, auditors, cand.noisy)
        spans = spans_of(tree, data, threat) if target.needs_spans else None
        evidence = Evidence.from_results(results, spans)
        values = target.values(evidence)
    except PpdmError as exc:
        return _row(cand, f"failed: {exc}", seconds=time.monotonic() - t0), None
    row = _row(
        cand, "audited", accuracy=accuracy(tree), risk=values[risk], meets_target=target.meets(values), **values,
        leaves=tree.n_leaves, publish=tree.disclosure.value, audits="+".join(evidence.sources), seconds=time.monotonic() - t0,
    )
    return row, tree


# -- the frontier -----------------------------------------------------------------------------
def _frontier(rows: list[dict[str, Any]], target: Target, risk: str) -> pd.DataFrame:
    columns = ["label", "family", "params", "publish", "accuracy", "risk", "meets_target", *(m.name for m in target.measures),
               "leaves", "audits", "status", "seconds"]  # fmt: skip
    frame = pd.DataFrame(rows).reindex(columns=columns)
    frame["meets_target"] = frame["meets_target"].astype("boolean").fillna(False).astype(bool)
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
def _bar(enabled: bool | None, total: int) -> Iterator[Callable[[str, int], None]]:
    """``step(label, advance)`` of a rich progress bar on standard error when it is a terminal (or
    ``enabled``); else a step that does nothing."""
    if enabled is False or (enabled is None and not sys.stderr.isatty()):
        yield lambda label, advance: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (TextColumn("defense search"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.description}"))
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=total)
        yield lambda label, advance: bar.update(task, advance=advance, description=label)

