"""Root cause 8: no silent change of type and no degenerate data: a stray text in a numeric
column, an infinite number, a column of one value where two are needed, a table with no rows
left, a malformed CSV, each refused naming the file, line, column or value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def _adult_with(world, tmp_path, column, row, value, name="edited.csv"):
    frame = pd.read_csv(world.adult)
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


#: (id, column, value, command, needles): a value put in row 5 (file line 7) of the Adult sample.
VALUES = [
    ("thirty-train", "age", "thirty", "train", ("line 7", "column 'age' holds numbers (299 of 300) but also 'thirty'")),
    ("thirty-audit", "age", "thirty", "audit", ("line 7", "'thirty'")),
    ("thirty-disguise", "age", "thirty", "disguise", ("line 7", "'thirty'")),
    ("thirty-hierarchy", "age", "thirty", "hierarchy", ("line 7", "'thirty'")),
    ("nan-text-split-column", "education-num", "nan", "audit", ("line 7", "column 'education-num'", "'nan'")),
    ("inf-train", "age", "inf", "train", ("line 7", "column 'age' holds inf, not a finite number")),
    ("inf-audit-split-column", "education-num", "inf", "audit", ("line 7", "column 'education-num' holds inf")),
    ("minus-inf-disguise", "hours-per-week", "-inf", "disguise", ("line 7", "column 'hours-per-week' holds -inf")),
    ("overflow-train", "capital-gain", "1e999", "train", ("line 7", "column 'capital-gain' holds inf")),
    ("unseen-category", "marital-status", "Eloped", "audit", ("column 'marital-status'", "'Eloped'")),
]


def _command(command, path, world, tmp_path):
    return {
        "train": ["train", "--data", path, "--class-attribute", "income", "--out", tmp_path / "t.json", "-q"],
        "audit": ["audit", "--tree", world.atree, "--data", path, "-q"],
        "disguise": ["disguise", "--data", path, "--theta", "0.8", "--out", tmp_path / "d.csv", "-q"],
        "hierarchy": ["hierarchy", "--data", path, "--column", "age"],
    }[command]


@pytest.mark.parametrize("column, value, command, needles", [c[1:] for c in VALUES], ids=[c[0] for c in VALUES])
def test_a_stray_or_infinite_value_is_named_with_its_line(world, refuse, tmp_path, column, value, command, needles):
    path = _adult_with(world, tmp_path, column, 5, value)
    refuse(_command(command, path, world, tmp_path), *needles, outputs=[tmp_path / "t.json", tmp_path / "d.csv"])


def test_an_infinite_value_in_a_dataframe_is_named_by_the_python_audit(world, raises):
    import ppdm
    from ppdm.errors import DataError

    frame = pd.read_csv(world.adult)
    frame["education-num"] = frame["education-num"].astype(float)
    frame.loc[3, "education-num"] = np.inf
    raises(lambda: ppdm.audit(ppdm.load_model(world.atree), frame), DataError, "column 'education-num' holds inf (row 3)")


ONE_VALUE = [
    ("class-train", "class", "priority", ["train", "--data", "{x}", "--class-attribute", "class", "--out", "{w}/t.json", "-q"], ("the class column 'class' holds one value ('priority')",)),
    ("sensitive-audit", "class", "priority", ["audit", "--tree", "{tree}", "--data", "{x}", "-q"], ("the sensitive column 'class' holds one value ('priority')",)),
    ("sensitive-input-audit", "parents", "usual", ["audit", "--tree", "{tree}", "--data", "{x}", "--sensitive", "parents", "--sample", "-q"],
     ("the sensitive column 'parents' holds one value ('usual')",)),
    ("sensitive-rules", "class", "priority", ["audit-rules", "--data", "{x}", "--sensitive", "class", "--support", "0.1", "--confidence", "0.5", "-q"],
     ("the sensitive column 'class' holds one value ('priority')",)),
    ("class-defend", "class", "priority", ["defend", "--data", "{x}", "--class-attribute", "class", "--quick", "-q"], ("'class'", "one value")),
]


@pytest.mark.parametrize("column, value, args, needles", [c[1:] for c in ONE_VALUE], ids=[c[0] for c in ONE_VALUE])
def test_a_column_of_one_value_where_two_are_needed_is_refused(world, refuse, tmp_path, column, value, args, needles):
    frame = pd.read_csv(world.data)
    frame[column] = value
    path = tmp_path / "one.csv"
    frame.to_csv(path, index=False)
    refuse([a.format(x=path, w=tmp_path, tree=world.tree) for a in args], *needles, outputs=[tmp_path / "t.json"])


CSVS = [
    ("empty", "", ("is empty: it has no data rows",)),
    ("blank-lines", "\n\n\n", ("is empty",)),
    ("header-only", "parents,class\n", ("has a header but no data rows",)),
    ("column-twice", "a,a,class\n1,2,x\n", ("line 1: duplicate column name(s) in the header: 'a'",)),
    ("column-unnamed", "a,,class\n1,2,x\n", ("line 1: column 2 has no name in the header",)),
    ("row-too-long", "a,b,class\n1,2,x\n1,2,3,4\n", ("cannot parse the file", "Expected 3 fields in line 3, saw 4")),
    ("unclosed-quote", 'a,b,class\n"1,2,x\n1,2,y\n', ("cannot parse the file", "EOF inside string")),
    ("nul-in-header", "a\x00b,class\n1,x\n", ("line 1: holds a NUL character",)),
    ("not-utf8", "a,b,class\n\xe9,2,x\n".encode("latin-1"), ("not UTF-8",)),
    ("utf16", "a,b,class\n1,2,x\n".encode("utf-16"), ("not UTF-8",)),
]


@pytest.mark.parametrize("content, needles", [c[1:] for c in CSVS], ids=[c[0] for c in CSVS])
def test_a_malformed_csv_is_named(world, refuse, tmp_path, content, needles):
    path = tmp_path / "bad.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    refuse(["train", "--data", path, "--class-attribute", "class", "--out", tmp_path / "t.json", "-q"], "bad.csv", *needles, outputs=[tmp_path / "t.json"])


OPTIONS = [
    ("names-count", ["--names", "a,b"], ("line 1: 9 field(s) but 2 name(s) given",)),
    ("names-twice", ["--names", "a,a,b,c,d,e,f,g,h"], ("names repeats 'a'",)),
    ("names-comma", ["--names", ","], ("names is empty",)),
    ("row-ids-unknown", ["--row-ids", "nope"], ("row_ids names unknown column(s) 'nope'",)),
    ("row-ids-text", ["--row-ids", "parents"], ("the row-id column 'parents' must hold whole numbers",)),
    ("sep-empty", ["--sep", ""], ("--sep: an empty separator",)),
    ("sep-wrong", ["--sep", ";"], ("the separator looks wrong (try --sep ',')",)),
    ("sep-tab", ["--sep", "tab"], ("the separator looks wrong",)),
    ("sep-quote", ["--sep", '"'], ("cannot separate fields",)),
    ("na-values-everything", ["--na-values", "usual,great_pret,pretentious"], ("column 'parents': 300 missing value(s)",)),
]


@pytest.mark.parametrize("options, needles", [c[1:] for c in OPTIONS], ids=[c[0] for c in OPTIONS])
def test_csv_options_that_cannot_read_the_table_are_named(world, refuse, options, needles):
    refuse(["audit", "--tree", world.tree, "--data", world.data, *options, "-q"], *needles)


@pytest.mark.parametrize("change, needle", [("twice", "repeats the id"), ("fraction", "must hold whole numbers"), ("huge", "must hold whole numbers")])
def test_row_ids_that_are_not_ids_are_named(world, refuse, tmp_path, change, needle):
    frame = pd.read_csv(world.rows)
    frame["row"] = frame["row"].astype(object)
    frame.loc[3, "row"] = {"twice": frame.loc[2, "row"], "fraction": 2.5, "huge": 10**20}[change]
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    refuse(["audit", "--tree", world.tree, "--data", path, "--row-ids", "row", "-q"], "rows.csv", f"the row-id column 'row' {needle}")


def test_missing_values_are_named_not_dropped(world, refuse, tmp_path):
    frame = pd.read_csv(world.data)
    frame.loc[3, "class"] = None
    path = tmp_path / "missing.csv"
    frame.to_csv(path, index=False)
    refuse(["audit", "--tree", world.tree, "--data", path, "-q"], "column 'class': 1 missing value(s), first at row(s) 3")
    refuse(["train", "--data", path, "--class-attribute", "class", "--out", tmp_path / "t.json", "-q"], "column 'class' has 1 missing value(s)", "--drop-missing")


def test_nothing_left_after_dropping_missing_values(world, refuse, tmp_path):
    frame = pd.read_csv(world.data)
    frame["parents"] = None
    path = tmp_path / "empty-column.csv"
    frame.to_csv(path, index=False)
    refuse(["train", "--data", path, "--class-attribute", "class", "--drop-missing", "--out", tmp_path / "t.json", "-q"], "every training row has a missing value")
    refuse(["audit", "--tree", world.tree, "--data", path, "--missing", "drop", "-q"], "no rows")
