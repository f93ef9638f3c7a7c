"""``ppdm audit-rules``: the maximum-entropy audit of published association rules."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ppdm.errors import PpdmError
from ppdm.files import write_atomic

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.attacks import AttackResult
    from ppdm.data.roles import Roles

from ppdm.cli.common import (
    FiniteRange,
    _known_columns,
    _print_disclosure,
    _print_riskiest,
    _split_list,
    check_outputs,
    console,
    csv_options,
    handles_errors,
    main,
    read_csv,
    status,
)

VIEWS = ("people", "divergence", "nar-impact")
MAX_ITEMSETS = 20_000
"""Adult's 8 categorical QIs: support 0.02 allows 12,165 frequent itemsets (a solve of about a
minute on a loaded machine), 0.01 allows 23,564 (several minutes): refused until raised."""


def _categorical_qis(frame: pd.DataFrame, roles: Roles, sensitive: str) -> list[str]:
    """Default QIs for rules: the table's categorical quasi-identifiers (Adult: paper 004 Figure 4)."""
    import pandas as pd

    return [
        c
        for c in roles.quasi_identifiers
        if c != sensitive and not pd.api.types.is_numeric_dtype(frame[c])
    ]


def _print_rules_audit(result: AttackResult) -> None:
    d, s = result.details, result.summary()
    console.print(
        f"maximum-entropy audit of {d['rules']:,} published rules (support >= {d['min_support']:g}, confidence >= {d['min_confidence']:g}, "
        f"{d['publish']} values) on {result.sensitive!r}: {s['records']:,} records in {s['qi_groups']:,} QI groups",
        highlight=False,
    )
    rows = d["constraint_rows"]
    console.print(
        f"  AR constraints: {rows.get('AR', 0):,} rows over {d['ar_variables']:,} variables",
        highlight=False,
    )
    if "NAR" in rows or d["nar_patterns"]:
        console.print(
            f"  NAR constraints: {d['nar_patterns']:,} unpublished patterns, {d['nar_generated']:,} generated, "
            f"{d['nar_pruned']:,} pruned (Theorem 3); {d['nar_variables']:,} variables",
            highlight=False,
        )
    console.print(
        f"  generated in {d['generation_seconds']:.2f} s, solved in {d['solver_seconds']:.2f} s ({d['status']}), largest violation {d['max_violation']:.1e}",
        highlight=False,
    )
    explained = explain_status(d)
    if explained:
        from rich.text import Text

        console.print(Text.assemble("  ", ("note:", "yellow"), f" {explained}"))
    _print_disclosure(d, s)


def explain_status(details: dict) -> str | None:
    """What an "inaccurate" solve means for the numbers printed, in words (None when optimal)."""
    if details.get("status") != "inaccurate":
        return None
    worst = details["max_violation"]
    return (
        f"the solver stopped close to, not at, the exact answer: the estimate meets every published "
        f"rule only to within {worst:.1e} (as a share of the records), above the tolerance 1e-09. "
        f"Read the probabilities below as accurate to about {max(worst, 1e-6):.0e}: enough to rank people, "
        "not to tell 0.9999 from certain. Fewer rules (a higher --support or --confidence) or --strict closed solve more exactly."
    )


def _print_people(table: pd.DataFrame, qis: list[str], sensitive: str) -> None:
    """The people at risk: one line per (QI group, true value), the QI values on the next line."""
    console.print(
        f"people at risk: the attacker's confidence in their true {sensitive!r}, against the prior's",
        highlight=False,
    )
    console.print(f"{'#':>3}  {'confidence':>10}  {'prior':>6}  {'people':>7}  value; rows", highlight=False)
    for i, row in table.iterrows():
        more = ", ..." if row["people"] > len(row["rows"]) else ""
        console.print(
            f"{i + 1:>3}  {row['confidence']:>10.3f}  {row['prior']:>6.3f}  {row['people']:>7,}  "
            f"{row['value']}; rows {', '.join(map(str, row['rows']))}{more}",
            highlight=False,
            markup=False,
        )
        console.print("     " + ", ".join(f"{q}={row[q]}" for q in qis), highlight=False, markup=False)


def _print_individuals(
    table: pd.DataFrame, qis: list[str], values: tuple, title: str
) -> None:
    """One line of scores and distributions per QI group, its QI values on the next line."""
    names = [c.rsplit(" P(", 1)[0] for c in table.columns if " P(" in c]
    dists = list(dict.fromkeys(names))
    scores = [
        c for c in table.columns if c not in qis and " P(" not in c and c != "records"
    ]
    console.print(
        f"{title}; distributions are P({') / P('.join(map(str, values))})",
        highlight=False,
    )
    header = [
        "#".rjust(3),
        *(f"{c.split(' (')[0]:>10}" for c in scores),
        *(f"{d:>{6 * len(values) + 2}}" for d in dists),
        "records".rjust(8),
    ]
    console.print("  ".join(header), highlight=False)
    for i, row in table.iterrows():
        cells = [f"{i + 1:>3}", *(f"{row[c]:>10.3f}" for c in scores)]
        width = 6 * len(values) + 2
        cells += [
            "/".join(format(row[f"{d} P({v})"], ".3f") for v in values).rjust(width)
            for d in dists
        ]
        cells.append(f"{row['records']:>8,}")
        console.print("  ".join(cells), highlight=False, markup=False)
        console.print(
            "     " + ", ".join(f"{q}={row[q]}" for q in qis),
            highlight=False,
            markup=False,
        )


