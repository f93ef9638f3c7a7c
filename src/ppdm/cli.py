"""The ``ppdm`` command: a thin layer that parses arguments, calls the library and prints.

Every :class:`~ppdm.errors.PpdmError` (and a missing or unreadable file) ends the command with a
one-line ``error: ...`` on standard error and exit status 2, never a traceback. Error texts and
data are printed literally (no console markup), so ``[1, 2]`` in a message stays ``[1, 2]``.

The module imports only click and the standard library at start, so ``ppdm --help`` answers at
once; each command imports the parts of the library (numpy, pandas, scipy and scikit-learn take
seconds to load) and of rich that it uses.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.errors import PpdmError

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from ppdm.attacks import AttackResult
    from ppdm.data.roles import Roles
    from ppdm.tree import Tree


class LazyConsole:
    """A rich ``Console`` made on first use: ``ppdm --help`` never loads rich."""

    def __init__(self, **settings: Any) -> None:
        self._settings = settings
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._settings)
        return getattr(self._console, name)


console = LazyConsole(soft_wrap=True, markup=False)
errors = LazyConsole(stderr=True, markup=False)

DISCLOSURES = ("labels", "error-rates", "class-counts")
"""The values of :class:`ppdm.tree.Disclosure`, least revealing first (spelled out here so that
building the options does not import the library; a test keeps the two equal)."""


def _fail(message: str) -> None:
    from rich.text import Text

    errors.print(Text.assemble(("error:", "bold red"), " ", message), highlight=False, soft_wrap=True)
    sys.exit(2)


def handles_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one line and exit status 2."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PpdmError as exc:
            _fail(str(exc))
        except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
            _fail(f"{exc.strerror}: {exc.filename}")

    return wrapper


def check_outputs(*paths: Path | None) -> None:
    """Refuse, before any work, an output file that cannot be written (its folder is missing)."""
    for path in paths:
        if path is None:
            continue
        folder = path.parent
        if path.is_dir():
            raise PpdmError(f"{path}: is a directory; give a file name to write")
        if not folder.is_dir():
            what = "is not a directory" if folder.exists() else "does not exist"
            raise PpdmError(f"{path}: cannot write it, the directory {folder} {what}")
        if not os.access(folder, os.W_OK):
            raise PpdmError(f"{path}: cannot write it, the directory {folder} is not writable")


@contextmanager
def status(message: str, quiet: bool) -> Iterator[None]:
    """A spinner on a terminal; nothing under --quiet or when output is not a TTY."""
    if quiet or not console.is_terminal:
        yield
        return
    with console.status(message):
        yield


class OneLineHelpCommand(click.Command):
    """A command whose whole first docstring paragraph is its line in ``ppdm --help`` (click cuts
    it at about 45 characters otherwise)."""

    def get_short_help_str(self, limit: int = 45) -> str:
        if self.short_help:
            return super().get_short_help_str(limit)
        return " ".join((self.help or "").split("\n\n")[0].split())


class CommandGroup(click.Group):
    command_class = OneLineHelpCommand


@click.group(cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120})
@click.version_option(package_name="ppdm")
def main() -> None:
    """ppdm: what does a published decision tree disclose, and how to publish one that discloses less."""


# -- datasets ----------------------------------------------------------------------------------
@main.command("datasets")
def datasets_command() -> None:
    """List the bundled datasets, with their licenses and citations."""
    from rich.table import Table

    from ppdm.data.datasets import DATASETS

    table = Table(title="Bundled datasets")
    for col in ("name", "rows", "columns", "license", "citation"):
        table.add_column(col)
    for info in DATASETS.values():
        table.add_row(info.name, f"{info.rows:,}", str(info.columns), info.license, f"{info.citation} {info.doi}")
    console.print(table)
    console.print("Bank Personal Loan data (no stated license) is not bundled: use load_bank_loan(path) or --data.")


# -- train -------------------------------------------------------------------------------------
def _split_list(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _load_training_data(
    dataset: str | None, data: Path | None, class_attribute: str | None, test_size: float, seed: int
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
            raise PpdmError("--data needs --class-attribute COLUMN (the column to predict)")
        frame, roles = load_csv(data, class_attribute=class_attribute)
    if not 0 <= test_size < 1:
        raise PpdmError(f"--test-size must be in [0, 1), got {test_size}")
    if test_size == 0:
        return frame, None, roles
    test = frame.sample(frac=test_size, random_state=seed)
    return frame.drop(index=test.index), test, roles


def _features(frame: pd.DataFrame, roles: Roles, attributes: list[str] | None, algorithm: str) -> list[str]:
    import pandas as pd

    if attributes is not None:
        unknown = [a for a in attributes if a not in frame.columns]
        if unknown:
            raise PpdmError(f"unknown column {unknown[0]!r} in --attributes (the table has: {', '.join(frame.columns)})")
        if roles.class_attribute in attributes:
            raise PpdmError(f"--attributes cannot include the class attribute {roles.class_attribute!r}")
        return attributes
    features = roles.features(frame)
    if algorithm == "id3":
        features = [c for c in features if isinstance(frame[c].dtype, pd.CategoricalDtype)]
        if not features:
            raise PpdmError("ID3 splits categorical attributes only and the table has none: use --algorithm c45")
    return features


@main.command("train")
@click.option("--dataset", help="A bundled dataset (see `ppdm datasets`).")
@click.option("--data", type=click.Path(path_type=Path), help="Your own CSV file instead.")
@click.option("--class-attribute", help="Column to predict (default: the dataset's class).")
@click.option("--attributes", help="Comma-separated columns to split on (default: every other column; categorical ones only for ID3).")
@click.option("--algorithm", type=click.Choice(["id3", "c45"]), default="c45", show_default=True)
@click.option("--criterion", type=click.Choice(["entropy", "gini", "gain_ratio"]), help="Split criterion (default: entropy for ID3, gain_ratio for C4.5).")
@click.option("--max-depth", type=click.IntRange(min=0), help="Stop splitting at this depth.")
@click.option("--min-samples-leaf", type=click.IntRange(min=1), help="At least two branches must hold this many rows.")
@click.option("--no-prune", is_flag=True, help="C4.5: skip error-based pruning.")
@click.option("--test-size", type=float, default=0.2, show_default=True, help="Held-out share when the data has no test split.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the held-out split.")
@click.option("--disclosure", type=click.Choice(DISCLOSURES), default="class-counts", show_default=True, help="What the written tree reveals.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Where to write the tree (JSON).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@handles_errors
def train_command(
    dataset: str | None, data: Path | None, class_attribute: str | None, attributes: str | None,
    algorithm: str, criterion: str | None, max_depth: int | None, min_samples_leaf: int | None,
    no_prune: bool, test_size: float, seed: int, disclosure: str, out: Path, quiet: bool,
) -> None:
    """Train an ID3 or C4.5 tree and write it as JSON."""
    check_outputs(out)
    from ppdm.learn import C45Classifier, ID3Classifier
    from ppdm.tree import save_tree

    train, test, roles = _load_training_data(dataset, data, class_attribute, test_size, seed)
    features = _features(train, roles, _split_list(attributes), algorithm)
    params: dict[str, Any] = {"max_depth": max_depth}
    if criterion:
        params["criterion"] = criterion
    if min_samples_leaf:
        params["min_samples_leaf"] = min_samples_leaf
    model = ID3Classifier(**params) if algorithm == "id3" else C45Classifier(prune=not no_prune, **params)
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
    console.print(f"{algorithm.upper()} on {len(train):,} rows × {len(features)} attributes in {seconds:.2f} s")
    console.print(f"  {tree.n_nodes} nodes, {tree.n_leaves} leaves, depth {tree.depth}, criterion {tree.criterion}")
    console.print(f"  training accuracy {model.score(train[features], y):.4f}")
    if test is not None:
        console.print(f"  test accuracy     {model.score(test[features], test[roles.class_attribute]):.4f} ({len(test):,} rows)")
    console.print(f"  wrote {out} (disclosure: {disclosure})")


# -- show --------------------------------------------------------------------------------------
@main.command("show")
@click.argument("tree_file", type=click.Path(path_type=Path))
@click.option("--disclosure", type=click.Choice(DISCLOSURES), help="Show only what this level reveals (default: what the file holds).")
@click.option("--max-depth", type=click.IntRange(min=1), help="Abbreviate below this depth.")
@handles_errors
def show_command(tree_file: Path, disclosure: str | None, max_depth: int | None) -> None:
    """Print a tree in the papers' style ("> 50K (2.0/1.0)")."""
    from ppdm.tree import Disclosure, load_tree, render_tree

    tree = load_tree(tree_file)
    if disclosure is not None and _rank(Disclosure(disclosure)) > _rank(tree.disclosure):
        raise PpdmError(f"{tree_file} holds only {tree.disclosure.value}; it cannot show {disclosure}")
    console.print(
        f"{tree.algorithm or 'tree'} predicting {tree.class_attribute!r} ({tree.criterion or 'unknown criterion'}): "
        f"{tree.n_nodes} nodes, {tree.n_leaves} leaves, depth {tree.depth}",
        highlight=False,
    )
    console.print(render_tree(tree, disclosure=disclosure, max_depth=max_depth), highlight=False, markup=False)


