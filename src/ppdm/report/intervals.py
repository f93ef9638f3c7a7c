"""What ``ppdm audit`` prints and the HTML report for a regressor's numeric target: each person's
proved interval (:class:`~ppdm.attacks.models.regression.IntervalResult`), the pinned count beside the
prior's, and an interval per person drawn on the prior's domain."""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from ppdm.attacks.core.scope import READ_KEYS, Scope
from ppdm.attacks.models.regression import IntervalResult
from ppdm.errors import ReportError
from ppdm.files import ReadFiles, refuse_overwriting_input, write_atomic
from ppdm.report import words
from ppdm.report.style import CSS
from ppdm.report.summary import read_line
from ppdm.report.write import check_report_paths, json_path_for

#: The ``format`` of a regressor's report JSON (the ``NAME.report.json`` beside its page).
REPORT_FORMAT = "ppdm-regression-report"

#: At most this many people are drawn in the interval figure (an even sample of them when more).
DRAWN = 1500

_BOUNDS = {
    "propagation": "bound propagation over the leaf rows (sound: every consistent dataset lies inside; possibly wider than the tight interval)",
    "linear programme": "linear programmes (tight: the smallest interval holding every consistent dataset)",
    "arc consistency and propagation": (
        "each record's own leaves and bound propagation over whole counts of records per cell (sound: every consistent "
        "dataset lies inside; possibly wider than the tight interval)"
    ),
    "integer programme": "integer programmes over whole counts of records per cell (tight: the smallest interval holding every consistent dataset)",
}


#: What the page and the printed summary say when the secret is an input of the model.
INPUT_LINE = (
    "the secret {name} is an input of the model, the attacker knowing each person's target and other inputs: its interval "
    "is the cells (between the trees' thresholds) where the leaves' counts and values leave room for the person"
)


def interval_lines(result: IntervalResult, top: int = 5) -> list[str]:
    """The printed summary: the threat, the pinned count beside the prior's, widths, errors, the
    what was read (:class:`~ppdm.attacks.core.scope.Scope`), and the ``top`` narrowest intervals."""
    s = result.summary()
    base = s["baseline"]
    lo, hi = base["domain"]
    tol = s["tolerance"]
    lines = [
        threat_line(result),
        f"proved interval of {s['sensitive']!r} for {words.people(s['people'])}, by {_BOUNDS.get(s['bounds'], s['bounds'])}",
        *([INPUT_LINE.format(name=repr(s["sensitive"]))] if s.get("secret") == "input" else []),
        f"pinned to within {tol:g}: {s['pinned']:,} of {s['people']:,} (prior: {base['pinned']:,}; its interval [{lo:g}, {hi:g}], width {base['width']:g})",
        f"interval width: mean {s['mean_width']:.4g}, median {s['median_width']:.4g} (prior: {base['width']:g})",
    ]
    if "mean_abs_error" in s:
        inside = "every true value inside its interval" if s["truth_inside"] else "A TRUE VALUE OUTSIDE ITS INTERVAL"
        lines.append(f"estimate ({s.get('estimate', 'interval centre')}): mean absolute error {s['mean_abs_error']:.4g} (prior's centre: {base['mean_abs_error']:.4g}); {inside}")
    note = result.details.get("note")
    if note:
        lines.append(str(note))
    lines.append(read_line(s).strip())
    order = _narrowest(result)[:top]
    if len(order):
        lines.append(f"narrowest {len(order)}:")
        for i in order:
            truth = "" if result.truth is None else f" (true {result.truth[i]:g})"
            lines.append(f"  row {_row(result, i)}: [{result.lower[i]:.6g}, {result.upper[i]:.6g}]{truth}")
    return lines


def threat_line(result: IntervalResult) -> str:
    """The threat model in one line, as a regressor publishes it (its leaves' values and rows)."""
    t = result.threat
    known = ", ".join(t.known or ()) or "no column"
    individuals = f"; {len(t.known_individuals):,} individuals fully known" if t.known_individuals else ""
    preset = f" {t.preset!r}" if t.preset else ""
    return f"threat model{preset}: attacker knows {known}; wants {result.sensitive!r}; model publishes every leaf's value and row count{individuals}"


def _narrowest(result: IntervalResult) -> np.ndarray:
    idx = np.flatnonzero(result.targets)
    return idx[np.argsort(result.width[idx], kind="stable")]


def _row(result: IntervalResult, i: int) -> Any:
    return i if result.row_ids is None else result.row_ids[i]


