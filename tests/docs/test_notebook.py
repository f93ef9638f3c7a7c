"""``docs/notebooks/audit.ipynb`` runs (audit, display, report and defend cells on bundled data)
and shows the report's cards: HTML outputs with the verdict, both as stored (what a reader on
GitHub sees) and when executed again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebooks" / "audit.ipynb"


def _html(nb) -> list[str]:
    return [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if "text/html" in o.get("data", {})]


def _cards(html: list[str]) -> None:
    audits = [h for h in html if 'id="verdict"' in h]
    assert audits and all("What was audited" in h and "data-verdict=" in h for h in audits)
    assert any("data-verdict=" in h and "chosen" in h for h in html if 'id="verdict"' not in h)  # the defense's card


def test_the_stored_notebook_shows_the_cards():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    _cards(_html(nb))
    assert not any(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))


def test_the_notebook_runs_and_its_outputs_hold_the_cards(monkeypatch):
    src = str(ROOT / "src")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    _cards(_html(nb))
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "stream")
    assert "<DefenseResult for 'certain=0'" in printed and "Traceback" not in printed
