"""The report's three figures: confidence in the true value against the prior, exposure by
leaf, and the accuracy–privacy frontier of a defense search.

* Confidence: the share of people whom the attacker holds at confidence ≥ t in their true
  value, for every t, next to the same curve for an attacker who knows only the prior (the
  baseline of :mod:`ppdm.metrics.baseline`). The gap between the curves is what the model adds.
* Exposure by leaf: per leaf, people proved (certain and right) and people held at ≥ 0.9 only
  because of the model; each bar links to the leaf in the model.
* Frontier: each candidate of the search as (risk, accuracy); the candidates no other beats on
  both joined by a line, the chosen one in green.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ppdm.metrics.baseline import CERTAINTY_TOL
from ppdm.report import words
from ppdm.report.persons import Persons
from ppdm.report.svg import ATTACK, CHOSEN, MUTED, PRIOR, PROVED, Plot
from ppdm.report.verdict import pct

THRESHOLDS = np.linspace(0.0, 1.0, 101)


def share_at_least(confidence: np.ndarray, thresholds: np.ndarray = THRESHOLDS) -> np.ndarray:
    """Per threshold t, the share of ``confidence`` at ≥ t (with the one certainty tolerance)."""
    ordered = np.sort(confidence)
    below = np.searchsorted(ordered, thresholds - CERTAINTY_TOL, side="left")
    return (len(ordered) - below) / max(len(ordered), 1)


def confidence_figure(persons: Persons, figure_id: str, name: str) -> str:
    """The two survival curves (see the module docstring); the guess's confidence without the truth."""
    conf, prior = persons.confidence(), persons.prior_confidence()
    plot = Plot((0, 1), (0, 1))
    plot.axes(np.linspace(0, 1, 6), np.linspace(0, 1, 6), "confidence t", "share of people at ≥ t", yfmt=lambda v: f"{100 * v:.0f} %")
    if conf is None:
        guess = persons.posterior.max(axis=1)[persons.group][persons.target]
        plot.line(THRESHOLDS, share_at_least(guess), ATTACK, name="attack")
        plot.legend([("attacker's confidence in their guess", ATTACK, None)])
        return plot.svg(figure_id, f"{name}: the attacker's confidence in their guess (true values not given)")
    conf, prior_t = conf[persons.target], (prior[persons.target] if prior is not None else None)
    attack = share_at_least(conf)
    plot.line(THRESHOLDS, attack, ATTACK, name="attack")
    items = [("attacker, confidence in the true value", ATTACK, None)]
    if prior_t is not None:
        plot.line(THRESHOLDS, share_at_least(prior_t), PRIOR, dash="6 4", name="prior")
        items.append(("prior alone", PRIOR, "6 4"))
    for t in (0.5, 0.9, 1.0):
        share = float(share_at_least(conf, np.array([t]))[0])
        plot.point(t, share, ATTACK, title=f"{pct(share)} of people at confidence ≥ {t:g}")
        plot.text(plot.sx(t) - 4, plot.sy(share) - 8, pct(share), anchor="end" if t == 1.0 else "middle", size=11, color=ATTACK)
    plot.legend(items)
    return plot.svg(figure_id, f"{name}: share of people held at each confidence in their true value, against the prior alone")


def exposure_figure(exposure: list[dict[str, Any]], figure_id: str, name: str, top: int = 12) -> str:
    """Horizontal bars for the ``top`` leaves by people proved, then held at ≥ 0.9 beyond the prior;
    when nobody is, each leaf's mean confidence in the true value against the prior's."""
    rows = [r for r in exposure if r["people"] > 0]
    high_key = "beyond" if rows and "beyond" in rows[0] else "high"
    exposed = any(r["certain_right"] or r.get(high_key) for r in rows)
    if not exposed and rows and "mean_confidence" in rows[0]:
        return _gain_figure(rows, figure_id, name, top)
    rows = rows[:top]
    biggest = max([max(r["certain_right"], r.get(high_key, 0)) for r in rows] + [1])
    plot = _bars_plot(rows, (0, biggest * 1.05))
    plot.axes(np.unique(np.round(np.linspace(0, biggest, 5))), [], "people", "", xfmt=lambda v: f"{v:,.0f}")
    for i, row in enumerate(rows, start=1):
        label, href = _bar_label(plot, row, i)
        high = row.get(high_key, 0)
        plot.hbar(i - 0.17, 0, high, ATTACK, 9, title=f"{label}: {words.people(high)} at confidence ≥ 0.9 in their true value", href=href)
        plot.hbar(i + 0.17, 0, row["certain_right"], PROVED, 9, title=f"{label}: {words.people(row['certain_right'])} proved", href=href)
    what = "at ≥ 0.9 beyond the prior" if high_key == "beyond" else "at ≥ 0.9"
    plot.legend([(f"people {what}", ATTACK, None), ("people proved (certain, right)", PROVED, None)], y=12)
    return plot.svg(figure_id, f"{name}: people exposed, by leaf")


