"""Writing output files whole or not at all.

Every file ppdm writes goes first to a temporary file in the same folder, which is renamed over
the target only once it is complete: a full disk, a file-size limit or an interrupt leaves the
old file (or none), never a truncated one that a later step would read as if it were whole.
Any layer may use it (like :mod:`ppdm.errors`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ppdm.errors import PpdmError

__all__ = ["atomic_path", "write_atomic"]


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed over ``path`` when the block ends
    without an error, removed otherwise. ``path`` must not be a folder or a special file."""
    target = Path(path)
    if target.exists() and not target.is_file():
        raise PpdmError(f"{target}: not a regular file; give a file name to write")
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with tmp.open("rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` whole or not at all (see :func:`atomic_path`)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding=encoding)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
