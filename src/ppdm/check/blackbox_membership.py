"""The membership evidence of a model ppdm reads by its outputs: the black-box attacks on the
training rows (members) against the held-out rows (non-members), as the policy's ``membership``
rule (issue 46, deliverable 3; the attacks of issue 45).

The attacker queries the model's predicted probabilities (:mod:`ppdm.attacks.membership.blackbox`):
the confidence attack (Yeom et al., CSF 2018, §3.2), LiRA offline and online (Carlini et al., IEEE
S&P 2022) and RMIA (Zarifzadeh et al., ICML 2024), the shadow models clones of the estimator fitted
on random halves of the candidates. A model known by a CSV of its probabilities cannot be refitted:
the confidence attack alone reads it. Each attack is measured against the truth the checker holds
(who is a training row) by its membership advantage (the best threshold's TPR − FPR, Yeom et al.
Definition 4, :func:`ppdm.metrics.membership.membership_advantage`), its AUC and its TPR at the
policy's FPR, and beside two baselines: **the control**, the same attack telling one random half
of the held-out rows from the other (what it reaches on non-members alone: the sampling noise of
the measurement), and **no model** (advantage 0, TPR = FPR).

The rule reads the strongest attack on each measure (the habit "never weaker than a simple
attack"): ``max_advantage``, ``tpr_at_fpr`` and ``members_proved`` (a black-box attack proves
nobody a member: 0). Its strength: ``estimated`` when the portfolio ran (a statistic of the rows
held out); ``approximate`` when the confidence attack alone did (a scores file: a lower bound on
what an attacker holding the model reaches, not the strongest attacker the rule is about), or
when the policy's FPR budget holds less than one held-out row (the TPR there is read between the
ROC curve's first points). A measure beyond its limit fails, ``estimated`` whichever attack
measured it (an attack that breaks the limit broke it); within it, approximate evidence alone is ``not checked`` unless the policy
counts it. The evidence also gives the sampling margin of the advantage, the Dvoretzky–Kiefer–
Wolfowitz band of the two empirical distributions at 95 % (Massart 1990): distribution-free,
sqrt(ln(40)/2m) + sqrt(ln(40)/2n) for m members and n non-members.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.membership.blackbox import BlackboxOptions, BlackboxResult, attack_row, blackbox_membership
from ppdm.attacks.membership.mia_confidence import confidence_scores, true_class_confidence
from ppdm.check.findings import Finding
from ppdm.check.model import Checked
from ppdm.check.policy import Policy
from ppdm.metrics.membership import membership_advantage, tpr_at_fpr
from ppdm.tree.forest import is_model

__all__ = ["ADVANTAGE", "membership_check", "sampling_margin"]

#: The advantage measure's name in the finding.
ADVANTAGE = "advantage"


def sampling_margin(members: int, non_members: int, alpha: float = 0.05) -> float:
    """The DKW half-width at level ``1 − alpha`` of TPR − FPR measured on these counts (module docstring)."""
    if members == 0 or non_members == 0:
        return math.inf
    return math.sqrt(math.log(4 / alpha) / (2 * members)) + math.sqrt(math.log(4 / alpha) / (2 * non_members))


def _limits(policy: Policy) -> dict[str, float]:
    out: dict[str, float] = {}
    if policy.max_advantage is not None:
        out[ADVANTAGE] = policy.max_advantage
    if policy.tpr_at_fpr is not None:
        out["tpr"] = policy.tpr_at_fpr[1]
    if policy.members_proved is not None:
        out["members_proved"] = float(policy.members_proved)
    return out


def _refittable(checked: Checked) -> bool:
    """Whether the shadow attacks can clone and refit the model (a scikit-learn-style estimator)."""
    model = checked.model
    return not is_model(model) and all(hasattr(model, a) for a in ("fit", "get_params", "predict_proba", "classes_"))


def _attacked(checked: Checked, data: pd.DataFrame, holdout: pd.DataFrame, proba: np.ndarray, held_proba: np.ndarray, options: BlackboxOptions) -> BlackboxResult:
    """The black-box attacks on the training rows then the held-out rows (the truth: the first ones)."""
    klass = checked.class_attribute
    labels = np.concatenate([data[klass].to_numpy(), holdout[klass].to_numpy()])
    truth = np.r_[np.ones(len(data), bool), np.zeros(len(holdout), bool)]
    if _refittable(checked):
        candidates = pd.concat([checked.features(data), checked.features(holdout)], ignore_index=True)
        return blackbox_membership(checked.model, candidates, labels, truth=truth, options=options)
    confidence = true_class_confidence(np.vstack([proba, held_proba]), labels, checked.classes())
    return BlackboxResult({"confidence": confidence_scores(confidence)}, truth, {"seed": options.seed, "candidates": len(labels), "reference": 0})


def _rows(found: BlackboxResult, fpr: float | None) -> list[dict[str, Any]]:
    """Per attack its row (:func:`~ppdm.attacks.membership.blackbox.attack_row`) with its advantage,
    its control's advantage and, at the policy's FPR, both TPRs."""
    truth = np.asarray(found.truth, dtype=bool)
    seed = int(found.details.get("seed", 0))
    outside = np.flatnonzero(~truth)
    half = np.random.default_rng(seed).random(len(outside)) < 0.5  # attack_row's control split
    rows = []
    for name, score in found.scores.items():
        row = attack_row(name, truth, score, seed)
        row["advantage"] = membership_advantage(truth, score)
        row["control_advantage"] = membership_advantage(half, score[outside])
        if fpr is not None:
            row["tpr@policy"] = tpr_at_fpr(truth, score, fpr)
            row["control_tpr@policy"] = tpr_at_fpr(half, score[outside], fpr) if 0 < half.sum() < len(half) else math.nan
        rows.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return rows


def membership_check(
    checked: Checked, data: pd.DataFrame, holdout: pd.DataFrame | None, proba: np.ndarray, held_proba: np.ndarray | None, policy: Policy,
    options: BlackboxOptions | bool | None = None,
) -> tuple[Finding | None, list[dict[str, Any]]]:
    """The ``membership`` finding of the black-box attacks under ``policy`` and their table (see
    the module docstring); ``(None, [])`` when the policy sets no membership limit. ``proba`` and
    ``held_proba``: the model's predicted probabilities on the training and held-out rows;
    ``options``: the attacks' settings (``None``: the defaults; ``False``: none run)."""
    limits = _limits(policy)
    if not limits:
        return None, []
    limit = limits.get(ADVANTAGE, limits.get("tpr", limits.get("members_proved")))
    if options is False:
        return Finding("membership", "not checked", None, limit, "none", "the black-box membership attacks were not run"), []
    if holdout is None or held_proba is None:
        why = "no held-out rows: the membership attacks are measured on the training rows against people outside them (--holdout)"
        return Finding("membership", "not checked", None, limit, "none", why), []
    opts = options if isinstance(options, BlackboxOptions) else BlackboxOptions()
    found = _attacked(checked, data, holdout, proba, held_proba, opts)
    fpr = policy.tpr_at_fpr[0] if policy.tpr_at_fpr is not None else None
    rows = _rows(found, fpr)
    return _judge(rows, limits, fpr, len(data), len(holdout), policy), rows


