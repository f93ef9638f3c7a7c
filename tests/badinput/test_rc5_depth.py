"""Root cause 5: depth. A valid tree 10,000 levels deep is shown, audited, reported and pruned
(every walk is iterative); input nested beyond what a reader can parse is one line naming the file."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest
from click.testing import CliRunner

from ppdm.cli import main

DEPTH = 10_000


def _chain(depth: int) -> dict:
    """A valid tree: node 2i tests x <= i + 0.5, its left child a leaf of one 'a', the last leaf one 'b'."""
    nodes = []
    for i in range(depth):
        nodes.append({"id": 2 * i, "parent": None if i == 0 else 2 * (i - 1), "label": "a", "counts": [depth - i, 1],
                      "split": {"kind": "threshold", "attribute": "x", "threshold": i + 0.5}, "children": [2 * i + 1, 2 * i + 2]})
        nodes.append({"id": 2 * i + 1, "parent": 2 * i, "label": "a", "counts": [1, 0]})
    nodes.append({"id": 2 * depth, "parent": 2 * (depth - 1), "label": "b", "counts": [0, 1]})
    return {"format": "ppdm-tree", "version": 1, "disclosure": "class-counts", "class_attribute": "y", "classes": ["a", "b"],
            "attributes": [{"name": "x", "kind": "numeric"}], "nodes": nodes}


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    root = tmp_path_factory.mktemp("deep")
    (root / "deep.json").write_text(json.dumps(_chain(DEPTH)))
    pd.DataFrame({"x": range(DEPTH + 1), "y": ["a"] * DEPTH + ["b"]}).to_csv(root / "deep.csv", index=False)
    return root


def _ok(args, seconds=20.0):
    start = time.perf_counter()
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output[-500:]
    assert time.perf_counter() - start < seconds
    return result


def test_a_valid_deep_tree_is_audited_and_reported(deep):
    _ok(["audit", "--tree", deep / "deep.json", "--data", deep / "deep.csv", "--out", deep / "result.json", "-q"])
    _ok(["report", deep / "result.json", "--model", deep / "deep.json", "--out", deep / "deep.html", "-q"])
    assert (deep / "deep.html").stat().st_size < 50 * 2**20


def test_a_valid_deep_tree_is_shown_without_gigabytes_of_indentation(deep):
    shown = _ok(["show", deep / "deep.json"]).output
    assert len(shown.splitlines()) == 2 * DEPTH + 2 and len(shown) < 5 * 2**20
    assert "depth 9,999" in shown


@pytest.mark.parametrize("method", ["1", "2"])
def test_a_valid_deep_tree_is_pruned(deep, method):
    _ok(["prune", "--tree", deep / "deep.json", "--method", method, "--s", "0", "--out", deep / f"p{method}.json", "-q"])
    from ppdm.tree import load_tree

    assert load_tree(deep / f"p{method}.json").n_leaves == DEPTH + 1


NESTED = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "args, needle",
    [
        (["show", "{x}.json"], "nested too deeply"),
        (["report", "{x}.json", "--out", "{w}/r.html", "-q"], "nested too deeply"),
    ],
    ids=["show", "report-result"],
)
def test_a_hundred_thousand_brackets_under_a_memory_cap(world, refuse_in_subprocess, tmp_path, args, needle):
    (tmp_path / "nested.json").write_text(NESTED)
    refuse_in_subprocess([a.format(x=tmp_path / "nested", w=tmp_path) for a in args], "nested.json", needle)


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "--tree", "{x}.json", "--data", "{data}", "-q"],
        ["audit", "--model", "{x}.json", "--data", "{data}", "-q"],
        ["prune", "--tree", "{x}.json", "--method", "1", "--s", "1", "--out", "{w}/p.json", "-q"],
        ["attack", "--model", "{x}.json", "--data", "{data}"],
        ["audit-rules", "--data", "{data}", "--sensitive", "class", "--rules", "{x}.json", "-q"],
        ["report", "{result}", "--model", "{x}.json", "--out", "{w}/r.html", "-q"],
        ["report", "{result}", "--frontier", "{x}.json", "--out", "{w}/r.html", "-q"],
        ["train", "--data", "{adult}", "--class-attribute", "income", "--k", "5", "--hierarchies", "{x}.json", "--out", "{w}/t.json", "-q"],
        ["audit", "--tree", "{tree}", "--data", "{data}", "--threat", "{x}.yaml", "-q"],
    ],
    ids=["audit-tree", "audit-model", "prune", "attack", "rules", "report-model", "report-frontier", "hierarchies", "threat-yaml"],
)
def test_nesting_too_deep_to_parse_is_one_line(world, refuse, tmp_path, args):
    (tmp_path / "nested.json").write_text("[" * 20_000 + "]" * 20_000)
    (tmp_path / "nested.yaml").write_text("known: " + "[" * 5_000 + "]" * 5_000 + "\n")
    names = {n: str(getattr(world, n)) for n in ("data", "tree", "result", "adult")}
    refuse([a.format(x=tmp_path / "nested", w=tmp_path, **names) for a in args], "nested", "too deeply")


def _deep_categorical(depth: int) -> str:
    """A valid value tree ``depth`` levels deep, as JSON text (written out: json.dumps recurses too)."""
    tree = '["leaf-a", "leaf-b"]'
    for level in range(depth):
        tree = f'{{"level-{level}": {tree}}}'
    return f'{{"hierarchies": {{"workclass": {{"kind": "categorical", "tree": {tree}}}}}}}'


def _deep_numeric(depth: int) -> str:
    """Valid nested intervals ``depth`` levels deep, as JSON text."""
    node = '{"range": [0, 1]}'
    for level in range(depth):
        node = f'{{"range": [{-level - 1}, 1], "children": [{{"range": [{-level - 1}, {-level}]}}, {node}]}}'
    return f'{{"hierarchies": {{"age": {{"kind": "numeric", "tree": {node}}}}}}}'


@pytest.mark.parametrize(
    "make, needles",
    [(_deep_categorical, ("hierarchies.workclass", "nested more deeply")), (_deep_numeric, ("JSON nested too deeply",))],
    ids=["categorical", "numeric"],
)
def test_a_hierarchy_nested_more_deeply_than_it_can_be_parsed_is_named(world, refuse, tmp_path, make, needles):
    path = tmp_path / "deep.json"
    path.write_text(make(900))
    refuse(["train", "--data", world.adult, "--class-attribute", "income", "--k", "5", "--hierarchies", path, "--out", tmp_path / "t.json", "-q"],
           "deep.json", *needles)