def interval_report(result: IntervalResult, model: Any, title: str | None = None) -> dict[str, Any]:
    """The report's data: summary, details, the narrowest people and the people drawn."""
    s = result.summary()
    order = _narrowest(result)
    drawn = order if len(order) <= DRAWN else order[np.linspace(0, len(order) - 1, DRAWN).astype(int)]
    drawn = drawn[np.argsort(result.estimate[drawn], kind="stable")]

    def person(i: int) -> dict[str, Any]:
        out = {"row": _plain(_row(result, i)), "lower": float(result.lower[i]), "upper": float(result.upper[i]), "method": str(result.method[i])}
        if result.truth is not None:
            out["truth"] = float(result.truth[i])
        return out

    return {
        "format": REPORT_FORMAT,
        "kind": "regression",
        "title": title or f"What the published regressor discloses about {result.sensitive!r}",
        "threat": threat_line(result),
        "model": {"algorithm": getattr(model, "algorithm", None), "trees": getattr(model, "n_trees", 1), "leaves": int(model.n_leaves)},
        "summary": s,
        "details": {k: v for k, v in result.details.items() if k not in READ_KEYS},
        "narrowest": [person(int(i)) for i in order[:200]],
        "drawn": [person(int(i)) for i in drawn],
        "widths": [float(w) for w in np.histogram(result.width[result.targets], bins=40, range=(0.0, max(s["baseline"]["width"], 1e-12)))[0]],
    }


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def write_interval_report(
    result: IntervalResult, model: Any, html: str | Path, json_out: str | Path | None = None, *, title: str | None = None,
    inputs: Iterable[str | Path] | ReadFiles = (),
) -> dict[str, Any]:
    """Write the HTML report and its JSON (beside it by default), neither over one of ``inputs``
    (the files the audit read); return the report's data."""
    html = Path(html)
    data = Path(json_out) if json_out is not None else json_path_for(html)
    read = inputs if isinstance(inputs, ReadFiles) else ReadFiles(inputs)
    refuse_overwriting_input(html, read)
    check_report_paths(html)
    report = interval_report(result, model, title)
    write_atomic(data, json.dumps(report, ensure_ascii=False, separators=(",", ":"), default=str) + "\n", inputs=read)
    write_atomic(html, render_interval_html(report), inputs=read)
    return report


def redraw_interval_report(saved: dict[str, Any], html: str | Path, json_out: str | Path | None = None, *, title: str | None = None, source: str = "the file") -> None:
    """``ppdm report`` of a regressor: the page drawn from its audit's JSON (``ppdm audit --out``)
    or drawn again from its report's JSON, written atomically; the report's JSON beside it (or at
    ``json_out``) when drawn from the audit. A file the page cannot be drawn from is refused in one
    line naming ``source`` before anything is written."""
    check_report_paths(html)
    html = Path(html)
    if _is_report(saved):
        report = dict(saved, title=title or saved.get("title", ""))
    else:
        result = IntervalResult.from_dict(saved, source)
        report = interval_report(result, _NO_MODEL, title)
    try:
        page = render_interval_html(report)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ReportError(f"{source}: this ppdm cannot draw a regressor's page from it ({str(exc)[:100] or type(exc).__name__})") from None
    if json_out is not None or not _is_report(saved):
        data = Path(json_out) if json_out is not None else json_path_for(html)
        write_atomic(data, json.dumps(report, ensure_ascii=False, separators=(",", ":"), default=str) + "\n")
    write_atomic(html, page)


class _NoModel:
    """What the report says of a model it was not given (an audit's JSON holds none)."""

    algorithm = None
    n_trees = None
    n_leaves = 0


_NO_MODEL = _NoModel()


def _is_report(saved: dict[str, Any]) -> bool:
    return saved.get("format") == REPORT_FORMAT or saved.get("kind") == "regression"


def render_interval_html(report: dict[str, Any]) -> str:
    """The self-contained page: the verdict card, the interval figure, the widths, the narrowest people."""
    s = report["summary"]
    base = s["baseline"]
    lo, hi = base["domain"]
    card = _verdict_card(report)
    rows = "".join(
        f"<tr><td>{escape(str(p['row']))}</td><td>{p['lower']:.6g}</td><td>{p['upper']:.6g}</td><td>{p['upper'] - p['lower']:.4g}</td>"
        f"<td>{'' if 'truth' not in p else format(p['truth'], '.6g')}</td><td>{escape(p['method'])}</td></tr>"
        for p in report["narrowest"]
    )
    table = f"<table><thead><tr><th>row</th><th>lower</th><th>upper</th><th>width</th><th>truth</th><th>bounds by</th></tr></thead><tbody>{rows}</tbody></table>"
    body = (
        f"<h1>{escape(report['title'])}</h1><p class=\"threatline\">{escape(report['threat'])}</p>{card}"
        f"<h2>Every person's proved interval</h2><figure>{_interval_figure(report['drawn'], lo, hi)}<figcaption>"
        f"{len(report['drawn']):,} of {words.people(s['people'])}{' (an even sample, by width)' if len(report['drawn']) < s['people'] else ''}, "
        "sorted by estimate: each vertical bar is one person's proved interval, the dot the true value; the grey band is the prior's interval.</figcaption></figure>"
        f"<h2>Interval widths</h2><figure>{_width_figure(report['widths'], base['width'], s['tolerance'])}<figcaption>people by the width of their proved interval "
        f"(from 0 to the prior's width {base['width']:g}); the red line is the tolerance {s['tolerance']:g}.</figcaption></figure>"
        f"<h2>The narrowest intervals</h2>{table}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(report['title'])}</title><style>{CSS}</style></head><body><main>{body}</main></body></html>\n"
    )


