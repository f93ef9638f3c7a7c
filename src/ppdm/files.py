"""Reading input files within bounds, and writing output files whole or not at all.

*Reading.* :func:`read_text` refuses what is not a regular file (a folder, a FIFO, ``/dev/zero``),
a file larger than its kind can be, and bytes that are not text, each in one line naming the
file; :func:`load_yaml` parses YAML without aliases (``*name`` can expand a few lines into
gigabytes) and refuses a key written twice instead of keeping the last.

*Writing.* Every file ppdm writes goes first to a temporary file in the same folder, which is
renamed over the target only once it is complete: a full disk, a file-size limit or an
interrupt leaves the old file (or none), never a truncated one that a later step would read as
if it were whole.

Any layer may use it (like :mod:`ppdm.errors`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ppdm.errors import PpdmError, YamlSyntaxError

__all__ = ["MAX_TEXT_BYTES", "atomic_path", "load_yaml", "read_text", "write_atomic"]

#: The largest settings file (threat model, hierarchies) read: far beyond any real one.
MAX_TEXT_BYTES = 16 * 2**20


def read_text(path: str | Path, what: str, limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of the ``what`` file ``path`` (e.g. ``"threat-model"``), at most ``limit`` bytes."""
    p = Path(path)
    if p.is_dir():
        raise PpdmError(f"{p}: is a directory, not a {what} file")
    if not p.exists():
        raise PpdmError(f"{p}: no such {what} file")
    if not p.is_file():
        raise PpdmError(f"{p}: not a regular file (a {what} file is read whole, not from a pipe or device)")
    size = p.stat().st_size
    if size > limit:
        raise PpdmError(f"{p}: {size:,} bytes, more than a {what} file can be ({limit:,})")
    try:
        with p.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise PpdmError(f"{p}: cannot read it ({exc.strerror})") from None
    if len(data) > limit:
        raise PpdmError(f"{p}: more than {limit:,} bytes, more than a {what} file can be")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PpdmError(f"{p}: not a text file (byte {exc.start:,} is not UTF-8)") from None


def load_yaml(text: str, where: str) -> Any:
    """Parse ``text`` as YAML (safe types only), refusing aliases and keys written twice;
    errors name ``where`` and the line."""
    import yaml

    class _Loader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise PpdmError(
                    f"{where} line {event.start_mark.line + 1}: YAML aliases (*{event.anchor}) are not read: write the values out"
                )
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.setdefault(key, key_node.start_mark.line + 1)
                except TypeError:
                    continue  # an unhashable key: PyYAML's own error follows
                if first != key_node.start_mark.line + 1:
                    raise PpdmError(f"{where} line {key_node.start_mark.line + 1}: key {key!r} is written twice (first on line {first})")
            return super().construct_mapping(node, deep=deep)

    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        error = YamlSyntaxError(f"{where}{line}: not valid YAML ({problem})")
        error.mark, error.problem = mark, problem
        raise error from None
    except RecursionError:
        raise PpdmError(f"{where}: YAML nested too deeply to read") from None


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
