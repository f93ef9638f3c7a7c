"""``ppdm audit``: the maximum-entropy audit of a published tree under a threat model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.defaults import EXACT_SECONDS, FOREST_SECONDS
from ppdm.errors import PpdmError
from ppdm.progress import Printer

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.tree import Tree

from ppdm.cli.common import (
    FiniteRange,
    _default_known,
    _features,
    _known_columns,
    _threat_from_options,
    _with_class_known,
    check_outputs,
    command_options,
    console,
    csv_options,
    handles_errors,
    main,
    publish_option,
    read_csv,
    sa_option,
    status,
    threat_options,
)
from ppdm.cli.report import TARGET_HELP, check_report_outputs, write_html_report

#: A forest estimate's default time budget and the integer search's when --exact-time-limit is not
#: given (seconds): the library's own (:mod:`ppdm.defaults`, which loads no solver for ``--help``).
DEFAULT_EXACT_SECONDS = EXACT_SECONDS


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
    "--xgboost-config",
    type=click.Path(path_type=Path),
    help="With an XGBoost JSON --model: its training configuration (booster.save_config(), saved as JSON), which the model file "
    "lacks: λ, η and whether rows were subsampled (with subsample=1 every round is read, not the first alone).",
)
@click.option(
    "--data",
    type=click.Path(path_type=Path),
    help="With --tree or --model: the training records (CSV, in the order the model was fitted on); the sensitive "
    "column, when present, measures the attack. With --backend dask: Parquet or CSV files, a directory or a glob "
    "('part-*.parquet').",
)
@click.option(
    "--backend",
    type=click.Choice(["pandas", "dask"]),
    default="pandas",
    show_default=True,
    help="Count in memory (pandas) or partition by partition (dask, for tables larger than memory).",
)
@threat_options
@click.option(
    "--class",
    "--class-attribute",
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
@publish_option()
@sa_option
@click.option(
    "--missing",
    type=click.Choice(["error", "drop", "as-value"]),
    default="error",
    show_default=True,
    help="Missing values in the columns the audit reads.",
)
@click.option(
    "--sample",
    is_flag=True,
    help="The table is a sample of the training rows (or holds others too), on purpose: audit it anyway, the published "
    "counts read as bounds (without it, a table of another size than the model's training data is refused); with "
    "--membership: the population holds only some of the training records.",
)
@click.option("--no-label", is_flag=True, help="Ignore the label constraints.")
@click.option(
    "--internal",
    is_flag=True,
    help="Use the split choices too (internal-node constraints; nonconvex: a local optimum).",
)
@click.option(
    "--method",
    default="auto",
    show_default=True,
    help="The estimate's method (ppdm.pipeline.capabilities): auto (each model's own road, falling back as it says), factored, explicit, "
    "split-choice, pooled or possible; the estimate says what its method does not read.",
)
@click.option(
    "--time-limit",
    type=FiniteRange(min=0),
    help=f"Seconds for a forest's estimate, building its problem included (default {FOREST_SECONDS:g}), or, with --internal, a tree's: past them the best "
    "estimate so far, status inaccurate, its row violation, and only the certainties already proved.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show the long steps' progress on stderr: a forest's rows, the solver's Newton steps of their budget, the exact search (default: when stderr is a terminal; never under --quiet).",
)
@click.option(
    "--exact",
    is_flag=True,
    help="Also prove, on whole counts, who is certain in every dataset consistent with the tree or forest (docs/exact_disclosure.md).",
)
@click.option(
    "--estimate/--no-estimate",
    default=True,
    show_default=True,
    help="Run the maximum-entropy estimate (--no-estimate with --exact: the exact audit alone).",
)
@click.option(
    "--exact-time-limit",
    type=FiniteRange(min=0, min_open=True),
    help=f"With --exact: seconds for the integer search (default {DEFAULT_EXACT_SECONDS:g}); what is still open is reported undecided, never certain.",
)
@click.option(
    "--exact-detail",
    type=click.Choice(["certainty", "bounds"]),
    default="certainty",
    show_default=True,
    help="With --exact: bounds also settles every other minimum and maximum count (minutes on large tables); certainty leaves them as proved intervals.",
)
@click.option(
    "--reference",
    type=click.Path(path_type=Path),
    help="CSV of people of the same population who are not targets: the model-free attacker fitted on them is reported beside the audit.",
)
@click.option(
    "--outputs-known",
    type=click.Choice(["label", "score"]),
    help="The attacker also sees each person's predicted label or score (the deployed model's answer): only the leaves that give it stay possible, and the --reference attacker takes it as a feature.",
)
@click.option(
    "--holdout",
    type=click.Path(path_type=Path),
    help="CSV of people outside the training set, with their sensitive values: the same guesses on them (the control) and the membership share of the risk.",
)
@click.option(
    "--trees",
    help="Audit only these trees of a forest (0:10 = trees 0 to 9, or 0,3,7): a lower bound on what the whole forest discloses.",
)
@click.option(
    "--membership",
    is_flag=True,
    help="Audit membership instead: which candidates of --population were training records of --model (P(member), proved members and non-members; docs/membership.md).",
)
@click.option(
    "--population",
    type=click.Path(path_type=Path),
    help="With --membership: CSV of candidates, members and non-members, each with every model input (and the class, when known).",
)
@click.option(
    "--member-column",
    default="member",
    show_default=True,
    help="With --membership: the population's true/false column saying who was a training record (used when present, to measure the audit).",
)
@click.option(
    "--member-ids",
    type=click.Path(path_type=Path),
    help="With --membership: the training rows' identifiers (a CSV with the --id-column, or one per line), the truth instead of --member-column.",
)
@click.option(
    "--id-column",
    help="With --member-ids: the population's column of identifiers (e.g. ID).",
)
@click.option(
    "--non-member-column",
    help="With --membership: the population's true/false column of the candidates the attacker knows were no training record (each published count then bounds the members among the others).",
)
@click.option(
    "--scores",
    type=click.Path(path_type=Path),
    help="With --membership: CSV of the model's predicted probabilities per candidate (one column per class, rows in --population's order): the confidence attack on them too; --model may then be left out (a model known by its probabilities only; give --class).",
)
@click.option(
    "--tolerance",
    type=FiniteRange(min=0),
    help="A regressor's numeric secret (its target, or a numeric input named by --sensitive): count the people whose proved interval is at most this wide (e.g. 1000 for an income in dollars).",
)
@click.option(
    "--domain",
    help="A regressor's numeric secret (its target or --sensitive input): the prior's interval LO,HI (default: the column's range in --data).",
)
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write every group's posterior and the summary as JSON.",
)
@click.option(
    "--report",
    "report_out",
    type=click.Path(path_type=Path),
    help="Also write the HTML report (and its JSON beside it): verdict, people and leaves exposed, what to do next.",
)
@click.option("--target", help=TARGET_HELP.replace("Default: the target the audit was run with (stored in its JSON), else the defense search's (--frontier), else", "Stored in --out's JSON; default: the defense search's (--frontier), else"))
@click.option(
    "--record",
    "record_out",
    type=click.Path(path_type=Path),
    help="Write the release record (JSON, docs/release_record.md): inputs' SHA-256, model and hyper-parameters, threat model, "
    "target, every attack beside its baselines, and the decision (release, do not release, release the defended model) with its reasons.",
)
@click.option(
    "--frontier",
    "frontier_file",
    type=click.Path(path_type=Path),
    help="The defense search that chose this model (ppdm defend --frontier): shown in --report, its target judged against "
    "when --target is not given, and its choice in --record's decision.",
)
@click.option("--policy", help="The output checker's policy: a preset (default, acro, strict) or a policy YAML file (docs/checker.md): its target is the audit's, and --record cites it with its SHA-256.")
@click.option("--bundle", type=click.Path(path_type=Path), help="Write the release files (the model file, the release record, the report) and a manifest of hashes to this folder.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@csv_options
@handles_errors
def audit_command(
    dataset: str | None,
    tree_file: Path | None,
    model_file: Path | None,
    xgboost_config: Path | None,
    data: Path | None,
    backend: str,
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
    sample: bool,
    no_label: bool,
    internal: bool,
    method: str,
    time_limit: float | None,
    progress: bool | None,
    exact: bool,
    estimate: bool,
    exact_time_limit: float | None,
    exact_detail: str,
    reference: Path | None,
    outputs_known: str | None,
    holdout: Path | None,
    trees: str | None,
    membership: bool,
    population: Path | None,
    member_column: str,
    member_ids: Path | None,
    id_column: str | None,
    non_member_column: str | None,
    scores: Path | None,
    tolerance: float | None,
    domain: str | None,
    top: int,
    out: Path | None,
    report_out: Path | None,
    target: str | None,
    record_out: Path | None,
    frontier_file: Path | None,
    policy: str | None,
    bundle: Path | None,
    quiet: bool,
) -> None:
    """What an attacker infers about everyone's sensitive value from a published tree or forest (maximum entropy)."""
    command_options(class_attribute="--class", sample="--sample", complete="--sample", id_column="--id-column", member_ids="--member-ids")
    read = (tree_file, model_file, xgboost_config, data, threat_file, reference, holdout, population, frontier_file, member_ids, scores)
    finish = _finishing(out, record_out, report_out, read, target, frontier_file, policy, bundle, model_file or tree_file)
    if membership or population is not None:
        truth = _membership_truth(member_column, member_ids, id_column, non_member_column, sample, scores, xgboost_config, method)
        _membership_command(membership, population, model_file or tree_file, dataset, data, report_out, truth, class_attribute, exact_time_limit,
                            time_limit, quiet, out, finish, progress)  # fmt: skip
        return
    _check_not_membership(scores, member_ids, id_column, non_member_column)
    if report_out is not None:
        check_report_outputs(report_out, None, None, out, tree_file, data, threat_file, record_out, json_option=False)
    _check_runs(exact, estimate, exact_time_limit, internal, backend)
    from ppdm.api import Audit, AuditOptions, audit

    how = AuditOptions(method=method)  # the method refused, naming the others, before any file is read
    threat = _threat_from_options(threat_file, sensitive, known if known is not None else known_alias, preset, publish, sa_published, known_individuals)
    if outputs_known is not None:
        threat = replace(threat, outputs=outputs_known)
    if tree_file is not None and model_file is not None:
        raise PpdmError("give --tree or --model (the same option for a model file), not both")
    what = "tree" if tree_file is not None else "model"
    tree_file = tree_file or model_file
    if dataset is not None:
        tree, table, threat = _trained(dataset, tree_file or xgboost_config, data, threat, backend, class_attribute, algorithm, criterion, max_depth, quiet)
    else:
        tree, table = _published(tree_file, data, class_attribute, criterion, max_depth, quiet, what, backend, xgboost_config)
    if time_limit is not None and not internal and method != "split-choice" and tree.n_trees == 1:
        raise PpdmError("--time-limit bounds a forest's solve or a tree's internal-node solve: for a tree it needs --internal")
    if class_known:
        threat = _with_class_known(threat, tree)
    doing = " and proving what is certain on whole counts" if exact else ""
    told = _progress(progress, quiet)
    with status(f"auditing{doing}", quiet or told is not False):
        result = audit(
            tree, table, threat, exact=exact, estimate=estimate, missing=missing, labels=not no_label, internal=internal,
            time_limit=time_limit, exact_time_limit=exact_time_limit, exact_detail=exact_detail,
            sample=sample, trees=trees, reference=reference, holdout=holdout, progress=told, options=how, **finish.targeting(), **_numeric_secret(tolerance, domain),
        )
    inputs = {"model": tree_file, "model_config": xgboost_config, "data": data if dataset is None else table, "threat": threat_file, "reference": reference,
              "holdout": holdout}  # fmt: skip
    if not isinstance(result, Audit):
        _print_regression(result, top, out, report_out, quiet, finish, inputs)
        return
    _print_audit(result, threat, top, out, report_out, quiet, finish, inputs)


