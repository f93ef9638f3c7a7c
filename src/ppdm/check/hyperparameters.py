"""Hyperparameter settings known to be risky, per family.

Membership-inference studies over thousands of hyperparameter settings (SACRO-ML's structural
attack, after arXiv 2502.09396; Carlini et al. 2022 on memorisation) find the riskiest models are
those allowed to isolate a few training rows: deep trees with tiny leaves, forests of them,
boosting with tiny leaves, networks without weight decay, neighbours voting in small numbers.
ppdm states each rule against the policy's own minimum cell count ``k`` (``min_group_size``), so
that the rule says what it protects: a setting that lets a leaf, a neighbourhood or a support hold
fewer than ``k`` rows is risky.

* tree, forest: ``min_samples_leaf`` < ``k`` with no depth limit (``max_depth`` unset) or a depth
  beyond ``log2(n / k)`` (deep enough to split the table into cells under ``k``); a forest
  without bootstrap also gives every tree every row;
* gradient boosting (scikit-learn), histogram gradient boosting: ``min_samples_leaf`` < ``k``;
  XGBoost: ``min_child_weight`` < ``k / 4`` (a binary log-loss row weighs at most 1/4);
  LightGBM: ``min_child_samples`` < ``k``;
* kNN: ``n_neighbors`` < ``k`` (a prediction averages fewer rows than a cell may hold);
* MLP: ``alpha`` (weight decay) 0;
* SVM: every setting stores training rows (the family rule rejects it under the default policy);
* linear models: no rule (the degrees of freedom decide).

The evidence is a rule of thumb (``estimated``): a risky setting is a reason to look, not proof.
"""

from __future__ import annotations

import math
from typing import Any

from ppdm.check.findings import Finding
from ppdm.check.model import Checked, final_estimator

__all__ = ["hyperparameter_check", "risky_settings"]


def _deep(est: Any, n: int, k: int) -> str | None:
    depth = getattr(est, "max_depth", None)
    leaf = getattr(est, "min_samples_leaf", 1)
    leaf = math.ceil(leaf * n) if isinstance(leaf, float) else int(leaf)
    cells = math.log2(max(n / k, 1))
    if leaf < k and (depth is None or depth > cells):
        said = "no depth limit" if depth is None else f"max_depth={depth} > log2(n/k)={cells:.1f}"
        return f"min_samples_leaf={leaf} < {k} with {said}"
    return None


def risky_settings(model: Checked, n_rows: int, k: int) -> list[str] | None:
    """The risky settings of ``model`` in words (empty: none; ``None``: no rule for its family)."""
    est = final_estimator(model.model)
    name, family = type(est).__name__, model.family
    out: list[str] = []
    if family in ("tree", "forest") and hasattr(est, "min_samples_leaf"):
        if (why := _deep(est, n_rows, k)) is not None:
            out.append(why)
        if family == "forest" and getattr(est, "bootstrap", True) is False:
            out.append("bootstrap=False: every tree sees every row")
        return out
    if name in ("GradientBoostingClassifier", "HistGradientBoostingClassifier"):
        leaf = int(est.min_samples_leaf) if not isinstance(est.min_samples_leaf, float) else math.ceil(est.min_samples_leaf * n_rows)
        return [f"min_samples_leaf={leaf} < {k}"] if leaf < k else []
    if name == "XGBClassifier":
        weight = est.min_child_weight if est.min_child_weight is not None else 1.0
        return [f"min_child_weight={weight:g} < {k / 4:g}"] if weight < k / 4 else []
    if name == "LGBMClassifier":
        return [f"min_child_samples={est.min_child_samples} < {k}"] if est.min_child_samples < k else []
    if family == "knn":
        neighbours = getattr(est, "n_neighbors", None)
        return [f"n_neighbors={neighbours} < {k}"] if neighbours is not None and neighbours < k else []
    if name == "MLPClassifier":
        return ["alpha=0: no weight decay"] if est.alpha == 0 else []
    if family == "svm":
        return ["support vectors are training rows stored whole"]
    return None


def hyperparameter_check(model: Checked, n_rows: int, k: int) -> Finding:
    """``hyperparameters``: no risky setting (see the module docstring)."""
    found = risky_settings(model, n_rows, k)
    if found is None:
        return Finding("hyperparameters", "passed", None, None, "estimated", f"no hyperparameter rule for {model.name}; the degrees of freedom decide")
    if not found:
        return Finding("hyperparameters", "passed", 0.0, 0.0, "estimated", f"no risky setting of {model.name} against k = {k}")
    return Finding("hyperparameters", "failed", float(len(found)), 0.0, "estimated", f"{model.name}: " + "; ".join(found))
