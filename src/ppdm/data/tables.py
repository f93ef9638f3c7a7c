"""A user's own table from a delimited text file: :func:`load_csv`, with dtype inference.

Also the reading and typing helpers the dataset loaders of :mod:`ppdm.data.datasets` share: the
header line, the pandas parse with errors naming the file and line, numeric columns,
categorical columns with sorted categories, and the roles (QI, sensitive, class) with their
defaults (papers 000 §3 and 002 §2). Like every loader, :func:`load_csv` returns ``(frame,
roles)``; the conventions are those of :mod:`ppdm.data.datasets`.
"""

from __future__ import annotations

import csv
import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from ppdm.data.roles import Roles
from ppdm.errors import DataError, advising

__all__ = ["load_csv"]

PathLike = str | os.PathLike[str]
Loaded = tuple[pd.DataFrame, Roles]


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
    names: Sequence[str] | None = None,
    row_ids: str | None = None,
) -> Loaded:
    """Load a user's own table from a delimited text file with a header line (or ``names``).

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
    names:
        The column names of a file without a header line: every line is then a data row, and
        a line whose number of fields differs from ``len(names)`` raises :class:`DataError`.
    row_ids:
        A column holding each row's id (e.g. the ``row`` column that ``ppdm train --train-out``
        writes: the row's number in the original file): it becomes the frame's index, integers,
        and is not a data column. By default the index is the data row number from 0.

    Other columns are inferred: numbers stay numeric (``int64``, or ``float64`` for fractions
    or missing values), text and booleans become categorical (sorted categories).

    Raises
    ------
    DataError
        The file is missing, empty or has no data rows; the header repeats a name or has an
        empty one; an argument names an unknown column; a column is both ``categorical`` and
        ``numeric``; a line has too many fields; a forced-numeric value does not parse.
    """
    path = _csv_file(path)
    if sep is not None and (not isinstance(sep, str) or not sep or sep in ("\n", "\r", '"')):
        raise DataError(f"{path}: {sep!r} cannot separate fields (give a character such as ',' or ';')")
    na_values = _missing_texts(na_values)
    sep = sep if sep is not None else _sniff_separator(path)
    columns = read_header(path, sep) if names is None else _given_names(path, sep, names)
    _check_separator(path, sep, columns)
    categorical, numeric = _forced_columns(path, columns, categorical, numeric, row_ids)
    dtype = dict.fromkeys(categorical + numeric, str)
    frame = read_table(path, sep, na_values, dtype, None if names is None else columns)
    if list(frame.columns) != columns:
        raise DataError(f"{path}: cannot read the header line consistently (got {columns})")
    for column in numeric:
        frame[column] = parse_numeric(frame[column], column, path, sep, header=names is None)
    if drop_missing:
        frame = _drop_missing(frame, str(path))
    if row_ids is not None:
        frame, columns = _index_by(frame, row_ids, path), [c for c in columns if c != row_ids]
    _type_columns(frame, categorical, path, sep, header=names is None)
    roles = resolve_roles(
        columns, columns, quasi_identifiers, sensitive, class_attribute, str(path)
    )
    return frame, roles


def _csv_file(given: PathLike) -> Path:
    """The file :func:`load_csv` reads: there, a regular file, not empty and not JSON."""
    from ppdm.files import as_path, regular_file

    path = as_path(given, "CSV", DataError)
    if not path.exists() and not path.is_symlink():
        raise DataError(f"{path}: file not found")
    path = regular_file(path, "CSV", DataError)
    if path.stat().st_size == 0:
        raise DataError(f"{path} is empty: it has no data rows")
    _refuse_json(path)
    return path


def _missing_texts(na_values: Iterable[str]) -> list[str]:
    """``na_values`` as a list of texts (one text alone as a list of one), else refused."""
    texts = [na_values] if isinstance(na_values, str) else list(na_values) if isinstance(na_values, Iterable) else na_values
    if not isinstance(texts, list) or not all(isinstance(v, str) for v in texts):
        raise DataError(f"na_values must be a list of texts meaning a missing value, got {texts!r:.60}")
    return texts


def _forced_columns(
    path: Path, columns: list[str], categorical: Sequence[str] | None, numeric: Sequence[str] | None, row_ids: str | None,
) -> tuple[list[str], list[str]]:
    """The columns forced categorical and numeric, each a column of the file and never both (``row_ids`` too a column)."""
    forced_categorical = _column_list(categorical, "categorical")
    forced_numeric = _column_list(numeric, "numeric")
    for argument, listed in (("categorical", forced_categorical), ("numeric", forced_numeric)):
        _check_known(listed, columns, argument, str(path))
    both = [c for c in forced_categorical if c in forced_numeric]
    if both:
        raise DataError(
            f"{path}: column(s) {', '.join(map(repr, both))} listed both as categorical and numeric"
        )
    if row_ids is not None:
        _check_known([row_ids], columns, "row_ids", str(path))
    return forced_categorical, forced_numeric


