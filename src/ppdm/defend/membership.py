"""The membership measures of a defense search's candidates (issue 27): every candidate audited
for membership over one population, the training rows (members) and a sample of people who were
not training records (non-members) the publisher gives.

* A candidate that publishes counts: the membership audit (:func:`ppdm.attacks.membership.audit.
  membership_attack`, the class known, the population holding every training record): the
  members it proves, and at any false-positive rate the higher TPR of P(member) and of the
  confidence attack on the candidate's answers (Yeom et al. 2018; the shadow-model attacks are
  left to the audit of the model chosen), measured against the truth the search knows by construction.
* A candidate that publishes labels only is not measured: no count is there for the audit to
  read, yet its leaves still tell (a learner that makes no empty leaf shows that some training
  record reaches each one: a leaf only one candidate reaches proves it a member), so reading it as
  the attacker without the model would not be sound. It is listed as failed, never chosen.
* An ε-DP candidate (noisy counts, which the audit cannot take as exact): pure ε-DP with
  add/remove-one neighbours answers membership's own question and bounds every test of it:
  TPR ≤ min(e^ε·FPR, 1 − e^−ε·(1 − FPR)) (Kairouz, Oh & Viswanath, *The Composition Theorem for
  Differential Privacy*, ICML 2015, Theorem 2.1 with δ = 0), and no one is proved (a likelihood
  ratio bounded by e^ε leaves no certainty). The bound covers the model's numeric split bounds
  only when they are public (:mod:`ppdm.learn.dp_tree`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.attacks.core.target import MembershipEvidence
from ppdm.attacks.membership.audit import FLAGS, membership_attack, with_blackbox
from ppdm.attacks.membership.blackbox import BlackboxOptions
from ppdm.defend.candidates import Candidate
from ppdm.errors import DataError, PpdmError
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

__all__ = ["MembershipPopulation", "dp_tpr_bound", "membership_evidence", "membership_population"]

#: A non-member sample's column that, when present, marks members (their rows are left out: the
#: members are the training rows).
MEMBER_COLUMN = "member"


@dataclass(frozen=True)
class MembershipPopulation:
    """The candidates of every membership audit of the search: the training rows, then the
    non-members (``candidates``, indexed from 0), and who is which (``truth``)."""

    candidates: pd.DataFrame
    truth: np.ndarray

    @property
    def n_members(self) -> int:
        return int(self.truth.sum())


def membership_population(data: pd.DataFrame, non_members: pd.DataFrame, columns: list[str]) -> MembershipPopulation:
    """The training rows ``data`` as members and ``non_members`` (people who were not training
    records, with every one of ``columns``: the model's inputs and its class) as non-members; a
    ``member`` column in ``non_members`` keeps its false rows only."""
    if not isinstance(non_members, pd.DataFrame):
        raise DataError(f"membership= must be a DataFrame of people who were not training records, got {type(non_members).__name__}")
    sample = non_members
    if MEMBER_COLUMN in sample.columns:
        flags = sample[MEMBER_COLUMN].map(FLAGS)
        if flags.isna().any():
            at = int(np.argmax(flags.isna().to_numpy()))
            raise DataError(f"the non-member sample's column {MEMBER_COLUMN!r}, row {sample.index[at]!r}: {sample[MEMBER_COLUMN].iloc[at]!r} is not true/false")
        sample = sample[~flags.to_numpy(bool)]
    if len(sample) == 0:
        raise DataError("the non-member sample holds nobody: the membership measures compare members with non-members")
    for column in columns:
        if column not in sample.columns:
            raise DataError(f"the non-member sample lacks column {column!r}, which the candidates may read (the membership audit needs every input and the class)")
        missing = sample[column].isna().to_numpy()
        if missing.any():
            raise DataError(f"the non-member sample's column {column!r}, row {sample.index[int(np.argmax(missing))]!r}: missing value")
        _check_seen(data[column], sample[column], column)
    candidates = pd.concat([data[columns], sample[columns]], ignore_index=True)
    truth = np.r_[np.ones(len(data), dtype=bool), np.zeros(len(sample), dtype=bool)]
    return MembershipPopulation(candidates, truth)


def _check_seen(training: pd.Series, sample: pd.Series, column: str) -> None:
    """Refuse a non-member whose categorical value no training row holds: the candidates' models
    know no such value (and without any model such a person is told a non-member)."""
    if pd.api.types.is_numeric_dtype(training) and not isinstance(training.dtype, pd.CategoricalDtype):
        return
    unseen = ~sample.astype(object).isin(set(training.astype(object))).to_numpy()
    if unseen.any():
        at = int(np.argmax(unseen))
        raise DataError(
            f"the non-member sample's column {column!r}, row {sample.index[at]!r}: {sample.iloc[at]!r} is held by no training row "
            f"({int(unseen.sum()):,} such row(s)): no candidate model knows it, and without a model such a person is told a "
            "non-member; leave them out"
        )


def membership_evidence(model: Tree | Forest, population: MembershipPopulation, candidate: Candidate) -> MembershipEvidence:
    """What the membership attacker gets from ``model`` as published (see the module docstring)."""
    if candidate.noisy:
        epsilon = candidate.params.get("epsilon")
        if epsilon is None:
            raise PpdmError("noisy counts without a privacy budget ε: the membership audit takes counts as exact")
        eps = float(epsilon)
        return MembershipEvidence(0, lambda fpr: dp_tpr_bound(eps, fpr), f"membership: the ε-DP bound (ε={eps:g})")
    if model.disclosure is Disclosure.LABELS:
        raise PpdmError(
            "labels only: no count for the membership audit to read, yet a leaf still shows that a training record reached it "
            "(not measured)"
        )
    result = membership_attack(model, population.candidates, truth=population.truth)
    # and the confidence attack on the candidate's own answers (no shadow model: cheap for every
    # candidate), so that no candidate is measured weaker than the simplest attacker
    result = with_blackbox(result, model, population.candidates, population.truth, class_attribute=model.class_attribute, options=CONFIDENCE)
    return MembershipEvidence(int((result.state == 1).sum()), result.tpr_at, "membership+confidence")


#: The black-box attack each candidate of the search meets: the confidence attack (Yeom et al. 2018).
CONFIDENCE = BlackboxOptions(attacks=("confidence",))


def dp_tpr_bound(epsilon: float, fpr: float) -> float:
    """The largest TPR any membership test reaches at false-positive rate ``fpr`` against a pure
    ε-DP release: min(e^ε·FPR, 1 − e^−ε·(1 − FPR)) (Kairouz, Oh & Viswanath 2015, Theorem 2.1)."""
    return float(min(1.0, math.exp(epsilon) * fpr, 1.0 - math.exp(-epsilon) * (1.0 - fpr)))
