"""``ppdm disguise``: randomized response on a table, as its respondents would answer (paper 001 §4.1)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ppdm.errors import PpdmError
from ppdm.files import atomic_path

if TYPE_CHECKING:
    import pandas as pd

from ppdm.cli.common import (
    SEED,
    FiniteRange,
    _known_columns,
    _split_list,
    check_outputs,
    console,
    csv_options,
    handles_errors,
    main,
    read_csv,
)


@main.command("disguise")
@click.option("--dataset", help="A bundled dataset (see `ppdm datasets`).")
@click.option("--data", type=click.Path(path_type=Path), help="Your own CSV file instead.")
@click.option(
    "--theta",
    type=FiniteRange(0, 1),
    required=True,
    help="Probability that a respondent tells the truth (θ; 0.5 hides everything).",
)
@click.option("--columns", help="Comma-separated columns to disguise (default: all, the class included).")
@click.option(
    "--scheme",
    type=click.Choice(["record", "attribute"]),
    default="record",
    show_default=True,
    help="One coin per respondent (the paper) or one per respondent and attribute.",
)
@click.option("--median", is_flag=True, help="Binarize the numeric columns at their median first (paper 001 §5.1).")
@click.option("--bins", type=click.IntRange(min=2, max=1000), help="Cut the numeric columns into this many quantile bins first (2 to 1,000).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the respondents' coins.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Where to write the disguised table (CSV).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@csv_options
@handles_errors
def disguise_command(
    dataset: str | None,
    data: Path | None,
    theta: float,
    columns: str | None,
    scheme: str,
    median: bool,
    bins: int | None,
    seed: int,
    out: Path,
    quiet: bool,
) -> None:
    """Disguise a table by randomized response: each respondent tells the truth with probability θ (paper 001)."""
    check_outputs(out)
    from ppdm.data.datasets import load_dataset
    from ppdm.randomize import bin_numeric, binarize_at_median, disguise

    if (dataset is None) == (data is None):
        raise PpdmError("give exactly one of --dataset NAME or --data FILE.csv")
    if median and bins:
        raise PpdmError("give --median or --bins, not both")
    frame = load_dataset(dataset)[0] if dataset is not None else read_csv(data)[0]  # type: ignore[arg-type]
    names = _known_columns(frame, _split_list(columns, "--columns") or list(frame.columns))
    numeric = _numeric(frame, names) if median or bins else []
    if median or bins:
        if not numeric:
            option = "--median" if median else "--bins"
            raise PpdmError(f"{option} cuts numeric columns, and none of the columns disguised is numeric ({', '.join(names)})")
    if median:
        frame = binarize_at_median(frame, numeric)
    elif bins:
        frame = bin_numeric(frame, numeric, n_bins=bins)
    disguised = disguise(frame, theta, names, random_state=seed, scheme=scheme)  # type: ignore[arg-type]
    with atomic_path(out) as tmp:
        disguised.to_csv(tmp, index=False)
    if not quiet:
        console.print(
            f"disguised {len(names)} column(s) of {len(frame):,} rows with θ = {theta:g} ({scheme} scheme, seed {seed}); "
            f"train on it with `ppdm train --data {out} --class-attribute COLUMN --theta {theta:g}`",
            highlight=False,
        )
        console.print(f"  wrote {out}")


def _numeric(frame: pd.DataFrame, names: list[str]) -> list[str]:
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return [c for c in names if is_numeric_dtype(frame[c]) and not is_bool_dtype(frame[c])]
