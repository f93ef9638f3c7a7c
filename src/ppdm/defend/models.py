"""What the defense search needs of a model to publish, whether one tree or a forest.

The search (:mod:`ppdm.defend.search`) weighs trees and, for a published forest, forests; the few
things it asks of each (publish it with less, how many leaves, what it publishes, how deep it
is) are answered here once for both. A forest publishing less is every tree publishing at most
that level (:func:`ppdm.attacks.forest_maxent.published_forest`): with error rates or labels
only, its trees' leaves no longer carry class frequencies, so a ``mean-proba`` forest predicts by
its trees' votes (the "predict-only" release).
"""

from __future__ import annotations

from ppdm.attacks.forest_maxent import published_forest
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

__all__ = ["LEVELS", "Model", "depth_of", "disclosure_of", "leaves_of", "publish"]

Model = Tree | Forest
"""A model the search can publish: one tree, or a forest of them."""

LEVELS = (Disclosure.LABELS, Disclosure.ERROR_RATES, Disclosure.CLASS_COUNTS)
"""Disclosure levels, least first."""


def disclosure_of(model: Model) -> Disclosure:
    """What the model publishes: a forest, the most any of its trees does."""
    if isinstance(model, Forest):
        return max((t.disclosure for t in model.trees), key=LEVELS.index)
    return model.disclosure


def publish(model: Model, level: Disclosure) -> Model:
    """A copy of ``model`` holding only what ``level`` reveals (a forest: each of its trees)."""
    if isinstance(model, Forest):
        return published_forest(model, level)
    return model.published(level)


def leaves_of(model: Model) -> int:
    """Leaves published: a forest's over all its trees."""
    if isinstance(model, Forest):
        return sum(t.n_leaves for t in model.trees)
    return model.n_leaves


def depth_of(model: Model) -> int:
    """The depth of the tree, or of a forest's deepest tree."""
    if isinstance(model, Forest):
        return max(t.depth for t in model.trees)
    return model.depth
