"""What every ``ppdm`` command shares: the command group, the consoles, one-line errors."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.errors import PpdmError

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from ppdm.attacks import AttackResult
    from ppdm.data.roles import Roles
    from ppdm.tree import Tree


class LazyConsole:
    """A rich ``Console`` made on first use: ``ppdm --help`` never loads rich."""

    def __init__(self, **settings: Any) -> None:
        self._settings = settings
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)

    def real(self) -> Console:
        """The rich ``Console`` itself (for rich objects that take one, such as a progress bar)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._settings)
        return self._console

    @contextmanager
    def using(self, console: Console | None) -> Iterator[None]:
        """Print to ``console`` inside the block (``None``: a new rich ``Console`` is made on first
        use, with this object's settings), then to the one before; by default a command prints to
        the console made on first use, once per process."""
        before, self._console = self._console, console
        try:
            yield
        finally:
            self._console = before


console = LazyConsole(soft_wrap=True, markup=False)
errors = LazyConsole(stderr=True, markup=False)

DISCLOSURES = ("labels", "error-rates", "class-counts")
"""The values of :class:`ppdm.tree.Disclosure`, least revealing first (spelled out here so that
building the options does not import the library; a test keeps the two equal). Compare levels
as ``Disclosure`` members, which are ordered, not by their place here."""


#: The longest error line printed; the rest of a longer message is counted, not shown.
MESSAGE_LIMIT = 400


def _fail(message: str, status: int = 2) -> None:
    line = _shorten(message)
    try:
        from rich.text import Text

        errors.print(Text.assemble(("error:", "bold red"), " ", line), highlight=False, soft_wrap=True)
    except Exception:  # rich cannot load or print (out of memory, a closed terminal): plain text will do
        try:
            sys.stderr.write(f"error: {line}\n")
            sys.stderr.flush()
        except Exception:
            pass
    sys.exit(status)


#: The longest run of characters without a space kept whole in an error line (a value, a path).
WORD_LIMIT = 200


