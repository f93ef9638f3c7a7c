"""``ppdm audit-rules``: the maximum-entropy audit of published association rules."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ppdm.errors import PpdmError

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.attacks import AttackResult
    from ppdm.data.roles import Roles

from ppdm.cli.common import (
    _known_columns,
    _print_disclosure,
    _print_riskiest,
    _split_list,
    check_outputs,
    csv_options,
    console,
    handles_errors,
    main,
    read_csv,
    status,
)


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
    )  # type: ignore[union-attr]
    if "NAR" in rows or d["nar_patterns"]:  # type: ignore[operator]
        console.print(
            f"  NAR constraints: {d['nar_patterns']:,} unpublished patterns, {d['nar_generated']:,} generated, "
            f"{d['nar_pruned']:,} pruned (Theorem 3); {d['nar_variables']:,} variables",
            highlight=False,
        )
    console.print(
        f"  generated in {d['generation_seconds']:.2f} s, solved in {d['solver_seconds']:.2f} s ({d['status']}), largest violation {d['max_violation']:.1e}",
        highlight=False,
    )
    _print_disclosure(d, s)


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
    "--support", type=click.FloatRange(0, 1), help="Minimum support s (when mining)."
)
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1),
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
    help="Rows of the top-K individuals table.",
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
    out: Path | None,
    rules_out: Path | None,
    quiet: bool,
) -> None:
    """What an attacker infers about everyone's sensitive value from published association rules (maximum entropy, paper 004)."""
    check_outputs(out, rules_out)
    import json

    from ppdm.attacks.result import result_json
    from ppdm.attacks.rules import most_exposed, nar_impact, rules_attack
    from ppdm.data.datasets import load_dataset
    from ppdm.maxent.rule_constraints import RuleKnowledge
    from ppdm.rules import RuleSet, mine_rules

    if (dataset is None) == (data is None):
        raise PpdmError(
            "give exactly one of --dataset NAME or --data FILE.csv (the records the rules come from)"
        )
    frame, roles = (
        load_dataset(dataset, sensitive=sensitive)
        if dataset is not None
        else read_csv(data, sensitive=sensitive)
    )  # type: ignore[arg-type]
    _known_columns(frame, [sensitive])
    if rules_file is not None:
        rules = RuleSet.load(rules_file)
    else:
        if support is None or confidence is None:
            raise PpdmError(
                "give --support and --confidence to mine rules, or --rules FILE.json"
            )
        qis = _known_columns(
            frame,
            _split_list(quasi_identifiers) or _categorical_qis(frame, roles, sensitive),
        )
        with status(f"mining rules on {len(frame):,} records", quiet):
            rules = mine_rules(frame, qis, sensitive, support, confidence)
    rules = rules.published(publish or rules.publish)  # type: ignore[arg-type]
    if rules_out is not None:
        rules.save(rules_out)
    knowledge = RuleKnowledge(
        nar=not no_nar, prune=not no_prune, sa=sa_published, strict=strict
    )  # type: ignore[arg-type]
    with status("solving the maximum-entropy problem", quiet):
        result = rules_attack(rules, frame, knowledge)
        measured = result.true_codes is not None
        if measured and top and knowledge.nar:
            table, title = (
                nar_impact(
                    result,
                    rules_attack(
                        rules,
                        frame,
                        RuleKnowledge(
                            nar=False, sa=sa_published, strict=knowledge.strict
                        ),
                    ),
                    top,
                ),
                "top-K individuals: largest drop of individual divergence once NAR constraints are used (paper 004 Figure 7(a))",
            )
        elif measured and top:
            table, title = (
                most_exposed(result, top),
                "top-K individuals: smallest individual divergence",
            )
        else:
            table, title = None, ""
    if not quiet:
        _print_rules_audit(result)
        if table is not None:
            _print_individuals(
                table, list(result.groups.quasi_identifiers), result.values, title
            )
        else:
            _print_riskiest(result, top)
    if out is not None:
        payload = result.to_dict() | {
            "top_individuals": []
            if table is None
            else json.loads(table.to_json(orient="records"))
        }
        out.write_text(result_json(payload))
    if not quiet:
        for path in (rules_out, out):
            if path is not None:
                console.print(f"wrote {path}")


if __name__ == "__main__":  # pragma: no cover
    main()
