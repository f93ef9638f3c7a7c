"""The README's two first commands work in a fresh clone with nothing beside it: they name only
files of the repository (or what they create), `.ci/run` runs the test command verbatim, and what
the first one writes is ignored by git, so the checkout stays clean."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    """The README's first two ```bash blocks, each one command line."""
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2, "README.md: the install-and-run and the test commands are its first two bash blocks"
    commands = [b.strip() for b in blocks[:2]]
    assert all("\n" not in c for c in commands), commands
    return commands


def test_the_readme_commands_name_only_files_inside_the_repository():
    for command in readme_commands():
        for word in shlex.split(command):
            assert not word.startswith(("/", "~")) and ".." not in word.split("/"), (word, command)
            for argument in re.findall(r"^\.?\.?/?[\w.-]+\.(?:toml|md|txt|cfg|py|csv|json|yaml)$", word):
                assert (ROOT / argument).is_file() or argument == "audit.json", (argument, command)


def test_the_first_command_installs_and_runs_the_main_job():
    install, _ = readme_commands()
    assert "pip install ." in install and " ppdm audit " in install and "--dataset adult" in install


def test_ci_runs_the_readme_first_command_in_a_fresh_clone():
    """`.ci/run` reads the first command from README.md (so it runs it verbatim) and runs it in a
    clone with nothing beside it, then checks the clone stays clean."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'open("README.md"' in script and ")[0].strip()" in script
    assert 'git clone -q . "$scratch/ppdm"' in script and 'bash -euo pipefail -c "$first"' in script
    assert "status --porcelain" in script


def test_ci_runs_the_readme_test_command_verbatim():
    _, test_command = readme_commands()
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    last = [line for line in script if line.strip() and not line.startswith("#")][-1]
    assert last == test_command.replace(' -e ".[test]"', ' -q -e ".[test]"'), (last, test_command)


def test_what_the_first_command_writes_is_ignored_by_git():
    install, _ = readme_commands()
    outputs = [w for w in shlex.split(install) if w.endswith(".json")] + [".venv/bin/python", "build/lib/x.py", "src/ppdm.egg-info/PKG-INFO"]
    outputs += [w.removesuffix(".json") + ".report.json" for w in outputs if w.endswith(".json")]
    done = subprocess.run(["git", "check-ignore", "--no-index", *outputs], cwd=ROOT, capture_output=True, text=True)
    ignored = set(done.stdout.split())
    assert ignored == set(outputs), f"not ignored by .gitignore: {sorted(set(outputs) - ignored)}"


def test_the_readme_and_docs_name_no_folder_beside_the_repository():
    """A user's clone has nothing beside it: the README and docs/ never send the reader to
    ``../shared`` or ``/work`` (an optional Bank Loan copy may be named in docs/, never in the README)."""
    assert "../shared" not in (ROOT / "README.md").read_text(encoding="utf-8")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        assert "/work/" not in path.read_text(encoding="utf-8"), path
