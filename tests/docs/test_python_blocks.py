"""Every ```python block of README.md and docs/*.md runs as written.

The blocks of one file run in order in one namespace, like a notebook, in a temporary working
directory of their own: a later block may use what an earlier one defined. Each block is one test,
named ``file:line`` (the line of its opening fence), and a failure names the file and the line of
the markdown that raised.

An HTML comment on the line just before a fence marks a block:

* ``<!-- doctest: slow -->`` — it takes more than about 20 s: it runs only with ``-m slow``. In the
  default run the blocks after it run without it, so they must not need its names.
* ``<!-- doctest: skip — why -->`` — a fragment that cannot run (say why): reported as skipped.
  Its imports are still checked.

Whatever the marker, no block may import what does not exist (``test_every_import_resolves``).
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\S*)\s*$")
MARKER = re.compile(r"^<!--\s*doctest:\s*(?P<kind>\S+?)\s*(?:[:—–-]+\s*(?P<reason>.*?))?\s*-->\s*$")
KINDS = ("slow", "skip")
#: What the docs once showed and no longer works; a block that still says it fails.
FORBIDDEN = ("from ppdm.attacks import maxent_attack",)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    code: str
    kind: str | None  # None, "slow" or "skip"
    reason: str

    @property
    def name(self) -> str:
        return f"{_rel(self.path)}:{self.line}"


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks_of(path: Path) -> list[Block]:
    """The ```python blocks of one markdown file, with the marker on the line before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```"), None)
        if end is None:
            raise ValueError(f"{_rel(path)}:{i + 1}: a ``` fence that is never closed")
        if opened.group(1) == "python":
            kind, reason = None, ""
            marked = MARKER.match(lines[i - 1].strip()) if i > 0 else None
            if marked is not None:
                kind, reason = marked.group("kind"), marked.group("reason") or ""
                if kind not in KINDS:
                    raise ValueError(f"{_rel(path)}:{i}: unknown doctest marker {kind!r} (one of {', '.join(KINDS)})")
                if kind == "skip" and not reason:
                    raise ValueError(f"{_rel(path)}:{i}: a skipped block must say why (<!-- doctest: skip — why -->)")
            found.append(Block(path, i + 1, "\n".join(lines[i + 1 : end]) + "\n", kind, reason))
        i = end + 1
    return found


BLOCKS = [block for path in documents() for block in blocks_of(path)]


def _param(block: Block) -> Any:
    marks = []
    if block.kind == "slow":
        marks.append(pytest.mark.slow)
    elif block.kind == "skip":
        marks.append(pytest.mark.skip(reason=f"{block.name}: {block.reason}"))
    return pytest.param(block, id=block.name, marks=marks)


@dataclass
class Notebook:
    """One file's namespace, where its blocks ran, and which of them ran."""

    directory: Path
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__main__"})
    ran: set[int] = field(default_factory=set)
    failed: str | None = None


@pytest.fixture(scope="module")
def notebooks() -> dict[Path, Notebook]:
    """Each markdown file's notebook, for the whole run."""
    return {}


def _run(block: Block, notebook: Notebook) -> None:
    cwd = os.getcwd()
    os.chdir(notebook.directory)
    try:
        # Padded so that the compiled lines are the markdown's: tracebacks point into the file.
        code = compile("\n" * block.line + block.code, str(block.path), "exec")
        exec(code, notebook.namespace)
    except Exception as error:
        line = _markdown_line(error, block)
        notebook.failed = f"{_rel(block.path)}:{line}"
        detail = "".join(traceback.format_exception(type(error), error, error.__traceback__, limit=-8))
        pytest.fail(f"{notebook.failed} (the python block at line {block.line}) raised {type(error).__name__}: {error}\n\n{detail}", pytrace=False)
    finally:
        os.chdir(cwd)
        notebook.ran.add(block.line)


def _markdown_line(error: BaseException, block: Block) -> int:
    """The line of the markdown file where ``error`` was raised (the block's fence if unknown)."""
    line = block.line
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        if frame.f_code.co_filename == str(block.path):
            line = lineno
    if isinstance(error, SyntaxError) and error.filename == str(block.path) and error.lineno:
        line = error.lineno
    return line


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_block_runs(block: Block, notebooks: dict[Path, Notebook], tmp_path_factory: pytest.TempPathFactory) -> None:
    if block.path not in notebooks:
        notebooks[block.path] = Notebook(tmp_path_factory.mktemp(block.path.stem))
    notebook = notebooks[block.path]
    # The blocks before this one that did not run in this session (one test chosen by its id, -k):
    # run them first, as a reader would have. A block that is not slow never waits for a slow one.
    for earlier in blocks_of(block.path):
        if earlier.line >= block.line:
            break
        if earlier.line in notebook.ran or earlier.kind == "skip" or (earlier.kind == "slow" and block.kind != "slow"):
            continue
        if notebook.failed is None:
            _run(earlier, notebook)
    if notebook.failed is not None:
        pytest.skip(f"an earlier block of {_rel(block.path)} failed at {notebook.failed}")
    _run(block, notebook)


