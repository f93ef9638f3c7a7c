"""Residual degrees of freedom: training rows minus the parameters the model learned.

ACRO's rule for regressions (``safe_dof_threshold``, SACRO, Jefferson et al. 2023), applied to
any model as SACRO-ML's structural attack does: a model with nearly as many parameters as
training rows can store them. The parameter count per family:

* a classification tree: two per split (its feature and threshold) and one fewer than the
  labels per leaf (the leaf's label distribution); a forest: the sum over its trees;
* boosted trees (gradient boosting, histogram gradient boosting, XGBoost, LightGBM, AdaBoost):
  two per split and one value per leaf, over every tree, plus one base score per output (and one
  weight per tree for AdaBoost);
* linear models (logistic regression, SGD, ridge, linear SVM, LDA): the coefficients and
  intercepts; Gaussian naive Bayes: a mean and a variance per label and feature, and the priors;
* an MLP: every weight and bias;
* an SVM: the support vectors (stored training rows, every feature of each), their dual
  coefficients and the intercepts;
* kNN: every stored training row (rows × features): nothing is summarised.

A family counted nowhere here is ``not checked``, never 0 parameters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdm.check.findings import Finding
from ppdm.check.model import Checked, final_estimator
from ppdm.tree.forest import is_model
from ppdm.tree.model import Tree

__all__ = ["dof_check", "parameter_count"]


def _sklearn_tree(tree: Any, per_leaf: int) -> int:
    t = tree.tree_
    leaves = int(np.sum(t.children_left == t.children_right))
    return 2 * (int(t.node_count) - leaves) + per_leaf * leaves


def _ppdm_tree(tree: Tree, per_leaf: int) -> int:
    return 2 * (tree.n_nodes - tree.n_leaves) + per_leaf * tree.n_leaves


def _hgb(model: Any) -> int:
    total = len(np.atleast_1d(model._baseline_prediction).ravel())
    for stage in model._predictors:
        for predictor in stage:
            leaves = int(predictor.nodes["is_leaf"].sum())
            total += 2 * (len(predictor.nodes) - leaves) + leaves
    return total


def _booster_frame(frame: Any, outputs: int) -> int:
    leaves = int((frame["Feature"] == "Leaf").sum())
    return 2 * (len(frame) - leaves) + leaves + outputs


def _tree_models(est: Any, name: str) -> int | None:
    """The tree families' counts (``None`` for another family)."""
    k = len(getattr(est, "classes_", [0, 1]))
    if name in ("DecisionTreeClassifier", "ExtraTreeClassifier"):
        return _sklearn_tree(est, k - 1)
    if name in ("RandomForestClassifier", "ExtraTreesClassifier"):
        return sum(_sklearn_tree(t, k - 1) for t in est.estimators_)
    if name == "GradientBoostingClassifier":
        return sum(_sklearn_tree(t, 1) for t in np.ravel(est.estimators_)) + est.n_trees_per_iteration_
    if name == "HistGradientBoostingClassifier":
        return _hgb(est)
    if name == "AdaBoostClassifier":
        return sum(_sklearn_tree(t, k - 1) + 1 for t in est.estimators_ if hasattr(t, "tree_"))
    if name == "XGBClassifier":
        return _booster_frame(est.get_booster().trees_to_dataframe(), 1 if k == 2 else k)
    if name == "LGBMClassifier":
        frame = est.booster_.trees_to_dataframe()
        leaves = int(frame["split_feature"].isna().sum())
        return 2 * (len(frame) - leaves) + leaves + (1 if k == 2 else k)
    return None


def parameter_count(model: Checked) -> tuple[int | None, str]:
    """The number of parameters ``model`` learned and how it was counted (``None``: a family not counted)."""
    est = final_estimator(model.model)
    if is_model(est):
        trees = est.trees
        boosted = est.combine == "additive"
        per_leaf = 1 if boosted else len(est.classes) - 1
        extra = len(np.atleast_1d(getattr(est, "base_score", 0.0))) if boosted else 0
        return sum(_ppdm_tree(t, per_leaf) for t in trees) + extra, f"{len(trees)} trees: 2 per split, {per_leaf} per leaf"
    name = type(est).__name__
    counted = _tree_models(est, name)
    if counted is not None:
        return counted, f"{name}: 2 per split, the leaves' values"
    if name in ("SVC", "NuSVC"):
        return int(est.support_vectors_.size + est.dual_coef_.size + est.intercept_.size), f"{name}: {len(est.support_vectors_):,} support vectors stored whole"
    if name in ("KNeighborsClassifier", "RadiusNeighborsClassifier"):
        return int(np.asarray(est._fit_X).size), f"{name}: {est.n_samples_fit_:,} training rows stored whole"
    if name == "MLPClassifier":
        return int(sum(w.size for w in est.coefs_) + sum(b.size for b in est.intercepts_)), f"{name}: weights and biases"
    if name == "GaussianNB":
        return int(est.theta_.size + est.var_.size + est.class_prior_.size), f"{name}: means, variances, priors"
    if hasattr(est, "coef_"):
        return int(np.size(est.coef_) + np.size(getattr(est, "intercept_", 0))), f"{name}: coefficients and intercepts"
    return None, f"{name}: no parameter count for this family"


def dof_check(model: Checked, n_rows: int, threshold: int) -> Finding:
    """``residual_dof``: training rows minus parameters, at least ``threshold``."""
    count, how = parameter_count(model)
    if count is None:
        return Finding("residual_dof", "not checked", None, float(threshold), "none", how)
    dof = n_rows - count
    state = "passed" if dof >= threshold else "failed"
    return Finding("residual_dof", state, float(dof), float(threshold), "proved", f"{n_rows:,} training rows − {count:,} parameters ({how}) = {dof:,}")