def _type_columns(frame: pd.DataFrame, categorical: list[str], path: Path, sep: str, header: bool) -> None:
    """Every column typed in place: numbers stay numeric (never infinite), text and the forced
    columns become categorical with sorted categories (stray text in a numeric column refused)."""
    for column in frame.columns:
        if _is_number(frame[column]):
            _refuse_infinite(frame[column], str(column), path, sep, header=header)
        if column not in categorical and not _is_number(frame[column]):
            _refuse_stray_text(frame[column], str(column), path, sep, header=header)
        if column in categorical or not _is_number(frame[column]):
            frame[column] = sorted_categorical(frame[column])


def _refuse_json(path: Path) -> None:
    """Refuse a JSON document (a model, an audit, a frontier) given where a table goes: its lines
    would read as a one-column table. Only a file whose first character is ``{`` is parsed."""
    import json

    with path.open("rb") as handle:
        head = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        return
    if path.stat().st_size > MAX_JSON_SNIFF_BYTES:
        raise DataError(f"{path}: starts with '{{' like a JSON document and is {path.stat().st_size:,} bytes: not a CSV table")
    try:
        content = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError):
        return
    if isinstance(content, dict):
        kind = f" ({content['format']})" if isinstance(content.get("format"), str) else ""
        raise DataError(f"{path}: a JSON document{kind}, not a CSV table")


#: The largest file starting with ``{`` that :func:`_refuse_json` parses to tell a JSON document.
MAX_JSON_SNIFF_BYTES = 64 * 2**20
#: The bytes read at a time when looking for a NUL character through a whole file.
SCAN_CHUNK_BYTES = 2**20


def _refuse_nul(path: Path) -> None:
    """Refuse a file holding a NUL character anywhere (a binary file, a disk image, a CSV padded
    with zeros): pandas would read the run of NULs as one field of the last line, in as much
    memory. Scans in chunks of :data:`SCAN_CHUNK_BYTES`, so memory stays bounded."""
    line = 1
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(SCAN_CHUNK_BYTES):
                at = chunk.find(b"\0")
                if at >= 0:
                    line += chunk.count(b"\n", 0, at)
                    raise DataError(f"{path}, line {line:,}: holds a NUL character: a binary file, not a CSV table")
                line += chunk.count(b"\n")
    except OSError as exc:
        raise DataError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _check_separator(path: Path, sep: str, columns: list[str]) -> None:
    """A header read as one column that holds another separator: the separator is wrong, and
    every later message ("column 'sex' is not in the data") would hide it."""
    if len(columns) != 1:
        return
    found = [s for s in (",", ";", "\t", "|") if s != sep and s in str(columns[0])]
    if found:
        raise DataError(
            f"{path}: the header reads as one column with the separator {sep!r}, but it holds {found[0]!r}: "
            f"the separator looks wrong (try --sep {found[0]!r})"
        )


def _given_names(path: Path, sep: str, names: Sequence[str]) -> list[str]:
    """The ``names`` of a file without a header, checked against its first line's field count."""
    names = _column_list(names, "names")
    if not names:
        raise DataError(f"{path}: names is empty: give one name per column")
    empty = [i + 1 for i, n in enumerate(names) if not str(n).strip()]
    if empty:
        raise DataError(f"{path}: names: column {empty[0]} has no name")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise DataError(f"{path}: names repeats {', '.join(map(repr, repeated))}")
    line = _first_line(path)
    fields = len(_csv_fields(path, line, sep)) if len(sep) == 1 else len(line.split(sep))
    if fields != len(names):
        raise DataError(
            f"{path}, line 1: {fields} field(s) but {len(names)} name(s) given ({', '.join(names)})"
        )
    return list(names)


def _index_by(frame: pd.DataFrame, column: str, path: Path) -> pd.DataFrame:
    """``frame`` indexed by its integer id column ``column`` (which leaves the data)."""
    ids = frame[column]
    if not _is_number(ids) or ids.isna().any() or not (ids == ids.round()).all():
        raise DataError(f"{path}: the row-id column {column!r} must hold whole numbers on every row")
    if ids.duplicated().any():
        raise DataError(f"{path}: the row-id column {column!r} repeats the id {ids[ids.duplicated()].iloc[0]}")
    out = frame.drop(columns=[column])
    out.index = pd.Index(ids.astype(np.int64).to_numpy(), name=column)
    return out


