"""The Python front door misused: wrong types, impossible values and bad files given to
``ppdm.audit``, ``ppdm.load_model``, ``ppdm.from_estimator``, ``ppdm.ThreatModel``, ``ppdm.defend``
and the readers raise a ppdm error (one line naming the argument or value), never a TypeError,
AttributeError or ValueError from deep inside."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ppdm
from ppdm.errors import DataError, HierarchyError, ModelImportError, PpdmError, ReportError, RulesError, TreeFormatError


@pytest.fixture(scope="module")
def tree(world):
    return ppdm.load_model(world.tree)


@pytest.fixture(scope="module")
def frame(world):
    return pd.read_csv(world.data)


def _readers():
    from ppdm.attacks.core.threat import load_threat
    from ppdm.data.datasets import load_csv
    from ppdm.data.hierarchy import load_hierarchies
    from ppdm.report.load import load_result
    from ppdm.rules import RuleSet
    from ppdm.tree import load_tree

    return [("load_csv", load_csv, DataError), ("load_tree", load_tree, TreeFormatError), ("load_model", ppdm.load_model, TreeFormatError),
            ("load_threat", load_threat, PpdmError), ("load_hierarchies", load_hierarchies, HierarchyError), ("RuleSet.load", RuleSet.load, RulesError),
            ("load_result", load_result, ReportError)]


@pytest.mark.parametrize("reader", range(7), ids=[r[0] for r in _readers()])
@pytest.mark.parametrize("value", [None, 5, b"tree.json", ["a.csv"]], ids=["None", "int", "bytes", "list"])
def test_a_reader_given_no_path_says_so(raises, reader, value):
    _, read, error = _readers()[reader]
    raises(lambda: read(value), error, "expected the path of")


@pytest.mark.parametrize(
    "kwargs, needle",
    [({"sep": 5}, "5 cannot separate fields"), ({"sep": "\n"}, "cannot separate fields"), ({"na_values": 5}, "na_values must be a list of texts"),
     ({"na_values": [None]}, "na_values must be a list of texts"), ({"names": "abc"}, "names must be a list of column names, not the string 'abc'"),
     ({"categorical": "parents"}, "categorical must be a list"), ({"sensitive": "nope"}, "sensitive names unknown column(s) 'nope'"),
     ({"numeric": ["parents"]}, "column 'parents' must be numeric")],
    ids=["sep-int", "sep-newline", "na-int", "na-none", "names-text", "categorical-text", "sensitive-unknown", "numeric-text"],
)
def test_load_csv_arguments_are_checked(world, raises, kwargs, needle):
    from ppdm.data.datasets import load_csv

    raises(lambda: load_csv(world.data, **kwargs), DataError, needle)


def test_load_dataset_names_what_it_does_not_know(raises):
    from ppdm.data.datasets import load_dataset

    raises(lambda: load_dataset("bogus"), DataError, "unknown dataset 'bogus'")
    raises(lambda: load_dataset("nursery", bogus=1), DataError, "the nursery loader takes no argument 'bogus'")


@pytest.mark.parametrize(
    "kwargs, needle",
    [({"known": "age"}, "known must be a list of column names, not the text 'age'"), ({"known": 5}, "known must be a list of column names, got 5"),
     ({"known": [1]}, "known must be a list of column names"), ({"known_individuals": ["a"]}, "known_individuals: 'a' is not a row id"),
     ({"known_individuals": 5}, "known_individuals must be a list of row ids"), ({"known_individuals": [1.5]}, "1.5 is not a row id"),
     ({"known_individuals": [True]}, "True is not a row id"), ({"known_individuals": [2, 2]}, "row 2 is listed twice"),
     ({"sa_published": "yes"}, "sa_published must be True, False or None"), ({"publish": "everything"}, "unknown disclosure 'everything'"),
     ({"sensitive": ["a"]}, "sensitive must be one column name"), ({"preset": "god"}, "unknown threat preset 'god'"), ({"class_known": 1}, "class_known must be True or False")],
    ids=["known-text", "known-int", "known-ints", "individuals-text", "individuals-int", "individuals-float", "individuals-bool", "individuals-twice",
         "sa-text", "publish-unknown", "sensitive-list", "preset-unknown", "class-known-int"],
)
def test_a_threat_model_of_the_wrong_types_is_refused(raises, kwargs, needle):
    raises(lambda: ppdm.ThreatModel(**kwargs), PpdmError, needle)


@pytest.mark.parametrize(
    "call, error, needle",
    [
        (lambda t, f: ppdm.audit(t, f.to_numpy()), DataError, "data must be the training table (a pandas DataFrame or a CSV path), got ndarray"),
        (lambda t, f: ppdm.audit(t, None), DataError, "got NoneType"),
        (lambda t, f: ppdm.audit(None, f), ModelImportError, "NoneType is not a model ppdm imports"),
        (lambda t, f: ppdm.audit(5, f), ModelImportError, "int is not a model ppdm imports"),
        (lambda t, f: ppdm.audit("absent.json", f), TreeFormatError, "absent.json: no such model file"),
        (lambda t, f: ppdm.audit(t, f, 5), PpdmError, "threat must be a ThreatModel"),
        (lambda t, f: ppdm.audit(t, f, {"bogus": 1}), PpdmError, "unknown key 'bogus'"),
        (lambda t, f: ppdm.audit(t, f, missing="bogus"), PpdmError, "unknown missing-value policy 'bogus'"),
        (lambda t, f: ppdm.audit(t, f, exact=True, exact_time_limit=float("nan")), PpdmError, "exact_time_limit must be a finite number of seconds"),
        (lambda t, f: ppdm.audit(t, f, internal=True, time_limit=-1), PpdmError, "time_limit must be a finite number of seconds"),
        (lambda t, f: ppdm.audit(t, f, estimate=False), PpdmError, "estimate=False leaves nothing to do"),
        (lambda t, f: ppdm.audit(t, f.assign(**{"class": "priority"})), DataError, "the sensitive column 'class' holds one value ('priority')"),
        (lambda t, f: ppdm.audit(t, f.head(0)), DataError, "the table has 0 records"),
        (lambda t, f: ppdm.audit(t, f, ppdm.ThreatModel(known=("nope",))), DataError, "known column(s) not in the data: 'nope'"),
        (lambda t, f: ppdm.audit(t, f, ppdm.ThreatModel(known_individuals=(300,))), DataError, "known individual row 300 is outside the table's 300 rows"),
    ],
    ids=["data-numpy", "data-none", "model-none", "model-int", "model-missing", "threat-int", "threat-dict-unknown", "missing-unknown", "exact-time-nan",
         "time-negative", "nothing-to-do", "sensitive-one-value", "empty-table", "known-unknown", "individual-beyond"],
)
def test_ppdm_audit_misused(tree, frame, raises, call, error, needle):
    raises(lambda: call(tree, frame), error, needle)


def test_maxent_attack_on_a_numpy_array_says_what_it_needs(tree, frame, raises):
    from ppdm.attacks.models.maxent import maxent_attack

    raises(lambda: maxent_attack(tree, frame.to_numpy()), DataError, "the records must be a pandas DataFrame (its columns named), got ndarray")
    raises(lambda: maxent_attack(tree, None), DataError, "got NoneType")


def test_from_estimator_misused(frame, raises):
    from sklearn.tree import DecisionTreeClassifier

    raises(lambda: ppdm.from_estimator(5, frame), ModelImportError, "int is not a model ppdm imports")
    raises(lambda: ppdm.from_estimator(DecisionTreeClassifier(), frame), ModelImportError, "not a fitted scikit-learn decision tree")
    dummies = pd.get_dummies(frame.drop(columns="class")).astype(float)
    fitted = DecisionTreeClassifier(max_depth=2, random_state=0).fit(dummies, frame["class"])
    raises(lambda: ppdm.from_estimator(fitted, dummies.to_numpy()), ModelImportError, "X must be the unencoded training table as a pandas DataFrame")
    raises(lambda: ppdm.from_estimator(fitted, frame.drop(columns="class")), ModelImportError, "pass class_attribute (or y as a named Series)")


def test_defend_misused(tree, frame, raises):
    raises(lambda: ppdm.defend(tree, frame.to_numpy()), DataError, "data must be a pandas DataFrame")
    raises(lambda: ppdm.defend(tree, frame, target="x"), PpdmError, "target: 'x' is not name=value")
    raises(lambda: ppdm.defend(tree, frame, time_budget=float("nan")), PpdmError, "time_budget must be positive seconds")
    raises(lambda: ppdm.defend(None, frame.assign(**{"class": "priority"}), class_attribute="class"), DataError, "the class column 'class' holds one value")


def test_a_hierarchy_for_a_billion_bins_is_built_within_bounds(world):
    from ppdm.data.hierarchy.usage import starting_hierarchy

    ages = pd.read_csv(world.adult)["age"]
    assert starting_hierarchy(ages, 10**9).height <= 12  # bounded by the distinct values, not by the billion


def test_load_model_of_a_directory_or_special_file_is_named(tmp_path, raises):
    raises(lambda: ppdm.load_model(tmp_path), TreeFormatError, "is a directory")
    raises(lambda: ppdm.load_model("/dev/zero"), TreeFormatError, "/dev/zero: not a regular file")


def test_an_infinite_threshold_cannot_be_made_in_python_either(tree, raises):
    """A Tree built in Python and saved with a NaN threshold cannot be written (JSON has no NaN)."""
    from ppdm.tree.io import tree_from_dict, tree_to_dict

    doc = tree_to_dict(tree)
    doc["nodes"][0]["split"]["default"] = np.int64(7).item()
    raises(lambda: tree_from_dict(doc), TreeFormatError, "nodes[0].split.default")
