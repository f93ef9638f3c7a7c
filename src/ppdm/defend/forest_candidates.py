"""Candidates a defense search of a published forest weighs: other forests the publisher could release.

For a scikit-learn random forest (or extra trees), and for a boosted model (XGBoost, LightGBM,
scikit-learn's gradient boosting and histogram gradient boosting: fewer rounds, shallower trees,
a larger minimum leaf, or the model kept behind a query interface answering labels or scores
only, :func:`black_box_candidates`), the families are:

* ``retrain``: the user's own estimator (:class:`~ppdm.defend.candidates.Learner`, its settings
  kept) with one change each: fewer trees, a depth limit, a minimum leaf size, or bootstrap
  switched (on ↔ off); each forest imported with its bootstrap multiplicities, which anyone
  holding it can redraw (:mod:`ppdm.tree.sklearn_forest`), so its audits see what they see;
* ``publish-less``: the same forest with every tree publishing less (class counts → error rates
  → labels: :func:`~ppdm.defend.candidates.publish_less_candidates`); with labels only, the
  "predict-only" release, the forest predicts by its trees' votes;
* ``dp``: the ε-DP forest of random trees (:class:`~ppdm.learn.dp_forest.DPRandomForestClassifier`,
  ε shared by its trees) over a grid of ε, depth and number of trees; its counts are noisy.

Pruning and kADET are single-tree defenses and give no forest candidates.

**Cheapest first.** The search (:func:`ppdm.defend.search.defend`) takes the ε-DP forests first
(no maximum-entropy audit applies to them), then the others in the order of
:func:`audit_cost`: the rows of the forest's maximum-entropy problem (per leaf, one per class with
class counts, two with error rates, one with labels; a retrained forest's leaves estimated as
``trees × min(2^depth, rows / min_samples_leaf, leaves per tree of the model)``,
:func:`retrain_cost`) times what a row cost on Adult (paper 000's setting, 10 bootstrap trees,
``docs/defend.md``): about 0.02 s per row for forests without a minimum leaf size (depth limits
alone, the unprotected forest: many leaves pin their records' classes, the optimum lies on the
boundary and Newton's method crawls), 0.002–0.004 s with ``min_samples_leaf`` ≥ 100, and 0.0004 s
with labels only. So a time budget cuts the dearest short, and the small, well-populated forests,
the likeliest to meet a target, are audited first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ppdm.defend.candidates import Candidate, Grids, Learner, boosted_kind
from ppdm.learn.dp_forest import DPRandomForestClassifier
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest

__all__ = ["audit_cost", "audit_rows", "black_box_candidates", "dp_forest_candidates", "forest_retrain_candidates", "min_leaf_of", "retrain_cost"]

MIN_LEAF_FAST = 20
"""A minimum leaf size from which a forest's audit is taken to be fast (see the module docstring)."""
SLOW_ROWS = 10.0
"""How many times more a row of a forest without that minimum leaf size is taken to cost."""
LABEL_ROWS = 0.1
"""What a row of a labels-only forest is taken to cost, relative to a fast one."""


def audit_rows(leaves: float, level: Disclosure, n_classes: int) -> float:
    """Rows of the maximum-entropy problem of ``leaves`` leaves publishing ``level`` (the search's order)."""
    return leaves * {Disclosure.CLASS_COUNTS: n_classes, Disclosure.ERROR_RATES: 2, Disclosure.LABELS: 1}[level]


def audit_cost(leaves: float, level: Disclosure, n_classes: int, min_leaf: int) -> float:
    """The estimated cost of auditing a forest of ``leaves`` leaves publishing ``level`` whose
    leaves hold at least ``min_leaf`` rows (the order of the search; see the module docstring)."""
    rows = audit_rows(leaves, level, n_classes)
    if level is Disclosure.LABELS:
        return rows * LABEL_ROWS
    return rows * (1.0 if min_leaf >= MIN_LEAF_FAST else SLOW_ROWS)


def min_leaf_of(params: dict[str, Any], learner: Learner) -> int:
    """The minimum leaf size of the learner's estimator with ``params`` changed."""
    value = params.get("min_samples_leaf", learner.estimator.get_params().get("min_samples_leaf", 1))
    return int(value) if isinstance(value, (int, float)) and value >= 1 else 1


