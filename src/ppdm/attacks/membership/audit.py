"""Membership disclosure: who was in the training set, estimated and proved (issue 27).

**Threat model.** The attacker holds the published model and a *population* of candidates, some
of them training records (members), the rest not; of each candidate they know the whole record
the model reads: every input the model splits on and, by default, the class (``class_known``;
with ``class_known=False`` the inputs only, the class unknown). Knowing some inputs with the rest
unknown is refused (a candidate's leaf would be a set of leaves; not supported yet). By default
the population holds every training record (``complete=True``: the published counts are then
equalities over it); ``complete=False`` reads them as upper bounds only. The published training
size ``n`` is known.

**Rows.** Each published count bounds the membership bits of the candidates reaching its leaf
(:mod:`ppdm.maxent.constraints.membership_rows`): exactly for trees that hold every training row
once (a single tree, a forest without bootstrap, boosting rounds fitted on every row), by bounds
and a soft row for bagged trees (bootstrap multiplicities redrawn from each tree's seed, matched to
no candidate: which member holds which draw is unknown). Boosted models give rows from the rounds
that publish counts the candidates can be tied to: the first round's class counts (XGBoost,
scikit-learn; derived from its cover and leaf values, :mod:`ppdm.tree.boosting`), every round's
leaf sample counts where the library stores them (LightGBM without bagging, scikit-learn), and
every round fitted on every training row gives rows with real coefficients: the attacker scores
each candidate with the rounds before, so a leaf's value and cover are linear in the bits with the
candidates' gradients and hessians as coefficients
(:mod:`ppdm.maxent.constraints.boosting_membership_rows`).

**Estimate and proof.** The proof (:mod:`ppdm.exact.membership`) settles proved members and
non-members over all trees jointly; the estimate (:mod:`ppdm.maxent.solvers.bernoulli`) is the
maximum-entropy belief over the remaining bits, each candidate's P(member). With the truth known
(a boolean column or array), the result measures the score as Carlini et al. 2022 do (AUC, TPR
at 0.1 % and 1 % FPR, :mod:`ppdm.metrics.membership`), checks that no proof is wrong, and states
the baseline: the member share of the population (the prior; a model-free attacker's AUC is 0.5).

**Never weaker than a black-box attack** (issue 45). With the black-box attacks run on the same
candidates (:func:`ppdm.attacks.membership.blackbox.blackbox_membership`: confidence, LiRA, RMIA), the result
holds their table beside the white-box estimate's row, and the rates it reports (``summary()``,
``tpr_at``, what a target's verdict reads) are the strongest measured, each rate at the attack
reaching it: a verdict never reads "met" while an attack in the table breaks the target. A model
ppdm cannot read as trees (a logistic regression, an SVM, an MLP) gets the black-box attacks alone
(:func:`blackbox_only`). On an incomplete population the white-box side holds a second attack, the
count ratio (:mod:`ppdm.attacks.membership.count_ratio`): upper bounds alone leave the
maximum-entropy belief flat wherever none binds, yet each count still weighs its cell's members
against the candidates reaching it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.scope import Scope, scope_of
from ppdm.attacks.membership.blackbox import BlackboxResult, attack_row, strongest_row
from ppdm.attacks.membership.count_ratio import NAME as COUNT_RATIO
from ppdm.attacks.membership.count_ratio import PARTNERS, count_ratio_scores, stouffer
from ppdm.errors import DataError, PpdmError, check_options
from ppdm.exact.membership import MembershipProof, ProofOptions, prove_membership
from ppdm.maxent.constraints.membership_rows import MembershipRows, membership_rows
from ppdm.maxent.constraints.rule_membership_rows import rule_membership_rows
from ppdm.maxent.solvers.bernoulli import BernoulliOptions, BernoulliSolution, solve_bernoulli
from ppdm.metrics.membership import FPRS, membership_metrics, tpr_at_fpr
from ppdm.rules.ruleset import RuleSet
from ppdm.tree.forest import Forest, is_model
from ppdm.tree.model import Tree

__all__ = ["MembershipOptions", "MembershipResult", "blackbox_only", "membership_attack", "members_by_id"]

#: The white-box estimate's name in the table of attacks.
WHITE_BOX = "ppdm"

STATES = {1: "member", 0: "non-member", -1: "undecided"}
#: Why a tree (rule) gave the membership audit no row: its counts cannot be tied to the candidates.
NO_COUNTS = "their counts cannot be tied to the candidates (rows counted an unknown number of times)"

#: The spellings of a membership flag in a truth column (``True == 1`` and ``False == 0`` as keys).
FLAGS: dict[Any, bool] = {True: True, False: False, "true": True, "false": False, "True": True, "False": False, "1": True, "0": False, "yes": True, "no": False}


@dataclass(frozen=True)
class MembershipOptions:
    """The proof's and the estimate's settings (:class:`ProofOptions`, :class:`BernoulliOptions`);
    ``estimate=False`` keeps the proof alone (P(member) is then the prior for undecided candidates);
    ``rounds=False`` leaves out a boosted model's leaf-value and cover rows (its 0/1 counts only,
    as before every round was read)."""

    proof: ProofOptions = ProofOptions()
    solver: BernoulliOptions = BernoulliOptions()
    estimate: bool = True
    rounds: bool = True

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


@dataclass
class MembershipResult:
    """Per candidate P(member) (``probability``; 1/0 for proved members/non-members) and ``state``
    (1 proved member, 0 proved non-member, -1 undecided), the candidates' row ids, the truth when
    known, the rows read, and ``details`` (the threat model, trees used, times, the metrics)."""

    probability: np.ndarray
    state: np.ndarray
    row_ids: np.ndarray
    truth: np.ndarray | None
    rows: MembershipRows
    details: dict[str, Any] = field(default_factory=dict)
    blackbox: BlackboxResult | None = None
    #: The candidates the attacker knew were non-members: given, not inferred, so left out of every rate.
    known: np.ndarray | None = None
    #: On an incomplete pool, the count-ratio attack's score per candidate (:mod:`ppdm.attacks.membership.count_ratio`).
    count_ratio: np.ndarray | None = None

    @property
    def white_box(self) -> bool:
        """Whether the white-box estimate read the model (not a black-box audit alone)."""
        return bool(self.details.get("white_box", True))

    def scores(self) -> dict[str, np.ndarray]:
        """Every attack's score per candidate: the white-box P(member) (``"ppdm"``), on an
        incomplete pool the count-ratio attack's, each black-box attack's, and the count ratio
        combined with RMIA's (:func:`~ppdm.attacks.membership.count_ratio.stouffer`)."""
        own = {WHITE_BOX: self.probability} if self.white_box else {}
        black = self.blackbox.scores if self.blackbox is not None else {}
        if self.count_ratio is not None:
            own[COUNT_RATIO] = self.count_ratio
            partner = next((name for name in PARTNERS if name in black), None)
            if partner is not None:
                black = {**black, f"{COUNT_RATIO}+{partner}": stouffer(self.count_ratio, black[partner])}
        return {**own, **black}

    def judged(self) -> np.ndarray:
        """The candidates every rate is measured over: all but those the attacker knew were
        non-members (their membership is given, not inferred: counting them would sell the
        attacker's knowledge as the model's disclosure)."""
        return np.ones(self.n_candidates, dtype=bool) if self.known is None else ~self.known

    def attack_table(self) -> list[dict[str, Any]]:
        """One row per attack measured against the truth (:func:`ppdm.attacks.membership.blackbox.attack_row`:
        AUC, TPR at 0.1 % and 1 % FPR, the control) over the :meth:`judged` candidates, the
        white-box estimate's first; empty without the truth."""
        if self.truth is None:
            return []
        m = self.judged()
        truth = self.truth[m]
        if not 0 < truth.sum() < len(truth):
            return []
        seed = int(self.blackbox.details.get("seed", 0)) if self.blackbox is not None else 0
        return [_plain_row(attack_row(name, truth, score[m], seed)) for name, score in self.scores().items()]

    def strongest(self) -> str | None:
        """The strongest attack's name (most members at 1 % FPR, then 0.1 %, then AUC); ``None`` without the truth."""
        rows = self.attack_table()
        return str(strongest_row(rows)["attack"]) if rows else None

    def strongest_score(self) -> np.ndarray:
        """The strongest attack's score per candidate (the white-box P(member) without the truth)."""
        name = self.strongest()
        scores = self.scores()
        return scores[name] if name is not None else self.probability

    @property
    def n_candidates(self) -> int:
        return len(self.probability)

    def __repr__(self) -> str:
        """One line of counts, not the per-candidate arrays."""
        state = self.state
        return (
            f"<MembershipResult over {self.n_candidates:,} candidates: {int((state == 1).sum()):,} proved members, "
            f"{int((state == 0).sum()):,} proved non-members, {int((state < 0).sum()):,} undecided>"
        )

    def people(self) -> pd.DataFrame:
        """One row per candidate: its row id, P(member), what is proved, and the truth when known."""
        out = pd.DataFrame({"row": self.row_ids, "P(member)": self.probability, "proved": [STATES[int(s)] for s in self.state]})
        if self.truth is not None:
            out["member"] = self.truth
        for name, score in self.scores().items():
            if name != WHITE_BOX:
                out[f"score:{name}"] = score
        return out

    def leaves(self, top: int = 10) -> pd.DataFrame:
        """The riskiest published cells: those proving the most members (then the most candidates
        reaching them with the highest mean P(member)); tree, leaf, class code (-1: the whole leaf),
        the count's bounds and the count published (NaN where none), candidates reaching it, proved
        members and the mean P(member)."""
        A = self.rows.A
        keep = self.rows.cell > -3  # the 0/1 cells (not the size row, nor a round's real rows)
        reach = np.asarray(A.sum(axis=1)).ravel()
        proved = A @ (self.state == 1).astype(float)
        mean = (A @ self.probability) / np.maximum(reach, 1)
        count = self.rows.count if self.rows.count is not None else np.full(self.rows.n_rows, np.nan)
        frame = pd.DataFrame({
            "tree": self.rows.tree, "leaf": self.rows.leaf, "class": self.rows.cell, "count_min": self.rows.lo,
            "count_max": self.rows.hi, "count": count, "candidates": reach, "proved_members": proved.astype(int), "mean_P(member)": mean,
        })[keep]
        return frame.sort_values(["proved_members", "mean_P(member)"], ascending=False).head(top).reset_index(drop=True)

    def tpr_at(self, fpr: float) -> float:
        """The true-positive rate a threshold on P(member) reaches with at most ``fpr`` false
        positives (:func:`ppdm.metrics.membership.tpr_at_fpr`); needs the truth."""
        if self.truth is None:
            raise PpdmError("the true-positive rate needs the truth: give truth= (who was a training record)")
        m = self.judged()
        return max(tpr_at_fpr(self.truth[m], score[m], fpr) for score in self.scores().values())

    def _strongest_rates(self) -> dict[str, Any]:
        """With more than one attack (black-box attacks, the count-ratio attack): their table, the
        white-box estimate's own rates, and each rate at the attack reaching the highest (what the
        verdict reads)."""
        if self.blackbox is None and len(self.scores()) < 2:
            return {}
        rows = self.attack_table()
        if not rows:
            return {}
        keys = ["auc", *(_key(f) for f in FPRS), *(f"{_key(f)}_thresholds" for f in FPRS)]
        out: dict[str, Any] = {"attacks": rows, "strongest": strongest_row(rows)["attack"]}
        if self.white_box:
            out["white_box_rates"] = {k: rows[0][k] for k in keys}
        reached_by: dict[str, str] = {}
        for k in keys:
            values = [(r[k], r["attack"]) for r in rows if r.get(k) is not None]
            if values:
                out[k] = max(v for v, _ in values)
                reached_by[k] = next(a for v, a in values if v == out[k])  # the first in the table on a tie
        out["reached_by"] = reached_by
        return out

    def summary(self) -> dict[str, Any]:
        """Counts of what is proved, the baseline and, with the truth, the metrics and wrong proofs."""
        out: dict[str, Any] = {
            "candidates": self.n_candidates,
            "published_members": self.rows.n_members,
            "proved_members": int((self.state == 1).sum()),
            "proved_non_members": int((self.state == 0).sum()),
            "undecided": int((self.state < 0).sum()),
            "baseline_member_share": min(self.rows.n_members / max(self.n_candidates, 1), 1.0),
        }
        if self.truth is not None:
            m = self.judged()
            out.update(membership_metrics(self.truth[m], self.probability[m]))
            out.update(self._strongest_rates())
            out["baseline_member_share"] = float(self.truth[m].mean())
            out["wrong_proved_members"] = int(((self.state == 1) & ~self.truth).sum())
            out["wrong_proved_non_members"] = int(((self.state == 0) & self.truth).sum())
        out.update({k: v for k, v in self.details.items() if k in ("threat", "complete", "known_non_members", "trees_used", "note", "seconds", "white_box_seconds", "proof_settled", "max_violation", "white_box")})
        if self.blackbox is not None:
            out["blackbox"] = {k: v for k, v in self.blackbox.details.items() if k != "seed"}
        out["scope"] = scope_of(self.details, self.n_candidates).to_json()  # what was read, once (:mod:`ppdm.attacks.core.scope`)
        return out

    def lines(self) -> list[str]:
        """What ``ppdm audit --membership`` prints."""
        s = self.summary()
        published = f"{s['published_members']:,} training records published" if self.white_box else "the model read by its predicted probabilities only"
        lines = [
            f"membership audit of {s['candidates']:,} candidates ({published}); {s['threat']}",
            (Scope.from_json(s["scope"]).line().strip() + f" Counts read: {s['trees_used']}.") if self.white_box else "no published count read: the black-box attacks alone.",
            f"proved members: {s['proved_members']:,}; proved non-members: {s['proved_non_members']:,}; undecided: {s['undecided']:,}"
            + ("" if s.get("proof_settled") else " (the proof's time budget ran out: some undecided may be decidable)")
            + (f"; known to the attacker as non-members: {s['known_non_members']:,} (left out of the rates)" if s.get("known_non_members") else ""),
            f"baseline (no model): member share {_share(s, self.details.get('complete', True))}, AUC 0.500, TPR = FPR",
        ]
        if "auc" in s:
            lines.append(_against_the_truth(s))
            lines.extend(_table_lines(s.get("attacks", [])))
            box = s.get("blackbox", {})
            if box.get("shadow_models"):
                lines.append(f"  shadow models: {box['shadow_models']}, {box.get('shadow_learner', 'clones of the target estimator')}")
            lines.append(f"wrong proofs: {s['wrong_proved_members']} members, {s['wrong_proved_non_members']} non-members")
        if s.get("note"):
            lines.append(f"note: {s['note']}")
        split = f" (white-box {s['white_box_seconds']:.1f} s, black-box attacks {s['seconds'] - s['white_box_seconds']:.1f} s)" if "white_box_seconds" in s else ""
        lines.append(f"time: {s['seconds']:.1f} s{split}")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_dict(self) -> dict[str, Any]:
        """The summary and the per-candidate columns, as JSON-ready values."""
        people = self.people()
        return {
            "membership": {k: (None if isinstance(v, float) and v != v else v) for k, v in self.summary().items()},
            "candidates": {c: people[c].tolist() for c in people.columns},
        }


