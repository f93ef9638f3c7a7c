"""The simple model-based attackers an audit must never fall below: the likelihood rules.

An attacker who knows every input of a person but the sensitive one, and the person's class
(``class_known``) or the model's answer about them (``outputs="label"``), can try every value
of the sensitive input in the model and see which reproduces that class. Two rules, each a
posterior over the sensitive values per person:

* **The Bayes rule** ``P(v | x, y) ∝ π(v) · P_model(y | x_{-s}, v)``: the prior times the model's
  probability of the class (a forest's vote or mean, a boosted model's link; a tree's leaf
  frequencies), with one observation of each class added so that no rule claims a certainty it
  cannot prove (:func:`_smoothed_proba`), for any model.
* **The leaf-count rule**, a single tree's ``P(v | x, y) ∝ π(v) · (n_y(leaf(x, v)) + 1)``: the prior
  times the records of the class in the leaf the value leads to (add-one smoothed). It is the
  soft form of **ART's white-box rule** (Fredrikson et al., CCS 2015, §4; IBM ART's
  ``AttributeInferenceWhiteBoxDecisionTree``: the one value whose prediction is the class, else
  the largest ``π(v) · n(leaf(x, v))``), which is measured beside it
  (:func:`art_white_box_rule`) but never reported: it is certain of every guess, right or wrong,
  so its confidence means nothing.

When the sensitive column is the class itself and every input is known, the one rule is the
model's own prediction, ``P_model(v | x)``, smoothed the same way. π is the audited table's distribution of the
sensitive column (what ``sa_published`` gives the attacker). :func:`likelihood_attacks` returns
the rules that apply to a threat model, none when the attacker lacks an input or the class, or
when the audit's values are intervals of a numeric column (there is no one value to try).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.threat import ThreatModel
from ppdm.data.qigroups import QIGroups
from ppdm.errors import PpdmError
from ppdm.metrics.baseline import prior_distribution
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree, encode_categories

__all__ = ["applies", "art_white_box_rule", "black_box_attacks", "every_value", "likelihood_attacks", "posterior_result", "prior_rule"]


def applies(model: Tree | Forest, threat: ThreatModel) -> bool:
    """Whether the rules apply: every input of the model but the sensitive one is known, and the
    sensitive column is the class, or the class (or the predicted label) is known."""
    known = set(threat.known or ())
    inputs = set(model.split_attributes) - {threat.sensitive}
    if not inputs <= known:
        return False
    return threat.sensitive == model.class_attribute or model.class_attribute in known or threat.outputs == "label"


def likelihood_attacks(model: Tree | Forest, data: pd.DataFrame, threat: ThreatModel, values: tuple) -> list[AttackResult]:
    """The likelihood rules (module docstring) for a resolved ``threat`` over ``data`` (the
    audited rows, with every input of the model), each over ``values`` (the audit's domain of the
    sensitive column, in its order); ``[]`` when they do not apply."""
    if not applies(model, threat):
        return []
    sensitive = str(threat.sensitive)
    classes = list(model.classes)
    if sensitive == model.class_attribute:
        proba = _smoothed_proba(model, data)
        order = [classes.index(v) if v in classes else -1 for v in values]
        posterior = np.where(np.array(order) >= 0, proba[:, np.maximum(order, 0)], 0.0)
        return [_result("the model's prediction", data, threat, values, posterior)]
    truth = encode_categories(data[sensitive], values) if sensitive in data.columns else None
    if truth is None or (truth < 0).any():  # the audit's values are cells of a numeric column, not values to try
        return []
    prior = _prior(truth, len(values))
    label = model.predict(data) if threat.outputs == "label" and model.class_attribute not in (threat.known or ()) else data[model.class_attribute]
    y = np.array([classes.index(c) if c in classes else -1 for c in label])
    trial = _every_value(data, sensitive, values)
    k, n = len(values), len(data)
    counts = np.zeros((0, 0, 0))
    if isinstance(model, Tree):
        counts = _leaf_class_counts(model)[model.apply(trial)].reshape(k, n, len(classes))
        proba = (counts + 1.0) / (counts.sum(axis=2, keepdims=True) + len(classes))
    else:
        proba = _smoothed_proba(model, trial).reshape(k, n, len(classes))
    likelihood = np.where(y >= 0, proba[:, np.arange(n), np.maximum(y, 0)], 1.0).T  # persons × values
    out = [_result("Bayes rule", data, threat, values, likelihood * prior)]
    if isinstance(model, Tree):
        joint = np.where(y >= 0, counts[:, np.arange(n), np.maximum(y, 0)], 0.0).T + 1.0
        out.append(_result("leaf-count rule", data, threat, values, joint * prior))
    return out


def black_box_attacks(model: Tree | Forest, data: pd.DataFrame, threat: ThreatModel, values: tuple, output: str) -> list[AttackResult]:
    """The attackers of a model published as its answers only (a black box that anyone may query
    for any input): ``output="score"`` answers the class probabilities, so the Bayes rule above
    applies as it is; ``output="label"`` answers the predicted class only, and the rule becomes
    Fredrikson et al.'s black-box inversion (CCS 2015, §3): ``P(v | x, y) ∝ π(v) · C(y | f(x, v))``,
    the prior times how often the class is ``y`` when the model predicts ``f(x, v)`` (the model's
    confusion on the audited rows, add-one smoothed: what a published accuracy tells). ``[]`` when
    the rules do not apply (:func:`applies`)."""
    if output == "score":
        return likelihood_attacks(model, data, threat, values)
    if output != "label":
        raise PpdmError(f"unknown black-box output {output!r} (label or score)")
    sensitive = str(threat.sensitive)
    if not applies(model, threat) or (sensitive != model.class_attribute and model.class_attribute not in (threat.known or ())):
        return []  # the rule reads the person's class (an attacker seeing only their answer: not yet)
    classes = list(model.classes)
    k = len(classes)
    index = pd.Index(classes, dtype=object)
    truth_class = index.get_indexer(pd.Index(data[model.class_attribute].astype(object), dtype=object)) if model.class_attribute in data.columns else None
    predicted = index.get_indexer(pd.Index(model.predict(data).astype(object), dtype=object))
    confusion = np.ones((k, k))  # [true class, predicted class], add-one smoothed
    if truth_class is not None:
        ok = truth_class >= 0
        np.add.at(confusion, (truth_class[ok], predicted[ok]), 1.0)
    given = confusion / confusion.sum(axis=0, keepdims=True)  # C(y | predicted)
    if sensitive == model.class_attribute:
        order = [classes.index(v) if v in classes else -1 for v in values]
        scores = np.where(np.array(order) >= 0, given[np.maximum(order, 0)][:, predicted].T, 0.0)
        return [_result("black-box label rule", data, threat, values, scores)]
    truth = encode_categories(data[sensitive], values) if sensitive in data.columns else None
    if truth is None or (truth < 0).any() or truth_class is None:
        return []
    trial = _every_value(data, sensitive, values)
    n = len(data)
    answers = index.get_indexer(pd.Index(model.predict(trial).astype(object), dtype=object)).reshape(len(values), n)
    y = np.maximum(truth_class, 0)
    likelihood = given[y[None, :], answers].T  # persons × values
    return [_result("black-box label rule", data, threat, values, likelihood * _prior(truth, len(values)))]


def art_white_box_rule(model: Tree | Forest, data: pd.DataFrame, threat: ThreatModel, values: tuple) -> AttackResult | None:
    """IBM ART's white-box decision-tree rule, exactly (module docstring), as a one-hot posterior:
    for comparison only; ``None`` when it does not apply (a forest, a missing input or class)."""
    if not isinstance(model, Tree) or not applies(model, threat) or threat.sensitive == model.class_attribute:
        return None
    sensitive = str(threat.sensitive)
    classes = list(model.classes)
    truth = encode_categories(data[sensitive], values) if sensitive in data.columns else None
    if truth is None or (truth < 0).any():
        return None
    label = model.predict(data) if threat.outputs == "label" and model.class_attribute not in (threat.known or ()) else data[model.class_attribute]
    y = np.array([classes.index(c) if c in classes else -1 for c in label])
    trial = _every_value(data, sensitive, values)
    return _result("ART white-box rule", data, threat, values, _art_rule(model, trial, y, _prior(truth, len(values)), len(values), len(data)))


def prior_rule(data: pd.DataFrame, threat: ThreatModel, values: tuple) -> AttackResult | None:
    """The attacker who ignores the model: every person's posterior is the prior π, its guess the
    majority value every summary's baseline names. Kept to the values an estimate leaves possible
    (:func:`~ppdm.attacks.baselines.portfolio.combined_attack`) it is never below that baseline, whatever
    the attacker knows: the rules above need every input, this one nothing. ``None`` without the
    true values."""
    sensitive = str(threat.sensitive)
    truth = encode_categories(data[sensitive], values) if sensitive in data.columns else None
    if truth is None or (truth < 0).any():
        return None
    return _result("prior's majority guess", data, threat, values, np.tile(_prior(truth, len(values)), (len(data), 1)))


def _smoothed_proba(model: Tree | Forest, frame: pd.DataFrame) -> np.ndarray:
    """The model's class probabilities with one observation of each class added, so that no
    rule claims a certainty the model does not prove (a pure leaf or a unanimous vote still
    meets people of the other classes among the training rows): a tree's leaf counts plus one
    each; a forest's (or boosted model's) probabilities as if each of its T trees voted them and
    one more tree voted each class once, ``(T·p + 1) / (T + k)``."""
    k = len(model.classes)
    if isinstance(model, Tree):
        counts = _leaf_class_counts(model)[model.apply(frame)] + 1.0
        return counts / counts.sum(axis=1, keepdims=True)
    trees = max(model.n_trees, 1)
    return (np.asarray(model.predict_proba(frame), dtype=float) * trees + 1.0) / (trees + k)


def _leaf_class_counts(tree: Tree) -> np.ndarray:
    """Per node, its published class counts (the label's one-hot times the size when only
    sizes or labels are published)."""
    k = len(tree.classes)
    out = np.zeros((tree.n_nodes, k))
    for node in tree.nodes:
        if node.counts is not None:
            out[node.id] = node.counts
        else:
            out[node.id, node.label] = node.n_samples or 0.0
    return out


def _every_value(data: pd.DataFrame, sensitive: str, values: tuple) -> pd.DataFrame:
    """``data`` repeated once per candidate value, the sensitive column set to it (value-major)."""
    trial = pd.concat([data] * len(values), ignore_index=True)
    column = np.repeat(np.asarray(values, dtype=object), len(data))
    if isinstance(data[sensitive].dtype, pd.CategoricalDtype):
        trial[sensitive] = pd.Categorical(column, categories=data[sensitive].cat.categories)
    else:
        trial[sensitive] = pd.Series(column, dtype=data[sensitive].dtype)
    return trial


def _art_rule(tree: Tree, trial: pd.DataFrame, y: np.ndarray, prior: np.ndarray, k: int, n: int) -> np.ndarray:
    """One-hot on ART's choice: the one value whose prediction is the class, else the largest
    prior times leaf size (persons × values)."""
    nodes = tree.apply(trial)
    sizes = np.array([node.n_samples or 0.0 for node in tree.nodes], dtype=float)
    leaf_size = sizes[nodes].reshape(k, n).T
    matches = tree.leaf_labels()[nodes].reshape(k, n).T == y[:, None]
    one = matches.sum(axis=1) == 1
    choice = np.where(one, matches.argmax(axis=1), (leaf_size * prior).argmax(axis=1))
    out = np.zeros((n, k))
    out[np.arange(n), choice] = 1.0
    return out


def every_value(data: pd.DataFrame, sensitive: str, values: tuple) -> pd.DataFrame:
    """``data`` once per candidate value of ``sensitive`` (value-major): the frames a rule that
    tries every value queries the model on (any classifier's, e.g. the output checker's inversion)."""
    return _every_value(data, sensitive, values)


def posterior_result(name: str, data: pd.DataFrame, threat: ThreatModel, values: tuple, scores: np.ndarray) -> AttackResult:
    """The :class:`AttackResult` of a rule's per-person scores over ``values`` (persons × values,
    normalised here), grouped by the known columns: the rules above, and any other black-box rule."""
    return _result(name, data, threat, values, scores)


def _prior(truth: np.ndarray | None, k: int) -> np.ndarray:
    return np.full(k, 1.0 / k) if truth is None or (truth < 0).any() else prior_distribution(truth, k)


def _result(name: str, data: pd.DataFrame, threat: ThreatModel, values: tuple, scores: np.ndarray) -> AttackResult:
    """An :class:`AttackResult` of per-person scores, normalised, grouped by the known values."""
    known = [c for c in (threat.known or ()) if c in data.columns]
    mass = scores.sum(axis=1, keepdims=True)
    posterior = np.where(mass > 0, scores / np.where(mass > 0, mass, 1.0), 1.0 / len(values))
    signature = np.unique(np.round(posterior, 12), axis=0, return_inverse=True)[1].ravel()
    groups = QIGroups.split_by(data, known, signature)
    sensitive = str(threat.sensitive)
    truth = encode_categories(data[sensitive], values) if sensitive in data.columns else None
    targets = np.ones(len(data), dtype=bool)
    targets[list(threat.known_individuals)] = False
    result = AttackResult(
        attack=name,
        sensitive=sensitive,
        values=values,
        groups=groups,
        posterior=posterior[groups.first_rows()],
        provenance=[name] * groups.n_groups,
        targets=targets,
        exposed=np.zeros(len(data), dtype=bool),
        true_codes=None if truth is None or (truth < 0).any() else truth,
        details={"threat_model": threat.describe(), "attacker": name},
    )
    if pd.api.types.is_integer_dtype(data.index):
        result.row_ids = data.index.to_numpy()
    return result
