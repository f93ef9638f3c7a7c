"""The acceptance run of issue 15's defense search: experiments/defend.py on the whole of Adult in
paper 000's setting, target "nobody certain, ≤ 1 % at confidence ≥ 0.9", a 5-minute budget.

Marked slow: the default test run (``-m 'not slow'``) skips it; run it with ``pytest -m slow``.
"""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_the_search_finds_a_model_meeting_the_target_within_five_minutes(tmp_path, load_experiment):
    script = load_experiment("defend")
    out = script.main(["--out", str(tmp_path)])

    assert out["settings"]["train_rows"] == 30162 and out["settings"]["test_rows"] == 15060
    assert out["chosen"] is not None
    # the budget stops new candidates at 300 s; the one under way finishes
    longest = max(r["seconds"] or 0 for r in out["frontier"])
    assert out["search_seconds"] <= 300 + longest + 5
    # audited again on its own, the chosen model meets the target
    assert out["reaudit"]["certain"] == 0 and out["reaudit"]["confident_share_0.9"] <= 0.01
    frontier = json.loads((tmp_path / "frontier.json").read_text(encoding="utf-8"))
    chosen = [r for r in frontier if r["chosen"]]
    assert len(chosen) == 1 and chosen[0]["meets_target"]
    unprotected = frontier[0]
    assert unprotected["family"] == "unprotected" and not unprotected["meets_target"]
    assert any(r["family"] == "dp" and r["accuracy"] is not None for r in frontier)
