"""A forest's estimate when its joint maximum-entropy table is too large: each tree's exact
maximum entropy, pooled.

Under partial knowledge the joint table of a forest holds, per person, every combination of the
unknown columns' cells over all trees, a number that grows with the product of the trees'
partitions (``RoutingLimitError``). One tree alone is small: its attacker's types are the leaves
a person's known values can reach (paper 000 §3–4, the factored form of
:func:`ppdm.attacks.models.maxent.maxent_attack`), solved exactly in a fraction of a second. This
module solves every tree that publishes its own counts that way, each over the rows it holds
with their multiplicities (a bagged tree holds a bootstrap sample), and pools the trees'
posteriors per person by their normalised geometric mean,

    P(s | person) ∝ ∏_{t ∋ person} P_t(s | q)^{1/T_person},

over the ``T_person`` trees that hold the person (the distribution closest on average to the
trees' ones in Kullback–Leibler divergence, ``argmin_p Σ_t KL(p ‖ P_t)``: logarithmic opinion
pooling with equal weights, Genest & Zidek 1986). A person no tree holds keeps the prior.

The pooled posterior is an **approximation** of the joint maximum-entropy one (``status``
``"approximate"``): it reads each tree's constraints exactly but not their intersection, so it
can be less confident than the joint solution. Each tree's posterior gives a value probability
0 only when no dataset consistent with that tree gives it to anyone of the person's known
values among the rows it holds (the value lies outside the feasible face the solver's presolve
proves, :mod:`ppdm.maxent.solvers.face`; the truth is feasible, so never the person's own
value); the pooled posterior keeps only the values no tree rules out that way and, when given,
each person's possible values over all trees jointly
(:func:`ppdm.attacks.models.possible.possible_values`, sound). A person left with one value is
certain, proved; nothing else counts as certain.

Boosted models: a round after the first publishes rows whose coefficients depend on the
person's score before it (:mod:`ppdm.maxent.constraints.boosting_rows`), hence on the unknown
columns through every earlier round; one tree's types (its leaves) do not fix that score, so a
round's leaf values are no row over them. Only the trees publishing their own class counts (a
boosted model's first round, every tree of a random forest) are pooled; the result says how
many (``details["trees_pooled"]``) and, for a boosted model, which rounds it read and why not the
others (``details["rounds"]``, the account the report's first card shows).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.scope import Scope
from ppdm.attacks.core.threat import ThreatModel, required_threat
from ppdm.attacks.leaf.leaves import row_multiplicities
from ppdm.data.qigroups import QIGroups
from ppdm.errors import AttackError, DataError, UninformativeKnowledgeWarning
from ppdm.maxent.constraints.boosting_rows import rounds_read
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.table.forest_types import forest_domain
from ppdm.maxent.table.unknowns import Component, sensitive_component
from ppdm.metrics.baseline import prior_distribution
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

__all__ = ["UNPOOLED_ROUNDS", "pooled_forest_attack", "pooling_trees"]

#: Why the pooled estimate reads no boosting round without its own class counts.
UNPOOLED_ROUNDS = (
    "a later round's leaf values are rows over each person's score before it, which the unknown columns set through every "
    "earlier round: only the joint table reads them, and it is too large here"
)

#: Probabilities below this are taken as 0 when the logarithms are pooled.
TINY = 1e-300


def pooling_trees(forest: Tree | Forest, n_rows: int) -> list[tuple[int, np.ndarray]]:
    """The trees whose own class counts the pooled estimate reads, with each row's multiplicity
    in them: every tree publishing class counts (or error rates) whose rows are known."""
    out = []
    for t in range(forest.n_trees):
        if not forest.known[t] & {"class-counts", "error-rates"}:
            continue
        m = row_multiplicities(forest, t, n_rows)
        if m is not None and m.any():
            out.append((t, np.asarray(m)))
    return out


def pooled_forest_attack(
    forest: Forest,
    data: pd.DataFrame,
    threat: ThreatModel,
    knowledge: Knowledge = Knowledge(),
    possible: np.ndarray | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> AttackResult:
    """Every person's posterior over the sensitive values from each tree's exact maximum-entropy
    posterior, pooled (module docstring). ``threat`` is resolved against ``data`` (the training
    rows, in fitting order). ``possible``: per row of ``data`` the values still possible over
    all trees jointly (sound); the pooled posterior is restricted to them, and a row with one
    value left is certain. ``progress(done, total)`` after each tree."""
    from ppdm.attacks.models.maxent import maxent_attack

    threat = required_threat("pooled_forest_attack", threat)
    known = [c for c in (threat.known or ()) if c != threat.sensitive]
    sensitive = str(threat.sensitive)
    trees = pooling_trees(forest, len(data))
    if not trees:
        raise AttackError("no tree of this forest publishes its own class counts for the rows it holds: nothing to pool")
    common = forest_domain(forest, data, known, sensitive).sensitive
    values: tuple = common.cells
    logs = np.zeros((len(data), len(values)))
    allowed = np.ones((len(data), len(values)), dtype=bool) if possible is None else possible.astype(bool).copy()
    held = np.zeros(len(data))
    for done, (t, m) in enumerate(trees, 1):
        inside = np.flatnonzero(m > 0)
        one = _tree_threat(threat, inside)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UninformativeKnowledgeWarning)
            r = maxent_attack(
                forest.trees[t], data.iloc[inside].reset_index(drop=True), threat=one, knowledge=knowledge, weights=m[inside].astype(float),
            )
        mine = r.posterior[r.groups.group_of_record]
        if tuple(r.values) != tuple(values):
            mine = mine @ _onto(sensitive_component(forest.trees[t], data.iloc[inside], sensitive), common, data[sensitive].iloc[inside])
        logs[inside] += np.log(np.maximum(mine, TINY))
        if r.details.get("status") == "optimal":  # an exact zero is a value outside the tree's feasible face: proved
            allowed[inside] &= mine > 0
        held[inside] += 1
        if progress is not None:
            progress(done, len(trees))
    truth = _codes(data, sensitive, common)
    prior = prior_distribution(truth, len(values)) if truth is not None else np.full(len(values), 1.0 / len(values))
    posterior = np.where(held[:, None] > 0, np.exp((logs - logs.max(axis=1, keepdims=True)) / np.maximum(held, 1)[:, None]), prior)
    posterior = posterior * allowed
    posterior /= np.maximum(posterior.sum(axis=1, keepdims=True), TINY)
    result = _result(data, known, sensitive, values, posterior, truth, allowed, threat, len(trees), forest.n_trees, held)
    rounds = rounds_read(forest, [t for t, _ in trees], UNPOOLED_ROUNDS)
    pooled = {t for t, _ in trees}
    result.details["scope"] = Scope.of_forest(forest.n_trees, [t for t in range(forest.n_trees) if t not in pooled])
    if rounds is not None:
        result.details["rounds"] = rounds.summary()
        result.details["scope"] = Scope.of_rounds(rounds)
    return result


def _onto(cells: Component, common: Component, column: pd.Series) -> np.ndarray:
    """(tree's cells × the forest's cells): how one tree's posterior over its own cells of a
    numeric sensitive column (its intervals, or the values when it does not split on it) spreads
    over the forest's cells: each of the tree's cells in proportion to the rows of ``column``
    (the rows the tree holds) in each forest cell it overlaps. A person's own value lies in a
    cell holding their row, so the truth never gets 0 here."""
    joint = np.zeros((cells.size, common.size))
    np.add.at(joint, (cells.codes(column), common.codes(column)), 1.0)
    return joint / np.maximum(joint.sum(axis=1, keepdims=True), 1.0)


def _tree_threat(threat: ThreatModel, inside: np.ndarray) -> ThreatModel:
    """The threat model over the rows one tree holds: its known individuals renumbered."""
    if not threat.known_individuals:
        return threat
    position = {int(r): i for i, r in enumerate(inside)}
    return replace(threat, known_individuals=tuple(position[i] for i in threat.known_individuals if i in position))


def _codes(data: pd.DataFrame, sensitive: str, cells: Component) -> np.ndarray | None:
    """Each row's cell of the sensitive column, ``None`` without the column or with a value outside the cells."""
    if sensitive not in data.columns:
        return None
    try:
        return cells.codes(data[sensitive])
    except DataError:
        return None


