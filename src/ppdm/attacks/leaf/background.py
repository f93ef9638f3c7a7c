"""Background-knowledge attack on a published tree or forest (paper 003 §2.2.3, §3.1).

The attacker knows the full records (every attribute and the class) of some individuals. Routing
them through the model and subtracting them from the published leaf counts leaves the class
counts of everybody else in each leaf; a target whose remaining leaf counts show one class is
exposed for certain (§3.1: knowing that user A is healthy reveals that user B is not), and one
whose remaining distribution gives some class at least ``threshold`` is exposed with that
confidence.

The known individuals are rows of the attacker's table (``threat.known_individuals``, by
position) or full records given as a frame (``known``, matched to the table's rows by index
label); they are not targets. Class counts must be exact (class counts published, or error
rates of a two-class tree). A tree is a forest of one; over a forest, every tree that holds the
known individuals a known number of times is subtracted from
(:func:`ppdm.attacks.leaf.leaves.subtract_known`), and the sound rule is applied to everybody else.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel, checked_threat, deprecated_alias
from ppdm.attacks.leaf.leaves import attacker_view, subtract_known
from ppdm.errors import DataError
from ppdm.metrics.baseline import at_least, is_certain
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree


def background_knowledge_attack(
    model: Tree | Forest,
    data: pd.DataFrame,
    known: pd.DataFrame | None = None,
    *,
    threat: ThreatModel | None = None,
    threshold: float = 0.9,
) -> AttackResult:
    """Subtract known individuals from the leaf counts and re-read every other person's leaves.

    ``threat``: the attacker (see :func:`~ppdm.attacks.leaf.leaves.attacker_view`; the sensitive
    column is the class; default: they know the model's attributes in ``data``); its
    ``known_individuals`` are the rows whose full record they hold. ``known``: those records as a
    frame instead (rows of ``data`` by index label, or records outside it for a model that holds
    every row once).
    """
    threat = checked_threat("background_knowledge_attack", threat)
    if not 0 < threshold <= 1:
        raise DataError(f"threshold must be in (0, 1], got {threshold}")
    view = attacker_view(model, data, threat)
    targets = view.targets()
    if known is None:
        if not view.known_rows:
            raise DataError("the background-knowledge attack needs the individuals the attacker knows: "
                            "threat=ThreatModel(known_individuals=[...]) or known=")
        positions: np.ndarray | None = np.array(view.known_rows, dtype=np.intp)
        known = data.iloc[list(view.known_rows)]
    else:
        outside = ~data.index.isin(known.index)
        targets &= outside
        if len(known) and outside.all():
            raise DataError("none of the known individuals is a row of the data (they are matched by index label)")
        positions = data.index.get_indexer(known.index) if data.index.is_unique else None
    remaining = subtract_known(view, known, positions)
    before, _ = view.posterior()
    result = view.result("background-knowledge", remaining, {}, targets=targets)
    g = view.groups.group_of_record
    above = at_least(result.posterior.max(axis=1), threshold)
    newly = result.certain_groups & ~is_certain(before.max(axis=1))
    result.exposed = above[g]
    result.details.update(
        known_individuals=int(len(known)),
        threshold=threshold,
        targets_above_threshold=int((above[g] & targets).sum()),
        targets_newly_certain=int((newly[g] & targets).sum()),
    )
    return result


#: :func:`background_knowledge_attack`, by its name when it took forests only.
forest_background_attack = deprecated_alias(background_knowledge_attack, "forest_background_attack")
