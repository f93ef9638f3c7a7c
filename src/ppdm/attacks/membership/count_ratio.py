"""The count-ratio attack: a white-box score for a pool that holds only some of the training records.

On an incomplete pool the published counts bound the members among the candidates from above
only, and the maximum-entropy belief under upper bounds alone is flat wherever no bound binds
(P(member) nearly one value for the undecided candidates: AUC 0.51–0.57 on bagged forests, the
proofs alone ranking some). Yet a count still
says *how many* training records a cell holds against how many candidates reach it. If the pool
holds a share ``f`` of the training records, drawn without regard to the model (the attacker's
working assumption, as LiRA's is a Gaussian), about ``f · c`` of the ``R`` candidates reaching a
cell of count ``c`` are members, so a candidate there is a member with probability about
``f c / R``. Read tree by tree as independent evidence (naive Bayes over the trees, as a forest's
cells are read by its per-tree posterior), a candidate's score is

    s_i = Σ_t log((c_t(i) + 1) / (R_t(i) + 1)),

the sum over the trees of the log ratio of its cell's published count to the candidates reaching
the cell (proved and known non-members left out: they are none of its members), with one
pseudo-record on each side (Laplace) so that a bagged cell that drew nobody
(``c = 0``, no proof in a bagged tree) does not send the score to −∞. The share ``f`` adds
``T log f`` to every candidate alike, so the ranking, and every rate read from it (AUC, TPR at a
false-positive rate), does not depend on it: nothing about the pool needs to be known.

**With a black-box attack.** The counts and the model's answers are different evidence; with RMIA
run on the same candidates (:mod:`ppdm.attacks.membership.rmia`) the audit also ranks by their sum
in Stouffer's manner (1949): each score turned into a standard normal one by its rank, so that
neither score's scale dominates, and the two added (:func:`stouffer`).

Measured on half the members of Adult, Nursery and breast-cancer pools (``bench_membership.py
--blackbox``): bagged forests from AUC 0.510–0.574 to 0.64–0.84, single trees from 0.53–0.61 to
0.54–0.68. Proved members and non-members (:mod:`ppdm.exact.membership`) rank above and below
everyone. With RMIA online (16 shadows) on 100-tree bagged forests: Adult AUC 0.846 and TPR@1 % 0.207
against RMIA's best 0.803 / 0.139 (the count ratio alone: 0.839 / 0.162); Nursery 0.849 / 0.159
against 0.833 / 0.130 (alone: 0.794 / 0.136).
A score, not a probability: the audit's P(member) stays the maximum-entropy belief.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

from ppdm.maxent.constraints.membership_rows import MembershipRows

__all__ = ["NAME", "PARTNERS", "count_ratio_scores", "stouffer"]

#: The attack's name in the table of attacks.
NAME = "count-ratio"

#: The black-box attacks the count ratio is combined with, the first run taken (RMIA: the
#: strongest of the portfolio in Zarifzadeh et al. 2024 and on ``bench_membership.py --blackbox``).
PARTNERS = ("rmia-online", "rmia-offline")

#: Pseudo-records added to a cell's count and to its candidates.
PSEUDO = 1.0


def count_ratio_scores(rows: MembershipRows, state: np.ndarray) -> np.ndarray | None:
    """Each candidate's count-ratio score over the rows' published 0/1 cells (module docstring);
    ``state``: 1 proved member, 0 proved non-member, -1 undecided. ``None`` when no row states
    a published count (a rule set's supports, a model read by its probabilities only)."""
    if rows.count is None:
        return None
    cells = np.flatnonzero(np.isfinite(rows.count) & (rows.cell > -3))
    if cells.size == 0:
        return None
    A = rows.A[cells]
    reach = A @ (state != 0).astype(float)  # a proved or known non-member is none of a cell's members
    score = np.asarray(A.T @ np.log((rows.count[cells] + PSEUDO) / (reach + PSEUDO))).ravel()
    if not (state >= 0).any():
        return score
    span = float(np.ptp(score)) + 1.0 if score.size else 1.0
    return np.where(state == 1, score.max() + span, np.where(state == 0, score.min() - span, score))


def stouffer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The two scores' combined ranking: the sum of their normal scores by rank (ties averaged),
    Φ⁻¹((rank − ½) / n), so each weighs alike whatever its scale (module docstring)."""
    n = len(a)
    return ndtri((rankdata(a) - 0.5) / n) + ndtri((rankdata(b) - 0.5) / n)
