"""The output checker's policy: a trusted research environment's risk appetite in one file.

The SATRE specification asks a TRE to publish a machine-actionable statement of its risk
appetite; ACRO's ``default.yaml`` (SACRO, Jefferson et al. 2023) holds three numbers of it:
``safe_threshold: 10`` (the minimum cell count), ``safe_dof_threshold: 10`` (residual degrees of
freedom) and ``zeros_are_disclosive: true``. A ppdm policy holds those and the rest of what the
checker decides on (:mod:`ppdm.check.recommend`):

* ``structural``: ``min_group_size`` (the smallest equivalence class: a leaf, a forest's span, a
  group of equal predicted-probability vectors), ``min_residual_dof`` (training rows minus the
  model's parameters), ``zeros_disclosive`` (a class of probability or count zero in a group
  discloses every member's class is not it), ``max_generalisation_gap`` (training accuracy minus
  held-out accuracy), ``hyperparameter_rules`` (the settings known to be risky,
  :mod:`ppdm.check.hyperparameters`), ``beat_majority`` (the model must be more accurate than
  the majority class on held-out rows);
* ``attribute``: the attribute-disclosure target (``certain``; ``confident`` ``share`` at
  ``at``), the measures of :class:`~ppdm.attacks.core.target.Target`;
* ``membership``: ``members_proved`` and ``tpr_at_fpr`` (``fpr``, ``tpr``), the audit's target, and
  ``max_advantage``: the largest membership advantage (TPR − FPR of the best threshold, Yeom et
  al. 2018) the black-box attacks may reach on the training rows against held-out rows
  (:mod:`ppdm.check.blackbox_membership`; a checker's rule, not a measure of the audit's target);
* ``evidence``: ``approximate_counts``: whether a measure met by an approximate estimate
  without a proof counts as met (default: no);
* ``reject``: the rules whose failure rejects outright (the others make the release
  conditional), and ``reject_families``: model families rejected on sight (SACRO's immediate
  rejection: SVMs and kNN hold training rows verbatim).

A file may start from a preset (``extends: acro``); :data:`PRESETS` holds ``default``, ``acro``
and ``strict``. Reading is strict: a bounded YAML file (:func:`ppdm.files.load_yaml`), and a key
the schema (``policy.schema.json``, shipped beside this module) does not know is refused in one
line naming it. The release record cites the policy by name and by the SHA-256 of its text.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from ppdm.attacks.core.target import Certain, Confident, MembersProved, MiaTpr, RiskMeasure, Target
from ppdm.errors import PolicyError
from ppdm.files import load_yaml, note_read, read_text

__all__ = ["PRESETS", "RULES", "FAMILIES", "Policy", "PolicyError", "load_policy", "policy_schema", "read_policy"]

#: Every rule a policy can reject on, as the schema lists them.
RULES = (
    "family", "min_group_size", "class_disclosure", "small_groups", "residual_dof", "hyperparameters", "generalisation_gap",
    "beat_majority", "attribute", "membership",
)  # fmt: skip
#: The model families a policy can reject on sight (:func:`ppdm.check.model.family_of`).
FAMILIES = ("svm", "knn", "tree", "forest", "boosting", "linear", "mlp", "other")

#: A policy file is small: this many bytes at most.
MAX_POLICY_BYTES = 64 * 1024


@dataclass(frozen=True)
class Policy:
    """A risk appetite (see the module docstring); ``text`` and ``source``: what it was read from."""

    name: str = "default"
    description: str = ""
    min_group_size: int = 10
    min_residual_dof: int = 10
    zeros_disclosive: bool = True
    max_generalisation_gap: float = 0.1
    hyperparameter_rules: bool = True
    beat_majority: bool = True
    certain: int | None = 0
    confident: tuple[float, float] | None = (0.01, 0.9)
    members_proved: int | None = None
    tpr_at_fpr: tuple[float, float] | None = None  # (fpr, tpr)
    max_advantage: float | None = None
    approximate_counts: bool = False
    reject: tuple[str, ...] = ("family",)
    reject_families: tuple[str, ...] = ("svm", "knn")
    text: str = field(default="", compare=False, repr=False)
    source: str | None = field(default=None, compare=False)

    def rejects(self, rule: str) -> bool:
        """Whether a failure of ``rule`` rejects the model outright."""
        return rule in self.reject

    def attribute_target(self) -> Target | None:
        """The attribute measures as a :class:`Target` (``None`` when the policy sets none)."""
        measures: list[RiskMeasure] = []
        if self.certain is not None:
            measures.append(Certain(self.certain))
        if self.confident is not None:
            measures.append(Confident(*self.confident))
        return Target(tuple(measures)) if measures else None

    def membership_target(self) -> Target | None:
        """The membership measures as a :class:`Target` (``None`` when the policy sets none)."""
        measures: list[RiskMeasure] = []
        if self.members_proved is not None:
            measures.append(MembersProved(self.members_proved))
        if self.tpr_at_fpr is not None:
            measures.append(MiaTpr(self.tpr_at_fpr[1], self.tpr_at_fpr[0]))
        return Target(tuple(measures)) if measures else None

    def target(self, membership: bool = False) -> Target | None:
        """The audit's target under this policy: the membership measures for a membership audit,
        else the attribute ones."""
        return self.membership_target() if membership else self.attribute_target()

    @property
    def sha256(self) -> str:
        """The SHA-256 of the policy's text (a preset's: of its canonical JSON)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """The policy as the schema writes it (what a file holding it would say)."""
        out: dict[str, Any] = {"name": self.name}
        if self.description:
            out["description"] = self.description
        out["structural"] = {
            "min_group_size": self.min_group_size, "min_residual_dof": self.min_residual_dof, "zeros_disclosive": self.zeros_disclosive,
            "max_generalisation_gap": self.max_generalisation_gap, "hyperparameter_rules": self.hyperparameter_rules,
            "beat_majority": self.beat_majority,
        }  # fmt: skip
        attribute: dict[str, Any] = {}
        if self.certain is not None:
            attribute["certain"] = self.certain
        if self.confident is not None:
            attribute["confident"] = {"share": self.confident[0], "at": self.confident[1]}
        membership: dict[str, Any] = {}
        if self.members_proved is not None:
            membership["members_proved"] = self.members_proved
        if self.tpr_at_fpr is not None:
            membership["tpr_at_fpr"] = {"fpr": self.tpr_at_fpr[0], "tpr": self.tpr_at_fpr[1]}
        if self.max_advantage is not None:
            membership["max_advantage"] = self.max_advantage
        out.update({"attribute": attribute, "membership": membership, "evidence": {"approximate_counts": self.approximate_counts}})
        out.update({"reject": list(self.reject), "reject_families": list(self.reject_families)})
        return out

    def cite(self) -> dict[str, Any]:
        """What a release record files of the policy: its name, where it came from, its SHA-256
        and the policy itself."""
        return {"name": self.name, "source": self.source, "sha256": self.sha256, "policy": self.to_dict()}


