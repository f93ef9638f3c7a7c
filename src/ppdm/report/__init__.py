"""Reports a privacy officer reads: one self-contained HTML page (printable to PDF) and the JSON
it is drawn from, made from attack results, the published model, the threat model and a defense
search's frontier (see ``docs/report.md``)."""

from ppdm.report.build import build_report, frontier_of
from ppdm.report.html import render_html
from ppdm.report.verdict import verdict
from ppdm.report.write import json_path_for, write_report

__all__ = ["build_report", "frontier_of", "json_path_for", "render_html", "verdict", "write_report"]
