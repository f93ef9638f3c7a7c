"""A small SVG plotting kit: axes, lines, points, bars and labels, written as text.

The report's figures are drawn here rather than by matplotlib so that the report needs no extra
package, stays small (a few kB per figure), and its marks can link to the model (an SVG ``<a>``
around a leaf's bar leads to that leaf's line).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

INK, MUTED, GRID = "#1f2937", "#6b7280", "#e5e7eb"
ATTACK, PRIOR, PROVED, CHOSEN = "#c2410c", "#2563eb", "#7f1d1d", "#15803d"


class Plot:
    """One figure: data coordinates ``x`` and ``y`` (ranges) mapped into a ``width × height`` box."""

    def __init__(
        self,
        x: tuple[float, float],
        y: tuple[float, float],
        width: int = 640,
        height: int = 320,
        margin: tuple[int, int, int, int] = (60, 20, 20, 48),  # left, right, top, bottom
    ) -> None:
        self.x, self.y, self.width, self.height, self.margin = x, y, width, height, margin
        self.parts: list[str] = []

    # -- coordinates ---------------------------------------------------------------------------
    def sx(self, v: float) -> float:
        left, right = self.margin[0], self.width - self.margin[1]
        span = (self.x[1] - self.x[0]) or 1.0
        return round(left + (v - self.x[0]) / span * (right - left), 2)

    def sy(self, v: float) -> float:
        top, bottom = self.margin[2], self.height - self.margin[3]
        span = (self.y[1] - self.y[0]) or 1.0
        return round(bottom - (v - self.y[0]) / span * (bottom - top), 2)

    # -- marks -----------------------------------------------------------------------------------
    def axes(
        self,
        xticks: Sequence[float],
        yticks: Sequence[float],
        xlabel: str,
        ylabel: str,
        xfmt: Callable[[float], str] = "{:g}".format,
        yfmt: Callable[[float], str] = "{:g}".format,
    ) -> None:
        left, bottom = self.margin[0], self.height - self.margin[3]
        for t in yticks:
            y = self.sy(t)
            self.parts.append(f'<line x1="{left}" x2="{self.width - self.margin[1]}" y1="{y}" y2="{y}" stroke="{GRID}"/>')
            self.text(left - 6, y + 4, yfmt(t), anchor="end", size=11, color=MUTED)
        for t in xticks:
            x = self.sx(t)
            self.parts.append(f'<line x1="{x}" x2="{x}" y1="{bottom}" y2="{bottom + 4}" stroke="{MUTED}"/>')
            self.text(x, bottom + 16, xfmt(t), anchor="middle", size=11, color=MUTED)
        self.parts.append(f'<line x1="{left}" x2="{self.width - self.margin[1]}" y1="{bottom}" y2="{bottom}" stroke="{MUTED}"/>')
        self.text((left + self.width - self.margin[1]) / 2, self.height - 8, xlabel, anchor="middle", size=12)
        mid = (self.margin[2] + bottom) / 2
        if ylabel:
            self.parts.append(
                f'<text x="14" y="{mid}" transform="rotate(-90 14 {mid})" text-anchor="middle" font-size="12" fill="{INK}">{escape(ylabel)}</text>'
            )

    def line(self, xs: Sequence[float], ys: Sequence[float], color: str, width: float = 2, dash: str | None = None, name: str = "") -> None:
        points = " ".join(f"{self.sx(a)},{self.sy(b)}" for a, b in zip(xs, ys))
        style = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<polyline class="mark" data-series="{escape(name)}" points="{points}" fill="none" stroke="{color}" stroke-width="{width}"{style}/>'
        )

    def point(self, x: float, y: float, color: str, r: float = 4, title: str = "", href: str | None = None) -> None:
        mark = f'<circle class="mark" cx="{self.sx(x)}" cy="{self.sy(y)}" r="{r}" fill="{color}"><title>{escape(title)}</title></circle>'
        self.parts.append(self._link(mark, href))

    def hbar(self, row: float, start: float, stop: float, color: str, thickness: float, title: str = "", href: str | None = None) -> None:
        """A horizontal bar from ``start`` to ``stop`` (data x) centred on data ``row`` (data y)."""
        x0, x1 = self.sx(start), self.sx(stop)
        y = self.sy(row) - thickness / 2
        mark = f'<rect class="mark" x="{x0}" y="{y}" width="{max(x1 - x0, 0.0)}" height="{thickness}" fill="{color}"><title>{escape(title)}</title></rect>'
        self.parts.append(self._link(mark, href))

    def vline(self, x: float, color: str, label: str = "") -> None:
        X = self.sx(x)
        self.parts.append(f'<line x1="{X}" x2="{X}" y1="{self.margin[2]}" y2="{self.height - self.margin[3]}" stroke="{color}" stroke-dasharray="4 3"/>')
        if label:
            self.text(X + 4, self.margin[2] + 12, label, size=11, color=color)

    def text(
        self, x: float, y: float, text: str, anchor: str = "start", size: int = 12, color: str = INK, href: str | None = None,
        halo: bool = False,
    ) -> None:
        """A label; with ``halo`` a white outline keeps it readable over the lines it crosses."""
        outline = ' stroke="#fff" stroke-width="3" paint-order="stroke"' if halo else ""
        mark = f'<text x="{round(x, 2)}" y="{round(y, 2)}" text-anchor="{anchor}" font-size="{size}" fill="{color}"{outline}>{escape(text)}</text>'
        self.parts.append(self._link(mark, href))

    def legend(self, items: Sequence[tuple[str, str, str | None]], x: float | None = None, y: float | None = None) -> None:
        """``(label, color, dash)`` entries stacked at the top right (or at ``x``, ``y``)."""
        x = self.width - self.margin[1] - 230 if x is None else x
        y = self.margin[2] + 8 if y is None else y
        for i, (label, color, dash) in enumerate(items):
            yy = y + 16 * i
            style = f' stroke-dasharray="{dash}"' if dash else ""
            self.parts.append(f'<line x1="{x}" x2="{x + 22}" y1="{yy}" y2="{yy}" stroke="{color}" stroke-width="3"{style}/>')
            self.text(x + 28, yy + 4, label, size=11)

    @staticmethod
    def _link(mark: str, href: str | None) -> str:
        return f'<a href="{escape(href)}">{mark}</a>' if href else mark

    def svg(self, figure_id: str, title: str) -> str:
        """The figure as an inline ``<svg>`` element (scales with its container)."""
        return (
            f'<svg id="{escape(figure_id)}" class="figure" role="img" viewBox="0 0 {self.width} {self.height}" '
            f'font-family="system-ui, sans-serif">'
            f"<title>{escape(title)}</title>" + "".join(self.parts) + "</svg>"
        )
