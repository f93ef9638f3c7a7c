"""Execute the notebooks here in place, so that they are stored with their outputs (a reader on
GitHub sees the cards): ``PYTHONPATH=src python docs/notebooks/run.py``."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def run(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":  # the kernel's own start-up warnings are not the notebook's
            cell.outputs = [o for o in cell.outputs if not (o.output_type == "stream" and "[IPKernelApp]" in o.text)]
    nbformat.write(nb, path)


if __name__ == "__main__":
    for notebook in sorted(HERE.glob("*.ipynb")):
        run(notebook)
