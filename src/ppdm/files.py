"""Reading input files within bounds, and writing output files whole or not at all.

*Reading.* :func:`read_text` refuses what is not a regular file (a folder, a FIFO, ``/dev/zero``),
a file larger than its kind can be, and bytes that are not text, each in one line naming the
file; :func:`load_yaml` parses YAML without aliases (``*name`` can expand a few lines into
gigabytes) and refuses a key written twice instead of keeping the last.

*Writing.* Every file ppdm writes goes first to a temporary file in the same folder, which is
renamed over the target only once it is complete: a full disk, a file-size limit or an
interrupt leaves the old file (or none), never a truncated one that a later step would read as
if it were whole.
The temporary's name is recorded as the file is created (SIGINT, SIGTERM and SIGHUP held
meanwhile), so that :func:`remove_temporary_files` (the CLI's signal handling, and the
interpreter's exit) deletes any left. No writer replaces a file the same call read
(:func:`recording_reads`, :class:`ReadFiles`): the identity of a file is its resolved path and
its inode, so a glob, a symbolic link, ``..``, a relative spelling or a hard link of an input
are refused alike.

Any layer may use it (like :mod:`ppdm.errors`).
"""

from __future__ import annotations

import atexit
import glob
import math
import os
import signal
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ppdm.errors import PpdmError, YamlSyntaxError