def retrain_cost(params: dict[str, Any], model: Forest, n_rows: int) -> float:
    """Estimated leaves of ``model``'s estimator retrained with ``params`` (the order of the search;
    a boosted model's rounds each add one tree per score)."""
    per_round = model.n_outputs if model.combine == "additive" else 1
    rounds = next((params[k] for k in ("n_estimators", "max_iter") if k in params), model.n_trees // per_round)
    per_tree = model.n_leaves / model.n_trees
    if "max_depth" in params:
        per_tree = min(per_tree, 2.0 ** params["max_depth"])
    leaf = next((params[k] for k in ("min_samples_leaf", "min_child_samples", "min_child_weight") if k in params), None)
    if leaf is not None:
        per_tree = min(per_tree, n_rows / leaf)
    return float(rounds * per_round * per_tree)


def _sizes(learner: Learner, model: Forest) -> tuple[str, int, str]:
    """The parameter counting trees (rounds) and its value in ``model``, and the one bounding a leaf's size."""
    kind = boosted_kind(learner.estimator)
    if kind is None:
        return "n_estimators", model.n_trees, "min_samples_leaf"
    per_round = model.n_outputs if model.combine == "additive" else 1
    return kind[1], model.n_trees // per_round, kind[2]


def forest_retrain_candidates(learner: Learner, model: Forest, X: pd.DataFrame, y: pd.Series, grids: Grids) -> list[Candidate]:
    """The estimator again with one change each (fewer trees or boosting rounds, ``max_depth``, a
    larger minimum leaf: ``min_samples_leaf``, XGBoost's ``min_child_weight`` (a leaf's hessian
    sum; each row adds at most 1/4 to it under the log-loss), LightGBM's ``min_child_samples``;
    bootstrap switched), cheapest first (:func:`retrain_cost`)."""
    name = type(learner.estimator).__name__
    settings = learner.estimator.get_params()
    rounds, n_rounds, leaf = _sizes(learner, model)
    current = settings.get(leaf)
    smallest = float(current) if isinstance(current, (int, float)) and not isinstance(current, bool) else 1.0
    changes: list[dict[str, Any]] = [{rounds: n} for n in grids.n_estimators if n < n_rounds]
    changes += [{"max_depth": d} for d in grids.max_depth if d < model.depth]
    changes += [{leaf: m} for m in grids.min_samples_leaf if m < len(X) / 2 and m > smallest]
    if "bootstrap" in settings:
        changes.append({"bootstrap": not settings["bootstrap"]})
    changes.sort(key=lambda p: retrain_cost(p, model, len(X)))
    return [
        Candidate(f"{name} {_text(p)}", "retrain", p, lambda p=p: learner.fit_forest(X, y, **p))
        for p in changes
    ]


def black_box_candidates(model: Forest, level: Disclosure) -> list[Candidate]:
    """A boosted model kept behind a query interface instead of published: answering the predicted
    class only, or the class probabilities (what a prediction service returns); audited by the
    attackers of such answers (:func:`~ppdm.attacks.baselines.likelihood.black_box_attacks`)."""
    return [
        Candidate(f"publish predicted {what} only", "publish-less", {"publish": f"predicted {what} only"}, lambda: model, publish=level, black_box=output)
        for output, what in (("label", "labels"), ("score", "scores"))
    ]


def _text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def dp_forest_candidates(
    X: pd.DataFrame, y: pd.Series, epsilons: Sequence[float], depths: Sequence[int], trees: Sequence[int],
    random_state: int | None = 0,
) -> list[Candidate]:
    """The ε-DP random forest for each ε, depth and number of trees (the baseline)."""

    def build(eps: float, depth: int, n: int) -> Forest:
        return DPRandomForestClassifier(epsilon=eps, n_estimators=n, max_depth=depth, random_state=random_state).fit(X, y).forest_

    return [
        Candidate(
            f"DP forest ε={eps:g}, {n} trees, depth {d}", "dp", {"epsilon": eps, "max_depth": d, "n_estimators": n},
            lambda e=eps, d=d, n=n: build(e, d, n), noisy=True,
        )
        for eps in epsilons
        for d in depths
        for n in trees
    ]