# -- attack ------------------------------------------------------------------------------------
ATTACKS = ("homogeneity", "uniqueness", "background")


def _attacker_table(dataset: str | None, data: Path | None) -> pd.DataFrame:
    from ppdm.data.datasets import load_csv, load_dataset

    if (dataset is None) == (data is None):
        raise PpdmError("give exactly one of --dataset NAME or --data FILE.csv (the attacker's table)")
    if dataset is not None:
        return load_dataset(dataset)[0]
    return load_csv(data)[0]  # type: ignore[arg-type]


def _known_rows(table: pd.DataFrame, known: Path) -> pd.DataFrame:
    """Rows of ``table`` equal to the rows of the CSV ``known`` (on the columns both have)."""
    from ppdm.data.datasets import load_csv

    people = load_csv(known)[0]
    shared = [c for c in people.columns if c in table.columns]
    if not shared:
        raise PpdmError(f"{known}: none of its columns is in the attacker's table")
    left = table[shared].astype(str).reset_index()
    right = people[shared].astype(str).drop_duplicates()
    matched = left.merge(right, on=shared, how="inner")["index"]
    missing = len(right) - len(right.merge(left[shared].drop_duplicates(), on=shared))
    if missing:
        raise PpdmError(f"{known}: {missing} known individual(s) match no row of the attacker's table")
    return table.loc[matched.unique()]