def _sniff_separator(path: Path) -> str:
    """The candidate separator occurring most often in the first non-blank line."""
    line = _first_line(path)
    candidates = (",", ";", "\t", "|")
    counts = [line.count(c) for c in candidates]
    return candidates[int(np.argmax(counts))] if max(counts) > 0 else ","


#: The longest header line read (a megabyte: thousands of column names); a longer first line is
#: not a table's header (a binary file, a file of one line).
MAX_HEADER_CHARS = 2**20


def _first_line(path: Path) -> str:
    """The first non-blank line of a text file, read within :data:`MAX_HEADER_CHARS`;
    :class:`DataError` if there is none."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            while True:
                line = handle.readline(MAX_HEADER_CHARS + 1)
                if not line:
                    break
                if len(line) > MAX_HEADER_CHARS:
                    raise DataError(f"{path}: the first line is longer than {MAX_HEADER_CHARS:,} characters: not a table's header")
                if line.strip():
                    if "\0" in line:
                        raise DataError(f"{path}, line 1: holds a NUL character: a binary file, not a CSV table")
                    return line
    except UnicodeDecodeError as error:
        if _is_parquet(path):
            python = "read it with pandas.read_parquet (or dask.dataframe.read_parquet) and pass the table"
            raise advising(DataError(f"{path}: a Parquet file, not a CSV table: {python}"), python, None, "audit it with --backend dask") from None
        raise DataError(f"{path}: not UTF-8 text ({error})") from None
    raise DataError(f"{path} is empty: it has no data rows")


def _is_parquet(path: Path) -> bool:
    """Whether ``path`` begins with Parquet's magic bytes."""
    with open(path, "rb") as handle:
        return handle.read(4) == b"PAR1"


def _csv_fields(path: Path, line: str, sep: str) -> list[str]:
    """The fields of the header ``line``; a field the csv module cannot read (one over its size
    limit, an unclosed quote) is an error naming the file."""
    try:
        return next(csv.reader([line], delimiter=sep, skipinitialspace=True))
    except csv.Error as error:
        raise DataError(f"{path}, line 1: cannot read the header ({error})") from None


def read_header(path: Path, sep: str) -> list[str]:
    """The column names of the header line, checked for empty and repeated names."""
    line = _first_line(path)
    if len(sep) == 1:
        names = _csv_fields(path, line, sep)
    else:
        names = [n.lstrip(" ") for n in line.rstrip("\r\n").split(sep)]
    names = [n.rstrip("\r\n") for n in names]
    empty = [i + 1 for i, n in enumerate(names) if not n.strip()]
    if empty:
        raise DataError(f"{path}, line 1: column {empty[0]} has no name in the header")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        python = "if line 1 is a record, not a header, give the column names (names=[...])"
        error = DataError(f"{path}, line 1: duplicate column name(s) in the header: {', '.join(map(repr, repeated))}; {python}")
        raise advising(error, python, "names", "if line 1 is a record, not a header, give the column names (--names a,b,...)")
    return names