def _preset(policy: Policy) -> Policy:
    text = json.dumps(policy.to_dict(), sort_keys=True, separators=(",", ":"))
    return replace(policy, text=text, source=f"preset {policy.name}")


#: The presets: ``default`` (ACRO's three numbers, ppdm's attribute target, a membership advantage
#: of at most 0.2 — above the 0.1–0.18 that sampling alone gives the strongest of the black-box
#: attacks on 400 training and 170 held-out rows of a model that leaks nothing measurable,
#: ``docs/checker.md`` —, approximate evidence not counted, SVMs and kNN rejected), ``acro``
#: (ACRO's ``default.yaml``: safe_threshold 10, safe_dof_threshold 10, zeros disclosive, and
#: nothing else rejecting) and ``strict`` (larger thresholds, a membership target and an advantage
#: of at most 0.1, every rule rejecting).
PRESETS: dict[str, Policy] = {
    "default": _preset(Policy(
        description="ACRO's thresholds, ppdm's attribute target, a membership advantage of at most 0.2, approximate evidence not counted",
        max_advantage=0.2,
    )),
    "acro": _preset(Policy(
        name="acro", description="ACRO default.yaml: safe_threshold 10, safe_dof_threshold 10, zeros_are_disclosive true",
        certain=None, confident=None, reject=("family",),
    )),
    "strict": _preset(Policy(
        name="strict", description="larger thresholds, a membership target, every failed rule rejects",
        min_group_size=20, min_residual_dof=20, max_generalisation_gap=0.05, certain=0, confident=(0.005, 0.8),
        members_proved=0, tpr_at_fpr=(0.01, 0.02), max_advantage=0.1, reject=RULES,
    )),
}  # fmt: skip


