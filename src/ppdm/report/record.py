"""The release record: what a disclosure-control team files with a released model.

One JSON document per audit, machine-readable, validated by the JSON Schema shipped beside this
module (``release_record.schema.json``, :func:`schema`): the ppdm version, each input file's
SHA-256, the model's family and hyper-parameters, the threat model, the target and its
thresholds, every attack's result beside its baselines (the prior; and when measured the
model-free attacker fitted on a reference sample, the control on people outside the training
set, the portfolio of attackers the strongest was chosen from), and the decision with its
reasons: ``release``, ``do not release``, or ``release the defended model`` (the audited model is
the one a defense search chose, and it meets the target).

It follows two requirements for outputs that leave a trusted research environment: SACRO-ML's
release request (Jefferson et al., *SACRO: Semi-Automated Checking of Research Outputs*, 2023: per
output, the checks run, their results and a recommendation) and the UK SATRE specification,
requirement 3.3.09 (a machine-readable record of the disclosure-control criteria applied to each
released output). The decision is conservative: a target that cannot be checked (a measure this
audit does not measure, no true values) is not a target met, so the model is not released.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.scope import scope_of
from ppdm.attacks.core.target import Target, parse_target, target_from_dict
from ppdm.errors import PpdmError
from ppdm.report.verdict import format_value, measured, not_judged

if TYPE_CHECKING:
    from ppdm.tree.forest import Forest
    from ppdm.tree.model import Tree

FORMAT = "ppdm-release-record"
VERSION = 1

RELEASE = "release"
DO_NOT_RELEASE = "do not release"
RELEASE_DEFENDED = "release the defended model"
DECISIONS = (RELEASE, DO_NOT_RELEASE, RELEASE_DEFENDED)

#: What a forest's ``algorithm`` says, in a reader's words.
def release_record(audit: Any, *, frontier: Any = None, inputs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The record of ``audit`` (an :class:`ppdm.Audit` or :class:`ppdm.RegressionAudit`; see the
    module docstring). ``frontier``: the defense search that chose the audited model (its
    records, as :meth:`~ppdm.defend.DefenseResult.frontier_records` gives them or ``ppdm defend
    --frontier`` writes them); ``inputs``: the input files by role, hashed (a DataFrame is hashed
    by its CSV text)."""
    target, given = _target(audit, frontier)
    attacks = [_attack(r, role, target) for role, r in _results(audit)]
    if not attacks:
        raise PpdmError("a release record needs an audit with at least one result")
    defense = _defense(frontier, audit)
    policy = getattr(audit, "policy", None)
    decision, reasons = decide(attacks, target, defense, _caveats(audit), policy=policy)
    cited = {} if policy is None else {"policy": policy.cite(), "checks": _checks(audit, policy)}
    return {
        "format": FORMAT,
        "version": VERSION,
        "ppdm": _version(),
        "created": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "inputs": [_input(role, value) for role, value in (inputs or {}).items()],
        "model": model_facts(audit.model, audit),
        "threat_model": _threat(audit),
        "target": target.to_dict(given),
        "attacks": attacks,
        "defense": defense,
        "decision": decision,
        "reasons": reasons,
        **cited,
    }


def _checks(audit: Any, policy: Any) -> dict[str, Any] | None:
    """Under a policy, the output checker's findings on the audited model and its training table
    (the structural checks, :mod:`ppdm.check`, and the audit's own evidence) and its one
    recommendation; ``None`` for a model the checker does not read (a rule set, a regressor)."""
    from ppdm.check.run import check_model
    from ppdm.rules.ruleset import RuleSet

    model, table = getattr(audit, "model", None), getattr(audit, "table", None)
    if model is None or isinstance(model, RuleSet) or getattr(model, "is_regressor", False) or not isinstance(table, pd.DataFrame):
        return None
    if not len(table) or model.class_attribute not in table.columns:
        return None
    done = check_model(model, table, class_attribute=model.class_attribute, policy=policy, audit=audit)
    return _plain({"findings": [f.to_dict() for f in done.findings], "recommendation": done.recommendation.to_dict()})


