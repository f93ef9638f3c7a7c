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

#: Probabilities closer than this are a tie: the solver's last digits must not pick a guess.
TIE_TOL = 1e-6

DEFAULT_THRESHOLDS = (0.5, 0.8, 0.9, 1.0)


def best_guess(posterior: np.ndarray, prior: np.ndarray | None = None) -> np.ndarray:
    """Per row of ``posterior``, the value the attacker guesses (an index).

    Values within :data:`TIE_TOL` of the row's largest probability are tied; a tie goes to the
    value the ``prior`` favours (the baseline's own guess when nothing else separates them), then
    to the first value, so that a uniform estimate never picks its guess from solver noise.
    """
    posterior = np.asarray(posterior, dtype=float)
    if posterior.size == 0:
        return np.zeros(len(posterior), dtype=np.intp)
    tied = posterior >= posterior.max(axis=1, keepdims=True) - TIE_TOL
    rank = np.zeros(posterior.shape[1]) if prior is None else np.asarray(prior, dtype=float)
    score = np.where(tied, rank[None, :], -np.inf)
    return score.argmax(axis=1).astype(np.intp)


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


def prior_distribution(true_codes: np.ndarray, n_values: int, weights: np.ndarray | None = None) -> np.ndarray:
    """P(x): the sensitive values' frequencies in the table (``weights``: records per row)."""
    counts = np.bincount(true_codes, weights=weights, minlength=n_values).astype(float)
    return counts / counts.sum() if counts.sum() else np.full(n_values, 1.0 / n_values)


def disclosure_summary(
    posterior: np.ndarray,
    true_codes: np.ndarray,
    prior: np.ndarray,
    values: Sequence[object],
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    weights: np.ndarray | None = None,
) -> dict[str, Any]:
    """The attack against the prior on the target records.

    ``posterior``: ``(records, values)``, the attacker's distribution for each target record;
    ``true_codes``: each record's true value; ``prior``: P(x). Keys: the attacker's accuracy with
    its Wilson interval; ``baseline`` (the prior, its majority guess and that guess's accuracy);
    ``lift`` over it; per threshold the people held at that confidence in their true value
    (``confidence_in_true_value``), those the prior alone holds there (``prior_alone``) and those
    beyond it (``beyond_prior``); certain guesses split into ``certain_right`` and ``certain_wrong``.
    ``weights``: how many records each row stands for (``None``: one each).
    """
    rows = len(true_codes)
    n = rows if weights is None else int(np.sum(weights))

    def count(mask: np.ndarray) -> int:
        return int(mask.sum()) if weights is None else int(np.round((mask * weights).sum()))

    def mean(x: np.ndarray) -> float:
        return float(x.mean()) if weights is None else float((x * weights).sum() / n)

    confidence = posterior[np.arange(rows), true_codes]
    right = best_guess(posterior, prior) == true_codes if rows else np.zeros(0, dtype=bool)
    majority = int(np.argmax(prior))
    prior_confidence = prior[true_codes]
    certain = is_certain(posterior.max(axis=1)) if rows else np.zeros(0, dtype=bool)
    accuracy, baseline = (_share(right), _share(true_codes == majority)) if weights is None or not n else (mean(right), mean(true_codes == majority))
    out: dict[str, Any] = {
        "attacker_accuracy": accuracy,
        "attacker_accuracy_ci95": list(wilson_interval(count(right), n)),
        "baseline": {
            "prior": {str(v): float(p) for v, p in zip(values, prior)},
            "majority_guess": str(values[majority]),
            "accuracy": baseline,
            "accuracy_ci95": list(wilson_interval(count(true_codes == majority), n)),
            "mean_confidence_in_true_value": mean(prior_confidence) if n else 0.0,
        },
        "lift": {"difference": accuracy - baseline, "ratio": accuracy / baseline if baseline > 0 else None},
        "mean_confidence_in_true_value": mean(confidence) if n else 0.0,
        "certain_right": count(certain & right),
        "certain_wrong": count(certain & ~right),
        "confidence_in_true_value": {},
        "prior_alone": {},
        "beyond_prior": {},
    }
    for t in thresholds:
        key, attack, alone = f">={t:g}", at_least(confidence, t), at_least(prior_confidence, t)
        out["confidence_in_true_value"][key] = count(attack)
        out["prior_alone"][key] = count(alone)
        out["beyond_prior"][key] = count(attack & ~alone)
    return out


def _share(mask: np.ndarray) -> float:
    return float(mask.mean()) if len(mask) else 0.0
