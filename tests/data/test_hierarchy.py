"""Tests of ppdm.data.hierarchy: generalization hierarchies (paper 002 §3.1, §4; TDS cuts)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.data.hierarchy import Cut, Hierarchy, adult_hierarchies, load_hierarchies, save_hierarchies
from ppdm.errors import HierarchyError

WORK_TREE = {"ANY": [{"Paid": ["Private", {"Gov": ["Federal", "State"]}]}, "Unpaid"]}


@pytest.fixture
def work() -> Hierarchy:
    """ANY > {Paid > {Private, Gov > {Federal, State}}, Unpaid}: leaves at depths 1, 2 and 3."""
    return Hierarchy.categorical("work", WORK_TREE)


@pytest.fixture
def age() -> Hierarchy:
    """[0, inf) > {[0, 40), [40, inf)} > {[0, 20), [20, 40), [40, 60), [60, inf)}."""
    return Hierarchy.from_cuts("age", [[40], [20, 40, 60]], lower=0)


# --------------------------------------------------------------------------------------------
# Navigation
# --------------------------------------------------------------------------------------------


def test_categorical_navigation(work: Hierarchy) -> None:
    assert (work.attribute, work.kind, work.root, work.height) == ("work", "categorical", "ANY", 3)
    assert work.children("ANY") == ("Paid", "Unpaid")
    assert work.children("Gov") == ("Federal", "State")
    assert work.children("Unpaid") == ()
    assert work.parent("Federal") == "Gov" and work.parent("ANY") is None
    assert [work.depth(n) for n in ("ANY", "Paid", "Unpaid", "Gov", "State")] == [0, 1, 1, 2, 3]
    assert work.leaves() == ["Private", "Federal", "State", "Unpaid"]
    assert work.leaves("Paid") == ["Private", "Federal", "State"]
    assert work.leaves("State") == ["State"]
    assert work.path("State") == ["ANY", "Paid", "Gov", "State"]
    assert [work.ancestor("State", d) for d in range(5)] == ["ANY", "Paid", "Gov", "State", "State"]
    assert work.ancestor("Unpaid", 2) == "Unpaid"
    with pytest.raises(HierarchyError, match="has no node 'Nope'"):
        work.children("Nope")
    with pytest.raises(HierarchyError, match=r"does not cover 1 of 1 value\(s\): 'Gov'"):
        work.ancestor("Gov", 1)  # internal names are not domain values


def test_numeric_navigation(age: Hierarchy) -> None:
    assert (age.kind, age.root, age.height) == ("numeric", "[0, inf)", 2)
    assert age.children("[0, inf)") == ("[0, 40)", "[40, inf)")
    assert age.children((40, math.inf)) == ("[40, 60)", "[60, inf)")
    assert age.interval("[20, 40)") == (20.0, 40.0)
    assert age.leaves("[40, inf)") == ["[40, 60)", "[60, inf)"]
    assert age.parent("[20, 40)") == "[0, 40)"
    assert [age.ancestor(40, d) for d in range(4)] == ["[0, inf)", "[40, inf)", "[40, 60)", "[40, 60)"]
    assert age.ancestor(39.99, 2) == "[20, 40)"


def test_numeric_tree_equals_cuts_and_children_are_sorted(age: Hierarchy) -> None:
    tree = {
        "range": [0, None],
        "children": [
            {"range": [40, "inf"], "children": [{"range": [60, "inf"]}, {"range": [40, 60]}]},
            {"range": [0, 40], "children": [{"range": [0, 20]}, {"range": [20, 40]}]},
        ],
    }
    h = Hierarchy.numeric("age", tree)
    assert h == age
    assert h.children(h.root) == ("[0, 40)", "[40, inf)")
    assert h.leaves() == ["[0, 20)", "[20, 40)", "[40, 60)", "[60, inf)"]


def test_numeric_labels_format_fractions_and_unbounded_ends() -> None:
    h = Hierarchy.from_cuts("x", [[0.5, 2]])
    assert h.leaves() == ["[-inf, 0.5)", "[0.5, 2)", "[2, inf)"]


# --------------------------------------------------------------------------------------------
# Generalization
# --------------------------------------------------------------------------------------------


def test_generalize_categorical_at_every_depth(work: Hierarchy) -> None:
    values = pd.Series(["State", "Private", "Unpaid", "Federal"], index=[10, 11, 12, 13])
    expected = {
        0: ["ANY"] * 4,
        1: ["Paid", "Paid", "Unpaid", "Paid"],
        2: ["Gov", "Private", "Unpaid", "Gov"],
        3: ["State", "Private", "Unpaid", "Federal"],
        7: ["State", "Private", "Unpaid", "Federal"],
    }
    for depth, labels in expected.items():
        out = work.generalize(values, depth)
        assert isinstance(out.dtype, pd.CategoricalDtype)
        assert out.tolist() == labels
        assert out.index.tolist() == [10, 11, 12, 13]
        assert out.name == "work"
    assert list(work.generalize(values, 2).cat.categories) == ["Private", "Gov", "Unpaid"]
    assert work.generalize(np.array(["Unpaid"], dtype=object), 1).index.tolist() == [0]


def test_generalize_categorical_input_uses_codes(work: Hierarchy) -> None:
    cat = pd.Series(pd.Categorical(["State", "Unpaid"], categories=["Federal", "State", "Unpaid", "Extra"]))
    assert work.generalize(cat, 1).tolist() == ["Paid", "Unpaid"]  # unused 'Extra' is fine
    used = pd.Series(pd.Categorical(["State", "Extra"]))
    with pytest.raises(HierarchyError, match=r"'work' does not cover 1 of 2 value\(s\): 'Extra'"):
        work.generalize(used, 1)


def test_generalize_numeric_at_every_depth(age: Hierarchy) -> None:
    values = np.array([0, 19.5, 20, 39, 40, 59.9, 60, 95])
    assert age.generalize(values, 0).tolist() == ["[0, inf)"] * 8
    assert age.generalize(values, 1).tolist() == ["[0, 40)"] * 4 + ["[40, inf)"] * 4
    assert age.generalize(values, 2).tolist() == [
        "[0, 20)", "[0, 20)", "[20, 40)", "[20, 40)", "[40, 60)", "[40, 60)", "[60, inf)", "[60, inf)",
    ]  # fmt: skip
    out = age.generalize(pd.Series([45, 5], dtype="Int64"), 5)
    assert out.tolist() == ["[40, 60)", "[0, 20)"]
    assert out.cat.ordered and list(out.cat.categories) == age.leaves()


def test_groups_and_cuts_at_depth(work: Hierarchy, age: Hierarchy) -> None:
    assert work.groups_at_depth(0) == [("ANY", ["Private", "Federal", "State", "Unpaid"])]
    assert work.groups_at_depth(1) == [("Paid", ["Private", "Federal", "State"]), ("Unpaid", ["Unpaid"])]
    assert work.groups_at_depth(2) == [("Private", ["Private"]), ("Gov", ["Federal", "State"]), ("Unpaid", ["Unpaid"])]
    assert age.cuts_at_depth(0).tolist() == []
    assert age.cuts_at_depth(1).tolist() == [40]
    assert age.cuts_at_depth(2).tolist() == [20, 40, 60]
    assert age.cuts_at_depth(9).tolist() == [20, 40, 60]
    with pytest.raises(HierarchyError, match="cuts_at_depth needs a numeric hierarchy"):
        work.cuts_at_depth(1)
    with pytest.raises(HierarchyError, match="depth must be an integer >= 0, got -1"):
        work.generalize(["Unpaid"], -1)


def test_check_covers(work: Hierarchy, age: Hierarchy) -> None:
    work.check_covers(["Private", "Unpaid"])
    with pytest.raises(HierarchyError, match=r"'work' does not cover 4 of 5 value\(s\): 'Self', 'Paid', NaN \(missing\) \(not"):
        work.check_covers(["Private", "Self", "Paid", None, np.nan])
    age.check_covers([0, 12, 1e9])
    with pytest.raises(HierarchyError, match=r"'age' does not cover 2 of 3 value\(s\): -1, NaN \(missing\) \(outside \[0, inf\)\)"):
        age.check_covers(np.array([3, -1, np.nan]))
    with pytest.raises(HierarchyError, match="non-numeric value\\(s\\) 'old'"):
        age.check_covers(["12", "old"])


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tree", "message"),
    [
        ({"ANY": ["a", {"G": ["b", "a"]}]}, "node 'a' is used twice \\(under 'ANY' and under 'G'\\)"),
        ({"ANY": {"G": ["x"], "H": {"G": ["y"]}}}, "node 'G' is used twice"),
        ({"ANY": ["a", {"G": []}]}, "internal node 'G' has no children"),
        ({"ANY": []}, "internal node 'ANY' has no children"),
        ({"ANY": ["a", ["b"]]}, "node 'ANY': a list inside a list"),
        ({"ANY": "a"}, "internal node 'ANY': children must be a list or a mapping"),
        (["a", "b"], "a categorical tree must be a mapping with exactly one key, the root's name"),
        ({"ANY": [{1: ["a"]}]}, "node 'ANY': internal node names must be strings, got 1"),
    ],
)
def test_categorical_validation(tree: object, message: str) -> None:
    with pytest.raises(HierarchyError, match=f"hierarchy 'h': {message}"):
        Hierarchy.categorical("h", tree)  # type: ignore[arg-type]


def _num(*children: tuple[object, object]) -> dict:
    return {"range": [0, 100], "children": [{"range": list(c)} for c in children]}


@pytest.mark.parametrize(
    ("tree", "message"),
    [
        (_num((0, 50), (40, 100)), r"children of '\[0, 100\)' overlap: '\[0, 50\)' and '\[40, 100\)'"),
        (_num((0, 40), (50, 100)), r"children of '\[0, 100\)' leave a gap between '\[0, 40\)' and '\[50, 100\)'"),
        (_num((10, 50), (50, 100)), r"children of '\[0, 100\)' start at 10, not at its lower bound 0"),
        (_num((0, 50), (50, 90)), r"children of '\[0, 100\)' end at 90, not at its upper bound 100"),
        (_num((0, 50), (0, 50), (50, 100)), r"node '\[0, 50\)' is used twice"),
        (_num((0, 100)), r"tree \(\[0, 100\)\): a single child cannot split it"),
        (_num((0, 50), (50, "lots")), r"tree.children\[1\].range\[1\]: expected a number"),
        ({"range": [5, 5]}, r"node '\[5, 5\)': empty interval"),
        ({"range": [0]}, r"tree.range: expected \[lo, hi\]"),
        ({"rang": [0, 1]}, r"tree: expected a mapping with a 'range' field"),
    ],
)
def test_numeric_validation(tree: dict, message: str) -> None:
    with pytest.raises(HierarchyError, match=f"hierarchy 'n': {message}"):
        Hierarchy.numeric("n", tree)


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        ([[40], [20, 60]], "level 2 drops cut point\\(s\\) 40 of level 1"),
        ([[40], [40]], "level 2 adds no cut point to level 1"),
        ([[40, 40]], "level 1: cut point\\(s\\) 40 repeated"),
        ([[-5]], "level 1: cut point\\(s\\) -5 not strictly inside the root \\[0, inf\\)"),
        ([[0]], "level 1: cut point\\(s\\) 0 not strictly inside the root"),
        ([[40], [20, 40], [20, 40, 60]], "level 3 splits \\[40, inf\\), which level 2 left unsplit"),
        ([[40], ["x"]], "level 2: expected a number"),
        ([40, 50], "level 1: expected a list of cut points"),
        ("40", "levels must be a list of lists"),
    ],
)
def test_from_cuts_validation(levels: object, message: str) -> None:
    with pytest.raises(HierarchyError, match=f"hierarchy 'c': {message}"):
        Hierarchy.from_cuts("c", levels, lower=0)  # type: ignore[arg-type]


def test_from_cuts_branch_may_stop() -> None:
    h = Hierarchy.from_cuts("c", [[40], [20, 40], [10, 20, 40]], lower=0)
    assert h.leaves() == ["[0, 10)", "[10, 20)", "[20, 40)", "[40, inf)"]
    assert h.depth("[40, inf)") == 1 and h.depth("[10, 20)") == 3
    assert h.generalize([50, 15], 3).tolist() == ["[40, inf)", "[10, 20)"]


def test_constructor_rejects_bad_trees() -> None:
    with pytest.raises(HierarchyError, match="node 'b' is used twice"):
        Hierarchy("h", "categorical", "R", {"R": ["a", "b"], "a": ["b"]})
    with pytest.raises(HierarchyError, match="not reachable from the root 'R'"):
        Hierarchy("h", "categorical", "R", {"R": ["a"], "x": ["y"]})
    with pytest.raises(HierarchyError, match="unknown kind 'tree'"):
        Hierarchy("h", "tree", "R", {"R": ["a"]})  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Cuts (top-down specialization)
# --------------------------------------------------------------------------------------------


def test_categorical_specialization_sequence(work: Hierarchy) -> None:
    values = pd.Series(["State", "Private", "Unpaid", "Federal"])
    cut = work.top_cut()
    assert cut.nodes == ("ANY",) and work.specializations(cut) == ["ANY"]
    assert cut.apply(values).tolist() == ["ANY"] * 4
    steps = [
        ("ANY", ("Paid", "Unpaid"), ["Paid"], ["Paid", "Paid", "Unpaid", "Paid"]),
        ("Paid", ("Private", "Gov", "Unpaid"), ["Gov"], ["Gov", "Private", "Unpaid", "Gov"]),
        ("Gov", ("Private", "Federal", "State", "Unpaid"), [], ["State", "Private", "Unpaid", "Federal"]),
    ]
    for node, nodes, specializable, mapped in steps:
        cut = cut.specialize(node)
        assert cut.nodes == nodes
        assert work.specializations(cut) == specializable
        assert cut.apply(values).tolist() == mapped
    assert cut == work.cut_at_depth(3)
    with pytest.raises(HierarchyError, match="node 'State' is a leaf and cannot be specialized"):
        cut.specialize("State")
    with pytest.raises(HierarchyError, match="node 'Paid' is not in the cut"):
        cut.specialize("Paid")


def test_numeric_specialization_sequence(age: Hierarchy) -> None:
    values = np.array([5, 25, 45, 65])
    cut = age.top_cut().specialize("[0, inf)")
    assert cut.boundaries.tolist() == [0, 40, math.inf]
    assert cut.apply(values).tolist() == ["[0, 40)", "[0, 40)", "[40, inf)", "[40, inf)"]
    cut = cut.specialize("[40, inf)")
    assert cut.nodes == ("[0, 40)", "[40, 60)", "[60, inf)")
    assert age.specializations(cut) == ["[0, 40)"]
    assert cut.apply(values).tolist() == ["[0, 40)", "[0, 40)", "[40, 60)", "[60, inf)"]
    with pytest.raises(HierarchyError, match=r"does not cover 1 of 1 value\(s\): -3 \(outside \[0, inf\)\)"):
        cut.apply([-3])


def test_cut_must_partition_leaves(work: Hierarchy) -> None:
    assert Cut(work, ["Unpaid", "Gov", "Private"]).nodes == ("Private", "Gov", "Unpaid")
    with pytest.raises(HierarchyError, match="the cut misses leaf 'Private'"):
        Cut(work, ["Gov", "Unpaid"])
    with pytest.raises(HierarchyError, match="cut nodes overlap at 'Gov'"):
        Cut(work, ["Gov", "Paid", "Unpaid"])
    with pytest.raises(HierarchyError, match="has no node 'Nope'"):
        Cut(work, ["Nope"])


# --------------------------------------------------------------------------------------------
# Dicts and files
# --------------------------------------------------------------------------------------------


def test_to_dict_from_dict_round_trip(work: Hierarchy, age: Hierarchy) -> None:
    assert work.to_dict() == {"attribute": "work", "kind": "categorical", "tree": WORK_TREE}
    assert age.to_dict()["tree"]["range"] == [0, "inf"]
    for h in (work, age):
        again = Hierarchy.from_dict(json.loads(json.dumps(h.to_dict())))
        assert again == h and again.leaves() == h.leaves()
    assert Hierarchy.from_dict({"kind": "numeric", "cuts": [[40], [20, 40, 60]], "range": [0, None]}, "age") == age


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_file_round_trip(tmp_path: Path, suffix: str, work: Hierarchy, age: Hierarchy) -> None:
    path = tmp_path / f"h{suffix}"
    save_hierarchies(path, {"work": work, "age": age})
    loaded = load_hierarchies(path)
    assert list(loaded) == ["work", "age"]
    assert loaded["work"] == work and loaded["age"] == age
    assert loaded["age"].generalize([45], 2).tolist() == ["[40, 60)"]


def test_load_yaml_with_every_form(tmp_path: Path) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(
        "hierarchies:\n"
        "  sex: {kind: categorical, tree: {ANY: [Male, Female]}}\n"
        "  age: {kind: numeric, range: [0, .inf], cuts: [[40]]}\n"
        "  hours:\n"
        "    kind: numeric\n"
        "    tree: {range: [0, null], children: [{range: [0, 40]}, {range: [40, inf]}]}\n"
    )
    loaded = load_hierarchies(path)
    assert loaded["sex"].leaves() == ["Male", "Female"]
    assert loaded["age"].leaves() == ["[0, 40)", "[40, inf)"]
    assert loaded["hours"].leaves() == ["[0, 40)", "[40, inf)"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("h.json", '{"hierarchies": {"age": }}', r"h.json: invalid JSON at line 1, column 25: Expecting value"),
        ("h.yaml", "hierarchies:\n  age: [1, 2\n", r"h.yaml: invalid YAML at line 3"),
        ("h.yaml", "", r"h.yaml: the top level must be a mapping with a 'hierarchies' field"),
        ("h.yaml", "hierarchies: [1]\n", r"'hierarchies' must map attribute names to hierarchies"),
        ("h.yaml", "hierarchies:\n  age: {kind: interval, cuts: [[1]]}\n",
         r"h.yaml: hierarchies.age.kind: unknown kind 'interval'"),  # fmt: skip
        ("h.yaml", "hierarchies:\n  age: {kind: numeric}\n", r"hierarchies.age: a numeric hierarchy needs exactly one of"),
        ("h.yaml", "hierarchies:\n  sex: {kind: categorical}\n", r"hierarchies.sex: missing field 'tree'"),
        ("h.yaml", "hierarchies:\n  sex: {kind: categorical, tre: 1}\n", r"hierarchies.sex: unknown field\(s\) \['tre'\]"),
        ("h.yaml", "hierarchies:\n  sex: 3\n", r"hierarchies.sex: expected a mapping"),
        ("h.yaml", "hierarchies:\n  sex: {kind: categorical, tree: {ANY: [M, M]}}\n",
         r"h.yaml: hierarchy 'sex': node 'M' is used twice"),  # fmt: skip
        ("h.yaml", "hierarchies:\n  age: {kind: numeric, cuts: [[40], [20]]}\n",
         r"h.yaml: hierarchy 'age': level 2 drops cut point\(s\) 40"),  # fmt: skip
    ],
)
def test_load_errors_name_file_attribute_and_field(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(HierarchyError, match=message):
        load_hierarchies(path)


def test_load_and_save_file_errors(tmp_path: Path, work: Hierarchy) -> None:
    with pytest.raises(HierarchyError, match="missing.yaml: hierarchy file not found"):
        load_hierarchies(tmp_path / "missing.yaml")
    with pytest.raises(HierarchyError, match=r"h.txt: unknown hierarchy file extension '.txt'"):
        load_hierarchies(tmp_path / "h.txt")
    with pytest.raises(HierarchyError, match=r"entry 'job' must be the Hierarchy of attribute 'job'"):
        save_hierarchies(tmp_path / "h.json", {"job": work})


# --------------------------------------------------------------------------------------------
# Bundled Adult hierarchies
# --------------------------------------------------------------------------------------------

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
]  # fmt: skip
_BUNDLED = Path(__file__).resolve().parents[2] / "src" / "ppdm" / "data" / "_bundled"


def _read_adult(split: str, dropna: bool = True) -> pd.DataFrame:
    name = "adult.data" if split == "train" else "adult.test"
    path = _BUNDLED / f"{name}.gz"  # the bundled, byte-exact copy of UCI Adult
    frame = pd.read_csv(
        path, header=None, names=ADULT_COLUMNS, sep=", ", engine="python", na_values="?",
        skiprows=1 if split == "test" else 0,
    )  # fmt: skip
    return frame.dropna() if dropna else frame


@pytest.fixture(scope="module")
def adult_frames() -> dict[str, pd.DataFrame]:
    return {split: _read_adult(split) for split in ("train", "test")}


def test_adult_hierarchies_cover_every_value(adult_frames: dict[str, pd.DataFrame]) -> None:
    hierarchies = adult_hierarchies()
    assert sorted(hierarchies) == sorted(c for c in ADULT_COLUMNS if c not in ("fnlwgt", "income"))
    assert len(adult_frames["train"]) == 30162 and len(adult_frames["test"]) == 15060
    for attribute, h in hierarchies.items():
        assert h.attribute == attribute
        for frame in adult_frames.values():
            h.check_covers(frame[attribute])
            for depth in range(h.height + 1):
                assert h.generalize(frame[attribute], depth).notna().all()


def test_adult_leaves_are_raw_spellings() -> None:
    """Every categorical leaf occurs in the raw files, so no leaf is a misspelling."""
    raw = pd.concat([_read_adult("train", dropna=False), _read_adult("test", dropna=False)])
    for attribute, h in adult_hierarchies().items():
        if h.kind == "categorical":
            assert set(h.leaves()) == set(raw[attribute].dropna()), attribute


def test_adult_education_tree_follows_tds() -> None:
    h = adult_hierarchies()["education"]
    assert h.children("ANY") == ("Without-Post-Secondary", "Post-Secondary")
    assert h.leaves("Elementary") == ["Preschool", "1st-4th", "5th-6th"]
    assert h.leaves("Junior-Sec") == ["7th-8th", "9th", "10th"]
    assert h.leaves("Senior-Sec") == ["11th", "12th", "HS-grad"]
    assert h.children("University") == ("Bachelors", "Prof-school", "Graduate")
    assert h.leaves("Graduate") == ["Masters", "Doctorate"]
    assert h.path("Assoc-voc") == ["ANY", "Post-Secondary", "Associate", "Assoc-voc"]
    assert adult_hierarchies()["capital-gain"].generalize([0, 7688], 1).tolist() == ["[0, 1)", "[1, inf)"]


def test_adult_hierarchies_returns_a_fresh_dict() -> None:
    first = adult_hierarchies()
    first.pop("age")
    assert "age" in adult_hierarchies()


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@st.composite
def nested_levels(draw: st.DrawFn) -> tuple[float, float, list[list[int]]]:
    """Random bounds and cut levels, each level splitting some intervals the previous one made."""
    lower = draw(st.sampled_from([-math.inf, -100.0]))
    upper = draw(st.sampled_from([math.inf, 100.0]))
    points: set[int] = set()
    levels: list[list[int]] = []
    frontier = [(lower, upper)]  # intervals the previous level created
    for _ in range(draw(st.integers(1, 4))):
        new: set[int] = set()
        for lo, hi in frontier:
            a, b = int(max(lo, -100)) + 1, int(min(hi, 100)) - 1
            if a <= b:
                new |= draw(st.sets(st.integers(a, b), min_size=0 if levels else 1, max_size=3))
        if not new:
            break
        split = [(lo, hi) for lo, hi in frontier if any(lo < p < hi for p in new)]
        points |= new
        levels.append(sorted(points))
        edges = [lower, *levels[-1], upper]
        frontier = [
            (x, y) for x, y in zip(edges[:-1], edges[1:]) if any(lo <= x and y <= hi for lo, hi in split)
        ]  # fmt: skip
    return lower, upper, levels


@settings(max_examples=60, deadline=None)
@given(nested_levels(), st.lists(st.floats(-150, 150), min_size=1, max_size=30))
def test_nested_levels_partition_and_refine(spec: tuple[float, float, list[list[int]]], raw: list[float]) -> None:
    lower, upper, levels = spec
    h = Hierarchy.from_cuts("x", levels, lower=lower, upper=upper)
    assert h.height == len(levels)
    boundary_points = [float(p) for level in levels for p in level] + ([lower] if math.isfinite(lower) else [])
    values = np.array([v for v in raw if lower <= v < upper] + boundary_points)
    previous = None
    for depth in range(h.height + 2):
        out = h.generalize(values, depth)
        cut = h.cut_at_depth(depth)
        edges = cut.boundaries
        assert h.cuts_at_depth(depth).tolist() == (levels[min(depth, len(levels)) - 1] if depth else [])
        assert out.notna().all() and list(out.cat.categories) == list(cut.nodes)
        inside = (edges[:-1][None, :] <= values[:, None]) & (values[:, None] < edges[1:][None, :])
        assert (inside.sum(axis=1) == 1).all()  # each value lies in exactly one node of the cut
        assert (np.asarray(cut.nodes, dtype=object)[inside.argmax(axis=1)] == out.to_numpy(dtype=object)).all()
        if previous is not None:  # depth-d groups refine depth-(d-1) groups
            assert (pd.DataFrame({"d": out, "p": previous}).groupby("d", observed=True)["p"].nunique() == 1).all()
            for child, parent in zip(out, previous):
                assert parent in h.path(child)
        previous = out


def _tree_spec(shape: object, counter: list[int]) -> object:
    """Name a random nested-list shape: lists become groups 'g<i>', anything else a leaf 'v<i>'."""
    counter[0] += 1
    if isinstance(shape, list):
        return {f"g{counter[0]}": [_tree_spec(s, counter) for s in shape]}
    return f"v{counter[0]}"


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none(), lambda kids: st.lists(kids, min_size=1, max_size=4), max_leaves=20))
def test_random_categorical_groups_partition_and_refine(shape: object) -> None:
    spec = _tree_spec(shape if isinstance(shape, list) else [shape], [0])
    h = Hierarchy.categorical("c", spec)  # type: ignore[arg-type]
    leaves = h.leaves()
    assert h == Hierarchy.from_dict(h.to_dict())
    previous: dict[object, object] | None = None
    for depth in range(h.height + 1):
        groups = h.groups_at_depth(depth)
        members = [v for _, vs in groups for v in vs]
        assert sorted(members) == sorted(leaves)  # a partition: every leaf exactly once
        owner = {v: label for label, vs in groups for v in vs}
        assert h.generalize(leaves, depth).tolist() == [owner[v] for v in leaves]
        if previous is not None:
            for _, vs in groups:
                assert len({previous[v] for v in vs}) == 1
        previous = owner


def test_a_parsed_spec_builds_the_same_hierarchy_as_the_constructors(work: Hierarchy, age: Hierarchy) -> None:
    from ppdm.data.hierarchy.spec import categorical_spec, cuts_spec, parse_entry

    assert Hierarchy.from_spec(categorical_spec("work", WORK_TREE)) == work
    assert Hierarchy.from_spec(cuts_spec("age", [[40], [20, 40, 60]], lower=0)) == age
    parsed = parse_entry({"kind": "numeric", "cuts": [[40], [20, 40, 60]], "range": [0, None]}, "age", "hierarchies.age")
    assert parsed.kind == "numeric" and parsed.root == "[0, inf)" and Hierarchy.from_spec(parsed) == age
    with pytest.raises(HierarchyError, match=r"^hierarchies\.age\.kind: unknown kind 'ordinal'"):
        parse_entry({"kind": "ordinal"}, "age", "hierarchies.age")
