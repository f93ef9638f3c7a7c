"""The confidence (loss) membership attack: Yeom, Giacomelli, Fredrikson & Jha, *Privacy Risk in
Machine Learning: Analyzing the Connection to Overfitting*, CSF 2018, §3.2 (the adversary that
thresholds the model's loss on a candidate: a training record's loss is lower).

The score is the model's confidence in the candidate's true class, ``p``: the cross-entropy loss
is ``-log p``, so thresholding the loss and thresholding ``p`` flag the same candidates. It needs
nothing but the model's predicted probabilities; no shadow model.
"""

from __future__ import annotations

import numpy as np

__all__ = ["confidence_scores", "true_class_confidence"]


def true_class_confidence(proba: np.ndarray, labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Each row's predicted probability of its own class: ``proba`` (rows × ``classes``), the
    rows' ``labels``; a label the model does not know (a class missing from a shadow model's
    training half) has confidence 0."""
    index = _class_index(labels, classes)
    proba = np.asarray(proba, dtype=float)
    rows = np.arange(len(index))
    return np.where(index >= 0, proba[rows, np.maximum(index, 0)], 0.0)


def _class_index(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The column of each label among ``classes`` (``-1``: not there), compared as given, then as text."""
    import pandas as pd

    found = pd.Index(classes).get_indexer(pd.Index(labels))
    if (found < 0).all() and len(found):
        found = pd.Index([str(c) for c in classes]).get_indexer(pd.Index([str(v) for v in labels]))
    return np.asarray(found, dtype=int)


def confidence_scores(confidence: np.ndarray) -> np.ndarray:
    """Yeom et al.'s membership score: the true-class confidence itself (higher: a member)."""
    return np.asarray(confidence, dtype=float).copy()
