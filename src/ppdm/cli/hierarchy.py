"""``ppdm hierarchy``: write a starting generalization hierarchy for columns of a new table."""

from __future__ import annotations

from pathlib import Path

import click

from ppdm.cli.common import _known_columns, check_outputs, console, csv_options, handles_errors, main, read_csv
from ppdm.errors import PpdmError

#: The most intervals --bins asks for (as for ``ppdm disguise --bins``).
MAX_BINS = 1000


@main.command("hierarchy")
@click.option("--dataset", help="A bundled dataset (see `ppdm datasets`).")
@click.option("--data", type=click.Path(path_type=Path), help="Your own CSV file instead.")
@click.option("--column", "columns", multiple=True, required=True, help="A column to write a hierarchy for (repeat for more).")
@click.option(
    "--bins",
    type=click.IntRange(min=2),
    default=4,
    show_default=True,
    help="Numeric columns: intervals at the finest level (halves, quarters, ... of the values; 2 to 1,000).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write the hierarchies here (.yaml or .json; default: print YAML).",
)
@csv_options
@handles_errors
def hierarchy_command(
    dataset: str | None, data: Path | None, columns: tuple[str, ...], bins: int, out: Path | None
) -> None:
    """Write a starting hierarchy to edit: quantile intervals for numbers, one level for categories (docs/hierarchies.md)."""
    check_outputs(out)
    import tempfile

    from ppdm.data.datasets import load_dataset
    from ppdm.data.hierarchy import save_hierarchies, starting_hierarchy

    if (dataset is None) == (data is None):
        raise PpdmError("give exactly one of --dataset NAME or --data FILE.csv")
    if bins > MAX_BINS:
        raise PpdmError(f"--bins {bins}: a starting hierarchy has at most {MAX_BINS:,} intervals at its finest level")
    frame = load_dataset(dataset)[0] if dataset is not None else read_csv(data)[0]  # type: ignore[arg-type]
    names = _known_columns(frame, list(dict.fromkeys(columns)))
    hierarchies = {name: starting_hierarchy(frame[name], bins) for name in names}
    if out is not None:
        save_hierarchies(out, hierarchies)
        console.print(f"wrote {out}: {', '.join(f'{n} ({h.kind})' for n, h in hierarchies.items())}", highlight=False)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hierarchies.yaml"
        save_hierarchies(path, hierarchies)
        click.echo(path.read_text(encoding="utf-8"), nl=False)
