"""The release section of the HTML report, drawn from the report's data alone
(:func:`ppdm.report.record.report_release`): the decision a disclosure-control team files, its
reasons, and, when a release record was written (``ppdm audit --record``), what it holds: the
inputs' SHA-256, the model and its hyper-parameters, and every attack's measures beside the
target's limits."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from ppdm.attacks.core.target import parse_target
from ppdm.report.verdict import format_value

_BADGE = {"release": "meets", "release the defended model": "meets", "do not release": "fails"}


def section_html(report: dict[str, Any]) -> str:
    """The section (empty when the report holds no release decision)."""
    release = report.get("release")
    if not release:
        return ""
    level = _BADGE.get(release["decision"], "unknown")
    reasons = "".join(f"<li>{escape(r)}</li>" for r in release["reasons"])
    record = release.get("record")
    parts = [
        '<section id="release"><h2>Release record</h2>',
        f'<div class="card {level}" data-decision="{escape(release["decision"])}"><span class="badge">{escape(release["decision"])}</span>'
        f'<p class="headline">Decision: {escape(release["decision"])}, against the target: {escape(report["target"]["describe"])} (<code>{escape(report["target"]["text"])}</code>).</p>'
        f"<ul>{reasons}</ul></div>",
    ]
    if record is not None:
        parts.append(_record_tables(record))
    else:
        parts.append(
            '<p class="note">The decision is drawn from this report\'s verdicts. For the machine-readable record to file with '
            "the release (inputs' SHA-256, model and hyper-parameters, every attack beside its baselines), run "
            "<code>ppdm audit ... --record release.json</code>.</p>"
        )
    parts.append("</section>")
    return "".join(parts)


def _size(model: dict[str, Any]) -> str:
    """A model's trees, leaves and depth ("" for a rule set, which has none)."""
    if model["trees"] is None:
        return ""
    return f"{model['trees']} tree(s), {model['leaves']:,} leaves, depth {model['depth']}, "


def _record_tables(record: dict[str, Any]) -> str:
    model = record["model"]
    params = ", ".join(f"{k}={_short(v)}" for k, v in model["hyperparameters"].items()) or "none recorded"
    facts = [
        ("ppdm", record["ppdm"]),
        ("made", record["created"]),
        ("model", f"{model['family']} ({model['algorithm'] or 'algorithm not recorded'}), {_size(model)}publishing {model['publishes']}"),
        ("hyper-parameters", params),
        ("threat model", record["threat_model"]["description"]),
    ]
    if model.get("trees_audited"):
        facts.append(("trees audited", model["trees_audited"]))
    facts += [(f"{a['role']}: {a['attack']}", line) for a in record["attacks"] if (line := _against_baseline(a))]
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in facts)
    inputs = "".join(
        f"<tr><td>{escape(i['role'])}</td><td>{escape(i['path'] or i.get('note', ''))}</td><td class=\"hash\">{escape(i['sha256'])}</td></tr>"
        for i in record["inputs"]
    )
    target = parse_target(record["target"]["text"])
    measures = "".join(
        f"<tr><td>{escape(a['role'])}: {escape(a['attack'])}</td><td>{escape(m.name)}</td><td>{escape(format_value(m, a['measures'].get(m.name)))}</td>"
        f"<td>{escape(m.describe())}</td><td>{escape(a['target'].get(m.name, 'not measured'))}</td></tr>"
        for a in record["attacks"]
        for m in target.measures
    )
    input_table = (
        f'<div class="tablewrap"><table><thead><tr><th>input</th><th>file</th><th>SHA-256</th></tr></thead><tbody>{inputs}</tbody></table></div>'
        if inputs else ""
    )  # fmt: skip
    return (
        f'<div class="tablewrap"><table class="facts"><tbody>{rows}</tbody></table></div>{input_table}'
        f'<div class="tablewrap"><table><thead><tr><th>attack</th><th>measure</th><th>value</th><th>limit</th><th>against the target</th></tr></thead>'
        f"<tbody>{measures}</tbody></table></div>"
    )


def _against_baseline(attack: dict[str, Any]) -> str | None:
    """The attack's accuracy beside the prior's, and the model-free attacker's when measured."""
    result, prior = attack["result"], attack["baselines"].get("prior") or {}
    if result.get("attacker_accuracy") is None or prior.get("accuracy") is None:
        return None
    line = f"right for {100 * result['attacker_accuracy']:.1f} % of people; the prior alone {100 * prior['accuracy']:.1f} %"
    reference = attack["baselines"].get("reference")
    if reference and reference.get("accuracy") is not None:
        line += f"; a model-free attacker on a population sample {100 * reference['accuracy']:.1f} %"
    return line


def _short(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