def read_table(
    path: Path,
    sep: str,
    na_values: Iterable[str],
    dtype: dict[str, type],
    names: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Parse the whole file with pandas (``names``: the file has no header line); parser failures
    become :class:`DataError`; a NUL character anywhere is refused first."""
    _refuse_nul(path)
    try:
        with warnings.catch_warnings():
            # pandas drops the fields beyond the header's of a too long first row with only a warning
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                path,
                sep=sep,
                header=None if names is not None else "infer",
                names=None if names is None else list(names),
                encoding="utf-8-sig",
                skipinitialspace=True,
                index_col=False,
                keep_default_na=False,
                na_values=list(na_values),
                dtype=dtype,
                low_memory=False,
            )
    except pd.errors.ParserWarning:
        line = _first_long_line(path, sep, names)
        where = f", line {line}" if line is not None else ""
        raise DataError(f"{path}{where}: more fields than the header names (they would be dropped)") from None
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} is empty: it has no data rows") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, csv.Error, OverflowError) as error:
        raise DataError(f"{path}: cannot parse the file: {' '.join(str(error).split())}") from None
    if frame.empty:
        raise DataError(f"{path} has a header but no data rows")
    return frame


def _first_long_line(path: Path, sep: str, names: Sequence[str] | None) -> int | None:
    """The 1-based line of the first record with more fields than the header (or ``names``)."""
    if len(sep) != 1:
        return None
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter=sep, skipinitialspace=True)
            width = len(names) if names is not None else None
            previous_end = 0
            for record in reader:
                start, previous_end = previous_end + 1, reader.line_num
                if record in ([], [""]):
                    continue
                if width is None:
                    width = len(record)
                elif len(record) > width:
                    return start
    except csv.Error:
        return None
    return None


#: A text column is taken for a numeric one with stray text when at least this share of its
#: values are numbers and at most :data:`STRAY_VALUES` distinct texts are not.
NUMERIC_SHARE, STRAY_VALUES = 0.9, 3


def _refuse_stray_text(series: pd.Series, column: str, path: Path, sep: str, header: bool = True) -> None:
    """Refuse a column of numbers with a few stray texts ("thirty" among ages): read as text, it
    would silently become a categorical column of every distinct number."""
    values = series.dropna()
    if len(values) < 20:
        return
    try:
        numbers = pd.to_numeric(values, errors="coerce")
    except OverflowError:  # an integer beyond 64 bits (400 nines): pandas gives up on the whole column
        _refuse_huge_number(series, column, path, sep, header)
        raise DataError(f"{path}: column {column!r} holds a number too large to read: fix it or declare it missing (--na-values)") from None
    stray = numbers.isna().to_numpy()
    texts = pd.unique(values[stray])
    if not stray.any() or (~stray).mean() < NUMERIC_SHARE or len(texts) > STRAY_VALUES:
        return
    row = int(np.flatnonzero(series.notna().to_numpy())[np.argmax(stray)])
    line = _file_line(path, sep, row, header)
    where = f"line {line}" if line is not None else f"data row {row + 1}"
    raise DataError(
        f"{path}, {where}: column {column!r} holds numbers ({int((~stray).sum()):,} of {len(values):,}) but also "
        f"{series.iloc[row]!r}: fix the value or declare it missing (--na-values); read as text, every number would be a category"
    )


def _refuse_huge_number(series: pd.Series, column: str, path: Path, sep: str, header: bool = True) -> None:
    """Refuse the first value of ``series`` that is a number beyond float range, naming its line."""
    texts = series.astype(str).to_numpy()
    for row, text in enumerate(texts):
        try:
            number = float(text)
        except (ValueError, OverflowError):
            continue
        if not np.isfinite(number) and text.strip().lower().lstrip("+-") not in ("inf", "infinity", "nan"):
            line = _file_line(path, sep, row, header)
            where = f"line {line}" if line is not None else f"data row {row + 1}"
            shown = text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text):,} characters)"
            raise DataError(f"{path}, {where}: column {column!r} holds {shown}, a number beyond any float: fix it or declare it missing (--na-values)")


def _refuse_infinite(series: pd.Series, column: str, path: Path, sep: str, header: bool = True) -> None:
    """Refuse an infinite number ('inf', or a number beyond float range such as 1e999): no
    record's value is infinite, and a split or a bin would silently send it to one end."""
    infinite = np.isinf(series.to_numpy(dtype=float, na_value=np.nan))
    if not infinite.any():
        return
    row = int(np.argmax(infinite))
    line = _file_line(path, sep, row, header)
    where = f"line {line}" if line is not None else f"data row {row + 1}"
    raise DataError(
        f"{path}, {where}: column {column!r} holds {float(series.iloc[row])!r}, not a finite number "
        f"({int(infinite.sum()):,} such value(s)): fix it or declare it missing (--na-values)"
    )


def parse_numeric(
    series: pd.Series, column: str, path: Path, sep: str, header: bool = True
) -> pd.Series:
    """Parse a text column as numbers; the first unparsable value raises :class:`DataError`."""
    parsed = pd.to_numeric(series, errors="coerce")
    bad = np.flatnonzero((parsed.isna() & series.notna()).to_numpy())
    if bad.size:
        row = int(bad[0])
        line = _file_line(path, sep, row, header)
        where = f"line {line}" if line is not None else f"data row {row + 1}"
        raise DataError(
            f"{path}, {where}: column {column!r} must be numeric, "
            f"but has the value {series.iloc[row]!r}"
        )
    return parsed


def _file_line(path: Path, sep: str, row: int, header: bool = True) -> int | None:
    """The 1-based file line where data row ``row`` (0-based) starts; the header (if any) is line 1.

    Mirrors pandas: blank lines are skipped, a quoted field may span lines. Only used to
    report an error, so it rescans the file.
    """
    if len(sep) != 1:
        return None
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter=sep, skipinitialspace=True)
            previous_end, data_row, header_seen = 0, -1, not header
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
    except csv.Error:  # a field over the csv module's limit: the data row is named instead
        return None
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
# Column types and roles (shared with the dataset loaders)
# --------------------------------------------------------------------------------------------


def _is_number(series: pd.Series) -> bool:
    """True for int/float columns (booleans count as categorical)."""
    return is_numeric_dtype(series) and not is_bool_dtype(series)


def sorted_categorical(series: pd.Series) -> pd.Series:
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


def resolve_roles(
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