def record_json(record: dict[str, Any]) -> str:
    """The record as the JSON text written to a file (indented: a person reads it too)."""
    return json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) every release record satisfies, shipped in the package."""
    return dict(json.loads(files("ppdm.report").joinpath("release_record.schema.json").read_text(encoding="utf-8")))


# -- the decision -------------------------------------------------------------------------------
def decide(
    attacks: Sequence[dict[str, Any]], target: Target, defense: dict[str, Any] | None, caveats: Sequence[str] = (), *, policy: Any = None,
) -> tuple[str, list[str]]:
    """The decision and its reasons: every measure of the target met by every attack → release
    (``release the defended model`` when a defense search chose it); a measure missed, or one no
    attack measured, or met by an audit that does not judge the whole model (a part of it read, an
    estimate short of its optimum, or an approximate estimate with no proof beside it, unless the
    ``policy`` (:class:`~ppdm.check.policy.Policy`) counts approximate evidence:
    :func:`~ppdm.report.verdict.not_judged`) → do not release, naming it. A defended model no
    better than the majority class on held-out rows (:func:`~ppdm.check.gap.no_better_than_majority`)
    is not released as the defense's success: do not release, saying so."""
    reasons: list[str] = []
    missed, unmeasured = [], []
    for m in target.measures:
        states = [a["target"][m.name] for a in attacks]
        values = [a["measures"][m.name] for a in attacks if a["measures"][m.name] is not None]
        shown = ", ".join(f"{a['role']} {format_value(m, a['measures'][m.name])}" for a in attacks if a["measures"][m.name] is not None)
        if "not met" in states:
            missed.append(m.name)
            reasons.append(f"{m.name}: {shown}, beyond the limit ({m.describe()})")
        elif values and all(s == "met" for s in states if s != "not measured"):
            reasons.append(f"{m.name}: {shown}, within the limit ({m.describe()})")
        else:
            unmeasured.append(m.name)
            reasons.append(f"{m.name}: not measured by this audit, so not shown within the limit ({m.describe()})")
    reasons.extend(caveats)
    if missed or unmeasured:
        why = f"the target is not met ({', '.join(missed)})" if missed else f"the target cannot be checked ({', '.join(unmeasured)} not measured)"
        return DO_NOT_RELEASE, [why, *reasons]
    counts = bool(getattr(policy, "approximate_counts", False)) or any(a["role"] == "exact" and not not_judged(a["result"]) for a in attacks)
    partial = [f"{a['role']}: {why}" for a in attacks if (why := not_judged(a["result"], approximate_counts=counts))]
    if partial:  # as the verdict says: met, but not on the whole model
        return DO_NOT_RELEASE, ["the model is not judged (the target cannot be checked on the whole model); " + "; ".join(partial), *reasons]
    if defense is not None and defense.get("no_better_than_majority"):
        chosen = defense.get("chosen_candidate") or {}
        return DO_NOT_RELEASE, [
            f"the defended model {defense.get('chosen')!r} is no better than the majority class (accuracy {chosen.get('accuracy', float('nan')):.4f} "
            f"against the majority share {defense['majority_share']:.4f} on {defense['majority_rows']:,} rows): meeting the target by "
            "predicting one class is no defense's success; publish the class shares instead", *reasons,
        ]  # fmt: skip
    if defense is not None and defense.get("chosen") and defense.get("chosen_family") != "unprotected":
        return RELEASE_DEFENDED, [f"the defense search chose {defense['chosen']!r} and its audit meets the target", *reasons]
    return RELEASE, ["every measure of the target is met", *reasons]


#: The result details the record lists as caveats: a sample, a note, an exact audit that did not
#: run (what was read, when not the whole model, is the result's :class:`~ppdm.attacks.core.scope.Scope`).
CAVEATS = ("sample", "note", "exact_not_run")


def _caveats(audit: Any) -> list[str]:
    """What a reader must know beside the numbers: a partial or sampled audit, rows left out."""
    out = []
    for _, r in _results(audit):
        details = getattr(r, "details", {}) or {}
        scope = scope_of(details)
        if not scope.whole:
            out.append(scope.sentence())
        for key in CAVEATS:
            if details.get(key):
                out.append(str(details[key]))
    if getattr(audit, "dropped_rows", 0):
        out.append(f"{audit.dropped_rows:,} rows left out for missing values")
    return list(dict.fromkeys(out))


# -- parts ----------------------------------------------------------------------------------------
def _target(audit: Any, frontier: Any) -> tuple[Target, bool]:
    """The audit's target when chosen, else the defense search's, else the audit's default one."""
    if getattr(audit, "target_given", False):
        return audit.target, True
    searched = frontier_target(_records(frontier))
    return (searched, True) if searched is not None else (audit.target, False)