def _verdict_card(report: dict[str, Any]) -> str:
    """The verdict card: people pinned beside the prior's, the widths, the estimate's error."""
    s = report["summary"]
    base = s["baseline"]
    lo, hi = base["domain"]
    level = "fails" if s["pinned"] > base["pinned"] else "meets"
    return (
        f'<div class="card {level}"><span class="badge">{"people pinned" if level == "fails" else "nobody pinned"}</span>'
        f'<span class="headline">{s["pinned"]:,} of {words.people(s["people"])} pinned to within {s["tolerance"]:g} '
        f'(prior: {base["pinned"]:,})</span><ul>'
        + (f'<li>{escape(INPUT_LINE.format(name=repr(s["sensitive"])))}</li>' if s.get("secret") == "input" else "")
        + f'<li>prior: every value in [{lo:g}, {hi:g}], width {base["width"]:g}</li>'
        f'<li>proved interval width: mean {s["mean_width"]:.4g}, median {s["median_width"]:.4g}</li>'
        + (f'<li>estimate ({escape(str(s.get("estimate", "interval centre")))}): mean absolute error {s["mean_abs_error"]:.4g}, prior\'s centre {base["mean_abs_error"]:.4g}; '
           f'{"every true value inside its interval" if s["truth_inside"] else "a true value outside its interval"}</li>' if "mean_abs_error" in s else "")
        + (f'<li>{escape(str(report["details"]["note"]))}</li>' if report["details"].get("note") else "")
        + f'<li>what was read: {escape(Scope.from_json(s["scope"]).sentence())}</li>'
        f'<li>bounds: {escape(_BOUNDS.get(s["bounds"], s["bounds"]))}</li></ul></div>'
    )  # fmt: skip


def interval_cards_html(report: dict[str, Any]) -> str:
    """The threat line and the verdict card as an HTML fragment for a notebook's cell (``RegressionAudit._repr_html_``)."""
    from ppdm.report.html import card_style

    return f'<div class="ppdm-cards"><style>{card_style()}</style><p class="threatline">{escape(report["threat"])}</p>{_verdict_card(report)}</div>'


def _interval_figure(people: list[dict[str, Any]], lo: float, hi: float, width: int = 760, height: int = 260) -> str:
    n = max(len(people), 1)
    span = (hi - lo) or 1.0

    def y(v: float) -> float:
        return 10 + (height - 20) * (1 - (v - lo) / span)

    step = (width - 50) / n
    bars = []
    for i, p in enumerate(people):
        x = 45 + (i + 0.5) * step
        bars.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y(p["upper"]):.1f}" y2="{y(p["lower"]) + 0.6:.1f}" stroke="#c2410c" stroke-width="{max(step * 0.8, 0.4):.2f}"/>')
        if "truth" in p:
            bars.append(f'<circle cx="{x:.1f}" cy="{y(p["truth"]):.1f}" r="{min(max(step * 0.4, 0.5), 2):.1f}" fill="#1f2937"/>')
    axis = (
        f'<rect x="45" y="10" width="{width - 50}" height="{height - 20}" fill="#f3f4f6"/>'
        f'<text x="40" y="{y(hi) + 4:.1f}" font-size="11" text-anchor="end">{hi:g}</text>'
        f'<text x="40" y="{y(lo):.1f}" font-size="11" text-anchor="end">{lo:g}</text>'
    )
    return f'<svg class="figure" viewBox="0 0 {width} {height}" role="img" aria-label="proved intervals">{axis}{"".join(bars)}</svg>'


def _width_figure(counts: list[float], prior: float, tolerance: float, width: int = 760, height: int = 180) -> str:
    top = max(max(counts, default=0.0), 1.0)
    k = max(len(counts), 1)
    bw = (width - 50) / k
    bars = "".join(
        f'<rect x="{45 + i * bw:.1f}" y="{10 + (height - 30) * (1 - c / top):.1f}" width="{bw * 0.9:.1f}" height="{(height - 30) * c / top:.1f}" fill="#94a3b8"/>'
        for i, c in enumerate(counts)
    )
    x_tol = 45 + (width - 50) * min(tolerance / (prior or 1.0), 1.0)
    return (
        f'<svg class="figure" viewBox="0 0 {width} {height}" role="img" aria-label="interval widths">{bars}'
        f'<line x1="{x_tol:.1f}" x2="{x_tol:.1f}" y1="10" y2="{height - 20}" stroke="#b91c1c"/>'
        f'<text x="45" y="{height - 5}" font-size="11">0</text><text x="{width - 5}" y="{height - 5}" font-size="11" text-anchor="end">{prior:g} (prior)</text>'
        f'<text x="40" y="18" font-size="11" text-anchor="end">{int(top):,}</text></svg>'
    )
