"""The layer table of docs/architecture.md ("Packages (src/ppdm/)") holds for every import under src/ppdm.

Every ``import`` / ``from ... import`` of ppdm code is read with :mod:`ast`, wherever it sits:
module level, inside functions, under ``if TYPE_CHECKING``, relative forms (``from . import x``),
and ``importlib.import_module("ppdm....")`` with a literal name. A module of package X may
import X itself, ``ppdm.errors``, and the packages its row's "may import" column names (all of
them rows above X; "everything above" means what it says). Top-level modules count as the row of
their name (``ppdm/errors.py`` is ``errors``), except ``ppdm/__main__.py`` (``python -m ppdm``), which is
part of ``cli``.

Independently of the table, no two modules may import each other, directly or round a circle:
an import circle leaves one module half-initialised while the other runs.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PACKAGE = SRC / "ppdm"
DESIGN = REPO / "docs" / "architecture.md"  # the architecture document, in the repository
EVERYONE = {"errors", "files", "progress", "defaults"}  # importable by every row: errors, writing output files whole (ppdm.files), telling progress (ppdm.progress), the shared defaults (ppdm.defaults)
# Top-level modules that belong to a package's row: ``python -m ppdm`` and the front door
# (``ppdm.api``, re-exported from ``ppdm``), which sits with the CLI at the top: the CLI only parses,
# calls it and prints.
TOP_LEVEL_ROWS = {"__main__": "cli", "api": "cli"}
ROOT_IMPORTS = {"ppdm.api", "ppdm.errors"}  # what the ``ppdm`` package itself may import (lazily): the front door


@dataclass(frozen=True)
class Import:
    """One edge of the module graph: module ``importer`` (file ``path``, ``line``) imports module ``target``."""

    importer: str
    target: str
    path: Path
    line: int
    text: str

    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}: {self.text}"


# -- the table --------------------------------------------------------------------------------
def layer_table(text: str) -> dict[str, set[str]]:
    """Rows of the "Packages (src/ppdm/)" table, top first: row -> the rows it may import."""
    section = re.search(r"^## Packages \(src/ppdm/\)\n(.*?)(?=^## )", text, re.S | re.M)
    if section is None:
        raise AssertionError(f"{DESIGN}: no '## Packages (src/ppdm/)' section")
    rows: list[tuple[str, list[str]]] = []
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        rows.append((cells[0].strip("`"), [m.strip() for m in cells[2].split(",")]))
    if not rows:
        raise AssertionError(f"{DESIGN}: the Packages table has no rows")
    allowed: dict[str, set[str]] = {}
    for name, may in rows:
        above = [r for r, _ in rows[: len(allowed)]]
        if "everything above" in may:
            allowed[name] = set(above)
            continue
        wrong = [m for m in may if m in dict(rows) and m not in above]
        if wrong:
            raise AssertionError(f"{DESIGN}: row {name!r} may import {wrong}, which are not above it")
        allowed[name] = {m for m in may if m in above}
    return allowed


@pytest.fixture(scope="module")
def table() -> dict[str, set[str]]:
    if not DESIGN.is_file():
        pytest.fail(f"{DESIGN} is missing: the layer test reads its table there")
    return layer_table(DESIGN.read_text(encoding="utf-8"))


# -- the imports ------------------------------------------------------------------------------
def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    base = SRC.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _resolve_from(node: ast.ImportFrom, importer: str, is_package: bool) -> list[str]:
    """The modules a ``from X import a, b`` reaches: ``X.a`` where that is a module, else ``X``."""
    if node.level:
        parts = importer.split(".")
        package = parts if is_package else parts[:-1]
        base_parts = package[: len(package) - (node.level - 1)]
        base = ".".join(base_parts + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        out.append(sub if alias.name != "*" and is_module(sub) else base)
    return out


def imports_of(path: Path) -> Iterator[Import]:
    """Every import of ppdm code in ``path``, wherever it sits in the file."""
    source = path.read_text(encoding="utf-8")
    importer = module_name(path)
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            targets = _resolve_from(node, importer, path.name == "__init__.py")
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            targets = [node.args[0].value]
        else:
            continue
        text = ast.get_source_segment(source, node) or ast.unparse(node)
        for target in dict.fromkeys(targets):
            if target == "ppdm" or target.startswith("ppdm."):
                yield Import(importer, target, path, node.lineno, " ".join(text.split()))


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert files, f"no Python files under {PACKAGE}"
    return [imp for f in files for imp in imports_of(f)]


def row_of(module: str) -> str:
    """The table row of a ppdm module ("" for the ``ppdm`` package itself)."""
    parts = module.split(".")
    if len(parts) == 1:
        return ""
    return TOP_LEVEL_ROWS.get(parts[1], parts[1])


# -- the tests --------------------------------------------------------------------------------
def test_every_package_is_in_the_table(table):
    rows = set(table) | EVERYONE | set(TOP_LEVEL_ROWS)
    found = {module_name(p).split(".")[1] for p in PACKAGE.rglob("*.py") if module_name(p) != "ppdm"}
    missing = sorted(found - rows)
    assert not missing, f"src/ppdm holds {missing}, which the layer table of {DESIGN} does not list"


def test_imports_follow_the_layer_table(table, imports):
    bad = []
    for imp in imports:
        source, target = row_of(imp.importer), row_of(imp.target)
        if target in ("", source) or target in EVERYONE:
            continue
        if source == "" and imp.target not in ROOT_IMPORTS:
            bad.append(f"{imp.where()}  (the ppdm package itself imports only the front door, ppdm.api)")
        elif source == "":
            continue
        elif source in EVERYONE:
            bad.append(f"{imp.where()}  (ppdm.{source} imports no ppdm module)")
        elif target not in table.get(source, set()):
            may = ", ".join(sorted(table.get(source, set()) | EVERYONE))
            bad.append(f"{imp.where()}  ({source} imports {target}; it may import only {may})")
    assert not bad, "imports against the layer table of docs/architecture.md:\n" + "\n".join(bad)


def strongly_connected(graph: dict[str, dict[str, Import]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
    return out


def a_cycle(graph: dict[str, dict[str, Import]], component: list[str]) -> list[Import]:
    """One import circle through the component's first module (breadth-first, so a shortest one)."""
    start, members = component[0], set(component)
    previous: dict[str, Import] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child, imp in sorted(graph.get(node, {}).items()):
                if child not in members or child in previous:
                    continue
                previous[child] = imp
                if child == start:
                    path = [imp]
                    while path[0].importer != start:
                        path.insert(0, previous[path[0].importer])
                    return path
                following.append(child)
        frontier = following
    raise AssertionError(f"no circle found in component {component}")


