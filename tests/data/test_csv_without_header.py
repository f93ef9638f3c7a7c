"""load_csv on real files: no header line (names), chosen missing-value texts, a row-id column."""

from __future__ import annotations

import pytest

from ppdm.data.tables import load_csv
from ppdm.errors import DataError


def test_load_csv_without_header_and_with_row_ids(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("39, State-gov, ?\n50, Private, x\n")
    frame, _ = load_csv(path, names=["age", "work", "z"], na_values=["?"])
    assert frame["age"].tolist() == [39, 50] and frame["z"].isna().tolist() == [True, False]
    with pytest.raises(DataError, match="3 field\\(s\\) but 2 name\\(s\\)"):
        load_csv(path, names=["age", "work"])
    with pytest.raises(DataError, match="line 1: column 'work' must be numeric"):
        load_csv(path, names=["age", "work", "z"], numeric=["work"])
    ids = tmp_path / "ids.csv"
    ids.write_text("row,a\n7,x\n3,y\n")
    frame, roles = load_csv(ids, row_ids="row")
    assert frame.index.tolist() == [7, 3] and list(frame.columns) == ["a"] and roles.quasi_identifiers == ("a",)
    ids.write_text("row,a\n7,x\n7,y\n")
    with pytest.raises(DataError, match="repeats the id 7"):
        load_csv(ids, row_ids="row")
