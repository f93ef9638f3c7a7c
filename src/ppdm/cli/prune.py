"""``ppdm prune``: prune a published tree against uniqueness and homogeneity attacks (paper 003 §4.1)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ppdm.errors import PpdmError

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.tree import Tree

from ppdm.cli.common import DISCLOSURES, FiniteRange, check_outputs, console, csv_options, handles_errors, main, read_csv

METHODS = {"1": "remove leaves with n <= s (Method 1)", "2": "make a node with a child of n <= s a leaf (Method 2)"}


def _accuracy(tree: Tree, frame: pd.DataFrame, where: Path) -> float:
    import numpy as np

    cls = tree.class_attribute
    if cls not in frame.columns:
        raise PpdmError(f"{where}: no column {cls!r} (the tree's class) to measure accuracy on")
    known = frame[cls].notna().to_numpy()
    predicted = np.asarray(tree.predict(frame.loc[known]), dtype=object)
    return float(np.mean(predicted == frame.loc[known, cls].to_numpy(dtype=object)))


@main.command("prune")
@click.option("--tree", "tree_file", type=click.Path(path_type=Path), required=True, help="The tree to prune (JSON with class counts).")
@click.option("--method", type=click.Choice(sorted(METHODS)), required=True, help="1: remove small leaves; 2: collapse nodes with a small child.")
@click.option("--s", "s", type=FiniteRange(min=0), required=True, help="Size threshold: a leaf (child) with at most s records is small (s = k - 1).")
@click.option("--data", type=click.Path(path_type=Path), help="Rows with the class (CSV) to measure the accuracy before and after.")
@click.option(
    "--disclosure",
    type=click.Choice(DISCLOSURES),
    help="What the written tree reveals (default: what the input holds).",
)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Where to write the pruned tree (JSON).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@csv_options
@handles_errors
def prune_command(
    tree_file: Path,
    method: str,
    s: float,
    data: Path | None,
    disclosure: str | None,
    out: Path,
    quiet: bool,
) -> None:
    """Prune a tree so that no published leaf holds s or fewer records (paper 003 §4.1, Methods 1 and 2)."""
    check_outputs(out)
    from ppdm.defend import collapse_small_children, remove_small_leaves
    from ppdm.tree import load_tree, save_tree

    tree = load_tree(tree_file)
    pruned = (remove_small_leaves if method == "1" else collapse_small_children)(tree, s)
    frame = read_csv(data)[0] if data is not None else None
    save_tree(pruned, out, disclosure=disclosure or tree.disclosure)
    if quiet:
        return
    console.print(f"{METHODS[method]} with s = {s:g}", highlight=False)
    console.print(
        f"  {tree.n_leaves} leaves, depth {tree.depth} → {pruned.n_leaves} leaves, depth {pruned.depth}",
        highlight=False,
    )
    if frame is not None:
        before, after = _accuracy(tree, frame, data), _accuracy(pruned, frame, data)  # type: ignore[arg-type]
        console.print(f"  accuracy on {data}: {before:.4f} → {after:.4f}", highlight=False)
    console.print(f"  wrote {out}")
