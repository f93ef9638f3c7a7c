"""Paper 003 §3.1: the example tree of Figure 3 read as Table 4, and the three attacks on it."""

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks import (
    background_knowledge_attack,
    homogeneity_attack,
    homogeneous_leaves,
    single_record_leaves,
    tree_as_table,
    uniqueness_attack,
)
from ppdm.errors import AttackError
from ppdm.tree import Node, ThresholdSplit, Tree
from ppdm.tree.model import Attribute

NO, YES = 0, 1


@pytest.fixture
def figure3():
    """Height < 170 → (Weight < 60: 2 yes / 1 no; Weight ≥ 60: 2 no); Height ≥ 170 → (Age < 15: 1 yes; Age ≥ 15: 1 yes / 2 no)."""
    c = lambda no, yes: np.array([no, yes], dtype=float)  # noqa: E731
    nodes = [
        Node(0, None, 0, NO, c(5, 4), ThresholdSplit("Height", 169.5), [1, 2], ("Height", "Weight", "Age")),
        Node(1, 0, 1, NO, c(3, 2), ThresholdSplit("Weight", 59.5), [3, 4], ("Weight", "Age")),
        Node(2, 0, 1, NO, c(2, 2), ThresholdSplit("Age", 14.5), [5, 6], ("Weight", "Age")),
        Node(3, 1, 2, YES, c(1, 2)),
        Node(4, 1, 2, NO, c(2, 0)),
        Node(5, 2, 2, YES, c(0, 1)),
        Node(6, 2, 2, NO, c(2, 1)),
    ]
    attrs = [Attribute(a, "numeric") for a in ("Height", "Weight", "Age")]
    return Tree(nodes, attrs, ["no", "yes"], class_attribute="Health")


@pytest.fixture
def people():
    rows = [
        (160, 55, 30, "yes"), (165, 50, 40, "yes"), (168, 58, 20, "no"),
        (160, 70, 30, "no"), (160, 70, 30, "no"),  # two people the attacker cannot tell apart
        (175, 60, 12, "yes"),
        (173, 70, 33, "yes"), (171, 65, 19, "no"), (180, 90, 40, "no"),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["Height", "Weight", "Age", "Health"], index=[f"p{i}" for i in range(9)])


def test_table_4(figure3):
    table = tree_as_table(figure3)
    assert len(table) == 9
    assert table[["Height", "Weight", "Age", "Health"]].values.tolist() == [
        ["<= 169.5", "<= 59.5", "*", "no"],
        ["<= 169.5", "<= 59.5", "*", "yes"],
        ["<= 169.5", "<= 59.5", "*", "yes"],
        ["<= 169.5", "> 59.5", "*", "no"],
        ["<= 169.5", "> 59.5", "*", "no"],
        ["> 169.5", "*", "<= 14.5", "yes"],
        ["> 169.5", "*", "> 14.5", "no"],
        ["> 169.5", "*", "> 14.5", "no"],
        ["> 169.5", "*", "> 14.5", "yes"],
    ]


def test_uniqueness_sixth_row(figure3, people):
    assert single_record_leaves(figure3).tolist() == [5]
    result = uniqueness_attack(figure3, people)
    assert result.details["single_record_leaves"] == 1
    # the one person taller than 170 and under 15 is unique and exposed as healthy
    assert result.exposed.tolist() == [False] * 5 + [True] + [False] * 3
    assert result.predicted()[5] == YES


def test_homogeneity_fourth_and_fifth_rows(figure3, people):
    leaves, users = homogeneous_leaves(figure3)
    assert leaves.tolist() == [4, 5] and users == 3
    result = homogeneity_attack(figure3, people)
    assert result.exposed.tolist() == [False, False, False, True, True, True, False, False, False]
    assert result.summary()["exposed_records"] == 3
    assert result.provenance[3] == "leaf 4"
    # the attacker's confidence in everyone's true value
    assert np.allclose(result.confidence_in_truth(), [2 / 3, 2 / 3, 1 / 3, 1, 1, 1, 1 / 3, 2 / 3, 2 / 3])


def test_background_knowledge_user_a_reveals_user_b(figure3, people):
    known = people.loc[["p6"]]  # user A: height 173, age 33, healthy
    result = background_knowledge_attack(figure3, people, known)
    b = people.index.get_loc("p7")  # user B: height 171, age 19
    assert result.certain_groups[result.groups.group_of_record[b]]
    assert result.predicted()[b] == NO
    assert not result.targets[people.index.get_loc("p6")]
    assert result.details["targets_newly_certain"] == 2  # B and the other person of that leaf


def test_labels_only_tree_cannot_be_read(figure3, people):
    with pytest.raises(AttackError, match="labels only"):
        homogeneity_attack(figure3.published("labels"), people)


def test_error_rates_suffice_for_two_classes(figure3, people):
    result = homogeneity_attack(figure3.published("error-rates"), people)
    assert result.summary()["exposed_records"] == 3