def _threat(audit: Any) -> dict[str, Any]:
    """The attacker, in words and as the keys of a threat file (a membership audit's: who holds
    the population of candidates and the published model)."""
    if getattr(audit, "membership", None) is not None and not getattr(audit, "results", []):
        complete = audit.membership.details.get("complete", True)
        pool = "every training record among them" if complete else "some of the training records among them only (the counts read as upper bounds)"
        return {
            "description": "membership: an attacker who holds the published model and a population of candidates (members and "
            f"non-members, with every model input; {pool}) wants to tell who was a training record",
            "spec": None,
        }
    printed = [getattr(r, "details", {}).get("threat_model") for _, r in _results(audit)]
    described = next((str(p) for p in printed if p), None) or audit.threat.describe(min(audit.threat.publish or audit.model.disclosure, audit.model.disclosure))
    return {"description": described, "spec": _plain(audit.threat.to_dict())}


def _results(audit: Any) -> list[tuple[str, Any]]:
    """The audit's results by role: ``estimate``, ``exact``, ``membership`` or ``interval``."""
    if getattr(audit, "intervals", None) is not None:
        return [("interval", audit.intervals)]
    out = [(role, r) for role, r in (("estimate", getattr(audit, "estimate", None)), ("exact", getattr(audit, "proved", None))) if r is not None]
    if getattr(audit, "membership", None) is not None:
        out.append(("membership", audit.membership))
    return out


def _attack(result: Any, role: str, target: Target) -> dict[str, Any]:
    """One attack's result beside its baselines, each measure of the target and its judgement."""
    if role == "membership":
        from ppdm.report.membership import membership_summary, membership_target

        summary = membership_summary(result, membership_target(target))
    elif role == "interval":
        summary = dict(result.summary())
    else:
        from ppdm.metrics.baseline import DEFAULT_THRESHOLDS

        summary = result.summary(tuple(sorted({*DEFAULT_THRESHOLDS, *target.confidences})))
    values = measured(summary, target)
    if role == "interval":  # a person pinned to within the tolerance is a person certain
        values = {m.name: (float(summary["pinned"]) if m.name == "certain" else None) for m in target.measures}
    judged = target.judge({k: math.nan if v is None else v for k, v in values.items()})
    return {
        "role": role,
        "attack": str(summary.get("attack", "membership" if role == "membership" else "interval")),
        "sensitive": None if role == "membership" else str(summary.get("sensitive")),
        "result": _plain({k: v for k, v in summary.items() if k not in _BASELINE_KEYS}),
        "baselines": _plain(_baselines(summary, role)),
        "measures": {k: (None if v is None or not math.isfinite(v) else float(v)) for k, v in values.items()},
        "target": judged,
    }


#: The summary's keys that are baselines, filed apart from the attack's own result.
_BASELINE_KEYS = ("baseline", "prior_alone", "beyond_prior", "reference", "control", "portfolio", "baseline_member_share")


def _baselines(summary: dict[str, Any], role: str) -> dict[str, Any]:
    """What the attack is compared with: the prior alone (always), and when measured the
    model-free attacker on a reference sample, the control, and the portfolio of attackers."""
    if role == "membership":
        share = summary.get("baseline_member_share")
        return {"prior": {"member_share": share, "tpr_equals_fpr": True, "auc": 0.5}}
    out: dict[str, Any] = {"prior": summary.get("baseline")}
    if "prior_alone" in summary:
        out["prior"] = {**(out["prior"] or {}), "confidence_in_true_value": summary["prior_alone"]}
    for key in ("reference", "control", "portfolio"):
        if summary.get(key) is not None:
            out[key] = summary[key]
    if summary.get("reported_attacker") is not None:
        out["reported_attacker"] = summary["reported_attacker"]
    return out


def model_facts(model: Tree | Forest, audit: Any = None) -> dict[str, Any]:
    """The model's family, learner and hyper-parameters as the file records them, its size and
    what it publishes (and, when ``audit`` audited only some trees, which)."""
    from ppdm.rules.ruleset import RuleSet
    from ppdm.tree.forest import is_model

    if isinstance(model, RuleSet):  # a membership audit of published rules: no trees, no leaves
        return _rules_facts(model, audit)
    if not is_model(model):  # a classifier audited by its predicted probabilities only (issue 45)
        return _estimator_facts(model)
    algorithm = getattr(model, "algorithm", None)
    regressor = bool(getattr(model, "is_regressor", False))
    params: dict[str, Any] = dict(getattr(model, "params", {}) or {})
    trees = model.trees
    criterion = getattr(model, "criterion", None)
    if criterion:
        params["criterion"] = criterion
    out = {
        "family": model.family,
        "algorithm": algorithm,
        "regressor": regressor,
        "trees": len(trees),
        "leaves": int(sum(t.n_leaves for t in trees)),
        "depth": int(max(t.depth for t in trees)),
        "class_attribute": getattr(model, "class_attribute", None),
        "publishes": _published(model, audit),
        "hyperparameters": _plain(params),
    }
    subset = [scope_of(getattr(r, "details", {}) or {}).asked for _, r in _results(audit)] if audit is not None else []
    out["trees_audited"] = next((s for s in subset if s), None)
    return out