@main.command("audit-rules")
@click.option("--dataset", help="A bundled dataset: mine rules on it and audit them.")
@click.option(
    "--data",
    type=click.Path(path_type=Path),
    help="Your own CSV table instead (the records the rules come from).",
)
@click.option(
    "--rules",
    "rules_file",
    type=click.Path(path_type=Path),
    help="Audit these published rules (JSON, format ppdm-rules) instead of mining.",
)
@click.option(
    "--sensitive",
    required=True,
    help="The sensitive attribute (the right-hand side of the rules).",
)
@click.option(
    "--quasi-identifiers",
    help="Comma-separated QI columns (default: the table's categorical quasi-identifiers).",
)
@click.option(
    "--support", type=FiniteRange(0, 1), help="Minimum support s (when mining)."
)
@click.option(
    "--confidence",
    type=FiniteRange(0, 1),
    help="Minimum confidence c (when mining).",
)
@click.option(
    "--publish",
    type=click.Choice(["exact", "thresholds"]),
    help="Publish each rule's support and confidence, or only the thresholds (default: exact when mining, the file's with --rules).",
)
@click.option(
    "--no-nar",
    is_flag=True,
    help="Ignore what unpublished patterns reveal (no NAR constraints).",
)
@click.option(
    "--no-prune", is_flag=True, help="Keep every NAR constraint (no Theorem 3 pruning)."
)
@click.option(
    "--sa",
    "sa_published",
    is_flag=True,
    help="The sensitive attribute's distribution is published too.",
)
@click.option(
    "--strict",
    type=click.Choice(["integer", "closed"]),
    default="integer",
    show_default=True,
    help="Strict inequalities on whole record counts, or relaxed to <=.",
)
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Rows of the top-K table.",
)
@click.option(
    "--view",
    type=click.Choice(VIEWS),
    default="people",
    show_default=True,
    help="The top-K table: the people at risk; the smallest divergences; or the largest drops once NAR constraints are used (paper 004 Figure 7(a)).",
)
@click.option(
    "--max-itemsets",
    type=click.IntRange(min=1),
    default=MAX_ITEMSETS,
    show_default=True,
    help="Refuse to mine when the support allows more frequent itemsets than this (bounded before mining).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write every group's posterior, the summary and the top-K table as JSON.",
)
@click.option(
    "--rules-out",
    type=click.Path(path_type=Path),
    help="Write the published rules (JSON).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@csv_options
@handles_errors
def audit_rules_command(
    dataset: str | None,
    data: Path | None,
    rules_file: Path | None,
    sensitive: str,
    quasi_identifiers: str | None,
    support: float | None,
    confidence: float | None,
    publish: str | None,
    no_nar: bool,
    no_prune: bool,
    sa_published: bool,
    strict: str,
    top: int,
    view: str,
    max_itemsets: int,
    out: Path | None,
    rules_out: Path | None,
    quiet: bool,
) -> None:
    """What an attacker infers about everyone's sensitive value from published association rules (maximum entropy, paper 004)."""
    check_outputs(out, rules_out)
    import json

    from ppdm.attacks.core.result import result_json
    from ppdm.data.datasets import load_dataset
    from ppdm.data.roles import check_varies
    from ppdm.maxent.constraints.rule_constraints import RuleKnowledge
    from ppdm.rules import RuleSet

    if (dataset is None) == (data is None):
        raise PpdmError(
            "give exactly one of --dataset NAME or --data FILE.csv (the records the rules come from)"
        )
    frame, roles = (
        load_dataset(dataset, sensitive=sensitive)
        if dataset is not None
        else read_csv(data, sensitive=sensitive)
    )
    _known_columns(frame, [sensitive])
    check_varies(frame, sensitive, "sensitive", "there is nothing to infer, with or without the rules")
    if view == "nar-impact" and no_nar:
        raise PpdmError("--view nar-impact compares the audit with and without NAR constraints: drop --no-nar")
    if rules_file is not None:
        rules = RuleSet.load(rules_file)
        if rules.sensitive != sensitive:
            raise PpdmError(
                f"--sensitive {sensitive!r}: the rules of {rules_file} are about {rules.sensitive!r} (their right-hand side); "
                f"give --sensitive {rules.sensitive}, or mine rules about {sensitive!r} with --support and --confidence"
            )
    else:
        if support is None or confidence is None:
            raise PpdmError(
                "give --support and --confidence to mine rules, or --rules FILE.json"
            )
        qis = _known_columns(
            frame,
            _split_list(quasi_identifiers, "--quasi-identifiers") or _categorical_qis(frame, roles, sensitive),
        )
        if sensitive in qis:
            raise PpdmError(f"--quasi-identifiers: {sensitive!r} is the sensitive column, the right-hand side of the rules")
        _check_work(frame, qis, support, max_itemsets)
        rules = _mine(frame, qis, sensitive, support, confidence, quiet)
    rules = rules.published(publish or rules.publish)
    if rules_out is not None:
        rules.save(rules_out)
    knowledge = RuleKnowledge(
        nar=not no_nar, prune=not no_prune, sa=sa_published, strict=strict
    )
    with status(f"solving the maximum-entropy problem ({len(rules):,} rules)", quiet):
        result = _audited(rules, frame, knowledge)
        if frame.index.name is not None:  # --row-ids: report the file's ids, not positions
            result.row_ids = frame.index.to_numpy()
        table, title = _top_table(result, rules, frame, knowledge, view, top)
    if not quiet:
        _print_rules_audit(result)
        qis_shown = list(result.groups.quasi_identifiers)
        if table is not None and view == "people":
            _print_people(table, qis_shown, result.sensitive)
        elif table is not None:
            _print_individuals(table, qis_shown, result.values, title)
        else:
            _print_riskiest(result, top)
    if out is not None:
        payload = result.to_dict() | {
            "top_individuals": []
            if table is None
            else json.loads(table.to_json(orient="records"))
        }
        write_atomic(out, result_json(payload))
    if not quiet:
        for path in (rules_out, out):
            if path is not None:
                console.print(f"wrote {path}")


def _audited(rules: Any, frame: pd.DataFrame, knowledge: Any) -> AttackResult:
    """The audit of the published ``rules`` (:func:`ppdm.audit`, its rule knowledge in the options)."""
    from ppdm.api import Audit, AuditOptions, audit

    done = audit(rules, frame, options=AuditOptions(rules=knowledge), progress=False)
    assert isinstance(done, Audit) and done.estimate is not None  # a rule set's audit is its estimate
    return done.estimate


def _check_work(frame: pd.DataFrame, qis: list[str], support: float, cap: int) -> None:
    """Refuse, before mining, a support that lets the itemsets outgrow ``cap``."""
    from ppdm.rules import frequent_itemset_bound

    if support <= 0:
        raise PpdmError(
            "--support 0 makes every itemset of every attribute subset frequent, mining and solving without bound: "
            "give a support above 0 (paper 004 uses 0.1 on Adult)"
        )
    bound = frequent_itemset_bound(frame, qis, support)
    if bound > cap:
        raise PpdmError(
            f"--support {support:g} on {len(qis)} quasi-identifiers allows up to {bound:,} frequent itemsets, "
            f"above the cap of {cap:,}: raise --support, list fewer --quasi-identifiers, or raise --max-itemsets"
        )


def _mine(frame: pd.DataFrame, qis: list[str], sensitive: str, support: float, confidence: float, quiet: bool) -> Any:
    """Mine the rules, with a progress bar over the attribute subsets on a terminal."""
    from ppdm.rules import mine_rules

    if quiet or not console.is_terminal:
        return mine_rules(frame, qis, sensitive, support, confidence)
    from rich.progress import Progress

    with Progress(console=console.real(), transient=True) as bar:
        task = bar.add_task(f"mining rules on {len(frame):,} records", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return mine_rules(frame, qis, sensitive, support, confidence, progress=advance)


def _top_table(result: AttackResult, rules: Any, frame: pd.DataFrame, knowledge: Any, view: str, top: int) -> tuple[pd.DataFrame | None, str]:
    """The top-K table of ``view`` (None when the data lack the true values or ``top`` is 0)."""
    from ppdm.attacks.core.at_risk import people_at_risk
    from ppdm.attacks.models.rules import most_exposed, nar_impact
    from ppdm.maxent.constraints.rule_constraints import RuleKnowledge

    if result.true_codes is None or not top:
        return None, ""
    if view == "people":
        return people_at_risk(result, top), "people at risk"
    if view == "divergence":
        return most_exposed(result, top), "top-K individuals: smallest individual divergence"
    without = _audited(rules, frame, RuleKnowledge(nar=False, sa=knowledge.sa, strict=knowledge.strict))
    return (
        nar_impact(result, without, top),
        "top-K individuals: largest drop of individual divergence once NAR constraints are used (paper 004 Figure 7(a))",
    )


if __name__ == "__main__":  # pragma: no cover
    main()
