"""The shadow models' confidences kept on disk between runs, keyed by what they depend on: the
estimator's class and parameters, the attacker's data (inputs and labels), the number of shadow
models and the seed. A changed parameter or a changed row is another key: a miss, never a stale
answer.

Only numbers are stored (``confidences.npy``, ``inside.npy``: models × points, read with
``allow_pickle=False``) and a ``key.json`` naming what they were computed from; no model is
pickled, so a cache folder from elsewhere can at worst hold wrong numbers of the right shape,
never code. Each file is written whole (:func:`ppdm.files.atomic_path`); ``key.json`` last, so a
run stopped halfway leaves an entry that reads as absent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import PpdmError
from ppdm.files import atomic_path, write_atomic

__all__ = ["data_digest", "load_shadows", "params_digest", "save_shadows", "shadow_key"]


def _value_text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array{value.shape}{value.dtype}:" + hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k!r}:{_value_text(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_value_text(v) for v in value) + "]"
    if hasattr(value, "get_params"):
        return f"{type(value).__module__}.{type(value).__qualname__}"  # its parameters are listed beside (deep)
    return repr(value)


def params_digest(estimator: Any) -> str:
    """A hash of the estimator's class and every parameter (``get_params(deep=True)``)."""
    params = estimator.get_params(deep=True) if hasattr(estimator, "get_params") else {}
    text = f"{type(estimator).__module__}.{type(estimator).__qualname__}|" + _value_text(dict(params))
    return hashlib.sha256(text.encode()).hexdigest()


def data_digest(X: pd.DataFrame | np.ndarray, y: np.ndarray) -> str:
    """A hash of the rows (values, column names and types, in order) and their labels."""
    h = hashlib.sha256()
    if isinstance(X, pd.DataFrame):
        h.update(repr([(str(c), str(t)) for c, t in X.dtypes.items()]).encode())
        h.update(pd.util.hash_pandas_object(X, index=False).to_numpy().tobytes())
    else:
        array = np.ascontiguousarray(X)
        h.update(f"{array.shape}{array.dtype}".encode())
        h.update(array.tobytes() if array.dtype != object else repr(array.tolist()).encode())
    h.update(pd.util.hash_pandas_object(pd.Series(np.asarray(y, dtype=object).astype(str)), index=False).to_numpy().tobytes())
    return h.hexdigest()


def shadow_key(estimator: Any, X: pd.DataFrame | np.ndarray, y: np.ndarray, shadows: int, seed: int) -> dict[str, Any]:
    """What the shadow models' confidences depend on, and its hash (``key["id"]``)."""
    key: dict[str, Any] = {"params": params_digest(estimator), "data": data_digest(X, y), "shadows": int(shadows), "seed": int(seed), "version": 1}
    key["id"] = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    return key


def load_shadows(folder: str | Path, key: dict[str, Any], points: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The cached (confidences, inside) for ``key`` over ``points`` points, or ``None`` (absent,
    written for another key, or of another shape)."""
    entry = Path(folder) / str(key["id"])
    try:
        stored = json.loads((entry / "key.json").read_text(encoding="utf-8"))
        if stored != key:
            return None
        confidences = np.load(entry / "confidences.npy", allow_pickle=False)
        inside = np.load(entry / "inside.npy", allow_pickle=False)
    except (OSError, ValueError):
        return None
    shape = (int(key["shadows"]), points)
    if confidences.shape != shape or inside.shape != shape or confidences.dtype != np.float64 or inside.dtype != bool:
        return None
    return confidences, inside


def save_shadows(folder: str | Path, key: dict[str, Any], confidences: np.ndarray, inside: np.ndarray) -> Path:
    """Store the shadow models' confidences under ``key`` (see the module docstring); the entry's folder."""
    root = Path(folder)
    if root.exists() and not root.is_dir():
        raise PpdmError(f"{root}: the shadow-model cache must be a folder")
    entry = root / str(key["id"])
    entry.mkdir(parents=True, exist_ok=True)
    for name, array in (("confidences.npy", np.asarray(confidences, dtype=np.float64)), ("inside.npy", np.asarray(inside, dtype=bool))):
        with atomic_path(entry / name) as tmp, open(tmp, "wb") as handle:
            np.save(handle, array, allow_pickle=False)
    write_atomic(entry / "key.json", json.dumps(key, sort_keys=True))
    return entry