def _print_riskiest(result: AttackResult, top: int) -> None:
    if not top:
        return
    console.print(f"riskiest QI groups (top {top}):")
    qi = list(result.groups.quasi_identifiers)
    for i, row in enumerate(result.riskiest_groups(top).itertuples(index=False), start=1):
        values = ", ".join(f"{name}={value}" for name, value in zip(qi, row))
        console.print(
            f"  {i}. {values} → {row.guess} (confidence {row.confidence:.2f}, "
            f"{row.records} record{'s' if row.records != 1 else ''}, {row.provenance})",
            highlight=False, markup=False,
        )


def _print_result(result: AttackResult, top: int) -> None:
    from rich.table import Table

    table = Table(title=f"{result.attack} attack on {result.sensitive!r}", show_header=False)
    summary = result.summary()
    for key, value in summary.items():
        if key in ("attack", "sensitive") or key in BASELINE_KEYS or isinstance(value, (dict, list)):
            continue
        if isinstance(value, float):
            value = f"{value:.4f}" if not value.is_integer() else f"{int(value):,}"
        elif isinstance(value, int):
            value = f"{value:,}"
        table.add_row(key.replace("_", " "), str(value))
    console.print(table)
    _print_against_baseline(summary)
    _print_riskiest(result, top)


BASELINE_KEYS = (
    "attacker_accuracy", "attacker_accuracy_ci95", "baseline", "lift", "mean_confidence_in_true_value",
    "certain_right", "certain_wrong", "confidence_in_true_value", "prior_alone", "beyond_prior",
)