__all__ = [
    "MAX_MODEL_BYTES", "MAX_TEXT_BYTES", "ReadFiles", "as_path", "atomic_path", "expand_inputs", "finite_number", "load_json", "load_yaml",
    "note_read", "read_bytes", "read_text", "recording_reads", "refuse_overwriting_input", "regular_file", "remove_temporary_files",
    "same_file", "write_atomic",
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
    note_read(p)
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
    """Parse JSON ``text``; syntax errors, a key written twice in one object (JSON readers
    otherwise keep the last silently) and nesting too deep to read are errors naming ``where``
    (and the line and column, or the key). ``allow_nan=False`` refuses ``NaN`` and ``Infinity``
    (which are not JSON) instead of reading them as floats for the caller to check."""
    import json

    def refuse(constant: str) -> Any:
        raise error(f"{where}: {constant} is not a JSON number (write a finite number or null)")

    def once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set[str] = set()
            twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
            raise error(f"{where}: key {_shown(twice)} is written twice in one JSON object (which one is meant?)")
        return out

    try:
        return json.loads(text, parse_constant=None if allow_nan else refuse, object_pairs_hook=once)
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


# -- which files a call read: an output never replaces one of them ------------------------------
def expand_inputs(path: str | Path) -> list[Path]:
    """The files an input path names: itself, or what its glob (``part-*.csv``) matches when no
    file has that very name; a folder's files are named by the folder itself."""
    text = os.fspath(path)
    if glob.has_magic(text) and not os.path.lexists(text):
        return [Path(f) for f in sorted(glob.glob(text))]
    p = Path(text)
    if p.is_dir():
        return [p, *(f for f in sorted(p.iterdir()) if f.is_file())]
    return [p]


def _identity(path: Path) -> tuple[Path | None, tuple[int, int] | None]:
    """``path`` resolved (symbolic links, ``..``, relative spellings undone) and its device and
    inode when it exists (a hard link is the same file under another name)."""
    try:
        resolved: Path | None = path.resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links, a name too long
        resolved = None
    try:
        st = os.stat(path)
        inode: tuple[int, int] | None = (st.st_dev, st.st_ino)
    except (OSError, ValueError):
        inode = None
    return resolved, inode


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether the paths ``a`` and ``b`` name one file, whatever their spelling (symbolic links,
    ``..``, relative paths, hard links)."""
    ra, ia = _identity(Path(a))
    rb, ib = _identity(Path(b))
    return (ia is not None and ia == ib) or (ra is not None and ra == rb)


class ReadFiles:
    """The files one call read (each input path with its globs expanded), by identity."""

    def __init__(self, paths: Iterable[str | Path] = ()) -> None:
        self._files: dict[tuple[Path | None, tuple[int, int] | None], Path] = {}
        for path in paths:
            self.add(path)

    def add(self, path: str | Path) -> None:
        """Remember the file(s) ``path`` names (a glob: every file it matches)."""
        try:
            files = expand_inputs(path)
        except (OSError, TypeError, ValueError):
            return
        for f in files:
            key = _identity(f)
            if key != (None, None):
                self._files.setdefault(key, f)

    def update(self, other: ReadFiles) -> None:
        self._files.update(other._files)

    def __iter__(self) -> Iterator[Path]:
        return iter(self._files.values())

    def __len__(self) -> int:
        return len(self._files)

    def read_as(self, target: str | Path) -> Path | None:
        """The path under which ``target`` was read, or ``None`` when it was not."""
        resolved, inode = _identity(Path(target))
        for (r, i), given in self._files.items():
            if (inode is not None and inode == i) or (resolved is not None and resolved == r):
                return given
        return None


_READING: ContextVar[tuple[ReadFiles, ...]] = ContextVar("ppdm_reading", default=())


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
def recording_reads() -> Iterator[ReadFiles]:
    """Within the block, remember every file ppdm reads (:func:`regular_file` and :func:`note_read`);
    :func:`atomic_path` refuses to write over any of them."""
    read = ReadFiles()
    token = _READING.set((*_READING.get(), read))
    try:
        yield read
    finally:
        _READING.reset(token)


def note_read(path: str | Path) -> None:
    """Tell the recordings under way (:func:`recording_reads`) that ``path`` is read."""
    for read in _READING.get():
        read.add(path)


def refuse_overwriting_input(target: str | Path, inputs: Iterable[str | Path] | ReadFiles = (), error: type[PpdmError] = PpdmError) -> None:
    """Refuse to write ``target`` when it is a file the call read: one of ``inputs`` or what a
    recording under way saw (any spelling of it, any file a glob matched)."""
    read = inputs if isinstance(inputs, ReadFiles) else ReadFiles(inputs)
    for recorded in (read, *_READING.get()):
        given = recorded.read_as(target)
        if given is not None:
            shown = "" if str(given) == str(target) else f" (read as {given})"
            raise error(f"{target}: it is also an input of this call{shown}; write the output to another file")


# -- writing whole or not at all -----------------------------------------------------------------
#: The temporary files being written (a path is added before its file exists, removed once it is
#: renamed or deleted): what :func:`remove_temporary_files` deletes when the process is stopped.
_TEMPORARY: set[Path] = set()

_HELD = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def _signals_held() -> Iterator[None]:
    """Within the block, the stopping signals wait (delivered as it ends): a temporary file is
    created and recorded, or renamed and forgotten, with no interrupt in between."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def remove_temporary_files() -> None:
    """Delete every temporary file still being written (a command stopped by a signal calls it
    on its way out; it is also registered to run when the interpreter exits)."""
    with _signals_held():
        for tmp in list(_TEMPORARY):
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
            _TEMPORARY.discard(tmp)


def _new_temporary(target: Path) -> Path:
    with _signals_held():
        try:
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        except PermissionError:
            raise PpdmError(f"cannot write {target}: the folder {target.parent} is not writable") from None
        except OSError as exc:
            raise PpdmError(f"cannot write {target}: {exc.strerror or exc}") from None
        tmp = Path(name)
        _TEMPORARY.add(tmp)
        os.close(fd)
    return tmp


def _discard(tmp: Path) -> None:
    with _signals_held():
        try:
            tmp.unlink(missing_ok=True)
        finally:
            _TEMPORARY.discard(tmp)


@contextmanager
def atomic_path(path: str | Path, inputs: Iterable[str | Path] | ReadFiles = ()) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed over ``path`` when the block ends
    without an error, removed otherwise (an interrupt or a stopping signal included: see
    :func:`remove_temporary_files`). ``path`` must not be a folder or a special file, nor a file the
    call read (``inputs``, and what :func:`recording_reads` saw)."""
    target = as_path(path, "output")
    refuse_overwriting_input(target, inputs)
    if target.exists() and not target.is_file():
        raise PpdmError(f"{target}: not a regular file; give a file name to write")
    if not target.parent.is_dir():
        raise PpdmError(f"cannot write {target}: the folder {target.parent} does not exist")
    tmp = _new_temporary(target)
    try:
        yield tmp
        with tmp.open("rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        with _signals_held():
            os.replace(tmp, target)
            _TEMPORARY.discard(tmp)
    except OSError as exc:
        if exc.filename is None or str(exc.filename) == str(tmp):  # the temporary's name tells the user nothing
            raise OSError(exc.errno, exc.strerror, str(target)) from None
        raise
    finally:
        _discard(tmp)


def write_atomic(path: str | Path, text: str, encoding: str = "utf-8", inputs: Iterable[str | Path] | ReadFiles = ()) -> None:
    """Write ``text`` to ``path`` whole or not at all (see :func:`atomic_path`), never over one of
    ``inputs``."""
    with atomic_path(path, inputs) as tmp:
        tmp.write_text(text, encoding=encoding)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


atexit.register(remove_temporary_files)
