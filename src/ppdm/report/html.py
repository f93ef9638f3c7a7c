"""The report as one self-contained HTML page, drawn from the report's data alone
(:func:`ppdm.report.build.build_report`).

Everything is inline: the stylesheet, the script that builds the sortable, filterable tables
from the embedded data, and the figures as SVG; the page loads nothing from anywhere, so it
opens offline, can be mailed as one file, and prints to PDF (:mod:`ppdm.report.browser`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from typing import Any

from ppdm.attacks.core.scope import summary_scope
from ppdm.errors import check_options
from ppdm.report import membership_html, record_html, words
from ppdm.report.not_audited import is_noisy, noisy_sentence
from ppdm.report.page import PAGE_LEAVES, PAGE_MODEL_LINES, leaves_listed, lines_shown, page_attack, people_limit
from ppdm.report.persons import persons_from_report
from ppdm.report.plots import confidence_figure, exposure_figure, frontier_figure
from ppdm.report.reconcile import headline
from ppdm.report.script import JS
from ppdm.report.style import CSS
from ppdm.report.summary import baseline_extra_lines

LONG = ' class="long"'

_LEVEL = {"fails": "target not met", "meets": "target met", "unknown": "not judged"}  # unknown: a measure missing, or a part of the model read


@dataclass(frozen=True)
class HtmlOptions:
    """How :func:`render_html` draws the page: ``printed_lines``, a model longer than this many
    lines is left out of the printed page (the PDF), not of the screen (default 400)."""

    printed_lines: int = 400

    def __post_init__(self) -> None:
        check_options(self)  # a count '400' or 3.5 is refused here, naming the field


def render_html(report: dict[str, Any], options: HtmlOptions | None = None) -> str:
    """The HTML text of ``report``."""
    options = options or HtmlOptions()
    attacks = report["attacks"]
    body = [
        _header(report),
        _audited(report.get("audited")),
        _verdict_sections(report),
        _advice(report["advice"]),
        _threat_sections(report),
        *(_attack_section(a, i) for i, a in enumerate(attacks)),
        *([membership_html.section_html(report["membership"])] if report.get("membership") else []),
        _frontier(report),
        _model(report.get("model"), attacks, options.printed_lines),
        record_html.section_html(report),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(report['title'])}</title><style>{CSS}</style></head>\n<body><main>\n"
        + "\n".join(body)
        + f'\n</main>\n<script type="application/json" id="report-data">{_embedded(report)}</script>\n'
        f"<script>{JS}</script>\n</body></html>\n"
    )


def _title(attack: dict[str, Any]) -> str:
    """An attack's heading, in words (no method codes)."""
    return words.attack_title(str(attack["attack"]), str(attack["sensitive"]))


def _verdict_sections(report: dict[str, Any]) -> str:
    """The attacks' verdict cards, and the membership audit's card (:mod:`ppdm.report.membership_html`)
    beside them or, alone, in their place."""
    attacks, member = report["attacks"], report.get("membership")
    if member is None:
        return _verdicts(attacks, report["target"]["describe"], report.get("reconciled"))
    if not attacks:
        return membership_html.verdict_section(member)
    return _verdicts(attacks, report["target"]["describe"], report.get("reconciled")) + f'<section id="membership-verdict">{membership_html.verdict_card(member)}</section>'


def _threat_sections(report: dict[str, Any]) -> str:
    """The attacks' threat model, and the membership attacker's beside it or in its place."""
    attacks, member = report["attacks"], report.get("membership")
    if member is None:
        return _threats(attacks)
    if not attacks:
        return membership_html.threat_section(member)
    return _threats(attacks) + membership_html.threat_section(member, "membership-threat")


def _embedded(report: dict[str, Any]) -> str:
    """What the tables need, as JSON safe inside a ``<script>`` element."""
    keys = ("sensitive", "values", "quasi_identifiers")
    payload = {"attacks": [page_attack(a, keys, report.get("model")) for a in report["attacks"]]}
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _header(report: dict[str, Any]) -> str:
    model = report.get("model")
    what = ""
    if model is not None and not report.get("audited"):  # the first card says it otherwise
        trees = model["trees"]
        size = f"{trees[0]['nodes']:,} nodes, {trees[0]['leaves']:,} leaves" if len(trees) == 1 else f"{words.trees(len(trees))}"
        what = f"{model['algorithm'] or model['kind']} predicting {model['class_attribute']!r} ({size}), publishing {model['disclosure']}. "
    links = ['<a href="#audited">what was audited</a>', '<a href="#verdict">verdict</a>', '<a href="#advice">what to do next</a>', '<a href="#threat">threat model</a>']
    links += [f'<a href="#attack-{i}">{escape(_title(a))}</a>' for i, a in enumerate(report["attacks"])]
    links += ['<a href="#membership">membership</a>'] if report.get("membership") else []
    links += ['<a href="#frontier">defense search</a>', '<a href="#model">model</a>']
    links += ['<a href="#release">release record</a>'] if report.get("release") else []
    return (
        f"<header><h1>{escape(report['title'])}</h1>"
        f'<p class="meta">{escape(what)}Made by ppdm {escape(str(report["ppdm"]))}. This report holds the sensitive values '
        "of the people audited: keep it as you keep the data.</p>"
        f"<nav>{''.join(links)}</nav></header>"
    )


