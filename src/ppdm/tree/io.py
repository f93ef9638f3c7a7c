"""JSON read/write of trees, with a versioned schema and validation.

A malformed file gets a :class:`~ppdm.errors.TreeFormatError` naming the field at fault, e.g.
``nodes[3].split.threshold: expected a number, got "abc"``. Trees are never pickled.

Schema (version 1)::

    {"format": "ppdm-tree", "version": 1,
     "algorithm": "c45", "criterion": "gain_ratio", "disclosure": "class-counts",
     "class_attribute": "income", "classes": ["<=50K", ">50K"],
     "attributes": [{"name": "age", "kind": "numeric"},
                    {"name": "sex", "kind": "categorical", "categories": ["Female", "Male"]}],
     "nodes": [{"id": 0, "parent": null, "label": "<=50K",
                "counts": [22654, 7508],            # class-counts disclosure only
                "n_samples": 30162, "n_errors": 7508, # error-rates disclosure
                "split": {"kind": "threshold", "attribute": "age", "threshold": 30.5, "default": 0}
                      | {"kind": "categorical", "attribute": "sex",
                         "groups": [["Female"], ["Male"]], "default": 1}
                      | null,
                "children": [1, 2], "candidates": ["age", "sex"], "score": 0.12,
                "value": -0.31, "cover": 1841.5}, ...]}     # trees of boosted forests only

``value`` (a leaf's additive score) and ``cover`` (the node's sum of hessians) are optional and
only written for trees of a boosted :class:`~ppdm.tree.forest.Forest` (``ppdm-forest`` files,
:mod:`ppdm.tree.forest_io`); files without them read as before, and a reader that ignores them
still gets the tree's structure, labels and counts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ppdm.errors import PpdmError, TreeFormatError
from ppdm.files import finite_number, write_atomic
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.splits import CategoricalSplit, Split, ThresholdSplit

T = TypeVar("T")

FORMAT = "ppdm-tree"
VERSION = 1


# -- writing ----------------------------------------------------------------------------------
def _num(x: float) -> float | int:
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def _split_to_dict(split: Split) -> dict[str, Any]:
    if isinstance(split, ThresholdSplit):
        return {"kind": "threshold", "attribute": split.attribute, "threshold": split.threshold, "default": split.default}
    return {
        "kind": "categorical",
        "attribute": split.attribute,
        "groups": [list(map(_jsonable, g)) for g in split.groups],
        "default": split.default,
    }


def _jsonable(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _node_to_dict(tree: Tree, node: Node) -> dict[str, Any]:
    out: dict[str, Any] = {"id": node.id, "parent": node.parent, "label": _jsonable(tree.classes[node.label])}
    if tree.disclosure.reveals_counts and node.counts is not None:
        out["counts"] = [_num(c) for c in node.counts]
    if tree.disclosure.reveals_rates and node.n_samples is not None:
        out["n_samples"] = _num(node.n_samples)
        out["n_errors"] = _num(node.n_errors or 0.0)
    if node.split is not None:
        out["split"] = _split_to_dict(node.split)
        out["children"] = list(node.children)
        out["candidates"] = list(node.candidates)
        if node.score is not None and math.isfinite(node.score):
            out["score"] = node.score
    if node.value is not None:
        out["value"] = float(node.value)
    if node.cover is not None:
        out["cover"] = float(node.cover)
    return out


def tree_to_dict(tree: Tree, disclosure: Disclosure | str | None = None) -> dict[str, Any]:
    """The JSON-ready dictionary of ``tree``, holding only what ``disclosure`` reveals
    (default: the tree's own level; see :meth:`Tree.published`)."""
    if tree.is_regressor:
        raise PpdmError("a ppdm-tree file holds a classification tree: keep a regression tree in its library's own format")
    tree = tree.published(disclosure)
    return {
        "format": FORMAT,
        "version": VERSION,
        "algorithm": tree.algorithm,
        "criterion": tree.criterion,
        "disclosure": tree.disclosure.value,
        "class_attribute": tree.class_attribute,
        "classes": [_jsonable(c) for c in tree.classes],
        "attributes": [
            {"name": a.name, "kind": a.kind, **({"categories": [_jsonable(c) for c in a.categories]} if a.is_categorical else {})}
            for a in tree.attributes.values()
        ],
        "nodes": [_node_to_dict(tree, n) for n in tree.nodes],
        **({"removed_records": _jsonable(tree.removed_records)} if tree.removed_records and tree.disclosure.reveals_rates else {}),
    }


def save_tree(tree: Tree, path: str | Path, disclosure: Disclosure | str | None = None) -> None:
    """Write ``tree`` to ``path`` as JSON, holding only what ``disclosure`` reveals (default: the tree's own level)."""
    write_atomic(path, json.dumps(tree_to_dict(tree, disclosure), indent=1, allow_nan=False) + "\n")


# -- reading ----------------------------------------------------------------------------------
def _fail(where: str, msg: str) -> TreeFormatError:
    return TreeFormatError(f"{where}: {msg}")


def _get(obj: Mapping, key: str, where: str, types: type | tuple[type, ...], optional: bool = False) -> Any:
    if key not in obj:
        if optional:
            return None
        raise _fail(f"{where}.{key}" if where else key, "missing")
    value = obj[key]
    if optional and value is None:
        return None
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise _fail(f"{where}.{key}" if where else key, f"expected {_tname(types)}, got {json.dumps(value)}")
    if not isinstance(value, types):
        raise _fail(f"{where}.{key}" if where else key, f"expected {_tname(types)}, got {json.dumps(value)[:60]}")
    return value


def _tname(types: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "an object"}
    ts = types if isinstance(types, tuple) else (types,)
    if set(ts) == {int, float}:
        return "a number"
    return " or ".join(names.get(t, t.__name__) for t in ts)


def _is_value(v: Any) -> bool:
    """A category or class value a file may hold: a text, a whole number or a finite number."""
    return isinstance(v, (str, int)) or (isinstance(v, float) and math.isfinite(v))


def _check_values(values: list, where: str, owner: str) -> None:
    """Categories or classes: plain values (no lists, objects, null or NaN), each listed once."""
    for j, v in enumerate(values):
        if not _is_value(v):
            raise _fail(f"{where}[{j}]", f"expected a text or a number, got {json.dumps(v)[:60]}")
    seen: set = set()
    for v in values:
        key = (type(v) is str, v)
        if key in seen:
            raise _fail(where, f"{owner} lists {v!r} twice")
        seen.add(key)


def _read_attributes(data: Mapping) -> list[Attribute]:
    attrs = []
    seen: set[str] = set()
    for i, a in enumerate(_get(data, "attributes", "", list)):
        where = f"attributes[{i}]"
        if not isinstance(a, dict):
            raise _fail(where, "expected an object")
        name = _get(a, "name", where, str)
        kind = _get(a, "kind", where, str)
        if not name:
            raise _fail(f"{where}.name", "expected a column name, got an empty text")
        if name in seen:
            raise _fail(f"{where}.name", f"attribute {name!r} is listed twice")
        seen.add(name)
        if kind == "categorical":
            cats = _get(a, "categories", where, list)
            _check_values(cats, f"{where}.categories", f"attribute {name!r}")
            attrs.append(Attribute(name, "categorical", tuple(cats)))
        elif kind == "numeric":
            attrs.append(Attribute(name, "numeric"))
        else:
            raise _fail(f"{where}.kind", f"expected 'categorical' or 'numeric', got {kind!r}")
    return attrs


def _read_split(s: Any, where: str, attributes: Mapping[str, Attribute]) -> Split:
    if not isinstance(s, dict):
        raise _fail(where, "expected an object or null")
    attr = _get(s, "attribute", where, str)
    if attr not in attributes:
        raise _fail(f"{where}.attribute", f"{attr!r} is not among the tree's attributes")
    kind = _get(s, "kind", where, str)
    default = _get(s, "default", where, int, optional=True) or 0
    unknown = sorted(set(map(str, s)) - SPLIT_KEYS)
    if unknown:
        raise _fail(f"{where}.{unknown[0]}", f"unknown key (a split has: {', '.join(sorted(SPLIT_KEYS))})")
    if kind == "threshold":
        if attributes[attr].is_categorical:
            raise _fail(f"{where}.kind", f"threshold split on categorical attribute {attr!r}")
        t = _get(s, "threshold", where, (int, float))
        if not finite_number(t):
            raise _fail(f"{where}.threshold", f"expected a finite number, got {t}")
        _check_default(default, 2, where)
        return ThresholdSplit(attr, float(t), default)
    if kind == "categorical":
        if not attributes[attr].is_categorical:
            raise _fail(f"{where}.kind", f"categorical split on numeric attribute {attr!r}")
        domain = set(attributes[attr].categories)
        groups = _get(s, "groups", where, list)
        seen: set = set()
        for j, g in enumerate(groups):
            if not isinstance(g, list) or not g:
                raise _fail(f"{where}.groups[{j}]", "expected a non-empty list of values")
            for v in g:
                if not _is_value(v):
                    raise _fail(f"{where}.groups[{j}]", f"expected texts or numbers, got {json.dumps(v)[:60]}")
                if v not in domain:
                    raise _fail(f"{where}.groups[{j}]", f"value {v!r} is not a category of {attr!r}")
                if v in seen:
                    raise _fail(f"{where}.groups[{j}]", f"value {v!r} appears in two branches")
                seen.add(v)
        if len(groups) < 2:
            raise _fail(f"{where}.groups", f"expected two branches or more, got {len(groups)}")
        _check_default(default, len(groups), where)
        return CategoricalSplit(attr, tuple(tuple(g) for g in groups), default)
    raise _fail(f"{where}.kind", f"expected 'threshold' or 'categorical', got {kind!r}")


def _check_default(default: int, branches: int, where: str) -> None:
    """A split's default branch (where a value it has not seen goes) is one of its branches."""
    if not 0 <= default < branches:
        raise _fail(f"{where}.default", f"expected a branch from 0 to {branches - 1}, got {default}")


#: The keys a split of a ppdm-tree file may hold.
SPLIT_KEYS = frozenset({"kind", "attribute", "threshold", "groups", "default"})


def _read_node(raw: Any, i: int, classes: list, attributes: Mapping[str, Attribute]) -> Node:
    where = f"nodes[{i}]"
    if not isinstance(raw, dict):
        raise _fail(where, "expected an object")
    if _get(raw, "id", where, int) != i:
        raise _fail(f"{where}.id", f"expected {i} (nodes are listed in id order)")
    parent = _get(raw, "parent", where, int, optional=True)
    if (i == 0) != (parent is None) or (parent is not None and not 0 <= parent < i):
        raise _fail(f"{where}.parent", "the root has no parent; every other node's parent is listed before it")
    label = raw.get("label")
    if not _is_value(label) or label not in classes:
        raise _fail(f"{where}.label", f"{label!r} is not one of the classes {classes}")
    unknown = sorted(set(map(str, raw)) - NODE_KEYS)
    if unknown:
        raise _fail(f"{where}.{unknown[0]}", f"unknown key (a node has: {', '.join(sorted(NODE_KEYS))})")
    counts = _get(raw, "counts", where, list, optional=True)
    if counts is not None:
        if len(counts) != len(classes) or not all(_is_count(c) for c in counts):
            raise _fail(f"{where}.counts", f"expected {len(classes)} numbers of records (finite, 0 to {MAX_COUNT:g})")
        counts = np.asarray(counts, dtype=float)
    n = _count(raw, "n_samples", where)
    e = _count(raw, "n_errors", where)
    _check_sizes(counts, n, e, classes.index(label), where)
    split = raw.get("split")
    node = Node(id=i, parent=parent, depth=0, label=classes.index(label), counts=counts, _n_samples=n, _n_errors=e)
    node.value = _finite(raw, "value", where)
    node.cover = _finite(raw, "cover", where)
    if node.cover is not None and node.cover < 0:
        raise _fail(f"{where}.cover", f"expected a non-negative number, got {node.cover}")
    if split is not None:
        node.split = _read_split(split, f"{where}.split", attributes)
        children = _get(raw, "children", where, list)
        if len(children) != node.split.n_branches or not all(isinstance(c, int) and not isinstance(c, bool) and c > i for c in children):
            raise _fail(f"{where}.children", f"expected {node.split.n_branches} node ids greater than {i}")
        if len(set(children)) != len(children):
            raise _fail(f"{where}.children", "a node id is listed twice")
        node.children = list(children)
        candidates = _get(raw, "candidates", where, list, optional=True) or []
        for j, c in enumerate(candidates):
            if not isinstance(c, str) or c not in attributes:
                raise _fail(f"{where}.candidates[{j}]", f"{json.dumps(c)[:60]} is not among the tree's attributes")
        node.candidates = tuple(candidates)
        node.score = _finite(raw, "score", where)
    elif "children" in raw and raw["children"] not in (None, []):
        raise _fail(f"{where}.children", "a leaf (no split) has no children")
    return node


#: The keys a node of a ppdm-tree file may hold.
NODE_KEYS = frozenset({"id", "parent", "label", "counts", "n_samples", "n_errors", "split", "children", "candidates", "score", "value", "cover"})

#: The keys at the top of a ppdm-tree file.
TREE_KEYS = frozenset({
    "format", "version", "algorithm", "criterion", "disclosure", "class_attribute", "classes", "attributes", "nodes", "removed_records",
})

#: The largest record count a file may publish (beyond any real table: 1e15 records).
MAX_COUNT = 1e15


def _is_count(c: Any) -> bool:
    return finite_number(c) and 0 <= c <= MAX_COUNT


def _count(raw: Mapping, key: str, where: str) -> float | None:
    """An optional record count of a node (``n_samples``, ``n_errors``): finite, 0 to :data:`MAX_COUNT`."""
    x = _get(raw, key, where, (int, float), optional=True)
    if x is not None and not _is_count(x):
        raise _fail(f"{where}.{key}", f"expected a number of records (finite, 0 to {MAX_COUNT:g}), got {x}")
    return x


def _check_sizes(counts: np.ndarray | None, n: float | None, e: float | None, label: int, where: str) -> None:
    """A node's size and errors agree with its class counts, and errors are at most its size."""
    if n is not None and e is not None and e > n + 1e-9 * max(n, 1.0):
        raise _fail(f"{where}.n_errors", f"{e:g} errors among {n:g} records")
    if counts is None:
        return
    total, errors = float(counts.sum()), float(counts.sum() - counts[label])
    for key, given, implied in (("n_samples", n, total), ("n_errors", e, errors)):
        if given is not None and abs(given - implied) > 1e-6 * max(implied, 1.0):
            raise _fail(f"{where}.{key}", f"{given:g}, but the node's class counts give {implied:g}")


def _check_counts_add_up(nodes: list[Node]) -> None:
    """Every internal node's class counts are the sums of its children's (as every learner publishes them)."""
    for node in nodes:
        children = [nodes[c].counts for c in node.children]
        if node.counts is None or not children or any(c is None for c in children):
            continue
        below = np.sum([c for c in children if c is not None], axis=0)
        if not np.allclose(below, node.counts, rtol=1e-9, atol=1e-6):
            raise _fail(f"nodes[{node.id}].counts", f"{_plain_list(node.counts)}, but its children's add up to {_plain_list(below)}")


def _plain_list(counts: np.ndarray) -> str:
    return "[" + ", ".join(f"{c:g}" for c in counts) + "]"


def _finite(raw: Mapping, key: str, where: str) -> float | None:
    """An optional finite number of a node (``value``, ``cover``)."""
    x = _get(raw, key, where, (int, float), optional=True)
    if x is not None and not finite_number(x):
        raise _fail(f"{where}.{key}", f"expected a finite number, got {x}")
    return None if x is None else float(x)


def _check_published(nodes: list[Node], level: Disclosure) -> None:
    """Every node holds what the disclosure level says the file publishes."""
    for node in nodes:
        if level is Disclosure.CLASS_COUNTS and node.counts is None:
            raise _fail(f"nodes[{node.id}].counts", "missing, but the file's disclosure is class-counts")
        if level is Disclosure.ERROR_RATES and (node.n_samples is None or node.n_errors is None):
            raise _fail(f"nodes[{node.id}].n_samples", "missing (with n_errors), but the file's disclosure is error-rates")


def _link(nodes: list[Node]) -> None:
    """Check parent/children agree and fill in depths."""
    for node in nodes:
        for c in node.children:
            if c >= len(nodes) or nodes[c].parent != node.id:
                raise _fail(f"nodes[{node.id}].children", f"node {c} does not name {node.id} as its parent")
        if node.parent is not None:
            if node.id not in nodes[node.parent].children:
                raise _fail(f"nodes[{node.id}].parent", f"node {node.parent} does not list {node.id} as a child")
            node.depth = nodes[node.parent].depth + 1


def check_header(data: Mapping, format_name: str, version: int) -> None:
    """The top level of a ppdm JSON file: an object of the right ``format`` and ``version``."""
    if not isinstance(data, dict):
        raise _fail("(top level)", "expected an object")
    if data.get("format") != format_name:
        raise _fail("format", f"expected {format_name!r}, got {data.get('format')!r}")
    found = _get(data, "version", "", int)
    if found != version:
        raise _fail("version", f"unsupported version {found} (this ppdm reads version {version})")


def tree_from_dict(data: Mapping) -> Tree:
    """Build a :class:`Tree` from its JSON dictionary, validating every field."""
    check_header(data, FORMAT, VERSION)
    classes = _get(data, "classes", "", list)
    if not classes:
        raise _fail("classes", "expected at least one class")
    _check_values(classes, "classes", "the tree")
    attributes = {a.name: a for a in _read_attributes(data)}
    raw_nodes = _get(data, "nodes", "", list)
    if not raw_nodes:
        raise _fail("nodes", "expected at least one node")
    unknown = sorted(set(map(str, data)) - TREE_KEYS)
    if unknown:
        raise _fail(unknown[0], f"unknown key (a ppdm-tree file has: {', '.join(sorted(TREE_KEYS))})")
    nodes = [_read_node(raw, i, classes, attributes) for i, raw in enumerate(raw_nodes)]
    _link(nodes)
    _check_counts_add_up(nodes)
    disclosure = _get(data, "disclosure", "", str, optional=True) or "labels"
    try:
        level = Disclosure.parse(disclosure)
    except Exception as exc:
        raise _fail("disclosure", str(exc)) from None
    _check_published(nodes, level)
    return Tree(
        nodes,
        list(attributes.values()),
        classes,
        class_attribute=_class_attribute(data),
        criterion=_get(data, "criterion", "", str, optional=True),
        algorithm=_get(data, "algorithm", "", str, optional=True),
        disclosure=level,
        removed_records=_removed_records(data),
    )


def _class_attribute(data: Mapping) -> str:
    """The class column's name (``"class"`` when a file written without it does not say)."""
    name = _get(data, "class_attribute", "", str, optional=True)
    if name is None:
        return "class"
    if not name.strip():
        raise _fail("class_attribute", "expected the class column's name, got an empty text")
    return name


def _removed_records(data: Mapping) -> float:
    """The optional count of training records pruning Method 1 removed (a finite number ≥ 0)."""
    value = _get(data, "removed_records", "", (int, float), optional=True)
    if value is None:
        return 0.0
    if not _is_count(value):
        raise _fail("removed_records", f"expected a number of records (finite, 0 to {MAX_COUNT:g}), got {json.dumps(value)}")
    return float(value)


def load_tree(path: str | Path) -> Tree:
    """Read a tree written by :func:`save_tree` (validated; errors name the file and the field at fault)."""
    return read_model_file(path, "tree", _tree_only)


def _tree_only(data: Any) -> Tree:
    """A ppdm-tree document; another model's names its kind instead of a missing field."""
    if isinstance(data, dict) and data.get("format") != FORMAT:
        kind = other_model_kind(data)
        if kind is not None:
            raise TreeFormatError(f"{kind}, not a ppdm-tree file (ppdm audit --model reads it)")
    return tree_from_dict(data)


def other_model_kind(data: Mapping) -> str | None:
    """What a model file that is not a ppdm tree holds, in words (``"an XGBoost model"``;
    ``None``: not a model ppdm knows)."""
    if data.get("format") == "ppdm-forest":
        return "a ppdm-forest model"
    if "learner" in data:
        return "an XGBoost model"
    if "tree_info" in data:
        return "a LightGBM model"
    return None


def read_model_file(path: str | Path, kind: str, parse: Callable[[Any], T]) -> T:
    """Read a ppdm JSON model file and ``parse`` it; every error names the file (and the field)."""
    from ppdm.files import MAX_MODEL_BYTES, load_json, read_bytes

    p = Path(path) if isinstance(path, (str, Path)) else path
    raw = read_bytes(p, kind, MAX_MODEL_BYTES, TreeFormatError)
    if raw.startswith((b"tree\n", b"tree\r\n")):
        raise TreeFormatError(f"{p}: a LightGBM model text file, not a ppdm {kind} file (ppdm audit --model reads it)")
    data = load_json(raw, str(p), TreeFormatError)
    try:
        return parse(data)
    except TreeFormatError as exc:
        raise TreeFormatError(f"{p}: {exc}") from None
