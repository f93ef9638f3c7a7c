"""``ppdm defend``: search for the most accurate model to publish that meets a privacy target."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.defaults import DEFENSE_SECONDS
from ppdm.errors import PpdmError
from ppdm.files import same_file

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.defend import DefenseResult
    from ppdm.tree import Forest, Tree

from ppdm.cli.common import (
    SEED,
    FiniteRange,
    _default_known,
    _split_list,
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

DEFAULT_TARGET = "certain=0,confident=0.01@0.9"
"""Spelled out so that ``ppdm --help`` does not import the library; a test keeps it equal to
:data:`ppdm.defend.DEFAULT_TARGET`."""
MEMBERSHIP_TARGET = "members_proved=0,mia_tpr@1%<=0.02"
"""The target with --membership when --target is not given: nobody proved a member, the
membership attacker's TPR at 1 % FPR at most 2 %."""
FAMILIES = ("pruning", "retrain", "kadet", "publish-less", "dp")

_TARGET_HELP = (
    "The privacy target, measures joined by commas: certain=N (at most N people an audit is certain about), "
    "confident=X@C (at most a share X, or X%, of the people at confidence >= C in their true value), "
    "span=K (every span of the linking attack >= K records), l=L (entropy L-diverse spans); with --membership: "
    "members_proved=N (at most N candidates proved training records), mia_tpr@F<=X (the membership attacker's TPR at "
    "false-positive rate F at most X); with --reference: lift_over_reference<=X (the model adds at most X accuracy beyond a "
    f"model-free attacker fitted on a population sample). Default: {DEFAULT_TARGET}; with --membership: {MEMBERSHIP_TARGET}."
)

_EPILOG = (
    "Every candidate is fitted on the training part and audited under the same threat model (the maximum-entropy audit, "
    "the leaf-reading homogeneity attack and the attacker ppdm audit reports: 'certain' means certain by these audits) and "
    "its accuracy measured on the held-out rows (or --test); the chosen model is the most accurate one meeting the target. "
    "Exit status 1 when no candidate meets it."
)


