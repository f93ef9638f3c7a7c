"""``ppdm audit``: the maximum-entropy audit of a published tree under a threat model."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.errors import PpdmError

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.attacks import AttackResult
    from ppdm.tree import Forest, Tree

from ppdm.cli.common import (
    DISCLOSURES,
    _features,
    _known_columns,
    _print_disclosure,
    _print_riskiest,
    _split_list,
    check_outputs,
    console,
    handles_errors,
    main,
    status,
)


def _train_for_audit(
    dataset: str,
    sensitive: str,
    class_attribute: str | None,
    algorithm: str,
    criterion: str | None,
    max_depth: int | None,
    quiet: bool,
) -> tuple[Tree, pd.DataFrame, list[str]]:
    """Train the tree a publisher would publish: by default the sensitive attribute is the class
    (paper 000 §3); ``class_attribute`` trains another class, the sensitive column then an input."""
    from ppdm.data.datasets import load_dataset
    from ppdm.learn import C45Classifier, ID3Classifier

    target = class_attribute or sensitive
    frame, roles = load_dataset(dataset, sensitive=sensitive, class_attribute=target)
    features = _features(frame, roles, None, algorithm)
    params: dict[str, Any] = {"max_depth": max_depth}
    if criterion:
        params["criterion"] = criterion
    model = ID3Classifier(**params) if algorithm == "id3" else C45Classifier(**params)
    with status(f"training {algorithm} on {len(frame):,} rows", quiet):
        model.fit(frame[_known_columns(frame, features)], frame[target])
    model.tree_.class_attribute = target
    return model.tree_, frame, [f for f in features if f != sensitive]


def _print_audit(result: AttackResult, top: int) -> None:
    d = result.details
    s = result.summary()
    console.print(d.get("threat_model", ""), highlight=False)
    dropped = (
        f" ({d['dropped_rows']:,} rows with missing values left out)"
        if d.get("dropped_rows")
        else ""
    )
    console.print(
        f"maximum-entropy audit of {result.sensitive!r} over {s['records']:,} records in {s['qi_groups']:,} groups "
        f"of known values{dropped}; unknowns: {d.get('unknowns', '')}",
        highlight=False,
    )
    rows = ", ".join(f"{k} {v:,}" for k, v in d["constraint_rows"].items()) or "none"  # type: ignore[union-attr]
    console.print(
        f"  constraints: {rows}; solved in {d['solver_seconds']:.2f} s ({d['status']}), largest violation {d['max_violation']:.1e}"
    )
    if "note" in d:
        from rich.text import Text

        console.print(Text.assemble("  ", ("note:", "yellow"), f" {d['note']}"))
    _print_disclosure(d, s)
    _print_riskiest(result, top)


@main.command("audit")
@click.option("--dataset", help="A bundled dataset: train a tree on it and audit it.")
@click.option(
    "--tree",
    "tree_file",
    type=click.Path(path_type=Path),
    help="Audit this published tree (JSON) instead.",
)
@click.option(
    "--model",
    "model_file",
    type=click.Path(path_type=Path),
    help="Audit this published model: a ppdm tree or forest JSON, an XGBoost JSON or a LightGBM text model file "
    "(the format is detected; pickles are never read).",
)
@click.option(
    "--data",
    type=click.Path(path_type=Path),
    help="With --tree or --model: the training records (CSV, in the order the model was fitted on); the sensitive "
    "column, when present, measures the attack.",
)
@click.option(
    "--sensitive",
    help="The sensitive column: the tree's class or any input (default: from --threat, else the class).",
)
@click.option(
    "--known",
    "known",
    help="Comma-separated columns the attacker knows (list the class to make it known).",
)
@click.option(
    "--quasi-identifiers", "known_alias", help="Same as --known.", hidden=True
)
@click.option(
    "--class-known", is_flag=True, help="The attacker also knows each record's class."
)
@click.option(
    "--preset",
    type=click.Choice(["census", "insider", "paper", "nothing"]),
    help="A named attacker (see docs/threat_models.md); --known overrides it.",
)
@click.option(
    "--threat",
    "threat_file",
    type=click.Path(path_type=Path),
    help="The threat model as a YAML file; the flags above override its keys.",
)
@click.option(
    "--known-individuals",
    help="Comma-separated rows (0 = first data row) whose full records the attacker has.",
)
@click.option(
    "--class",
    "class_attribute",
    help="With --dataset: the class the trained tree predicts (default: the sensitive column); with an XGBoost or "
    "LightGBM --model: the class column of --data.",
)
@click.option(
    "--algorithm",
    type=click.Choice(["id3", "c45"]),
    default="id3",
    show_default=True,
    help="With --dataset: the learner.",
)
@click.option(
    "--criterion",
    type=click.Choice(["entropy", "gini", "gain_ratio"]),
    help="With --dataset: the split criterion.",
)
@click.option(
    "--max-depth",
    type=click.IntRange(min=0),
    help="With --dataset: stop splitting at this depth.",
)
@click.option(
    "--publish",
    type=click.Choice(DISCLOSURES),
    help="Audit less than the tree holds (default: what the file holds; error-rates with --dataset).",
)
@click.option(
    "--sa/--no-sa",
    "sa_published",
    default=None,
    help="Whether the sensitive column's distribution is known (default: yes for an input, no for the class).",
)
@click.option(
    "--missing",
    type=click.Choice(["error", "drop", "as-value"]),
    default="error",
    show_default=True,
    help="Missing values in the columns the audit reads.",
)
@click.option("--no-label", is_flag=True, help="Ignore the label constraints.")
@click.option(
    "--internal",
    is_flag=True,
    help="Use the split choices too (internal-node constraints; nonconvex: a local optimum).",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0),
    help="With --internal: stop the solver after this many seconds with its best feasible estimate.",
)
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write every group's posterior and the summary as JSON.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@handles_errors
def audit_command(
    dataset: str | None,
    tree_file: Path | None,
    model_file: Path | None,
    data: Path | None,
    sensitive: str | None,
    known: str | None,
    known_alias: str | None,
    class_known: bool,
    preset: str | None,
    threat_file: Path | None,
    known_individuals: str | None,
    class_attribute: str | None,
    algorithm: str,
    criterion: str | None,
    max_depth: int | None,
    publish: str | None,
    sa_published: bool | None,
    missing: str,
    no_label: bool,
    internal: bool,
    time_limit: float | None,
    top: int,
    out: Path | None,
    quiet: bool,
) -> None:
    """What an attacker infers about everyone's sensitive value from a published tree or forest (maximum entropy)."""
    check_outputs(out)
    from ppdm.attacks.maxent import maxent_attack
    from ppdm.errors import UninformativeKnowledgeWarning
    from ppdm.maxent.tree_constraints import Knowledge

    threat = _threat_from_options(
        threat_file,
        sensitive,
        known or known_alias,
        preset,
        publish,
        sa_published,
        known_individuals,
    )
    if tree_file is not None and model_file is not None:
        raise PpdmError("give --tree or --model (the same option for a model file), not both")
    what = "tree" if tree_file is not None else "model"
    tree_file = tree_file or model_file
    if dataset is not None:
        if tree_file is not None or data is not None:
            raise PpdmError(
                "give either --dataset (train and audit) or --tree/--model with --data, not both"
            )
        if threat.sensitive is None:
            raise PpdmError("--dataset needs --sensitive (or a threat file naming it)")
        tree, table, features = _train_for_audit(
            dataset,
            threat.sensitive,
            class_attribute,
            algorithm,
            criterion,
            max_depth,
            quiet,
        )
        threat = _default_known(threat, features)
        if threat.publish is None:
            threat = replace(threat, publish="error-rates")
    else:
        if tree_file is None or data is None:
            raise PpdmError(
                "give --dataset NAME, or --model MODEL (--tree TREE.json) with --data TABLE.csv"
            )
        tree, table = _model_and_table(tree_file, data, class_attribute, quiet, what)
    if class_known:
        threat = _with_class_known(threat, tree, table)
    table, dropped = _missing(table, tree, threat, missing)
    knowledge = Knowledge(rate=True, label=not no_label, internal=internal)
    with _tree_progress(tree, quiet) as progress, status("solving the maximum-entropy problem", quiet or progress is not None):
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", UninformativeKnowledgeWarning
            )  # printed with the summary
            result = maxent_attack(
                tree, table, knowledge=knowledge, time_limit=time_limit, threat=threat, progress=progress
            )
    if dropped:
        result.details["dropped_rows"] = dropped
    if not quiet:
        _print_audit(result, top)
    if out is not None:
        result.save(out)
        if not quiet:
            console.print(f"wrote {out}")


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