def _print_against_baseline(summary: dict) -> None:
    """The attack's accuracy and exposure next to what the prior alone gives."""
    certain = summary["certain_records"]
    if "baseline" not in summary:
        console.print(f"  people the attacker is certain about: {certain:,} (true values unknown: accuracy not measured)", highlight=False)
        return
    base, lift = summary["baseline"], summary["lift"]
    lo, hi = summary["attacker_accuracy_ci95"]
    ratio = f", x{lift['ratio']:.2f}" if lift["ratio"] is not None else ""
    console.print(
        f"  attacker accuracy {summary['attacker_accuracy']:.4f} (95% CI {lo:.4f}-{hi:.4f}) against {base['accuracy']:.4f} "
        f"for the prior alone (always guessing {base['majority_guess']!r}): lift {lift['difference']:+.4f}{ratio}",
        highlight=False,
    )
    console.print(
        f"  certain guesses: {certain:,} people ({summary['certain_right']:,} right, {summary['certain_wrong']:,} wrong; "
        "a wrong certain guess is not an exposure)",
        highlight=False,
    )
    levels = ", ".join(f"{k} {v:,} (prior alone {summary['prior_alone'][k]:,})" for k, v in summary["confidence_in_true_value"].items())
    console.print(f"  people by the attacker's confidence in their true value: {levels}", highlight=False)
    beyond = ", ".join(f"{k} {v:,}" for k, v in summary["beyond_prior"].items())
    console.print(f"  of them, held there only thanks to the model (the prior alone holds them lower): {beyond}", highlight=False)


@main.command("attack")
@click.option("--tree", "tree_file", type=click.Path(path_type=Path), required=True, help="The published tree (JSON).")
@click.option("--data", type=click.Path(path_type=Path), help="The attacker's table: the training records' QIs (CSV); with the sensitive column, the attack is also measured.")
@click.option("--dataset", help="A bundled dataset as the attacker's table instead of --data.")
@click.option("--sensitive", help="The sensitive attribute (default: the tree's class).")
@click.option("--attack", "kind", type=click.Choice(ATTACKS), default="homogeneity", show_default=True)
@click.option("--quasi-identifiers", help="Comma-separated columns the attacker knows (default: the tree's attributes in the table).")
@click.option("--known", type=click.Path(path_type=Path), help="background: CSV of individuals whose full records the attacker knows.")
@click.option("--threshold", type=float, default=0.9, show_default=True, help="background: confidence that counts as exposed.")
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True, help="How many of the riskiest groups to print.")
@click.option("--out", type=click.Path(path_type=Path), help="Write the AttackResult (every group's posterior) as JSON.")
@handles_errors
def attack_command(
    tree_file: Path, data: Path | None, dataset: str | None, sensitive: str | None, kind: str,
    quasi_identifiers: str | None, known: Path | None, threshold: float, top: int, out: Path | None,
) -> None:
    """Attack a published tree with the attacker's table (paper 003) and summarise who is exposed."""
    check_outputs(out)
    from ppdm.attacks import background_knowledge_attack, homogeneity_attack, uniqueness_attack
    from ppdm.tree import load_tree

    tree = load_tree(tree_file)
    table = _attacker_table(dataset, data)
    qis = _split_list(quasi_identifiers)
    if kind == "background":
        if known is None:
            raise PpdmError("--attack background needs --known FILE.csv (the individuals the attacker knows)")
        result = background_knowledge_attack(tree, table, _known_rows(table, known), qis, sensitive, threshold)
    else:
        attack = homogeneity_attack if kind == "homogeneity" else uniqueness_attack
        result = attack(tree, table, qis, sensitive)
    _print_result(result, top)
    if out is not None:
        result.save(out)
        console.print(f"wrote {out}")


