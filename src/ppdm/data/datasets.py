"""Dataset loaders: the bundled UCI Adult and Nursery tables, the Bank Personal Loan table, and
a user's own CSV file.

Every loader returns ``(frame, roles)``:

- ``frame`` is a :class:`pandas.DataFrame` with a fresh ``RangeIndex`` and rows in file order.
  Categorical columns have an unordered :class:`pandas.CategoricalDtype` whose categories are
  sorted; numeric columns are ``int64`` (``float64`` when they hold fractions or missing values).
  Missing values are ``NaN``.
- ``roles`` is a :class:`ppdm.data.roles.Roles` naming the quasi-identifiers (QI), the sensitive
  attribute (SA) and the class attribute (papers 000 §3 and 002 §2). Each loader has defaults that
  follow the papers' main setting (the class attribute is the sensitive one); its arguments
  override them. Where ``sensitive`` is ``None`` it defaults to the class attribute, and the
  default QIs are every remaining attribute.

Adult and Nursery are bundled (CC BY 4.0, see ``_bundled/ATTRIBUTION.md``) and load without
network access. The Bank Personal Loan table has no stated license and is not bundled:
:func:`load_bank_loan` reads a copy the user obtained.
"""

from __future__ import annotations

import csv
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from ppdm.data.roles import Roles
from ppdm.errors import DataError

__all__ = [
    "DATASETS",
    "DatasetInfo",
    "load_adult",
    "load_bank_loan",
    "load_csv",
    "load_dataset",
    "load_nursery",
]

_BUNDLED = Path(__file__).with_name("_bundled")

PathLike = str | os.PathLike[str]
Loaded = tuple[pd.DataFrame, Roles]

# --------------------------------------------------------------------------------------------
# Column lists
# --------------------------------------------------------------------------------------------

ADULT_COLUMNS: tuple[str, ...] = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
)  # fmt: skip
_ADULT_NUMERIC = (
    "age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week",
)  # fmt: skip

# The union of the values found in adult.data and adult.test (sorted), so that a column has the
# same categories, hence the same codes, in both splits. "Holand-Netherlands" occurs in the
# training file only; "Never-worked" occurs only in rows with a missing occupation, so it is an
# unused category once rows with missing values are dropped.
_ADULT_CATEGORIES: dict[str, tuple[str, ...]] = {
    "workclass": (
        "Federal-gov", "Local-gov", "Never-worked", "Private", "Self-emp-inc", "Self-emp-not-inc",
        "State-gov", "Without-pay",
    ),
    "education": (
        "10th", "11th", "12th", "1st-4th", "5th-6th", "7th-8th", "9th", "Assoc-acdm", "Assoc-voc",
        "Bachelors", "Doctorate", "HS-grad", "Masters", "Preschool", "Prof-school", "Some-college",
    ),
    "marital-status": (
        "Divorced", "Married-AF-spouse", "Married-civ-spouse", "Married-spouse-absent",
        "Never-married", "Separated", "Widowed",
    ),
    "occupation": (
        "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing",
        "Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv",
        "Prof-specialty", "Protective-serv", "Sales", "Tech-support", "Transport-moving",
    ),
    "relationship": (
        "Husband", "Not-in-family", "Other-relative", "Own-child", "Unmarried", "Wife",
    ),
    "race": ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"),
    "sex": ("Female", "Male"),
    "native-country": (
        "Cambodia", "Canada", "China", "Columbia", "Cuba", "Dominican-Republic", "Ecuador",
        "El-Salvador", "England", "France", "Germany", "Greece", "Guatemala", "Haiti",
        "Holand-Netherlands", "Honduras", "Hong", "Hungary", "India", "Iran", "Ireland", "Italy",
        "Jamaica", "Japan", "Laos", "Mexico", "Nicaragua", "Outlying-US(Guam-USVI-etc)", "Peru",
        "Philippines", "Poland", "Portugal", "Puerto-Rico", "Scotland", "South", "Taiwan",
        "Thailand", "Trinadad&Tobago", "United-States", "Vietnam", "Yugoslavia",
    ),
    "income": ("<=50K", ">50K"),
}  # fmt: skip