def _finishing(
    out: Path | None, record_out: Path | None, report_out: Path | None, read: tuple[Path | None, ...], target: str | None,
    frontier_file: Path | None, policy: str | None, bundle: Path | None, model: Path | None,
) -> _Finish:
    """The outputs checked (none over another, none over a file ``read``, the bundle's folder)
    before any work, and what the audit does at the end with them."""
    from ppdm.attacks.core.target import parse_target

    check_outputs(out, record_out, report_out)
    _distinct(out, record_out, report_out, inputs=read)
    chosen = parse_target(target) if target is not None else None
    finish = _Finish(record_out, _load_frontier(frontier_file), chosen, frontier_file, policy, bundle)
    finish.check_bundle(model, report_out, (*read, out))
    return finish


def _check_runs(exact: bool, estimate: bool, exact_time_limit: float | None, internal: bool, backend: str) -> None:
    """Refuse the combinations of --exact, --no-estimate, --exact-time-limit, --internal and --backend that cannot run."""
    if exact and backend == "dask":
        raise PpdmError("--exact works on a pandas table: audit the counted groups with --backend pandas")
    if not estimate and not exact:
        raise PpdmError("--no-estimate leaves nothing to do: add --exact for the exact audit alone")
    if exact_time_limit is not None and not exact:
        raise PpdmError("--exact-time-limit needs --exact")
    if exact and internal:
        raise PpdmError("--exact does not use the split choices (--internal): run them separately")


