"""A small JSON Schema checker for the keywords ppdm's shipped schemas use (draft 2020-12 subset:
type, const, enum, required, properties, additionalProperties, items, minItems, uniqueItems,
minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, oneOf, $ref
to #/$defs). ``jsonschema`` is not a dependency; when it is
installed, the tests validate with it too (:func:`validate`)."""

from __future__ import annotations

import importlib
import re
from typing import Any

_TYPES: dict[str, Any] = {
    "object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}  # fmt: skip
KNOWN = {
    "$schema", "$id", "title", "description", "type", "const", "enum", "required", "properties", "additionalProperties", "items",
    "minItems", "minimum", "minLength", "pattern", "oneOf", "$ref", "$defs", "maximum", "exclusiveMinimum", "exclusiveMaximum", "maxLength",
    "uniqueItems",
}


def _is(value: Any, kind: str) -> bool:
    check = _TYPES[kind]
    return check(value) if callable(check) and not isinstance(check, type) else isinstance(value, check)


def errors(instance: Any, schema: dict[str, Any], root: dict[str, Any] | None = None, at: str = "$") -> list[str]:
    """Every way ``instance`` breaks ``schema``, each naming where (``$.attacks[0].role``)."""
    root = root if root is not None else schema
    unknown = set(schema) - KNOWN
    if unknown:
        return [f"{at}: the checker does not know keyword(s) {sorted(unknown)}"]
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(instance, root["$defs"][name], root, at)
    out: list[str] = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(instance, k) for k in kinds):
            return [f"{at}: expected {kinds}, got {type(instance).__name__}"]
    if "const" in schema and instance != schema["const"]:
        out.append(f"{at}: expected {schema['const']!r}")
    if "enum" in schema and instance not in schema["enum"]:
        out.append(f"{at}: {instance!r} not one of {schema['enum']}")
    if "oneOf" in schema:
        passing = [s for s in schema["oneOf"] if not errors(instance, s, root, at)]
        if len(passing) != 1:
            out.append(f"{at}: matches {len(passing)} of oneOf's schemas, not exactly one")
    if isinstance(instance, dict):
        out += [f"{at}: missing {k!r}" for k in schema.get("required", []) if k not in instance]
        props = schema.get("properties", {})
        for k, v in instance.items():
            if k in props:
                out += errors(v, props[k], root, f"{at}.{k}")
            elif schema.get("additionalProperties") is False:
                out.append(f"{at}: unexpected key {k!r}")
            elif isinstance(schema.get("additionalProperties"), dict):
                out += errors(v, schema["additionalProperties"], root, f"{at}.{k}")
    if isinstance(instance, list):
        if len(instance) < schema.get("minItems", 0):
            out.append(f"{at}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, v in enumerate(instance):
                out += errors(v, schema["items"], root, f"{at}[{i}]")
    if isinstance(instance, str):
        if len(instance) < schema.get("minLength", 0):
            out.append(f"{at}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], instance):
            out.append(f"{at}: {instance!r} does not match {schema['pattern']!r}")
    if _is(instance, "number"):
        bounds = (("minimum", lambda b: instance < b), ("maximum", lambda b: instance > b),
                  ("exclusiveMinimum", lambda b: instance <= b), ("exclusiveMaximum", lambda b: instance >= b))  # fmt: skip
        out += [f"{at}: {instance} breaks {key} {schema[key]}" for key, broken in bounds if key in schema and broken(schema[key])]
    if isinstance(instance, str) and len(instance) > schema.get("maxLength", len(instance)):
        out.append(f"{at}: longer than {schema['maxLength']}")
    if isinstance(instance, list) and schema.get("uniqueItems") and len({repr(v) for v in instance}) != len(instance):
        out.append(f"{at}: an item repeated")
    return out


def validate(instance: Any, schema: dict[str, Any]) -> None:
    """Raise AssertionError naming every error (and validate with ``jsonschema`` when installed)."""
    found = errors(instance, schema)
    assert not found, "\n".join(found)
    try:
        jsonschema = importlib.import_module("jsonschema")
    except ImportError:
        return
    jsonschema.validate(instance, schema)