def _with_class_known(threat: Any, tree: Tree | Forest, table: pd.DataFrame) -> Any:
    resolved = threat.resolve(table, tree.class_attribute)
    if tree.class_attribute == resolved.sensitive:
        raise PpdmError(
            f"--class-known: the class {tree.class_attribute!r} is the sensitive column"
        )
    return replace(threat, known=(*resolved.known, tree.class_attribute), preset=None)


def _model_and_table(model_file: Path, data: Path, class_attribute: str | None, quiet: bool, what: str = "model") -> tuple[Any, pd.DataFrame]:
    """The published model (a :class:`Tree` or :class:`Forest`, by the file's format) and the table."""
    from ppdm.data.datasets import load_csv

    if model_file.is_dir():  # named before the table is read
        raise PpdmError(f"{model_file}: is a directory, not a {what} file")
    table = load_csv(data)[0]
    with status(f"reading {model_file}", quiet):
        return read_model(model_file, table, class_attribute), table


def read_model(path: Path, table: pd.DataFrame, class_attribute: str | None) -> Any:
    """A ppdm tree or forest JSON, an XGBoost JSON model or a LightGBM text model, detected from
    the file's content; the libraries' files are traced to ``table``'s columns (the class column
    ``class_attribute``)."""
    import json

    from ppdm.tree import forest_from_lightgbm, forest_from_xgboost, load_forest, load_tree

    if path.is_dir():
        raise PpdmError(f"{path}: is a directory, not a model file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PpdmError(f"{path}: no such model file") from None
    except UnicodeDecodeError:
        raise PpdmError(f"{path}: not a text model file (ppdm reads JSON and LightGBM text models, never pickles)") from None
    head = text.lstrip()[:1]
    if head == "{":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PpdmError(f"{path} line {exc.lineno}: not valid JSON") from None
        kind = doc.get("format") if isinstance(doc, dict) else None
        if kind == "ppdm-tree":
            return load_tree(path)
        if kind == "ppdm-forest":
            return load_forest(path)
        if isinstance(doc, dict) and "learner" in doc:
            X, y = _features_and_class(path, table, class_attribute)
            return forest_from_xgboost(doc, X, y=y)
        raise PpdmError(f"{path}: a JSON file but not a ppdm tree or forest nor an XGBoost model (no 'format' or 'learner' key)")
    if text.startswith("tree\n") or "\nTree=0\n" in text:
        X, y = _features_and_class(path, table, class_attribute)
        return forest_from_lightgbm(text, X, y=y)
    raise PpdmError(f"{path}: not a model file ppdm reads (ppdm tree or forest JSON, XGBoost JSON, LightGBM text)")


def _features_and_class(path: Path, table: pd.DataFrame, class_attribute: str | None) -> tuple[pd.DataFrame, pd.Series]:
    if class_attribute is None:
        raise PpdmError(f"{path}: an XGBoost or LightGBM model does not name its class column: give it with --class")
    if class_attribute not in table.columns:
        raise PpdmError(f"--class {class_attribute!r} is not a column of --data")
    return table.drop(columns=[class_attribute]), table[class_attribute]


@contextmanager
def _tree_progress(model: Any, quiet: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar over a forest's trees while their rows are built (a terminal only, not under --quiet)."""
    from ppdm.tree.forest import Forest

    if quiet or not console.is_terminal or not isinstance(model, Forest):
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    real = console._console if isinstance(console._console, Console) else Console(**console._settings)  # the lazy console's own
    with Progress(console=real, transient=True) as bar:
        task = bar.add_task("building each tree's rows", total=model.n_trees)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance


def _missing(
    table: pd.DataFrame, tree: Tree | Forest, threat: Any, policy: str
) -> tuple[pd.DataFrame, int]:
    """The table with the missing values of the columns the audit reads dealt with by ``policy``."""
    from ppdm.data.missing import handle_missing

    resolved = threat.resolve(table, tree.class_attribute)
    trees = getattr(tree, "trees", [tree])  # a forest: every tree's splits
    split = [n.split.attribute for t in trees for n in t.nodes if n.split is not None]
    columns = [*resolved.known, resolved.sensitive, tree.class_attribute, *split]
    return handle_missing(table, columns, policy)  # type: ignore[arg-type]