# -- audit -------------------------------------------------------------------------------------
def _train_for_audit(
    dataset: str, sensitive: str, class_attribute: str | None, algorithm: str, criterion: str | None, max_depth: int | None, quiet: bool
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


def _known_columns(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    unknown = [c for c in columns if c not in frame.columns]
    if unknown:
        raise PpdmError(f"unknown column {unknown[0]!r} (the table has: {', '.join(map(str, frame.columns))})")
    return columns


def _print_disclosure(details: dict, summary: dict) -> None:
    """The lines every maximum-entropy audit prints: divergence, then the attack against the prior."""
    if "overall_divergence" in details:
        console.print(f"  overall divergence D_overall = {details['overall_divergence']:.5f} (natural log; 0 = everything disclosed)", highlight=False)
    _print_against_baseline(summary)


def _print_audit(result: AttackResult, top: int) -> None:
    d = result.details
    s = result.summary()
    console.print(d.get("threat_model", ""), highlight=False)
    dropped = f" ({d['dropped_rows']:,} rows with missing values left out)" if d.get("dropped_rows") else ""
    console.print(
        f"maximum-entropy audit of {result.sensitive!r} over {s['records']:,} records in {s['qi_groups']:,} groups "
        f"of known values{dropped}; unknowns: {d.get('unknowns', '')}",
        highlight=False,
    )
    rows = ", ".join(f"{k} {v:,}" for k, v in d["constraint_rows"].items()) or "none"  # type: ignore[union-attr]
    console.print(f"  constraints: {rows}; solved in {d['solver_seconds']:.2f} s ({d['status']}), largest violation {d['max_violation']:.1e}")
    if "note" in d:
        from rich.text import Text

        console.print(Text.assemble("  ", ("note:", "yellow"), f" {d['note']}"))
    _print_disclosure(d, s)
    _print_riskiest(result, top)


@main.command("audit")
@click.option("--dataset", help="A bundled dataset: train a tree on it and audit it.")
@click.option("--tree", "tree_file", type=click.Path(path_type=Path), help="Audit this published tree (JSON) instead.")
@click.option("--data", type=click.Path(path_type=Path), help="With --tree: the training records (CSV); the sensitive column, when present, measures the attack.")
@click.option("--sensitive", help="The sensitive column: the tree's class or any input (default: from --threat, else the class).")
@click.option("--known", "known", help="Comma-separated columns the attacker knows (list the class to make it known).")
@click.option("--quasi-identifiers", "known_alias", help="Same as --known.", hidden=True)
@click.option("--class-known", is_flag=True, help="The attacker also knows each record's class.")
@click.option("--preset", type=click.Choice(["census", "insider", "paper", "nothing"]), help="A named attacker (see docs/threat_models.md); --known overrides it.")
@click.option("--threat", "threat_file", type=click.Path(path_type=Path), help="The threat model as a YAML file; the flags above override its keys.")
@click.option("--known-individuals", help="Comma-separated rows (0 = first data row) whose full records the attacker has.")
@click.option("--class", "class_attribute", help="With --dataset: the class the trained tree predicts (default: the sensitive column).")
@click.option("--algorithm", type=click.Choice(["id3", "c45"]), default="id3", show_default=True, help="With --dataset: the learner.")
@click.option("--criterion", type=click.Choice(["entropy", "gini", "gain_ratio"]), help="With --dataset: the split criterion.")
@click.option("--max-depth", type=click.IntRange(min=0), help="With --dataset: stop splitting at this depth.")
@click.option("--publish", type=click.Choice(DISCLOSURES), help="Audit less than the tree holds (default: what the file holds; error-rates with --dataset).")
@click.option("--sa/--no-sa", "sa_published", default=None, help="Whether the sensitive column's distribution is known (default: yes for an input, no for the class).")
@click.option("--missing", type=click.Choice(["error", "drop", "as-value"]), default="error", show_default=True, help="Missing values in the columns the audit reads.")
@click.option("--no-label", is_flag=True, help="Ignore the label constraints.")
@click.option("--internal", is_flag=True, help="Use the split choices too (internal-node constraints; nonconvex: a local optimum).")
@click.option("--time-limit", type=click.FloatRange(min=0), help="With --internal: stop the solver after this many seconds with its best feasible estimate.")
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), help="Write every group's posterior and the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@handles_errors
def audit_command(
    dataset: str | None, tree_file: Path | None, data: Path | None, sensitive: str | None, known: str | None,
    known_alias: str | None, class_known: bool, preset: str | None, threat_file: Path | None, known_individuals: str | None,
    class_attribute: str | None, algorithm: str, criterion: str | None, max_depth: int | None, publish: str | None,
    sa_published: bool | None, missing: str, no_label: bool, internal: bool, time_limit: float | None, top: int,
    out: Path | None, quiet: bool,
) -> None:
    """What an attacker infers about everyone's sensitive value from a published tree (maximum entropy)."""
    check_outputs(out)
    from ppdm.attacks.maxent import maxent_attack
    from ppdm.errors import UninformativeKnowledgeWarning
    from ppdm.maxent.tree_constraints import Knowledge

    threat = _threat_from_options(threat_file, sensitive, known or known_alias, preset, publish, sa_published, known_individuals)
    if dataset is not None:
        if tree_file is not None or data is not None:
            raise PpdmError("give either --dataset (train and audit) or --tree with --data, not both")
        if threat.sensitive is None:
            raise PpdmError("--dataset needs --sensitive (or a threat file naming it)")
        tree, table, features = _train_for_audit(dataset, threat.sensitive, class_attribute, algorithm, criterion, max_depth, quiet)
        threat = _default_known(threat, features)
        if threat.publish is None:
            threat = replace(threat, publish="error-rates")
    else:
        if tree_file is None or data is None:
            raise PpdmError("give --dataset NAME, or --tree TREE.json with --data TABLE.csv")
        tree, table = _tree_and_table(tree_file, data)
    if class_known:
        threat = _with_class_known(threat, tree, table)
    table, dropped = _missing(table, tree, threat, missing)
    knowledge = Knowledge(rate=True, label=not no_label, internal=internal)
    with status("solving the maximum-entropy problem", quiet):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UninformativeKnowledgeWarning)  # printed with the summary
            result = maxent_attack(tree, table, knowledge=knowledge, time_limit=time_limit, threat=threat)
    if dropped:
        result.details["dropped_rows"] = dropped
    if not quiet:
        _print_audit(result, top)
    if out is not None:
        result.save(out)
        if not quiet:
            console.print(f"wrote {out}")


