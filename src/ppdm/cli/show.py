"""``ppdm show``: print a published tree, or a forest tree by tree."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ppdm.cli.common import DISCLOSURES, command_options, console, csv_options, handles_errors, main, read_csv
from ppdm.errors import PpdmError

if TYPE_CHECKING:
    from ppdm.tree import Forest, Tree


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
@click.option(
    "--tree",
    "tree_index",
    type=click.IntRange(min=0),
    help="Of a forest or boosted model: print this tree (0 is the first) instead of one line per tree.",
)
@click.option(
    "--data",
    type=click.Path(path_type=Path),
    help="The training table (CSV): an XGBoost, LightGBM or skops model numbers its input columns, and the table names them.",
)
@click.option("--class", "--class-attribute", "class_attribute", help="With --data: the class column (default: the one column holding the model's classes).")
@csv_options
@handles_errors
def show_command(
    tree_file: Path, disclosure: str | None, max_depth: int | None, ids: bool, tree_index: int | None, data: Path | None,
    class_attribute: str | None,
) -> None:
    """Print a tree in the papers' style ("> 50K (2.0/1.0)"), with every node's id; a forest or boosted model tree by tree."""
    from ppdm.tree import Disclosure, Forest, render_tree
    from ppdm.tree.render import forest_lines

    command_options(class_attribute="--class")
    model = _read(tree_file, data, class_attribute)
    if disclosure is not None and Disclosure(disclosure) > model.disclosure:
        raise PpdmError(f"{tree_file} holds only {model.disclosure.value}; it cannot show {disclosure}")
    if isinstance(model, Forest):
        shown = model.published(disclosure)
        lines = forest_lines(shown)
        if tree_index is None:
            console.print("\n".join(lines), highlight=False, markup=False)
            return
        if tree_index >= model.n_trees:
            raise PpdmError(f"--tree {tree_index}: {tree_file} holds trees 0 to {model.n_trees - 1}")
        console.print(lines[0], highlight=False, markup=False)
        console.print(lines[1 + tree_index], highlight=False, markup=False)
        tree = shown.trees[tree_index]
    else:
        if tree_index not in (None, 0):
            raise PpdmError(f"--tree {tree_index}: {tree_file} holds one tree (tree 0)")
        tree = model
        console.print(
            f"{tree.algorithm or 'tree'} predicting {tree.class_attribute!r} ({tree.criterion or 'unknown criterion'}): "
            f"{tree.n_nodes} nodes, {tree.n_leaves} leaves, depth {tree.depth}",
            highlight=False,
        )
        tree = tree.published(disclosure)
    console.print(render_tree(tree, max_depth=max_depth, ids=ids), highlight=False, markup=False)


def _read(path: Path, data: Path | None, class_attribute: str | None) -> Tree | Forest:
    """The model in ``path`` (ppdm JSON alone; a library's file with the training table ``data``)."""
    from ppdm.tree import load_tree
    from ppdm.tree.model_files import load_model, model_kind

    kind = model_kind(path) if path.is_file() else "ppdm-tree"  # load_tree names a missing file
    if kind == "ppdm-tree":
        return load_tree(path)
    if kind != "ppdm-forest" and data is None:
        article = "an" if kind[0] in "aeiox" else "a"  # an xgboost-json model
        raise PpdmError(f"{path}: {article} {kind} model numbers its input columns: add --data TRAIN.csv (the training table) to name them")
    table = read_csv(data)[0] if data is not None and kind != "ppdm-forest" else None
    return load_model(path, table, class_attribute=class_attribute)
