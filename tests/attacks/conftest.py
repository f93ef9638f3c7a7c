"""Small tables the forest audits' tests share (every model family fits on them: ``tests/families.py``)."""

from __future__ import annotations

import pytest

from families import ADULT_QIS, small_table


@pytest.fixture(scope="module")
def adult_small(adult_train):
    frame, roles = adult_train
    return small_table(frame, ["age", *ADULT_QIS], roles.class_attribute, 600)


@pytest.fixture(scope="module")
def nursery_small(nursery):
    frame, roles = nursery
    return small_table(frame, [c for c in frame.columns if c != roles.class_attribute], roles.class_attribute, 300)