def _estimator_facts(model: Any) -> dict[str, Any]:
    """A classifier read by its predicted probabilities only (a black-box membership audit): its
    class and hyper-parameters, no trees."""
    params = model.get_params(deep=False) if hasattr(model, "get_params") else {}
    known = model is None or not hasattr(model, "get_params")  # its predicted probabilities only
    plain = {str(k): v if isinstance(v, (int, float, str, bool)) or v is None else repr(v) for k, v in params.items()}
    return {
        "family": "predicted probabilities" if known else type(model).__name__, "algorithm": None, "regressor": False, "trees": None, "leaves": None, "depth": None,
        "class_attribute": None, "publishes": "predicted probabilities", "hyperparameters": plain, "trees_audited": None,
    }  # fmt: skip


def _rules_facts(rules: Any, audit: Any) -> dict[str, Any]:
    """A published rule set's facts: its thresholds and what it publishes (``trees``, ``leaves``
    and ``depth`` are null: a rule set has none; its scope counts its rules)."""
    return {
        "family": "association rules", "algorithm": "apriori", "regressor": False, "trees": None, "leaves": None, "depth": None,
        "class_attribute": rules.sensitive, "publishes": rules.publish,
        "hyperparameters": {"min_support": rules.min_support, "min_confidence": rules.min_confidence, "rules": len(rules.rules)},
        "trees_audited": None,
    }  # fmt: skip


def _published(model: Tree | Forest, audit: Any) -> str | None:
    """What the audit took as published: the model's disclosure, lowered to the threat model's
    ``publish`` when the audit asked for less (``--publish labels`` of a file holding counts)."""
    disclosure = getattr(model, "disclosure", None)
    asked = getattr(getattr(audit, "threat", None), "publish", None)
    if disclosure is not None and asked is not None:
        disclosure = min(asked, disclosure)
    return getattr(disclosure, "value", None)


def _defense(frontier: Any, audit: Any = None) -> dict[str, Any] | None:
    """The defense search that chose the model: the chosen candidate and the unprotected one, each
    with its accuracy and on which rows it was measured, and whether the chosen one is no better
    than the majority class (its held-out share, else the audited table's)."""
    records = _records(frontier)
    if not records:
        return None
    chosen = next((r for r in records if isinstance(r, dict) and r.get("chosen")), None)
    first = records[0] if isinstance(records[0], dict) else {}
    held = next((r.get("held_out") for r in records if isinstance(r, dict) and r.get("held_out")), None)

    def point(r: dict[str, Any] | None) -> dict[str, Any] | None:
        if r is None:
            return None
        return _plain({k: r.get(k) for k in ("label", "family", "accuracy", "accuracy_on", "meets_target", "publish")})

    return {
        "chosen": None if chosen is None else str(chosen.get("label")),
        "chosen_family": None if chosen is None else chosen.get("family"),
        "chosen_candidate": point(chosen),
        "unprotected": point(first) if first.get("family") == "unprotected" else None,
        "candidates": len(records),
        "held_out": _plain(held),
        **_majority(chosen, held, audit),
    }


def _majority(chosen: dict[str, Any] | None, held: Any, audit: Any) -> dict[str, Any]:
    """Whether the chosen candidate's accuracy is no better than the majority class's share:
    that of the held-out rows when the split recorded it, else of the audited table's class."""
    from ppdm.check.gap import no_better_than_majority

    accuracy = None if chosen is None else chosen.get("accuracy")
    share, rows = (held.get("majority_share"), held.get("rows")) if isinstance(held, dict) else (None, None)
    table = getattr(audit, "table", None)
    column = getattr(getattr(audit, "model", None), "class_attribute", None)
    if share is None and isinstance(table, pd.DataFrame) and column in table.columns and len(table):
        share, rows = float(table[column].value_counts(normalize=True).max()), int(rows or len(table))
    if not isinstance(accuracy, (int, float)) or share is None or not rows:
        return {}
    flat = no_better_than_majority(float(accuracy), int(rows), float(share))
    return {"majority_share": float(share), "majority_rows": int(rows), "no_better_than_majority": flat}


