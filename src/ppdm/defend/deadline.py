"""Stop the candidate under way when the defense search's time budget runs out.

Auditing one candidate can take minutes (the maximum-entropy audit of a bootstrap forest whose
optimum lies on the boundary), so a budget that only stops *new* candidates does not bound the
search. :func:`stop_at` arms a timer (``SIGALRM``) that raises :class:`OutOfTime` in the code it
guards at the deadline; the search then reports that candidate unfinished. The exception is
raised between Python bytecodes, so a long call into compiled code (a sparse factorisation)
finishes first. The timer needs POSIX signals and the main thread, and is not armed over a timer
someone else armed; otherwise the guarded code simply runs to its end, as before.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["OutOfTime", "stop_at"]


class OutOfTime(BaseException):
    """The time budget ran out while a candidate was under way (a ``BaseException``, so that no
    ``except Exception`` in the audits swallows it)."""


def _raise(signum: int, frame: Any) -> None:
    raise OutOfTime


@contextmanager
def stop_at(deadline: float | None) -> Iterator[None]:
    """Raise :class:`OutOfTime` in the guarded block at ``deadline`` (``time.monotonic()`` seconds;
    ``None``: never). The caller catches it, also when it comes as the block ends."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if deadline is None or not usable or signal.getitimer(signal.ITIMER_REAL)[0] > 0:  # no timer, or someone else's is armed
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
