"""What the prior alone gives, and how far an attack goes beyond it.

An attacker's accuracy or exposure count means nothing without the baseline of an attacker who
knows only the sensitive attribute's distribution P(x) (the prior): they guess the most frequent
value for everyone and hold each person's true value with confidence P(true value). Every attack
result reports, next to its own figures:

* the prior and its majority guess, with the accuracy that guess reaches;
* the lift of the attack's accuracy over it (difference and ratio);
* 95 % Wilson score intervals for every rate (Wilson, 1927: the interval that stays inside [0, 1]
  and keeps its coverage for small counts and rates near 0 or 1);
* per confidence threshold t, the people the attack holds at confidence ≥ t in their true value,
  and among them those whom the prior alone does not hold at ≥ t (the exposure the model causes);
* certain guesses (confidence within :data:`CERTAINTY_TOL` of 1) split into right and wrong: a wrong
  certain guess is a failure of the attack, never an exposure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: One tolerance for "certain" everywhere: a probability within this of 1 counts as 1.
CERTAINTY_TOL = 1e-9

DEFAULT_THRESHOLDS = (0.5, 0.8, 0.9, 1.0)


def at_least(confidence: np.ndarray, threshold: float) -> np.ndarray:
    """``confidence >= threshold`` with the one certainty tolerance."""
    return np.asarray(confidence) >= threshold - CERTAINTY_TOL


def is_certain(confidence: np.ndarray) -> np.ndarray:
    return at_least(confidence, 1.0)


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a binomial rate (95 % by default); (0, 1) when ``n`` is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def prior_distribution(true_codes: np.ndarray, n_values: int) -> np.ndarray:
    """P(x): the sensitive values' frequencies in the table."""
    counts = np.bincount(true_codes, minlength=n_values).astype(float)
    return counts / counts.sum() if counts.sum() else np.full(n_values, 1.0 / n_values)


def _rate(hits: int, n: int) -> dict[str, Any]:
    lo, hi = wilson_interval(hits, n)
    return {"rate": hits / n if n else 0.0, "ci95": [round(lo, 6), round(hi, 6)]}


def disclosure_summary(
    posterior: np.ndarray,
    true_codes: np.ndarray,
    prior: np.ndarray,
    values: Sequence[object],
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
) -> dict[str, Any]:
    """The attack against the prior on the target records.

    ``posterior``: ``(records, values)`` the attacker's distribution for each target record;
    ``true_codes``: each record's true value; ``prior``: P(x).
    """
    n = len(true_codes)
    rows = np.arange(n)
    confidence = posterior[rows, true_codes]
    guess = posterior.argmax(axis=1) if n else np.zeros(0, dtype=np.intp)
    right = guess == true_codes
    majority = int(np.argmax(prior))
    base_right = true_codes == majority
    prior_conf = prior[true_codes]
    certain = is_certain(posterior.max(axis=1)) if n else np.zeros(0, dtype=bool)
    accuracy = float(right.mean()) if n else 0.0
    baseline = float(base_right.mean()) if n else 0.0
    out: dict[str, Any] = {
        "attacker_accuracy": accuracy,
        "attacker_accuracy_ci95": _rate(int(right.sum()), n)["ci95"],
        "baseline": {
            "prior": {str(v): round(float(p), 6) for v, p in zip(values, prior)},
            "majority_guess": str(values[majority]),
            "accuracy": baseline,
            "accuracy_ci95": _rate(int(base_right.sum()), n)["ci95"],
            "mean_confidence_in_true_value": float(prior_conf.mean()) if n else 0.0,
        },
        "lift": {"difference": accuracy - baseline, "ratio": accuracy / baseline if baseline > 0 else None},
        "mean_confidence_in_true_value": float(confidence.mean()) if n else 0.0,
        "certain_right": int((certain & right).sum()),
        "certain_wrong": int((certain & ~right).sum()),
        "confidence_in_true_value": {},
    }
    for t in thresholds:
        attack = at_least(confidence, t)
        by_prior = at_least(prior_conf, t)
        out["confidence_in_true_value"][f">={t:g}"] = {
            "people": int(attack.sum()),
            "share_ci95": _rate(int(attack.sum()), n)["ci95"],
            "prior_alone": int(by_prior.sum()),
            "beyond_prior": int((attack & ~by_prior).sum()),
        }
    return out
