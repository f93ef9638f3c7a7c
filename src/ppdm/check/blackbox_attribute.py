"""The attribute evidence of a model ppdm reads by its outputs: black-box attribute inference on
the training rows, beside the model-free imputation baseline, as the policy's ``attribute`` rule
(issue 46, deliverable 3).

The attacker knows of each training person every column but the sensitive one (``known``; by
default every other column, the class included) and queries the model. Two attackers with the
model, the stronger on each measure read (the habit "never weaker than a simple attack"):

* **model inversion** (Fredrikson et al., *Model Inversion Attacks that Exploit Confidence
  Information*, CCS 2015, §3; the Bayes rule of :mod:`ppdm.attacks.baselines.likelihood`): try
  every value ``v`` of the sensitive input in the model and weigh it by how well the model's
  answer reproduces the person's class, ``P(v | x, y) ∝ π(v) · P_model(y | x_{-s}, v)``, π the
  training table's distribution of the column; when the sensitive column is the class, the
  model's own prediction ``P_model(v | x)``. It needs the model answering any input, so a model
  known by its scores files has none;
* **outputs as features** (IBM ART's ``AttributeInferenceBlackBox``): a classifier from the known
  columns and the model's predicted probabilities to the sensitive column, fitted on the held-out
  rows with their outputs (:func:`ppdm.attacks.baselines.reference.fit_imputation`), applied to
  the training rows: it reads a scores file too.

**The baseline** is the same classifier without the model's outputs, fitted on the same held-out
rows (Jayaraman & Evans, CCS 2022: attribute inference is often imputation), or the prior without
held-out rows: what the model adds is the attackers' measures beyond it. The measures are the
policy's attribute target (:class:`~ppdm.attacks.core.target.Target`: people ``certain`` — a
black-box rule proves nobody's value, so 0 —, the share ``confident`` at a level). Strength:
``estimated`` when the inversion ran, ``approximate`` when only the outputs-as-features attacker
did (a scores file: a weaker attacker than one querying the model), which the default policy does
not count as met.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.baselines.likelihood import every_value, posterior_result, prior_rule
from ppdm.attacks.baselines.reference import OUTPUT_PREFIX, fit_imputation
from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.target import Evidence, Target
from ppdm.attacks.core.threat import ThreatModel
from ppdm.check.audit_evidence import judge
from ppdm.check.findings import Finding
from ppdm.check.model import Checked
from ppdm.check.policy import Policy
from ppdm.errors import DataError, PpdmError
from ppdm.metrics.baseline import prior_distribution
from ppdm.tree.model import encode_categories

__all__ = ["MAX_VALUES", "attribute_check"]

#: The most values of the sensitive column the inversion tries (more: a numeric column; bin it first).
MAX_VALUES = 50


def _values(data: pd.DataFrame, holdout: pd.DataFrame | None, sensitive: str) -> tuple[Any, ...]:
    for name, frame in (("the training table", data), ("the held-out rows", holdout)):
        if frame is None:
            continue
        if sensitive not in frame.columns:
            raise DataError(f"{name} has no sensitive column {sensitive!r}")
        missing = frame[sensitive].isna().to_numpy()
        if missing.any():
            raise DataError(f"{name}, column {sensitive!r}, row {int(np.argmax(missing))}: missing value (the attribute audit scores each person's own)")
    seen = pd.concat([data[sensitive], *([holdout[sensitive]] if holdout is not None else [])], ignore_index=True)
    return tuple(sorted(pd.unique(seen.to_numpy()).tolist(), key=str))


def _inversion(checked: Checked, data: pd.DataFrame, threat: ThreatModel, values: tuple[Any, ...], proba: np.ndarray) -> AttackResult | None:
    """Model inversion (module docstring); ``None`` when the attacker lacks an input the model reads."""
    sensitive, klass = str(threat.sensitive), checked.class_attribute
    known = set(threat.known or ())
    inputs = [str(c) for c in checked.features(data).columns]
    classes = [str(c) for c in checked.classes()]
    if sensitive == klass:
        if not set(inputs) <= known:
            return None
        order = np.array([classes.index(str(v)) if str(v) in classes else -1 for v in values])
        posterior = np.where(order >= 0, proba[:, np.maximum(order, 0)], 0.0)
        return posterior_result("model inversion (the model's prediction)", data, threat, values, posterior)
    if sensitive not in inputs or not (set(inputs) - {sensitive}) <= known or klass not in known:
        return None
    truth = encode_categories(data[sensitive], values)
    y = checked.truth(data)
    trial = every_value(data, sensitive, values)
    answers = checked.proba(trial).reshape(len(values), len(data), len(classes))
    likelihood = np.where(y >= 0, answers[:, np.arange(len(data)), np.maximum(y, 0)], 1.0).T  # persons × values
    return posterior_result("model inversion", data, threat, values, likelihood * prior_distribution(truth, len(values)))


def _outputs(proba: np.ndarray, index: pd.Index) -> pd.DataFrame:
    """The model's probabilities as an attacker's features (the published float32; one column fewer for two classes)."""
    p = np.asarray(proba, dtype=np.float32)
    return pd.DataFrame({f"{OUTPUT_PREFIX}_score_{k}": p[:, k] for k in range(p.shape[1] - (p.shape[1] == 2))}, index=index)


def _measured(result: AttackResult, target: Target) -> tuple[dict[str, float], float]:
    """The target's measures on ``result`` and its accuracy on the training rows."""
    values = target.values(Evidence.from_results([result]))
    truth = result.true_codes if result.true_codes is not None else np.full(len(result.targets), -1)
    right = result.predicted()[result.targets] == truth[result.targets]
    return values, float(right.mean()) if len(right) else math.nan