def _shorten(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """``message`` on one line, cut at ``limit`` characters (the rest counted). A very long word
    (a 200 KB cell quoted in the message) is cut in its middle first, so that what follows it (the
    row, the column) stays on the line."""
    words = [w if len(w) <= WORD_LIMIT else f"{w[:WORD_LIMIT // 2]}… ({len(w) - WORD_LIMIT * 3 // 4:,} more characters) …{w[-WORD_LIMIT // 4:]}" for w in message.split()]
    message = " ".join(words)
    if len(message) > limit:
        message = f"{message[:limit]}… ({len(message) - limit:,} more characters)"
    return message


_OPTIONS_META = "ppdm.options"


def command_options(**options: str) -> None:
    """Declare the current command's option for each Python argument a library error may advise
    (``class_attribute="--class"``): its error lines name the option instead of the argument."""
    context = click.get_current_context(silent=True)
    if context is not None:
        context.meta.setdefault(_OPTIONS_META, {}).update(options)


def _message(exc: PpdmError) -> str:
    context = click.get_current_context(silent=True)
    options = context.meta.get(_OPTIONS_META, {}) if context is not None else {}
    return exc.for_command_line(options)


def _debugging() -> bool:
    """Whether ``ppdm --debug`` (or ``PPDM_DEBUG=1``) asked for the traces of unexpected errors."""
    context = click.get_current_context(silent=True)
    asked = bool(context is not None and context.find_root().params.get("debug"))
    return asked or os.environ.get("PPDM_DEBUG", "") not in ("", "0")


def handles_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Whatever fails underneath, the command ends in one line on standard error: exit status 2
    (130 when interrupted). Library errors say what is wrong; an unexpected error names its type
    and asks for ``ppdm --debug``, which shows the whole trace instead."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ppdm.files import recording_reads, remove_temporary_files

        try:
            with _stopping_signals_raise(), recording_reads():
                return func(*args, **kwargs)
        except PpdmError as exc:
            _fail(_message(exc))
        except click.ClickException:
            raise
        except Stopped as exc:
            remove_temporary_files()
            _fail(f"stopped by {exc.name}: no output was written in part", 128 + exc.signum)
        except KeyboardInterrupt:
            remove_temporary_files()
            _fail("interrupted: no output was written in part", 130)
        except OSError as exc:
            if _debugging():
                raise
            where = f": {exc.filename}" if exc.filename else _output_named()
            _fail(f"{exc.strerror or exc}{where}")
        except RecursionError:
            if _debugging():
                raise
            _fail("the input is nested too deeply to read")
        except MemoryError:
            if _debugging():
                raise
            _fail("out of memory: the input is too large for this machine")
        except Exception as exc:
            if _debugging():
                raise
            text = _shorten(str(exc), MESSAGE_LIMIT // 2) or "no message"
            _fail(f"unexpected {type(exc).__name__}: {text} (rerun as `ppdm --debug ...` for the trace)")

    return wrapper


class Stopped(BaseException):
    """A stopping signal (SIGTERM, SIGHUP) received while a command runs: raised where the program
    is, so that every ``finally`` runs and no temporary file is left behind."""

    def __init__(self, signum: int) -> None:
        import signal

        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(self.name)


def _raise_stopped(signum: int, frame: Any) -> None:
    raise Stopped(signum)


@contextmanager
def _stopping_signals_raise() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Stopped` (as SIGINT raises
    ``KeyboardInterrupt``); the earlier handlers are restored after it. In the main thread only."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    earlier = {n: signal.signal(getattr(signal, n), _raise_stopped) for n in names}
    try:
        yield
    finally:
        for n, handler in earlier.items():
            signal.signal(getattr(signal, n), handler)


def _output_named() -> str:
    """``": FILE"`` naming the command's output file(s), for an OS error that names none (a full
    disk, a file-size limit): it happened while writing them."""
    context = click.get_current_context(silent=True)
    if context is None:
        return ""
    named = [str(v) for k, v in context.params.items() if k in OUTPUT_OPTIONS and v is not None]
    return f" (writing {', '.join(named)})" if named else ""


class FiniteRange(click.FloatRange):
    """A float option that must be a finite number (click's FloatRange lets ``nan`` pass every bound)."""

    name = "finite float range"

    def _describe_range(self) -> str:
        if self.min is None and self.max is None:
            return "finite"
        return super()._describe_range()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def check_outputs(*paths: Path | None) -> None:
    """Refuse, before any work, an output file that cannot be written (its folder is missing), that
    names an input of the command (every other path option or argument), or that another output
    names too: an output never overwrites what the command reads. An earlier file the command then
    replaces is named on stderr when it ends (a command that fails leaves it as it was)."""
    _check_distinct([p for p in paths if p is not None])
    earlier: dict[Path, os.stat_result] = {}
    for path in paths:
        if path is None:
            continue
        folder = path.parent
        if str(path) in ("", "."):
            raise PpdmError(f"{str(path)!r}: an empty name is no file to write; give the output a file name")
        if path.is_dir():
            raise PpdmError(f"{path}: is a directory; give a file name to write")
        if path.exists() and not path.is_file():
            raise PpdmError(f"{path}: not a regular file; give a file name to write")
        if not folder.is_dir():
            what = "is not a directory" if folder.exists() else "does not exist"
            raise PpdmError(f"{path}: cannot write it, the directory {folder} {what}")
        if not os.access(folder, os.W_OK):
            raise PpdmError(
                f"{path}: cannot write it, the directory {folder} is not writable"
            )
        if path.is_file():
            earlier[path] = path.stat()
    context = click.get_current_context(silent=True)
    if earlier and context is not None:
        context.call_on_close(lambda: _say_replaced(earlier))


def _say_replaced(earlier: dict[Path, os.stat_result]) -> None:
    """Name each output file written over an earlier one (a new inode, size or time: the atomic
    writes replace the file whole)."""
    for path, old in earlier.items():
        try:
            now = path.stat()
        except OSError:
            continue
        if (now.st_ino, now.st_size, now.st_mtime_ns) != (old.st_ino, old.st_size, old.st_mtime_ns):
            click.echo(f"{path}: replaced the earlier file", err=True)


#: The parameters that name files a command writes (every other path a command takes is read).
OUTPUT_OPTIONS = frozenset({"out", "report_out", "train_out", "test_out", "rules_out", "json_out", "pdf"})


def _check_distinct(outputs: list[Path]) -> None:
    context = click.get_current_context(silent=True)
    inputs: list[tuple[str, Path]] = []
    if context is not None:
        options = {p.name: (p.opts[0] if p.opts else p.name) for p in context.command.params}
        for name, value in context.params.items():
            for v in value if isinstance(value, tuple) else (value,):
                if isinstance(v, Path) and name not in OUTPUT_OPTIONS and not any(v is o for o in outputs):
                    inputs.append((str(options.get(name, name)), v))
    seen: list[Path] = []
    for out in outputs:
        for option, given in inputs:
            if _same_file(out, given):
                raise PpdmError(f"{out}: it is also an input ({option} {given}); write the output to another file")
        for other in seen:
            if _same_file(out, other):
                raise PpdmError(f"{out}: two outputs would write the same file")
        seen.append(out)


def _same_file(out: Path, given: Path) -> bool:
    """Whether ``out`` is the input ``given`` or one of the files its glob matches (any spelling)."""
    from ppdm.files import ReadFiles

    return ReadFiles([given]).read_as(out) is not None


@contextmanager
def status(message: str, quiet: bool) -> Iterator[None]:
    """A spinner on a terminal; nothing under --quiet or when output is not a TTY."""
    if quiet or not console.is_terminal:
        yield
        return
    with console.status(message):
        yield


def _one_line_usage_errors(parse: Callable[..., Any], ctx: click.Context, args: list[str]) -> Any:
    """A bad option (unknown, missing, out of range) is one line ``Error: ...`` and exit status 2,
    like every other error: the usage lines and the ``--help`` hint are left out."""
    try:
        return parse(ctx, args)
    except click.UsageError as exc:
        exc.ctx = None
        raise


class OneLineHelpCommand(click.Command):
    """A command whose whole first docstring paragraph is its line in ``ppdm --help`` (click cuts
    it at about 45 characters otherwise); its usage errors are one line."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return _one_line_usage_errors(super().parse_args, ctx, args)

    def get_short_help_str(self, limit: int = 45) -> str:
        if self.short_help:
            return super().get_short_help_str(limit)
        return " ".join((self.help or "").split("\n\n")[0].split())


class CommandGroup(click.Group):
    command_class = OneLineHelpCommand

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return _one_line_usage_errors(super().parse_args, ctx, args)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            exc.ctx = None
            raise


@click.group(
    cls=CommandGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
)
@click.version_option(package_name="ppdm")
@click.option("--debug", is_flag=True, help="Show the whole trace of an unexpected error (also PPDM_DEBUG=1).")
def main(debug: bool) -> None:
    """ppdm: what does a published decision tree disclose, and how to publish one that discloses less."""
    if not debug:
        _one_line_warnings()


def _one_line_warnings() -> None:
    """Print ppdm's own warnings as one line on stderr (``warning: ...``), not with the library's
    file and source line; other libraries' warnings as Python prints them."""
    import warnings

    default = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: str | None = None) -> None:
        if category.__module__ == "ppdm.errors":
            click.echo(f"warning: {message}", err=True)
        else:
            default(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def _print_lines(lines: list[str]) -> None:
    for line in lines:
        console.print(line, highlight=False, markup=False)


def _print_against_baseline(summary: dict) -> None:
    """The attack's accuracy and exposure next to what the prior alone gives."""
    from ppdm.report.summary import baseline_lines

    _print_lines(baseline_lines(summary))


def _print_riskiest(result: AttackResult, top: int) -> None:
    from ppdm.report.summary import riskiest_lines

    _print_lines(riskiest_lines(result, top))


def _print_disclosure(details: dict, summary: dict) -> None:
    """The lines every maximum-entropy audit prints: divergence, then the attack against the prior."""
    from ppdm.report.summary import disclosure_lines

    _print_lines(disclosure_lines(details, summary))


def _known_columns(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    unknown = [c for c in columns if c not in frame.columns]
    if unknown:
        raise PpdmError(
            f"unknown column {unknown[0]!r} (the table has: {', '.join(map(str, frame.columns))})"
        )
    return columns


def _features(
    frame: pd.DataFrame, roles: Roles, attributes: list[str] | None, algorithm: str
) -> list[str]:
    import pandas as pd

    if attributes is not None:
        unknown = [a for a in attributes if a not in frame.columns]
        if unknown:
            raise PpdmError(
                f"unknown column {unknown[0]!r} in --attributes (the table has: {', '.join(frame.columns)})"
            )
        if roles.class_attribute in attributes:
            raise PpdmError(
                f"--attributes cannot include the class attribute {roles.class_attribute!r}"
            )
        return attributes
    features = roles.features(frame)
    if algorithm == "id3":
        features = [
            c for c in features if isinstance(frame[c].dtype, pd.CategoricalDtype)
        ]
        if not features:
            raise PpdmError(
                "ID3 splits categorical attributes only and the table has none: use --algorithm c45"
            )
    return features


_CSV_META = "ppdm.csv"
_SEPARATORS = {"\\t": "\t", "tab": "\t", "space": " "}


def _remember_csv(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    ctx.meta.setdefault(_CSV_META, {})[param.name] = value
    return value


_CSV_OPTIONS = (
    click.option(
        "--sep",
        expose_value=False,
        callback=_remember_csv,
        help="CSV field separator ('\\t' or 'tab' for tabs; default: guessed from the first line).",
    ),
    click.option(
        "--names",
        expose_value=False,
        callback=_remember_csv,
        help="The CSV has no header line: its comma-separated column names.",
    ),
    click.option(
        "--na-values",
        expose_value=False,
        callback=_remember_csv,
        help="Comma-separated texts meaning a missing value (default: ?,NA; an empty field always is).",
    ),
    click.option(
        "--row-ids",
        expose_value=False,
        callback=_remember_csv,
        help="A CSV column of row ids (such as the 'row' column of `ppdm train --train-out`): ids, not data.",
    ),
)


def csv_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options of every command that reads a CSV (``--sep``, ``--names``, ``--na-values``,
    ``--row-ids``); :func:`read_csv` applies them."""
    for option in reversed(_CSV_OPTIONS):
        func = option(func)
    return func


def csv_settings() -> dict[str, Any]:
    """The keyword arguments of :func:`ppdm.data.tables.load_csv` given by the CSV options."""
    context = click.get_current_context(silent=True)
    given = context.meta.get(_CSV_META, {}) if context is not None else {}
    settings: dict[str, Any] = {}
    if given.get("sep") is not None:
        if not given["sep"]:
            raise PpdmError("--sep: an empty separator cannot split fields (leave --sep out to guess it from the first line)")
        settings["sep"] = _SEPARATORS.get(given["sep"], given["sep"])
        if len(settings["sep"]) != 1:
            raise PpdmError(f"--sep {given['sep']!r}: a separator is one character (or '\\t', 'tab', 'space'), such as ',' or ';'")
    if given.get("names"):
        settings["names"] = _split_list(given["names"])
    if given.get("na_values") is not None:
        settings["na_values"] = ["", *(v.strip() for v in given["na_values"].split(","))]
    if given.get("row_ids"):
        settings["row_ids"] = given["row_ids"]
    return settings


def read_csv(path: Path, **kwargs: Any) -> tuple[pd.DataFrame, Roles]:
    """``load_csv`` with the command's CSV options."""
    from ppdm.data.datasets import load_csv

    return load_csv(path, **csv_settings(), **kwargs)


def _split_list(value: str | None, option: str | None = None) -> list[str] | None:
    """The comma-separated names of ``value`` (``None`` when not given). With ``option``, a value
    given that names nothing (``--columns ,``) is an error rather than the default."""
    if value is None or (not value and option is None):
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names and option is not None:
        raise PpdmError(f"{option}: no column named in {value!r}: name at least one, or leave the option out for the default")
    return names


# -- the threat model's options, shared by the commands that audit (audit, defend) -------------
_THREAT_OPTIONS = [
    click.option(
        "--sensitive",
        help="The sensitive column: the tree's class or any input (default: from --threat, else the class).",
    ),
    click.option(
        "--known",
        "known",
        help="Comma-separated columns the attacker knows (list the class to make it known).",
    ),
    click.option("--quasi-identifiers", "known_alias", help="Same as --known.", hidden=True),
    click.option("--class-known", is_flag=True, help="The attacker also knows each record's class."),
    click.option(
        "--preset",
        type=click.Choice(["census", "insider", "paper", "nothing"]),
        help="A named attacker (see docs/threat_models.md); --known overrides it.",
    ),
    click.option(
        "--threat",
        "threat_file",
        type=click.Path(path_type=Path),
        help="The threat model as a YAML file; the flags above override its keys.",
    ),
    click.option(
        "--known-individuals",
        help="Comma-separated rows (0 = first data row) whose full records the attacker has.",
    ),
]


def threat_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--sensitive --known --class-known --preset --threat --known-individuals`` (in this order)."""
    for option in reversed(_THREAT_OPTIONS):
        func = option(func)
    return func


#: A seed numpy's generators take (0 to 2**32 - 1).
SEED = click.IntRange(0, 2**32 - 1)


def publish_option(
    help: str = "Audit less than the tree holds (default: what the file holds; error-rates with --dataset).",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--publish``: what of the model the attacker sees (a threat-model key)."""
    return click.option("--publish", type=click.Choice(DISCLOSURES), help=help)


sa_option = click.option(
    "--sa/--no-sa",
    "sa_published",
    default=None,
    help="Whether the sensitive column's distribution is known (default: yes for an input, no for the class).",
)


def _threat_from_options(
    threat_file: Path | None,
    sensitive: str | None,
    known: str | None,
    preset: str | None,
    publish: str | None,
    sa_published: bool | None,
    known_individuals: str | None,
) -> Any:
    """The threat model of a file, with the flags given on the command line taking precedence."""
    from ppdm.attacks.core.threat import ThreatModel, load_threat

    threat = load_threat(threat_file) if threat_file is not None else ThreatModel()
    changes: dict[str, Any] = {}
    if sensitive is not None:
        changes["sensitive"] = sensitive
    if known is not None:
        columns = _split_list(known)
        if not columns:
            raise PpdmError(f"--known: no column named in {known!r}: name the columns the attacker knows, or use --preset nothing")
        changes["known"] = tuple(columns)
    if preset is not None:
        changes["preset"] = preset
        if known is None:
            changes["known"] = None  # the preset says who is known
    if publish is not None:
        changes["publish"] = publish
    if sa_published is not None:
        changes["sa_published"] = sa_published
    if known_individuals is not None:
        changes["known_individuals"] = tuple(_row_numbers(known_individuals))
    return ThreatModel(**{**threat.to_spec(), **changes})


def _row_numbers(text: str) -> list[int]:
    rows = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if not part.isdigit():
            raise PpdmError(
                f"--known-individuals: {part!r} is not a row number (0 = the first data row)"
            )
        rows.append(int(part))
    if not rows:
        raise PpdmError(f"--known-individuals: no row named in {text!r}: give row numbers (0 = the first data row)")
    twice = sorted({r for r in rows if rows.count(r) > 1})
    if twice:
        raise PpdmError(f"--known-individuals: row {twice[0]} is listed twice")
    return rows


def _default_known(threat: Any, features: list[str]) -> Any:
    """With --dataset and no declared attacker, the attacker knows the features (paper 000)."""
    if threat.known is None and threat.preset is None:
        return replace(threat, known=tuple(features))
    return threat


def _with_class_known(threat: Any, tree: Tree) -> Any:
    """The attacker of ``--class-known``: they also know each record's class (the audit resolves
    the threat once, the class among its known columns)."""
    if (threat.sensitive or tree.class_attribute) == tree.class_attribute:
        raise PpdmError(
            f"--class-known: the class {tree.class_attribute!r} is the sensitive column"
        )
    return replace(threat, class_known=True)