def _strongest(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return max(rows, key=lambda r: -1.0 if r.get(key) is None else float(r[key]))


def _judge(rows: list[dict[str, Any]], limits: dict[str, float], fpr: float | None, members: int, non_members: int, policy: Policy) -> Finding:
    """The finding from the table: each measure at the attack reaching the highest, the baselines, the strength."""
    portfolio = len(rows) > 1
    values: dict[str, tuple[float, str]] = {"members_proved": (0.0, "a black-box attack proves nobody")}
    parts = []
    if ADVANTAGE in limits or "tpr" not in limits:
        top = _strongest(rows, "advantage")
        values[ADVANTAGE] = (float(top["advantage"]), top["attack"])
        parts.append(
            f"membership advantage {top['advantage']:.3f} ({top['attack']}, {top['paper']}; ±{sampling_margin(members, non_members):.2f} sampling margin, DKW 95 %)"
            f"{f', limit {limits[ADVANTAGE]:g}' if ADVANTAGE in limits else ''}; baseline: the same attack on held-out rows alone (control) "
            f"{_num(top.get('control_advantage'))}, no model 0"
        )
    if fpr is not None:
        top = _strongest(rows, "tpr@policy")
        values["tpr"] = (float(top["tpr@policy"]), top["attack"])
        parts.append(
            f"TPR {top['tpr@policy']:.3f} at {fpr:g} FPR ({top['attack']}, limit {limits['tpr']:g}); baseline: control {_num(top.get('control_tpr@policy'))}, no model {fpr:g}"
        )
    best_auc = _strongest(rows, "auc")
    which = f"the strongest of {len(rows)} black-box attacks" if portfolio else "the confidence attack alone (the model's outputs only: LiRA and RMIA refit the estimator)"
    shown = (
        f"{'; '.join(parts)}; AUC {_num(best_auc.get('auc'))} (control {_num(best_auc.get('control_auc'))}); {which}, "
        f"{members:,} training rows against {non_members:,} held-out rows"
    )
    failed = [(name, v, by) for name, (v, by) in values.items() if name in limits and v > limits[name] + 1e-12]
    if failed:
        name, value, by = failed[0]
        return Finding("membership", "failed", value, limits[name], "estimated", f"{shown}: {by} breaks the limit on {name}")
    thin = fpr is not None and non_members * fpr < 1
    strength = "estimated" if portfolio and not thin else "approximate"
    head = values.get(ADVANTAGE, values.get("tpr", values["members_proved"]))[0]
    limit = limits.get(ADVANTAGE, limits.get("tpr", limits.get("members_proved")))
    if strength == "approximate" and not policy.approximate_counts:
        why = "the confidence attack alone" if not portfolio else f"fewer than one held-out row in the {fpr:g} FPR budget"
        return Finding("membership", "not checked", head, limit, "approximate", f"{shown}: within the limits by approximate evidence ({why}); policy {policy.name!r} does not count it")
    return Finding("membership", "passed", head, limit, strength, f"{shown}: within the limits")


def _num(value: Any) -> str:
    return "–" if value is None else f"{float(value):.3f}"
