"""Small tables the forest audits' tests share (every model family fits on them: ``tests/families.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from families import ADULT_QIS, small_table

BANK_LOAN = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"


@pytest.fixture(scope="module")
def adult_small(adult_train):
    frame, roles = adult_train
    return small_table(frame, ["age", *ADULT_QIS], roles.class_attribute, 600)


@pytest.fixture(scope="module")
def nursery_small(nursery):
    frame, roles = nursery
    return small_table(frame, [c for c in frame.columns if c != roles.class_attribute], roles.class_attribute, 300)


@pytest.fixture(scope="module")
def adult():
    """Adult's training rows (the regression audits' table)."""
    from ppdm.data.datasets import load_adult

    return load_adult("train")[0]


@pytest.fixture(scope="module")
def bank():
    """Bank Personal Loan without its ID column (skipped when the file is absent)."""
    if not BANK_LOAN.exists():
        pytest.skip("Bank_Personal_Loan_Modelling.csv not available")
    from ppdm.data.datasets import load_bank_loan

    return load_bank_loan(BANK_LOAN)[0].drop(columns=["ID"])