def _trained(
    dataset: str, tree_file: Path | None, data: Path | None, threat: ThreatModel, backend: str, class_attribute: str | None,
    algorithm: str, criterion: str | None, max_depth: int | None, quiet: bool,
) -> tuple[Any, pd.DataFrame, ThreatModel]:
    """``--dataset``: the tree trained on the bundled dataset, its table, and the threat with its defaults for it."""
    if tree_file is not None or data is not None:
        raise PpdmError("give either --dataset (train and audit) or --tree/--model (and its --xgboost-config) with --data, not both")
    if threat.sensitive is None:
        raise PpdmError("--dataset needs --sensitive (or a threat file naming it)")
    if backend != "pandas":
        raise PpdmError("--backend dask counts the files given with --data, not a bundled --dataset")
    tree, table, features = _train_for_audit(dataset, threat.sensitive, class_attribute, algorithm, criterion, max_depth, quiet)
    threat = _default_known(threat, features)
    if threat.publish is None:
        threat = replace(threat, publish="error-rates")
    return tree, table, threat


def _published(
    tree_file: Path | None, data: Path | None, class_attribute: str | None, criterion: str | None, max_depth: int | None, quiet: bool, what: str,
    backend: str, config: Path | None = None,
) -> tuple[Any, Any]:
    """``--model``/``--tree`` with ``--data``: the published model as it is, and its table
    (``config``: an XGBoost model's training configuration)."""
    if tree_file is None or data is None:
        raise PpdmError("give --dataset NAME, or --model MODEL (--tree TREE.json) with --data TABLE.csv")
    if criterion is not None or max_depth is not None:
        raise PpdmError("--criterion and --max-depth train a tree with --dataset: a published model is audited as it is")
    tree, table = _model_and_table(tree_file, data, class_attribute, quiet, what, backend, config)
    if class_attribute is not None and tree.class_attribute != class_attribute:
        raise PpdmError(f"--class {class_attribute!r}: the model predicts {tree.class_attribute!r}")
    return tree, table


