"""One row per person: the per-record view of an :class:`~ppdm.attacks.core.result.AttackResult`.

Read from the result's JSON form (:meth:`AttackResult.to_dict`), so that a report can be made
from a saved audit as well as from one just run. Each record keeps its row id in the user's table
(``rows``, 0 = the first data row), its QI group, and, when the audit had the true sensitive
values, its true value, the attacker's confidence in it and what the prior alone gives it (the
baseline of :mod:`ppdm.metrics.baseline`, paper 000 §4.3's sensitive distribution).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from ppdm.errors import ReportError
from ppdm.metrics.baseline import at_least, is_certain
from ppdm.tree.leaf_pairs import LeafPairs


@dataclass
class Persons:
    """Per record (arrays of one length) and per group (``posterior``, ``records``)."""

    row: np.ndarray
    group: np.ndarray
    target: np.ndarray
    truth: np.ndarray | None
    posterior: np.ndarray
    prior: np.ndarray | None

    @property
    def n(self) -> int:
        return len(self.row)

    @property
    def guess(self) -> np.ndarray:
        """Per group: the attacker's most likely value (index into the values)."""
        return self.posterior.argmax(axis=1)

    @property
    def certain_group(self) -> np.ndarray:
        return is_certain(self.posterior.max(axis=1))

    def confidence(self) -> np.ndarray | None:
        """Per record: the attacker's probability of the true value."""
        if self.truth is None:
            return None
        return self.posterior[self.group, self.truth]

    def prior_confidence(self) -> np.ndarray | None:
        """Per record: the probability the prior alone gives the true value."""
        if self.truth is None or self.prior is None:
            return None
        return self.prior[self.truth]

    def right(self) -> np.ndarray | None:
        return None if self.truth is None else self.guess[self.group] == self.truth

    def certain_right(self) -> np.ndarray:
        """Per record: proved (certain and, when the truth is known, right) and a target."""
        certain = self.certain_group[self.group] & self.target
        right = self.right()
        return certain if right is None else certain & right

    def at_risk(self, threshold: float) -> np.ndarray | None:
        """Per record: a target held at ``threshold`` or more in their true value."""
        confidence = self.confidence()
        return None if confidence is None else at_least(confidence, threshold) & self.target


def persons_of(result: dict[str, Any]) -> Persons:
    """The :class:`Persons` of an attack result in its JSON form."""
    groups = result["groups"]
    counts = np.array([len(g["rows"]) for g in groups], dtype=np.intp)
    row = np.fromiter(chain.from_iterable(g["rows"] for g in groups), dtype=np.int64, count=int(counts.sum()))
    group = np.repeat(np.arange(len(groups)), counts)
    has_truth = bool(groups) and all("truth" in g for g in groups)
    truth = np.fromiter(chain.from_iterable(g["truth"] for g in groups), dtype=np.intp, count=len(row)) if has_truth else None
    target = (
        np.fromiter(chain.from_iterable(g["targets"] for g in groups), dtype=bool, count=len(row))
        if has_truth and all("targets" in g for g in groups)
        else np.ones(len(row), dtype=bool)
    )
    posterior = np.array([g["posterior"] for g in groups], dtype=float).reshape(len(groups), len(result["values"]))
    return Persons(row, group, target, truth, posterior, _prior(result))


def leaf_pairs_of(result: dict[str, Any]) -> LeafPairs | None:
    """The (tree, leaf) pairs each group of an attack result's JSON can reach (its groups'
    ``leaf_pairs``); ``None`` when no group has them: a rule-set audit, or a result written
    before ppdm recorded them, whose report then tables the provenance texts as they are."""
    groups = result["groups"]
    have = sum("leaf_pairs" in g for g in groups)
    if have == 0:
        return None
    if have < len(groups):
        raise ReportError(f"{len(groups) - have} of {len(groups)} groups have no leaf_pairs: the result is incomplete")
    try:
        return LeafPairs.from_lists([g["leaf_pairs"] for g in groups])
    except (TypeError, ValueError) as exc:
        raise ReportError(str(exc)) from None


def _prior(result: dict[str, Any]) -> np.ndarray | None:
    """P(x) from the summary's baseline, in the order of ``values`` (``None`` without the truth)."""
    prior = result.get("summary", {}).get("baseline", {}).get("prior")
    if prior is None:
        return None
    return np.array([float(prior.get(str(v), 0.0)) for v in result["values"]])


def persons_from_report(attack: dict[str, Any]) -> Persons:
    """The :class:`Persons` of one attack of a report (the inverse of :func:`_people`)."""
    people, n = attack["people"], len(attack["people"]["row"])
    posterior = np.array(attack["groups"]["posterior"], dtype=float).reshape(-1, len(attack["values"]))
    return Persons(
        row=np.array(people["row"], dtype=np.int64),
        group=np.array(people["group"], dtype=np.intp),
        target=np.ones(n, dtype=bool) if people["target"] is None else np.array(people["target"], dtype=bool),
        truth=None if people["truth"] is None else np.array(people["truth"], dtype=np.intp),
        posterior=posterior,
        prior=None if people["prior"] is None else np.array(people["prior"], dtype=float),
    )