@cache
def policy_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) every policy file satisfies, shipped in the package."""
    return dict(json.loads(files("ppdm.check").joinpath("policy.schema.json").read_text(encoding="utf-8")))


def read_policy(policy: Policy | str | Path | None) -> Policy | None:
    """A :class:`Policy` from itself, a preset's name (:data:`PRESETS`) or a YAML file; ``None`` stays ``None``."""
    if policy is None or isinstance(policy, Policy):
        return policy
    if isinstance(policy, str) and policy in PRESETS:
        return PRESETS[policy]
    if not isinstance(policy, (str, Path)):
        raise PolicyError(f"policy: give a preset ({', '.join(PRESETS)}) or a YAML file, got {type(policy).__name__}")
    path = Path(policy)
    if not path.is_file() and not path.suffix:
        raise PolicyError(f"policy {str(policy)!r}: neither a preset ({', '.join(PRESETS)}) nor a file")
    text = read_text(path, "policy", limit=MAX_POLICY_BYTES, error=PolicyError)
    note_read(path)
    return load_policy(load_yaml(text, str(path)), where=str(path), text=text)


def load_policy(data: Any, where: str = "policy", text: str | None = None) -> Policy:
    """A :class:`Policy` from the mapping a policy file holds, every key checked against the schema."""
    if not isinstance(data, dict):
        raise PolicyError(f"{where}: a policy is a mapping (name:, structural:, attribute:, ...), got {type(data).__name__}")
    _known(data, policy_schema()["properties"], where)
    base = data.get("extends", "default")
    if base not in PRESETS:
        raise PolicyError(f"{where}: extends: {base!r} is not a preset ({', '.join(PRESETS)})")
    values: dict[str, Any] = {"name": _string(data.get("name", PRESETS[base].name if "extends" in data else "custom"), f"{where}: name")}
    if "description" in data:
        values["description"] = _string(data["description"], f"{where}: description")
    values.update(_structural(data.get("structural", {}), f"{where}: structural"))
    values.update(_attribute(data.get("attribute"), f"{where}: attribute"))
    values.update(_membership(data.get("membership"), f"{where}: membership"))
    evidence = _mapping(data.get("evidence", {}), f"{where}: evidence", ("approximate_counts",))
    if "approximate_counts" in evidence:
        values["approximate_counts"] = _flag(evidence["approximate_counts"], f"{where}: evidence: approximate_counts")
    for key, allowed in (("reject", RULES), ("reject_families", FAMILIES)):
        if key in data:
            values[key] = _names(data[key], allowed, f"{where}: {key}")
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return replace(PRESETS[base], **values, text=canonical if text is None else text, source=where)


_STRUCTURAL = ("min_group_size", "min_residual_dof", "zeros_disclosive", "max_generalisation_gap", "hyperparameter_rules", "beat_majority")


def _structural(data: Any, where: str) -> dict[str, Any]:
    block = _mapping(data, where, _STRUCTURAL)
    out: dict[str, Any] = {}
    for key in ("min_group_size", "min_residual_dof"):
        if key in block:
            out[key] = _whole(block[key], f"{where}: {key}", 1 if key == "min_group_size" else 0)
    for key in ("zeros_disclosive", "hyperparameter_rules", "beat_majority"):
        if key in block:
            out[key] = _flag(block[key], f"{where}: {key}")
    if "max_generalisation_gap" in block:
        out["max_generalisation_gap"] = _share(block["max_generalisation_gap"], f"{where}: max_generalisation_gap")
    return out


