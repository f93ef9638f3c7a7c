"""Progress of the long steps (solving, proving, building a forest's rows, a defense search): one
small protocol that the library calls and that the command line and notebooks render.

A step is a :class:`Step`: its ``phase`` in words, how far it is (``done`` of ``total``
``unit``, e.g. 12 of at most 200 Newton steps, 40 of 100 trees), and the seconds spent of its
time limit. A reporter is any ``Callable[[Step], None]``; the front door's functions take it
as ``progress=`` (``None``: :class:`Printer`, lines on standard error once a step has run
for :data:`QUIET_SECONDS`; ``False``: silent).

The solver loops deep below the front door do not take a reporter as an argument: they call
:func:`report` in one line, which tells the reporter the caller installed around them with
:func:`reporting` (a context variable, so threads and nested calls keep their own), and does
nothing when none is.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TextIO

__all__ = ["EVERY_SECONDS", "QUIET_SECONDS", "Printer", "Progress", "Step", "report", "reporter", "reporting", "resolve"]

#: The default printer says nothing during a run's first seconds: a short audit stays silent.
QUIET_SECONDS = 2.0
#: Seconds between two of the default printer's lines of one phase (a new phase is shown at once).
EVERY_SECONDS = 5.0


@dataclass(frozen=True)
class Step:
    """Where a long step is: ``phase`` (what runs, in words: ``"solving: Newton's method"``),
    ``done`` of ``total`` ``unit`` (``total`` a budget the step may stop before, e.g. Newton
    steps at most, or a count, e.g. trees; ``None`` when unknown), the ``seconds`` spent in the
    phase's run and its ``time_limit`` (``None``: none), and a ``detail`` (e.g. "rows off by 1e-3")."""

    phase: str
    done: int | None = None
    total: int | None = None
    unit: str = ""
    seconds: float | None = None
    time_limit: float | None = None
    detail: str = ""

    def line(self) -> str:
        """The step as one line: ``solving: Newton's method; step 12 of at most 200; 35 s of 300 s``."""
        parts = [self.phase]
        if self.done is not None:
            of = "" if self.total is None else f" of {self.total:,}"
            parts.append(f"{self.done:,}{of} {self.unit}".rstrip())
        if self.detail:
            parts.append(self.detail)
        if self.seconds is not None:
            parts.append(f"{self.seconds:.0f} s" + ("" if self.time_limit is None else f" of {self.time_limit:.0f} s"))
        return "; ".join(parts)


Progress = Callable[[Step], None]


class Printer:
    """The default reporter: each step's :meth:`Step.line` on ``stream`` (standard error), none
    during the first ``quiet`` seconds after it was made, then one at each new phase and one
    every ``every`` seconds within a phase."""

    def __init__(self, stream: TextIO | None = None, quiet: float = QUIET_SECONDS, every: float = EVERY_SECONDS) -> None:
        self.stream, self.quiet, self.every = stream, quiet, every
        self.start = time.monotonic()
        self.last_at, self.last_phase = -float("inf"), ""

    def __call__(self, step: Step) -> None:
        now = time.monotonic()
        if now - self.start < self.quiet or (step.phase == self.last_phase and now - self.last_at < self.every):
            return
        self.last_at, self.last_phase = now, step.phase
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(step.line() + "\n")
        stream.flush()


def resolve(progress: Progress | bool | None) -> Progress | None:
    """The reporter ``progress`` means: ``None`` or ``True`` a new :class:`Printer`, ``False`` none, else itself."""
    if progress is False:
        return None
    if progress is None or progress is True:
        return Printer()
    return progress


_CURRENT: ContextVar[tuple[Progress, float] | None] = ContextVar("ppdm_progress", default=None)


@contextmanager
def reporting(progress: Progress | bool | None) -> Iterator[Progress | None]:
    """Install the reporter ``progress`` means (:func:`resolve`) for the calls inside, which
    :func:`report` tells; yields it (``None``: silent)."""
    resolved = resolve(progress)
    token = _CURRENT.set(None if resolved is None else (resolved, time.monotonic()))
    try:
        yield resolved
    finally:
        _CURRENT.reset(token)


def reporter() -> Progress | None:
    """The reporter :func:`reporting` installed (``None``: none)."""
    current = _CURRENT.get()
    return None if current is None else current[0]


def report(
    phase: str, done: int | None = None, total: int | None = None, unit: str = "", *, time_limit: float | None = None, detail: str = "",
) -> None:
    """Tell the reporter in effect (:func:`reporting`) where a loop is, in one line; ``seconds``
    counts from when it was installed. Nothing happens when none is."""
    current = _CURRENT.get()
    if current is not None:
        current[0](Step(phase, done, total, unit, time.monotonic() - current[1], time_limit, detail))
