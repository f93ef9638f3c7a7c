"""The numeric secret of a published regressor: each person's proved interval, and the prior's.

The attacker holds a regressor (:mod:`ppdm.tree.regression`) and the known columns of every
training record; the secret is the model's numeric target. Every leaf of every tree (every
boosting round) is a linear row over the targets (:mod:`ppdm.exact.target_rows`), so the set of
target vectors consistent with the model and the attacker's knowledge is a polytope, and each
person's **proved interval** ``[min y_i, max y_i]`` over it holds in every consistent dataset, the
truth included (:mod:`ppdm.exact.target_bounds`):

* by default the bounds of **bound propagation** over the rows: sound (an outer bound of the
  tight interval) and fast (every row and record at once, a few sweeps: seconds on 30,000 records
  and 100 boosting rounds); exact on a single tree;
* with ``exact=True`` the **tight** bounds, one linear programme (HiGHS) per group of
  interchangeable records, within a time budget; records not reached keep the propagated bounds.
  ``details["bounds"]`` says which the result reports, person by person in ``method``.

**The estimate** is the centre of the proved interval: the guess whose worst error over every
consistent dataset is smallest (half the interval's width, a proved bound on the error). A
maximum-entropy density on the interval would need a model of how targets spread inside it that
the rows do not give; the centre needs none and its error bound is proved.

**Pinned**: a person whose interval is at most ``tolerance`` wide (the user's unit: ``1000`` for
an income in dollars). **The baseline** is the prior: every person's target lies in the domain
``[lo, hi]`` (the column's range in the table, or declared), width ``hi − lo``, centre as guess;
nobody is pinned by the prior unless the domain itself is narrower than the tolerance.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.scope import Scope, with_scope
from ppdm.attacks.core.threat import ThreatModel, required_threat, threat_from_dict
from ppdm.defaults import LP_SECONDS
from ppdm.errors import DataError, PpdmError
from ppdm.exact.target_bounds import PropagationOptions, lp_bounds, propagate
from ppdm.exact.target_rows import as_forest, target_rows
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

#: An interval this narrow, relative to the domain's width, pins its person whatever the tolerance:
#: the published values' float precision (the rows' τ) keeps even a leaf of one record that wide.
PRECISION = 1e-6



@dataclass
class IntervalResult:
    """Per person the proved interval of the numeric secret, the estimate, and the prior's interval.

    ``lower``/``upper``/``estimate``/``method`` per record (``method``: ``"propagation"`` or
    ``"linear programme"``); ``truth`` the true targets when the table holds them; ``targets``
    the records audited (not known individuals); ``domain`` the prior's interval.
    """

    sensitive: str
    threat: ThreatModel
    lower: np.ndarray
    upper: np.ndarray
    method: np.ndarray
    targets: np.ndarray
    domain: tuple[float, float]
    tolerance: float
    truth: np.ndarray | None = None
    row_ids: np.ndarray | None = None
    details: dict[str, Any] = field(default_factory=dict)
    point: np.ndarray | None = None

    @property
    def estimate(self) -> np.ndarray:
        """``point`` when the attack gives one (a sensitive input's maximum-entropy posterior mean,
        :mod:`ppdm.attacks.models.regression_input`), else the centre of each proved interval (module
        docstring); ``details["estimate"]`` names it."""
        return (self.lower + self.upper) / 2.0 if self.point is None else self.point

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower

    def __repr__(self) -> str:
        """One line of counts, not the per-record intervals."""
        lo, hi = self.domain
        return f"<IntervalResult on {self.sensitive!r}: {len(self.lower):,} records, {int(self.pinned.sum()):,} pinned, prior interval [{lo:g}, {hi:g}]>"

    @property
    def pinned(self) -> np.ndarray:
        """Records audited whose proved interval is at most ``tolerance`` wide (or, at least, as
        narrow as the model's float precision: :data:`PRECISION` of the domain's width)."""
        lo, hi = self.domain
        return (self.width <= max(self.tolerance, PRECISION * max(hi - lo, 1.0))) & self.targets

    def summary(self) -> dict[str, Any]:
        """What is printed, reported and written: counts, widths and errors, each beside the prior's."""
        t = self.targets
        lo, hi = self.domain
        prior_width = hi - lo
        out: dict[str, Any] = {
            "kind": "regression",
            "sensitive": self.sensitive,
            "people": int(t.sum()),
            "tolerance": self.tolerance,
            "pinned": int(self.pinned.sum()),
            "mean_width": float(self.width[t].mean()) if t.any() else 0.0,
            "median_width": float(np.median(self.width[t])) if t.any() else 0.0,
            "baseline": {
                "domain": [lo, hi], "width": prior_width, "estimate": (lo + hi) / 2.0,
                "pinned": int(t.sum()) if prior_width <= self.tolerance else 0,
            },  # fmt: skip
            "bounds": self.details.get("bounds", "propagation"),
            "secret": self.details.get("secret", "target"),
            "estimate": self.details.get("estimate", CENTRE),
        }
        if self.truth is not None and t.any():
            err = np.abs(self.estimate - self.truth)[t]
            out["truth_inside"] = bool(((self.lower <= self.truth) & (self.truth <= self.upper))[t].all())
            out["mean_abs_error"] = float(err.mean())
            out["baseline"]["mean_abs_error"] = float(np.abs((lo + hi) / 2.0 - self.truth[t]).mean())
        return with_scope(out, self.details, len(self.lower))  # what was read, once (:mod:`ppdm.attacks.core.scope`)

    def people(self) -> pd.DataFrame:
        """One row per record: its interval, estimate, whether pinned, and the truth when known."""
        out = pd.DataFrame({
            "row": np.arange(len(self.lower)) if self.row_ids is None else self.row_ids,
            "target": self.targets, "lower": self.lower, "upper": self.upper, "width": self.width,
            "estimate": self.estimate, "pinned": self.pinned, "method": self.method,
        })  # fmt: skip
        if self.truth is not None:
            out["truth"] = self.truth
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON: the threat model, the summary, the details and every person's interval
        (read back by :meth:`from_dict`)."""
        people = self.people()
        return {
            "format": RESULT_FORMAT,
            "threat": self.threat.to_dict(),
            "summary": self.summary(),
            "details": {k: (v.to_json() if isinstance(v, Scope) else v) for k, v in self.details.items() if k != "rounds"},
            "people": {c: [_plain(v) for v in people[c].tolist()] for c in people.columns},
        }


    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "the result") -> IntervalResult:
        """The result :meth:`to_dict` wrote (``ppdm audit --out`` for a regressor), e.g. to draw
        its report again; a file that is not one is refused in one line naming ``where``."""
        try:
            summary, people = data["summary"], data["people"]
            domain = summary["baseline"]["domain"]
            truth = people.get("truth")
            point = None if summary.get("estimate", CENTRE) == CENTRE else np.asarray(people["estimate"], dtype=float)
            return cls(
                sensitive=str(summary["sensitive"]),
                threat=threat_from_dict(data["threat"], f"{where}: threat"),
                lower=np.asarray(people["lower"], dtype=float),
                upper=np.asarray(people["upper"], dtype=float),
                method=np.asarray(people["method"], dtype=object),
                targets=np.asarray(people["target"], dtype=bool),
                domain=(float(domain[0]), float(domain[1])),
                tolerance=float(summary["tolerance"]),
                truth=None if truth is None else np.asarray(truth, dtype=float),
                row_ids=np.asarray(people["row"]),
                details=dict(data.get("details", {})),
                point=point,
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)[:100]
            raise PpdmError(f"{where}: not a regressor's audit as ppdm audit --out writes it ({what})") from None


#: What the estimate is when the attack gives no other (``details["estimate"]``).
CENTRE = "interval centre"

#: The ``format`` of a regressor's audit as JSON (:meth:`IntervalResult.to_dict`).
RESULT_FORMAT = "ppdm-regression-result"


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def interval_attack(
    model: Tree | Forest,
    table: pd.DataFrame,
    threat: ThreatModel,
    *,
    tolerance: float = 0.0,
    domain: Sequence[float] | None = None,
    exact: bool = False,
    time_limit: float | None = None,
    exact_time_limit: float | None = None,
    row_ids: np.ndarray | None = None,
) -> IntervalResult:
    """Each person's proved interval of a regressor's target (module docstring).

    ``threat``: resolved against ``table``; its sensitive column must be the model's target.
    ``domain``: the prior's ``(lo, hi)`` (default: the target column's range in ``table``, which
    must then hold it); every true target must lie in it. ``exact``: tighten the propagated
    bounds by linear programmes within ``exact_time_limit`` seconds (default :data:`LP_SECONDS`).
    ``time_limit``: seconds for the propagation (sound at any stop).
    """
    start = time.monotonic()
    threat = required_threat("interval_attack", threat)
    target = model.class_attribute
    if not np.isfinite(tolerance) or tolerance < 0:
        raise PpdmError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if threat.sensitive != target:
        raise PpdmError(
            f"interval_attack proves intervals of the regressor's target {target!r}; a numeric input ({threat.sensitive!r}) is "
            "audited by ppdm.attacks.models.regression_input.input_interval_attack (ppdm.audit picks it)"
        )
    truth = _truth(table, target)
    lo, hi = _domain(domain, truth, target)
    n = len(table)
    magnitude = max(abs(lo), abs(hi))
    rows = target_rows(model, table, list(threat.known or ()), magnitude)
    box_lo, box_hi = np.full(n, lo), np.full(n, hi)
    targets = np.ones(n, dtype=bool)
    individuals = np.asarray(threat.known_individuals, dtype=np.intp)
    if len(individuals):
        if truth is None:
            raise DataError(f"known individuals need their targets: the table has no column {target!r}")
        box_lo[individuals] = box_hi[individuals] = truth[individuals]
        targets[individuals] = False
    if truth is not None:
        _check_truth(rows, truth)
    propagated = propagate(rows.matrix, rows.lower, rows.upper, box_lo, box_hi, PropagationOptions(time_limit=time_limit))
    lower, upper = propagated.lo, propagated.hi
    method = np.full(n, "propagation", dtype=object)
    details: dict[str, Any] = {
        "rows": rows.n_rows, "bounds": "propagation", "propagation_rounds": propagated.rounds,
        "propagation_converged": propagated.converged, "propagation_seconds": round(propagated.seconds, 3),
        "rounds": rows.rounds.summary(), "scope": Scope.of_model_rows(rows.rounds, as_forest(model).combine == "additive"),
        "undecided_paths": int((~rows.decided).sum()),
    }  # fmt: skip
    if exact:
        open_ = np.flatnonzero(targets & (upper - lower > 1e-9 * max(hi - lo, 1.0)))
        open_ = open_[np.argsort(upper[open_] - lower[open_], kind="stable")]
        seconds = LP_SECONDS if exact_time_limit is None else exact_time_limit
        tight = lp_bounds(rows.matrix, rows.lower, rows.upper, box_lo, box_hi, start_lo=lower, start_hi=upper, records=open_, time_limit=seconds)
        lower, upper = tight.lo, tight.hi
        method[tight.solved] = "linear programme"
        solved = int(tight.solved[open_].sum())
        details.update({
            "bounds": "linear programme" if solved == len(open_) else "linear programme where solved, propagation elsewhere",
            "programmes": tight.programmes, "lp_seconds": round(tight.seconds, 3), "lp_solved": solved, "lp_open": int(len(open_)),
        })  # fmt: skip
    details["seconds"] = round(time.monotonic() - start, 3)
    return IntervalResult(target, threat, lower, upper, method, targets, (lo, hi), float(tolerance), truth, row_ids, details)


def _truth(table: pd.DataFrame, target: str, role: str = "target") -> np.ndarray | None:
    if target not in table.columns:
        return None
    try:
        values = table[target].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"column {target!r} is the regressor's {role} and must be numeric") from None
    bad = ~np.isfinite(values)
    if bad.any():
        at = int(np.argmax(bad))
        raise DataError(f"column {target!r} holds {table[target].iloc[at]!r} (row {at}), not a finite number")
    return values


def _domain(domain: Sequence[float] | None, truth: np.ndarray | None, target: str) -> tuple[float, float]:
    """The prior's interval: declared, or the target column's range."""
    if domain is None:
        if truth is None or not len(truth):
            raise DataError(f"the table has no column {target!r}: declare the target's domain (lo, hi)")
        return float(truth.min()), float(truth.max())
    try:
        lo, hi = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise PpdmError(f"domain must be two numbers (lo, hi), got {domain!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise PpdmError(f"domain must be two finite numbers lo <= hi, got {domain!r}")
    if truth is not None:
        out = (truth < lo) | (truth > hi)
        if out.any():
            at = int(np.argmax(out))
            raise DataError(f"column {target!r}: row {at} holds {truth[at]:g}, outside the declared domain [{lo:g}, {hi:g}]")
    return lo, hi


def _check_truth(rows: Any, truth: np.ndarray) -> None:
    """The true targets meet every row (the table is the training data), or a one-line error names the leaf."""
    off = rows.violations(truth)
    if off.any():
        j = int(np.argmax(off))
        raise DataError(
            f"tree {int(rows.tree[j])}, leaf {int(rows.leaf[j])}: the table's targets miss what the model publishes there by "
            f"{float(off[j]):.6g}: audit the rows the model was fitted on, in its order"
        )


