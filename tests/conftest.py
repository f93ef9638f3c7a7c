"""Shared fixtures: the papers' toy tables, the bundled real datasets (loaded once per run) and
the brute-force references of ``tests/oracles.py``."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest


def _frame(rows: list[tuple], columns: list[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=columns)
    return df.astype(dict.fromkeys(columns, "category"))


@pytest.fixture
def d1() -> pd.DataFrame:
    """Paper 000, Figure 1(a): microdata D1 (QIID column dropped)."""
    rows = [
        ("Masters", "USA", "Female", "<=50K"),
        ("Masters", "USA", "Male", ">50K"),
        ("Masters", "Canada", "Male", "<=50K"),
        ("Masters", "Canada", "Male", "<=50K"),
        ("Masters", "Canada", "Female", "<=50K"),
        ("Masters", "Canada", "Female", ">50K"),
        ("Doctorate", "Canada", "Female", ">50K"),
        ("Doctorate", "Canada", "Female", ">50K"),
        ("Doctorate", "USA", "Male", "<=50K"),
        ("Doctorate", "USA", "Male", ">50K"),
        ("Doctorate", "USA", "Female", ">50K"),
    ]
    return _frame(rows, ["Education", "Country", "Gender", "Salary"])


@pytest.fixture
def d2() -> pd.DataFrame:
    """Paper 000, Figure 2(a): microdata D2 of Example 1."""
    rows = [
        ("Youth", "Doctorate", "<=50K"),
        ("Youth", "Doctorate", "<=50K"),
        ("Senior", "Masters", "<=50K"),
        ("Senior", "Doctorate", ">50K"),
        ("MiddleAge", "Masters", ">50K"),
        ("MiddleAge", "Masters", ">50K"),
    ]
    return _frame(rows, ["Age", "Education", "Salary"])


@pytest.fixture(scope="session")
def adult_train():
    from ppdm.data.datasets import load_adult

    return load_adult("train")


@pytest.fixture(scope="session")
def adult_test():
    from ppdm.data.datasets import load_adult

    return load_adult("test")


@pytest.fixture(scope="session")
def nursery():
    from ppdm.data.datasets import load_nursery

    return load_nursery()


@pytest.fixture
def mortgage() -> pd.DataFrame:
    """Paper 002, Table 1: the mortgage example (Marital Status public; Sports Car, Loan Risk private)."""
    rows = [
        ("Lisa", "Unmarried", "Yes", "good"),
        ("John", "Married", "Yes", "good"),
        ("Ben", "Married", "No", "bad"),
        ("Laura", "Married", "No", "bad"),
        ("Robert", "Unmarried", "Yes", "bad"),
        ("Anna", "Unmarried", "No", "bad"),
    ]
    return pd.DataFrame(rows, columns=["Name", "Marital Status", "Sports Car", "Loan Risk"])


@pytest.fixture
def salary_d() -> pd.DataFrame:
    """Paper 004, Figure 1(a): the data set D of Example 1 (Education, Gender quasi-identifiers; Salary sensitive)."""
    rows = [
        ("Doctorate", "Male", "50K-"), ("Masters", "Female", "50K-"), ("Doctorate", "Female", "50K+"),
        ("Bachelors", "Male", "50K-"), ("Masters", "Female", "50K+"), ("Doctorate", "Male", "50K+"),
        ("Masters", "Female", "50K+"), ("Doctorate", "Female", "50K+"), ("Masters", "Female", "50K+"),
        ("Doctorate", "Female", "50K+"), ("Masters", "Female", "50K+"), ("Doctorate", "Female", "50K+"),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["Education", "Gender", "Salary"])


def _oracles():
    spec = importlib.util.spec_from_file_location("ppdm_test_oracles", Path(__file__).parent / "oracles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def brute_force_spans() -> Callable:
    """The brute-force span reference of ``tests/oracles.py`` (every private value enumerated)."""
    return _oracles().brute_force_spans


@pytest.fixture(scope="session")
def brute_force_forest_spans() -> Callable:
    """The brute-force span reference over a forest (every private value, every tree at once)."""
    return _oracles().brute_force_forest_spans