def _audited(facts: list[dict[str, str]] | None) -> str:
    """The first card: what was audited (:func:`ppdm.report.audited.audited_facts`), before any verdict."""
    if not facts:
        return ""
    rows = "".join(f'<tr><th scope="row">{escape(f["label"])}</th><td>{escape(f["text"])}</td></tr>' for f in facts)
    return f'<section id="audited"><h2>What was audited</h2><div class="card scope"><table class="facts">{rows}</table></div></section>'


def _reconciled(together: dict[str, Any] | None) -> str:
    """The estimate and the proof in one headline (:mod:`ppdm.report.reconcile`)."""
    if together is None:
        return ""
    head, lines = headline(together)
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return f'<div class="card both" id="reconciled"><p class="headline">{escape(head)}</p><ul>{items}</ul></div>'


def _verdicts(attacks: list[dict[str, Any]], target: str, together: dict[str, Any] | None = None) -> str:
    cards = [_reconciled(together)]
    for i, a in enumerate(attacks):
        v = a["verdict"]
        lines = "".join(f"<li>{escape(line)}</li>" for line in v["lines"])
        caveats = _warnings(a["summary"])
        caveats += _baselines(a["summary"])
        cards.append(
            f'<div class="card {v["level"]}" data-verdict="{v["level"]}"><span class="badge">{_LEVEL[v["level"]]}</span>'
            f'<a href="#attack-{i}">{escape(_title(a))}</a>'
            f'<p class="headline">{escape(v["headline"])}</p><ul>{lines}</ul>{caveats}</div>'
        )
    return f'<section id="verdict"><h2>Verdict</h2><p class="note">Target: {escape(target)}.</p>{"".join(cards)}</section>'


def _warnings(summary: dict[str, Any]) -> str:
    """The audit's caveats: a part of the model read (the summary's
    :class:`~ppdm.attacks.core.scope.Scope`, in the first card's words), a sample, a note, an exact
    audit that did not run. A model read whole warns of nothing."""
    scope = summary_scope(summary)
    notes = [scope.sentence().rstrip(".")] if scope is not None and not scope.whole else []
    notes += [str(summary[k]) for k in ("sample", "note", "exact_not_run") if summary.get(k)]
    return "".join(f'<p class="note warn">{escape(n)}.</p>' for n in notes)


def _details(text: object) -> str:
    """The long reason behind a note (a joint table's cell counts), folded: shown once, on asking."""
    if not text:
        return ""
    return f'<details class="note"><summary>why, in detail</summary><p>{escape(str(text))}.</p></details>'


def _baselines(summary: dict[str, Any]) -> str:
    """The strongest attacker measured, the model-free attacker and the control, when measured."""
    lines = [line.strip() for line in baseline_extra_lines(summary)]
    if not lines:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return f'<p class="note">Against simpler attackers and people outside the training set:</p><ul class="baselines">{items}</ul>'


def _advice(items: list[str]) -> str:
    steps = "".join(f"<li>{escape(s)}</li>" for s in items) or "<li>Nothing to do.</li>"
    return f'<section id="advice"><h2>What to do next</h2><ol class="advice">{steps}</ol></section>'


def _threats(attacks: list[dict[str, Any]]) -> str:
    seen: dict[str, dict[str, Any]] = {}
    for a in attacks:
        seen.setdefault(a["threat"]["line"], a["threat"])
    parts = []
    for threat in seen.values():
        story = f"<p><strong>{escape(threat['preset'] or 'declared')} attacker:</strong> {escape(threat['story'])}.</p>" if threat["story"] else ""
        sentences = "".join(f"<li>{escape(s)}</li>" for s in threat["sentences"])
        parts.append(f'{story}<ul>{sentences}</ul><p class="note">As the audit printed it: <code class="threatline">{escape(threat["line"])}</code></p>')
    return '<section id="threat"><h2>Threat model</h2>' + "".join(parts) + "</section>"