NURSERY_COLUMNS: tuple[str, ...] = (
    "parents", "has_nurs", "form", "children", "housing", "finance", "social", "health", "class",
)  # fmt: skip

BANK_LOAN_COLUMNS: tuple[str, ...] = (
    "ID", "Age", "Experience", "Income", "ZIP Code", "Family", "CCAvg", "Education", "Mortgage",
    "Personal Loan", "Securities Account", "CD Account", "Online", "CreditCard",
)  # fmt: skip
_BANK_LOAN_CATEGORICAL = (
    "Family", "Education", "Personal Loan", "Securities Account", "CD Account", "Online",
    "CreditCard",
)  # fmt: skip

# --------------------------------------------------------------------------------------------
# Bundled datasets
# --------------------------------------------------------------------------------------------


def load_adult(
    split: str = "train",
    drop_missing: bool = True,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: str | None = None,
    class_attribute: str | None = "income",
) -> Loaded:
    """Load the UCI Adult (Census Income) table bundled with ppdm.

    Becker & Kohavi (1996), https://doi.org/10.24432/C5XW20, CC BY 4.0. The loader reads the
    original files ``adult.data`` (``split="train"``) and ``adult.test`` (``split="test"``):
    it skips the test file's junk first line and drops the trailing ``"."`` of the test labels,
    so both splits have the classes ``"<=50K"`` and ``">50K"``.

    Parameters
    ----------
    split:
        ``"train"`` (32,561 rows) or ``"test"`` (16,281 rows).
    drop_missing:
        If true (the default, as in the papers and in ``adult.names``), rows with a missing value
        (``?`` in workclass, occupation or native-country) are dropped, leaving 30,162 train or
        15,060 test rows. If false they are kept and the missing values are ``NaN``.
    quasi_identifiers:
        QI columns; default every attribute except ``fnlwgt`` (a sampling weight, not something an
        attacker knows about a person), the sensitive attribute and the class attribute. When
        ``education`` or ``education-num`` is sensitive, the other is left out too: each is a
        one-to-one recoding of the other.
    sensitive:
        Sensitive attribute; default the class attribute.
    class_attribute:
        Class attribute; default ``"income"``.

    Categorical columns have the same categories in both splits (the union of the values of the
    two files), so category codes agree across splits; some categories may be unused.
    """
    files = {"train": ("adult.data.gz", 0), "test": ("adult.test.gz", 1)}
    if split not in files:
        raise DataError(f"load_adult: split must be 'train' or 'test', not {split!r}")
    name, junk_lines = files[split]
    frame = _read_adult(_bundled_file(name), skiprows=junk_lines)
    if drop_missing:
        frame = frame.dropna().reset_index(drop=True)
    pool = [c for c in ADULT_COLUMNS if c != "fnlwgt"]
    twins = {"education": "education-num", "education-num": "education"}
    if sensitive in twins:
        pool.remove(twins[sensitive])
    roles = _resolve_roles(
        list(frame.columns), pool, quasi_identifiers, sensitive, class_attribute, "load_adult"
    )
    return frame, roles


def load_nursery(
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: str | None = None,
    class_attribute: str | None = "class",
) -> Loaded:
    """Load the UCI Nursery table bundled with ppdm (12,960 rows, 9 categorical columns).

    Rajkovic (1997), https://doi.org/10.24432/C5P88W, CC BY 4.0. The 8 attributes are the full
    Cartesian product of their values; ``children`` stays categorical with the string values
    ``"1"``, ``"2"``, ``"3"``, ``"more"``. Default roles: the 8 attributes are the QIs and
    ``"class"`` is both the sensitive and the class attribute.
    """
    frame = pd.read_csv(
        _bundled_file("nursery.data.gz"),
        compression="gzip",
        header=None,
        names=list(NURSERY_COLUMNS),
        sep=",",
        dtype=str,
        keep_default_na=False,
        na_values=[],
        engine="c",
    )
    for column in NURSERY_COLUMNS:
        frame[column] = _sorted_categorical(frame[column])
    roles = _resolve_roles(
        list(frame.columns), list(NURSERY_COLUMNS), quasi_identifiers, sensitive,
        class_attribute, "load_nursery",
    )  # fmt: skip
    return frame, roles


