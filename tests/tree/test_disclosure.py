"""Disclosure levels are ordered in one place: the enum (labels < error rates < class counts)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ppdm.errors import PpdmError
from ppdm.tree import Disclosure

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "ppdm"

#: Literal lists of the levels allowed to stay: the CLI's option choices, spelled out so that
#: building the options does not import the library (tests/cli/test_first_use.py keeps it equal).
ALLOWED = {("cli/common.py", "DISCLOSURES")}


def test_the_levels_are_ordered_as_they_are_declared():
    assert Disclosure.LABELS < Disclosure.ERROR_RATES < Disclosure.CLASS_COUNTS
    assert list(Disclosure) == sorted([Disclosure.CLASS_COUNTS, Disclosure.LABELS, Disclosure.ERROR_RATES])
    assert [d.rank for d in Disclosure] == [0, 1, 2]
    assert max(Disclosure) is Disclosure.CLASS_COUNTS and min(Disclosure) is Disclosure.LABELS
    assert Disclosure.ERROR_RATES >= Disclosure.ERROR_RATES and Disclosure.ERROR_RATES <= Disclosure.ERROR_RATES
    assert not Disclosure.CLASS_COUNTS < Disclosure.LABELS


def test_a_level_compares_with_a_value_and_stays_equal_to_its_own():
    # plain string order would put "class-counts" first; the level's order decides
    assert Disclosure.LABELS < "class-counts" and "class-counts" > Disclosure.LABELS
    assert Disclosure.ERROR_RATES > "labels" and "error_rates" <= Disclosure.ERROR_RATES
    assert Disclosure.LABELS == "labels" and hash(Disclosure.LABELS) == hash("labels")
    assert {Disclosure.CLASS_COUNTS: 1}["class-counts"] == 1
    with pytest.raises(PpdmError, match="unknown disclosure 'everything'"):
        _ = Disclosure.LABELS < "everything"
    with pytest.raises(TypeError):
        _ = Disclosure.LABELS < 1
    with pytest.raises(TypeError):
        _ = 1 > Disclosure.LABELS


def _level(node: ast.expr) -> str | None:
    """The level a literal names: ``Disclosure.LABELS`` or ``"labels"`` (``None`` otherwise)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Disclosure":
        return Disclosure[node.attr].value if node.attr in Disclosure.__members__ else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in {d.value for d in Disclosure}:
        return node.value
    return None


def _copies(path: Path) -> list[tuple[int, str]]:
    """Literal tuples and lists in ``path`` naming every level and nothing else, and dicts mapping
    every level (and nothing else) to a number: the order of the levels written out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and node.value is not None:
                    names[id(node.value)] = target.id
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List):
            items = node.elts
        elif isinstance(node, ast.Dict) and all(isinstance(v, ast.Constant) and isinstance(v.value, int) for v in node.values):
            items = [k for k in node.keys if k is not None]  # levels to numbers: ranks
        else:
            continue  # a set has no order; a dict of words or formulas per level is no order either
        levels = [_level(item) for item in items]
        if len(items) == len(Disclosure) and None not in levels and set(levels) == {d.value for d in Disclosure}:
            found.append((node.lineno, names.get(id(node), "")))
    return found


def test_no_module_spells_the_order_out_again():
    copies = [
        f"{path.relative_to(PACKAGE)}:{line} {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, name in _copies(path)
        if (path.relative_to(PACKAGE).as_posix(), name) not in ALLOWED
    ]
    assert copies == [], "compare Disclosure members instead of listing the levels: " + ", ".join(copies)


def test_the_scan_finds_a_copy(tmp_path):
    copy = tmp_path / "copy.py"
    copy.write_text(
        "_LEVEL = {Disclosure.LABELS: 0, Disclosure.ERROR_RATES: 1, Disclosure.CLASS_COUNTS: 2}\n"
        "LEVELS = ('labels', 'error-rates', 'class-counts')\n"
        "QUANTITIES = ('labels', 'error-rates', 'class-counts', 'cover')\n"
        "WORDS = {'labels': 'the class', 'error-rates': 'rates', 'class-counts': 'counts'}\n"
        "ROWS = {Disclosure.CLASS_COUNTS: k, Disclosure.ERROR_RATES: 2, Disclosure.LABELS: 1}\n"
        "KNOWN = {'labels', 'error-rates', 'class-counts'}\n"
    )
    assert _copies(copy) == [(1, "_LEVEL"), (2, "LEVELS")]
