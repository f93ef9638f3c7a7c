"""The README's output-checker run works as written, in a folder with nothing beside it: the
researcher's model file, data and policy give the recommendation the README quotes, the check's
JSON and a bundle holding exactly the files the README lists, each hashed in its manifest."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def checker_block() -> str:
    block = readme().split("<!-- checker:start -->")[1].split("<!-- checker:end -->")[0]
    return block.split("```bash", 1)[1].rsplit("```", 1)[0]


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """The block run once, as written, in a fresh folder; its folder and what it printed."""
    pytest.importorskip("skops.io")
    work = tmp_path_factory.mktemp("checker") / "work"
    work.mkdir()
    path = os.pathsep.join([str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])  # this checkout's ppdm, whatever the cwd
    env = os.environ | {"PYTHONPATH": path, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", checker_block()], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return work, done.stdout


def test_the_readme_checker_run_gives_the_recommendation_it_quotes(checked):
    work, stdout = checked
    arrow = next(line.strip() for line in stdout.splitlines() if line.strip().startswith("→"))
    quoted = " ".join(readme().split("<!-- checker:end -->")[1].split("`;")[0].split())
    assert arrow.removeprefix("→ ") in quoted, (arrow, quoted)  # the README quotes what the run prints
    data = json.loads((work / "check.json").read_text(encoding="utf-8"))
    assert data["format"] == "ppdm-check" and data["policy"]["name"] == "our TRE"
    assert data["policy"]["sha256"] == hashlib.sha256((work / "policy.yaml").read_bytes()).hexdigest()
    assert data["recommendation"]["decision"] == "release with conditions"
    failed = [f["rule"] for f in data["findings"] if f["state"] != "passed"]
    assert arrow == f"→ release with conditions: {', '.join(failed)} to settle before release"


def test_the_readme_checker_bundle_holds_the_files_it_lists_and_no_data(checked):
    work, _ = checked
    bundle = work / "release"
    assert {p.name for p in bundle.iterdir()} == {"model.skops", "check.json", "report.txt", "manifest.json"}
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["files"]:
        assert hashlib.sha256((bundle / entry["name"]).read_bytes()).hexdigest() == entry["sha256"], entry["name"]
    assert (bundle / "model.skops").read_bytes() == (work / "model.skops").read_bytes()
    assert (bundle / "check.json").read_bytes() == (work / "check.json").read_bytes()


def test_the_readme_checker_block_reads_nothing_outside_its_folder():
    text = checker_block()
    assert "../" not in text and "/work" not in text and "shared" not in text