def _bundled_file(name: str) -> Path:
    """The path of a bundled data file; a clear error if the installation lacks it."""
    path = _BUNDLED / name
    if not path.is_file():
        raise DataError(f"bundled data file {path} is missing; reinstall ppdm")
    return path


def _read_adult(path: Path, skiprows: int) -> pd.DataFrame:
    """Parse one Adult file (comma-plus-space separated, no header, ``?`` for missing)."""
    dtype: dict[str, str] = {c: "int64" for c in _ADULT_NUMERIC}
    dtype.update({c: "category" for c in _ADULT_CATEGORIES})
    frame = pd.read_csv(
        path,
        compression="gzip",
        header=None,
        names=list(ADULT_COLUMNS),
        sep=",",
        skipinitialspace=True,
        skiprows=skiprows,
        na_values=["?"],
        keep_default_na=False,
        dtype=dtype,
        engine="c",
    )
    for column, categories in _ADULT_CATEGORIES.items():
        strip = _strip_period if column == "income" else None
        frame[column] = _fixed_categorical(frame[column], categories, column, path.name, strip)
    return frame


def _strip_period(label: str) -> str:
    """``"<=50K."`` (adult.test) -> ``"<=50K"``."""
    return label.removesuffix(".")


def _fixed_categorical(
    series: pd.Series,
    categories: Sequence[str],
    column: str,
    source: str,
    transform: Callable[[str], str] | None = None,
) -> pd.Categorical:
    """Recode a categorical ``series`` to the fixed, sorted ``categories`` (vectorised).

    ``transform`` maps each value read to the value stored (several may map to one). A value
    outside ``categories`` raises :class:`DataError` instead of silently becoming ``NaN``.
    """
    read = [str(c) for c in series.cat.categories]
    stored = [transform(c) for c in read] if transform else read
    position = {c: i for i, c in enumerate(categories)}
    unknown = [c for c in stored if c not in position]
    if unknown:
        raise DataError(
            f"{source}: column {column!r} has the unexpected value {unknown[0]!r} "
            f"(expected one of: {', '.join(categories)})"
        )
    # The last entry serves code -1 (missing), which stays missing.
    lookup = np.array([position[c] for c in stored] + [-1], dtype=np.int64)
    codes = lookup[series.cat.codes.to_numpy()]
    return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(list(categories)))


# --------------------------------------------------------------------------------------------
# Bank Personal Loan Modelling (not bundled)
# --------------------------------------------------------------------------------------------

_BANK_LOAN_HINT = (
    "the Bank Personal Loan Modelling data is not bundled with ppdm (its license is unknown); "
    'download Bank_Personal_Loan_Modelling.csv from the Kaggle dataset "Bank Personal Loan '
    'Modelling" and pass its path'
)