@main.command("defend", epilog=_EPILOG)
@click.option(
    "--model", "model_file", type=click.Path(path_type=Path),
    help="The tree or forest to defend (ppdm JSON, a skops file; a forest from a scikit-learn random forest or extra trees, or a boosted model: "
    "XGBoost JSON, LightGBM text, scikit-learn gradient boosting), with --data its training rows (a forest's in the order it was fitted on).",
)
@click.option("--data", type=click.Path(path_type=Path), help="The training records (CSV): the rows the model was trained on, or the rows to train it on.")
@click.option("--dataset", help="A bundled dataset: train the model on it (Adult: its test split measures accuracy).")
@click.option("--class-attribute", "--class", "class_attribute", help="Without --model: the column to predict (default: the sensitive column).")
@click.option(
    "--test", "test_file", type=click.Path(path_type=Path),
    help="Rows to measure accuracy on (CSV; default: Adult's bundled test split, else a held-out share of --data, --test-size). With it, a --model is kept as it is.",
)
@click.option(
    "--test-size", type=FiniteRange(), default=0.25, show_default=True,
    help="Without --test: the share of --data held out for accuracy (stratified by the class, seeded by --seed); every candidate, and a --model "
    "fitted again with its learner, is fitted and audited on the rest (--train-out writes it). 0: accuracy on the training rows, labelled so.",
)
@click.option("--algorithm", type=click.Choice(["id3", "c45"]), help="Without --model: the learner (default: ID3 if every column is categorical, else C4.5).")
@click.option("--max-depth", type=click.IntRange(min=0), help="Without --model: the trained model's depth limit.")
@click.option("--min-samples-leaf", type=click.IntRange(min=1), help="Without --model: the trained model's minimum leaf size.")
@threat_options
@publish_option("What every candidate publishes at most (default: what the model file holds; error-rates when training).")
@sa_option
@click.option("--target", help=_TARGET_HELP)
@click.option(
    "--membership", is_flag=True,
    help="Measure membership disclosure too: every candidate's membership audit over the training rows (members) and --population (non-members).",
)
@click.option(
    "--population", type=click.Path(path_type=Path),
    help="With --membership: CSV of people who were not training records, with the model's inputs and class (a member column, when present, keeps its false rows).",
)
@click.option(
    "--reference", type=click.Path(path_type=Path),
    help="CSV of people of the same population who are not targets: the model-free attacker lift_over_reference<=X compares with.",
)
@click.option("--risk", help="The target measure plotted against accuracy in the frontier (default: the target's first).")
@click.option("--families", default=",".join(FAMILIES), show_default=True, help="The candidate families to search, comma-separated.")
@click.option("--quick", is_flag=True, help="Small parameter grids (a first look in seconds to a minute).")
@click.option("--hierarchies", type=click.Path(path_type=Path), help="Generalization hierarchies for kADET (YAML/JSON; Adult's bundled ones by default).")
@click.option("--time-budget", type=FiniteRange(min=0, min_open=True), default=DEFENSE_SECONDS, show_default=True, help="Seconds after which no new candidate starts and the one under way is stopped; those left are reported unfinished.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the held-out split and of the DP baseline.")
@click.option("--out", type=click.Path(path_type=Path), help="Write the chosen model as ppdm JSON (as published; a forest as a ppdm-forest file).")
@click.option(
    "--train-out", type=click.Path(path_type=Path),
    help="Write the rows the candidates were fitted and audited on (CSV; without --test: --data less the held-out rows): audit the chosen model on them.",
)
@click.option("--frontier", "frontier_file", type=click.Path(path_type=Path), help="Write every candidate's label, accuracy, risk and meets_target as JSON.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="Candidates printed (the chosen one and the frontier first).")
@click.option(
    "--progress/--no-progress", default=None,
    help="Show the candidates audited and the one under way on stderr (default: when stderr is a terminal; never under --quiet).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@csv_options
@handles_errors
def defend_command(
    model_file: Path | None,
    data: Path | None,
    dataset: str | None,
    class_attribute: str | None,
    test_file: Path | None,
    test_size: float,
    algorithm: str | None,
    max_depth: int | None,
    min_samples_leaf: int | None,
    sensitive: str | None,
    known: str | None,
    known_alias: str | None,
    class_known: bool,
    preset: str | None,
    threat_file: Path | None,
    known_individuals: str | None,
    publish: str | None,
    sa_published: bool | None,
    target: str | None,
    membership: bool,
    population: Path | None,
    reference: Path | None,
    risk: str | None,
    families: str,
    quick: bool,
    hierarchies: Path | None,
    time_budget: float,
    seed: int,
    out: Path | None,
    train_out: Path | None,
    frontier_file: Path | None,
    top: int,
    progress: bool | None,
    quiet: bool,
) -> None:
    """Search pruning, retraining, kADET, publishing less and an ε-DP baseline for the most accurate tree (or forest) meeting a privacy target."""
    command_options(class_attribute="--class-attribute")
    check_outputs(out, frontier_file, train_out)
    for output in (out, frontier_file, train_out):
        if output is not None and any(p is not None and same_file(p, output) for p in (model_file, data, test_file, population, reference)):
            raise PpdmError(f"{output}: is an input of this search; write the output elsewhere")
    from ppdm.defend import defend, parse_target
    from ppdm.defend.candidates import Grids

    parsed = parse_target(target if target is not None else MEMBERSHIP_TARGET if membership else DEFAULT_TARGET)
    non_members = _population(membership, population, parsed)
    family_list = _split_list(families) or []
    threat = _threat_from_options(threat_file, sensitive, known if known is not None else known_alias, preset, publish, sa_published, known_individuals)
    model, frame, test, threat = _inputs(model_file, data, dataset, class_attribute, test_file, test_size, seed, threat)
    split = None
    if model is None:
        if test is None and test_size > 0:  # the model is trained on the training part, as every candidate
            from ppdm.defend.search import held_out_split

            frame, test, split = held_out_split(frame, class_attribute or str(threat.sensitive), test_size, seed)
        model = _train(frame, threat, class_attribute, algorithm, max_depth, min_samples_leaf, quiet)
        threat = _default_known(threat, [a for a in model.attributes if a != threat.sensitive])
        if threat.publish is None:
            threat = replace(threat, publish="error-rates")
    elif algorithm or max_depth is not None or min_samples_leaf is not None:
        raise PpdmError("--algorithm, --max-depth and --min-samples-leaf train a model: not with --model")
    if class_known:
        threat = _with_class_known(threat, model)
    result = defend(
        model, frame, threat, parsed, test=test, test_size=test_size, families=family_list, grids=Grids.small() if quick else Grids.full(),
        hierarchies=_hierarchies(hierarchies, dataset), risk=risk, time_budget=time_budget, random_state=seed, progress=False if quiet else progress,
        membership=non_members, reference=_reference(reference, parsed), split=split,
    )
    if not quiet:
        _print_result(result, top, model.trees[0].class_attribute, test)
    _write(result, out, frontier_file, train_out, quiet)
    if not quiet and result.chosen is not None and out is not None:
        # with rows held out, --data is not what the candidates were fitted on (the audit refuses it)
        _print_next(result, out, train_out or (data if result.held_out is None else None), frontier_file, non_members)
    if result.chosen is None:
        raise SystemExit(1)


def _reference(reference: Path | None, target: Any) -> pd.DataFrame | None:
    """``--reference``'s people, checked against the target before anything is read."""
    if reference is None and target.needs_reference:
        raise PpdmError("the target's lift_over_reference compares with a model-free attacker: add --reference SAMPLE.csv")
    if reference is not None and not target.needs_reference:
        raise PpdmError("--reference is read by lift_over_reference only: add lift_over_reference<=X to --target")
    from ppdm.data.datasets import load_csv

    return load_csv(reference)[0] if reference is not None else None


def _population(membership: bool, population: Path | None, target: Any) -> pd.DataFrame | None:
    """The non-member sample of --membership (read before any work), or ``None``."""
    from ppdm.data.datasets import load_csv

    if population is not None and not membership:
        raise PpdmError("--population is the non-members of the membership measures: add --membership")
    if target.needs_membership and not membership:
        named = next(m.name for m in target.measures if m.needs_membership)
        raise PpdmError(f"the target's {named} is a membership measure: add --membership --population NON_MEMBERS.csv")
    if membership and population is None:
        raise PpdmError("--membership needs --population NON_MEMBERS.csv (people who were not training records)")
    if membership and not target.needs_membership:
        raise PpdmError("--membership: the target has no membership measure (members_proved=N, mia_tpr@F<=X)")
    return load_csv(population)[0] if population is not None else None


def _inputs(
    model_file: Path | None, data: Path | None, dataset: str | None, class_attribute: str | None,
    test_file: Path | None, test_size: float, seed: int, threat: Any,
) -> tuple[Tree | Forest | None, pd.DataFrame, pd.DataFrame | None, Any]:
    """The model (``None``: train one), the training rows, the test rows and the threat model."""
    from ppdm.data.datasets import load_dataset
    from ppdm.tree.model_files import load_model

    if (dataset is None) == (data is None):
        raise PpdmError("give exactly one of --dataset NAME or --data FILE.csv (with --model: the model's training rows)")
    if model_file is not None and dataset is not None:
        raise PpdmError("--model goes with --data (the rows it was trained on), not --dataset")
    if not 0 <= test_size < 1:
        raise PpdmError(f"--test-size must be in [0, 1), got {test_size}")
    rows = read_csv(data)[0] if data is not None else None  # the CSV options (--sep, --names, --na-values, --row-ids)
    model = load_model(model_file, rows, class_attribute=class_attribute) if model_file is not None else None
    if model is not None and class_attribute is not None and class_attribute != model.class_attribute:
        raise PpdmError(f"--class-attribute {class_attribute!r}: the model predicts {model.class_attribute!r}")
    target = class_attribute or threat.sensitive or (model.class_attribute if model is not None else None)
    if target is None:
        raise PpdmError("without --model, give --class-attribute (the column to predict) or --sensitive")
    test = read_csv(test_file)[0] if test_file is not None else None  # laid out as --data
    if dataset is not None:
        frame = load_dataset(dataset, class_attribute=target)[0]
        if test is None and dataset == "adult":
            test, _ = load_dataset("adult", split="test", class_attribute=target)
    else:
        frame = rows
    if target not in frame.columns:
        role = "class column" if class_attribute is not None or threat.sensitive is None else "sensitive column (--sensitive)"
        raise PpdmError(f"the {role} {target!r} is not in the data (columns: {', '.join(map(str, frame.columns))})")
    return model, frame, test, threat


def _train(
    frame: pd.DataFrame, threat: Any, class_attribute: str | None, algorithm: str | None, max_depth: int | None,
    min_samples_leaf: int | None, quiet: bool,
) -> Tree:
    """The unprotected model: ID3 on the categorical columns, or C4.5 on every column."""
    import pandas as pd

    from ppdm.learn import C45Classifier, ID3Classifier

    target = class_attribute or threat.sensitive
    X = frame.drop(columns=[target])
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c]) or isinstance(X[c].dtype, pd.CategoricalDtype)]
    if algorithm is None:
        algorithm = "id3" if len(categorical) == X.shape[1] else "c45"
    if algorithm == "id3":
        if not categorical:
            raise PpdmError("ID3 splits categorical columns only and the table has none: use --algorithm c45")
        X = X[categorical]
    params: dict[str, Any] = {"max_depth": max_depth}
    if min_samples_leaf is not None:
        params["min_samples_leaf"] = min_samples_leaf
    learner = ID3Classifier(**params) if algorithm == "id3" else C45Classifier(**params)
    with status(f"training {algorithm} on {len(frame):,} rows", quiet):
        tree = learner.fit(X, frame[target]).tree_
    tree.class_attribute = target
    return tree