def _attack_section(a: dict[str, Any], i: int) -> str:
    persons = persons_from_report(a)
    has_truth = persons.truth is not None
    conf_caption = (
        "Each point of the orange curve is the share of people whom the attacker holds at that confidence or more in "
        "their true value; the blue dashed curve is the same for an attacker who knows only how often each value occurs. "
        "The gap is what the model gives away."
        if has_truth
        else "The true values were not given: the curve shows the attacker's confidence in their own guess."
    )
    s = a["summary"]
    facts = f"{words.people(s['records'])} in {s['qi_groups']:,} groups of known values"
    pairs = a["groups"].get("leaf_pairs")
    forest = pairs is not None and pairs["tree"] is not None
    example, example_words = ("tree:0 leaf:7", "leaf 7 of tree 0") if forest else ("leaf:7", "leaf 7")
    notes = _details(s.get("note_details"))  # the caveats themselves are on the verdict card, once
    return (
        f'<section id="attack-{i}" class="attack"><h2>{escape(_title(a))}</h2><p class="note">{escape(facts)}; '
        f'known columns: {escape(", ".join(a["quasi_identifiers"]) or "none")}.</p>{notes}'
        f"<h3>Confidence in the true value</h3><figure>{confidence_figure(persons, f'fig-confidence-{i}', _title(a))}"
        f"<figcaption>{escape(conf_caption)}</figcaption></figure>"
        f"<h3>Exposure by leaf</h3><figure>{exposure_figure(a['exposure'], f'fig-exposure-{i}', _title(a))}"
        "<figcaption>The leaves whose people are most exposed; click a bar or a name to see the leaf in the model.</figcaption></figure>"
        f'<h3 id="leaves-{i}">Per leaf: which leaf causes which disclosure</h3>'
        f'<p class="note">{escape(_leaf_note(pairs))}{escape(_listed(len(a["exposure"]), PAGE_LEAVES, "leaves", "most exposed"))}</p>'
        f'<div data-table="leaves" data-attack="{i}"></div>'
        f'<h3 id="people-{i}">Per person</h3>'
        '<p class="note">One row per person, with the row of your CSV (0 = the first data row). Click a column to sort; '
        f"type to filter ({escape(example)} lists the people who can reach {escape(example_words)})."
        f"{escape(_listed(len(a['people']['row']), people_limit(a), 'people', 'most at risk'))}</p>"
        f'<div data-table="people" data-attack="{i}"></div></section>'
    )


def _listed(total: int, most: int, noun: str, which: str) -> str:
    """What the page's table leaves to the JSON, in a sentence (nothing when it lists everyone)."""
    if total <= most:
        return ""
    return (
        f" This page lists the {most:,} {noun} {which} of {total:,}, to stay small enough to send; the report's JSON "
        f"written beside it (NAME.report.json) holds every one of them."
    )


def _leaf_note(pairs: dict[str, Any] | None) -> str:
    if pairs is None:
        return (
            "This result has no leaf pairs (a rule set's audit, or a file written by an older ppdm: audit again to "
            "get them): one row per provenance text, as the attack wrote it."
        )
    if pairs["tree"] is not None:
        return (
            "One row per leaf of each tree: its tree and leaf, its rule and what the model publishes about it. A person is "
            "counted under the leaf their known values lead to in every tree (several leaves of a tree when they lack a value "
            'it splits on), so a column does not add up to people; "decided by it alone" counts those who can '
            "reach only this leaf in its tree. Click a leaf to see it in the model."
        )
    return (
        'A person is counted under every leaf their known values can lead to, so a column does not add up to people '
        '(the verdict counts each person once); "decided by it alone" counts those who can reach this leaf only. '
        "Click a leaf to see it in the model."
    )


def _frontier(report: dict[str, Any]) -> str:
    front = report.get("frontier")
    if not front or not front["points"]:
        return (
            '<section id="frontier"><h2>Defense search</h2><p>No defense search was given. <code>ppdm defend</code> '
            "audits pruned, retrained and less-published candidates under the same threat model and plots their accuracy "
            "against their risk here.</p></section>"
        )
    target = _limit_of(report["target"], front["risk"])
    rows = "".join(_frontier_row(p) for p in front["points"])
    return (
        f'<section id="frontier"><h2>Defense search: {escape(front.get("accuracy", "accuracy"))} against risk</h2>'
        + (f'<p class="note">{escape(front["held_out"])}</p>' if front.get("held_out") else "")
        + f"<figure>{frontier_figure(front['points'], front['risk'], 'fig-frontier', target, front.get('accuracy', 'accuracy'))}"
        "<figcaption>Every candidate the search audited; the grey line joins those no other candidate beats on both "
        "accuracy and risk; green: the candidate chosen.</figcaption></figure>"
        f'<div class="tablewrap"><table><thead><tr><th>candidate</th><th>{escape(front.get("accuracy", "accuracy"))}</th><th>{escape(front["risk"])}</th><th></th></tr>'
        f"</thead><tbody>{rows}</tbody></table></div>{_not_audited(front.get('not_audited', []))}</section>"
    )


