"""docs/architecture.md names the code as it is: the packages and top-level modules of src/ppdm,
maxent's subpackages and exact's modules, each named in the document exists and each that exists
is named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "ppdm"
DOC = ROOT / "docs" / "architecture.md"


def section(title: str) -> str:
    """The text of the ``## title`` section of the architecture document."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match is not None, f"{DOC}: no '## {title}' section"
    return match.group(1)


def first_cells(text: str) -> set[str]:
    """The backticked names in the first cell of each table row of ``text``."""
    out = set()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and cells[0].startswith("`"):
            out.update(re.findall(r"`([^`]+)`", cells[0]))
    return out


def named_cells(text: str, column: int) -> set[str]:
    """Every backticked name in column ``column`` of the table rows of ``text``."""
    out = set()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and len(cells) > column:
            out.update(re.findall(r"`([^`]+)`", cells[column]))
    return out


def subpackages(path: Path) -> set[str]:
    return {p.parent.name for p in path.glob("*/__init__.py")}


def modules(path: Path) -> set[str]:
    return {p.stem for p in path.glob("*.py") if p.stem != "__init__"}


def test_the_package_table_names_every_subpackage_of_src_ppdm():
    named, found = first_cells(section("Packages (src/ppdm/)")), subpackages(PACKAGE)
    assert named - found == set(), f"{DOC} names packages src/ppdm does not hold"
    assert found - named == set(), f"src/ppdm holds packages {DOC} does not name"


def test_the_top_level_table_names_every_module_of_src_ppdm():
    named = {n.removeprefix("ppdm.") for n in first_cells(section("Top-level modules"))}
    found = modules(PACKAGE)
    assert named - found == set(), f"{DOC} names top-level modules src/ppdm does not hold"
    assert found - named == set(), f"src/ppdm holds top-level modules {DOC} does not name"


@pytest.mark.parametrize(("title", "package", "column", "kind"), [
    ("Inside `maxent` (lowest first; a module imports its own group and earlier ones)", "maxent", 0, subpackages),
    ("Inside `exact`", "exact", 1, modules),
    ("Inside `attacks`", "attacks", 0, subpackages),
])  # fmt: skip
def test_the_layered_packages_tables_name_their_parts(title, package, column, kind):
    named = {n.removeprefix(f"{package}.") for n in named_cells(section(title), column)} - {"module", "modules", "group", "subpackage"}
    found = kind(PACKAGE / package)
    assert named - found == set(), f"{DOC} names parts of ppdm.{package} that do not exist"
    assert found - named == set(), f"ppdm.{package} holds parts {DOC} does not name"


def test_the_document_stands_alone():
    text = DOC.read_text(encoding="utf-8")
    assert "../shared" not in text and "leaves out" not in text.splitlines()[0]


def test_each_attacks_group_lists_its_modules_and_imports_only_the_groups_above_it():
    """The ``attacks`` table names each subpackage's modules; a module imports groups above its
    own row only (the one exception the document names: ``leaf.homogeneity`` reads
    ``models.possible``)."""
    import ast

    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section("Inside `attacks`").splitlines() if line.startswith("| `")]
    order = [re.findall(r"`([^`]+)`", r[0])[0] for r in rows]
    for group, row in zip(order, rows, strict=True):
        named = set(re.findall(r"`([a-z_]+)`", row[1]))
        assert named == modules(PACKAGE / "attacks" / group), f"{DOC}: the attacks.{group} row does not list its modules"
    upward = set()
    for group in order:
        for path in (PACKAGE / "attacks" / group).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ppdm.attacks."):
                    target = node.module.split(".")[2]
                    if target in order and order.index(target) > order.index(group):
                        upward.add(f"{group}.{path.stem} -> {node.module}")
    assert upward == {"leaf.homogeneity -> ppdm.attacks.models.possible"}


def test_the_lines_that_tell_a_forest_from_a_tree_are_the_ones_the_document_lists() -> None:
    """Issue 40: at most 8 ``isinstance(…, Forest)`` lines in src, each file among the document's reasons."""
    pattern = re.compile(r"isinstance\([^)]*\bForest\b")
    found = [
        (path.relative_to(PACKAGE).as_posix(), n)
        for path in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    stated = re.search(r"isinstance\\\(\[\^\)\]\*\\bForest\\b' src`, (\d+) lines", DOC.read_text(encoding="utf-8"))
    assert stated is not None, "the document states how many lines ask which model they hold"
    assert len(found) == int(stated.group(1)) <= 8, found
    reasons = DOC.read_text(encoding="utf-8")
    assert all(f"`{path}`" in reasons or f"`{path.split('/')[-1]}`" in reasons or path.split("/")[-1][:-3] in reasons for path, _ in found), found