def _hierarchies(path: Path | None, dataset: str | None) -> dict | None:
    from ppdm.data.hierarchy import adult_hierarchies, load_hierarchies

    if path is not None:
        return load_hierarchies(path)
    return adult_hierarchies() if dataset == "adult" else None


def _print_result(result: DefenseResult, top: int, class_attribute: str | None = None, test: pd.DataFrame | None = None) -> None:
    from ppdm.report.not_audited import is_noisy, noisy_sentence

    frame = result.frontier
    console.print(result.threat.describe(), highlight=False)
    for note in result.threat.notes():
        console.print(note, highlight=False)
    by = "certain = by the audits run: maximum entropy, the leaf-reading homogeneity attack and the attacker ppdm audit reports"
    if result.target.needs_membership:
        by = ("" if not result.target.needs_attacks else by + "; ") + "membership = the membership audit over the training rows and the non-members"
    console.print(f"target: {result.target.describe()} ({by}): {result.target.to_text()}", highlight=False)
    console.print(_accuracy_line(result), highlight=False)
    base = result.unprotected
    console.print(f"unprotected model: {_line(base, result)}", highlight=False)
    dp = frame[(frame["family"] == "dp") & frame["accuracy"].notna()]
    if not dp.empty:
        best = dp.loc[dp["accuracy"].idxmax()]
        console.print(f"best DP baseline: {best['label']}: {_line(best, result)}", highlight=False)
    chosen = result.chosen_row()
    if chosen is None:
        console.print("no candidate meets the target", highlight=False)
    else:
        console.print(f"chosen: {chosen['label']}: {_line(chosen, result)}", highlight=False)
    for line in _majority_lines(result, class_attribute, test, chosen):
        console.print(f"  {line}", highlight=False)
    if chosen is not None:
        if str(chosen["publish"]).startswith("predicted "):
            console.print(
                f"  publish the model's {str(chosen['publish']).removeprefix('predicted ')} through a service, not the model itself "
                "(--out writes the model the service runs: keep it private)",
                highlight=False,
            )
    audited = int((frame["status"] == "audited").sum())
    failed = frame[frame["status"].str.startswith("failed")]
    console.print(
        f"{len(frame)} candidates, {audited} audited, {len(failed)} failed, {len(result.unfinished)} unfinished "
        f"(time budget {result.time_budget:g} s), in {result.seconds:.1f} s",
        highlight=False,
    )
    if result.unfinished:
        console.print("  unfinished: " + "; ".join(result.unfinished), highlight=False)
    noisy = [row.label for row in failed.itertuples(index=False) if is_noisy(row.status)]
    if noisy:
        console.print(f"  {noisy_sentence(noisy)}", highlight=False)
    for row in failed.itertuples(index=False):
        if not is_noisy(row.status):
            console.print(f"  {row.label}: {row.status}", highlight=False)
    _print_table(result, top)