def frontier_target(frontier: Any) -> Target | None:
    """The target a defense search's frontier was searched for (its records' ``target``)."""
    points = frontier.get("points", []) if isinstance(frontier, dict) else frontier if isinstance(frontier, (list, tuple)) else []
    texts = {p["target"] for p in points if isinstance(p, dict) and isinstance(p.get("target"), str)}
    if isinstance(frontier, dict) and isinstance(frontier.get("target"), (str, dict)):
        texts.add(target_from_dict(frontier["target"], "the frontier's target").to_text())
    if len(texts) > 1:
        raise PpdmError(f"the frontier's candidates were searched against different targets: {', '.join(sorted(texts))}")
    return parse_target(next(iter(texts))) if texts else None


def _records(frontier: Any) -> list[Any]:
    if frontier is None:
        return []
    if isinstance(frontier, dict):
        return list(frontier.get("points", []))
    return list(frontier)


#: How a table passed in Python is hashed: the same bytes as ``table.to_csv("t.csv", index=False)`` writes.
TABLE_HASH = "an in-memory table, hashed as its CSV text: DataFrame.to_csv(index=False), UTF-8, one \\n per row"
#: How a model passed in Python is hashed: the bytes ``ppdm.save_model`` (``ppdm show``'s JSON) writes.
MODEL_HASH = "an in-memory model, hashed as the ppdm JSON file save_model writes of it"


def _model_hash(model: Any) -> dict[str, Any]:
    """The size and SHA-256 of ``model`` as the ppdm JSON file :func:`~ppdm.tree.model_files.save_model` writes."""
    import tempfile

    from ppdm.tree.model_files import save_model

    with tempfile.TemporaryDirectory() as folder:  # a model ppdm cannot write (a regressor) is refused by the caller
        path = Path(folder) / "model.json"
        save_model(model, path)
        text = path.read_bytes()
    return {"bytes": len(text), "sha256": hashlib.sha256(text).hexdigest()}


def _input(role: str, value: Any) -> dict[str, Any]:
    """One input: its path, size and SHA-256 (a file), or the SHA-256 of its CSV text (a table)."""
    if isinstance(value, (str, Path)):
        path = Path(value)
        if not path.is_file():
            raise PpdmError(f"{path}: the release record hashes its inputs, and this is not a file")
        digest = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return {"role": role, "path": str(path), "bytes": path.stat().st_size, "sha256": digest.hexdigest()}
    if isinstance(value, pd.DataFrame):
        text = value.to_csv(index=False, lineterminator="\n").encode("utf-8")
        return {"role": role, "path": None, "bytes": len(text), "sha256": hashlib.sha256(text).hexdigest(), "note": TABLE_HASH}
    from ppdm.tree.forest import is_model

    if is_model(value):
        return {"role": role, "path": None, **_model_hash(value), "note": MODEL_HASH}
    raise PpdmError(f"the release record's input {role!r}: give a file path or a DataFrame, got {type(value).__name__}")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ppdm")
    except PackageNotFoundError:
        return "unknown"


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars and arrays as Python values, NaN and infinities as ``None``."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


# -- the report's section -------------------------------------------------------------------------
def report_release(
    attacks: Sequence[dict[str, Any]], membership: dict[str, Any] | None, target: Target, frontier: Any, record: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report's release section, as data: the record's decision and reasons when a record
    was made (:func:`release_record`), else the same decision drawn from the report's attacks
    (their summaries judged against ``target``) and the defense search of ``frontier``."""
    if record is not None:
        return {"decision": record["decision"], "reasons": record["reasons"], "record": record}
    entries = [_entry(a["name"], a["summary"], target) for a in attacks]
    if membership is not None:
        entries.append(_entry("membership", membership["summary"], target))
    caveats = [str(a["summary"][k]) for a in attacks for k in CAVEATS if a["summary"].get(k)]
    decision, reasons = decide(entries, target, _defense(frontier), list(dict.fromkeys(caveats)))
    return {"decision": decision, "reasons": reasons, "record": None}


def _entry(role: str, summary: dict[str, Any], target: Target) -> dict[str, Any]:
    values = measured(summary, target)
    judged = target.judge({k: math.nan if v is None else v for k, v in values.items()})
    return {"role": role, "result": summary, "measures": values, "target": judged}
