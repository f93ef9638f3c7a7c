"""``ppdm attack``: the leaf attacks on a published tree or forest (ppdm JSON, XGBoost JSON,
LightGBM text; :func:`ppdm.tree.model_files.load_model` tells them apart)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ppdm.errors import PpdmError

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.attacks.core.result import AttackResult
    from ppdm.pipeline.options import LeafOptions

from ppdm.cli.common import (
    FiniteRange,
    _print_against_baseline,
    _print_riskiest,
    _split_list,
    check_outputs,
    command_options,
    console,
    csv_options,
    handles_errors,
    main,
    read_csv,
)

ATTACKS = ("homogeneity", "uniqueness", "background", "reconstruction")


def _attacker_table(dataset: str | None, data: Path | None) -> pd.DataFrame:
    from ppdm.data.datasets import load_dataset

    if (dataset is None) == (data is None):
        raise PpdmError(
            "give exactly one of --dataset NAME or --data FILE.csv (the attacker's table)"
        )
    if dataset is not None:
        return load_dataset(dataset)[0]
    return read_csv(data)[0]  # type: ignore[arg-type]


def _known_rows(table: pd.DataFrame, known: Path) -> tuple[int, ...]:
    """Positions of the rows of ``table`` equal to the rows of the CSV ``known`` (on the columns both have)."""
    people = read_csv(known)[0]
    shared = [c for c in people.columns if c in table.columns]
    if not shared:
        raise PpdmError(f"{known}: none of its columns is in the attacker's table")
    left = table[shared].astype(str).reset_index(drop=True).reset_index()
    right = people[shared].astype(str).drop_duplicates()
    matched = left.merge(right, on=shared, how="inner")["index"]
    missing = len(right) - len(right.merge(left[shared].drop_duplicates(), on=shared))
    if missing:
        raise PpdmError(
            f"{known}: {missing} known individual(s) match no row of the attacker's table"
        )
    return tuple(int(i) for i in matched.unique())


def _leaf(kind: str, threshold: float) -> LeafOptions:
    """The audit's leaf attack ``--attack`` names (``--threshold`` read by the background attack only)."""
    from ppdm.pipeline.options import LeafOptions

    return LeafOptions(kind, threshold) if kind == "background" else LeafOptions(kind)  # type: ignore[arg-type]


def _print_result(result: AttackResult, top: int) -> None:
    from rich.table import Table

    from ppdm.report.summary import BASELINE_KEYS

    table = Table(
        title=f"{result.attack} attack on {result.sensitive!r}", show_header=False
    )
    summary = result.summary()
    for key, value in summary.items():
        if (
            key in ("attack", "sensitive")
            or key in BASELINE_KEYS
            or isinstance(value, (dict, list))
        ):
            continue
        if isinstance(value, float):
            value = f"{value:.4f}" if not value.is_integer() else f"{int(value):,}"
        elif isinstance(value, int):
            value = f"{value:,}"
        table.add_row(key.replace("_", " "), str(value))
    console.print(table)
    _print_against_baseline(summary)
    _print_riskiest(result, top)


@main.command("attack")
@click.option(
    "--model",
    "--tree",
    "tree_file",
    type=click.Path(path_type=Path),
    required=True,
    help="The published model: a ppdm tree or forest (JSON), an XGBoost JSON model or a LightGBM "
    "model text file (these two read their column names from the table: give the training table).",
)
@click.option(
    "--data",
    type=click.Path(path_type=Path),
    help="The attacker's table: the training records' QIs (CSV); with the sensitive column, the attack is also measured.",
)
@click.option(
    "--dataset", help="A bundled dataset as the attacker's table instead of --data."
)
@click.option(
    "--sensitive",
    help="The sensitive attribute (default: the model's class); an input is read through each person's possible values (homogeneity).",
)
@click.option(
    "--class",
    "--class-attribute",
    "class_attribute",
    help="With an XGBoost, LightGBM or skops --model: the class column of --data (default: the one column "
    "outside the model's inputs holding its classes).",
)
@click.option(
    "--attack",
    "kind",
    type=click.Choice(ATTACKS),
    default="homogeneity",
    show_default=True,
    help="reconstruction: take the people found certain out of the counts and read them again, until nobody new is certain.",
)
@click.option(
    "--quasi-identifiers",
    help="Comma-separated columns the attacker knows (default: the tree's attributes in the table).",
)
@click.option(
    "--known",
    type=click.Path(path_type=Path),
    help="background: CSV of individuals whose full records the attacker knows.",
)
@click.option(
    "--threshold",
    type=FiniteRange(),
    default=0.9,
    show_default=True,
    help="background: confidence that counts as exposed.",
)
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="How many of the riskiest groups to print.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write the AttackResult (every group's posterior) as JSON.",
)
@csv_options
@handles_errors
def attack_command(
    tree_file: Path,
    data: Path | None,
    dataset: str | None,
    sensitive: str | None,
    class_attribute: str | None,
    kind: str,
    quasi_identifiers: str | None,
    known: Path | None,
    threshold: float,
    top: int,
    out: Path | None,
) -> None:
    """Attack a published tree or forest with the attacker's table (paper 003) and summarise who is exposed."""
    command_options(class_attribute="--class")
    check_outputs(out)
    from ppdm.api import Audit, AuditOptions, audit
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.tree.model_files import load_model

    table = _attacker_table(dataset, data)
    # the sensitive column may be an input, so it never names the class
    tree = load_model(tree_file, table, class_attribute=class_attribute)
    qis = _split_list(quasi_identifiers, "--quasi-identifiers")
    if kind == "background" and known is None:
        raise PpdmError(
            "--attack background needs --known FILE.csv (the individuals the attacker knows)"
        )
    # the attacker knows the listed columns, else the model's attributes in the table
    threat = ThreatModel(
        sensitive=sensitive, known=None if qis is None else tuple(qis), quasi_identifiers=tuple(tree.attributes),
        known_individuals=_known_rows(table, known) if kind == "background" and known is not None else (),
    )
    done = audit(tree, table, threat, options=AuditOptions(leaf=_leaf(kind, threshold)), progress=False)
    assert isinstance(done, Audit) and done.estimate is not None  # a leaf attack's audit is its result
    result = done.estimate
    if table.index.name is not None:  # --row-ids: the file's ids, not positions
        result.row_ids = table.index.to_numpy()
    _print_result(result, top)
    if out is not None:
        result.save(out)
        console.print(f"wrote {out}")