def _limit_of(target: dict[str, Any], risk: str) -> float | None:
    """The target's limit on the frontier's risk axis: the measure of that name (a share of
    people at a confidence: the ``confident`` measure), else none."""
    measures = {m["name"]: m["limit"] for m in target.get("measures", [])}
    if risk in measures:
        return float(measures[risk])
    if "confidence" in risk and "confident" in measures:
        return float(measures["confident"])
    return None


def _not_audited(entries: list[dict[str, str]]) -> str:
    """The candidates the search could not audit: the ε-DP ones explained once, the others with their reason."""
    if not entries:
        return ""
    noisy = [e for e in entries if is_noisy(e["status"])]
    others = [e for e in entries if e not in noisy]
    out = ""
    if noisy:
        out += f'<p class="note" id="not-audited-dp">{escape(noisy_sentence(e["label"] for e in noisy))}</p>'
    if others:
        items = "".join(f"<li>{escape(e['label'])}: {escape(e['status'])}</li>" for e in others)
        out += f"<p>Not audited ({len(others)}), so not plotted:</p><ul>{items}</ul>"
    return out


def _model(model: dict[str, Any] | None, attacks: list[dict[str, Any]], printed_lines: int) -> str:
    if model is None:
        return '<section id="model"><h2>The published model</h2><p>No model was given: leaf ids cannot be shown in it.</p></section>'
    exposed = {
        r["anchor"] for a in attacks for r in a["exposure"] if r.get("anchor") and (r["certain_right"] or r.get("beyond") or r.get("high"))
    }
    n_lines = sum(len(t["lines"]) for t in model["trees"])
    listed = leaves_listed(attacks) if n_lines > PAGE_MODEL_LINES else None
    parts, shown = [], 0
    for tree in model["trees"]:
        lines = tree["lines"] if listed is None else lines_shown(tree, listed.get(tree["index"] or 0, set()))
        if lines is None:
            continue
        shown += len(lines)
        title = "" if tree["index"] is None else f"<h3>tree {tree['index']}</h3>"
        parts.append(f'{title}<pre class="tree">{"".join(_line(line, line["anchor"] in exposed) for line in lines)}</pre>')
    long = shown > printed_lines
    note = (
        f'<p class="printnote">The model has {n_lines:,} lines, too many to print: open the HTML page, or run ppdm show.</p>'
        if long
        else ""
    )
    if listed is not None:
        trees = "" if len(model["trees"]) == 1 else f" in {len(parts):,} of its {words.trees(len(model['trees']))}"
        note += (
            f'<p class="note">The model has {n_lines:,} lines, too many for a page that can be sent: shown here are the '
            f"{shown:,} on the paths to the leaves the per-leaf tables list{trees}. <code>ppdm show</code> prints it whole.</p>"
        )
    return (
        f'<section id="model"{LONG if long else ""}><h2>The published model</h2><p class="note">As <code>ppdm show</code> '
        "prints it: every line ends with the id of its node, the ids the tables and figures name. Leaves in red expose "
        "someone.</p>" + note + "".join(parts) + "</section>"
    )


def _frontier_row(p: dict[str, Any]) -> str:
    chosen = ' class="chosen"' if p["chosen"] else ""
    return (
        f'<tr{chosen}><td>{escape(p["label"])}</td><td class="num">{100 * p["accuracy"]:.2f} %</td>'
        f'<td class="num">{p["risk"]:.4g}</td><td>{"chosen" if p["chosen"] else ""}</td></tr>'
    )


def _line(line: dict[str, Any], exposed: bool) -> str:
    cls = ' class="exposed"' if exposed else ""
    return f'<span id="{escape(line["anchor"])}"{cls}>{escape(line["text"])}</span>'


#: The stylesheet's rules the first cards need, for a page that is not the report's (a notebook):
#: the colours, the cards, their badges and the facts table, each scoped to ``.ppdm-cards``.
_CARD_RULES = (".card", "table.facts", ".badge", ".fails", ".headline", ".note", ".threatline")


def card_style() -> str:
    """The stylesheet's rules the first cards need, scoped to ``.ppdm-cards`` (a notebook's page keeps its own)."""
    rules = [line for line in CSS.splitlines() if line.startswith(_CARD_RULES)]
    colours = next(line for line in CSS.splitlines() if line.startswith(":root")).replace(":root", ".ppdm-cards", 1)
    return "\n".join([colours, *(f".ppdm-cards {line}".replace("} .", "} .ppdm-cards .") for line in rules)])


def cards_html(report: dict[str, Any]) -> str:
    """The report's first cards, what was audited and the verdict, as an HTML fragment for a
    notebook's cell (``Audit._repr_html_``): the same cards :func:`render_html` draws, with the
    stylesheet's rules they need (:func:`card_style`)."""
    return f'<div class="ppdm-cards"><style>{card_style()}</style>{_audited(report.get("audited"))}{_verdict_sections(report)}</div>'
