"""The published model: ``Tree``, its nodes and splits, disclosure levels, JSON and scikit-learn import."""

from ppdm.tree.disclosure import Disclosure
from ppdm.tree.edit import collapse
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.splits import CategoricalSplit, Interval, Prefix, ThresholdSplit, ValueSet

__all__ = [
    "Attribute", "CategoricalSplit", "Disclosure", "Interval", "Node", "Prefix", "ThresholdSplit",
    "Tree", "ValueSet", "collapse",
]
