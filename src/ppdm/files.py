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

import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ppdm.errors import PpdmError, YamlSyntaxError

__all__ = [
    "MAX_MODEL_BYTES", "MAX_TEXT_BYTES", "as_path", "finite_number", "atomic_path", "load_json", "load_yaml", "read_bytes", "read_text", "regular_file", "write_atomic",
]

#: The largest settings file (threat model, hierarchies, rules, results) read: far beyond any real one.
MAX_TEXT_BYTES = 16 * 2**20

#: The largest model file read (a forest of thousands of deep trees is a few hundred megabytes).
MAX_MODEL_BYTES = 2**30

#: The most values (texts, numbers, lists, mappings) a YAML file may hold: a threat model lists
#: columns and rows, a hierarchy its values; PyYAML holds some 700 bytes and 70 µs per value,
#: so a 12 MB list of 3 million would take gigabytes and minutes.
MAX_YAML_NODES = 200_000


def finite_number(x: Any) -> bool:
    """Whether ``x`` (read from a file) is a finite number: an int or float, not a boolean, not NaN
    or infinite, and not an integer too large for a float (``10**400``: ``math.isfinite`` raises)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def as_path(path: Any, what: str, error: type[PpdmError] = PpdmError) -> Path:
    """``path`` as a :class:`Path`; anything but a path or its text is an ``error`` naming ``what``."""
    if isinstance(path, (str, os.PathLike)) and not isinstance(path, bytes):
        text = os.fspath(path)
        if isinstance(text, str) and text and "\0" not in text:
            return Path(text)
    raise error(f"expected the path of {_a(what)} file, got {_shown(path)}")


def _a(what: str) -> str:
    """``what`` after its article: "a CSV", "an attack-result"."""
    return f"{'an' if what[:1].lower() in 'aeio' else 'a'} {what}"


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, (str, bytes)) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def regular_file(path: Any, what: str, error: type[PpdmError] = PpdmError) -> Path:
    """``path`` if it names an existing regular file; otherwise an ``error`` naming the file and
    what it is instead (missing, a directory, a pipe or device)."""
    p = as_path(path, what, error)
    try:
        if p.is_dir():
            raise error(f"{p}: is a directory, not {_a(what)} file")
        if not p.exists():
            raise error(f"{p}: no such {what} file")
        if not p.is_file():
            raise error(f"{p}: not a regular file ({_a(what)} file is read from disk, not from a pipe or device)")
    except OSError as exc:  # a name too long, a loop of symbolic links
        raise error(f"{p}: cannot read it ({exc.strerror or exc})") from None
    return p


def read_bytes(path: Any, what: str, limit: int = MAX_TEXT_BYTES, error: type[PpdmError] = PpdmError) -> bytes:
    """The bytes of the ``what`` file ``path``: a regular file of at most ``limit`` bytes."""
    p = regular_file(path, what, error)
    size = p.stat().st_size
    if size > limit:
        raise error(f"{p}: {size:,} bytes, more than {_a(what)} file can be ({limit:,})")
    try:
        with p.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise error(f"{p}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise error(f"{p}: more than {limit:,} bytes, more than {_a(what)} file can be")
    return data


def read_text(path: Any, what: str, limit: int = MAX_TEXT_BYTES, error: type[PpdmError] = PpdmError) -> str:
    """The UTF-8 text of the ``what`` file ``path`` (e.g. ``"threat-model"``), at most ``limit``
    bytes; every refusal is an ``error`` naming the file."""
    data = read_bytes(path, what, limit, error)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{Path(path)}: not a text file (byte {exc.start:,} is not UTF-8)") from None


def load_json(text: str | bytes, where: str, error: type[PpdmError] = PpdmError, allow_nan: bool = True) -> Any:
    """Parse JSON ``text``; syntax errors and nesting too deep to read are errors naming
    ``where`` (and the line and column). ``allow_nan=False`` refuses ``NaN`` and ``Infinity``
    (which are not JSON) instead of reading them as floats for the caller to check."""
    import json

    def refuse(constant: str) -> Any:
        raise error(f"{where}: {constant} is not a JSON number (write a finite number or null)")

    try:
        return json.loads(text, parse_constant=None if allow_nan else refuse)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not a text file (byte {exc.start:,} is not UTF-8)") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply to read") from None


def load_yaml(text: str, where: str) -> Any:
    """Parse ``text`` as YAML (safe types only), refusing aliases and keys written twice;
    errors name ``where`` and the line."""
    import yaml

    class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
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
        _count_yaml_nodes(text, where)
        return yaml.load(text, Loader=_Loader)
    except yaml.reader.ReaderError as exc:
        error = YamlSyntaxError(f"{where}: not valid YAML (character {exc.character!r} at position {exc.position:,} is not allowed in YAML text)")
        error.problem = f"character {exc.character!r} is not allowed"
        raise error from None
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):  # libyaml's bound on nesting
            raise PpdmError(f"{where}: YAML nested too deeply to read") from None
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        error = YamlSyntaxError(f"{where}{line}: not valid YAML ({problem})")
        error.mark, error.problem = mark, problem
        raise error from None
    except RecursionError:
        raise PpdmError(f"{where}: YAML nested too deeply to read") from None


def _count_yaml_nodes(text: str, where: str) -> None:
    """Refuse YAML ``text`` holding an alias or more than :data:`MAX_YAML_NODES` values, found by streaming its
    parse events (libyaml's when installed: seconds for millions, in constant memory) before any
    is built."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    nodes = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)
    count = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            raise PpdmError(f"{where} line {_line(event)}: YAML aliases (*{event.anchor}) are not read: write the values out")
        count += isinstance(event, nodes)
        if count > MAX_YAML_NODES:
            raise PpdmError(f"{where} line {_line(event):,}: more than {MAX_YAML_NODES:,} YAML values (texts, numbers, lists): far more than a settings file holds")


def _line(event: Any) -> int:
    """The 1-based line a YAML event starts on."""
    return int(getattr(event.start_mark, "line", -1)) + 1


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed over ``path`` when the block ends
    without an error, removed otherwise. ``path`` must not be a folder or a special file."""
    target = Path(path)
    if target.exists() and not target.is_file():
        raise PpdmError(f"{target}: not a regular file; give a file name to write")
    if not target.parent.is_dir():
        raise PpdmError(f"cannot write {target}: the folder {target.parent} does not exist")
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except PermissionError:
        raise PpdmError(f"cannot write {target}: the folder {target.parent} is not writable") from None
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
