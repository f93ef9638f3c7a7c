"""The published model: ``Tree``, its nodes and splits, disclosure levels, JSON and scikit-learn import."""

from ppdm.tree.disclosure import Disclosure
from ppdm.tree.edit import collapse
from ppdm.tree.io import load_tree, save_tree, tree_from_dict, tree_to_dict
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.render import render_tree
from ppdm.tree.sklearn import tree_from_sklearn
from ppdm.tree.splits import CategoricalSplit, Interval, Prefix, ThresholdSplit, ValueSet

__all__ = [
    "Attribute", "CategoricalSplit", "Disclosure", "Interval", "Node", "Prefix", "ThresholdSplit",
    "Tree", "ValueSet", "collapse", "load_tree", "render_tree", "save_tree", "tree_from_dict",
    "tree_from_sklearn", "tree_to_dict",
]