def attribute_check(
    checked: Checked, data: pd.DataFrame, holdout: pd.DataFrame | None, proba: np.ndarray, held_proba: np.ndarray | None, policy: Policy,
    sensitive: str, known: Sequence[str] | None = None, queryable: bool = True,
) -> tuple[Finding | None, list[dict[str, Any]]]:
    """The ``attribute`` finding of the black-box attackers on ``sensitive`` under ``policy`` and
    their table, the baseline last (module docstring); ``(None, [])`` when the policy sets no
    attribute target. ``proba``, ``held_proba``: the model's probabilities on the training and
    held-out rows; ``queryable``: the model answers other inputs (not a scores file)."""
    target = policy.attribute_target()
    if target is None:
        return None, []
    values = _values(data, holdout, sensitive)
    if len(values) > MAX_VALUES:
        why = f"{sensitive!r} holds {len(values):,} distinct values: the black-box attackers guess among a column's values (bin it, at most {MAX_VALUES})"
        return Finding("attribute", "not checked", None, None, "none", why), []
    if len(values) < 2:
        return Finding("attribute", "passed", None, None, "proved", f"{sensitive!r} takes one value: nothing to infer"), []
    known = tuple(known) if known is not None else tuple(c for c in data.columns if c != sensitive)
    lacking = [c for c in known if c not in data.columns or (holdout is not None and c not in holdout.columns)]
    if lacking or sensitive in known:
        raise PpdmError(f"the attacker's known column {(lacking or [sensitive])[0]!r} is not a column of the tables beside the sensitive one")
    threat = ThreatModel(sensitive=sensitive, known=known, class_known=checked.class_attribute in known)
    attackers: list[AttackResult] = []
    inverted = _inversion(checked, data, threat, values, proba) if queryable else None
    if inverted is not None:
        attackers.append(inverted)
    base = prior_rule(data, threat, values)
    if base is None:
        raise DataError(f"the sensitive column {sensitive!r} holds a value outside its values")
    baseline, reference = base, "the prior (no held-out rows to fit an imputation on)"
    if holdout is not None and held_proba is not None and known:
        outputs = (_outputs(proba, data.index), _outputs(held_proba, holdout.index))
        featured, _ = fit_imputation(base, data, holdout, outputs)
        attackers.append(replace(featured, attack="outputs as features (ART black-box)"))
        baseline, _ = fit_imputation(base, data, holdout)
        reference = f"imputation from the known columns ({baseline.details.get('model', 'fitted')} on {len(holdout):,} held-out rows)"
    rows = [_row(r.attack, *_measured(r, target)) for r in attackers]
    base_values, base_accuracy = _measured(baseline, target)
    rows.append({**_row(f"baseline: {reference}", base_values, base_accuracy), "baseline": True})
    if not attackers:
        why = "no black-box attacker applies: the inversion needs the model answering other inputs and every input it reads known, the outputs-as-features attacker held-out rows with their outputs"
        return Finding("attribute", "not checked", None, None, "none", why), rows
    strength = "estimated" if inverted is not None else "approximate"
    answers = [(r.attack, strength, values) for r, values in ((r, _measured(r, target)[0]) for r in attackers)]
    found = judge("attribute", answers, target, policy)
    accuracy = ", ".join(f"{r['attack']} {r['accuracy']:.3f}" for r in rows[:-1])
    said = f"{found.evidence}; accuracy on {sensitive!r}: {accuracy}; baseline ({reference}): " + ", ".join(f"{n} {v:g}" for n, v in base_values.items())
    return replace(found, evidence=f"{said}, accuracy {base_accuracy:.3f}"), rows


def _row(attack: str, values: dict[str, float], accuracy: float) -> dict[str, Any]:
    return {"attack": attack, **{k: (None if math.isnan(v) else v) for k, v in values.items()}, "accuracy": None if math.isnan(accuracy) else accuracy}
