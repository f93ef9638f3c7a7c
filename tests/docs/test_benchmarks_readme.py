"""benchmarks/README.md stays a guide a newcomer reads (what each benchmark measures, its command,
its latest table), not a lab notebook: at most 40 KB, one section per benchmark script, and no
commit hashes or load averages (history lives in git)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "benchmarks" / "README.md"


def test_the_benchmarks_guide_stays_under_40_kb():
    size = len(GUIDE.read_bytes())
    assert size <= 40_000, f"{GUIDE} is {size:,} bytes: keep it a guide (history belongs in git)"


def test_every_benchmark_script_has_a_section_with_its_command():
    text = GUIDE.read_text(encoding="utf-8")
    scripts = sorted(p.name for p in (ROOT / "benchmarks").glob("bench_*.py"))
    missing = [name for name in scripts if f"## `{name}`" not in text or f"benchmarks/{name}" not in text]
    assert not missing, f"{GUIDE} has no section with a command for {missing}"


def test_no_commit_hashes_or_load_averages():
    text = GUIDE.read_text(encoding="utf-8")
    assert not re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", text)
    assert "load average" not in text