def _accuracy_line(result: DefenseResult) -> str:
    """Which rows every accuracy printed was measured on, and which the candidates were fitted on."""
    split = result.held_out
    if split is not None:
        how = f"stratified by {split['by']!r}" if split["stratified"] else "not stratified (a class has fewer than two rows)"
        again = "; the input model fitted again on them with its learner (--test keeps it as it is)" if split["refitted"] else ""
        return (
            f"accuracy: held-out, on {split['rows']:,} of the {split['of']:,} rows ({100 * split['share']:g} %, {how}, seed {split['seed']}); "
            f"every candidate fitted and audited on the other {split['training_rows']:,}{again}"
        )
    if result.accuracy_on == "test":
        return "accuracy: on the test rows given (--test or the bundled test split); candidates fitted and audited on the training rows"
    return "accuracy: training accuracy, on the rows every candidate was fitted on (--test-size 0): it flatters a model that memorises them"


def _print_next(result: DefenseResult, out: Path, rows: Path | None, frontier_file: Path | None, non_members: pd.DataFrame | None = None) -> None:
    """How to audit what will be published, against the same target: a membership target's audit
    reads the candidates (the rows the choice was fitted on, members, and the non-members), written
    beside ``out`` so that the command printed runs as it is."""
    frontier = f" --frontier {frontier_file}" if frontier_file is not None else ""
    if result.target.needs_membership and non_members is not None and result.train is not None:
        import pandas as pd

        from ppdm.files import write_atomic

        candidates = out.with_name(out.stem + ".candidates.csv")
        table = pd.concat([result.train.assign(member=True), non_members.assign(member=False)], ignore_index=True)
        write_atomic(candidates, table.to_csv(index=False))
        console.print(
            f"wrote {candidates} ({len(result.train):,} members: the rows the choice was fitted on; {len(non_members):,} non-members: --population)",
            highlight=False, markup=False,
        )
        console.print(
            f"next: audit the membership of what you publish against the same target: ppdm audit --membership --model {out} "
            f"--population {candidates} --target '{result.target.to_text()}'{frontier} --report after.html --record release.json",
            highlight=False, markup=False,
        )
        if not result.target.needs_attacks:
            return
    fitted = result.held_out["training_rows"] if result.held_out is not None else None
    data = f" --data {rows}" if rows is not None else " --data TRAINING_ROWS.csv"
    if rows is None and fitted is not None:
        data = f" --data FITTED_ROWS.csv (the {fitted:,} rows the candidates were fitted on: write them with --train-out)"
    console.print(
        f"next: audit what you publish under the same threat model and target: ppdm audit --model {out}{data} ... "
        f"--target '{result.target.to_text()}'{frontier} --report after.html --record release.json",
        highlight=False, markup=False,
    )


