"""Accuracy of a tree measured on disguised test data (paper 001 §4.3).

A disguised test record whose prediction is wrong may be a true record the tree gets wrong, or
a lie. The paper's estimator: test the tree on the disguised test set S and on its complement
S̄ (every value reversed); with P*(correct) and P̄*(correct) the two observed accuracies,

    P*(correct) = P(correct)·θ + P̄(correct)·(1 − θ)
    P̄*(correct) = P̄(correct)·θ + P(correct)·(1 − θ)

so ``P(correct) = (θ·P* − (1 − θ)·P̄*) / (2θ − 1)``.

Beyond binary data (multi-valued attributes, or the ``"attribute"`` scheme) the complement does
not exist. ppdm then uses the same idea leaf by leaf: the tree's leaves partition the attribute
space, so ``P(correct) = Σ_leaves P(path of the leaf ∧ class = its label)``, each term a
conjunction estimated from the disguised test data (:func:`estimate_conjunction`). For binary
data under the record scheme the two estimators are the same number (both are linear in the
disguised counts and agree on every record).

What the paper leaves open, and ppdm's choices: the class is disguised in the test data exactly
when it is among ``columns`` (the default: every column, as in §5), and S̄ then reverses the
class too; attributes of the test table that the tree does not use do not matter. The estimate
is unbiased but not bounded; it is clipped to [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ppdm.errors import DataError
from ppdm.randomize.channel import Scheme, check_scheme, indicator_lie
from ppdm.randomize.estimate import estimate_proportion, proportion_from_indicators
from ppdm.randomize.response import column_domain, complement
from ppdm.tree.model import Tree
from ppdm.tree.splits import Condition, ValueSet

_NEVER = object()

__all__ = ["estimate_accuracy"]


def estimate_accuracy(
    tree: Tree,
    disguised_test: pd.DataFrame,
    theta: float,
    columns: Sequence[str] | None = None,
    scheme: Scheme = "record",
    method: str = "auto",
) -> float:
    """Estimated accuracy of ``tree`` on the true test records, from their disguised copy (§4.3).

    Parameters
    ----------
    tree: a fitted tree (any learner).
    disguised_test: the disguised test records, class column included.
    theta: the probability θ with which test respondents told the truth.
    columns: the columns that were disguised (default: all of ``disguised_test``).
    scheme: the randomization scheme of :func:`ppdm.randomize.disguise`.
    method: ``"complement"`` (the paper's S / S̄ estimator; binary data, record scheme),
        ``"leaves"`` (sum over leaves, any data) or ``"auto"`` (complement when it applies).
    """
    check_scheme(scheme)
    cls = tree.class_attribute
    if cls not in disguised_test.columns:
        raise DataError(f"the test data lack the class column {cls!r}")
    if len(disguised_test) == 0:
        raise DataError("the disguised test data have no rows")
    chosen = set(disguised_test.columns if columns is None else columns)
    unknown = chosen - set(disguised_test.columns)
    if unknown:
        raise DataError(f"disguised column(s) not in the test data: {', '.join(map(repr, sorted(map(str, unknown))))}")
    used = sorted({*tree.split_attributes, cls})
    flipped = [c for c in used if c in chosen]
    binary = all(len(column_domain(disguised_test[c], c)) == 2 for c in flipped)
    if method == "auto":
        method = "complement" if scheme == "record" and binary else "leaves"
    if method == "complement":
        if scheme != "record" or not binary:
            raise DataError("the complement estimator needs binary disguised attributes and the record scheme; use method='leaves'")
        estimate = _by_complement(tree, disguised_test, theta, flipped)
    elif method == "leaves":
        estimate = _by_leaves(tree, disguised_test, theta, chosen, scheme)
    else:
        raise DataError(f"unknown method {method!r} (choose 'auto', 'complement' or 'leaves')")
    return float(np.clip(estimate, 0.0, 1.0))


def _correct(tree: Tree, frame: pd.DataFrame) -> float:
    predicted = tree.predict(frame)
    truth = frame[tree.class_attribute].to_numpy(dtype=object)
    return float(np.mean(predicted == truth))


def _by_complement(tree: Tree, test: pd.DataFrame, theta: float, flipped: list[str]) -> float:
    p_star = _correct(tree, test)
    p_bar_star = _correct(tree, complement(test, flipped))
    return float(estimate_proportion(p_star, p_bar_star, theta))


def _by_leaves(tree: Tree, test: pd.DataFrame, theta: float, chosen: set[str], scheme: str) -> float:
    cls = tree.class_attribute
    class_domain = column_domain(test[cls], cls) if cls in chosen else None
    class_values = test[cls].to_numpy(dtype=object)
    total = 0.0
    for leaf in tree.leaves():
        pattern = np.zeros(len(test), dtype=np.intp)
        lies: list[np.ndarray | None] = []
        possible = True
        for name, condition in tree.prefix(leaf.id).conditions.items():
            hit, lie = _indicator(test, name, condition, chosen)
            if lie is _NEVER:
                possible = False
                break
            if hit is not None:
                pattern = pattern * 2 + hit
                lies.append(lie)
        if not possible:
            continue  # a leaf no value of the domain reaches holds no true record
        label = tree.classes[leaf.label]
        pattern = pattern * 2 + (class_values == label)
        lies.append(None if class_domain is None else indicator_lie(len(class_domain)))
        total += proportion_from_indicators(pattern, lies, theta, scheme)
    return total


def _indicator(test: pd.DataFrame, name: str, condition: Condition, chosen: set[str]) -> tuple[np.ndarray | None, object]:
    """A leaf condition's reported indicator and its lie matrix.

    ``(None, None)`` if the condition holds for every value of the domain, ``(None, _NEVER)``
    if for none.
    """
    column = test[name]
    hit = condition.mask(column)
    if name not in chosen:
        return hit, None
    if not isinstance(condition, ValueSet):
        raise DataError(f"column {name!r} is disguised but the tree splits it numerically")
    domain = column_domain(column, name)
    size = len(condition.values & set(domain))
    if size == len(domain):
        return None, None
    if size == 0:
        return None, _NEVER
    return hit, indicator_lie(len(domain), size)
