"""experiments/exact_forests.py end to end on a small setting (slow: it trains and audits forests on Adult)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "exact_forests.py"


@pytest.mark.slow
def test_the_exact_forests_table_on_a_small_setting() -> None:
    spec = importlib.util.spec_from_file_location("exact_forests_experiment", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    rows = [script.run(200, t, boot, 30.0) for t, boot in ((1, False), (3, True))]
    for row in rows:
        assert row["estimate_not_proved"] == 0 or row["undecided"] > 0  # certain by the estimate: proved, unless left open
        assert row["proved"] + row["undecided"] <= 200
    assert "| trees | bootstrap |" in script.table_md(rows, 200, 30.0)
