"""The maximum-entropy audit of paper 000 on its Example 1 and on Adult."""

import warnings

import numpy as np
import pytest

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.errors import DataError, UninformativeKnowledgeWarning
from ppdm.learn import ID3Classifier
from ppdm.maxent.constraints.tree_constraints import Knowledge


@pytest.fixture
def example1_tree(d2):
    # Figure 2(b): Age at the root, leaves Youth (2/0), MiddleAge (2/0), Senior (2/1)
    tree = ID3Classifier(min_samples_split=3).fit(d2[["Age", "Education"]], d2["Salary"]).tree_
    tree.class_attribute = "Salary"
    return tree


def test_example_1_without_internal_constraints(example1_tree, d2):
    # Figure 5, row SA: x20 = x30 = 0.5 and D_overall = 0.231 = (2/6) log 2
    result = maxent_attack(example1_tree.published("error-rates"), d2)
    table = result.groups.table
    senior = (table["Age"] == "Senior").to_numpy()
    assert np.allclose(result.posterior[senior], 0.5)
    assert np.allclose(result.posterior[~senior].max(axis=1), 1.0)
    assert result.details["overall_divergence"] == pytest.approx(2 / 6 * np.log(2), abs=1e-9)
    assert result.details["overall_divergence"] == pytest.approx(0.231, abs=5e-4)
    assert result.summary()["certain_records"] == 4


def test_labels_only_is_uniform_and_says_so(example1_tree, d2):
    with pytest.warns(UninformativeKnowledgeWarning, match="learns nothing"):
        result = maxent_attack(example1_tree.published("labels"), d2)
    # pure leaves are not certain any more: a label only says the class is the most frequent,
    # and the uniform estimate meets every label constraint with equality
    assert np.allclose(result.posterior, 0.5)
    assert result.details["constraint_rows"] == {"label": 3}
    assert "learns nothing" in result.details["note"]


def test_informative_knowledge_gives_no_warning(example1_tree, d2):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UninformativeKnowledgeWarning)
        result = maxent_attack(example1_tree.published("labels"), d2, knowledge=Knowledge(sa=True))
    assert "note" not in result.details


def test_sa_constraints_use_the_published_distribution(example1_tree, d2):
    result = maxent_attack(example1_tree.published("labels"), d2, knowledge=Knowledge(sa=True))
    joint = (result.posterior * result.groups.weights[:, None]).sum(axis=0)
    assert np.allclose(joint, [0.5, 0.5])


def test_sa_constraints_without_the_sensitive_column_are_refused(example1_tree, d2):
    with pytest.raises(DataError, match="'Salary'"):
        maxent_attack(example1_tree, d2.drop(columns="Salary"), knowledge=Knowledge(sa=True))


def test_adult_education_audit_is_consistent(adult_train):
    from ppdm.data.datasets import load_adult

    frame, roles = load_adult("train", sensitive="education", class_attribute="education")
    qi = [c for c in roles.quasi_identifiers if frame[c].dtype == "category"]
    assert frame.groupby(qi, observed=True).ngroups == 4480  # paper 000 §5: 4,480 distinct QI values
    tree = ID3Classifier(criterion="gini", max_depth=4).fit(frame[qi], frame["education"]).tree_
    tree.class_attribute = "education"
    with_rates = maxent_attack(tree.published("error-rates"), frame, ThreatModel(known=qi))
    with pytest.warns(UninformativeKnowledgeWarning):
        labels_only = maxent_attack(tree.published("labels"), frame, ThreatModel(known=qi))
    assert with_rates.details["max_violation"] <= 1e-9
    # paper 000 Figure 3: publishing error rates discloses more (smaller divergence)
    assert with_rates.details["overall_divergence"] < labels_only.details["overall_divergence"]
    # each leaf's published rate holds in the estimate
    for leaf in tree.leaves():
        groups = np.flatnonzero([p == f"leaf {leaf.id}" for p in with_rates.provenance])
        if len(groups):
            w = with_rates.groups.weights[groups]
            estimate = (with_rates.posterior[groups, leaf.label] * w).sum() / w.sum()
            assert estimate == pytest.approx(1 - leaf.error_rate, abs=1e-9)
