"""``AttackResult``: what an attack says about each QI group and each record.

Every attack in ppdm returns one, so that reports and metrics treat them alike. For each QI group
(a distinct combination of quasi-identifiers, paper 000 §3) it holds the attacker's distribution
over the sensitive values and what caused it (*provenance*: the leaves of the group's span, or a
constraint family, in words; and, for audits of a tree or forest, ``leaf_pairs``: the (tree,
leaf) pairs the group can reach, as arrays); for each record, whether the attack is about it (``targets``) and whether the
attack, by its own definition, exposes it (``exposed``). When the true sensitive values are known
(the data publisher runs the audit on the training data) the attacker's confidence in each
record's true value is reported too.
"""

from __future__ import annotations

import json
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.scope import with_scope
from ppdm.data.qigroups import QIGroups
from ppdm.files import write_atomic
from ppdm.metrics.baseline import DEFAULT_THRESHOLDS, best_guess, disclosure_summary, is_certain, prior_distribution
from ppdm.tree.leaf_pairs import LeafPairs


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return None
    return v


@dataclass
class AttackResult:
    """The outcome of an attack on a published model.

    Attributes
    ----------
    attack: the attack's name ("homogeneity", "uniqueness", "background-knowledge", "maxent", ...).
    sensitive: the sensitive attribute; ``values`` its domain, in the columns' order.
    groups: the attacker's table (QI groups, counts, each record's group).
    posterior: ``(n_groups, n_values)``, the attacker's distribution over sensitive values.
    provenance: per group, what the posterior comes from, in words (e.g. "leaf 17"): for
        display only; nothing reads it back.
    targets: per record, whether the attack is about this person (e.g. not a known individual).
    exposed: per record, whether the attack exposes the person by its own definition.
    true_codes: per record, the index of the true sensitive value, or ``None`` if unknown.
    details: attack-specific counts (e.g. the paper's N_ℓ and N_u).
    row_ids: per record, its row number in the user's table (default: its position); rows
        left out (missing values) keep the numbers of the file.
    bounds: exact audits only: per group and value the proved ``"min"`` and ``"max"`` record
        counts over every consistent dataset, and per group whether it is ``"undecided"``.
    leaf_pairs: audits of a tree or forest: per group, the (tree, leaf) pairs its known values
        can reach (:class:`~ppdm.tree.leaf_pairs.LeafPairs`; a tree's leaves are tree 0);
        ``None`` for audits of other models (rule sets).
    std_error: a sampled estimate's Monte-Carlo standard error of every posterior (groups ×
        values); ``None`` for an exact computation. A sampled posterior proves nothing: no group
        of such a result counts as certain.
    """

    attack: str
    sensitive: str
    values: tuple
    groups: QIGroups
    posterior: np.ndarray
    provenance: MutableSequence[str]
    targets: np.ndarray
    exposed: np.ndarray
    true_codes: np.ndarray | None = None
    details: dict[str, Any] = field(default_factory=dict)
    row_ids: np.ndarray | None = None
    bounds: dict[str, np.ndarray] | None = None
    leaf_pairs: LeafPairs | None = None
    std_error: np.ndarray | None = None

    def __repr__(self) -> str:
        """One line: the attack, the secret, the table's shape and what is certain, not the
        arrays (a notebook shows ``audit.estimate`` this way; the arrays are the attributes)."""
        certain = int((self.certain_groups[self.groups.group_of_record] & self.targets).sum())
        extra = "".join(f", {k}" for k, v in (("bounds", self.bounds), ("sampled", self.std_error)) if v is not None)
        return (
            f"<AttackResult {self.attack!r} on {self.sensitive!r}: {self.groups.n_records:,} records in {self.groups.n_groups:,} groups, "
            f"{len(self.values)} values, posterior {self.posterior.shape[0]}×{self.posterior.shape[1]}, {certain:,} records certain{extra}>"
        )

    # -- per group / per record --------------------------------------------------------------
    @property
    def certain_groups(self) -> np.ndarray:
        """Groups whose sensitive value the attacker holds for sure (one tolerance: metrics.baseline);
        none from a sampled estimate (``std_error``): a posterior of 1 from samples is no proof."""
        if self.std_error is not None:
            return np.zeros(self.groups.n_groups, dtype=bool)
        return is_certain(self.posterior.max(axis=1))

    def record_posterior(self) -> np.ndarray:
        """``(n_records, n_values)``: each record's group posterior."""
        return self.posterior[self.groups.group_of_record]

    def predicted(self) -> np.ndarray:
        """The attacker's best guess for each record (index into ``values``; near-ties go to the
        value more frequent among the records, see :func:`~ppdm.metrics.baseline.best_guess`)."""
        prior = None if self.true_codes is None else prior_distribution(self.true_codes, len(self.values))
        return best_guess(self.posterior, prior)[self.groups.group_of_record]

    def confidence_in_truth(self) -> np.ndarray | None:
        """The probability the attacker gives each record's true value (``None`` if unknown)."""
        if self.true_codes is None:
            return None
        return self.record_posterior()[np.arange(len(self.true_codes)), self.true_codes]

    # -- summaries ---------------------------------------------------------------------------
    def exposed_right(self) -> np.ndarray:
        """Per record: exposed by the attack's definition and, when the truth is known, rightly so.

        A certain guess that is wrong is a failure of the attack, never an exposure.
        """
        if self.true_codes is None:
            return self.exposed
        return self.exposed & (self.predicted() == self.true_codes)

    def summary(self, thresholds: Sequence[float] = DEFAULT_THRESHOLDS) -> dict[str, Any]:
        """Counts a privacy officer reads first, each next to what the prior alone gives.

        With the true values known: the attacker's accuracy with its 95 % Wilson interval, the
        majority-guess baseline and the lift over it, people by confidence in their true value
        (and those beyond what the prior alone gives), certain guesses split into right and wrong
        (:func:`ppdm.metrics.baseline.disclosure_summary`). ``exposed_records`` counts right
        exposures only; ``exposed_wrong`` the people an attack claims but gets wrong.
        """
        targets = self.targets
        w = self.groups.record_weights
        count = (lambda m: int(m.sum())) if w is None else (lambda m: int(round(self.groups.record_sum(m))))
        certain_records = self.certain_groups[self.groups.group_of_record] & targets
        out: dict[str, Any] = {
            "attack": self.attack,
            "sensitive": self.sensitive,
            "records": int(self.groups.n_records),
            "targets": count(targets),
            "qi_groups": int(self.groups.n_groups),
            "exposed_records": count(self.exposed_right() & targets),
            "certain_records": count(certain_records),
        }
        if self.true_codes is not None:
            out["exposed_wrong"] = count(self.exposed & ~self.exposed_right() & targets)
            prior = prior_distribution(self.true_codes, len(self.values), w)
            out.update(disclosure_summary(
                self.record_posterior()[targets], self.true_codes[targets], prior, self.values, thresholds,
                None if w is None else w[targets],
            ))
        out.update({k: _plain(v) for k, v in self.details.items()})
        return with_scope(out, self.details, out["records"])  # what was read, once (:mod:`ppdm.attacks.core.scope`)

    def riskiest_groups(self, k: int = 10) -> pd.DataFrame:
        """The ``k`` groups the attacker is most confident about (ties: larger groups first),
        counting their targets only: a group of known individuals alone (the attacker already
        holds their rows) is left out, as it is of every count of the summary."""
        confidence = self.posterior.max(axis=1)
        targets = np.bincount(self.groups.group_of_record, weights=self.targets.astype(float), minlength=self.groups.n_groups)
        about = np.flatnonzero(targets > 0)
        order = about[np.lexsort((-targets[about], -confidence[about]))][:k]
        table = self.groups.table.iloc[order].reset_index(drop=True).copy()
        table["records"] = targets[order].astype(np.int64)
        prior = None if self.true_codes is None else prior_distribution(self.true_codes, len(self.values))
        table["guess"] = [self.values[i] for i in best_guess(self.posterior[order], prior)]
        table["confidence"] = confidence[order]
        table["provenance"] = [self.provenance[i] for i in order]
        return table

    # -- serialisation -----------------------------------------------------------------------
    def to_dict(self, thresholds: Sequence[float] = DEFAULT_THRESHOLDS) -> dict[str, Any]:
        """JSON-ready: the summary and, for every group, its QI values, records, posterior and
        ``rows``: the positions (from 0) of its records in the attacker's table. For a table read
        with ``load_csv`` these are its data rows in file order (header excluded), so results
        join back to the user's CSV. When the true sensitive values are known, ``truth`` holds
        each of those records' true value (an index into ``values``, in the order of ``rows``)
        and ``targets`` whether the attack is about it (a known individual is not): the report
        reads both to show each person's confidence in their true value. With ``leaf_pairs``,
        each group's ``leaf_pairs`` lists the ``[tree, leaf]`` pairs it can reach (the report's
        per-leaf table and exposure plot are drawn from them; ``provenance`` is text to read).

        Linear in the number of groups and records: every per-group column is computed once.
        """
        n = self.groups.n_groups
        hit = (self.exposed_right() & self.targets).astype(float)
        if self.groups.record_weights is not None:
            hit = hit * self.groups.record_weights
        exposed = np.bincount(self.groups.group_of_record, weights=hit, minlength=n)
        columns = zip(
            _records(self.groups.table),
            self.groups.counts.tolist(),
            exposed.astype(np.int64).tolist(),
            self.posterior.tolist(),
            self.certain_groups.tolist(),
            self.provenance,
            self.group_rows(),
        )
        groups = [
            {
                "qi": qi,
                "records": records,
                "exposed_records": n_exposed,
                "posterior": [round(p, 12) for p in posterior],
                "certain": certain,
                "provenance": provenance,
                "rows": rows,
            }
            for qi, records, n_exposed, posterior, certain, provenance, rows in columns
        ]
        if self.true_codes is not None and self.groups.record_weights is None:  # per record, so not for counted rows
            for group, truth, targets in zip(groups, self._by_group(self.true_codes), self._by_group(self.targets)):
                group["truth"], group["targets"] = truth, targets
        if self.leaf_pairs is not None:
            if self.leaf_pairs.n_groups != n:
                raise ValueError(f"leaf pairs of {self.leaf_pairs.n_groups} groups for {n} groups")
            for group, pairs in zip(groups, self.leaf_pairs.to_lists()):
                group["leaf_pairs"] = pairs
        if self.std_error is not None:
            for group, se in zip(groups, self.std_error.tolist()):
                group["std_error"] = [round(x, 12) for x in se]
        if self.bounds is not None:
            extra = zip(self.bounds["min"].tolist(), self.bounds["max"].tolist(), self.bounds["undecided"].tolist())
            for group, (lo, hi, undecided) in zip(groups, extra):
                group.update({"min_count": lo, "max_count": hi, "undecided": undecided})
        return {
            "format": "ppdm-attack-result",
            "version": 1,
            "summary": self.summary(thresholds),
            "quasi_identifiers": list(self.groups.quasi_identifiers),
            "values": [_plain(v) for v in self.values],
            "groups": groups,
        }

    def group_rows(self) -> list[list[int]]:
        """Per group, the row numbers of its records (positions, or ``row_ids`` when set; ascending).

        Empty lists when the rows grouped were counted combinations (``groups.record_weights``):
        the records' positions were never held; write each record's group back instead
        (:meth:`ppdm.data.counting.DaskCounting.with_group_ids`).
        """
        if self.groups.record_weights is not None:
            return [[] for _ in range(self.groups.n_groups)]
        order = np.arange(self.groups.n_records) if self.row_ids is None else np.asarray(self.row_ids)
        return self._by_group(order)

    def _by_group(self, per_record: np.ndarray) -> list[list[Any]]:
        """Per group, ``per_record``'s entries for its records (in record order, as ``group_rows``)."""
        order = np.argsort(self.groups.group_of_record, kind="stable")
        ends = np.cumsum(self.groups.counts).tolist()
        values = np.asarray(per_record)[order].tolist()
        return [values[start:end] for start, end in zip([0, *ends[:-1]], ends)]

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_dict` as JSON (whole or not at all: :func:`ppdm.files.write_atomic`)."""
        write_atomic(path, result_json(self.to_dict()))


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``table`` as dicts of plain Python values (missing values as ``None``)."""
    names = [str(c) for c in table.columns]
    if not names:
        return [{} for _ in range(len(table))]
    columns = [[_plain(v) for v in table[c].tolist()] for c in table.columns]
    return [dict(zip(names, values)) for values in zip(*columns)]


def result_json(payload: dict[str, Any]) -> str:
    """The JSON text of :meth:`AttackResult.to_dict` (plus any extra keys): indented, but one line
    per group, which keeps a file of thousands of groups readable and lets json's C encoder write
    it (an indented dump goes through its pure-Python encoder, several times slower)."""
    parts = []
    for key, value in payload.items():
        if key == "groups" and value:
            text = "[\n" + ",\n".join("  " + json.dumps(group, default=str) for group in value) + "\n ]"
        else:
            text = json.dumps(value, indent=1, default=str).replace("\n", "\n ")
        parts.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
