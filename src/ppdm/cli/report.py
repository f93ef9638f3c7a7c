"""``ppdm report``: the HTML report (and its JSON, and a PDF) of saved attack results."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.cli.common import check_outputs, console, handles_errors, main, status
from ppdm.errors import PpdmError
from ppdm.files import same_file

if TYPE_CHECKING:
    from ppdm.attacks import AttackResult
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.tree import Forest, Tree


TARGET_HELP = (
    "The privacy target the verdicts judge against, measures joined by commas: certain=N, confident=X@C (a share X, or X%, "
    "at confidence >= C), lift_over_reference<=X, members_proved=N, mia_tpr@F<=X (docs/defend.md). Default: the target "
    "the audit was run with (stored in its JSON), else the defense search's (--frontier), else certain=0,confident=0.01@0.9."
)


def check_report_outputs(out: Path, json_out: Path | None, pdf: Path | None, *inputs: Path | None, json_option: bool = True) -> None:
    """Refuse, before any work, a report path that is not HTML, cannot be written, or would
    overwrite an input or another output (the report's JSON goes beside the page by default;
    ``json_option``: the command has ``--json`` to put it elsewhere, and the message says so)."""
    from ppdm.report.write import check_report_paths, json_path_for

    check_report_paths(out, pdf)
    data = json_out if json_out is not None else json_path_for(out)
    for other in inputs:
        if other is not None and same_file(other, data):
            raise PpdmError(f"{data}: the report's JSON would overwrite it; give the report another name" + (" or --json" if json_option else ""))
    check_outputs(out, data, pdf)


def write_html_report(
    results: list[AttackResult | dict[str, Any]],
    model: Tree | Forest | None,
    threat: ThreatModel | None,
    out: Path,
    json_out: Path | None = None,
    pdf: Path | None = None,
    frontier: Any = None,
    title: str | None = None,
    quiet: bool = False,
    membership: Any = None,
    target: Any = None,
    record: dict[str, Any] | None = None,
) -> None:
    """Build, write and announce a report (shared by ``ppdm report`` and ``ppdm audit --report``;
    ``membership``: a membership audit, in its own section; ``target``: what the verdicts judge
    against (default: the audits' own, :func:`ppdm.report.build.report_target`); ``record``: the
    release record shown in its section)."""
    from ppdm.report import build_report, write_report

    with status("writing the report", quiet):
        report = build_report(results, model, threat, frontier, title=title, membership=membership, target=target, record=record)
        data = write_report(report, out, json_out, pdf)
    if not quiet:
        console.print(f"target: {report['target']['describe']} ({report['target']['text']})", highlight=False)
        for attack in report["attacks"]:
            console.print(f"{attack['name']}: {attack['verdict']['headline']}", highlight=False)
        if report.get("membership"):
            console.print(f"membership: {report['membership']['verdict']['headline']}", highlight=False)
        if record is None:  # a release record announces its decision itself
            console.print(f"release decision: {report['release']['decision']} ({report['release']['reasons'][0]})", highlight=False)
        written = ", ".join(str(p) for p in (out, data, pdf) if p is not None)
        console.print(f"wrote {written}", highlight=False)


@main.command(
    "report",
    epilog="RESULTS are attack results (ppdm audit --out, ppdm attack --out), or one report's own JSON (NAME.report.json, "
    "written beside every page) to draw its page, and with --pdf its PDF, again.",
)
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--model", "model_file", type=click.Path(path_type=Path), help="The published tree or forest (JSON) the results audit: its leaves get linked.")
@click.option("--threat", "threat_file", type=click.Path(path_type=Path), help="The threat model (YAML) the audit used, for its story in words.")
@click.option("--frontier", "frontier_file", type=click.Path(path_type=Path), help="A defense search's candidates (JSON: [[accuracy, risk, label], ...]).")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="The HTML page to write.")
@click.option("--json", "json_out", type=click.Path(path_type=Path), help="Where to write the report's data (default: beside --out, as NAME.report.json).")
@click.option("--pdf", type=click.Path(path_type=Path), help="Also print the page to this PDF (headless Chromium).")
@click.option("--title", help="The report's title.")
@click.option("--target", help=TARGET_HELP)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@handles_errors
def report_command(
    results: tuple[Path, ...],
    model_file: Path | None,
    threat_file: Path | None,
    frontier_file: Path | None,
    out: Path,
    json_out: Path | None,
    pdf: Path | None,
    title: str | None,
    target: str | None,
    quiet: bool,
) -> None:
    """A report a privacy officer reads: verdicts, who is exposed by which leaf, and what to do next (HTML, JSON, PDF)."""
    from ppdm.report.load import load_saved

    saved = [load_saved(path) for path in results]
    if any(kind == "regression" for kind, _ in saved):
        _regression(results, saved, model_file, threat_file, frontier_file, target, out, json_out, pdf, title, quiet)
        return
    if any(kind == "report" for kind, _ in saved):
        _redraw(results, saved, model_file, threat_file, frontier_file, out, json_out, pdf, title, quiet)
        return
    check_report_outputs(out, json_out, pdf, *results, model_file, threat_file, frontier_file)
    from ppdm.attacks.core.target import parse_target
    from ppdm.attacks.core.threat import load_threat
    from ppdm.report.load import load_frontier, load_model

    loaded = [data for _, data in saved]
    model = load_model(model_file) if model_file is not None else None
    if model is not None:
        from ppdm.report.build import check_same_model

        for path, result in zip(results, loaded):
            try:
                check_same_model(result, model)
            except PpdmError as exc:
                raise PpdmError(f"{path}: {exc} ({model_file})") from None
    threat = load_threat(threat_file) if threat_file is not None else None
    frontier = load_frontier(frontier_file) if frontier_file is not None else None
    chosen = parse_target(target) if target is not None else None
    write_html_report(loaded, model, threat, out, json_out, pdf, frontier, title, quiet, target=chosen)


def _regression(
    results: tuple[Path, ...], saved: list[tuple[str, dict[str, Any]]], model_file: Path | None, threat_file: Path | None,
    frontier_file: Path | None, target: str | None, out: Path, json_out: Path | None, pdf: Path | None, title: str | None, quiet: bool,
) -> None:
    """``ppdm report REGRESSION.json --out NAME.html``: a regressor's interval page from its audit's
    JSON (or drawn again from its report's JSON); it stands alone."""
    from ppdm.report.intervals import redraw_interval_report
    from ppdm.report.write import check_report_paths

    source = next(path for path, (kind, _) in zip(results, saved) if kind == "regression")
    if len(results) > 1:
        raise PpdmError(f"{source}: a regressor's audit makes a report on its own; give it alone")
    given = [name for name, v in (("--model", model_file), ("--threat", threat_file), ("--frontier", frontier_file), ("--target", target), ("--pdf", pdf)) if v is not None]
    if given:
        raise PpdmError(f"{source}: a regressor's report is drawn from its audit's JSON alone; leave out {given[0]}")
    check_report_paths(out)
    for written in (out, json_out):
        if written is not None and same_file(written, source):
            raise PpdmError(f"{written}: would overwrite the JSON the report is drawn from; give another name")
    check_outputs(out, json_out)
    with status("drawing the report", quiet):
        redraw_interval_report(saved[0][1], out, json_out, title=title, source=str(source))
    if not quiet:
        console.print(f"wrote {out}", highlight=False)


def _redraw(
    results: tuple[Path, ...], saved: list[tuple[str, dict[str, Any]]], model_file: Path | None, threat_file: Path | None,
    frontier_file: Path | None, out: Path, json_out: Path | None, pdf: Path | None, title: str | None, quiet: bool,
) -> None:
    """``ppdm report NAME.report.json --out NAME.html``: the saved report's page (and PDF) drawn
    again from its JSON alone; everything it shows is in that JSON, so nothing else is read."""
    from ppdm.report.write import check_report_paths, redraw_report

    source = next(path for path, (kind, _) in zip(results, saved) if kind == "report")
    if len(results) > 1:
        raise PpdmError(f"{source}: a report's JSON is drawn again on its own; give it alone (or the audits' results, to make a new report)")
    given = [name for name, path in (("--model", model_file), ("--threat", threat_file), ("--frontier", frontier_file)) if path is not None]
    if given:
        raise PpdmError(f"{source}: a report's JSON already holds its model, threat model and frontier; {given[0]} goes with audit results")
    check_report_paths(out, pdf)
    for written in (out, json_out, pdf):
        if written is not None and same_file(written, source):
            raise PpdmError(f"{written}: would overwrite the report's JSON it is drawn from; give another name")
    check_outputs(out, json_out, pdf)
    report = dict(saved[0][1])
    if title is not None:
        report["title"] = title
    with status("drawing the report", quiet):
        redraw_report(report, out, json_out, pdf, source=str(source))
    if not quiet:
        for attack in report["attacks"]:
            headline = attack.get("verdict", {}).get("headline") if isinstance(attack.get("verdict"), dict) else None
            if headline:
                console.print(f"{attack.get('name', 'attack')}: {headline}", highlight=False)
        names = ", ".join(str(p) for p in (out, json_out, pdf) if p is not None)
        console.print(f"wrote {names}", highlight=False)
