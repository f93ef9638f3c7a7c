"""The README's walk-through runs as written: from a CSV ppdm does not bundle and a scikit-learn
tree to the audit, its report, the defense search and the audit of what will be published."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def walkthrough() -> str:
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- walkthrough:start -->")[1].split("<!-- walkthrough:end -->")[0]
    return block.split("```bash", 1)[1].rsplit("```", 1)[0]


@pytest.mark.skipif(not (SHARED / "datasets" / "bank_loan").is_dir(), reason="../shared/datasets is not beside the repository")
def test_the_readme_walkthrough_runs_as_written(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "shared").symlink_to(SHARED)  # the commands name ../shared, as from the repository
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", walkthrough()], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name in ("loan_tree.json", "before.json", "before.html", "safer.json", "frontier.json", "fitted.csv", "after.json", "after.html", "release.json"):
        assert (work / name).stat().st_size > 0, name
    before, after = json.loads((work / "before.json").read_text()), json.loads((work / "after.json").read_text())
    assert before["summary"]["certain_right"] > 0  # the published tree proves some customers' Education
    assert after["summary"]["certain_right"] == 0  # what the search chose proves nobody's
    assert "[node 0]" in done.stdout and "prior alone" in done.stdout
    assert "<svg" in (work / "after.html").read_text()
    # one target from the search to the report and the record: the defended model's report says "target met"
    report = json.loads((work / "after.report.json").read_text())
    assert after["target"]["text"] == report["target"]["text"] == "certain=0,confident=0.01@0.9"
    assert [a["verdict"]["level"] for a in report["attacks"]] == ["meets"] and "target met" in (work / "after.html").read_text()
    record = json.loads((work / "release.json").read_text())
    assert record["decision"] == "release the defended model" and "held-out" in done.stdout