def _line(row: Any, result: DefenseResult) -> str:
    measures = ", ".join(f"{m.name} {_fmt(m.name, row[m.name])}" for m in result.target.measures)
    meets = "meets the target" if row["meets_target"] else "misses the target" + _misses(row, result)
    return f"{result.accuracy_on} accuracy {row['accuracy']:.4f}, {measures} ({meets}; publishes {row['publish']})"


def _misses(row: Any, result: DefenseResult) -> str:
    """Every measure a candidate misses, with its value and limit (``: certain 12 > 0, confident
    3.10 % > 1.00 %``); a measure not measured says so."""
    out = []
    for m in result.target.measures:
        value = float(row[m.name]) if row.get(m.name) is not None else math.nan
        if math.isnan(value):
            out.append(f"{m.name} not measured")
        elif not m.meets(value):
            out.append(f"{m.name} {_fmt(m.name, value)} {'>' if m.higher_is_riskier else '<'} {_fmt(m.name, m.limit)}")
    return f": {', '.join(out)}" if out else ""


def _majority_lines(result: DefenseResult, class_attribute: str | None, test: pd.DataFrame | None, chosen: Any) -> list[str]:
    """The accuracy of always guessing the most frequent class of the rows the candidates were
    fitted on, measured on the rows the accuracies were (the held-out part when the search held one
    out): the baseline of every accuracy printed; and a warning when the chosen model does not beat it."""
    from ppdm.check.gap import no_better_than_majority

    train = result.train
    if class_attribute is None or train is None or class_attribute not in train.columns:
        return []
    majority = train[class_attribute].value_counts().idxmax()
    held = result.held_out or {}
    if "majority_share" in held:
        share, rows, where = float(held["majority_share"]), int(held["rows"]), f"the {int(held['rows']):,} held-out rows the accuracies are measured on"
    else:
        on = test if test is not None and class_attribute in test.columns else train
        where = "the same rows" if on is not train else "the rows the candidates were fitted on"
        share, rows = (float((on[class_attribute].astype(str) == str(majority)).mean()) if len(on) else math.nan), len(on)
    lines = [f"majority class: always guessing {str(majority)!r} is right for {share:.4f} of {where} (the accuracy any model must beat)"]
    accuracy = None if chosen is None else chosen.get("accuracy")
    if isinstance(accuracy, (int, float)) and not math.isnan(share) and no_better_than_majority(float(accuracy), rows, share):
        lines.append(
            f"the chosen model is no better than that ({accuracy:.4f} against {share:.4f}): it meets the target by predicting little; "
            "the release record will not release it (publish the class shares instead, or relax the target)"
        )
    return lines


