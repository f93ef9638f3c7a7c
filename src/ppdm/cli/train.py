"""``ppdm train``: train a tree (ID3, C4.5, kADET or randomized-response ID3) and write it as JSON."""

from __future__ import annotations

import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.errors import PpdmError
from ppdm.files import atomic_path

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.data.hierarchy import Hierarchy
    from ppdm.data.roles import Roles

from ppdm.cli.common import (
    DISCLOSURES,
    SEED,
    FiniteRange,
    _features,
    _split_list,
    check_outputs,
    console,
    csv_options,
    handles_errors,
    main,
    read_csv,
    status,
)


def _load_training_data(
    dataset: str | None,
    data: Path | None,
    class_attribute: str | None,
    test_size: float,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame | None, Roles]:
    from ppdm.data.datasets import load_dataset

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
        frame, roles = read_csv(data, class_attribute=class_attribute)
    if not 0 <= test_size < 1:
        raise PpdmError(f"--test-size must be in [0, 1), got {test_size}")
    if test_size == 0:
        return frame, None, roles
    test = frame.sample(frac=test_size, random_state=seed)
    return frame.drop(index=test.index), test, roles


def _hierarchies(
    path: Path | None,
    dataset: str | None,
    train: pd.DataFrame,
    candidates: list[str],
    public: list[str],
) -> dict[str, Hierarchy]:
    """The hierarchies kADET generalizes with: the file's, checked against the table (paper 002
    §3.1), or for Adult without a file the bundled categorical ones."""
    from ppdm.data.hierarchy import (
        adult_hierarchies,
        check_hierarchies,
        load_hierarchies,
    )

    if path is None:
        if dataset != "adult":
            return {}
        bundled = adult_hierarchies()
        return {
            n: h for n, h in bundled.items() if n in public and h.kind == "categorical"
        }
    hierarchies = load_hierarchies(path)
    check_hierarchies(hierarchies, train[candidates], public, str(path))
    return hierarchies


def _public(quasi_identifiers: str | None, candidates: list[str]) -> list[str]:
    chosen = _split_list(quasi_identifiers, "--quasi-identifiers")
    if chosen is None:
        return candidates
    unknown = [q for q in chosen if q not in candidates]
    if unknown:
        raise PpdmError(
            f"--quasi-identifiers: {unknown[0]!r} is not an attribute the tree splits on "
            f"(those are: {', '.join(candidates)})"
        )
    return chosen


def _protection(
    k: int | None, l_diversity: float | None, theta: float | None, dataset: str | None
) -> str:
    """Which learner: 'plain' (ID3/C4.5), 'kadet' (paper 002) or 'rr' (paper 001)."""
    if theta is not None:
        if k is not None or l_diversity is not None:
            raise PpdmError(
                "--theta (randomized response) and --k/--l (kADET) are separate learners: give one"
            )
        if dataset is not None:
            raise PpdmError(
                "--theta trains on disguised records: disguise a table with `ppdm disguise` and pass it with --data"
            )
        return "rr"
    return "kadet" if k is not None or l_diversity is not None else "plain"


def _model(
    kind: str, algorithm: str, params: dict[str, Any], extra: dict[str, Any]
) -> Any:
    from ppdm.learn import (
        C45Classifier,
        ID3Classifier,
        KAnonymousTreeClassifier,
        RandomizedResponseTreeClassifier,
    )

    if kind == "rr":
        if algorithm != "id3":
            raise PpdmError(
                "--theta trains randomized-response ID3 (paper 001): use --algorithm id3"
            )
        params = {k: v for k, v in params.items() if k != "prune"}
        return RandomizedResponseTreeClassifier(**extra, **params)
    if kind == "kadet":
        params = {k: v for k, v in params.items() if k != "criterion"}
        if algorithm == "id3":
            params.pop("prune", None)
        return KAnonymousTreeClassifier(algorithm=algorithm, **extra, **params)
    if algorithm == "id3":
        params.pop("prune", None)
        return ID3Classifier(**params)
    return C45Classifier(**params)


def _missing(
    train: pd.DataFrame, test: pd.DataFrame | None, columns: list[str], drop: bool
) -> tuple[pd.DataFrame, pd.DataFrame | None, int]:
    """The splits without rows missing a value in ``columns`` (ids kept), or an error naming the
    first column with one when ``drop`` is off; also how many rows were left out."""
    missing = train[columns].isna().sum()
    if not drop:
        if missing.any():
            column = missing[missing > 0].index[0]
            raise PpdmError(
                f"column {column!r} has {int(missing[column]):,} missing value(s) in the training rows: "
                "give --drop-missing to leave those rows out"
            )
        return train, test, 0
    kept = train.dropna(subset=columns)
    dropped = len(train) - len(kept)
    if test is not None:
        before = len(test)
        test = test.dropna(subset=columns)
        dropped += before - len(test)
    if kept.empty:
        raise PpdmError("every training row has a missing value: nothing is left to train on")
    return kept, test, dropped




