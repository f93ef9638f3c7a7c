"""A known column that gives the secret in the table is said (habit 3: statistics not sold as
breaches): in the summary, the printed lines and the report; an identifier is not such a column."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.attacks.core.threat import ThreatModel
from ppdm.pipeline.checks import determining_columns


def _table(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    level = rng.choice(["school", "college", "masters"], n)
    return pd.DataFrame({
        "id": np.arange(n), "degree": level, "years": pd.Series(level).map({"school": 12, "college": 16, "masters": 18}).to_numpy(),
        "sex": rng.choice(["F", "M"], n), "c": rng.choice(["yes", "no"], n),
    })


def test_a_column_giving_the_secret_is_named():
    line = determining_columns(_table(), ThreatModel(known=("degree", "sex"), sensitive="years"))
    assert line is not None and "'degree' (3 values)" in line and "'years'" in line and "sex" not in line


def test_an_identifier_an_unrelated_or_a_mostly_missing_column_is_not():
    table = _table()
    assert determining_columns(table, ThreatModel(known=("id",), sensitive="years")) is None
    assert determining_columns(table, ThreatModel(known=("sex",), sensitive="years")) is None
    sparse = table.assign(degree=table["degree"].where(np.arange(len(table)) < 30))  # known for 5 % of the people
    assert determining_columns(sparse, ThreatModel(known=("degree",), sensitive="years")) is None


def test_the_audit_says_it_in_its_summary_and_lines(tmp_path):
    table = _table()
    X = pd.get_dummies(table[["degree", "sex"]]).astype(float)
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, table["c"])
    audit = ppdm.audit(est, table[["degree", "sex", "years", "c"]], ppdm.ThreatModel(known=("degree", "sex"), sensitive="years"))
    assert "'degree'" in audit.estimate.summary()["data_alone"]
    assert "goes with one value of 'years'" in str(audit)
    audit.report(tmp_path / "r.html")
    assert "the data alone" in (tmp_path / "r.html").read_text()


def test_a_category_outside_the_model_s_domain_is_named_at_its_row(tmp_path):
    """The table's own row label, not a position in the counted groups the audit routes later."""
    import pytest

    from ppdm.tree import tree_from_sklearn
    from ppdm.tree.model_files import save_model

    table = _table()
    X = pd.get_dummies(table[["degree", "sex"]]).astype(float)
    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, table["c"])
    save_model(tree_from_sklearn(est, table[["degree", "sex"]], y=table["c"]), tmp_path / "t.json")
    bad = table[["degree", "sex", "years", "c"]].copy()
    bad.index = bad.index + 1000
    bad.loc[1450, "degree"] = "phd"
    from ppdm.errors import DataError

    with pytest.raises(DataError, match=r"column 'degree': value 'phd' \(row 1450\)"):
        ppdm.audit(ppdm.load_model(tmp_path / "t.json"), bad, ppdm.ThreatModel(known=("degree",), sensitive="sex"), sample=True)
