"""The membership section of the HTML report, drawn from its data alone
(:func:`ppdm.report.membership.membership_section`): the verdict card, the counts, the ROC curve
(or, without the truth, the spread of P(member)) and the riskiest leaves, linked to the model."""

from __future__ import annotations

from html import escape
from typing import Any

from ppdm.report import words
from ppdm.report.membership_plots import p_member_figure, roc_figure
from ppdm.report.verdict import pct

_LEVEL = {"fails": "target not met", "meets": "target met", "unknown": "not measured"}

TITLE = "Membership: who was in the training set"


def verdict_card(section: dict[str, Any]) -> str:
    """The membership verdict as one card, like the attacks' cards."""
    v = section["verdict"]
    lines = "".join(f"<li>{escape(line)}</li>" for line in v["lines"])
    note = section["summary"].get("note")
    caveat = f'<p class="note warn">{escape(str(note))}.</p>' if note else ""
    return (
        f'<div class="card {v["level"]}" data-verdict="{v["level"]}"><span class="badge">{_LEVEL[v["level"]]}</span>'
        f'<a href="#membership">{escape(TITLE)}</a><p class="headline">{escape(v["headline"])}</p><ul>{lines}</ul>{caveat}</div>'
    )


def verdict_section(section: dict[str, Any]) -> str:
    """The verdict section of a report that holds a membership audit only."""
    return (
        f'<section id="verdict"><h2>Verdict</h2><p class="note">Target: {escape(section["target"]["describe"])}.</p>'
        f"{verdict_card(section)}</section>"
    )


def threat_section(section: dict[str, Any], section_id: str = "threat") -> str:
    """What the membership attacker knows, as the audit printed it."""
    s = section["summary"]
    return (
        f'<section id="{section_id}"><h2>Threat model</h2><p><strong>membership attacker:</strong> holds the published model and a '
        "population of candidates, some of them training records; for each candidate they ask whether it was one.</p>"
        f"<ul><li>{escape(str(s.get('threat', '')))}.</li><li>Published counts read: {escape(str(s.get('trees_used', '')))}.</li></ul></section>"
    )


def section_html(section: dict[str, Any]) -> str:
    """The membership section: counts, figure, riskiest leaves, proved members' rows."""
    s = section["summary"]
    roc = section.get("roc")
    if roc is not None:
        figure = (
            f"<h3>ROC curve</h3><figure>{roc_figure(roc, s, 'fig-membership-roc')}<figcaption>{escape(_roc_caption(roc))}</figcaption></figure>"
        )
    else:
        figure = (
            f"<h3>P(member)</h3><figure>{p_member_figure(section['p_member'], s['baseline_member_share'], 'fig-membership-p')}"
            "<figcaption>The truth was not given (no member column): the share of candidates the attacker holds at each "
            "P(member) or more, against an attacker without the model, who holds everyone at the member share.</figcaption></figure>"
        )
    seconds = f" Audited in {s['seconds']:.1f} s." if s.get("seconds") is not None else ""
    trained = f"the model was trained on {words.records(s['published_members'])}" if s.get("white_box", True) else "the model publishes no training count"
    return (
        f'<section id="membership" class="attack"><h2>{escape(TITLE)}</h2>'
        f'<p class="note">{words.candidates(s["candidates"])}; {trained}.{seconds}</p>'
        f"{_counts(s)}{_attacks(section.get('attacks') or [])}{figure}{_leaves(section['leaves'], _cells_kind(section))}{_proved_rows(section['proved_member_rows'])}</section>"
    )