def _print_audit(result: Any, threat: ThreatModel, top: int, out: Path | None, report_out: Path | None, quiet: bool, finish: _Finish, inputs: dict[str, Any]) -> None:
    """An attribute audit's lines, its JSON (``--out``), release record (``--record``) and report (``--report``)."""
    if not quiet:
        for line in [*result.lines(top), *result.threat.notes()]:
            console.print(line, highlight=False, markup=False)
    if out is not None:
        result.save(out)
        if not quiet:
            console.print(f"wrote {out}")
    record = finish.record(result, inputs, quiet)
    if report_out is not None:
        write_html_report(  # the trees audited (--trees)
            result.results, result.model, threat, report_out, quiet=quiet, frontier=finish.frontier, target=finish.given(result), record=record,
        )
    finish.pack(result, record, inputs.get("model"), report_out, quiet)


class _Finish:
    """What every kind of audit does at the end with ``--target``, ``--frontier`` and ``--record``."""

    def __init__(self, record_out: Path | None, frontier: Any, chosen: Any, frontier_file: Path | None, policy: str | None = None, bundle: Path | None = None) -> None:
        self.record_out, self.frontier, self.chosen, self.frontier_file = record_out, frontier, chosen, frontier_file
        self.policy, self.bundle = policy, bundle

    def targeting(self) -> dict[str, Any]:
        """The audit's target arguments: --policy (with --target, refused by the library), else --target or the frontier's."""
        return {"target": self.target()} if self.policy is None else {"target": self.chosen, "policy": self.policy}

    def check_bundle(self, model: Path | None, report: Path | None, inputs: tuple[Path | None, ...]) -> None:
        """Refuse, before any work, a --bundle that cannot be written (ppdm.check.bundle)."""
        if self.bundle is None:
            return
        if model is None:
            raise PpdmError("--bundle copies the model file into the release folder: give --model MODEL")
        from ppdm.check.bundle import check_bundle

        check_bundle(self.bundle, self.names(model, report), [p for p in inputs if p is not None])

    @staticmethod
    def names(model: Path, report: Path | None) -> list[str]:
        return [model.name, "release_record.json", *(["report.html"] if report is not None else [])]

    def pack(self, result: Any, record: dict[str, Any] | None, model: Path | None, report: Path | None, quiet: bool) -> None:
        """Write --bundle: the model file, the release record (made here when --record was not given) and the report."""
        if self.bundle is None or model is None:
            return
        from ppdm.check.bundle import write_bundle
        from ppdm.report.record import record_json

        if record is None:
            record = result.release_record(frontier=self.frontier)
        names = self.names(model, report)
        files = {names[0]: model, **({names[2]: report} if report is not None else {})}
        manifest = write_bundle(self.bundle, files=files, texts={names[1]: record_json(record)}, policy=getattr(result, "policy", None), inputs=result.read)
        if not quiet:
            console.print(f"wrote the bundle {self.bundle} ({manifest.name})", highlight=False)

    def target(self) -> Any:
        """The target the audit runs with: --target, else the defense search's (--frontier), else the default."""
        if self.chosen is not None:
            return self.chosen
        from ppdm.report.record import frontier_target

        return frontier_target(self.frontier)

    def given(self, result: Any) -> Any:
        return result.target if result.target_given else None

    def record(self, result: Any, inputs: dict[str, Any], quiet: bool) -> dict[str, Any] | None:
        """Write the release record when asked (returns it, for the report's section)."""
        if self.record_out is None:
            return None
        files = {k: v for k, v in {**inputs, "frontier": self.frontier_file}.items() if v is not None}
        record = result.save_record(self.record_out, frontier=self.frontier, inputs=files)
        if not quiet:
            console.print(f"release decision: {record['decision']} ({record['reasons'][0]})", highlight=False)
            console.print(f"wrote {self.record_out}")
        return record