def load_bank_loan(
    path: PathLike,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: str | None = None,
    class_attribute: str | None = "Personal Loan",
) -> Loaded:
    """Load a user's copy of ``Bank_Personal_Loan_Modelling.csv`` (5,000 rows, 14 columns).

    The file (Kaggle "Bank Personal Loan Modelling", also ``UniversalBank.csv`` in Shmueli et
    al., *Data Mining for Business Analytics*) is not bundled because no license is stated for
    it. It is read as is (UTF-8 with BOM, CRLF), with no row dropped and its quirks kept
    (negative Experience values, a 4-digit ZIP code).

    Columns keep the file's header names. Family, Education, Personal Loan, Securities Account,
    CD Account, Online and CreditCard are categorical with integer categories (e.g.
    ``frame["Personal Loan"] == 1``); the others are numeric. ``ID`` is kept in the frame but
    has no role. Default roles: ``"Personal Loan"`` is the class and sensitive attribute, every
    other column except ``ID`` is a QI.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found; {_BANK_LOAN_HINT}")
    source = str(path)
    sep = ","
    columns = _read_header(path, sep)
    missing = [c for c in BANK_LOAN_COLUMNS if c not in columns]
    if missing:
        raise DataError(
            f"{source}: not the Bank Personal Loan Modelling file: it lacks the column(s) "
            f"{', '.join(map(repr, missing))} (its columns are: {', '.join(columns)})"
        )
    frame = _read_csv(path, sep, na_values=("",), dtype=dict.fromkeys(columns, str))
    for column in columns:
        frame[column] = _to_numeric(frame[column], column, path, sep)
        if column in _BANK_LOAN_CATEGORICAL:
            frame[column] = _sorted_categorical(frame[column])
    pool = [c for c in columns if c != "ID"]
    roles = _resolve_roles(
        columns, pool, quasi_identifiers, sensitive, class_attribute, "load_bank_loan"
    )
    return frame, roles


# --------------------------------------------------------------------------------------------
# A user's own CSV file
# --------------------------------------------------------------------------------------------


def load_csv(
    path: PathLike,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: str | None = None,
    class_attribute: str | None = None,
    categorical: Sequence[str] | None = None,
    numeric: Sequence[str] | None = None,
    drop_missing: bool = False,
    na_values: Iterable[str] = ("", "?", "NA"),
    sep: str | None = None,
) -> Loaded:
    """Load a user's own table from a delimited text file with a header line.

    Parameters
    ----------
    path:
        The file (UTF-8, an optional BOM is ignored). Blank lines are skipped; spaces after a
        separator are ignored.
    quasi_identifiers:
        QI columns; default every column except the sensitive and class attributes.
    sensitive:
        Sensitive attribute; default the class attribute (``None`` if neither is given).
    class_attribute:
        Class attribute; default the sensitive attribute.
    categorical:
        Columns forced to be categorical even if they look numeric (e.g. ZIP codes). Their
        categories are the file's text, so ``"02139"`` keeps its leading zero.
    numeric:
        Columns forced to be numeric: a value that does not parse as a number raises
        :class:`DataError` naming the column, the value and the file line (header = line 1).
    drop_missing:
        If false (default) missing values stay ``NaN`` and no row is dropped. If true, rows with
        a missing value are dropped and a :class:`UserWarning` says how many and in which
        columns.
    na_values:
        Field texts that mean "missing".
    sep:
        Field separator; by default the one of ``,`` ``;`` tab ``|`` that occurs most often in
        the header line (``,`` if none does).

    Other columns are inferred: numbers stay numeric (``int64``, or ``float64`` for fractions
    or missing values), text and booleans become categorical (sorted categories).

    Raises
    ------
    DataError
        The file is missing, empty or has no data rows; the header repeats a name or has an
        empty one; an argument names an unknown column; a column is both ``categorical`` and
        ``numeric``; a line has too many fields; a forced-numeric value does not parse.
    """
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: is a directory, not a CSV file")
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    sep = sep if sep is not None else _sniff_separator(path)
    columns = _read_header(path, sep)
    categorical = _column_list(categorical, "categorical")
    numeric = _column_list(numeric, "numeric")
    for argument, names in (("categorical", categorical), ("numeric", numeric)):
        _check_known(names, columns, argument, str(path))
    both = [c for c in categorical if c in numeric]
    if both:
        raise DataError(
            f"{path}: column(s) {', '.join(map(repr, both))} listed both as categorical and numeric"
        )
    na_values = [na_values] if isinstance(na_values, str) else list(na_values)
    dtype = dict.fromkeys(categorical + numeric, str)
    frame = _read_csv(path, sep, na_values, dtype)
    if list(frame.columns) != columns:
        raise DataError(f"{path}: cannot read the header line consistently (got {columns})")
    for column in numeric:
        frame[column] = _to_numeric(frame[column], column, path, sep)
    if drop_missing:
        frame = _drop_missing(frame, str(path))
    for column in frame.columns:
        if column in categorical or not _is_number(frame[column]):
            frame[column] = _sorted_categorical(frame[column])
    roles = _resolve_roles(
        columns, columns, quasi_identifiers, sensitive, class_attribute, str(path)
    )
    return frame, roles


def _sniff_separator(path: Path) -> str:
    """The candidate separator occurring most often in the first non-blank line."""
    line = _first_line(path)
    candidates = (",", ";", "\t", "|")
    counts = [line.count(c) for c in candidates]
    return candidates[int(np.argmax(counts))] if max(counts) > 0 else ","


def _first_line(path: Path) -> str:
    """The first non-blank line of a text file; :class:`DataError` if there is none."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            for line in handle:
                if line.strip():
                    return line
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error})") from None
    raise DataError(f"{path} is empty: it has no data rows")


