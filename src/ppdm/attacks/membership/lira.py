"""The likelihood-ratio membership attack, LiRA: Carlini, Chien, Nasr, Song, Terzis & Tramèr,
*Membership Inference Attacks From First Principles*, IEEE S&P 2022, §IV (Algorithm 1).

Each candidate's statistic is the logit-scaled confidence of the model in its true class,
φ = log(p / (1 − p)) (§IV-C: it makes the per-example distribution close to Gaussian). Shadow
models trained on random halves of the attacker's data (each candidate in exactly half of them)
give, per candidate, the φ of the models that held it (IN) and of those that did not (OUT).

* **online** (§IV-B): a Gaussian fitted to each side; the score is the log-likelihood ratio
  log N(φ; μ_in, σ_in²) − log N(φ; μ_out, σ_out²);
* **offline** (§VI-C): only the OUT models (no model need be trained on the candidate); a
  one-sided test that φ is larger than the OUT distribution: the score is −log Pr[Z > φ] for
  Z ~ N(μ_out, σ_out²) (the log of the one-sided p-value, never saturating at 1).

With few shadow models each σ is the median of the candidates' standard deviations (the paper's
"fixed variance", §VI-C: better below 64 shadow models); with many, each candidate's own.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

__all__ = ["FIXED_VARIANCE_BELOW", "lira_offline", "lira_online", "logit_confidence"]

#: Below this many shadow models per side, LiRA uses one variance for every candidate (§VI-C).
FIXED_VARIANCE_BELOW = 32

#: Confidences are clipped to [EPS, 1 − EPS] before the logit (a pure leaf predicts 1 exactly).
EPS = 1e-12

#: The smallest standard deviation used (every shadow model agreeing exactly).
SIGMA_FLOOR = 1e-6


def logit_confidence(p: np.ndarray) -> np.ndarray:
    """φ = log(p / (1 − p)), ``p`` clipped to [EPS, 1 − EPS] (§IV-C)."""
    p = np.clip(np.asarray(p, dtype=float), EPS, 1.0 - EPS)
    return np.log(p) - np.log1p(-p)


def _side(phi: np.ndarray, mask: np.ndarray, fixed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate (column) the mean and standard deviation of ``phi`` over the shadow models
    (rows) where ``mask`` holds."""
    count = mask.sum(axis=0)
    if (count == 0).any():
        raise ValueError(f"candidate {int(np.argmax(count == 0))} has no shadow model on one side: train more shadow models")
    mean = np.where(mask, phi, 0.0).sum(axis=0) / count
    var = np.where(mask, (phi - mean) ** 2, 0.0).sum(axis=0) / np.maximum(count - 1, 1)
    std = np.sqrt(var)
    if fixed:
        std = np.full_like(std, float(np.median(std)))
    return mean, np.maximum(std, SIGMA_FLOOR)


def _fixed(inside: np.ndarray, fixed_variance: bool | None) -> bool:
    if fixed_variance is not None:
        return fixed_variance
    return int(min(inside.sum(axis=0).min(), (~inside).sum(axis=0).min())) < FIXED_VARIANCE_BELOW


def lira_online(target: np.ndarray, shadow: np.ndarray, inside: np.ndarray, fixed_variance: bool | None = None) -> np.ndarray:
    """Online LiRA scores: ``target`` the target model's true-class confidence per candidate,
    ``shadow`` the shadow models' (models × candidates), ``inside`` which model held which."""
    phi, shadow_phi = logit_confidence(target), logit_confidence(shadow)
    fixed = _fixed(inside, fixed_variance)
    mu_in, sd_in = _side(shadow_phi, inside, fixed)
    mu_out, sd_out = _side(shadow_phi, ~inside, fixed)
    return np.asarray(norm.logpdf(phi, mu_in, sd_in) - norm.logpdf(phi, mu_out, sd_out), dtype=float)


def lira_offline(target: np.ndarray, shadow: np.ndarray, inside: np.ndarray, fixed_variance: bool | None = None) -> np.ndarray:
    """Offline LiRA scores (the OUT models only; see the module docstring)."""
    phi, shadow_phi = logit_confidence(target), logit_confidence(shadow)
    outside = ~inside
    fixed = fixed_variance if fixed_variance is not None else int(outside.sum(axis=0).min()) < FIXED_VARIANCE_BELOW
    mu_out, sd_out = _side(shadow_phi, outside, fixed)
    return np.asarray(-norm.logsf(phi, mu_out, sd_out), dtype=float)
