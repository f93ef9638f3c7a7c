"""``ppdm datasets``: the bundled datasets."""

from __future__ import annotations

from ppdm.cli.common import console, main


@main.command("datasets")
def datasets_command() -> None:
    """List the bundled datasets, with their licenses and citations."""
    from rich.table import Table

    from ppdm.data.datasets import DATASETS

    table = Table(title="Bundled datasets")
    for col in ("name", "rows", "columns", "license", "citation"):
        table.add_column(col)
    for info in DATASETS.values():
        table.add_row(
            info.name,
            f"{info.rows:,}",
            str(info.columns),
            info.license,
            f"{info.citation} {info.doi}",
        )
    console.print(table)
    console.print(
        "Bank Personal Loan data (no stated license) is not bundled: use load_bank_loan(path) or --data."
    )