def _load_frontier(path: Path | None) -> Any:
    if path is None:
        return None
    from ppdm.report.load import load_frontier

    return load_frontier(path)


def _distinct(*outputs: Path | None, inputs: tuple[Path | None, ...]) -> None:
    """Refuse two outputs at one path, or an output over an input, before any work."""
    from ppdm.files import ReadFiles, same_file

    given = [p for p in outputs if p is not None]
    read = ReadFiles(q for q in inputs if q is not None)  # a glob: every file it matches
    for i, p in enumerate(given):
        if any(same_file(p, q) for q in given[:i]):
            raise PpdmError(f"{p}: given for two outputs; give each its own file")
        if read.read_as(p) is not None:
            raise PpdmError(f"{p}: is an input of this audit; write the output elsewhere")


def _membership_truth(
    member_column: str, member_ids: Path | None, id_column: str | None, non_member_column: str | None, sample: bool, scores: Path | None,
    xgboost_config: Path | None = None, method: str = "auto",
) -> dict[str, Any]:
    """The membership audit's truth and the attacker's knowledge of it, as :func:`ppdm.audit`'s
    keywords; the attribute audit's options refused."""
    if method != "auto":
        raise PpdmError(f"--method {method} chooses an attribute's estimate: a membership audit has its own (leave --method out)")
    if xgboost_config is not None:
        raise PpdmError(
            "--xgboost-config is read with the attribute audit's --data; for a membership audit read the model in Python: "
            "ppdm.audit(ppdm.load_model(MODEL, candidates, config=CONFIG), membership=candidates)"
        )
    truth: dict[str, Any] = {"member_column": member_column, "member_ids": member_ids, "id_column": id_column, "non_members": non_member_column, "sample": sample}
    return {**truth, "blackbox": scores} if scores else truth


def _membership_command(
    membership: bool, population: Path | None, model_file: Path | None, dataset: str | None, data: Path | None, report_out: Path | None,
    truth: dict[str, Any], class_attribute: str | None, exact_time_limit: float | None, time_limit: float | None, quiet: bool, out: Path | None,
    finish: _Finish, progress: bool | None = None,
) -> None:
    """``ppdm audit --membership --model M --population P.csv``: the library's membership audit, printed
    (its long steps' progress as ``--progress`` / ``--quiet`` say, like every audit's)."""
    if not membership:
        raise PpdmError("--population is the candidates of a membership audit: add --membership")
    if population is None or (model_file is None and truth.get("blackbox") is None):
        raise PpdmError("--membership needs --model MODEL (or --scores PROBABILITIES.csv) and --population CANDIDATES.csv")
    if dataset is not None or data is not None:
        raise PpdmError("--membership audits --population against --model: leave out --dataset and --data")
    if report_out is not None:
        check_report_outputs(report_out, None, None, population, model_file, out, json_option=False)
    from ppdm.api import Audit, audit

    with status("auditing membership", quiet):
        result = audit(
            model_file, membership=population, **truth, class_attribute=class_attribute,
            exact_time_limit=exact_time_limit, time_limit=time_limit, progress=_progress(progress, quiet), **finish.targeting(),
        )
    if not quiet:
        for line in result.lines():
            console.print(line, highlight=False, markup=False)
    if out is not None:
        result.save(out)
        if not quiet:
            console.print(f"wrote {out}")
    record = finish.record(result, {"model": model_file, "population": population, "member_ids": truth.get("member_ids"), "scores": truth.get("blackbox")}, quiet)
    if report_out is not None:
        assert isinstance(result, Audit)  # a membership audit
        write_html_report(
            [], result.model, None, report_out, quiet=quiet, membership=result.membership, frontier=finish.frontier, target=finish.given(result),
            record=record,
        )
    finish.pack(result, record, model_file, report_out, quiet)