def _result(
    data: pd.DataFrame, known: list[str], sensitive: str, values: tuple, posterior: np.ndarray, truth: np.ndarray | None,
    allowed: np.ndarray, threat: ThreatModel, n_pooled: int, n_trees: int, held: np.ndarray,
) -> AttackResult:
    """Group the rows by their known values and posterior, and say what was pooled."""
    signature = np.unique(np.round(posterior, 12), axis=0, return_inverse=True)[1].ravel()
    groups = QIGroups.split_by(data, known, signature)
    first = groups.first_rows()
    certain = allowed.sum(axis=1) == 1
    targets = np.ones(len(data), dtype=bool)
    targets[list(threat.known_individuals)] = False
    result = AttackResult(
        attack="maxent",
        sensitive=sensitive,
        values=values,
        groups=groups,
        posterior=posterior[first],
        provenance=[f"{int(held[i])} of {n_pooled} trees pooled" for i in first],
        targets=targets,
        exposed=certain & targets,
        true_codes=truth,
    )
    result.details = {
        "threat_model": threat.describe(),
        "method": "pooled",
        "status": "approximate",
        "trees": n_trees,
        "trees_pooled": n_pooled,
        "estimate": (
            "each tree's exact maximum-entropy posterior, pooled by their geometric mean over the trees holding the person"
            + ", restricted to the values no tree rules out and to the person's possible values over all trees"
        ),
        "certain_proved": int((certain & targets).sum()),
    }
    if pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result
