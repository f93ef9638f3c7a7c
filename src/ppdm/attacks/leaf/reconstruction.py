"""Reconstruction by propagation over a forest's leaves: what becomes certain once certain people
are taken out of the counts (Ferry et al., *Trained Random Forests Completely Reveal your
Dataset*, ICML 2024, §3: every tree's leaf counts are linear constraints on the training rows'
classes; this is their sound, solver-free part).

The sound rule of :mod:`ppdm.attacks.leaf.leaves` reads each tree's counts as published. Once
a group is certain (all its records have class ``c``) and its span in tree ``t`` is one leaf
``ℓ``, its records contribute exactly their multiplicities to ``ℓ``'s count of ``c``; subtracting
them (as the background-knowledge attack of paper 003 §2.2.3 subtracts known people) leaves
counts that still hold every other record drawn into ``ℓ``, so the rule applied to those
*remaining* counts is still sound for every group not yet certain, and may leave one class for
more of them. Rounds repeat until nobody new is certain. Only trees whose multiplicities are
known and whose counts are exact are subtracted from. A tree is a forest of one that holds every
row of the attacker's table once (the single-tree attacks' assumption).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel, checked_threat, deprecated_alias
from ppdm.attacks.leaf.leaves import AttackerView, attacker_view
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

__all__ = ["forest_reconstruction_attack", "propagate", "reconstruction_attack"]


def propagate(view: AttackerView, counts: list[np.ndarray | None] | None = None, max_rounds: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """What each tree leaves each group after the rounds, and the round each group became certain in.

    Returns ``possible`` (groups × trees × classes, as :meth:`AttackerView.possible`) and ``round``
    (per group: 0 when certain from the published counts, ``r`` when certain after ``r`` rounds
    of subtraction, -1 when never certain).
    """
    counts = view.counts if counts is None else counts
    possible = view.possible(counts)
    allowed = possible.all(axis=1)
    certain = allowed.sum(axis=1) == 1
    found = np.where(certain, 0, -1)
    single = [np.diff(span.indptr) == 1 for span in view.spans]
    subtractable = [c is not None and view.exact[t] and not np.isnan(view.summed[:, t]).all() for t, c in enumerate(counts)]
    for r in range(1, max_rounds + 1):
        remaining = [_remaining(view, t, c, certain & single[t], allowed) if subtractable[t] else c for t, c in enumerate(counts)]
        open_ = np.flatnonzero(~certain)
        if len(open_) == 0:
            break
        narrowed = view.possible(remaining, open_)
        possible[open_] = narrowed
        allowed[open_] &= narrowed.all(axis=1)
        newly = open_[allowed[open_].sum(axis=1) == 1]
        if len(newly) == 0:
            break
        certain[newly] = True
        found[newly] = r
    return possible, found


def _remaining(view: AttackerView, t: int, counts: np.ndarray, take: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Tree ``t``'s counts less the records of the groups ``take`` (certain, one leaf in ``t``)."""
    take = take & ~np.isnan(view.summed[:, t])
    rows = np.flatnonzero(take)
    span = view.spans[t]
    leaves = span.indices[span.indptr[rows]]
    sub = np.zeros_like(counts)
    np.add.at(sub, (leaves, allowed[rows].argmax(axis=1)), view.summed[rows, t])
    return np.maximum(counts - sub, 0.0)


def reconstruction_attack(
    model: Tree | Forest,
    data: pd.DataFrame,
    threat: ThreatModel | None = None,
) -> AttackResult:
    """Expose everyone the rounds of subtraction leave one class for (see the module docstring).

    ``threat``: the attacker (see :func:`~ppdm.attacks.leaf.leaves.attacker_view`; the sensitive
    column is the class; default: they know the model's attributes in ``data``).
    """
    view = attacker_view(model, data, checked_threat("reconstruction_attack", threat))
    possible, found = propagate(view)
    details = {
        "certain_from_the_counts": int(view.groups.counts[found == 0].sum()),
        "certain_after_subtraction": int(view.groups.counts[found > 0].sum()),
        "rounds": int(found.max(initial=0)),
    }
    result = view.result("reconstruction", None, details, possible=possible)
    for g in np.flatnonzero(found > 0).tolist():
        result.provenance[g] += f" (round {found[g]}: after taking out the people found certain)"
    return result


#: :func:`reconstruction_attack`, by its name when it took forests only.
forest_reconstruction_attack = deprecated_alias(reconstruction_attack, "forest_reconstruction_attack")
