"""``ppdm train``: train a tree and write it as JSON."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.errors import PpdmError

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.data.roles import Roles

from ppdm.cli.common import (
    DISCLOSURES,
    _features,
    _split_list,
    check_outputs,
    console,
    handles_errors,
    main,
    status,
)


def _load_training_data(
    dataset: str | None,
    data: Path | None,
    class_attribute: str | None,
    test_size: float,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame | None, Roles]:
    from ppdm.data.datasets import load_csv, load_dataset

    if (dataset is None) == (data is None):
        raise PpdmError("give exactly one of --dataset NAME or --data FILE.csv")
    if dataset is not None:
        kwargs = {"class_attribute": class_attribute} if class_attribute else {}
        frame, roles = load_dataset(dataset, **kwargs)
        if dataset == "adult":
            test, _ = load_dataset("adult", split="test", **kwargs)
            return frame, test, roles
    else:
        if class_attribute is None:
            raise PpdmError(
                "--data needs --class-attribute COLUMN (the column to predict)"
            )
        frame, roles = load_csv(data, class_attribute=class_attribute)
    if not 0 <= test_size < 1:
        raise PpdmError(f"--test-size must be in [0, 1), got {test_size}")
    if test_size == 0:
        return frame, None, roles
    test = frame.sample(frac=test_size, random_state=seed)
    return frame.drop(index=test.index), test, roles


@main.command("train")
@click.option("--dataset", help="A bundled dataset (see `ppdm datasets`).")
@click.option(
    "--data", type=click.Path(path_type=Path), help="Your own CSV file instead."
)
@click.option(
    "--class-attribute", help="Column to predict (default: the dataset's class)."
)
@click.option(
    "--attributes",
    help="Comma-separated columns to split on (default: every other column; categorical ones only for ID3).",
)
@click.option(
    "--algorithm", type=click.Choice(["id3", "c45"]), default="c45", show_default=True
)
@click.option(
    "--criterion",
    type=click.Choice(["entropy", "gini", "gain_ratio"]),
    help="Split criterion (default: entropy for ID3, gain_ratio for C4.5).",
)
@click.option(
    "--max-depth", type=click.IntRange(min=0), help="Stop splitting at this depth."
)
@click.option(
    "--min-samples-leaf",
    type=click.IntRange(min=1),
    help="At least two branches must hold this many rows.",
)
@click.option("--no-prune", is_flag=True, help="C4.5: skip error-based pruning.")
@click.option(
    "--test-size",
    type=float,
    default=0.2,
    show_default=True,
    help="Held-out share when the data has no test split.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the held-out split."
)
@click.option(
    "--disclosure",
    type=click.Choice(DISCLOSURES),
    default="class-counts",
    show_default=True,
    help="What the written tree reveals.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Where to write the tree (JSON).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@handles_errors
def train_command(
    dataset: str | None,
    data: Path | None,
    class_attribute: str | None,
    attributes: str | None,
    algorithm: str,
    criterion: str | None,
    max_depth: int | None,
    min_samples_leaf: int | None,
    no_prune: bool,
    test_size: float,
    seed: int,
    disclosure: str,
    out: Path,
    quiet: bool,
) -> None:
    """Train an ID3 or C4.5 tree and write it as JSON."""
    check_outputs(out)
    from ppdm.learn import C45Classifier, ID3Classifier
    from ppdm.tree import save_tree

    train, test, roles = _load_training_data(
        dataset, data, class_attribute, test_size, seed
    )
    features = _features(train, roles, _split_list(attributes), algorithm)
    params: dict[str, Any] = {"max_depth": max_depth}
    if criterion:
        params["criterion"] = criterion
    if min_samples_leaf:
        params["min_samples_leaf"] = min_samples_leaf
    model = (
        ID3Classifier(**params)
        if algorithm == "id3"
        else C45Classifier(prune=not no_prune, **params)
    )
    y = train[roles.class_attribute]
    started = time.perf_counter()
    with status(f"training {algorithm} on {len(train):,} rows", quiet):
        model.fit(train[features], y)
    seconds = time.perf_counter() - started
    model.tree_.class_attribute = roles.class_attribute
    save_tree(model.tree_, out, disclosure=disclosure)
    if quiet:
        return
    tree = model.tree_
    console.print(
        f"{algorithm.upper()} on {len(train):,} rows × {len(features)} attributes in {seconds:.2f} s"
    )
    console.print(
        f"  {tree.n_nodes} nodes, {tree.n_leaves} leaves, depth {tree.depth}, criterion {tree.criterion}"
    )
    console.print(f"  training accuracy {model.score(train[features], y):.4f}")
    if test is not None:
        console.print(
            f"  test accuracy     {model.score(test[features], test[roles.class_attribute]):.4f} ({len(test):,} rows)"
        )
    console.print(f"  wrote {out} (disclosure: {disclosure})")
