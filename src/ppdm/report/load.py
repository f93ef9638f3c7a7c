"""Read what a report is made from: saved attack results, the published model, a frontier."""

from __future__ import annotations

import json
import math
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
    except RecursionError:
        raise ReportError(f"{p}: JSON nested too deeply to read ({what})") from None


def load_result(path: str | Path) -> dict[str, Any]:
    """An attack result as ``ppdm audit --out`` / ``ppdm attack --out`` write it, checked."""
    data = read_json(path, "an attack result")
    if not isinstance(data, dict) or data.get("format") != "ppdm-attack-result":
        raise ReportError(f"{path}: not an attack result (write one with ppdm audit --out or ppdm attack --out)")
    missing = [k for k in ("summary", "values", "quasi_identifiers", "groups") if k not in data]
    if missing:
        raise ReportError(f"{path}: attack result without {missing[0]!r}")
    if not isinstance(data["groups"], list) or not isinstance(data["values"], list) or not isinstance(data["summary"], dict):
        raise ReportError(f"{path}: attack result whose groups, values or summary have the wrong type")
    _check_counts(data["summary"], path)
    for i, group in enumerate(data["groups"]):
        if not isinstance(group, dict) or not {"rows", "posterior", "provenance", "qi"} <= set(group):
            raise ReportError(f"{path}: group {i} lacks rows, posterior, provenance or qi")
        if not isinstance(group["posterior"], list) or len(group["posterior"]) != len(data["values"]):
            raise ReportError(f"{path}: group {i} has {len(group['posterior'])} probabilities for {len(data['values'])} values")
        _check_posterior(group["posterior"], f"{path}: group {i}")
        records = group.get("records", 0)
        if not _is_whole(records):
            raise ReportError(f"{path}: group {i} has {records!r} records (expected a whole number >= 0)")
    try:
        leaf_pairs_of(data)
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None
    return data


def _is_whole(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0 and float(x).is_integer()


def _check_counts(summary: dict[str, Any], path: str | Path) -> None:
    """The summary's head counts are whole numbers of people, never negative or NaN."""
    for key in ("records", "targets", "qi_groups", "exposed_records", "certain_records"):
        if key in summary and not _is_whole(summary[key]):
            raise ReportError(f"{path}: summary {key} is {summary[key]!r} (expected a whole number >= 0)")


def _check_posterior(posterior: list[Any], where: str) -> None:
    """Probabilities: finite, in [0, 1], adding up to 1."""
    ok = all(isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) and -1e-9 <= p <= 1 + 1e-9 for p in posterior)
    if not ok or abs(sum(posterior) - 1.0) > 1e-6:
        raise ReportError(f"{where}: posterior {posterior[:6]!r} is not a probability distribution")


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
