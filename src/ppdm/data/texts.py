"""Texts written only when read: a list of per-group descriptions made on first access.

An audit describes every group in words (its *provenance*: "tree 0 leaf 17; tree 1 leaves 3,
9; …"). For a forest of 100 trees over 30,000 groups that is three million pieces of text, 17 s
of Python string work, which only a report or a JSON file ever reads. :class:`LazyTexts` holds
the function that writes them and runs it the first time an item is read or changed, so an
audit under a deadline does not spend its time on words nobody asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableSequence
from typing import overload

__all__ = ["LazyTexts"]


class LazyTexts(MutableSequence[str]):
    """``n`` texts, written by ``make()`` (which returns a list of ``n`` strings) when first needed.

    Behaves as a list of strings; ``len`` does not write them.
    """

    def __init__(self, make: Callable[[], list[str]], n: int) -> None:
        self._make: Callable[[], list[str]] | None = make
        self._n = n
        self._texts: list[str] = []

    @property
    def written(self) -> bool:
        """Whether the texts have been made."""
        return self._make is None

    def _all(self) -> list[str]:
        if self._make is not None:
            texts = self._make()
            if len(texts) != self._n:
                raise ValueError(f"lazy texts: {len(texts)} made for {self._n} groups")
            self._texts, self._make = texts, None
        return self._texts

    def __len__(self) -> int:
        return self._n if self._make is not None else len(self._texts)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        return self._all()[i]

    @overload
    def __setitem__(self, i: int, value: str) -> None: ...
    @overload
    def __setitem__(self, i: slice, value: Iterable[str]) -> None: ...
    def __setitem__(self, i: int | slice, value: str | Iterable[str]) -> None:
        texts = self._all()
        if isinstance(i, slice):
            texts[i] = list(value)
        else:
            assert isinstance(value, str)
            texts[i] = value

    def __delitem__(self, i: int | slice) -> None:
        del self._all()[i]

    def insert(self, i: int, value: str) -> None:
        self._all().insert(i, value)

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, LazyTexts)) else NotImplemented

    def __repr__(self) -> str:
        return f"LazyTexts({self._n} texts, {'written' if self.written else 'not written yet'})"
