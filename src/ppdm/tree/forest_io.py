"""JSON read/write of forests (format ``ppdm-forest``, version 1), validated field by field.

A malformed file gets a :class:`~ppdm.errors.TreeFormatError` naming the field at fault, e.g.
``trees[2].nodes[5].split.threshold: expected a number, got "abc"``. Forests are never pickled.
Each tree's nodes are written as in a ``ppdm-tree`` file (:mod:`ppdm.tree.io`), so a tree's
disclosure decides whether its labels, error rates or class counts are written; a boosted tree's
nodes add ``n_samples`` (rows), ``value`` (leaf score) and ``cover`` (sum of hessians).

Schema (version 1)::

    {"format": "ppdm-forest", "version": 1,
     "algorithm": "xgboost", "combine": "additive",        # "vote" | "mean-proba" | "additive"
     "link": "logistic", "base_score": [-1.104],            # additive forests only
     "class_attribute": "income", "classes": ["<=50K", ">50K"],
     "attributes": [...],                                   # as in ppdm-tree, shared by every tree
     "params": {"learning_rate": 0.3, "reg_lambda": 1},     # what counts were derived with
     "trees": [{"algorithm": "xgboost", "criterion": null, "disclosure": "class-counts",
                "known": ["class-counts", "cover", "leaf-values", "sample-counts"],
                "output": 0,                                # additive forests only
                "multiplicities": "1020113..." | [1, 0, 2, ...] | null,
                "nodes": [...]}, ...]}                      # as in ppdm-tree

``multiplicities`` hold one number per training row (in the order the model was fitted on):
a string of base-36 digits (``0``–``9``, ``a``–``z``; what is written when every multiplicity is
below 36), or a list of non-negative integers; ``null`` when unknown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ppdm.errors import PpdmError, TreeFormatError
from ppdm.files import finite_number, write_atomic
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import COMBINES, LINKS, QUANTITIES, Forest
from ppdm.tree.io import (
    _fail,
    _get,
    _jsonable,
    _link,
    _node_to_dict,
    _num,
    _read_attributes,
    _read_node,
    check_header,
    read_model_file,
)
from ppdm.tree.model import Attribute, Tree

FORMAT = "ppdm-forest"
VERSION = 1


# -- writing ----------------------------------------------------------------------------------
def forest_to_dict(forest: Forest) -> dict[str, Any]:
    """The JSON-ready dictionary of ``forest`` (each tree holding what its disclosure reveals)."""
    if forest.is_regressor:
        raise PpdmError("a ppdm-forest file holds a classifier: keep a regressor in its library's own format")
    out: dict[str, Any] = {"format": FORMAT, "version": VERSION, "algorithm": forest.algorithm, "combine": forest.combine}
    if forest.combine == "additive":
        out["link"] = forest.link
        out["base_score"] = [float(b) for b in forest.base_score]
    out["class_attribute"] = forest.class_attribute
    out["classes"] = [_jsonable(c) for c in forest.classes]
    out["attributes"] = [_attribute(a) for a in forest.attributes.values()]
    out["params"] = {k: _jsonable(v) for k, v in forest.params.items()}
    out["trees"] = [_tree_to_dict(forest, i) for i in range(forest.n_trees)]
    return out


def _attribute(a: Attribute) -> dict[str, Any]:
    if a.is_categorical:
        return {"name": a.name, "kind": a.kind, "categories": [_jsonable(c) for c in a.categories]}
    return {"name": a.name, "kind": a.kind}


def _tree_to_dict(forest: Forest, i: int) -> dict[str, Any]:
    tree, known = forest.trees[i], forest.known[i]
    out: dict[str, Any] = {
        "algorithm": tree.algorithm,
        "criterion": tree.criterion,
        "disclosure": tree.disclosure.value,
        "known": sorted(known),
    }
    if forest.combine == "additive":
        out["output"] = int(forest.outputs[i])
    out["multiplicities"] = _write_multiplicities(forest.multiplicities[i])
    nodes = []
    for node in tree.nodes:
        d = _node_to_dict(tree, node)
        if "sample-counts" in known and "n_samples" not in d:
            d["n_samples"] = _num(node.n_samples)  # type: ignore[arg-type]
        nodes.append(d)
    out["nodes"] = nodes
    return out


_DIGITS = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
_VALUE_OF = np.full(256, -1, dtype=np.int64)
_VALUE_OF[_DIGITS] = np.arange(36)


def _write_multiplicities(m: np.ndarray | None) -> str | list[int] | None:
    """One base-36 digit per row when every multiplicity has one, else a list (``None``: unknown)."""
    if m is None:
        return None
    if len(m) == 0 or m.max() < 36:
        return _DIGITS[m].tobytes().decode("ascii")
    return [int(v) for v in m]


def save_forest(forest: Forest, path: str | Path) -> None:
    """Write ``forest`` to ``path`` as ``ppdm-forest`` JSON."""
    write_atomic(path, json.dumps(forest_to_dict(forest), allow_nan=False) + "\n")


# -- reading ----------------------------------------------------------------------------------
def forest_from_dict(data: Mapping) -> Forest:
    """Build a :class:`Forest` from its JSON dictionary, validating every field."""
    check_header(data, FORMAT, VERSION)
    combine = _choice(data, "combine", "", COMBINES)
    additive = combine == "additive"
    classes = _get(data, "classes", "", list)
    if not classes:
        raise _fail("classes", "expected at least one class")
    attributes = {a.name: a for a in _read_attributes(data)}
    class_attribute = _get(data, "class_attribute", "", str, optional=True) or "class"
    raw_trees = _get(data, "trees", "", list)
    if not raw_trees:
        raise _fail("trees", "expected at least one tree")
    read = [_read_tree(raw, i, classes, attributes, class_attribute, additive) for i, raw in enumerate(raw_trees)]
    trees = [t for t, _, _, _ in read]
    link = _choice(data, "link", "", LINKS) if additive else None
    base = _numbers(data, "base_score", "") if additive else None
    if additive:
        _check_scores(link, base, [o for _, o, _, _ in read], len(classes))  # type: ignore[arg-type]
    _check_rows([m for _, _, m, _ in read])
    params = _get(data, "params", "", dict, optional=True) or {}
    try:
        forest = Forest(
            trees, combine, link=link, base_score=base, outputs=[o for _, o, _, _ in read] if additive else None,
            multiplicities=[m for _, _, m, _ in read], algorithm=_get(data, "algorithm", "", str, optional=True),
            params=params,
        )  # fmt: skip
    except PpdmError as exc:
        raise TreeFormatError(str(exc)) from None
    for i, (_, _, _, known) in enumerate(read):
        if known != forest.known[i]:
            missing = ", ".join(sorted(known ^ forest.known[i]))
            raise _fail(f"trees[{i}].known", f"does not match what the nodes carry (differs in: {missing})")
    return forest


def _read_tree(
    raw: Any, i: int, classes: list, attributes: Mapping[str, Attribute], class_attribute: str, additive: bool
) -> tuple[Tree, int, np.ndarray | None, frozenset[str]]:
    where = f"trees[{i}]"
    if not isinstance(raw, dict):
        raise _fail(where, "expected an object")
    raw_nodes = _get(raw, "nodes", where, list)
    if not raw_nodes:
        raise _fail(f"{where}.nodes", "expected at least one node")
    try:
        nodes = [_read_node(node, j, classes, attributes) for j, node in enumerate(raw_nodes)]
        _link(nodes)
    except TreeFormatError as exc:
        raise TreeFormatError(f"{where}.{exc}") from None
    for node in nodes:
        if additive and node.is_leaf and node.value is None:
            raise _fail(f"{where}.nodes[{node.id}].value", "missing (an additive forest needs every leaf's score)")
    try:
        disclosure = Disclosure.parse(_get(raw, "disclosure", where, str))
    except PpdmError as exc:
        raise _fail(f"{where}.disclosure", str(exc)) from None
    tree = Tree(
        nodes, list(attributes.values()), classes, class_attribute,
        criterion=_get(raw, "criterion", where, str, optional=True),
        algorithm=_get(raw, "algorithm", where, str, optional=True), disclosure=disclosure,
    )  # fmt: skip
    output = _get(raw, "output", where, int) if additive else 0
    return tree, output, _multiplicities(raw, where), _known(raw, where)


def _check_scores(link: str, base: list[float], outputs: list[int], k: int) -> None:
    if link == "logistic" and k != 2:
        raise _fail("link", f"the logistic link needs 2 classes, the forest has {k}")
    n_out = 1 if link == "logistic" else k
    if len(base) != n_out:
        raise _fail("base_score", f"expected {n_out} number(s) for the {link} link, got {len(base)}")
    for i, o in enumerate(outputs):
        if not 0 <= o < n_out:
            raise _fail(f"trees[{i}].output", f"expected a score index below {n_out}, got {o}")


def _check_rows(multiplicities: list[np.ndarray | None]) -> None:
    sizes = [(i, len(m)) for i, m in enumerate(multiplicities) if m is not None]
    for i, n in sizes[1:]:
        if n != sizes[0][1]:
            raise _fail(f"trees[{i}].multiplicities", f"counts {n} training rows, trees[{sizes[0][0]}] counts {sizes[0][1]}")


def _known(raw: Mapping, where: str) -> frozenset[str]:
    known = _get(raw, "known", where, list)
    for j, q in enumerate(known):
        if q not in QUANTITIES:
            raise _fail(f"{where}.known[{j}]", f"expected one of {', '.join(QUANTITIES)}, got {json.dumps(q)}")
    return frozenset(known)


def _multiplicities(raw: Mapping, where: str) -> np.ndarray | None:
    m = _get(raw, "multiplicities", where, (str, list), optional=True)
    if m is None:
        return None
    if isinstance(m, str):
        values = _VALUE_OF[np.frombuffer(m.encode("utf-8"), dtype=np.uint8)]
        if len(values) != len(m) or (values < 0).any():
            raise _fail(f"{where}.multiplicities", "expected base-36 digits 0-9, a-z (one per training row)")
        return values
    if not all(type(v) is int and 0 <= v < 2**62 for v in m):
        raise _fail(f"{where}.multiplicities", "expected a list of non-negative integers (one per training row) or null")
    return np.asarray(m, dtype=np.int64)


def _choice(data: Mapping, key: str, where: str, allowed: tuple[str, ...]) -> str:
    value = _get(data, key, where, str)
    if value not in allowed:
        raise _fail(f"{where}.{key}" if where else key, f"expected one of {', '.join(allowed)}, got {value!r}")
    return value


def _numbers(data: Mapping, key: str, where: str) -> list[float]:
    values = _get(data, key, where, list)
    if not all(finite_number(v) for v in values):
        raise _fail(f"{where}.{key}" if where else key, "expected a list of finite numbers")
    return [float(v) for v in values]


def load_forest(path: str | Path) -> Forest:
    """Read a forest written by :func:`save_forest` (validated; errors name the file and the field at fault)."""
    return read_model_file(path, "forest", forest_from_dict)
