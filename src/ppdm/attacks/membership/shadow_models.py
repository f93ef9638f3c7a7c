"""Shadow models for the black-box membership attacks (Shokri et al., *Membership Inference
Attacks against Machine Learning Models*, IEEE S&P 2017, §V-A; trained as Carlini et al. 2022,
§IV-B do): clones of the target's estimator (``sklearn.base.clone``: the same class and
parameters, unfitted) fitted on random halves of the attacker's data, each point held by exactly
half of the models (the paper's keep matrix), and each model's confidence in every point's true
class. Only those confidences are kept (:mod:`ppdm.attacks.membership.shadow_cache`): LiRA and RMIA read
nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.membership.mia_confidence import true_class_confidence
from ppdm.attacks.membership.shadow_cache import load_shadows, save_shadows, shadow_key
from ppdm.errors import PpdmError
from ppdm.progress import report

__all__ = ["ShadowTable", "keep_matrix", "shadow_confidences"]


@dataclass(frozen=True)
class ShadowTable:
    """``confidence[k, i]``: shadow model k's confidence in point i's true class; ``inside[k, i]``:
    whether model k was trained on point i; ``cached``: read from the cache; ``seconds`` to fit."""

    confidence: np.ndarray
    inside: np.ndarray
    cached: bool
    seconds: float

    @property
    def n_models(self) -> int:
        return int(self.confidence.shape[0])


def keep_matrix(models: int, points: int, seed: int) -> np.ndarray:
    """Which model holds which point: each point in exactly ⌊models/2⌋ models, chosen at random
    (Carlini et al.'s ``keep``: the ranks of uniform draws over the models, per point)."""
    draws = np.random.default_rng(seed).random((models, points))
    return np.asarray(draws.argsort(axis=0).argsort(axis=0) < models // 2)


def _rows(X: pd.DataFrame | np.ndarray, mask: np.ndarray) -> Any:
    return X.iloc[np.flatnonzero(mask)] if isinstance(X, pd.DataFrame) else X[mask]


def _fit_all(estimator: Any, X: pd.DataFrame | np.ndarray, y: np.ndarray, inside: np.ndarray) -> np.ndarray:
    from sklearn.base import clone

    out = np.empty(inside.shape, dtype=float)
    for k, held in enumerate(inside):
        report("membership: fitting the shadow models", k, len(inside), "shadow models")
        model = clone(estimator)
        try:
            model.fit(_rows(X, held), y[held])
        except Exception as why:  # an estimator refusing its half (a class missing, ...): say which
            raise PpdmError(f"shadow model {k}: {type(estimator).__name__}.fit refused its half of the attacker's data ({why})") from why
        out[k] = true_class_confidence(model.predict_proba(X), y, np.asarray(model.classes_))
    return out


def shadow_confidences(
    estimator: Any,
    X: pd.DataFrame | np.ndarray,
    y: np.ndarray,
    models: int,
    seed: int = 0,
    cache: str | Path | None = None,
) -> ShadowTable:
    """Fit ``models`` shadow models on random halves of ``(X, y)`` (see the module docstring), or
    read their confidences from the ``cache`` folder when the estimator's parameters and the data
    are those they were computed from."""
    import time

    if models < 2:
        raise PpdmError(f"the shadow attacks need at least 2 shadow models (one holding each point, one not), got {models}")
    y = np.asarray(y)
    key = shadow_key(estimator, X, y, models, seed)
    if cache is not None:
        found = load_shadows(cache, key, len(y))
        if found is not None:
            return ShadowTable(found[0], found[1], True, 0.0)
    start = time.perf_counter()
    inside = keep_matrix(models, len(y), seed)
    confidence = _fit_all(estimator, X, y, inside)
    if cache is not None:
        save_shadows(cache, key, confidence, inside)
    return ShadowTable(confidence, inside, False, time.perf_counter() - start)
