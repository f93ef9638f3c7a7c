"""``ppdm show``: print a published tree."""

from __future__ import annotations

from pathlib import Path

import click

from ppdm.cli.common import DISCLOSURES, console, handles_errors, main
from ppdm.errors import PpdmError


@main.command("show")
@click.argument("tree_file", type=click.Path(path_type=Path))
@click.option(
    "--disclosure",
    type=click.Choice(DISCLOSURES),
    help="Show only what this level reveals (default: what the file holds).",
)
@click.option(
    "--max-depth", type=click.IntRange(min=1), help="Abbreviate below this depth."
)
@click.option(
    "--ids/--no-ids",
    default=True,
    show_default=True,
    help="End each line with its node's id ([node 7]), the ids audits and reports name.",
)
@handles_errors
def show_command(
    tree_file: Path, disclosure: str | None, max_depth: int | None, ids: bool
) -> None:
    """Print a tree in the papers' style ("> 50K (2.0/1.0)"), with every node's id."""
    from ppdm.tree import Disclosure, load_tree, render_tree
    from ppdm.tree.model_files import model_kind

    kind = model_kind(tree_file) if tree_file.is_file() else "ppdm-tree"  # load_tree names a missing file
    if kind != "ppdm-tree":
        article = "an" if kind[0] in "aeiox" else "a"  # an xgboost-json model
        raise PpdmError(f"{tree_file}: {article} {kind} model; ppdm show prints ppdm tree files (audit this one with ppdm audit --model)")
    tree = load_tree(tree_file)
    if disclosure is not None and Disclosure(disclosure) > tree.disclosure:
        raise PpdmError(
            f"{tree_file} holds only {tree.disclosure.value}; it cannot show {disclosure}"
        )
    console.print(
        f"{tree.algorithm or 'tree'} predicting {tree.class_attribute!r} ({tree.criterion or 'unknown criterion'}): "
        f"{tree.n_nodes} nodes, {tree.n_leaves} leaves, depth {tree.depth}",
        highlight=False,
    )
    console.print(
        render_tree(tree, disclosure=disclosure, max_depth=max_depth, ids=ids),
        highlight=False,
        markup=False,
    )
