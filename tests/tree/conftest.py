"""Train/test splits of Adult, Nursery and Bank Loan, one-hot encoded as the libraries need them,
and an independent check of every count an imported forest claims."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

BANK_LOAN = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"


@dataclass
class Split:
    """Unencoded features, their one-hot encoding (float), the class column and its codes."""

    name: str
    X: pd.DataFrame
    X_test: pd.DataFrame
    D: pd.DataFrame
    D_test: pd.DataFrame
    y: pd.Series
    y_test: pd.Series

    @property
    def codes(self) -> np.ndarray:
        """Class indices 0..K-1 (the category order), as XGBoost and LightGBM want them."""
        return self.y.cat.codes.to_numpy()

    def classes_of(self, codes: np.ndarray) -> np.ndarray:
        return np.asarray(self.y.cat.categories, dtype=object)[codes]


def _split(name: str, train: pd.DataFrame, test: pd.DataFrame, class_column: str, drop: tuple[str, ...] = ()) -> Split:
    features = [c for c in train.columns if c != class_column and c not in drop]
    X, X_test = train[features].reset_index(drop=True), test[features].reset_index(drop=True)
    D = pd.get_dummies(X).astype(float)
    D_test = pd.get_dummies(X_test).reindex(columns=D.columns, fill_value=0).astype(float)
    y = train[class_column].reset_index(drop=True)
    y_test = test[class_column].reset_index(drop=True)
    return Split(name, X, X_test, D, D_test, y, y_test)


@pytest.fixture(scope="session")
def adult_split(adult_train, adult_test) -> Split:
    (train, roles), (test, _) = adult_train, adult_test
    return _split("adult", train, test, roles.class_attribute, drop=("fnlwgt",))


@pytest.fixture(scope="session")
def nursery_split(nursery) -> Split:
    from sklearn.model_selection import train_test_split

    frame, roles = nursery
    train, test = train_test_split(frame, test_size=0.3, random_state=13, stratify=frame[roles.class_attribute])
    return _split("nursery", train, test, roles.class_attribute)


@pytest.fixture(scope="session")
def bank_split() -> Split:
    if not BANK_LOAN.exists():
        pytest.skip("Bank_Personal_Loan_Modelling.csv not available")
    from sklearn.model_selection import train_test_split

    from ppdm.data.datasets import load_bank_loan

    frame, roles = load_bank_loan(BANK_LOAN)
    train, test = train_test_split(frame, test_size=0.3, random_state=13, stratify=frame[roles.class_attribute])
    return _split("bank", train, test, roles.class_attribute, drop=("ID",))


@pytest.fixture(params=["adult", "nursery", "bank"])
def any_split(request) -> Split:
    return request.getfixturevalue(f"{request.param}_split")


def _direct(tree, leaves: np.ndarray, weights: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows (with multiplicity) and per-class rows under every node, counted node by node."""
    k = len(tree.classes)
    at_leaf = np.zeros((tree.n_nodes, k))
    np.add.at(at_leaf, (leaves, codes), weights)
    by_class = np.zeros((tree.n_nodes, k))
    for node in tree.nodes:
        below = [node.id] + [d.id for d in tree.descendants(node.id)]
        by_class[node.id] = at_leaf[below].sum(axis=0)
    return by_class.sum(axis=1), by_class


@pytest.fixture(scope="session")
def claims_hold() -> Callable:
    """``claims_hold(forest, X, codes)``: route the training rows ``X`` (classes ``codes``) through
    every tree and assert that every row and class count the forest claims is the direct count.
    Trees with unknown multiplicities count each row once when their root holds every row.
    Returns the number of trees checked and of those with class counts."""

    def check(forest, X: pd.DataFrame, codes: np.ndarray) -> tuple[int, int]:
        leaves = forest.apply(X)
        checked = with_classes = 0
        for i, tree in enumerate(forest.trees):
            weights = forest.multiplicities[i]
            if weights is None:
                if tree.root.n_samples is None or round(tree.root.n_samples) != len(X):
                    continue
                weights = np.ones(len(X))
            rows, by_class = _direct(tree, leaves[:, i], np.asarray(weights, dtype=float), codes)
            for node in tree.nodes:
                if "sample-counts" in forest.known[i] or "class-counts" in forest.known[i]:
                    assert node.n_samples == pytest.approx(rows[node.id], abs=1e-9), (i, node.id)
                if "class-counts" in forest.known[i]:
                    assert np.allclose(node.counts, by_class[node.id], atol=1e-9), (i, node.id, node.counts, by_class[node.id])
            checked += 1
            with_classes += "class-counts" in forest.known[i]
        return checked, with_classes

    return check
