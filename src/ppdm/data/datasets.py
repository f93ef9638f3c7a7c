"""Dataset loaders: the bundled UCI Adult and Nursery tables, the Bank Personal Loan table, and
a user's own CSV file (:func:`load_csv`, defined in :mod:`ppdm.data.tables`).

This is the public import path of every loader: ``from ppdm.data.datasets import load_adult``.
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.data.tables import (
    Loaded,
    PathLike,
    load_csv,
    parse_numeric,
    read_header,
    read_table,
    resolve_roles,
    sorted_categorical,
)
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
    roles = resolve_roles(
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
    frame = _read_uci(_bundled_file("nursery.data.gz"), NURSERY_COLUMNS, dtype=str, na_values=[])
    for column in NURSERY_COLUMNS:
        frame[column] = sorted_categorical(frame[column])
    roles = resolve_roles(
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


def _read_uci(path: Path, columns: Sequence[str], **options: Any) -> pd.DataFrame:
    """Parse a bundled UCI file (gzipped, comma-separated, no header) into ``columns``.

    pandas' default missing-value markers are off: only the ``na_values`` given in ``options``
    are missing. The other ``options`` (``dtype``, ``skiprows``, ...) go to :func:`pandas.read_csv`.
    """
    return pd.read_csv(
        path, compression="gzip", header=None, names=list(columns), sep=",", keep_default_na=False, engine="c", **options
    )


def _read_adult(path: Path, skiprows: int) -> pd.DataFrame:
    """Parse one Adult file (comma-plus-space separated, no header, ``?`` for missing)."""
    dtype: dict[str, str] = dict.fromkeys(_ADULT_NUMERIC, "int64")
    dtype.update(dict.fromkeys(_ADULT_CATEGORIES, "category"))
    frame = _read_uci(path, ADULT_COLUMNS, skipinitialspace=True, skiprows=skiprows, na_values=["?"], dtype=dtype)
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
    columns = read_header(path, sep)
    missing = [c for c in BANK_LOAN_COLUMNS if c not in columns]
    if missing:
        raise DataError(
            f"{source}: not the Bank Personal Loan Modelling file: it lacks the column(s) "
            f"{', '.join(map(repr, missing))} (its columns are: {', '.join(columns)})"
        )
    frame = read_table(path, sep, na_values=("",), dtype=dict.fromkeys(columns, str))
    for column in columns:
        frame[column] = parse_numeric(frame[column], column, path, sep)
        if column in _BANK_LOAN_CATEGORICAL:
            frame[column] = sorted_categorical(frame[column])
    pool = [c for c in columns if c != "ID"]
    roles = resolve_roles(
        columns, pool, quasi_identifiers, sensitive, class_attribute, "load_bank_loan"
    )
    return frame, roles


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
        """Call the loader with ``kwargs`` (an argument it does not take is a :class:`DataError`)."""
        import inspect

        accepted = inspect.signature(self.loader).parameters
        unknown = sorted(set(kwargs) - set(accepted))
        if unknown and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
            raise DataError(f"the {self.name} loader takes no argument {unknown[0]!r} (it takes: {', '.join(accepted)})")
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
