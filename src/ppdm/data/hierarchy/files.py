"""Hierarchy files: :func:`load_hierarchies` and :func:`save_hierarchies` (JSON or YAML), and
the hierarchies bundled for the UCI Adult attributes (:func:`adult_hierarchies`).

A file maps attribute names to entries in the format of :func:`ppdm.data.hierarchy.spec.parse_entry`::

    hierarchies:
      workclass: {kind: categorical, tree: {ANY: [Private, {Government: [Federal-gov, ...]}]}}
      age:       {kind: numeric, range: [0, inf], cuts: [[40], [20, 30, 40, 50, 60]]}
      hours:     {kind: numeric, tree: {range: [0, inf], children: [{range: [0, 40]}, ...]}}

Note that YAML 1.1 reads unquoted ``yes``/``no``/``on``/``off`` as booleans: a categorical tree
holding one is an error naming it (quote such values). The format: ``docs/hierarchies.md``.
Errors name the file and, where possible, its line and column, the attribute and the field.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ppdm.data.hierarchy.model import Hierarchy
from ppdm.data.hierarchy.spec import parse_entry, prefixed
from ppdm.errors import HierarchyError, PpdmError, YamlSyntaxError
from ppdm.files import load_yaml, read_text, write_atomic

__all__ = ["adult_hierarchies", "load_hierarchies", "save_hierarchies"]

PathLike = str | os.PathLike[str]


def _file_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    raise HierarchyError(
        f"{path}: unknown hierarchy file extension {suffix!r} (expected .json, .yaml or .yml)"
    )


def _parse_text(text: str, fmt: str, source: str) -> Any:
    """JSON or YAML text → data; syntax errors name the file, line and column."""
    if fmt == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            at = f"line {exc.lineno}, column {exc.colno}"
            raise HierarchyError(f"{source}: invalid JSON at {at}: {exc.msg}") from None
        except RecursionError:
            raise HierarchyError(f"{source}: JSON nested too deeply to read") from None
    try:
        return load_yaml(text, source)
    except YamlSyntaxError as exc:
        at = f" at line {exc.mark.line + 1}, column {exc.mark.column + 1}" if exc.mark is not None else ""
        raise HierarchyError(f"{source}: invalid YAML{at}: {exc.problem}") from None
    except PpdmError as exc:
        raise HierarchyError(str(exc)) from None


def _boolean_in(node: Any, where: str) -> str | None:
    """Where a YAML boolean (an unquoted ``yes``/``no``/``on``/``off``/``true``/``false``) sits
    among the names and values of a categorical tree, or ``None``."""
    if isinstance(node, bool):
        return f"{where}: {node!r}"
    if isinstance(node, Mapping):
        for key, value in node.items():
            if isinstance(key, bool):
                return f"{where}: the name {key!r}"
            found = _boolean_in(value, f"{where}.{key}")
            if found:
                return found
    if isinstance(node, (list, tuple)):
        for i, item in enumerate(node):
            found = _boolean_in(item, f"{where}[{i}]")
            if found:
                return found
    return None


def _refuse_yaml_booleans(entries: Mapping[Any, Any], source: str) -> None:
    """A categorical value written ``yes`` in YAML arrives as ``True`` and then matches no value
    of the table: name it, with the fix."""
    for attribute, spec in entries.items():
        if isinstance(attribute, bool):
            raise HierarchyError(
                f"{source}: hierarchies: the attribute name {attribute!r} is a YAML boolean "
                "(unquoted yes/no/on/off/true/false read as true/false); quote it, e.g. 'yes'"
            )
        if isinstance(spec, Mapping) and spec.get("kind") == "categorical":
            found = _boolean_in(spec.get("tree"), f"hierarchies.{attribute}.tree")
            if found:
                raise HierarchyError(
                    f"{source}: {found} is a YAML boolean (unquoted yes/no/on/off/true/false read as "
                    "true/false); quote the value, e.g. 'yes'"
                )


def _hierarchies_from_data(data: Any, source: str, fmt: str = "json") -> dict[str, Hierarchy]:
    if not isinstance(data, Mapping) or "hierarchies" not in data:
        raise HierarchyError(f"{source}: the top level must be a mapping with a 'hierarchies' field")
    entries = data["hierarchies"]
    if not isinstance(entries, Mapping):
        raise HierarchyError(f"{source}: 'hierarchies' must map attribute names to hierarchies")
    if fmt == "yaml":
        _refuse_yaml_booleans(entries, source)
    out: dict[str, Hierarchy] = {}
    for attribute, spec in entries.items():
        where = f"hierarchies.{attribute}"
        if not isinstance(attribute, str):
            raise HierarchyError(f"{source}: {where}: attribute names must be strings, got {attribute!r}")
        with prefixed(source):
            try:
                out[attribute] = Hierarchy.from_spec(parse_entry(spec, attribute, where))
            except RecursionError:
                raise HierarchyError(f"{where}: nested more deeply than a hierarchy can be read") from None
    return out


def load_hierarchies(path: PathLike) -> dict[str, Hierarchy]:
    """Read ``{"hierarchies": {attribute: spec}}`` from a ``.json``, ``.yaml`` or ``.yml`` file.

    Each spec is ``{"kind": "categorical", "tree": ...}``, ``{"kind": "numeric", "tree": ...}``
    or ``{"kind": "numeric", "cuts": [[...], ...], "range": [lo, hi]}`` (``range`` optional,
    default unbounded). Errors name the file and, where possible, the attribute and field.
    """
    from ppdm.files import as_path

    path = as_path(path, "hierarchy", HierarchyError)
    fmt = _file_format(path)
    if not path.exists() and not path.is_symlink():
        raise HierarchyError(f"{path}: hierarchy file not found")
    try:
        text = read_text(path, "hierarchy")
    except PpdmError as exc:
        raise HierarchyError(str(exc)) from None
    return _hierarchies_from_data(_parse_text(text, fmt, str(path)), str(path), fmt)


def save_hierarchies(path: PathLike, hierarchies: Mapping[str, Hierarchy]) -> None:
    """Write ``hierarchies`` (attribute → hierarchy) in the format :func:`load_hierarchies` reads."""
    path = Path(path)
    fmt = _file_format(path)
    entries: dict[str, Any] = {}
    for attribute, hierarchy in hierarchies.items():
        if not isinstance(hierarchy, Hierarchy) or hierarchy.attribute != attribute:
            raise HierarchyError(
                f"{path}: entry {attribute!r} must be the Hierarchy of attribute {attribute!r}, "
                f"got {hierarchy!r}"
            )
        spec = hierarchy.to_dict()
        del spec["attribute"]
        entries[attribute] = spec
    data = {"hierarchies": entries}
    if fmt == "json":
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    else:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=None)
    write_atomic(path, text)


@functools.lru_cache(maxsize=1)
def _bundled_adult() -> tuple[tuple[str, Hierarchy], ...]:
    resource = importlib.resources.files("ppdm") / "data/_bundled/hierarchies/adult.yaml"
    source = "ppdm/data/_bundled/hierarchies/adult.yaml"
    data = _parse_text(resource.read_text(encoding="utf-8"), "yaml", source)
    return tuple(_hierarchies_from_data(data, source).items())


def adult_hierarchies() -> dict[str, Hierarchy]:
    """The bundled hierarchies of the UCI Adult attributes (all but ``fnlwgt`` and ``income``).

    Taxonomy trees in the spirit of TDS (Fung, Wang & Yu, ICDE 2005), which paper 002 §4 uses
    for Adult; the YAML file's header documents each choice.
    """
    return dict(_bundled_adult())