def _attribute(data: Any, where: str) -> dict[str, Any]:
    if data is None:
        return {}
    block = _mapping(data, where, ("certain", "confident"))
    out: dict[str, Any] = {"certain": None, "confident": None}
    if "certain" in block:
        out["certain"] = _whole(block["certain"], f"{where}: certain", 0)
    if "confident" in block:
        c = _mapping(block["confident"], f"{where}: confident", ("share", "at"), required=True)
        at = _share(c["at"], f"{where}: confident: at")
        if at == 0:
            raise PolicyError(f"{where}: confident: at must be in (0, 1], got 0")
        out["confident"] = (_share(c["share"], f"{where}: confident: share"), at)
    return out


def _membership(data: Any, where: str) -> dict[str, Any]:
    if data is None:
        return {}
    block = _mapping(data, where, ("members_proved", "tpr_at_fpr", "max_advantage"))
    out: dict[str, Any] = {"members_proved": None, "tpr_at_fpr": None, "max_advantage": None}
    if "members_proved" in block:
        out["members_proved"] = _whole(block["members_proved"], f"{where}: members_proved", 0)
    if "tpr_at_fpr" in block:
        t = _mapping(block["tpr_at_fpr"], f"{where}: tpr_at_fpr", ("fpr", "tpr"), required=True)
        fpr = _share(t["fpr"], f"{where}: tpr_at_fpr: fpr")
        if not 0 < fpr < 1:
            raise PolicyError(f"{where}: tpr_at_fpr: fpr must be in (0, 1), got {fpr:g}")
        out["tpr_at_fpr"] = (fpr, _share(t["tpr"], f"{where}: tpr_at_fpr: tpr"))
    if "max_advantage" in block:
        out["max_advantage"] = _share(block["max_advantage"], f"{where}: max_advantage")
    return out


# -- checked values ---------------------------------------------------------------------------------
def _known(data: dict[Any, Any], allowed: Any, where: str) -> None:
    for key in data:
        if key not in allowed:
            raise PolicyError(f"{where}: unknown key {key!r} (known: {', '.join(allowed)})")


def _mapping(data: Any, where: str, keys: tuple[str, ...], required: bool = False) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise PolicyError(f"{where}: expected a mapping of {', '.join(keys)}, got {type(data).__name__}")
    _known(data, keys, where)
    missing = [k for k in keys if k not in data]
    if required and missing:
        raise PolicyError(f"{where}: missing {', '.join(missing)}")
    return data


def _whole(value: Any, where: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise PolicyError(f"{where}: expected a whole number ≥ {least}, got {value!r}")
    return int(value)


def _share(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
        raise PolicyError(f"{where}: expected a number in [0, 1], got {value!r}")
    return float(value)


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise PolicyError(f"{where}: expected true or false, got {value!r}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise PolicyError(f"{where}: expected a non-empty text, got {value!r}")
    return value


def _names(value: Any, allowed: tuple[str, ...], where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise PolicyError(f"{where}: expected a list of {', '.join(allowed)}, got {type(value).__name__}")
    for name in value:
        if name not in allowed:
            raise PolicyError(f"{where}: unknown {name!r} (known: {', '.join(allowed)})")
    if len(set(value)) != len(value):
        raise PolicyError(f"{where}: a name is listed twice")
    return tuple(value)


def with_policy(policy: Policy | str | Path | None, target: Any, membership: bool) -> tuple[Any, Policy | None]:
    """The target an audit runs with under ``policy`` (its attribute target, or its membership one
    for a membership audit) and the policy read; ``target`` and a policy together are refused
    (the policy is the one place the target is set)."""
    rules = read_policy(policy)
    if rules is None:
        return target, None
    if target is not None:
        raise PolicyError("give the policy or a target, not both: the policy's attribute: and membership: blocks are its target")
    return rules.target(membership), rules


def cite_policy(audit: Any, policy: Policy | None) -> Any:
    """``audit`` with the ``policy`` it was judged under (``audit.policy``: what the release record cites)."""
    if policy is not None:
        setattr(audit, "policy", policy)  # noqa: B010  (an Audit or RegressionAudit; the record reads it when present)
    return audit
