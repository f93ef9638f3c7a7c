"""Write a report: the HTML page, the JSON it is drawn from, and optionally its PDF."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ppdm.errors import ReportError
from ppdm.files import ReadFiles, refuse_overwriting_input, write_atomic

if TYPE_CHECKING:
    from ppdm.report.html import HtmlOptions


def check_report_paths(html: str | Path, pdf: str | Path | None = None) -> None:
    """Refuse a page not named ``.html`` (or ``.htm``) and a PDF not named ``.pdf``: a report
    written to ``audit.json`` would replace the audit's own JSON with a page."""
    if Path(html).suffix.lower() not in (".html", ".htm"):
        raise ReportError(f"{html}: the report is an HTML page; name it .html")
    if pdf is not None and Path(pdf).suffix.lower() != ".pdf":
        raise ReportError(f"{pdf}: name the PDF .pdf")


def json_path_for(html: Path) -> Path:
    """Where the report's JSON goes by default: beside the page (``audit.html`` →
    ``audit.report.json``, a name that never collides with an audit's own ``audit.json``)."""
    stem = html.stem if html.suffix.lower() in (".html", ".htm") else html.name
    return html.with_name(stem + ".report.json")


def write_report(
    report: dict[str, Any], html: str | Path, json_out: str | Path | None = None, pdf: str | Path | None = None, inputs: Iterable[str | Path] | ReadFiles = (),
    page: HtmlOptions | None = None,
) -> Path:
    """Write ``report`` as ``html`` and its data as ``json_out`` (default :func:`json_path_for`);
    with ``pdf``, print the page to PDF through headless Chromium. Returns the JSON's path. None
    of them may be one of ``inputs`` (the files the audit read). ``page``: how the page is drawn
    (:class:`~ppdm.report.html.HtmlOptions`)."""
    from ppdm.report.browser import print_pdf
    from ppdm.report.html import render_html

    html = Path(html)
    data = Path(json_out) if json_out is not None else json_path_for(html)
    read = inputs if isinstance(inputs, ReadFiles) else ReadFiles(inputs)
    for target in (data, html, pdf):
        if target is not None:
            refuse_overwriting_input(target, read)
    check_report_paths(html, pdf)
    write_atomic(data, json.dumps(report, ensure_ascii=False, separators=(",", ":"), default=str) + "\n", inputs=read)
    write_atomic(html, render_html(report, page), inputs=read)
    if pdf is not None:
        print_pdf(html, Path(pdf))
    return data


def redraw_report(report: dict[str, Any], html: str | Path, json_out: str | Path | None = None, pdf: str | Path | None = None, source: str = "the report") -> None:
    """Draw a saved report's page again from its JSON (``ppdm report NAME.report.json``): the
    page as ``html``, a copy of the JSON at ``json_out`` when given, the PDF with ``pdf``. A JSON
    the page cannot be drawn from (edited by hand, or written by another ppdm) is refused in one
    line naming ``source`` before anything is written."""
    from ppdm.report.browser import print_pdf
    from ppdm.report.html import render_html

    check_report_paths(html, pdf)
    try:
        page = render_html(report)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)[:120] or type(exc).__name__
        raise ReportError(
            f"{source}: this ppdm cannot draw a page from it ({what}); make the report again from the audit's JSON (ppdm report AUDIT.json)"
        ) from None
    if json_out is not None:
        write_atomic(json_out, json.dumps(report, ensure_ascii=False, separators=(",", ":"), default=str) + "\n")
    write_atomic(Path(html), page)
    if pdf is not None:
        print_pdf(Path(html), Path(pdf))
