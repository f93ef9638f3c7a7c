"""What a boosted model's leaf values say about every round: the Newton step of the log-loss.

Gradient boosting with the log-loss fits round m's trees to the records' gradients and hessians
at the scores of rounds 1…m−1 (Friedman 2001; Chen & Guestrin, *XGBoost*, KDD 2016, eq. 5). For
the tree of class k (the only tree of a round under the logistic link, k the positive class), a
record i of multiplicity m_i with probability p_i = P(k | score before round m) has gradient
g_i = p_i − [y_i = k] and hessian h_i = s · p_i (1 − p_i), and a leaf's value is

    v = −η G / (H + λ),   G = Σ m_i g_i,   H = Σ m_i h_i,

η the learning rate, λ the L2 penalty and s the hessian's scale: 1 for the logistic link (and
HistGradientBoosting's softmax), 2 for XGBoost's softmax, K/(K−1) for LightGBM's softmax and for
scikit-learn's GradientBoosting (whose one Newton step, Friedman's line search, is
η (K−1)/K · Σ (y − p) / Σ p(1 − p), λ = 0). Anyone who knows a record's inputs computes p_i from
the published rounds before m, so with r = v/η each leaf says

    Σ m_i [y_i = k] = r λ + Σ m_i (p_i + r s p_i (1 − p_i))

(the leaf's class-k count, linear in the labels); a published cover says H. :class:`NewtonStep`
holds η, λ and s as an importer read them from the model; :func:`round_probabilities` computes
every round's p_i from the leaves a record reaches.

A model whose leaf values do not follow this step for a reason the model hides (an L1 penalty,
a maximal step, class or sample weights, rows drawn by GOSS or a subsample it does not store)
carries that reason instead (:func:`newton_step` returns it), and the audit leaves its rounds
after the first out, saying why.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ppdm.tree.forest import Forest, leaf_values

#: Per record, how far a recomputed gradient sum may sit from the library's when its gradients are
#: float32 (XGBoost, LightGBM, HistGradientBoosting: measured up to 8·10⁻⁸ on Adult) or float64
#: (scikit-learn's GradientBoosting: up to 5·10⁻¹⁴).
FLOAT32_TOLERANCE = 1e-6
FLOAT64_TOLERANCE = 1e-9

_KEY = "newton_step"
_HIDDEN = "rounds_hidden"


@dataclass(frozen=True)
class NewtonStep:
    """How a boosted model's leaf values follow from its records' gradients (module docstring).

    ``float32``: the library keeps scores and probabilities in float32 (XGBoost), which
    :func:`round_probabilities` then imitates. ``biased_first_round``: the first round's leaf
    values also hold the starting score (LightGBM's ``boost_from_average``), which the model
    does not store apart: that round's step is not read from them. ``tolerance``: how far, per record counted in a
    leaf, a leaf's gradient sum recomputed from the file may sit from the library's own (the
    precision of its gradients and of the numbers the file stores). ``min_hessian``: a leaf whose
    hessian sum is below it gets the value 0 instead of its step (XGBoost's ``min_child_weight``
    rule): a leaf valued exactly 0 then says nothing about its records' gradients.
    """

    learning_rate: float
    l2: float = 0.0
    hessian_scale: float = 1.0
    float32: bool = False
    tolerance: float = FLOAT64_TOLERANCE
    biased_first_round: bool = False
    min_hessian: float = 0.0

    def to_params(self) -> dict[str, Any]:
        return {k: (bool(v) if isinstance(v, bool) else float(v)) for k, v in asdict(self).items()}


def set_newton_step(params: MutableMapping[str, Any], step: NewtonStep | str) -> None:
    """Record in a forest's ``params`` the step its leaf values follow, or why none is known."""
    params.pop(_KEY, None)
    params.pop(_HIDDEN, None)
    if isinstance(step, NewtonStep):
        params[_KEY] = step.to_params()
    else:
        params[_HIDDEN] = step


def newton_step(forest: Forest) -> NewtonStep | str:
    """The step ``forest``'s leaf values follow, or the reason the audit cannot use its rounds."""
    if forest.combine != "additive":
        return "not a boosted model"
    hidden = forest.params.get(_HIDDEN)
    if isinstance(hidden, str) and hidden:
        return hidden
    raw = forest.params.get(_KEY)
    if not isinstance(raw, dict):
        return "the model does not say how its leaf values were computed (learning rate, L2 penalty)"
    try:
        step = NewtonStep(
            float(raw["learning_rate"]), float(raw.get("l2", 0.0)), float(raw.get("hessian_scale", 1.0)),
            bool(raw.get("float32", False)), float(raw.get("tolerance", FLOAT64_TOLERANCE)), bool(raw.get("biased_first_round", False)),
            float(raw.get("min_hessian", 0.0)),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError):
        return "the model's Newton step parameters are malformed"
    ok = step.learning_rate > 0 and step.l2 >= 0 and step.hessian_scale > 0 and step.tolerance >= 0
    return step if ok and np.isfinite([step.learning_rate, step.l2, step.hessian_scale]).all() else "the model's Newton step parameters are out of range"


def tree_rounds(forest: Forest) -> np.ndarray | None:
    """The boosting round of every tree (rounds of one tree per class, in class order), or
    ``None`` when the trees are not laid out that way."""
    k = forest.n_outputs
    i = np.arange(forest.n_trees)
    if forest.n_trees % k or not np.array_equal(forest.outputs, i % k):
        return None
    return i // k


def round_probabilities(forest: Forest, leaves: np.ndarray, float32: bool = False) -> np.ndarray:
    """Per row of ``leaves`` (rows × trees: the leaf reached in every tree) and tree j, the
    probability of tree j's class at the score before j's round (rows × trees).

    ``float32``: scores are added and the link applied in float32, as XGBoost keeps them.
    """
    rounds = tree_rounds(forest)
    if rounds is None:
        raise ValueError("the forest's trees are not one per class and round")
    k, n = forest.n_outputs, len(leaves)
    dtype: type[np.floating] = np.float32 if float32 else np.float64
    values = np.empty(leaves.shape, dtype=dtype)
    for j, tree in enumerate(forest.trees):
        values[:, j] = leaf_values(tree).astype(dtype)[leaves[:, j]]
    per_round = values.reshape(n, -1, k)
    start = np.broadcast_to(np.asarray(forest.base_score, dtype=dtype), (n, 1, k))
    scores = np.cumsum(np.concatenate([start, per_round[:, :-1]], axis=1), axis=1, dtype=dtype)  # before each round
    if forest.link == "logistic":
        p = np.asarray(1.0 / (1.0 + np.exp(np.negative(scores))), dtype=dtype)
    else:
        e = np.exp(scores - scores.max(axis=2, keepdims=True))
        p = e / e.sum(axis=2, keepdims=True)
    return p.reshape(n, -1).astype(float)


def first_rounds(forest: Forest, n: int) -> Forest:
    """The boosted model of ``forest``'s first ``n`` rounds (what an audit of the first tree
    alone, as before every round was read, saw: ``n = 1``)."""
    rounds = tree_rounds(forest)
    if rounds is None:
        raise ValueError("the forest's trees are not one per class and round")
    keep = int((rounds < n).sum())
    return Forest(
        forest.trees[:keep], "additive", link=forest.link, base_score=forest.base_score, outputs=forest.outputs[:keep],
        multiplicities=forest.multiplicities[:keep], algorithm=forest.algorithm, params=forest.params,
    )  # fmt: skip