def _threat_from_options(
    threat_file: Path | None, sensitive: str | None, known: str | None, preset: str | None, publish: str | None,
    sa_published: bool | None, known_individuals: str | None,
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
            raise PpdmError(f"--known-individuals: {part!r} is not a row number (0 = the first data row)")
        rows.append(int(part))
    return rows


def _default_known(threat: Any, features: list[str]) -> Any:
    """With --dataset and no declared attacker, the attacker knows the features (paper 000)."""
    if threat.known is None and threat.preset is None:
        return replace(threat, known=tuple(features))
    return threat


def _with_class_known(threat: Any, tree: Tree, table: pd.DataFrame) -> Any:
    resolved = threat.resolve(table, tree.class_attribute)
    if tree.class_attribute == resolved.sensitive:
        raise PpdmError(f"--class-known: the class {tree.class_attribute!r} is the sensitive column")
    return replace(threat, known=(*resolved.known, tree.class_attribute), preset=None)


def _tree_and_table(tree_file: Path, data: Path) -> tuple[Tree, pd.DataFrame]:
    from ppdm.data.datasets import load_csv
    from ppdm.tree import load_tree

    return load_tree(tree_file), load_csv(data)[0]


def _missing(table: pd.DataFrame, tree: Tree, threat: Any, policy: str) -> tuple[pd.DataFrame, int]:
    """The table with the missing values of the columns the audit reads dealt with by ``policy``."""
    from ppdm.data.missing import handle_missing

    resolved = threat.resolve(table, tree.class_attribute)
    split = [n.split.attribute for n in tree.nodes if n.split is not None]
    columns = [*resolved.known, resolved.sensitive, tree.class_attribute, *split]
    return handle_missing(table, columns, policy)  # type: ignore[arg-type]


def _rank(level: str) -> int:
    """How much a disclosure level reveals (a ``Disclosure`` or its value)."""
    return DISCLOSURES.index(level)


# -- audit-rules --------------------------------------------------------------------------------
def _categorical_qis(frame: pd.DataFrame, roles: Roles, sensitive: str) -> list[str]:
    """Default QIs for rules: the table's categorical quasi-identifiers (Adult: paper 004 Figure 4)."""
    import pandas as pd

    return [c for c in roles.quasi_identifiers if c != sensitive and not pd.api.types.is_numeric_dtype(frame[c])]


def _print_rules_audit(result: AttackResult) -> None:
    d, s = result.details, result.summary()
    console.print(
        f"maximum-entropy audit of {d['rules']:,} published rules (support >= {d['min_support']:g}, confidence >= {d['min_confidence']:g}, "
        f"{d['publish']} values) on {result.sensitive!r}: {s['records']:,} records in {s['qi_groups']:,} QI groups", highlight=False,
    )
    rows = d["constraint_rows"]
    console.print(f"  AR constraints: {rows.get('AR', 0):,} rows over {d['ar_variables']:,} variables", highlight=False)  # type: ignore[union-attr]
    if "NAR" in rows or d["nar_patterns"]:  # type: ignore[operator]
        console.print(
            f"  NAR constraints: {d['nar_patterns']:,} unpublished patterns, {d['nar_generated']:,} generated, "
            f"{d['nar_pruned']:,} pruned (Theorem 3); {d['nar_variables']:,} variables", highlight=False,
        )
    console.print(f"  generated in {d['generation_seconds']:.2f} s, solved in {d['solver_seconds']:.2f} s ({d['status']}), largest violation {d['max_violation']:.1e}", highlight=False)
    _print_disclosure(d, s)


def _print_individuals(table: pd.DataFrame, qis: list[str], values: tuple, title: str) -> None:
    """One line of scores and distributions per QI group, its QI values on the next line."""
    names = [c.rsplit(" P(", 1)[0] for c in table.columns if " P(" in c]
    dists = list(dict.fromkeys(names))
    scores = [c for c in table.columns if c not in qis and " P(" not in c and c != "records"]
    console.print(f"{title}; distributions are P({') / P('.join(map(str, values))})", highlight=False)
    header = ["#".rjust(3), *(f"{c.split(' (')[0]:>10}" for c in scores), *(f"{d:>{6 * len(values) + 2}}" for d in dists), "records".rjust(8)]
    console.print("  ".join(header), highlight=False)
    for i, row in table.iterrows():
        cells = [f"{i + 1:>3}", *(f"{row[c]:>10.3f}" for c in scores)]
        width = 6 * len(values) + 2
        cells += ["/".join(format(row[f"{d} P({v})"], ".3f") for v in values).rjust(width) for d in dists]
        cells.append(f"{row['records']:>8,}")
        console.print("  ".join(cells), highlight=False, markup=False)
        console.print("     " + ", ".join(f"{q}={row[q]}" for q in qis), highlight=False, markup=False)


@main.command("audit-rules")
@click.option("--dataset", help="A bundled dataset: mine rules on it and audit them.")
@click.option("--data", type=click.Path(path_type=Path), help="Your own CSV table instead (the records the rules come from).")
@click.option("--rules", "rules_file", type=click.Path(path_type=Path), help="Audit these published rules (JSON, format ppdm-rules) instead of mining.")
@click.option("--sensitive", required=True, help="The sensitive attribute (the right-hand side of the rules).")
@click.option("--quasi-identifiers", help="Comma-separated QI columns (default: the table's categorical quasi-identifiers).")
@click.option("--support", type=click.FloatRange(0, 1), help="Minimum support s (when mining).")
@click.option("--confidence", type=click.FloatRange(0, 1), help="Minimum confidence c (when mining).")
@click.option("--publish", type=click.Choice(["exact", "thresholds"]), help="Publish each rule's support and confidence, or only the thresholds (default: exact when mining, the file's with --rules).")
@click.option("--no-nar", is_flag=True, help="Ignore what unpublished patterns reveal (no NAR constraints).")
@click.option("--no-prune", is_flag=True, help="Keep every NAR constraint (no Theorem 3 pruning).")
@click.option("--sa", "sa_published", is_flag=True, help="The sensitive attribute's distribution is published too.")
@click.option("--strict", type=click.Choice(["integer", "closed"]), default="integer", show_default=True, help="Strict inequalities on whole record counts, or relaxed to <=.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="Rows of the top-K individuals table.")
@click.option("--out", type=click.Path(path_type=Path), help="Write every group's posterior, the summary and the top-K table as JSON.")
@click.option("--rules-out", type=click.Path(path_type=Path), help="Write the published rules (JSON).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@handles_errors
def audit_rules_command(
    dataset: str | None, data: Path | None, rules_file: Path | None, sensitive: str, quasi_identifiers: str | None,
    support: float | None, confidence: float | None, publish: str | None, no_nar: bool, no_prune: bool, sa_published: bool,
    strict: str, top: int, out: Path | None, rules_out: Path | None, quiet: bool,
) -> None:
    """What an attacker infers about everyone's sensitive value from published association rules (maximum entropy, paper 004)."""
    check_outputs(out, rules_out)
    import json

    from ppdm.attacks.result import result_json
    from ppdm.attacks.rules import most_exposed, nar_impact, rules_attack
    from ppdm.data.datasets import load_csv, load_dataset
    from ppdm.maxent.rule_constraints import RuleKnowledge
    from ppdm.rules import RuleSet, mine_rules

    if (dataset is None) == (data is None):
        raise PpdmError("give exactly one of --dataset NAME or --data FILE.csv (the records the rules come from)")
    frame, roles = load_dataset(dataset, sensitive=sensitive) if dataset is not None else load_csv(data, sensitive=sensitive)  # type: ignore[arg-type]
    _known_columns(frame, [sensitive])
    if rules_file is not None:
        rules = RuleSet.load(rules_file)
    else:
        if support is None or confidence is None:
            raise PpdmError("give --support and --confidence to mine rules, or --rules FILE.json")
        qis = _known_columns(frame, _split_list(quasi_identifiers) or _categorical_qis(frame, roles, sensitive))
        with status(f"mining rules on {len(frame):,} records", quiet):
            rules = mine_rules(frame, qis, sensitive, support, confidence)
    rules = rules.published(publish or rules.publish)  # type: ignore[arg-type]
    if rules_out is not None:
        rules.save(rules_out)
    knowledge = RuleKnowledge(nar=not no_nar, prune=not no_prune, sa=sa_published, strict=strict)  # type: ignore[arg-type]
    with status("solving the maximum-entropy problem", quiet):
        result = rules_attack(rules, frame, knowledge)
        measured = result.true_codes is not None
        if measured and top and knowledge.nar:
            table, title = nar_impact(result, rules_attack(rules, frame, RuleKnowledge(nar=False, sa=sa_published, strict=knowledge.strict)), top), "top-K individuals: largest drop of individual divergence once NAR constraints are used (paper 004 Figure 7(a))"
        elif measured and top:
            table, title = most_exposed(result, top), "top-K individuals: smallest individual divergence"
        else:
            table, title = None, ""
    if not quiet:
        _print_rules_audit(result)
        if table is not None:
            _print_individuals(table, list(result.groups.quasi_identifiers), result.values, title)
        else:
            _print_riskiest(result, top)
    if out is not None:
        payload = result.to_dict() | {"top_individuals": [] if table is None else json.loads(table.to_json(orient="records"))}
        out.write_text(result_json(payload))
    if not quiet:
        for path in (rules_out, out):
            if path is not None:
                console.print(f"wrote {path}")


if __name__ == "__main__":  # pragma: no cover
    main()
