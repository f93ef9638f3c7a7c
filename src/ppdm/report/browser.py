"""Headless Chromium: print a report to PDF, take a screenshot, read the page after its script ran.

Debian's ``chromium`` (or ``$PPDM_CHROMIUM``) runs with the flags a closed machine needs: no
sandbox (root in a container), no GPU, and no background networking, component updates, sync or
QUIC, which would otherwise try to reach the network at every start; each run gets a fresh empty
profile. The page's console messages are read from Chromium's log (``--enable-logging=stderr``):
the report's own script logs nothing, so any console line is an error in the page.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ppdm.errors import ReportError

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--hide-scrollbars",
)
CONSOLE = re.compile(r":CONSOLE(?:\(\d+\)|:\d+)\] (.*)$")


def find_chromium() -> str | None:
    """The Chromium to run: ``$PPDM_CHROMIUM``, else ``chromium`` or ``chromium-browser`` on the PATH."""
    given = os.environ.get("PPDM_CHROMIUM")
    if given:
        return given if shutil.which(given) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageRun:
    """What one Chromium run left: its standard output (the DOM with ``--dump-dom``) and the
    page's console messages."""

    stdout: str
    console: list[str]


def run_chromium(page: Path, *extra: str, timeout: float = 60.0, fragment: str = "") -> PageRun:
    """Open ``page`` (a local HTML file; at ``#fragment`` when given) in headless Chromium with ``extra`` flags."""
    binary = find_chromium()
    if binary is None:
        raise ReportError("no Chromium found to render the report (install Debian's chromium, or set PPDM_CHROMIUM)")
    page = Path(page).resolve()
    if not page.is_file():
        raise ReportError(f"{page}: no such report file")
    with tempfile.TemporaryDirectory(prefix="ppdm-chromium-") as profile:
        command = [binary, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *extra, page.as_uri() + (f"#{fragment}" if fragment else "")]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ReportError(f"{page}: Chromium did not finish within {timeout:g} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ReportError(f"{page}: Chromium failed (exit {done.returncode}): {last}")
    messages = [m.group(1) for m in map(CONSOLE.search, done.stderr.splitlines()) if m]
    return PageRun(done.stdout, messages)


def print_pdf(page: Path, pdf: Path, timeout: float = 120.0) -> PageRun:
    """Print ``page`` to ``pdf`` (A4-ish, no header or footer, after the page's script ran)."""
    run = run_chromium(page, f"--print-to-pdf={Path(pdf).resolve()}", "--no-pdf-header-footer", "--virtual-time-budget=5000", timeout=timeout)
    if not Path(pdf).is_file():
        raise ReportError(f"{pdf}: Chromium wrote no PDF")
    return run


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 1600, fragment: str = "") -> PageRun:
    """A ``width × height`` screenshot of ``page`` (scrolled to ``#fragment`` when given)."""
    run = run_chromium(
        page, f"--screenshot={Path(png).resolve()}", f"--window-size={width},{height}", "--virtual-time-budget=5000", fragment=fragment
    )
    if not Path(png).is_file():
        raise ReportError(f"{png}: Chromium wrote no screenshot")
    return run


def dump_dom(page: Path) -> PageRun:
    """The page's DOM once its script ran, with its console messages."""
    return run_chromium(page, "--dump-dom", "--virtual-time-budget=5000")
