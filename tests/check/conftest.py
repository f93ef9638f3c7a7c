"""The checker's cases: the shared small Nursery table and its depth-3 tree, audited; the breast-cancer
table split into training and held-out rows (the class as ``target``)."""

import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from small_nursery import FEATURES, small_nursery, small_tree

import ppdm

CLASS = "target"


@pytest.fixture(scope="session")
def report_audit():
    """``(tree, table, threat, result)``: the maximum-entropy audit of the small Nursery tree."""
    frame = small_nursery(0)
    tree = small_tree(frame)
    tree.class_attribute = "class"
    threat = ppdm.ThreatModel(sensitive="class", known=FEATURES)
    done = ppdm.audit(tree, frame, threat, progress=False)
    return tree, frame, threat, done.estimate


@pytest.fixture(scope="module")
def cancer():
    """``(X_train, y_train, train, held_out)``: breast cancer's first 8 columns, 30 % held out, stratified."""
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:, :8]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    return Xtr, ytr, Xtr.assign(**{CLASS: ytr.to_numpy()}), Xte.assign(**{CLASS: yte.to_numpy()})


@pytest.fixture(scope="module")
def noisy_cancer():
    """``(X_train, y_train, train, held_out)``: breast cancer's first 8 columns, ``mean texture``
    binned into three levels (``texture``, the attribute audits' sensitive column), 15 % of the
    labels flipped (seed 0: a task a model can overfit, so membership shows), 30 % held out."""
    import numpy as np
    import pandas as pd

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:, :8].copy()
    X["texture"] = pd.qcut(X.pop("mean texture"), 3, labels=False).astype(int)
    flip = np.random.default_rng(0).random(len(y)) < 0.15
    y = pd.Series(np.where(flip, 1 - y, y), index=y.index)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    return Xtr, ytr, Xtr.assign(**{CLASS: ytr.to_numpy()}), Xte.assign(**{CLASS: yte.to_numpy()})
