"""Roles: which columns of a table are quasi-identifiers, which is sensitive, which is the class.

Vocabulary of the papers (000 §3, 002 §2): the *quasi-identifiers* (QI, "public attributes") are
what an attacker can learn about a person from other sources; the *sensitive attribute* (SA) is
what the data publisher wants to protect; the *class attribute* is what a model predicts. In the
papers' main setting the class is the sensitive attribute; ppdm allows them to differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from ppdm.errors import DataError


@dataclass(frozen=True)
class Roles:
    """Roles of a table's columns.

    Parameters
    ----------
    quasi_identifiers:
        Columns the attacker knows for every person (paper 000 §3: "adversaries have all the data
        of the QI attributes").
    sensitive:
        The sensitive attribute, or ``None`` when the table has none.
    class_attribute:
        The column a learner predicts; defaults to ``sensitive``.
    """

    quasi_identifiers: tuple[str, ...]
    sensitive: str | None = None
    class_attribute: str | None = None
    _extra: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __init__(
        self,
        quasi_identifiers: Iterable[str],
        sensitive: str | None = None,
        class_attribute: str | None = None,
    ) -> None:
        qi = tuple(quasi_identifiers)
        if isinstance(quasi_identifiers, str):
            raise DataError(
                f"quasi_identifiers must be a list of column names, not the string {quasi_identifiers!r}"
            )
        dupes = sorted({c for c in qi if qi.count(c) > 1})
        if dupes:
            raise DataError(f"quasi-identifier listed twice: {', '.join(dupes)}")
        if sensitive is not None and sensitive in qi:
            raise DataError(f"column {sensitive!r} cannot be both a quasi-identifier and sensitive")
        object.__setattr__(self, "quasi_identifiers", qi)
        object.__setattr__(self, "sensitive", sensitive)
        object.__setattr__(
            self, "class_attribute", class_attribute if class_attribute is not None else sensitive
        )

    @property
    def columns(self) -> list[str]:
        """Every column that has a role, QIs first, without repeats."""
        out = list(self.quasi_identifiers)
        for c in (self.sensitive, self.class_attribute):
            if c is not None and c not in out:
                out.append(c)
        return out

    def features(self, frame: pd.DataFrame) -> list[str]:
        """The columns a learner may split on: every column except the class attribute."""
        return [c for c in frame.columns if c != self.class_attribute]

    def replace(self, **changes: object) -> Roles:
        """A copy with some roles changed (``quasi_identifiers``, ``sensitive``, ``class_attribute``)."""
        args = {
            "quasi_identifiers": self.quasi_identifiers,
            "sensitive": self.sensitive,
            "class_attribute": self.class_attribute,
        }
        if "sensitive" in changes and "class_attribute" not in changes and self.class_attribute == self.sensitive:
            args["class_attribute"] = None
        args.update(changes)
        return Roles(**args)

    def to_dict(self) -> dict[str, object]:
        return {
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive": self.sensitive,
            "class_attribute": self.class_attribute,
        }


def check_columns(frame: pd.DataFrame, columns: Sequence[str], table: str | None = None) -> None:
    """Raise :class:`DataError` naming every column of ``columns`` that ``frame`` lacks (and,
    when the caller reads more than one table, ``table``: which one, e.g. "the holdout")."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        known = ", ".join(map(str, frame.columns))
        if table is not None:
            raise DataError(f"{table} lacks column {', '.join(map(repr, missing))} (it has: {known})")
        raise DataError(f"unknown column {', '.join(map(repr, missing))} (the table has: {known})")


def text_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its column names as text. Columns are named by text throughout (a CSV's
    header, a threat model's ``known``, a model's split attributes), so a table whose names are
    numbers (a frame built from an array: 0, 1, 2) is read as naming them "0", "1", "2"; two names
    with the same text (``1`` and ``"1"``) are refused, naming it. ``frame`` itself when every
    name is text already."""
    names = list(frame.columns)
    repeated = frame.columns[frame.columns.duplicated()]
    if len(repeated):
        raise DataError(f"the table has two columns named {plain_value(repeated[0])!r}: rename or drop one")
    _refuse_unread_types(frame)
    if all(isinstance(c, str) for c in names):
        return frame
    text = [str(c) for c in names]
    twice = next((t for t in text if text.count(t) > 1), None)
    if twice is not None:
        raise DataError(f"the table has two columns named {twice!r} once their names are read as text: rename one")
    return frame.set_axis(text, axis=1)


def _refuse_unread_types(frame: pd.DataFrame) -> None:
    """Refuse a column of complex numbers (numpy would silently keep only their real parts) or of
    dates and durations (a model splits on categories or numbers: each date would be a value of
    its own, outside every split), naming it and saying how to convert it."""
    from pandas.api.types import is_complex_dtype, is_datetime64_any_dtype, is_timedelta64_dtype

    for name, dtype in frame.dtypes.items():
        if is_complex_dtype(dtype):
            raise DataError(f"column {plain_value(name)!r} holds complex numbers: give its real part (or the numbers as text) explicitly")
        if is_datetime64_any_dtype(dtype) or is_timedelta64_dtype(dtype) or isinstance(dtype, pd.PeriodDtype):
            raise DataError(
                f"column {plain_value(name)!r} holds dates or durations ({dtype}): convert it to the numbers or texts the model "
                "was fitted on (e.g. .dt.year, or .astype(str))"
            )


def check_varies(frame: pd.DataFrame, column: str, role: str, consequence: str) -> None:
    """Raise :class:`DataError` when ``column`` (the ``role`` column: "sensitive", "class") holds
    fewer than two values: ``consequence`` says why that leaves nothing to do."""
    if column not in frame.columns:
        return
    values = frame[column].dropna()
    if len(values) and values.nunique() < 2:  # no value at all: the missing-value checks name it
        raise DataError(f"the {role} column {column!r} holds one value ({plain_value(values.iloc[0])!r}) in every record: {consequence}")


def plain_value(value: object) -> object:
    """A numpy scalar as the Python value it holds (its repr in a message is then ``3``, not
    ``np.int64(3)``); anything else as it is."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value