def _fmt(name: str, value: float) -> str:
    if math.isnan(value):
        return "n/a"
    if name == "confident" or name.startswith("mia_tpr"):
        return f"{100 * value:.2f} %"
    return f"{value:g}"


def _print_table(result: DefenseResult, top: int) -> None:
    if not top:
        return
    frame = result.frontier[result.frontier["accuracy"].notna()]
    first = frame[(frame["label"] == result.chosen_label) | frame["pareto"]]
    rest = frame.drop(index=first.index).sort_values("accuracy", ascending=False)
    rows = [row for _, row in [*first.sort_values("accuracy", ascending=False).iterrows(), *rest.iterrows()][:top]]
    lower = ", ≥ = a lower bound: the audits stopped once the target was missed" if frame["partial"].any() else ""
    console.print(f"candidates (accuracy against {result.risk}; * = on the frontier, > = chosen{lower}):", highlight=False)
    for row in rows:
        mark = ">" if row["label"] == result.chosen_label else ("*" if row["pareto"] else " ")
        ok = "meets" if row["meets_target"] else "misses"
        risk = ("≥ " if row["partial"] else "") + _fmt(result.risk, row["risk"])
        why = "" if row["meets_target"] else f" ({_misses(row, result).removeprefix(': ')})"
        console.print(f" {mark} {row['accuracy']:.4f}  {result.risk} {risk:>9}  {ok:6}  {row['label']}{why}", highlight=False)


def _write(result: DefenseResult, out: Path | None, frontier_file: Path | None, train_out: Path | None, quiet: bool) -> None:
    from ppdm.files import write_atomic
    from ppdm.tree.model_files import save_model

    if train_out is not None and result.train is not None:
        write_atomic(train_out, result.train.to_csv(index=False))
        if not quiet:
            console.print(f"wrote {train_out} ({len(result.train):,} rows: what the candidates were fitted and audited on)")
    if frontier_file is not None:
        result.save_frontier(frontier_file)
        if not quiet:
            console.print(f"wrote {frontier_file}")
    if out is not None and result.chosen is not None:
        save_model(result.chosen, out)
        if not quiet:
            console.print(f"wrote {out}")
