"""The README's walk-through runs as written, in a folder with nothing beside it: from a CSV (written
from the bundled Adult data) and a scikit-learn tree to the audit, its report, the defense search
and the audit of what will be published."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def walkthrough() -> str:
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- walkthrough:start -->")[1].split("<!-- walkthrough:end -->")[0]
    return block.split("```bash", 1)[1].rsplit("```", 1)[0]


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    """The walk-through run once, as written, in a fresh folder with nothing beside it (no
    ``../shared``); its folder and what it printed."""
    root = tmp_path_factory.mktemp("walkthrough")
    work = root / "work"
    work.mkdir()
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", walkthrough()], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return work, done.stdout


def test_the_readme_walkthrough_runs_as_written(walked):
    work, stdout = walked
    for name in ("income_tree.json", "before.json", "before.html", "safer.json", "frontier.json", "fitted.csv", "after.json", "after.html", "release.json"):
        assert (work / name).stat().st_size > 0, name
    before, after = json.loads((work / "before.json").read_text()), json.loads((work / "after.json").read_text())
    assert before["summary"]["certain_right"] > 0  # the published tree proves some people's education
    assert after["summary"]["certain_right"] == 0  # what the search chose proves nobody's
    assert "[node 0]" in stdout and "prior alone" in stdout
    assert "<svg" in (work / "after.html").read_text()
    # one target from the search to the report and the record: the defended model's report says "target met"
    report = json.loads((work / "after.report.json").read_text())
    assert after["target"]["text"] == report["target"]["text"] == "certain=0,confident=0.01@0.9"
    assert [a["verdict"]["level"] for a in report["attacks"]] == ["meets"] and "target met" in (work / "after.html").read_text()
    record = json.loads((work / "release.json").read_text())
    assert record["decision"] == "release the defended model" and "held-out" in stdout


def test_the_readme_walkthrough_of_a_forest_in_a_pipeline(walked):
    work, stdout = walked
    for name in ("income_forest.skops", "forest_before.json", "forest_before.html", "safer_forest.json", "forest_frontier.json",
                 "forest_fitted.csv", "forest_after.json", "forest_after.html", "forest_after_again.html", "forest_release.json"):
        assert (work / name).stat().st_size > 0, name
    assert "sklearn-random-forest predicting 'income': 10 trees" in stdout and "tree 9:" in stdout
    assert "note: 'ID' is left out of what the attacker knows" in stdout
    before = json.loads((work / "forest_before.json").read_text())
    assert before["summary"]["certain_right"] > 0  # the published forest proves some people's education
    chosen = json.loads((work / "safer_forest.json").read_text())
    assert chosen["format"] == "ppdm-forest" and len(chosen["trees"]) >= 1
    after = (work / "forest_after.html").read_text()
    assert "<svg" in after and (work / "forest_after_again.html").read_text() == after
    # the defended forest's report judges against the target the search used, and meets it
    forest_after = json.loads((work / "forest_after.json").read_text())
    report = json.loads((work / "forest_after.report.json").read_text())
    assert forest_after["target"]["text"] == report["target"]["text"] == "certain=0,confident=0.01@0.9"
    assert [a["verdict"]["level"] for a in report["attacks"]] == ["meets"] and "target met" in after
    assert json.loads((work / "forest_release.json").read_text())["decision"] == "release the defended model"


def test_the_walkthrough_reads_nothing_outside_its_folder():
    """Every path the walk-through names is one it writes itself: no ``../`` and no absolute path."""
    text = walkthrough()
    assert "../" not in text and "/work" not in text and "shared" not in text
