"""White-box model inversion of a sensitive *input* attribute (Fredrikson et al., CCS 2015).

When the sensitive attribute is one of the tree's inputs rather than its class, an attacker who
knows a person's other attributes and their class can try every sensitive value: each sends the
person to a leaf, and the published counts of that leaf say how likely the person's known class
is there. The posterior is

    P(S = s | x, y) ∝ prior(s) · count(leaf(x, s), y) / n(leaf(x, s)),

computed for every QI group at once and returned as an :class:`AttackResult` (groups are the
distinct combinations of the known attributes and the class). If the tree also splits on an
attribute the attacker lacks, ``leaf(x, s)`` is every leaf the path-consistent routing
(:func:`ppdm.tree.routing.reachable_leaves`) reaches, and the counts are summed over them.

This is a Bayesian reading of the white-box decision-tree attack, not IBM ART's
``AttributeInferenceWhiteBoxDecisionTree`` rule. Both agree when exactly one candidate value
makes the tree reproduce the known class; otherwise ART picks the value whose leaf holds the most
training records (times the prior), even when that leaf predicts another class, while this
posterior weighs each value by the leaf's share of the known class. ``benchmarks/README.md``
compares the two on the same scikit-learn trees. Ties in the posterior are broken by the order of
the attribute's categories (:meth:`AttackResult.predicted` takes the first maximum).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ppdm.attacks.leaves import class_codes, published_leaf_counts
from ppdm.attacks.result import AttackResult
from ppdm.data.qigroups import QIGroups
from ppdm.errors import AttackError, DataError
from ppdm.tree.model import Tree, encode_categories
from ppdm.tree.routing import reachable_leaves


def inversion_attack(
    tree: Tree,
    data: pd.DataFrame,
    sensitive: str,
    quasi_identifiers: Sequence[str] | None = None,
    priors: Mapping[object, float] | None = None,
) -> AttackResult:
    """Infer the categorical input ``sensitive`` from the other attributes, the class and the tree.

    ``quasi_identifiers`` default to the tree's other attributes present in ``data``; the class
    column of ``data`` is known to the attacker (listing it among them changes nothing).
    ``priors`` (value → probability) default to uniform over the attribute's domain.
    """
    attribute = tree.attributes.get(sensitive)
    if attribute is None or not attribute.is_categorical:
        raise AttackError(f"{sensitive!r} is not a categorical attribute of the tree")
    if tree.class_attribute not in data.columns:
        raise DataError(f"the attacker needs the class column {tree.class_attribute!r} in the data")
    values = attribute.categories
    if quasi_identifiers is None:
        quasi_identifiers = [a for a in tree.attributes if a != sensitive and a in data.columns]
    known = list(dict.fromkeys([*quasi_identifiers, tree.class_attribute]))  # the class is known anyway
    groups = QIGroups.from_frame(data, known)
    counts, _ = published_leaf_counts(tree)
    y = class_codes(tree, groups.table[tree.class_attribute], tree.class_attribute)
    likelihood = np.zeros((groups.n_groups, len(values)))
    rows = np.arange(groups.n_groups)
    for j, value in enumerate(values):
        trial = groups.table.drop(columns=[tree.class_attribute]).assign(**{sensitive: value})
        reached = np.asarray(reachable_leaves(tree, trial, known=[*quasi_identifiers, sensitive]) @ counts)
        n = reached.sum(axis=1)
        likelihood[:, j] = np.divide(reached[rows, y], n, out=np.zeros(len(n)), where=n > 0)
    prior = _priors(values, priors)
    score = likelihood * prior
    total = score.sum(axis=1, keepdims=True)
    posterior = np.divide(score, total, out=np.tile(prior, (groups.n_groups, 1)), where=total > 0)
    true_codes = None
    if sensitive in data.columns:
        true_codes = encode_categories(data[sensitive], values)
        if (true_codes < 0).any():
            raise DataError(f"column {sensitive!r} holds values outside the tree's domain for it")
    result = AttackResult(
        attack="inversion",
        sensitive=sensitive,
        values=tuple(values),
        groups=groups,
        posterior=posterior,
        provenance=["leaves of each candidate value"] * groups.n_groups,
        targets=np.ones(groups.n_records, dtype=bool),
        exposed=np.zeros(groups.n_records, dtype=bool),
        true_codes=true_codes,
    )
    result.exposed = result.certain_groups[groups.group_of_record]
    return result


def _priors(values: Sequence[object], priors: Mapping[object, float] | None) -> np.ndarray:
    if priors is None:
        return np.full(len(values), 1.0 / len(values))
    unknown = [v for v in priors if v not in values]
    if unknown:
        raise DataError(f"prior given for unknown value {unknown[0]!r}")
    p = np.array([float(priors.get(v, 0.0)) for v in values])
    if (p < 0).any() or p.sum() <= 0:
        raise DataError("priors must be non-negative and not all zero")
    return p / p.sum()