def _gain_figure(rows: list[dict[str, Any]], figure_id: str, name: str, top: int) -> str:
    """Nobody exposed: the ``top`` leaves where the attacker gains most over the prior (among leaves
    of at least 10 people), each with the mean confidence in the true value and the prior's."""
    enough = [r for r in rows if r["people"] >= 10] or rows
    rows = sorted(enough, key=lambda r: r.get("mean_prior", 0.0) - r["mean_confidence"])[:top]
    plot = _bars_plot(rows, (0, 1))
    plot.axes(np.linspace(0, 1, 6), [], "mean confidence in the true value (nobody is held at ≥ 0.9)", "", xfmt=lambda v: pct(v))
    for i, row in enumerate(rows, start=1):
        label, href = _bar_label(plot, row, i)
        plot.hbar(i - 0.17, 0, row["mean_confidence"], ATTACK, 9, title=f"{label}: mean confidence {pct(row['mean_confidence'])}", href=href)
        if "mean_prior" in row:
            plot.hbar(i + 0.17, 0, row["mean_prior"], PRIOR, 9, title=f"{label}: prior alone {pct(row['mean_prior'])}", href=href)
    plot.legend([("attacker, mean confidence", ATTACK, None), ("prior alone", PRIOR, None)], y=12)
    return plot.svg(figure_id, f"{name}: mean confidence in the true value, by leaf")


def _bars_plot(rows: list[dict[str, Any]], x: tuple[float, float]) -> Plot:
    left = max([110] + [14 + 7 * len(_label(r)) for r in rows])  # room for "tree 12 leaf 345"
    plot = Plot(x, (len(rows) + 0.5, 0.5), height=80 + 26 * max(len(rows), 1), margin=(left, 30, 46, 44))
    if not rows:
        plot.text(plot.width / 2, 60, "no leaf reaches any person", anchor="middle", color=MUTED)
    return plot


def _label(row: dict[str, Any]) -> str:
    """A bar's name: the leaf's ("leaf 7", "tree 3 leaf 7"), or a provenance text, cut short."""
    return str(row["source"]) if row.get("leaf") is not None else str(row["source"])[:16]


def _bar_label(plot: Plot, row: dict[str, Any], i: int) -> tuple[str, str | None]:
    label = _label(row)
    href = f"#{row['anchor']}" if row.get("anchor") else None
    plot.text(plot.margin[0] - 8, plot.sy(i) + 4, label, anchor="end", size=11, href=href)
    return label, href


def frontier_figure(
    points: Sequence[dict[str, Any]], risk_name: str, figure_id: str, target: float | None = None, accuracy: str = "accuracy",
) -> str:
    """Every candidate as (risk, accuracy); the non-dominated ones joined; the chosen one marked."""
    risk = np.array([p["risk"] for p in points], dtype=float)
    acc = np.array([p["accuracy"] for p in points], dtype=float)
    xmax = float(max(risk.max(), target or 0.0)) * 1.1 or 1.0
    ylo, yhi = float(acc.min()), float(acc.max())
    pad = max((yhi - ylo) * 0.15, 0.01)
    plot = Plot((0, xmax), (max(ylo - pad, 0.0), min(yhi + pad, 1.0)), height=340)
    share = "share" in risk_name and xmax <= 1.1
    counts = not share and bool(np.all(risk == np.round(risk)))  # people proved, span sizes: whole ticks
    step = max(1.0, float(np.ceil(xmax / 4)))
    xticks = np.arange(0.0, xmax + 1e-9, step) if counts and xmax >= 4 else np.linspace(0, xmax, 5)
    plot.axes(xticks, np.linspace(plot.y[0], plot.y[1], 5), risk_name, accuracy,
              xfmt=(lambda v: pct(v, 1)) if share else (lambda v: f"{v:.3g}"), yfmt=lambda v: pct(v, 1))
    if target is not None:
        plot.vline(target, CHOSEN, "target")
    front = pareto_front(risk, acc)
    plot.line(risk[front], acc[front], MUTED, width=1.5, name="frontier")
    for p, r, a in zip(points, risk, acc):
        chosen = bool(p.get("chosen"))
        plot.point(r, a, CHOSEN if chosen else ATTACK, r=6 if chosen else 4, title=f"{p['label']}: accuracy {pct(a)}, {risk_name} {r:.3g}")
    for i in front:
        right = plot.sx(risk[i]) > plot.sx(plot.x[0]) + 0.6 * (plot.sx(plot.x[1]) - plot.sx(plot.x[0]))
        x = plot.sx(risk[i]) + (-7 if right else 7)
        plot.text(x, plot.sy(acc[i]) - 8, point_label(str(points[i]["label"])), anchor="end" if right else "start", size=10, color=MUTED, halo=True)
    return plot.svg(figure_id, "accuracy against risk of the defense search's candidates")


def point_label(label: str, limit: int = 44) -> str:
    """A candidate's name short enough to sit by its point: the estimator's class name left out
    (``max_depth=4 min_samples_leaf=50``), cut at a word with an ellipsis past ``limit``."""
    words = label.split()
    if len(words) > 1 and words[0].endswith(("Classifier", "Regressor")):
        label = " ".join(words[1:])
    if len(label) <= limit:
        return label
    return label[: label.rfind(" ", 0, limit)].rstrip(",") + " …" if " " in label[:limit] else label[: limit - 1] + "…"


def pareto_front(risk: np.ndarray, accuracy: np.ndarray) -> np.ndarray:
    """Indices of the candidates no other has both lower-or-equal risk and higher accuracy, by risk."""
    order = np.lexsort((-accuracy, risk))
    best = np.maximum.accumulate(accuracy[order])
    keep = np.r_[True, accuracy[order][1:] > best[:-1]]
    return order[keep]
