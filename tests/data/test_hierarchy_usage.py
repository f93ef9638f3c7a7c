"""Hierarchies meet a table (ppdm.data.hierarchy.usage) and YAML booleans in hierarchy files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.data.hierarchy import (
    Hierarchy,
    bin_by_hierarchies,
    check_hierarchies,
    load_hierarchies,
    starting_hierarchy,
)
from ppdm.errors import HierarchyError


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame({
        "age": [23, 35, 47, 51, 62, 70, 29, 44],
        "job": pd.Categorical(["a", "b", "a", "c", "b", "a", "c", "b"]),
        "y": pd.Categorical(list("pqpqpqpq")),
    })


JOB = Hierarchy.categorical("job", {"ANY": [{"ab": ["a", "b"]}, "c"]})
AGE = Hierarchy.from_cuts("age", [[45], [30, 45, 60]])


def test_a_valid_set_passes(table):
    check_hierarchies({"job": JOB, "age": AGE}, table, ["age", "job"])


@pytest.mark.parametrize(
    "hierarchies, public, message",
    [
        ({"jbo": JOB.__class__.categorical("jbo", {"ANY": ["a"]})}, ["job"], "unknown column 'jbo' (did you mean 'job'?"),
        ({"job": JOB}, ["age"], "the hierarchy of 'job' would be ignored: 'job' is not a public attribute"),
        ({"age": Hierarchy.categorical("age", {"ANY": [23, 35]})}, ["age"], "'age' holds numbers but its hierarchy is categorical"),
        ({"job": Hierarchy.from_cuts("job", [[1]])}, ["job"], "the numeric hierarchy of 'job' would be ignored"),
        ({"job": Hierarchy.categorical("job", {"ANY": ["a", "b"]})}, ["job"], "does not cover 2 of 8 value(s): 'c'"),
    ],
)
def test_every_ignored_or_misread_entry_is_an_error(table, hierarchies, public, message):
    with pytest.raises(HierarchyError, match=None) as raised:
        check_hierarchies(hierarchies, table, public, "h.yaml")
    assert str(raised.value).startswith("h.yaml: ") and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_numeric_hierarchy_bins_its_column_into_leaf_intervals(table):
    binned, hierarchies = bin_by_hierarchies(table, {"age": AGE, "job": JOB})
    assert binned["age"].tolist() == ["[-inf, 30)", "[30, 45)", "[45, 60)", "[45, 60)", "[60, inf)", "[60, inf)", "[-inf, 30)", "[30, 45)"]
    assert list(binned["age"].cat.categories) == AGE.leaves()
    assert hierarchies["job"] is JOB and hierarchies["age"].kind == "categorical"
    assert hierarchies["age"].groups_at_depth(1) == [("[-inf, 45)", ["[-inf, 30)", "[30, 45)"]), ("[45, inf)", ["[45, 60)", "[60, inf)"])]
    assert table["age"].dtype.kind == "i"  # the input is left alone


def test_starting_hierarchies(table):
    age = starting_hierarchy(table["age"], bins=4)
    assert age.kind == "numeric" and age.cuts_at_depth(1).tolist() == [45.5] and len(age.cuts_at_depth(2)) == 3
    job = starting_hierarchy(table["job"])
    assert job.kind == "categorical" and job.height == 1 and job.leaves() == ["a", "b", "c"]
    assert starting_hierarchy(pd.Series([5, 5, 5], name="n")).height == 0
    with pytest.raises(HierarchyError, match="no values"):
        starting_hierarchy(pd.Series([np.nan], name="n"))


@pytest.mark.parametrize(
    "tree, where",
    [("{ANY: [yes, no]}", "hierarchies.smoker.tree.ANY[0]: True"), ("{ANY: {on: [a], b: [c]}}", "the name True")],
)
def test_a_yaml_boolean_in_a_categorical_tree_is_an_error_with_the_fix(tmp_path, tree, where):
    path = tmp_path / "h.yaml"
    path.write_text(f"hierarchies:\n  smoker: {{kind: categorical, tree: {tree}}}\n")
    with pytest.raises(HierarchyError) as raised:
        load_hierarchies(path)
    assert where in str(raised.value) and "quote" in str(raised.value)
    path.write_text("hierarchies:\n  smoker: {kind: categorical, tree: {ANY: ['yes', 'no']}}\n")
    assert load_hierarchies(path)["smoker"].leaves() == ["yes", "no"]
