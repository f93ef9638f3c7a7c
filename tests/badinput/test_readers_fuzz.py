"""Property tests of every reader: any bytes, and any mutation of a valid file, either load into an
object that works (it renders, round-trips, feeds a report) or raise a ppdm error: never another
exception, never a hang (each example has a deadline)."""

from __future__ import annotations

import copy
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.errors import PpdmError

#: Few examples, the same on every run (a fast, stable suite); PPDM_FUZZ_EXAMPLES=2000 searches harder, with new ones each run.
EXAMPLES = int(os.environ.get("PPDM_FUZZ_EXAMPLES", "0"))
FUZZ = settings(
    max_examples=EXAMPLES or 120, deadline=None if EXAMPLES else 3000, derandomize=not EXAMPLES, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

#: JSON values to put anywhere: scalars of every kind (NaN, huge numbers, long texts) and small nests.
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.sampled_from([2**63, -(2**63) - 1, 10**400, -(10**400), 0, 1, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.sampled_from(["", "nan", "inf", "class", "priority", "parents", "labels", "threshold", "categorical", "ppdm-tree"]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=10)


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indices) into a JSON document, the root excluded."""
    out = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            out.append((*prefix, key))
            out.extend(_paths(value, (*prefix, key)))
    elif isinstance(doc, list):
        for i, value in enumerate(doc[:12]):  # the first items of long lists are enough
            out.append((*prefix, i))
            out.extend(_paths(value, (*prefix, i)))
    return out


@st.composite
def mutations(draw: Any, valid: Any, rounds: int = 3) -> Any:
    """``valid`` with one to ``rounds`` edits: a value replaced, a key or item removed, a key added."""
    doc = copy.deepcopy(valid)
    for _ in range(draw(st.integers(1, rounds))):
        paths = _paths(doc)
        if not paths:
            break
        *head, last = draw(st.sampled_from(paths))
        parent = doc
        for key in head:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "replace":
            parent[last] = draw(VALUES)
        elif action == "delete":
            del parent[last]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(VALUES)
        else:
            parent.insert(last, draw(VALUES))
    return doc


def _write(folder: Path, name: str, content: bytes | str) -> Path:
    path = folder / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def _dump(doc: Any) -> str:
    return json.dumps(doc, allow_nan=True)


def _loads_or_refuses(read: Any, check: Any, path: Path) -> None:
    try:
        loaded = read(path)
    except PpdmError as exc:
        assert "\n" not in str(exc), str(exc)
        return
    check(loaded)


# -- trees and models ---------------------------------------------------------------------------
def _tree_works(tree: Any) -> None:
    from ppdm.tree import render_tree
    from ppdm.tree.io import tree_from_dict, tree_to_dict

    render_tree(tree, ids=True)
    again = tree_from_dict(json.loads(json.dumps(tree_to_dict(tree), allow_nan=False)))
    assert again.n_nodes == tree.n_nodes and again.n_leaves == tree.n_leaves
    for node in tree.nodes:
        threshold = getattr(node.split, "threshold", 0.0)
        assert math.isfinite(threshold), node
        assert node.counts is None or (node.counts >= 0).all()


def _model_works(model: Any) -> None:
    from ppdm.tree import Tree

    if isinstance(model, Tree):
        _tree_works(model)
    else:
        assert model.n_trees >= 1
        for tree in model.trees:
            tree.leaves()


@FUZZ
@given(content=st.binary(max_size=3000))
def test_load_tree_on_any_bytes(folder, content):
    from ppdm.tree import load_tree

    _loads_or_refuses(load_tree, _tree_works, _write(folder, "tree.json", content))


@FUZZ
@given(data=st.data())
def test_load_tree_on_mutations_of_a_valid_tree(folder, world_tree, world_atree, data):
    from ppdm.tree import load_tree

    doc = data.draw(mutations(data.draw(st.sampled_from([world_tree, world_atree]))))
    _loads_or_refuses(load_tree, _tree_works, _write(folder, "tree.json", _dump(doc)))


@FUZZ
@given(data=st.data())
def test_load_model_on_mutations_of_a_valid_forest(folder, world_forest, data):
    import ppdm

    doc = data.draw(mutations(world_forest))
    _loads_or_refuses(ppdm.load_model, _model_works, _write(folder, "forest.json", _dump(doc)))


@FUZZ
@given(data=st.data())
def test_load_model_on_mutations_of_an_xgboost_model(folder, world_xgb, data):
    import ppdm

    doc = data.draw(mutations(world_xgb[0]))
    _loads_or_refuses(lambda p: ppdm.load_model(p, world_xgb[1]), _model_works, _write(folder, "model.json", _dump(doc)))


@FUZZ
@given(data=st.data())
def test_load_model_on_edits_of_a_lightgbm_text_model(folder, world_lgb, data):
    import ppdm

    text, table = world_lgb
    lines = text.splitlines()
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["value", "drop", "cut", "duplicate"]))
        if action == "value" and "=" in lines[i]:
            key = lines[i].split("=", 1)[0]
            lines[i] = f"{key}={data.draw(st.sampled_from(['', 'nan', '-1', '0', '99', 'x', '1e308', '1 2 3', '-2 -3']))}"
        elif action == "drop":
            del lines[i]
        elif action == "cut":
            lines = lines[:i]
        else:
            lines.insert(i, lines[i])
        if not lines:
            lines = ["tree"]
    _loads_or_refuses(lambda p: ppdm.load_model(p, table), _model_works, _write(folder, "model.txt", "\n".join(lines) + "\n"))


# -- threat models and hierarchies (YAML, JSON) ----------------------------------------------------
def _threat_works(threat: Any) -> None:
    threat.describe()
    threat.to_dict()


THREAT_KEYS = ["sensitive", "known", "publish", "sa_published", "known_individuals", "preset", "class_known"]


@FUZZ
@given(content=st.binary(max_size=2000))
def test_load_threat_on_any_bytes(folder, content):
    from ppdm.attacks.core.threat import load_threat

    _loads_or_refuses(load_threat, _threat_works, _write(folder, "threat.yaml", content))


@FUZZ
@given(spec=st.dictionaries(st.sampled_from([*THREAT_KEYS, "other", "1"]), VALUES, max_size=5), anchor=st.booleans())
def test_load_threat_on_any_mapping_written_as_yaml(folder, spec, anchor):
    import yaml

    from ppdm.attacks.core.threat import load_threat

    text = yaml.safe_dump(spec, allow_unicode=True)
    if anchor and spec:
        first = next(iter(spec))
        text = f"x: &a {json.dumps(str(first))}\n" + text + "y: *a\n"
    _loads_or_refuses(load_threat, _threat_works, _write(folder, "threat.yaml", text))


def _hierarchies_work(hierarchies: Any) -> None:
    for name, hierarchy in hierarchies.items():
        assert hierarchy.attribute == name
        hierarchy.to_dict()
        hierarchy.leaves()
        for depth in range(hierarchy.height + 1):
            hierarchy.cut_at_depth(depth)
        Hierarchy = type(hierarchy)
        assert Hierarchy.from_dict(hierarchy.to_dict()).leaves() == hierarchy.leaves()


@FUZZ
@given(content=st.binary(max_size=2000), suffix=st.sampled_from([".yaml", ".json"]))
def test_load_hierarchies_on_any_bytes(folder, content, suffix):
    from ppdm.data.hierarchy import load_hierarchies

    _loads_or_refuses(load_hierarchies, _hierarchies_work, _write(folder, f"h{suffix}", content))


@FUZZ
@given(data=st.data(), suffix=st.sampled_from([".yaml", ".json"]))
def test_load_hierarchies_on_mutations_of_valid_ones(folder, world_hierarchies, data, suffix):
    import yaml

    from ppdm.data.hierarchy import load_hierarchies

    doc = data.draw(mutations(world_hierarchies))
    text = _dump(doc) if suffix == ".json" else yaml.safe_dump(doc, allow_unicode=True)
    _loads_or_refuses(load_hierarchies, _hierarchies_work, _write(folder, f"h{suffix}", text))


# -- CSV tables ---------------------------------------------------------------------------------------
def _table_works(loaded: Any) -> None:
    import numpy as np
    import pandas as pd

    frame, roles = loaded
    assert len(frame) > 0 and len(frame.columns) > 0
    for column in frame.columns:
        if pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column]):
            assert not np.isinf(frame[column].to_numpy(dtype=float, na_value=np.nan)).any()


@FUZZ
@given(content=st.binary(max_size=3000))
def test_load_csv_on_any_bytes(folder, content):
    from ppdm.data.datasets import load_csv

    _loads_or_refuses(load_csv, _table_works, _write(folder, "t.csv", content))


CELLS = st.one_of(st.sampled_from(["1", "2.5", "-3", "inf", "-inf", "nan", "NA", "?", "", "thirty", "1e999", '"a,b"', '"', "x\ty", "a;b", " "]), st.text(max_size=6))


@FUZZ
@given(rows=st.lists(st.lists(CELLS, min_size=1, max_size=5), min_size=1, max_size=30), sep=st.sampled_from([",", ";", "\t", "|"]),
       options=st.fixed_dictionaries({}, optional={"sep": st.sampled_from([",", ";", "\t", "|", "::"]), "drop_missing": st.booleans(),
                                                    "numeric": st.just(["c0"]), "categorical": st.just(["c1"])}))
def test_load_csv_on_tables_of_odd_cells(folder, rows, sep, options):
    from ppdm.data.datasets import load_csv

    width = max(len(r) for r in rows)
    text = sep.join(f"c{i}" for i in range(width)) + "\n" + "\n".join(sep.join(r) for r in rows) + "\n"
    _loads_or_refuses(lambda p: load_csv(p, **options), _table_works, _write(folder, "t.csv", text))


# -- rules ----------------------------------------------------------------------------------------------
def _rules_work(rules: Any) -> None:
    from ppdm.rules import RuleSet

    again = RuleSet.from_dict(json.loads(json.dumps(rules.to_dict())))
    assert len(again) == len(rules)
    rules.published("thresholds")


@FUZZ
@given(content=st.binary(max_size=2000))
def test_rules_load_on_any_bytes(folder, content):
    from ppdm.rules import RuleSet

    _loads_or_refuses(RuleSet.load, _rules_work, _write(folder, "rules.json", content))


@FUZZ
@given(data=st.data())
def test_rules_load_on_mutations_of_valid_rules(folder, world_rules, data):
    from ppdm.rules import RuleSet

    doc = data.draw(mutations(world_rules))
    _loads_or_refuses(RuleSet.load, _rules_work, _write(folder, "rules.json", _dump(doc)))


# -- attack results (and the report made of them) --------------------------------------------------
def _result_works(result: Any) -> None:
    from ppdm.report import build_report

    try:
        build_report([result], None, None, None)
    except PpdmError:
        pass


@FUZZ
@given(content=st.binary(max_size=2000))
def test_load_result_on_any_bytes(folder, content):
    from ppdm.report.load import load_result

    _loads_or_refuses(load_result, _result_works, _write(folder, "result.json", content))


@FUZZ
@given(data=st.data())
def test_load_result_and_report_on_mutations_of_a_valid_result(folder, world_result, data):
    from ppdm.report.load import load_result

    doc = data.draw(mutations(world_result))
    _loads_or_refuses(load_result, _result_works, _write(folder, "result.json", _dump(doc)))


@FUZZ
@given(frontier=VALUES)
def test_load_frontier_on_any_json(folder, frontier):
    from ppdm.report.build import frontier_of
    from ppdm.report.load import load_frontier

    _loads_or_refuses(load_frontier, lambda f: frontier_of(f, "risk"), _write(folder, "frontier.json", _dump(frontier)))


# -- the valid documents the mutations start from (small, so that the examples run fast) ----------
@pytest.fixture(scope="module")
def world_tree(world):
    return world.json("tree")


@pytest.fixture(scope="module")
def world_atree(world):
    return world.json("atree")


@pytest.fixture(scope="module")
def world_forest(world):
    doc = world.json("forest")
    doc["trees"] = doc["trees"][:2]
    return doc


@pytest.fixture(scope="module")
def world_xgb(world):
    import pandas as pd

    if not world.xgb.exists():
        pytest.skip("xgboost is not installed")
    return json.loads(world.xgb.read_text()), pd.read_csv(world.train)


@pytest.fixture(scope="module")
def world_lgb(world):
    import pandas as pd

    if not world.lgb.exists():
        pytest.skip("lightgbm is not installed")
    return world.lgb.read_text(), pd.read_csv(world.train)


@pytest.fixture(scope="module")
def world_hierarchies(world):
    import yaml

    return yaml.safe_load(world.hier.read_text())


@pytest.fixture(scope="module")
def world_rules(world):
    doc = world.json("rules")
    doc["rules"] = doc["rules"][:6]
    return doc


@pytest.fixture(scope="module")
def world_result(world):
    doc = world.json("result")
    keep = doc["groups"][:8]
    doc["groups"] = keep
    doc["summary"]["records"] = sum(g["records"] for g in keep)
    return doc