def test_the_docs_have_python_blocks() -> None:
    files = {_rel(b.path) for b in BLOCKS}
    assert "README.md" in files and len(BLOCKS) >= 10, files


@pytest.mark.parametrize("block", [pytest.param(b, id=b.name) for b in BLOCKS])
def test_every_import_resolves(block: Block) -> None:
    """Every block's imports exist, slow and skipped blocks' too, and none is a spelling the
    package has dropped."""
    problems = import_problems(block)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def import_problems(block: Block) -> list[str]:
    """What is wrong with ``block``'s imports, one line each naming the file and line."""
    problems = []
    for bad in FORBIDDEN:
        for offset, text in enumerate(block.code.splitlines(), start=1):
            if bad in text:
                problems.append(f"{_rel(block.path)}:{block.line + offset}: `{bad}` no longer works (import ppdm: ppdm.audit)")
    try:
        tree = ast.parse(block.code)
    except SyntaxError as error:
        return [*problems, f"{_rel(block.path)}:{block.line + (error.lineno or 0)}: {error.msg}"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            problems += [p for alias in node.names if (p := _import_problem(block, node, alias.name, None))]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            problems += [p for alias in node.names if (p := _import_problem(block, node, node.module, alias.name))]
    return problems


def _import_problem(block: Block, node: ast.stmt, module: str, name: str | None) -> str | None:
    where = f"{_rel(block.path)}:{block.line + node.lineno}"
    try:
        imported = importlib.import_module(module)
    except ImportError as error:
        return f"{where}: import {module} fails: {error}"
    if name is None or name == "*" or hasattr(imported, name):
        return None
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return f"{where}: cannot import name {name!r} from {module!r}"
    return None


# -- the collector itself ------------------------------------------------------------------------
def _markdown(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "page.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_markers_choose_slow_and_skip_and_a_skip_says_why(tmp_path: Path) -> None:
    page = _markdown(tmp_path, (
        "text\n```python\na = 1\n```\n<!-- doctest: slow -->\n```python\nb = a\n```\n"
        "<!-- doctest: skip — a fragment -->\n```python\nc = undefined\n```\n```bash\nls\n```\n"
    ))
    blocks = blocks_of(page)
    assert [(b.line, b.kind, b.reason, b.code) for b in blocks] == [
        (2, None, "", "a = 1\n"), (6, "slow", "", "b = a\n"), (10, "skip", "a fragment", "c = undefined\n"),
    ]
    marks = [[m.name for m in _param(b).marks] for b in blocks]
    assert marks == [[], ["slow"], ["skip"]]
    assert "a fragment" in _param(blocks[2]).marks[0].kwargs["reason"]
    for bad, message in (
        ("<!-- doctest: skip -->\n```python\nx\n```\n", "must say why"),
        ("<!-- doctest: sloow -->\n```python\nx\n```\n", "unknown doctest marker 'sloow'"),
        ("```python\nx = 1\n", "never closed"),
    ):
        with pytest.raises(ValueError, match=message):
            blocks_of(_markdown(tmp_path, bad))


def test_a_failing_block_names_its_file_and_line(tmp_path: Path) -> None:
    page = _markdown(tmp_path, "# page\n\n```python\nx = 1\ny = x + 1\nraise RuntimeError(f'broken {y}')\n```\n")
    (block,) = blocks_of(page)
    notebook = Notebook(tmp_path)
    with pytest.raises(pytest.fail.Exception, match=r"page\.md:6 \(the python block at line 3\) raised RuntimeError: broken 2"):
        _run(block, notebook)
    assert notebook.failed == f"{page}:6" and notebook.namespace["y"] == 2


def test_imports_that_fail_and_the_dropped_spelling_are_caught(tmp_path: Path) -> None:
    page = _markdown(tmp_path, (
        "```python\nimport ppdm\nfrom ppdm.attacks import maxent_attack\nfrom ppdm.tree import no_such_name\n"
        "import no_such_module_ppdm\nfrom ppdm.attacks.models.maxent import maxent_attack\n```\n"
    ))
    (block,) = blocks_of(page)
    problems = import_problems(block)
    assert len(problems) == 4, problems  # the dropped spelling twice (text and import), then two bad imports
    assert problems[0].startswith(f"{page}:3: `from ppdm.attacks import maxent_attack` no longer works")
    assert f"{page}:3: cannot import name 'maxent_attack' from 'ppdm.attacks'" in problems
    assert f"{page}:4: cannot import name 'no_such_name' from 'ppdm.tree'" in problems
    assert any(p.startswith(f"{page}:5: import no_such_module_ppdm fails") for p in problems)


def test_a_block_that_does_not_parse_names_its_line(tmp_path: Path) -> None:
    page = _markdown(tmp_path, "```python\nx = 1\nx = (\n```\n")
    (block,) = blocks_of(page)
    with pytest.raises(pytest.fail.Exception, match=r"page\.md:3 \(the python block at line 1\) raised SyntaxError"):
        _run(block, Notebook(tmp_path))
