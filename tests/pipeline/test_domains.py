"""Values a categorical column declares but no training row holds (:mod:`ppdm.pipeline.domains`):
the audit leaves them out and warns, so a pandas ``Categorical``'s unused category does not draw the
attacker's belief away from the values the rows hold (habit 2); the truth stays feasible."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.errors import PpdmError, UnheldValueWarning
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.splits import CategoricalSplit


@pytest.fixture(scope="module")
def rows(nursery) -> pd.DataFrame:
    frame, _ = nursery
    return frame.sample(1_500, random_state=0).reset_index(drop=True)


def _ghost(table: pd.DataFrame, column: str) -> pd.DataFrame:
    out = table.copy()
    out[column] = out[column].astype("category").cat.add_categories(["ghost"])
    return out


def _audit(estimator, fitted_on, table, features, threat, **kw):  # type: ignore[no-untyped-def]
    """The audit on ``table`` of ``estimator`` fitted on ``fitted_on``'s dummies (one fit for
    both tables: a dummy column more would permute scikit-learn's features, so another tree)."""
    fitted = estimator.fit(pd.get_dummies(fitted_on[features]), fitted_on["class"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = ppdm.audit(fitted, table, threat, progress=False, **kw)
    return found, [w for w in caught if issubclass(w.category, UnheldValueWarning)]


@pytest.mark.parametrize("split_on", [True, False], ids=["sensitive-split-on", "sensitive-not-in-model"])
def test_an_unused_category_of_the_sensitive_column_draws_no_belief(rows, split_on) -> None:
    features = [c for c in rows.columns if c != "class" and (split_on or c != "health")]
    threat = ppdm.ThreatModel(sensitive="health", known=("parents", "form", "class"), sa_published=False)
    tree = DecisionTreeClassifier(min_samples_leaf=5, random_state=0)
    plain, none = _audit(tree, rows, rows, features, threat)
    ghost, said = _audit(tree, rows, _ghost(rows, "health"), features, threat)
    assert not none and len(said) == 1 and "'health'" in str(said[0].message) and "'ghost'" in str(said[0].message)
    assert "P(ghost)" not in ghost.people().columns
    np.testing.assert_allclose(ghost.estimate.posterior, plain.estimate.posterior, atol=1e-9)
    assert ghost.summary()["attacker_accuracy"] == pytest.approx(plain.summary()["attacker_accuracy"])


def test_an_unused_category_of_an_unknown_column_of_a_forest_changes_nothing(rows) -> None:
    features = [c for c in rows.columns if c != "class"]
    threat = ppdm.ThreatModel(sensitive="health", known=("parents", "class"))
    forest = RandomForestClassifier(n_estimators=5, max_depth=5, random_state=0)
    plain, _ = _audit(forest, rows, rows, features, threat)
    ghost, said = _audit(forest, rows, _ghost(rows, "finance"), features, threat)
    assert len(said) == 1 and "'finance'" in str(said[0].message)
    np.testing.assert_allclose(ghost.estimate.posterior, plain.estimate.posterior, atol=1e-9)


def test_a_sample_of_the_training_table_keeps_its_domains(rows) -> None:
    features = [c for c in rows.columns if c != "class"]
    table = _ghost(rows, "health")
    tree = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(pd.get_dummies(table[features]), table["class"])
    threat = ppdm.ThreatModel(sensitive="health", known=("parents", "form", "class"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnheldValueWarning)
        found = ppdm.audit(tree, table.head(600), threat, sample=True, progress=False)
    assert "P(ghost)" in found.people().columns


def _stump() -> Tree:
    split = CategoricalSplit("a", (("x", "ghost"), ("y",)), default=0)
    nodes = [Node(0, None, 0, 0, np.array([3.0, 2.0]), split, [1, 2]), Node(1, 0, 1, 0, np.array([3.0, 0.0])), Node(2, 0, 1, 1, np.array([0.0, 2.0]))]
    return Tree(nodes, [Attribute("a", "categorical", ("x", "y", "ghost"))], ("no", "yes"))


def test_without_values_routes_every_row_as_before() -> None:
    tree = _stump()
    rows = pd.DataFrame({"a": ["x", "y", "x", "y"]})
    fewer = tree.without_values({"a": ["ghost"]})
    assert fewer.attributes["a"].categories == ("x", "y") and tree.attributes["a"].categories == ("x", "y", "ghost")
    assert fewer.nodes[0].split == CategoricalSplit("a", (("x",), ("y",)), 0)
    np.testing.assert_array_equal(fewer.apply(rows), tree.apply(rows))
    with pytest.raises(PpdmError, match="node 0 splits 'a'"):
        tree.without_values({"a": ["y"]})
