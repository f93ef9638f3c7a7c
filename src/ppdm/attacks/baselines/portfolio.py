"""The attacker an audit reports: the strongest of those it measured on the same people.

An audit that reports a weaker attacker than a simple one understates the risk (habit 2). So
besides the model's estimate (maximum entropy, or what stands for it), :func:`strongest_attacker`
measures, on the audited people and against their true values:

* the **likelihood rules** (:mod:`ppdm.attacks.baselines.likelihood`: ART's white-box rule, the Bayes rule,
  the model's own prediction), when the attacker knows every other input and the class or the
  predicted label;
* with a **reference sample**, the model-free attacker fitted on it
  (:func:`~ppdm.attacks.baselines.reference.imputation_attack`), pooled with the estimate;
* each simpler attacker **restricted to the values the estimate leaves possible**
  (:func:`combined_attack` with ``pool=False``): the estimate never rules out a person's true
  value (the truth is feasible; a sampled estimate is not used this way), so the restriction is
  never less accurate than the attacker alone on anyone, and it keeps the estimate's proved
  certainties.

It reports the most accurate (ties to the estimate), lists every one's accuracy in
``details["portfolio"]`` and names the one reported in ``details["reported_attacker"]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ppdm.attacks.core.result import AttackResult
from ppdm.data.qigroups import QIGroups
from ppdm.data.texts import LazyTexts
from ppdm.tree.leaf_pairs import LeafPairs

__all__ = ["combined_attack", "strongest_attacker", "within_proof"]


def combined_attack(estimate: AttackResult, other: AttackResult, pool: bool = True) -> AttackResult:
    """The attacker who holds what both ``estimate`` and ``other`` hold, over the same people.

    ``pool=True``: each person's posterior is the estimate's times the other's, over the prior
    they share, ``P(s) ∝ P_model(s) · P_other(s) / π(s)`` (the two pieces of evidence taken as
    independent given the value; Genest & Zidek 1986's logarithmic pooling). ``pool=False``:
    the other attacker's posterior restricted to the values the estimate leaves possible (never
    less accurate than the other attacker on anyone when the estimate's zeros are sound: an
    exact or pooled maximum-entropy posterior, possible values; not a sampled one). Either way a
    value the estimate rules out stays out, and a group it is certain of (within the tolerance)
    keeps its one value, so its certainties are kept. Grouped by both
    attackers' groups."""
    g_est, g_other = estimate.groups.group_of_record, other.groups.group_of_record
    pair = g_est.astype(np.int64) * other.groups.n_groups + g_other
    _, first, group_of_record, counts = np.unique(pair, return_index=True, return_inverse=True, return_counts=True)
    p_est = estimate.posterior[g_est[first]]
    p_other = other.posterior[g_other[first]]
    if pool:
        prior = estimate.posterior.T @ estimate.groups.counts / max(estimate.groups.counts.sum(), 1)
        joined = p_est * p_other / np.where(prior > 0, prior, 1.0)
        joined[:, prior <= 0] = p_est[:, prior <= 0]
    else:
        joined = p_other * (p_est > 0)
    joined = joined * _possible(p_est, estimate.certain_groups[g_est[first]])
    mass = joined.sum(axis=1, keepdims=True)
    posterior = np.where(mass > 0, joined / np.where(mass > 0, mass, 1.0), p_est)
    table = estimate.groups.table.iloc[g_est[first]].reset_index(drop=True)
    groups = QIGroups(tuple(estimate.groups.quasi_identifiers), table, counts, group_of_record.ravel())
    other_name = other.attack if other.attack.startswith("the ") else f"the {other.attack}"
    name = f"{estimate.attack} pooled with {other_name}" if pool else f"{other_name} within the {estimate.attack}'s possible values"
    out = AttackResult(
        attack=name,
        sensitive=estimate.sensitive,
        values=estimate.values,
        groups=groups,
        posterior=posterior,
        provenance=LazyTexts(lambda: _joined_texts(estimate.provenance, other.provenance, g_est[first], g_other[first], pool), len(first)),
        targets=estimate.targets,
        exposed=estimate.exposed.copy(),
        true_codes=estimate.true_codes,
        details=dict(estimate.details),
        row_ids=estimate.row_ids,
    )
    out.details["attacker"] = name
    if estimate.leaf_pairs is not None:
        out.leaf_pairs = _pairs_of(estimate.leaf_pairs, g_est[first])
    return out


