"""A small synthetic bank-loan table (imported through pytest's ``pythonpath``), shaped like the
README walkthrough's Bank Personal Loan data: an identifier and a ZIP code, amounts with one
decimal (``CCAvg``), and a numeric ``Education`` (1, 2, 3) that the loan decision depends on, so a
model splits on the sensitive column and an attacker who lacks it reaches several leaves."""

from __future__ import annotations

import numpy as np
import pandas as pd

FEATURES = ["Age", "Income", "Family", "CCAvg", "Education"]


def loan_table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Customers with an id, a ZIP code, amounts with one decimal, and Education 1/2/3 that the
    loan decision (the class) depends on."""
    rng = np.random.default_rng(seed)
    income = rng.integers(8, 225, n)
    education = rng.choice([1, 2, 3], n, p=[0.42, 0.28, 0.30])
    family = rng.integers(1, 5, n)
    ccavg = np.round(rng.gamma(2.0, 1.0, n), 1)
    score = (income > 110) * 2 + (education > 1) + (family > 2) * 0.8 + (ccavg > 2.9) * 0.7 + rng.normal(0, 0.6, n)
    return pd.DataFrame({
        "ID": np.arange(1, n + 1), "Age": rng.integers(23, 68, n), "Income": income, "ZIP Code": rng.integers(90000, 96700, n),
        "Family": family, "CCAvg": ccavg, "Education": education, "Personal Loan": (score > 2.6).astype(int),
    })  # fmt: skip