def _read_header(path: Path, sep: str) -> list[str]:
    """The column names of the header line, checked for empty and repeated names."""
    line = _first_line(path)
    if len(sep) == 1:
        names = next(csv.reader([line], delimiter=sep, skipinitialspace=True))
    else:
        names = [n.lstrip(" ") for n in line.rstrip("\r\n").split(sep)]
    names = [n.rstrip("\r\n") for n in names]
    empty = [i + 1 for i, n in enumerate(names) if not n.strip()]
    if empty:
        raise DataError(f"{path}, line 1: column {empty[0]} has no name in the header")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise DataError(
            f"{path}, line 1: duplicate column name(s) in the header: "
            f"{', '.join(map(repr, repeated))}"
        )
    return names


def _read_csv(
    path: Path, sep: str, na_values: Iterable[str], dtype: dict[str, type]
) -> pd.DataFrame:
    """Parse the whole file with pandas; parser failures become :class:`DataError`."""
    try:
        frame = pd.read_csv(
            path,
            sep=sep,
            encoding="utf-8-sig",
            skipinitialspace=True,
            index_col=False,
            keep_default_na=False,
            na_values=list(na_values),
            dtype=dtype,
            low_memory=False,
        )
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} is empty: it has no data rows") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as error:
        raise DataError(f"{path}: cannot parse the file: {error}") from None
    if frame.empty:
        raise DataError(f"{path} has a header but no data rows")
    return frame


def _to_numeric(series: pd.Series, column: str, path: Path, sep: str) -> pd.Series:
    """Parse a text column as numbers; the first unparsable value raises :class:`DataError`."""
    parsed = pd.to_numeric(series, errors="coerce")
    bad = np.flatnonzero((parsed.isna() & series.notna()).to_numpy())
    if bad.size:
        row = int(bad[0])
        line = _file_line(path, sep, row)
        where = f"line {line}" if line is not None else f"data row {row + 1}"
        raise DataError(
            f"{path}, {where}: column {column!r} must be numeric, "
            f"but has the value {series.iloc[row]!r}"
        )
    return parsed


def _file_line(path: Path, sep: str, row: int) -> int | None:
    """The 1-based file line where data row ``row`` (0-based) starts; the header is line 1.

    Mirrors pandas: blank lines are skipped, a quoted field may span lines. Only used to
    report an error, so it rescans the file.
    """
    if len(sep) != 1:
        return None
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=sep, skipinitialspace=True)
        previous_end, data_row, header_seen = 0, -1, False
        for record in reader:
            start, previous_end = previous_end + 1, reader.line_num
            if record in ([], [""]):
                continue
            if not header_seen:
                header_seen = True
                continue
            data_row += 1
            if data_row == row:
                return start
    return None


