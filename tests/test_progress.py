"""Progress of the long steps (:mod:`ppdm.progress`): one protocol the solver loops, the exact
search, a forest's rows and the defense search report through, rendered by the CLI and by
default as lines on stderr; ``progress=False`` silences it."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from small_nursery import FEATURES, small_nursery, small_tree

import ppdm
from ppdm.progress import Printer, Step, report, reporting, resolve


@pytest.fixture(scope="module")
def nursery() -> pd.DataFrame:
    return small_nursery(5)


_tree = small_tree


THREAT = ppdm.ThreatModel(sensitive="parents", known=["has_nurs", "form"], class_known=True)


def test_a_step_reads_as_one_line_with_what_is_left():
    step = Step("solving: Newton's method", 12, 200, "Newton steps at most", 35.2, 300.0, "rows off by 1.0e-03")
    assert step.line() == "solving: Newton's method; 12 of 200 Newton steps at most; rows off by 1.0e-03; 35 s of 300 s"


def test_the_printer_is_quiet_at_first_then_prints_each_phase_and_not_every_step():
    out = io.StringIO()
    printer = Printer(out, quiet=0.0, every=60.0)
    for k in range(5):
        printer(Step("solving", k, 5, "steps"))
    printer(Step("proving", 1, 2, "parts"))
    assert out.getvalue().splitlines() == ["solving; 0 of 5 steps", "proving; 1 of 2 parts"]
    late = io.StringIO()
    Printer(late, quiet=60.0)(Step("solving"))
    assert late.getvalue() == ""  # a short run prints nothing
    assert isinstance(resolve(None), Printer) and resolve(False) is None


def test_report_tells_the_reporter_installed_and_nothing_else():
    heard: list[Step] = []
    report("nobody listens")
    with reporting(heard.append):
        report("a loop", 3, 10, "steps")
        with reporting(False):
            report("silenced")
    report("after")
    assert [(s.phase, s.done, s.total) for s in heard] == [("a loop", 3, 10)]


def test_a_tree_audit_reports_its_newton_steps_of_their_budget(nursery):
    heard: list[Step] = []
    ppdm.audit(_tree(nursery), nursery, THREAT, progress=heard.append)
    newton = [s for s in heard if s.phase.startswith("solving: Newton")]
    assert newton and all(s.total is not None and s.done is not None and s.done <= s.total for s in newton)


def test_a_forest_audit_reports_its_trees_and_the_exact_audit_its_search(nursery):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    estimator = make_pipeline(OrdinalEncoder(), RandomForestClassifier(3, max_depth=3, random_state=0)).fit(nursery[FEATURES], nursery["class"])
    forest = ppdm.from_estimator(estimator, nursery[FEATURES], nursery["class"])
    heard: list[Step] = []
    ppdm.audit(forest, nursery, THREAT, exact=True, progress=heard.append)
    phases = {s.phase for s in heard}
    trees = [s for s in heard if s.phase == "building each tree's rows"]
    assert trees and trees[-1].done == trees[-1].total == 3
    assert any(p.startswith("solving: ") for p in phases) and any(p.startswith("proving: ") for p in phases)


def test_progress_false_is_silent(nursery, capsys):
    ppdm.audit(_tree(nursery), nursery, THREAT, progress=False)
    assert capsys.readouterr().err == ""


def test_the_defense_search_reports_candidates_done_of_all(nursery):
    heard: list[Step] = []
    ppdm.defend(_tree(nursery), nursery, ppdm.ThreatModel(sensitive="parents", known=["has_nurs"], class_known=True), "certain=0",
                families=["pruning"], time_budget=60, progress=heard.append)  # fmt: skip
    assert heard and {s.phase for s in heard} == {"defense search"}
    assert heard[-1].done == heard[-1].total and heard[-1].total > 1 and heard[-1].time_limit == 60


def test_a_membership_audit_reports_its_estimate(nursery):
    member = (pd.Series(range(len(nursery))) % 2 == 0).to_numpy()
    heard: list[Step] = []
    ppdm.audit(_tree(nursery[member].reset_index(drop=True)), membership=nursery.assign(member=member), progress=heard.append)
    assert any(s.phase.startswith(("estimating membership", "proving membership")) for s in heard)


def test_the_older_progress_over_trees_still_hears_the_trees_with_a_warning(nursery):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    estimator = make_pipeline(OrdinalEncoder(), RandomForestClassifier(2, max_depth=2, random_state=0)).fit(nursery[FEATURES], nursery["class"])
    forest = ppdm.from_estimator(estimator, nursery[FEATURES], nursery["class"])
    ticks: list[tuple[int, int]] = []
    with pytest.warns(DeprecationWarning, match="progress"):
        ppdm.audit(forest, nursery, THREAT, progress=lambda done, total: ticks.append((done, total)))
    assert ticks and ticks[-1] == (2, 2)