def test_no_import_circles(imports):
    graph: dict[str, dict[str, Import]] = {}
    for imp in imports:
        graph.setdefault(imp.importer, {}).setdefault(imp.target, imp)
    circles = []
    for component in strongly_connected(graph):
        if len(component) > 1 or component[0] in graph.get(component[0], {}):
            steps = "\n".join(f"    {imp.where()}" for imp in a_cycle(graph, component))
            circles.append(f"{' <-> '.join(component)}:\n{steps}")
    assert not circles, "import circles between modules:\n" + "\n".join(circles)


def test_the_checks_work_on_a_made_up_table_and_graph():
    """The table parser reads rows and refuses a row importing one below it; a circle is found."""
    table = layer_table(
        "## Packages (src/ppdm/)\n\n| module | holds | may import |\n|---|---|---|\n"
        "| `data` | x | numpy |\n| `tree` | x | data |\n| `cli` | x | everything above |\n\n## Next\n"
    )
    assert table == {"data": set(), "tree": {"data"}, "cli": {"data", "tree"}}
    with pytest.raises(AssertionError, match="not above it"):
        layer_table("## Packages (src/ppdm/)\n\n| `data` | x | tree |\n| `tree` | x | data |\n\n## Next\n")
    a = {"b": Import("a", "b", PACKAGE / "a.py", 3, "import b")}
    b = {"a": Import("b", "a", PACKAGE / "b.py", 7, "import a")}
    graph = {"a": a, "b": b, "c": {}}
    assert sorted(strongly_connected(graph)) == [["a", "b"], ["c"]]
    assert [imp.line for imp in a_cycle(graph, ["a", "b"])] == [3, 7]


