"""The published model: ``Tree`` and ``Forest``, their nodes and splits, disclosure levels, JSON,
and imports from scikit-learn, XGBoost and LightGBM."""

from ppdm.tree.disclosure import Disclosure
from ppdm.tree.edit import collapse
from ppdm.tree.forest import Forest
from ppdm.tree.forest_io import forest_from_dict, forest_to_dict, load_forest, save_forest
from ppdm.tree.io import load_tree, save_tree, tree_from_dict, tree_to_dict
from ppdm.tree.lightgbm_text import forest_from_lightgbm
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.render import render_tree
from ppdm.tree.sklearn import tree_from_sklearn
from ppdm.tree.sklearn_forest import forest_from_sklearn
from ppdm.tree.splits import CategoricalSplit, Interval, Prefix, ThresholdSplit, ValueSet
from ppdm.tree.xgboost_json import forest_from_xgboost

__all__ = [
    "Attribute", "CategoricalSplit", "Disclosure", "Forest", "Interval", "Node", "Prefix", "ThresholdSplit",
    "Tree", "ValueSet", "collapse", "forest_from_dict", "forest_from_lightgbm", "forest_from_sklearn",
    "forest_from_xgboost", "forest_to_dict", "load_forest", "load_tree", "render_tree", "save_forest",
    "save_tree", "tree_from_dict", "tree_from_sklearn", "tree_to_dict",
]