def _attacks(rows: list[dict[str, Any]]) -> str:
    """The table of attacks: each one's AUC and TPR at 0.1 % and 1 % FPR, its control, the baseline."""
    if len(rows) < 2:
        return ""

    def cell(v: Any) -> str:
        return "–" if v is None else f"{v:.3f}"

    keys = ("auc", "tpr@0.1%", "tpr@1%", "control_auc", "control_tpr@1%")
    body = "".join(
        f"<tr><td>{escape(str(r['attack']))}</td><td>{escape(str(r.get('paper', '')))}</td>" + "".join(f"<td>{cell(r.get(k))}</td>" for k in keys) + "</tr>"
        for r in rows
    )
    body += "<tr><td>baseline</td><td>no model</td><td>0.500</td><td>0.001</td><td>0.010</td><td>0.500</td><td>0.010</td></tr>"
    head = "".join(f"<th>{h}</th>" for h in ("attack", "from", "AUC", "TPR at 0.1 % FPR", "TPR at 1 % FPR", "control AUC", "control TPR at 1 % FPR"))
    return (
        '<h3>Attacks</h3><p class="note">Every attack measured on the same candidates; the rates reported and judged are the '
        "highest here. Control: the same attack telling one random half of the non-members from the other (no membership to "
        f'find: AUC near 0.5).</p><div class="tablewrap"><table class="membership-attacks"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )


def _roc_caption(roc: dict[str, Any]) -> str:
    return (
        f"Both axes are logarithmic, from {pct(roc['floor'])} (about one candidate of {max(roc['members'], roc['non_members']):,}) "
        "to 100 %: what matters is how many members the attacker finds while almost never calling a non-member a member. "
        "The orange curve ranks the candidates by the strongest attack's score (P(member) without black-box attacks); the dashed diagonal is an attacker without the model (every "
        f"candidate scored at the member share: TPR = FPR). {roc['members']:,} members, {roc['non_members']:,} non-members; "
        "rates below the floor are drawn on it."
    )


def _counts(s: dict[str, Any]) -> str:
    n = max(s["candidates"], 1)
    truth = "wrong_proved_members" in s
    head = "<th>candidates</th><th>number</th><th>share</th>" + ("<th>wrong (by the truth)</th>" if truth else "")
    rows = []
    for label, key, wrong in (
        ("proved members", "proved_members", "wrong_proved_members"),
        ("proved non-members", "proved_non_members", "wrong_proved_non_members"),
        ("undecided", "undecided", None),
    ):
        extra = f'<td class="num">{s[wrong]:,}</td>' if truth and wrong else ("<td></td>" if truth else "")
        rows.append(f'<tr><td>{label}</td><td class="num">{s[key]:,}</td><td class="num">{pct(s[key] / n)}</td>{extra}</tr>')
    return (
        '<h3>What the published counts prove</h3><p class="note">A proof holds in every training set consistent with the '
        "published counts (a cell counting as many records as candidates reach it proves each a member; a count of 0 proves "
        "each a non-member); the other candidates are undecided, and only estimated.</p>"
        f'<div class="tablewrap"><table class="membership-counts"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
    )


#: The riskiest-cells table's words: a model's leaves, or a rule set's rules.
CELLS = {
    "leaves": (
        "Riskiest leaves", "No published cell reaches a candidate.",
        "The published cells (a leaf, or a leaf's class count) whose count alone proves members (it counts every candidate "
        "reaching the cell: red), then those that most raise membership: the members the estimate places there beyond the "
        "member share. Proved members: those reaching the cell whom the counts of all trees together prove. Lift: the cell's "
        "mean P(member) over the member share. Click a leaf to see it in the model.",
        ("leaf", "class counted", "candidates reaching it"),
    ),
    "sample": (
        "Riskiest leaves", "No published cell reaches a candidate.",
        "The pool holds some of the training records only, so a count bounds the members among the candidates reaching its "
        "cell and the estimate's P(member) is flat wherever no bound binds. The cells are listed by their published count "
        "per candidate reaching them (the count ratio's evidence: many training records and few candidates); a count above "
        "the candidates says training records outside the pool reach the cell too, or, in a bagged tree, that a record was "
        "drawn more than once. Proved members: those reaching the "
        "cell whom the counts of all trees together prove. Click a leaf to see it in the model.",
        ("leaf", "class counted", "candidates reaching it"),
    ),
    "rules": (
        "Riskiest rules", "No published rule matches a candidate.",
        "The published counts (a rule's support counts the records matching it; with its confidence, those matching its "
        "antecedent) whose count alone proves members (it counts every candidate matching it: red), then those that most raise "
        "membership: the members the estimate places there beyond the member share. Proved members: those matching it whom "
        "all the counts together prove. Lift: the mean P(member) of the candidates matching it over the member share.",
        ("rule", "records counted", "candidates matching it"),
    ),
}


def _cells_kind(section: dict[str, Any]) -> str:
    """Which table of cells the section shows: a rule set's, a sample pool's (ranked by count per candidate) or the leaves'."""
    if section.get("published"):
        return "rules"
    return "sample" if any(r.get("per_candidate") is not None for r in section["leaves"]) else "leaves"


def _leaves(rows: list[dict[str, Any]], kind: str = "leaves") -> str:
    title, empty, note, (what, counted, reaching) = CELLS[kind]
    if not rows:
        return f"<h3>{title}</h3><p>{empty}</p>"
    body = "".join(_leaf_row(r) for r in rows)
    last = "<th>count per candidate</th>" if kind == "sample" else "<th>mean P(member)</th><th>beyond the share</th><th>lift</th>"
    return (
        f'<h3 id="membership-leaves">{title}</h3><p class="note">{escape(note)}</p>'
        f'<div class="tablewrap"><table><thead><tr><th>{what}</th><th>{counted}</th><th>published count</th><th>{reaching}</th>'
        f"<th>proved members</th>{last}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def _leaf_row(r: dict[str, Any]) -> str:
    name = escape(r["source"])
    link = f'<a href="#{escape(r["anchor"])}">{name}</a>' if r.get("anchor") else name
    proved = ' class="proved"' if r["proves_members"] else ""
    lift = "" if r["lift"] is None else f"{r['lift']:.2f}×"
    last = (
        f'<td class="num">{r["per_candidate"]:.2f}</td>' if r.get("per_candidate") is not None
        else f'<td class="num">{pct(r["mean_p_member"], 1)}</td><td class="num">{r["beyond_share"]:+,.1f}</td><td class="num">{lift}</td>'
    )
    return (
        f'<tr{proved}><td>{link}</td><td>{escape(r["cell"])}</td><td class="num">{escape(r["count"])}</td>'
        f'<td class="num">{r["candidates"]:,}</td><td class="num">{r["proved_members"]:,}</td>{last}</tr>'
    )


#: Row ids of proved members listed on the page (all of them are in the report's JSON).
SHOWN_ROWS = 200


def _proved_rows(rows: list[Any]) -> str:
    if not rows:
        return ""
    shown = ", ".join(escape(str(r)) for r in rows[:SHOWN_ROWS])
    more = f" … and {len(rows) - SHOWN_ROWS:,} more (all in the report's JSON)" if len(rows) > SHOWN_ROWS else ""
    return (
        f'<h3>Proved members ({len(rows):,})</h3><p class="note">Their rows in the population (0 = the first data row of the CSV).</p>'
        f'<p class="rows">{shown}{more}</p>'
    )