def _drop_missing(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """Drop rows with a missing value, with a :class:`UserWarning` saying how many and where."""
    missing = frame.isna()
    has_missing = missing.any(axis=1).to_numpy()
    dropped = int(has_missing.sum())
    if dropped == 0:
        return frame
    if dropped == len(frame):
        raise DataError(f"{source}: every row has a missing value; no data rows are left")
    per_column = missing.sum()
    detail = ", ".join(f"{c} ({int(n)})" for c, n in per_column.items() if n)
    warnings.warn(
        f"{source}: dropped {dropped} of {len(frame)} rows with missing values "
        f"(missing values per column: {detail})",
        UserWarning,
        stacklevel=3,
    )
    return frame.loc[~has_missing].reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------


def _is_number(series: pd.Series) -> bool:
    """True for int/float columns (booleans count as categorical)."""
    return is_numeric_dtype(series) and not is_bool_dtype(series)


def _sorted_categorical(series: pd.Series) -> pd.Series:
    """``series`` as an unordered categorical whose categories are its sorted values."""
    categories = sorted(series.dropna().unique().tolist())
    return series.astype(pd.CategoricalDtype(categories, ordered=False))


def _column_list(names: Sequence[str] | None, argument: str) -> list[str]:
    """An argument naming columns as a list; a bare string is an error, not a list of letters."""
    if names is None:
        return []
    if isinstance(names, str):
        raise DataError(f"{argument} must be a list of column names, not the string {names!r}")
    return list(names)


def _check_known(names: Iterable[str], columns: Sequence[str], argument: str, source: str) -> None:
    """Raise :class:`DataError` if ``names`` (from ``argument``) has a column not in ``columns``."""
    unknown = [n for n in names if n not in columns]
    if unknown:
        raise DataError(
            f"{source}: {argument} names unknown column(s) {', '.join(map(repr, unknown))} "
            f"(the columns are: {', '.join(columns)})"
        )


def _resolve_roles(
    columns: Sequence[str],
    pool: Sequence[str],
    quasi_identifiers: Sequence[str] | None,
    sensitive: str | None,
    class_attribute: str | None,
    source: str,
) -> Roles:
    """Roles from the arguments, with defaults.

    ``sensitive`` defaults to ``class_attribute``; the default QIs are the columns of ``pool``
    other than the sensitive and class attributes. Every named column must be in ``columns``.
    """
    qis = None
    if quasi_identifiers is not None:
        qis = _column_list(quasi_identifiers, "quasi_identifiers")
    for argument, name in (("sensitive", sensitive), ("class_attribute", class_attribute)):
        if name is not None:
            _check_known([name], columns, argument, source)
    if qis is not None:
        _check_known(qis, columns, "quasi_identifiers", source)
    if sensitive is None:
        sensitive = class_attribute
    if qis is None:
        qis = [c for c in pool if c not in (sensitive, class_attribute)]
    return Roles(qis, sensitive=sensitive, class_attribute=class_attribute)


# --------------------------------------------------------------------------------------------
# Registry (used by the CLI)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetInfo:
    """A bundled dataset: what it is, where it comes from, and how to load it.

    ``rows`` and ``columns`` are the size of the table the loader returns with its defaults.
    """

    name: str
    description: str
    rows: int
    columns: int
    license: str
    citation: str
    doi: str
    loader: Callable[..., Loaded]

    def load(self, **kwargs: object) -> Loaded:
        """Call the loader with ``kwargs``."""
        return self.loader(**kwargs)


DATASETS: dict[str, DatasetInfo] = {
    "adult": DatasetInfo(
        name="adult",
        description=(
            "UCI Adult (Census Income), 1994 US census extract: predict whether income >50K. "
            "Train split without missing values by default (30,162 rows; 32,561 with them; "
            "test split 15,060 / 16,281)."
        ),
        rows=30_162,
        columns=15,
        license="CC BY 4.0",
        citation=(
            "Becker, B. & Kohavi, R. (1996). Adult [Dataset]. UCI Machine Learning Repository."
        ),
        doi="https://doi.org/10.24432/C5XW20",
        loader=load_adult,
    ),
    "nursery": DatasetInfo(
        name="nursery",
        description=(
            "UCI Nursery: ranking of nursery-school applications, 8 categorical attributes "
            "(full Cartesian product), 5 classes."
        ),
        rows=12_960,
        columns=9,
        license="CC BY 4.0",
        citation="Rajkovic, V. (1997). Nursery [Dataset]. UCI Machine Learning Repository.",
        doi="https://doi.org/10.24432/C5P88W",
        loader=load_nursery,
    ),
}


def load_dataset(name: str, **kwargs: object) -> Loaded:
    """Load the bundled dataset ``name`` (a key of :data:`DATASETS`), passing ``kwargs`` on."""
    info = DATASETS.get(name)
    if info is None:
        hint = f"; {_BANK_LOAN_HINT} to load_bank_loan" if "bank" in str(name).lower() else ""
        raise DataError(
            f"unknown dataset {name!r}; known datasets: {', '.join(sorted(DATASETS))}{hint}"
        )
    return info.load(**kwargs)