def _possible(posterior: np.ndarray, certain: np.ndarray) -> np.ndarray:
    """The values ``posterior`` leaves possible: its guess alone in the ``certain`` groups (certain
    within the tolerance of :func:`~ppdm.metrics.baseline.is_certain`, the rest numerically tiny
    but not zero), every value of positive probability elsewhere."""
    guess = posterior == posterior.max(axis=1, keepdims=True)
    return np.where(certain[:, None], guess, posterior > 0)


def _joined_texts(ours: Sequence[str], theirs: Sequence[str], g_ours: np.ndarray, g_theirs: np.ndarray, pool: bool) -> list[str]:
    """Each joined group's provenance, its two groups' texts said apart: the other attacker's
    ``kept to`` (or ``pooled with``) the estimate's; one text when both are the same."""
    how = "pooled with" if pool else "kept to"
    return [
        theirs[j] if theirs[j] == ours[i] else f"{theirs[j]}, {how} {ours[i]}"
        for i, j in zip(g_ours.tolist(), g_theirs.tolist())
    ]


def _pairs_of(pairs: LeafPairs, groups: np.ndarray) -> LeafPairs:
    """The leaf pairs of ``groups`` (each new group one of ``pairs``' groups, in order): a joined
    group reaches the leaves its estimate group reaches, so reports still name them."""
    lengths = np.diff(pairs.offsets)[groups]
    offsets = np.r_[0, np.cumsum(lengths)]
    at = np.repeat(pairs.offsets[:-1][groups] - offsets[:-1], lengths) + np.arange(offsets[-1])
    return LeafPairs(offsets, pairs.tree[at], pairs.leaf[at])


def strongest_attacker(
    estimate: AttackResult, others: list[AttackResult], pooled: list[AttackResult] | None = None, shown: list[AttackResult] | None = None,
) -> AttackResult:
    """The most accurate of ``estimate``, each of ``others`` restricted to the estimate's possible
    values (or as it is, when the estimate is sampled), and ``estimate`` pooled with each of
    ``pooled``, on the audited people (module docstring). ``others`` and ``pooled`` are measured
    too and listed, and so is each of ``shown`` (attackers whose confidence means nothing, such
    as IBM ART's one-hot white-box rule: compared, never reported). Without the true values the
    estimate is reported."""
    pooled = pooled or []
    if estimate.true_codes is None or not (others or pooled):
        return estimate
    sound = estimate.std_error is None  # a sampled estimate's zeros prove nothing
    candidates = [estimate]
    candidates += [combined_attack(estimate, o, pool=False) if sound else o for o in others]
    candidates += [combined_attack(estimate, o) for o in pooled]
    measured = {r.attack: _accuracy(r) for r in [*candidates, *others, *pooled, *(shown or [])]}
    chosen = max(candidates, key=lambda r: measured[r.attack])  # max keeps the first of equals
    chosen.details["portfolio"] = measured
    chosen.details["reported_attacker"] = chosen.attack
    return chosen


def _accuracy(result: AttackResult) -> float:
    value = result.summary().get("attacker_accuracy")
    return float(value) if value is not None else 0.0


def within_proof(reported: AttackResult, proved: AttackResult) -> AttackResult:
    """``reported`` without the values the exact audit ``proved`` rules out for a person (its
    proved maximum of 0 records of the person's group): never less accurate (a ruled-out value is
    nobody's), and every person the proof leaves one value is certain, so the reported attacker
    holds at least the proved certainties. ``reported`` itself when the proof rules out nothing
    it still allows. Both are over the same records."""
    if proved.bounds is None or reported.true_codes is None:
        return reported
    possible = proved.bounds["max"] > 0
    allowed = possible[proved.groups.group_of_record]
    if not (reported.record_posterior() * ~allowed > 0).any():
        return reported
    out = combined_attack(proved, reported, pool=False)
    out.attack = f"{reported.attack} within the exact audit's possible values"
    out.details = {**reported.details, "attacker": out.attack, "reported_attacker": out.attack}
    portfolio = dict(reported.details.get("portfolio", {}))
    portfolio[out.attack] = _accuracy(out)
    out.details["portfolio"] = portfolio
    out.exposed = out.certain_groups[out.groups.group_of_record] | reported.exposed
    return out
