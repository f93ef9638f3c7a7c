"""``ppdm check``: the output checker's run on one model: policy → findings → one recommendation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ppdm.cli.common import check_outputs, command_options, console, csv_options, handles_errors, main, read_csv
from ppdm.errors import PpdmError

POLICY_HELP = "The risk appetite: a preset (default, acro, strict) or a policy YAML file (docs/checker.md). Default: default."


@main.command("check")
@click.argument("model_file", type=click.Path(path_type=Path), required=False)
@click.option("--data", type=click.Path(path_type=Path), required=True, help="The training table (CSV), with the class column.")
@click.option("--class", "--class-attribute", "class_attribute", required=True, help="The class column.")
@click.option("--holdout", type=click.Path(path_type=Path), help="Held-out rows (CSV) for the generalisation gap and the majority-class test.")
@click.option("--scores", type=click.Path(path_type=Path), help="Instead of MODEL_FILE, a model built elsewhere known by its outputs: a CSV of its predicted probabilities per --data row (one column per class, named by it, rows in order). The rules that need the model are reported not checked.")
@click.option("--holdout-scores", type=click.Path(path_type=Path), help="With --scores and --holdout: the model's predicted probabilities per held-out row.")
@click.option("--policy", default="default", show_default=True, help=POLICY_HELP)
@click.option("--sensitive", help="Also audit what the model discloses about this column (the white-box audit of the tree models ppdm reads; for any other model, or --scores, the black-box attribute attacks beside the imputation baseline): the policy's attribute target joins the findings.")
@click.option("--known", help="With --sensitive: the columns the attacker knows, comma-separated (default: every other column, the class included).")
@click.option("--exact", is_flag=True, help="With --sensitive: also prove on whole counts who is certain (proved evidence).")
@click.option("--shadows", type=click.IntRange(min=0), default=16, show_default=True, help="Shadow models for the black-box membership attacks LiRA and RMIA (0: the confidence attack alone), run with --holdout when the policy sets a membership limit.")
@click.option("--shadow-cache", type=click.Path(path_type=Path), help="A folder keeping the shadow models' confidences between runs (keyed by the model's parameters and the data).")
@click.option("--out", type=click.Path(path_type=Path), help="Write the findings and the recommendation (JSON).")
@click.option("--bundle", type=click.Path(path_type=Path), help="Write the release files (the model, the check's JSON, its report) and a manifest of hashes to this folder.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@csv_options
@handles_errors
def check_command(
    model_file: Path | None, data: Path, class_attribute: str, holdout: Path | None, scores: Path | None, holdout_scores: Path | None, policy: str,
    sensitive: str | None, known: str | None, exact: bool, shadows: int, shadow_cache: Path | None, out: Path | None, bundle: Path | None, quiet: bool,
) -> None:
    """Check a trained classifier (.skops, any model file ppdm reads, or --scores: its predicted probabilities) against a TRE's policy: structural checks and one recommendation."""
    import json

    from ppdm.attacks.membership.blackbox import BlackboxOptions
    from ppdm.check import check_model
    from ppdm.check.bundle import check_bundle, write_bundle
    from ppdm.check.model import read_checked
    from ppdm.files import ReadFiles, recording_reads, write_atomic

    command_options(class_attribute="--class")
    check_outputs(out)
    if (model_file is None) == (scores is None):
        raise PpdmError("give the model file or --scores PROBABILITIES.csv (a model known by its outputs), one of them")
    given = [p for p in (model_file, data, holdout, scores, holdout_scores) if p is not None]
    names = [*([model_file.name] if model_file else []), "check.json", "report.txt"]
    if bundle is not None:
        check_bundle(bundle, names, [*given, *([out] if out else [])])
    if shadows == 1:
        raise PpdmError("--shadows: LiRA and RMIA need at least 2 shadow models (one holding each row, one not); 0 runs the confidence attack alone")
    attacks = BlackboxOptions(shadows=shadows, cache=shadow_cache) if shadows >= 2 else BlackboxOptions(attacks=("confidence",))
    columns = None if known is None else [c.strip() for c in known.split(",") if c.strip()]
    with recording_reads() as read:
        table, _ = read_csv(data)
        held = read_csv(holdout)[0] if holdout is not None else None
        if scores is not None:
            result = check_model(None, table, class_attribute=class_attribute, holdout=held, policy=policy, scores=scores, holdout_scores=holdout_scores,
                                 membership=attacks, sensitive=sensitive, known=columns)  # fmt: skip
        else:
            checked = read_checked(model_file, table, class_attribute)
            audited = _attribute_audit(checked, table, sensitive, columns, exact, policy)
            result = check_model(checked, table, class_attribute=class_attribute, holdout=held, policy=policy, audit=audited, membership=attacks,
                                 sensitive=sensitive if audited is None else None, known=columns)  # fmt: skip
    inputs = ReadFiles(given)
    inputs.update(read)
    text = json.dumps(result.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    if not quiet:
        for line in result.lines():
            console.print(line, highlight=False, markup=False)
    if out is not None:
        write_atomic(out, text, inputs=inputs)
        if not quiet:
            console.print(f"wrote {out}", highlight=False)
    if bundle is not None:
        texts = {"check.json": text, "report.txt": "\n".join(result.lines()) + "\n"}
        referenced = {"scores": scores, **({"holdout_scores": holdout_scores} if holdout_scores else {})} if scores else {}
        copied = {model_file.name: model_file} if model_file else {}
        manifest = write_bundle(bundle, files=copied, texts=texts, referenced=referenced, policy=result.policy, inputs=inputs)
        if not quiet:
            console.print(f"wrote the bundle {bundle} ({manifest.name})", highlight=False)


def _attribute_audit(checked: Any, table: Any, sensitive: str | None, known: list[str] | None, exact: bool, policy: str) -> Any:
    """With --sensitive, ppdm's white-box audit of a tree model under the policy (``None`` for any
    other model: the checker runs the black-box attribute attacks on it)."""
    if sensitive is None or checked.ppdm_model is None:
        return None
    from ppdm.api import audit
    from ppdm.attacks.core.threat import ThreatModel

    class_known = sensitive != checked.class_attribute
    if known is not None:
        threat = ThreatModel(sensitive=sensitive, known=tuple(known), class_known=class_known)
    else:
        threat = ThreatModel(sensitive=sensitive, preset="insider", class_known=class_known)
    return audit(checked.ppdm_model, table, threat, exact=exact, policy=policy, progress=False)
