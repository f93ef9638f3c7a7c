"""What every ``ppdm`` command shares: the command group, the consoles, one-line errors."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.errors import DataError, PpdmError

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


console = LazyConsole(soft_wrap=True, markup=False)
errors = LazyConsole(stderr=True, markup=False)

DISCLOSURES = ("labels", "error-rates", "class-counts")
"""The values of :class:`ppdm.tree.Disclosure`, least revealing first (spelled out here so that
building the options does not import the library; a test keeps the two equal). Compare levels
as ``Disclosure`` members, which are ordered, not by their place here."""


def _fail(message: str) -> None:
    from rich.text import Text

    errors.print(
        Text.assemble(("error:", "bold red"), " ", message),
        highlight=False,
        soft_wrap=True,
    )
    sys.exit(2)


def handles_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one line and exit status 2."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PpdmError as exc:
            _fail(str(exc))
        except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
            _fail(f"{exc.strerror}: {exc.filename}")

    return wrapper


def check_outputs(*paths: Path | None) -> None:
    """Refuse, before any work, an output file that cannot be written (its folder is missing)."""
    for path in paths:
        if path is None:
            continue
        folder = path.parent
        if path.is_dir():
            raise PpdmError(f"{path}: is a directory; give a file name to write")
        if not folder.is_dir():
            what = "is not a directory" if folder.exists() else "does not exist"
            raise PpdmError(f"{path}: cannot write it, the directory {folder} {what}")
        if not os.access(folder, os.W_OK):
            raise PpdmError(
                f"{path}: cannot write it, the directory {folder} is not writable"
            )


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
def main() -> None:
    """ppdm: what does a published decision tree disclose, and how to publish one that discloses less."""


def _print_against_baseline(summary: dict) -> None:
    """The attack's accuracy and exposure next to what the prior alone gives."""
    certain = summary["certain_records"]
    if "baseline" not in summary:
        console.print(
            f"  people the attacker is certain about: {certain:,} (true values unknown: accuracy not measured)",
            highlight=False,
        )
        return
    base, lift = summary["baseline"], summary["lift"]
    lo, hi = summary["attacker_accuracy_ci95"]
    ratio = f", x{lift['ratio']:.2f}" if lift["ratio"] is not None else ""
    console.print(
        f"  attacker accuracy {summary['attacker_accuracy']:.4f} (95% CI {lo:.4f}-{hi:.4f}) against {base['accuracy']:.4f} "
        f"for the prior alone (always guessing {base['majority_guess']!r}): lift {lift['difference']:+.4f}{ratio}",
        highlight=False,
    )
    console.print(
        f"  certain guesses: {certain:,} people ({summary['certain_right']:,} right, {summary['certain_wrong']:,} wrong; "
        "a wrong certain guess is not an exposure)",
        highlight=False,
    )
    levels = ", ".join(
        f"{k} {v:,} (prior alone {summary['prior_alone'][k]:,})"
        for k, v in summary["confidence_in_true_value"].items()
    )
    console.print(
        f"  people by the attacker's confidence in their true value: {levels}",
        highlight=False,
    )
    beyond = ", ".join(f"{k} {v:,}" for k, v in summary["beyond_prior"].items())
    console.print(
        f"  of them, held there only thanks to the model (the prior alone holds them lower): {beyond}",
        highlight=False,
    )


BASELINE_KEYS = (
    "attacker_accuracy",
    "attacker_accuracy_ci95",
    "baseline",
    "lift",
    "mean_confidence_in_true_value",
    "certain_right",
    "certain_wrong",
    "confidence_in_true_value",
    "prior_alone",
    "beyond_prior",
)


def _print_riskiest(result: AttackResult, top: int) -> None:
    if not top:
        return
    console.print(f"riskiest QI groups (top {top}):")
    qi = list(result.groups.quasi_identifiers)
    for i, row in enumerate(
        result.riskiest_groups(top).itertuples(index=False), start=1
    ):
        values = ", ".join(f"{name}={value}" for name, value in zip(qi, row))
        console.print(
            f"  {i}. {values} → {row.guess} (confidence {row.confidence:.2f}, "
            f"{row.records} record{'s' if row.records != 1 else ''}, {row.provenance})",
            highlight=False,
            markup=False,
        )


def _print_disclosure(details: dict, summary: dict) -> None:
    """The lines every maximum-entropy audit prints: divergence, then the attack against the prior."""
    if "overall_divergence" in details:
        console.print(
            f"  overall divergence D_overall = {details['overall_divergence']:.5f} (natural log; 0 = everything disclosed)",
            highlight=False,
        )
    _print_against_baseline(summary)


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
    if given.get("sep"):
        settings["sep"] = _SEPARATORS.get(given["sep"], given["sep"])
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


def _split_list(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


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
    from ppdm.attacks.threat import ThreatModel, load_threat

    threat = load_threat(threat_file) if threat_file is not None else ThreatModel()
    changes: dict[str, Any] = {}
    if sensitive is not None:
        changes["sensitive"] = sensitive
    if known is not None:
        changes["known"] = tuple(_split_list(known) or ())
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
    return rows


def _default_known(threat: Any, features: list[str]) -> Any:
    """With --dataset and no declared attacker, the attacker knows the features (paper 000)."""
    if threat.known is None and threat.preset is None:
        return replace(threat, known=tuple(features))
    return threat


def _with_class_known(threat: Any, tree: Tree, table: pd.DataFrame) -> Any:
    resolved = threat.resolve(table, tree.class_attribute)
    if tree.class_attribute == resolved.sensitive:
        raise PpdmError(
            f"--class-known: the class {tree.class_attribute!r} is the sensitive column"
        )
    return replace(threat, known=(*resolved.known, tree.class_attribute), preset=None)


def _missing(
    table: pd.DataFrame, tree: Any, threat: Any, policy: str
) -> tuple[pd.DataFrame, int]:
    """The table with the missing values of the columns the audit reads dealt with by ``policy``."""
    from ppdm.data.missing import handle_missing

    resolved = threat.resolve(table, tree.class_attribute)
    columns = [*resolved.known, resolved.sensitive, tree.class_attribute, *tree.split_attributes]  # a forest: any tree's
    kept, dropped = handle_missing(table, columns, policy)  # type: ignore[arg-type]
    if dropped and getattr(tree, "n_records", None) == len(table):
        raise DataError(
            f"--missing drop would leave out {dropped:,} of the {len(table):,} training rows, but the forest's trees "
            "count every one of them (per-row multiplicities): audit all the rows the forest was fitted on"
        )
    return kept, dropped