def _numeric_secret(tolerance: float | None, domain: str | None) -> dict[str, Any]:
    """``--tolerance`` and ``--domain LO,HI`` as the library's arguments (only those given)."""
    out: dict[str, Any] = {}
    if tolerance is not None:
        out["tolerance"] = tolerance
    if domain is not None:
        parts = domain.split(",")
        try:
            lo, hi = (float(p) for p in parts)
        except ValueError:
            raise PpdmError(f"--domain {domain!r}: write the prior's interval as LO,HI, e.g. 0,100") from None
        out["domain"] = (lo, hi)
    return out


def _print_regression(
    result: Any, top: int, out: Path | None, report_out: Path | None, quiet: bool, finish: _Finish, inputs: dict[str, Any],
) -> None:
    """Print, save and report the audit of a regressor's numeric target (and its release record)."""
    if not quiet:
        for line in result.lines(top):
            console.print(line, highlight=False, markup=False)
    if out is not None:
        result.save(out)
        if not quiet:
            console.print(f"wrote {out}")
    record = finish.record(result, inputs, quiet)
    if report_out is not None:
        result.report(report_out)
        if not quiet:
            console.print(f"wrote {report_out}")
    finish.pack(result, record, inputs.get("model"), report_out, quiet)


def _model_and_table(
    model_file: Path, data: Path, class_attribute: str | None, quiet: bool, what: str = "model", backend: str = "pandas", config: Path | None = None,
) -> tuple[Any, Any]:
    """The published model (a :class:`Tree` or :class:`Forest`, by the file's format:
    :func:`ppdm.tree.model_files.load_model`) and the table (read lazily with ``backend="dask"``)."""
    from ppdm.tree.model_files import load_model

    if model_file.is_dir():  # named before the table is read
        raise PpdmError(f"{model_file}: is a directory, not a {what} file")
    if backend == "dask":
        from ppdm.data.lazy import read_lazy
        from ppdm.pipeline.read import check_lazy_model

        check_lazy_model(model_file)
        return load_model(model_file, config=config), read_lazy(data)
    table = read_csv(data)[0]
    with status(f"reading {model_file}", quiet):
        return load_model(model_file, table, class_attribute=class_attribute, config=config), table


#: Seconds between two progress lines of one phase (a new phase is shown at once).
PROGRESS_EVERY = 5.0


def _progress(shown: bool | None, quiet: bool) -> Printer | bool:
    """How the audit's long steps are shown (:mod:`ppdm.progress`, one mechanism with Python's):
    lines on stderr from the start with ``--progress`` (by default when stderr is a terminal), one
    every :data:`PROGRESS_EVERY` seconds and at each new phase; ``False`` under --quiet or when not shown."""
    import sys

    if quiet or not (shown if shown is not None else sys.stderr.isatty()):
        return False
    return Printer(quiet=0.0, every=PROGRESS_EVERY)


def _check_not_membership(scores: Path | None, member_ids: Path | None, id_column: str | None, non_member_column: str | None) -> None:
    """Refuse a membership audit's options on an attribute audit, naming what to add."""
    if scores is not None:
        raise PpdmError("--scores gives a membership audit the model's predicted probabilities: add --membership --population CANDIDATES.csv")
    if member_ids is not None or id_column is not None:
        raise PpdmError("--member-ids and --id-column give a membership audit's truth: add --membership --population CANDIDATES.csv")
    if non_member_column is not None:
        raise PpdmError("--non-member-column names a membership audit's known non-members: add --membership --population CANDIDATES.csv")
