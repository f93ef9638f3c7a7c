"""The membership section's figures.

* The ROC curve on log-log axes (Carlini et al., *Membership Inference Attacks From First
  Principles*, IEEE S&P 2022, §III-B: a membership attack matters where it is right about a few
  people at a very low false-positive rate, which linear axes hide in one corner): TPR against
  FPR, both from the axis floor (one candidate of the larger class) to 1; the diagonal is the
  attacker without the model, who scores everyone at the member share (TPR = FPR); the rates at
  0.1 % and 1 % FPR marked. A rate of 0 (below the floor) is drawn on the floor.
* Without the truth, the share of candidates at P(member) ≥ t for every t, beside the baseline
  (everyone at the member share).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdm.report.svg import ATTACK, GRID, MUTED, PRIOR, PROVED, Plot
from ppdm.report.verdict import pct

#: The false-positive rates marked on the ROC curve (those the summary reports).
MARKED = ((0.001, "tpr@0.1%"), (0.01, "tpr@1%"))


def _rate(v: float) -> str:
    """A decade of the log axes as a percentage: 0.001 % … 100 %."""
    return f"{100 * 10.0 ** v:.5g} %"


def roc_figure(roc: dict[str, Any], summary: dict[str, Any], figure_id: str) -> str:
    """TPR against FPR on log-log axes, the diagonal, the rates at 0.1 % and 1 % FPR marked."""
    floor = float(roc["floor"])
    lo = np.log10(floor)
    plot = Plot((lo, 0.0), (lo, 0.0), width=640, height=480, margin=(70, 24, 16, 50))
    decades = np.arange(lo, 0.5, 1.0).tolist()
    plot.axes(decades, decades, "false-positive rate: non-members called members (log scale)",
              "true-positive rate: members found (log scale)", xfmt=_rate, yfmt=_rate)
    for d in decades:
        x = plot.sx(d)
        plot.parts.append(f'<line x1="{x}" x2="{x}" y1="{plot.margin[2]}" y2="{plot.height - plot.margin[3]}" stroke="{GRID}"/>')
    plot.line([lo, 0.0], [lo, 0.0], PRIOR, width=1.5, dash="6 4", name="baseline")
    fpr = np.log10(np.maximum(np.asarray(roc["fpr"], dtype=float), floor))
    tpr = np.log10(np.maximum(np.asarray(roc["tpr"], dtype=float), floor))
    xs = np.repeat(fpr, 2)[1:]  # a step curve: each rate holds until the next false-positive budget
    ys = np.repeat(tpr, 2)[:-1]
    plot.line(xs.tolist(), ys.tolist(), ATTACK, name="roc")
    labels: list[tuple[float, float, str, str]] = []  # (x, y, text, colour), placed apart below
    drawn = _drawn_rates(summary)
    for f, key in MARKED:
        value = drawn.get(key)
        if value is None:
            continue
        x, y = np.log10(f), np.log10(max(value, floor))
        text = f"TPR {pct(value)} at {pct(f)} FPR" + _higher_elsewhere(summary, key, value)
        plot.point(x, y, ATTACK, r=5, title=text)
        labels.append((plot.sx(x) + 8, plot.sy(y) + 16, text, ATTACK))
    at_zero = float(roc["tpr"][0])
    if at_zero > 0:
        y = np.log10(max(at_zero, floor))
        among = " (proved members among them)" if summary.get("proved_members") else ""
        plot.point(lo, y, PROVED, r=5, title=f"TPR {pct(at_zero)} with no false positive{among}")
        labels.append((plot.sx(lo) + 8, plot.sy(y) + 16, f"{pct(at_zero)} of members with no false positive", PROVED))
    # below and right of their marks, where a rising curve is not; the higher mark's label first (higher)
    labels.sort(key=lambda label: label[1])
    for x, y, text, colour in place_apart(labels, top=plot.margin[2] + 12, bottom=plot.height - plot.margin[3] - 4):
        plot.text(x, y, text, size=11, color=colour, halo=True)
    left = plot.sx(lo) + 12 + (plot.width - plot.margin[0] - plot.margin[1]) * 0.42
    plot.legend(
        [(_scored_by(summary), ATTACK, None), ("without the model: TPR = FPR", PRIOR, "6 4")],
        x=left, y=plot.height - plot.margin[3] - 40,
    )
    return plot.svg(figure_id, "membership: true-positive rate against false-positive rate, log-log, against the baseline TPR = FPR")


#: A label's box at font size 11: its height and the width of one character, in pixels (a bound).
LINE, CHAR = 14.0, 6.6


def place_apart(labels: list[tuple[float, float, str, str]], top: float, bottom: float) -> list[tuple[float, float, str, str]]:
    """The labels ``(x, baseline y, text, colour)``, each moved down (or, at the bottom, up) by a
    line until its box overlaps none placed before it: two marks close together keep readable labels."""
    placed: list[tuple[float, float, str, str]] = []

    def clash(x: float, y: float, text: str) -> bool:
        return any(
            x < px + CHAR * len(pt) and px < x + CHAR * len(text) and abs(y - py) < LINE for px, py, pt, _ in placed
        )

    for x, y, text, colour in labels:
        y = min(max(y, top), bottom)
        step = LINE
        while clash(x, y, text):
            if y + step > bottom:
                step = -LINE
                y = min(max(y, top), bottom)
            y += step
            if y < top:  # no room: leave it where it overlaps least, at the top
                break
        placed.append((x, y, text, colour))
    return placed


def p_member_figure(p_member: dict[str, Any], share: float, figure_id: str) -> str:
    """Share of candidates at P(member) ≥ t, against the baseline (everyone at the member share)."""
    t = np.asarray(p_member["t"], dtype=float)
    plot = Plot((0, 1), (0, 1))
    ticks = np.linspace(0, 1, 6).tolist()
    plot.axes(ticks, ticks, "P(member) t", "share of candidates at ≥ t", yfmt=lambda v: f"{100 * v:.0f} %")
    plot.line(t.tolist(), p_member["share"], ATTACK, name="audit")
    plot.line([0, share, share, 1], [1, 1, 0, 0], PRIOR, dash="6 4", name="baseline")
    plot.legend([("the audit: P(member)", ATTACK, None), (f"without the model: everyone at {pct(share)}", PRIOR, "6 4")])
    plot.text(plot.sx(1) - 4, plot.sy(float(p_member["share"][-1])) - 8, pct(float(p_member["share"][-1])), anchor="end", size=11, color=MUTED)
    return plot.svg(figure_id, "membership: share of candidates at each P(member), the truth not given")


def _drawn_rates(summary: dict[str, Any]) -> dict[str, Any]:
    """The rates of the attack the curve draws (its row of the table of attacks; the summary's own
    without a table): a mark on the curve is that curve's rate, not another attack's."""
    strongest = summary.get("strongest")
    row = next((r for r in summary.get("attacks") or [] if r.get("attack") == strongest), None)
    return row if row is not None else summary


def _higher_elsewhere(summary: dict[str, Any], key: str, value: float) -> str:
    """", 1.1 % by rmia-online" when another attack of the table reaches more at this rate (the rate reported)."""
    best, by = summary.get(key), (summary.get("reached_by") or {}).get(key)
    return f"; {pct(best)} by {by}" if best is not None and by and best > value + 1e-12 else ""


def _scored_by(summary: dict[str, Any]) -> str:
    """The curve's legend: the attack whose scores it draws (the strongest in the table, else the white-box P(member))."""
    strongest = summary.get("strongest")
    return "the audit: members scored by P(member)" if strongest in (None, "ppdm") else f"the strongest attack: members scored by {strongest}"
