"""A model known only by its outputs: the checker's reading of a CSV of predicted probabilities
for a model built elsewhere (issue 46, "any classifier in"; ``ppdm check --scores S.csv``).

The researcher hands over the model's predicted probabilities on each training row (one column
per class, named by it; rows in the training table's order) and, for the generalisation gap and
the majority-class test, on each held-out row. What the outputs show is checked exactly as for
any classifier (:mod:`ppdm.check.classes`: groups of equal probability vectors are the
equivalence classes, a probability 0 is a class disclosure, small groups; :mod:`ppdm.check.gap`
on the held-out rows' scores). What needs the model itself is never passed silently: its family,
its residual degrees of freedom and its hyperparameters are ``not checked`` —
:data:`UNMEASURED` — so such a model is at best released with conditions.

The file is read by :func:`ppdm.attacks.membership.blackbox.read_probabilities` (a row per record, every
value a number in [0, 1]); beyond it each column must be a class of the class column, every
training class must have its column, and each row must sum to 1 within :data:`SUM_TOLERANCE`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.membership.blackbox import read_probabilities
from ppdm.check.findings import Finding
from ppdm.check.model import Checked
from ppdm.errors import DataError, PpdmError, shown

__all__ = ["SUM_TOLERANCE", "UNMEASURED", "Scored", "ScoresOnly", "read_scored", "unmeasured"]

#: How far a row's probabilities may sum from 1.
SUM_TOLERANCE = 1e-6

#: What a rule that needs the model itself says of a model known by its outputs.
UNMEASURED = "not measured: only the model's outputs were given"

#: Why each such rule needs the model.
_NEEDS = {
    "family": "its family, and so whether the policy rejects it on sight, is unknown",
    "residual_dof": "its parameters cannot be counted",
    "hyperparameters": "its settings are unknown",
}


class ScoresOnly:
    """The classifier behind a scores file: its classes (the file's columns), nothing else. It
    answers no ``predict_proba``: its outputs are the file's rows, read by :class:`Scored`."""

    def __init__(self, classes: list[str], where: str) -> None:
        self.classes_ = np.asarray(classes, dtype=object)
        self.checker_name = f"the model of {where}"

    def predict_proba(self, X: Any) -> np.ndarray:
        raise PpdmError(f"{self.checker_name} is known by its scores files only: it predicts no other rows")


@dataclass(frozen=True)
class Scored:
    """A model known by its outputs: ``checked`` (its classes and class column), its predicted
    probabilities on the training rows (``train``) and on the held-out rows (``holdout``), and
    each scores file's source, SHA-256 and rows (``files``)."""

    checked: Checked
    train: np.ndarray
    holdout: np.ndarray | None
    files: dict[str, dict[str, Any]]


def unmeasured(rule: str, limit: float | None = None) -> Finding:
    """The ``not checked`` finding of a rule that needs the model itself (see the module docstring)."""
    return Finding(rule, "not checked", None, limit, "none", f"{UNMEASURED} ({_NEEDS[rule]})")


def _source(scores: Any, rows: int) -> dict[str, Any]:
    if not isinstance(scores, (str, Path)):
        return {"source": None, "sha256": None, "rows": rows}
    return {"source": str(scores), "sha256": hashlib.sha256(Path(scores).read_bytes()).hexdigest(), "rows": rows}


def _probabilities(scores: Any, table: pd.DataFrame, what: str, classes: list[str], class_attribute: str) -> np.ndarray:
    """The checked probabilities of ``scores`` on ``table``'s rows, columns in ``classes``' order."""
    try:
        read = read_probabilities(scores, len(table), rows=what)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"{scores}: not a CSV of predicted probabilities ({str(exc).splitlines()[0][:120]})") from None
    where = read.where
    columns = [str(c) for c in read.table.columns]
    for column in columns:
        if column not in classes:
            raise DataError(f"{where}: column {column!r} is not a class of {class_attribute!r} in the training table (its classes: {', '.join(map(repr, classes[:8]))})")
    missing = [c for c in classes if c not in columns]
    if missing:
        raise DataError(f"{where}: no column for the class {missing[0]!r} of {class_attribute!r}: one column per class")
    proba = read.table.to_numpy(float)[:, [columns.index(c) for c in classes]]
    off = np.abs(proba.sum(axis=1) - 1.0) > SUM_TOLERANCE
    if off.any():
        at = int(np.argmax(off))
        raise DataError(f"{where}, row {at}: the probabilities sum to {shown(float(proba[at].sum()))}, not 1 (within {SUM_TOLERANCE:g})")
    return np.asarray(proba)


def read_scored(scores: Any, data: pd.DataFrame, class_attribute: str, holdout: pd.DataFrame | None = None, holdout_scores: Any = None) -> Scored:
    """A :class:`Scored` from ``scores`` (a CSV file or DataFrame: the model's predicted
    probabilities per training row of ``data``) and ``holdout_scores`` (the same per row of
    ``holdout``; both or neither); one-line :class:`~ppdm.errors.DataError` on bad input."""
    if (holdout is None) != (holdout_scores is None):
        raise DataError("held-out rows of a model known by its outputs need their scores: give both the held-out rows and their scores (--holdout and --holdout-scores)")
    labels = data[class_attribute].dropna().astype(str).unique().tolist()
    classes = sorted(labels)
    train = _probabilities(scores, data, "training rows", classes, class_attribute)
    held = None if holdout is None else _probabilities(holdout_scores, holdout, "held-out rows", classes, class_attribute)
    where = str(scores) if isinstance(scores, (str, Path)) else "the predicted probabilities"
    files = {"scores": _source(scores, len(data))}
    if holdout is not None:
        files["holdout_scores"] = _source(holdout_scores, len(holdout))
    return Scored(Checked(ScoresOnly(classes, where), class_attribute, None, files["scores"]["source"]), train, held, files)