# -- layers inside a package ------------------------------------------------------------------
#: Inside these packages, groups of modules in order, lowest first: a module may import modules
#: of its own group and of the groups before it, never of a later one. For maxent the groups are
#: its subpackages (see ``ppdm/maxent/__init__.py``); for exact, groups of its modules.
SUBLAYERS: dict[str, list[tuple[str, set[str]]]] = {
    "maxent": [("rows", {"rows"}), ("table", {"table"}), ("constraints", {"constraints"}), ("solvers", {"solvers"})],
    "exact": [
        ("counts", {"problem", "bounds", "options", "build", "target_rows", "input_rows"}),
        ("methods", {"classes", "network", "milp", "local", "moves", "cycles", "propagate", "freed", "pairs", "search", "target_bounds", "input_bounds"}),
        ("entry points", {"solve", "reconstruct", "membership"}),
    ],
}


def sublayer_of(module: str, package: str) -> int | None:
    """The index of the group ``module`` belongs to inside ``package`` (``None``: not in a group)."""
    parts = module.split(".")
    if len(parts) < 3 or parts[1] != package:
        return None
    for i, (_, members) in enumerate(SUBLAYERS[package]):
        if parts[2] in members:
            return i
    return None


def test_every_module_of_a_layered_package_is_in_a_group():
    for package in SUBLAYERS:
        found = {p.relative_to(PACKAGE / package).parts[0].removesuffix(".py") for p in (PACKAGE / package).rglob("*.py")}
        grouped = set().union(*(members for _, members in SUBLAYERS[package]))
        missing = sorted(found - grouped - {"__init__"})
        assert not missing, f"ppdm.{package}: {missing} belong to no group of SUBLAYERS[{package!r}]"


def test_imports_inside_a_package_follow_its_groups(imports):
    bad = []
    for imp in imports:
        for package, groups in SUBLAYERS.items():
            source, target = sublayer_of(imp.importer, package), sublayer_of(imp.target, package)
            if imp.importer.endswith("__init__") or source is None or target is None or target <= source:
                continue
            bad.append(f"{imp.where()}  ({groups[source][0]} imports {groups[target][0]}, a later group of ppdm.{package})")
    assert not bad, "imports against a package's own layers:\n" + "\n".join(bad)


# -- third-party imports ----------------------------------------------------------------------
#: Import names of the distributions pyproject.toml declares (core dependencies and extras).
DISTRIBUTIONS = {"yaml": "pyyaml", "sklearn": "scikit-learn"}


def declared_dependencies() -> tuple[set[str], set[str]]:
    """The core dependencies and the extras' ones, by distribution name (lower case)."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]

    def names(specs: list[str]) -> set[str]:
        return {re.split(r"[\[<>=!~ ;]", s, maxsplit=1)[0].lower() for s in specs}

    core = names(project["dependencies"])
    extras = set().union(*(names(v) for k, v in project["optional-dependencies"].items() if k not in ("test", "bench")))
    return core, extras - core


def third_party_imports() -> Iterator[tuple[str, Path, int, bool]]:
    """Every import of a third-party module under src/ppdm: (top name, file, line, at module level)."""
    import sys

    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = {id(n) for n in tree.body} | {id(n) for b in tree.body if isinstance(b, ast.If) for n in b.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("ppdm", "__future__"):
                    guarded = isinstance(node, ast.ImportFrom | ast.Import) and _under_type_checking(tree, node)
                    yield top, path, node.lineno, id(node) in top_level and not guarded


def _under_type_checking(tree: ast.Module, node: ast.AST) -> bool:
    return any(
        isinstance(b, ast.If) and ast.unparse(b.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING") and node in b.body for b in tree.body
    )


def test_every_third_party_import_is_declared_and_extras_load_lazily():
    """A module under src/ppdm imports only declared distributions, and one from an extra
    (dask, skops, ...) only inside the function that needs it: the core works without extras."""
    core, extras = declared_dependencies()
    undeclared, eager = [], []
    for top, path, line, module_level in third_party_imports():
        name = DISTRIBUTIONS.get(top, top).lower()
        where = f"{path.relative_to(REPO)}:{line}: {top}"
        if name not in core | extras:
            undeclared.append(where)
        elif name in extras and module_level:
            eager.append(where)
    assert not undeclared, "imports of distributions pyproject.toml does not declare:\n" + "\n".join(undeclared)
    assert not eager, "an extra's package imported at module level (import it where it is used):\n" + "\n".join(eager)