@main.command("train")
@click.option("--dataset", help="A bundled dataset (see `ppdm datasets`).")
@click.option(
    "--data", type=click.Path(path_type=Path), help="Your own CSV file instead."
)
@click.option(
    "--class-attribute", "--class", "class_attribute", help="Column to predict (default: the dataset's class)."
)
@click.option(
    "--attributes",
    help="Comma-separated columns to split on (default: every other column; categorical ones only for ID3).",
)
@click.option(
    "--algorithm",
    type=click.Choice(["id3", "c45"]),
    help="The grower (default: c45; id3 with --theta).",
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
    "--k",
    "k",
    type=click.IntRange(min=1),
    help="kADET (paper 002): a k-anonymous tree, every span of the public attributes holds >= k training rows.",
)
@click.option(
    "--l",
    "l_diversity",
    type=FiniteRange(min=1),
    help="kADET: entropy l-diversity of the class in every span (may go with --k).",
)
@click.option(
    "--hierarchies",
    type=click.Path(path_type=Path),
    help="kADET: generalization hierarchies (YAML/JSON, docs/hierarchies.md; Adult: the bundled ones).",
)
@click.option(
    "--quasi-identifiers",
    help="kADET: the public attributes, comma-separated (default: every attribute).",
)
@click.option(
    "--theta",
    type=FiniteRange(0, 1),
    help="Randomized-response ID3 (paper 001): --data holds records disguised with this truth probability.",
)
@click.option(
    "--disguised",
    help="With --theta: the disguised columns, comma-separated (default: all, class included).",
)
@click.option(
    "--test-size",
    type=FiniteRange(),
    default=0.2,
    show_default=True,
    help="Held-out share when the data has no test split.",
)
@click.option(
    "--seed", type=SEED, default=0, show_default=True, help="Seed of the held-out split."
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
@click.option(
    "--train-out",
    type=click.Path(path_type=Path),
    help="Write the training rows (CSV, first column 'row': their row ids) to audit the tree against.",
)
@click.option(
    "--test-out",
    type=click.Path(path_type=Path),
    help="Write the held-out rows (CSV, first column 'row': their row ids).",
)
@click.option(
    "--drop-missing",
    is_flag=True,
    help="Leave out rows with a missing value in the attributes or the class (their row ids are kept).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@csv_options
@handles_errors
def train_command(
    dataset: str | None,
    data: Path | None,
    class_attribute: str | None,
    attributes: str | None,
    algorithm: str | None,
    criterion: str | None,
    max_depth: int | None,
    min_samples_leaf: int | None,
    no_prune: bool,
    k: int | None,
    l_diversity: float | None,
    hierarchies: Path | None,
    quasi_identifiers: str | None,
    theta: float | None,
    disguised: str | None,
    test_size: float,
    seed: int,
    disclosure: str,
    out: Path,
    train_out: Path | None,
    test_out: Path | None,
    drop_missing: bool,
    quiet: bool,
) -> None:
    """Train an ID3 or C4.5 tree, a k-anonymous one (kADET) or one on disguised data, and write it as JSON."""
    check_outputs(out, train_out, test_out)
    kind = _protection(k, l_diversity, theta, dataset)
    algorithm = algorithm or ("id3" if kind == "rr" else "c45")
    if kind != "kadet" and (hierarchies or quasi_identifiers):
        raise PpdmError("--hierarchies and --quasi-identifiers are kADET options: give --k or --l")
    if kind == "kadet" and criterion:
        raise PpdmError("kADET splits by information gain (ID3) or C4.5's rule (c45): leave out --criterion")
    if kind != "rr" and disguised:
        raise PpdmError("--disguised goes with --theta (training on disguised records)")
    train, test, roles = _load_training_data(
        dataset, data, class_attribute, test_size, seed
    )
    extra: dict[str, Any] = {}
    if kind == "kadet":
        from ppdm.data.hierarchy import bin_by_hierarchies

        candidates = _features(train, roles, _split_list(attributes, "--attributes"), "c45")
        public = _public(quasi_identifiers, candidates)
        loaded = _hierarchies(hierarchies, dataset, train, candidates, public)
        train, chosen = bin_by_hierarchies(train, loaded)
        if test is not None:
            test, _ = bin_by_hierarchies(test, loaded)
        features = _features(train, roles, _split_list(attributes, "--attributes"), algorithm)
        extra = {
            "k": k or 1,
            "l_diversity": l_diversity,
            "hierarchies": chosen,
            "quasi_identifiers": [q for q in public if q in features],
        }
    else:
        features = _features(train, roles, _split_list(attributes, "--attributes"), algorithm)
    if kind == "rr":
        columns = _split_list(disguised, "--disguised")
        extra = {
            "theta": theta,
            "disguised": None if columns is None else [c for c in columns if c in features],
            "class_disguised": columns is None or roles.class_attribute in columns,
        }
    train, test, dropped = _missing(train, test, [*features, roles.class_attribute], drop_missing)
    params: dict[str, Any] = {"max_depth": max_depth, "prune": not no_prune}
    if criterion:
        params["criterion"] = criterion
    if min_samples_leaf:
        params["min_samples_leaf"] = min_samples_leaf
    model = _model(kind, algorithm, params, extra)
    y = train[roles.class_attribute]
    if y.nunique(dropna=True) < 2:
        held = y.dropna().unique()
        value = f" ({held[0]!r})" if len(held) else ""
        raise PpdmError(f"the class column {roles.class_attribute!r} holds one value{value} in the training rows: there is nothing to learn")
    started = time.perf_counter()
    with status(f"training {algorithm} on {len(train):,} rows", quiet):
        model.fit(train[features], y)
    seconds = time.perf_counter() - started
    model.tree_.class_attribute = roles.class_attribute
    save_tree_and_split(model, out, disclosure, train_out, test_out, train, test)
    if quiet:
        return
    _print_training(model, kind, algorithm, train, test, features, roles.class_attribute, seconds, extra)
    if dropped:
        console.print(f"  left out {dropped:,} rows with missing values (--drop-missing)")
    console.print(f"  wrote {out} (disclosure: {disclosure})")
    for path in (train_out, test_out):
        if path is not None:
            console.print(f"  wrote {path} (its 'row' column holds the row ids: read it with --row-ids row)")


def save_tree_and_split(
    model: Any,
    out: Path,
    disclosure: str,
    train_out: Path | None,
    test_out: Path | None,
    train: pd.DataFrame,
    test: pd.DataFrame | None,
) -> None:
    """Write the tree and the rows it was trained and tested on, as it saw them, with their
    original row ids (column ``row``: the data row in the input file from 0, or the input's
    --row-ids). All or nothing: every file goes to a temporary beside it first, and they are
    renamed only once all are whole (a failing split leaves no new tree beside old rows)."""
    import json

    from ppdm.tree.io import tree_to_dict

    if test_out is not None and test is None:
        raise PpdmError("--test-out: there is no held-out split (--test-size 0)")
    text = json.dumps(tree_to_dict(model.tree_, disclosure), indent=1, allow_nan=False) + "\n"
    with ExitStack() as stack:
        stack.enter_context(atomic_path(out)).write_text(text, encoding="utf-8")
        for path, frame in ((train_out, train), (test_out, test)):
            if path is not None and frame is not None:
                frame.to_csv(stack.enter_context(atomic_path(path)), index=True, index_label="row")


def _print_training(
    model: Any,
    kind: str,
    algorithm: str,
    train: pd.DataFrame,
    test: pd.DataFrame | None,
    features: list[str],
    cls: str,
    seconds: float,
    extra: dict[str, Any],
) -> None:
    tree = model.tree_
    name = {"plain": algorithm.upper(), "kadet": f"kADET-{algorithm.upper()}", "rr": "randomized-response ID3"}[kind]
    console.print(f"{name} on {len(train):,} rows × {len(features)} attributes in {seconds:.2f} s")
    console.print(
        f"  {tree.n_nodes} nodes, {tree.n_leaves} leaves, depth {tree.depth}, criterion {tree.criterion}"
    )
    if kind == "kadet":
        ell = f", class entropy l-diversity {model.l_diversity_:.3f}" if extra["l_diversity"] else ""
        console.print(
            f"  smallest span: {model.anonymity_:,} rows (asked k = {extra['k']}){ell}; "
            f"{model.exposed_share_:.1%} of the rows in class-homogeneous spans",
            highlight=False,
        )
    if kind == "rr":
        _print_rr_accuracy(model, test, features, cls, extra)
        return
    console.print(f"  training accuracy {_accuracy(model, train, features, cls):.4f}")
    if test is not None:
        console.print(
            f"  test accuracy     {_accuracy(model, test, features, cls):.4f} ({len(test):,} rows)"
        )


def _accuracy(model: Any, frame: pd.DataFrame, features: list[str], cls: str) -> float:
    """Share of rows predicted right, comparing values as they are (an integer class included)."""
    import numpy as np

    predicted = np.asarray(model.predict(frame[features]), dtype=object)
    return float(np.mean(predicted == frame[cls].to_numpy(dtype=object)))


def _print_rr_accuracy(
    model: Any, test: pd.DataFrame | None, features: list[str], cls: str, extra: dict[str, Any]
) -> None:
    """Paper 001 §4.3: the true accuracy estimated from the disguised held-out rows."""
    from ppdm.randomize import estimate_accuracy

    console.print(f"  truth probability θ = {extra['theta']:g}; counts estimated (noise factor {model.noise_factor_:.2f})")
    if test is None:
        return
    columns = extra["disguised"] if extra["disguised"] is not None else features
    if extra["class_disguised"]:
        columns = [*columns, cls]
    estimate = estimate_accuracy(model.tree_, test[[*features, cls]], extra["theta"], columns=columns)
    console.print(
        f"  estimated test accuracy {estimate:.4f} on the true records, from {len(test):,} disguised held-out rows (paper 001 §4.3)",
        highlight=False,
    )
