"""Each shared default is defined once (issue 40, deliverable 3): the 300-second time budget and
the whole-count tolerance ``WHOLE`` live in :mod:`ppdm.defaults`, imported where used. Once the
300-second default was written five times and ``WHOLE = 1e-6`` four times."""

from __future__ import annotations

import re
from pathlib import Path

from ppdm import defaults

SRC = Path(__file__).resolve().parents[1] / "src" / "ppdm"
#: A time budget's default written as a number: a SECONDS / time / budget / limit name given
#: 300, or a command-line option defaulting to 300.
BUDGET = re.compile(r"(?i)(\w*(seconds|time|budget|limit)\w*\s*(:\s*[\w |.]+)?=\s*300(\.0*)?\b|default\s*=\s*300(\.0*)?\b)")
WHOLE = re.compile(r"^\s*WHOLE\s*(:\s*\w+)?\s*=", re.M)


def _sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in SRC.rglob("*.py")}


def test_the_300_second_default_is_defined_once():
    found = [f"{p.relative_to(SRC)}: {m.group(0)}" for p, text in _sources().items() for m in BUDGET.finditer(text)]
    assert found == ["defaults.py: SECONDS = 300.0"], found
    assert defaults.FOREST_SECONDS == defaults.EXACT_SECONDS == defaults.LP_SECONDS == defaults.DEFENSE_SECONDS == defaults.SECONDS


def test_whole_is_defined_once_and_imported_where_used():
    defined = [str(p.relative_to(SRC)) for p, text in _sources().items() if WHOLE.search(text)]
    assert defined == ["defaults.py"], defined
    users = [p for p, text in _sources().items() if re.search(r"\bWHOLE\b", text) and p.name != "defaults.py"]
    assert users and all("from ppdm.defaults import" in p.read_text(encoding="utf-8") for p in users)


def test_the_budgets_are_the_ones_the_library_and_the_cli_use():
    import inspect

    from ppdm.attacks.models.explicit import ForestAuditOptions
    from ppdm.attacks.models.regression import LP_SECONDS
    from ppdm.cli.audit import DEFAULT_EXACT_SECONDS, FOREST_SECONDS
    from ppdm.defend.search import defend
    from ppdm.pipeline.options import AuditOptions

    assert AuditOptions().exact_seconds is defaults.EXACT_SECONDS and DEFAULT_EXACT_SECONDS is defaults.EXACT_SECONDS
    assert FOREST_SECONDS is defaults.FOREST_SECONDS and ForestAuditOptions().solve.time_limit == defaults.FOREST_SECONDS
    assert LP_SECONDS is defaults.LP_SECONDS
    assert inspect.signature(defend).parameters["time_budget"].default == defaults.DEFENSE_SECONDS
