"""Writing output files whole or not at all.

Every file ppdm writes goes first to a temporary file in the same folder, which is renamed over
the target only once it is complete: a full disk, a file-size limit or an interrupt leaves the
old file (or none), never a truncated one that a later step would read as if it were whole.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ppdm.errors import PpdmError


def write_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    write_bytes_atomic(path, text.encode(encoding))


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """:func:`write_atomic` for bytes."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise PpdmError(f"{path}: not a regular file; give a file name to write")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
