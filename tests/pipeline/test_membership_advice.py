"""A pool missing some training records is refused with the audit's own argument to declare it."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.errors import DataError


def test_the_refusal_names_sample_not_the_attack_s_complete():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:, :6].rename(columns=lambda c: c.replace(" ", "_"))
    member = np.random.default_rng(0).random(len(y)) < 0.5
    est = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[member], y[member].astype(str))
    pool = X.assign(target=y.astype(str), member=member)
    half = pool[~member | (np.arange(len(pool)) % 2 == 0)]
    with pytest.raises(DataError, match=r"sample=True") as caught:
        ppdm.audit(est, membership=half)
    assert "complete=False" not in str(caught.value)
    assert ppdm.audit(est, membership=half, sample=True).membership is not None