def _share(s: dict[str, Any], complete: bool) -> str:
    """The member share the baseline line states: the truth's, the published members over a
    complete population's candidates, or on a sample without the truth only a bound (the pool's
    members are not known: ``min(1, published / candidates)``)."""
    share = f"{s['baseline_member_share']:.3f}"
    return share if complete or "auc" in s else f"at most {share} (how many of the pool are members is not known)"


def _against_the_truth(s: dict[str, Any]) -> str:
    """The rates against the truth, each named by the attack reaching it when they are not all one attack's."""
    shown = {"auc": "AUC", **{_key(f): f"TPR at {f:.1%} FPR".replace(".0%", "%") for f in FPRS}}
    by = s.get("reached_by", {})
    if len({by.get(k) for k in shown}) > 1:
        rates = ", ".join(f"{name} {s[k]:.3f} ({by[k]})" for k, name in shown.items())
        return f"against the truth (each rate at the attack reaching it): {rates}"
    head = f" (the strongest attack: {s['strongest']})" if s.get("strongest") else ""
    return f"against the truth{head}: " + ", ".join(f"{name} {s[k]:.3f}" for k, name in shown.items())


def _key(f: float) -> str:
    return f"tpr@{f:.1%}".replace(".0%", "%")


def _plain_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}


def _table_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The table of attacks as printed lines (attack, AUC, TPR at each budget, the control's AUC)."""
    if len(rows) < 2:
        return []
    out = ["attacks (control: the same attack telling one half of the non-members from the other):"]
    width = max(13, *(len(r["attack"]) for r in rows))
    for r in rows:
        rates = "  ".join(f"TPR@{f:.1%} {_num(r.get(_key(f)))}".replace(".0%", "%") for f in FPRS)
        out.append(f"  {r['attack']:<{width}} AUC {_num(r.get('auc'))}  {rates}  control AUC {_num(r.get('control_auc'))}")
    out.append("  baseline (no model): AUC 0.500, TPR = FPR")
    return out


def _num(v: Any) -> str:
    return "  –  " if v is None else f"{v:.3f}"


def membership_attack(
    model: Tree | Forest | RuleSet,
    population: pd.DataFrame,
    *,
    class_known: bool | None = None,
    truth: str | np.ndarray | pd.Series | None = None,
    complete: bool = True,
    options: MembershipOptions | None = None,
    non_members: str | np.ndarray | pd.Series | None = None,
) -> MembershipResult:
    """Which of ``population``'s candidates were training records of ``model`` (see the module docstring).

    ``class_known``: the attacker knows each candidate's class (default: when the population has
    the class column). ``truth``: the name of a boolean column of ``population`` (left out of the
    attacker's knowledge) or a boolean array, one per candidate. ``complete``: the population holds
    every training record. ``model`` may be a published rule set (paper 004): its supports count
    the members each rule matches (:mod:`ppdm.maxent.constraints.rule_membership_rows`); the
    attacker then knows every candidate's antecedent attributes and sensitive value.
    ``non_members``: a boolean per candidate (or the name of such a column of ``population``), those
    the attacker knows are no training record (a reference population mixed into the pool): each
    published count then bounds the members among the other candidates, and every rate is
    measured over those others (:meth:`MembershipResult.judged`). On an incomplete population (``complete=False``) no count proves a
    member, even one equal to the candidates reaching its leaf less the known non-members:
    training records outside the pool may reach that leaf too; the count-ratio attack
    (:mod:`ppdm.attacks.membership.count_ratio`) then ranks the candidates by their cells' counts
    against the candidates reaching them, beside the maximum-entropy estimate (flat where no upper
    bound binds).
    """
    options = options or MembershipOptions()
    start = time.perf_counter()
    if isinstance(model, RuleSet):
        if class_known is False:
            raise DataError("a rule set's supports count records by their sensitive value: its membership audit needs it known (class_known)")
        _checked_frame(population)
        known = True
    else:
        known = _checked_population(model, population, class_known)
    truth_bits = flags(population, truth, "truth")
    rows = rule_membership_rows(model, population, complete) if isinstance(model, RuleSet) else membership_rows(model, population, known, complete, rounds=options.rounds)
    if truth_bits is not None:
        broken = rows.truth_violations(truth_bits)
        if broken.size:
            r = int(broken[0])
            where = "the training size" if rows.cell[r] == -3 else f"rules[{rows.leaf[r]}]" if isinstance(model, RuleSet) else f"tree {rows.tree[r]} leaf {rows.leaf[r]}"
            raise DataError(
                f"the truth breaks {broken.size:,} published count(s), first {where}: the members marked are not the model's training records"
            )
    known_out = _known_non_members(flags(population, non_members, "non-member"), len(population), truth_bits)
    proof = prove_membership(rows, options.proof, known_out)
    solution = _estimate(rows, proof, options)
    details = _details(model, rows, proof, solution, known, complete, time.perf_counter() - start)
    row_ids = population.index.to_numpy()
    ratio = None if complete else count_ratio_scores(rows, proof.state)
    return MembershipResult(solution.p, proof.state, row_ids, truth_bits, rows, details, known=known_out, count_ratio=ratio)


def _known_non_members(non_members: np.ndarray | None, n: int, truth: np.ndarray | None) -> np.ndarray | None:
    """``non_members`` checked: one boolean per candidate, none of them a member by the truth."""
    if non_members is None:
        return None
    known = np.asarray(non_members)
    if known.shape != (n,) or known.dtype != bool:
        raise DataError(f"non_members must be one boolean per candidate ({n:,}), got shape {known.shape} of {known.dtype}")
    if truth is not None and (known & truth).any():
        raise DataError(f"the truth marks {int((known & truth).sum()):,} known non-member(s) as members")
    return known


def blackbox_only(blackbox: BlackboxResult, row_ids: np.ndarray, threat: str) -> MembershipResult:
    """The membership result of a model read by its predicted probabilities alone: no published
    count (nothing proved, P(member) the prior), the black-box attacks' table and scores."""
    import scipy.sparse as sp

    n = len(row_ids)
    truth = blackbox.truth
    empty = np.zeros(0)
    rows = MembershipRows(sp.csr_matrix((0, n)), empty, empty, empty.astype(int), empty.astype(int), empty.astype(int), empty, empty, np.zeros(n, int), 0, [], 0, True)
    prior = float(truth.mean()) if truth is not None else 0.5
    details: dict[str, Any] = {
        "threat": threat, "complete": True, "trees_used": "none (a model read by its predicted probabilities only)", "scope": Scope(0, {}),
        "seconds": float(blackbox.details.get("seconds", 0.0)), "proof_settled": True, "white_box": False,
    }  # fmt: skip
    if set(blackbox.scores) == {"confidence"}:
        details["note"] = "the model's predicted probabilities only: the confidence attack alone (LiRA and RMIA refit the estimator)"
    return MembershipResult(np.full(n, prior), np.full(n, -1), np.asarray(row_ids), truth, rows, details, blackbox)


def _estimate(rows: MembershipRows, proof: MembershipProof, options: MembershipOptions) -> BernoulliSolution:
    if not options.estimate:
        prior = min(rows.n_members / max(rows.n_candidates, 1), 1.0)
        p = np.where(proof.state >= 0, proof.state, prior).astype(float)
        return BernoulliSolution(p, float("nan"), 0, False, 0.0)
    # under method "auto" the solver takes the dual itself when a row is real-valued (a boosting round's)
    return solve_bernoulli(rows.A, rows.lo, rows.hi, proof.state, rows.tree, rows.target, rows.variance, options.solver)


def _checked_frame(population: pd.DataFrame) -> None:
    if not isinstance(population, pd.DataFrame):
        raise DataError(f"the population must be a DataFrame of candidates, got {type(population).__name__}")
    if len(population) == 0:
        raise DataError("the population holds no candidate")


def _checked_population(model: Tree | Forest, population: pd.DataFrame, class_known: bool | None) -> bool:
    """Whether the class is known; refuses a population lacking an input or holding a missing value."""
    _checked_frame(population)
    klass = model.class_attribute
    if class_known is None:
        class_known = klass in population.columns
    lacking = [c for c in model.split_attributes if c not in population.columns]
    if lacking:
        raise DataError(
            f"the population lacks column {lacking[0]!r}, which the model splits on: the membership audit needs every model input "
            "of each candidate (known columns with the rest unknown are not supported)"
        )
    needed = [*model.split_attributes, *([klass] if class_known else [])]
    for column in needed:
        missing = population[column].isna().to_numpy()
        if missing.any():
            at = int(np.argmax(missing))
            raise DataError(f"column {column!r}, row {population.index[at]!r}: missing value (the membership audit needs every candidate's whole record)")
    return bool(class_known)


def members_by_id(population: pd.DataFrame, id_column: str, ids: Sequence[Any] | np.ndarray | pd.Series) -> tuple[np.ndarray, dict[str, Any]]:
    """The truth from the training rows' identifiers: per candidate, whether its ``id_column``
    value is among ``ids``, and what did not match (``{"ids_not_candidates": n, "first": ...}``:
    training rows the population does not hold, counted, never dropped silently). Identifiers are
    compared as text, so ``7`` and ``"7"`` name one person; an identifier twice in the population
    is refused (which candidate would it be?)."""
    if id_column not in population.columns:
        raise DataError(f"the population has no identifier column {id_column!r} (columns: {', '.join(map(str, population.columns[:8]))})")
    column = population[id_column]
    if column.isna().any():
        raise DataError(f"column {id_column!r}, row {population.index[int(np.argmax(column.isna().to_numpy()))]!r}: a candidate without an identifier")
    own = column.astype(str).str.strip()
    twice = own.duplicated()
    if twice.any():
        at = int(np.argmax(twice.to_numpy()))
        raise DataError(f"column {id_column!r}, row {population.index[at]!r}: identifier {column.iloc[at]!r} names two candidates")
    wanted = pd.Series(np.asarray(ids, dtype=object)).astype(str).str.strip()
    if wanted.empty:
        raise DataError("no training-row identifier given: the truth needs the members' identifiers")
    members = own.isin(set(wanted)).to_numpy(bool)
    outside = wanted[~wanted.isin(set(own))]
    details: dict[str, Any] = {"ids_given": int(wanted.nunique()), "ids_not_candidates": int(outside.nunique())}
    if len(outside):
        details["first_id_not_candidate"] = str(outside.iloc[0])
    return members, details


def flags(population: pd.DataFrame, values: str | np.ndarray | pd.Series | Sequence[Any] | None, what: str) -> np.ndarray | None:
    """One boolean per candidate: the population's column named ``values`` or the values given
    (``True``/``False``, ``1``/``0``, ``true``/``false``, ``yes``/``no``); ``what`` names them in errors."""
    if values is None:
        return None
    if isinstance(values, str):
        if values not in population.columns:
            raise DataError(f"the population has no {what} column {values!r}")
        column = population[values]
        name = f"column {values!r}"
    else:
        column = pd.Series(np.asarray(values))
        name = f"the {what}"
    if len(column) != len(population):
        raise DataError(f"{name} holds {len(column):,} values for {len(population):,} candidates")
    if column.dtype == bool:
        return column.to_numpy(bool)
    mapped = column.map(FLAGS)
    bad = mapped.isna().to_numpy()
    if bad.any():
        at = int(np.argmax(bad))
        raise DataError(f"{name}, row {population.index[at]!r}: {column.iloc[at]!r} is not a membership flag (true/false, 1/0)")
    return mapped.to_numpy(bool)


def _scope(model: Tree | Forest | RuleSet, rows: MembershipRows) -> Scope:
    """The trees (rules) whose counts the membership rows read, and the others."""
    if isinstance(model, RuleSet):
        counted = set(rows.leaf[rows.cell != -3].tolist())
        return Scope(len(model.rules), {NO_COUNTS: [r for r in range(len(model.rules)) if r not in counted]} if len(counted) < len(model.rules) else {}, unit="rule")
    n = len(rows.modes)
    left = [t for t in range(n) if t not in rows.cells_per_tree]
    per_round = model.n_outputs if model.combine == "additive" else None
    return Scope(n, {NO_COUNTS: left} if left else {}, per_round)


def _details(
    model: Tree | Forest | RuleSet, rows: MembershipRows, proof: MembershipProof, solution: BernoulliSolution, class_known: bool, complete: bool, seconds: float,
) -> dict[str, Any]:
    knows = "every model input and the class" if class_known else "every model input, not the class"
    whole = "holding every training record" if complete else "holding some of the training records (counts read as upper bounds)"
    modes = rows.modes
    used = len(rows.cells_per_tree)
    kinds = sorted({m for t, m in enumerate(modes) if t in rows.cells_per_tree})
    words = f"{used} of {len(modes)} tree(s) ({', '.join(kinds)})"
    if isinstance(model, RuleSet):
        knows = f"the {len(model.quasi_identifiers)} quasi-identifiers and the sensitive value"
        counted = len(set(rows.leaf[rows.cell != -3].tolist()))
        words = f"{counted} of {len(model.rules)} rule(s) ({rows.cells_per_tree[0]})"
    elif model.combine == "additive":
        rounds = sorted({t // max(model.n_outputs, 1) for t in rows.cells_per_tree})
        of = f" of {len(modes) // max(model.n_outputs, 1)}"
        words += f"; boosting rounds used: {', '.join(map(str, rounds)) + of if len(rounds) <= 10 else f'{len(rounds)}{of} rounds'}"
    details: dict[str, Any] = {
        "threat": f"the attacker knows {knows} of each candidate, a population {whole}",
        "complete": complete,
        "trees_used": words,
        "scope": _scope(model, rows),
        "seconds": seconds,
        "proof_seconds": proof.seconds,
        "proved_by_propagation": proof.by_propagation,
        "proved_by_relaxation": proof.by_lp,
        "proof_settled": proof.settled,
        "estimate_seconds": solution.seconds,
        "estimate_iterations": solution.iterations,
        "max_violation": solution.max_violation,
        "estimate_converged": solution.converged,
    }
    notes = []
    if solution.timed_out:
        notes.append("the estimate stopped at its time limit")
    elif not solution.converged:
        notes.append(f"the estimate stopped after {solution.iterations:,} iterations short of its tolerance (rows off by up to {solution.max_violation:.2g} expected records)")
    if "bootstrap" in kinds:
        drawn = f"every member was drawn by at least {rows.min_drawn} of them" if rows.min_drawn else "some members were drawn by none of them"
        notes.append(f"bagged trees: {drawn}; their counts bound, and softly inform, who reaches each leaf")
    if notes:
        details["note"] = "; ".join(notes)
    return details


def check_membership_options(options: Any) -> MembershipOptions:
    """``options`` as :class:`MembershipOptions` (``None``: the defaults)."""
    if options is None:
        return MembershipOptions()
    if not isinstance(options, MembershipOptions):
        raise PpdmError(f"membership options must be MembershipOptions, got {type(options).__name__}")
    return options


def with_blackbox(
    result: MembershipResult | None, model: Any, candidates: pd.DataFrame, truth: str | np.ndarray | pd.Series | None, *,
    class_attribute: str | None = None, class_known: bool | None = None, reference: pd.DataFrame | None = None, options: Any = None,
) -> MembershipResult:
    """``result`` (the white-box audit, ``None`` for a model ppdm cannot read as trees) with the
    black-box attacks on ``model`` (:func:`ppdm.attacks.membership.blackbox.blackbox_membership`) when it is
    a fitted classifier with ``predict_proba`` or a classifier ppdm reads as trees (its own answers,
    the shadows by a stand-in learner: :mod:`ppdm.attacks.membership.stand_in`), and the attacker
    knows the class. ``candidates``:
    the population without the truth's columns, ``truth`` as :func:`membership_attack` takes it
    (a column name of ``candidates`` is read and left out); ``reference``: people of the same
    population for the shadow models; ``options``: :class:`~ppdm.attacks.membership.blackbox.BlackboxOptions`
    (``None``: the defaults; ``False``: none run), or the model's predicted probabilities per
    candidate (a DataFrame or CSV file, :func:`~ppdm.attacks.membership.blackbox.read_probabilities`: the
    confidence attack on them)."""
    from ppdm.attacks.membership.blackbox import BlackboxOptions, blackbox_membership, estimator_inputs, read_probabilities
    from ppdm.attacks.membership.stand_in import PublishedClassifier, stand_in_learner

    if isinstance(options, (pd.DataFrame, str, Path)):  # a model known by its predicted probabilities: the confidence attack
        model, options = read_probabilities(options, len(candidates)), BlackboxOptions(attacks=("confidence",))
    published = None  # a model read as trees: its answers, and shadows by a stand-in learner
    if is_model(model) and not model.is_regressor and model.split_attributes and (options is None or isinstance(options, BlackboxOptions)):
        model, published = PublishedClassifier(model), model
    usable = hasattr(model, "predict_proba") and hasattr(model, "classes_") and not isinstance(model, RuleSet)
    if options is False or not usable or class_known is False:
        if result is None:
            raise PpdmError(f"{type(model).__name__}: neither read as trees nor a fitted classifier with predict_proba: no membership attack applies")
        return result
    if options is not None and not isinstance(options, BlackboxOptions):
        raise PpdmError(f"blackbox= takes BlackboxOptions (or False), got {type(options).__name__}")
    bits = result.truth if result is not None else flags(candidates, truth, "truth")
    hidden = (truth,) if isinstance(truth, str) else ()
    X, klass = estimator_inputs(model, candidates, class_attribute, hidden)
    ref_X, ref_y = None, None
    if reference is not None:
        lacking = [c for c in [*X.columns, klass] if c not in reference.columns]
        if lacking:
            raise DataError(f"the reference people lack column {lacking[0]!r}, which the black-box attacks read")
        ref_X, ref_y = reference[list(X.columns)], reference[klass].to_numpy()
    said = None
    if published is not None:
        options = options or BlackboxOptions()
        if options.learner is None:
            stand_in, said = stand_in_learner(published, X)
            options = replace(options, learner=stand_in)
    found = blackbox_membership(model, X, candidates[klass].to_numpy(), reference=ref_X, reference_labels=ref_y, truth=bits, options=options)
    if said is not None:
        found.details["shadow_learner"] = said
    if result is None:
        threat = "the attacker knows every model input and the class of each candidate and queries the model's predicted probabilities"
        return blackbox_only(found, candidates.index.to_numpy(), threat)
    result.blackbox = found
    result.details["white_box_seconds"] = float(result.details.get("seconds", 0.0))
    result.details["seconds"] = result.details["white_box_seconds"] + float(found.details.get("seconds", 0.0))  # the whole audit's
    return result
