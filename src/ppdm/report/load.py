"""Read what a report is made from: saved attack results, the published model, a frontier."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ppdm.errors import ReportError
from ppdm.report.persons import leaf_pairs_of
from ppdm.tree.forest import Forest
from ppdm.tree.forest_io import forest_from_dict
from ppdm.tree.io import read_model_file, tree_from_dict
from ppdm.tree.model import Tree


def read_json(path: str | Path, what: str) -> Any:
    """The parsed JSON of ``path``; every error is one line naming the file."""
    p = Path(path)
    if p.is_dir():
        raise ReportError(f"{p}: is a directory, not {what}")
    if not p.is_file():
        raise ReportError(f"{p}: no such file ({what})")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReportError(f"{p}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except UnicodeDecodeError:
        raise ReportError(f"{p}: not a text file ({what})") from None


def load_result(path: str | Path) -> dict[str, Any]:
    """An attack result as ``ppdm audit --out`` / ``ppdm attack --out`` write it, checked."""
    data = read_json(path, "an attack result")
    if not isinstance(data, dict) or data.get("format") != "ppdm-attack-result":
        raise ReportError(f"{path}: not an attack result (write one with ppdm audit --out or ppdm attack --out)")
    missing = [k for k in ("summary", "values", "quasi_identifiers", "groups") if k not in data]
    if missing:
        raise ReportError(f"{path}: attack result without {missing[0]!r}")
    for i, group in enumerate(data["groups"]):
        if not isinstance(group, dict) or not {"rows", "posterior", "provenance", "qi"} <= set(group):
            raise ReportError(f"{path}: group {i} lacks rows, posterior, provenance or qi")
        if len(group["posterior"]) != len(data["values"]):
            raise ReportError(f"{path}: group {i} has {len(group['posterior'])} probabilities for {len(data['values'])} values")
    try:
        leaf_pairs_of(data)
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None
    return data


def load_model(path: str | Path) -> Tree | Forest:
    """A ppdm tree or forest JSON file (``ppdm train --out``, the importers)."""

    def parse(data: Any) -> Tree | Forest:
        if isinstance(data, dict) and data.get("format") == "ppdm-forest":
            return forest_from_dict(data)
        return tree_from_dict(data)

    return read_model_file(path, "model", parse)


def load_frontier(path: str | Path) -> list[Any] | dict[str, Any]:
    """A frontier: a JSON list of ``[accuracy, risk, label]`` (or objects with those keys), or
    ``{"risk": name, "points": [...]}``; checked by :func:`ppdm.report.build.frontier_of`."""
    data = read_json(path, "a frontier")
    if not isinstance(data, (list, dict)):
        raise ReportError(f"{path}: a frontier is a list of points or an object with 'points'")
    return data
