"""What a file read as a CSV table is told when it is not one as given: a header repeating a
name is often a first record (a CSV without a header, as Nursery's ``nursery.data``), and a
Parquet file is named as one; each error says what to do, in Python and on the command line."""

from __future__ import annotations

import pytest

from ppdm.data.tables import load_csv
from ppdm.errors import DataError


def test_a_repeated_name_in_line_1_suggests_giving_the_names(tmp_path) -> None:
    path = tmp_path / "records.csv"
    path.write_text("usual,proper,convenient,convenient,not_recom\nusual,less_proper,convenient,convenient,priority\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"duplicate column name\(s\) in the header: 'convenient'; if line 1 is a record, not a header, give the column names \(names=\[\.\.\.\]\)") as why:
        load_csv(path)
    assert why.value.for_command_line().endswith("give the column names (--names a,b,...)")
    assert list(load_csv(path, names=["parents", "has_nurs", "finance", "housing", "class"])[0].columns)[-1] == "class"


def test_a_parquet_file_is_named_as_one(tmp_path) -> None:
    path = tmp_path / "rows.parquet"
    path.write_bytes(b"PAR1\x15\x04\x15\xa0\x01\xff\xfe" + bytes(range(128, 256)))
    with pytest.raises(DataError, match=r"rows\.parquet: a Parquet file, not a CSV table: read it with pandas\.read_parquet") as why:
        load_csv(path)
    assert why.value.for_command_line().endswith("a Parquet file, not a CSV table: audit it with --backend dask")


def test_a_skops_file_given_to_the_report_says_where_it_is_read(tmp_path) -> None:
    """``ppdm report --model x.skops``: a fitted estimator is read against its training table,
    which a report does not have; the error says so and names the command that reads it."""
    from ppdm.errors import TreeFormatError
    from ppdm.report.load import load_model

    path = tmp_path / "model.skops"
    path.write_bytes(b"PK\x03\x04" + bytes(range(200)))
    with pytest.raises(TreeFormatError, match=r"model\.skops: a skops file \(a fitted estimator\), read against its training table.*ppdm audit --model"):
        load_model(path)


def test_a_model_read_against_the_table_is_refused_on_dask_saying_what_to_do(tmp_path) -> None:
    from ppdm.errors import PpdmError
    from ppdm.pipeline.read import check_lazy_model

    path = tmp_path / "model.skops"
    path.write_bytes(b"PK\x03\x04" + bytes(range(200)))
    with pytest.raises(PpdmError, match=r"model\.skops: a skops model is read against the training table in memory, which a Dask table is not"):
        check_lazy_model(path)
    check_lazy_model(tmp_path / "absent.json")  # not a file: the reader names it later
