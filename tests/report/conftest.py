"""A small audit with people proved, people at high confidence and people the model barely moves.

The table: known columns ``a`` and ``b``, sensitive class ``s``. Where ``a = x`` everyone has
``s = p`` (a pure leaf: those people are proved); elsewhere ``s`` is mixed.
"""

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.learn import ID3Classifier


def small_table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 240
    a = rng.choice(["x", "y", "z"], size=n)
    b = rng.choice(["u", "v"], size=n)
    mixed = np.where(rng.random(n) < 0.75, "q", "p")
    s = np.where(a == "x", "p", np.where((a == "z") & (b == "u"), mixed, np.where(rng.random(n) < 0.5, "p", "q")))
    return pd.DataFrame({"a": a, "b": b, "s": s}).astype("category")


@pytest.fixture(scope="session")
def audit():
    """``(tree, table, threat, result)`` of the maximum-entropy audit of the small table."""
    frame = small_table()
    model = ID3Classifier().fit(frame[["a", "b"]], frame["s"])
    tree = model.tree_
    tree.class_attribute = "s"
    threat = ThreatModel(sensitive="s", known=("a", "b"))
    return tree, frame, threat, maxent_attack(tree, frame, threat=threat)
