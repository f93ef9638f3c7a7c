"""A forest audit stopped at its time limit: the best estimate, ``inaccurate``, and sound sets.

The slow shape of issue 30 in miniature (a bootstrap forest of depth 8 over numeric columns with
many values, a six-valued sensitive input, the insider's knowledge), audited with no time at all:
the solver stops before its first Newton step, after its proofs (presolve, bound propagation).
Whatever it reports as certain must be the truth, and the truth must stay possible.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

import ppdm
from ppdm.attacks.core.scope import scope_of
from ppdm.data.datasets import load_adult

COLUMNS = ["age", "fnlwgt", "education-num", "capital-gain", "hours-per-week", "workclass", "race", "sex", "relationship"]


@pytest.fixture(scope="module", params=[True, False], ids=["bootstrap", "no-bootstrap"])
def numeric_forest(request):
    """Ten trees of depth 8; with bootstrap every record is a group of its own (the forest solver),
    without the groups share joint leaves and a sensitive input goes to the general driver."""
    frame, _ = load_adult("train")
    df = frame[[*COLUMNS, "income"]].sample(600, random_state=5).reset_index(drop=True)
    X = df[COLUMNS]
    est = RandomForestClassifier(10, max_depth=8, bootstrap=request.param, max_features=0.5, random_state=5, n_jobs=1)
    est.fit(pd.get_dummies(X).astype(float), df["income"])
    return ppdm.from_estimator(est, X, df["income"]), df


@pytest.mark.parametrize("sensitive", ["sex", "relationship", "income"])
def test_a_zero_time_limit_returns_sound_sets(numeric_forest, sensitive):
    model, df = numeric_forest
    known = [c for c in [*COLUMNS, "income"] if c != sensitive]
    audit = ppdm.audit(model, df, ppdm.ThreatModel(sensitive=sensitive, known=known), time_limit=0)
    est = audit.estimate
    details = est.details
    print(sensitive, details["status"], details["max_violation"], details["face"])
    if details["status"] == "optimal":  # the proofs alone met every row
        assert details["max_violation"] <= 1e-9
    else:
        assert details["status"] == "inaccurate" and "stopped at the time limit" in details["face"]
        assert details["note"].startswith("the time limit ended the solve") and details["not_the_optimum"] in details["note"]
    truth = est.true_codes
    posterior = est.record_posterior()
    assert np.allclose(posterior.sum(axis=1), 1.0)
    assert (posterior[np.arange(len(truth)), truth] > 0).all()  # the truth is always possible
    certain = est.certain_groups[est.groups.group_of_record]
    assert (est.predicted()[certain] == truth[certain]).all()  # no certain value is wrong
    assert sum(details["possible_values"].values()) == est.groups.n_groups


def test_without_a_deadline_the_same_forest_is_optimal_and_its_certainties_proved(numeric_forest):
    model, df = numeric_forest
    known = [c for c in [*COLUMNS, "income"] if c != "relationship"]
    threat = ppdm.ThreatModel(sensitive="relationship", known=known)
    full = ppdm.audit(model, df, threat).estimate
    stopped = ppdm.audit(model, df, threat, time_limit=0).estimate
    assert full.details["status"] == "optimal"
    # what the stopped audit proves certain, the full one holds certain too
    assert not (stopped.certain_groups & ~full.certain_groups).any()


def test_the_forest_solver_reports_its_progress(numeric_forest):
    model, df = numeric_forest
    seen = []
    ppdm.audit(model, df, ppdm.ThreatModel(sensitive="income", known=COLUMNS), solver_progress=seen.append)
    assert [p.phase for p in seen[:2]] == ["bounds", "newton"]
    # the audit's 300 s less what building the problem took: the deadline covers the whole estimate
    limits = {p.time_limit for p in seen}
    assert len(limits) == 1 and 250.0 < limits.pop() < 300.0


def test_the_solve_gets_the_limit_less_the_build_and_its_share_for_the_work_after():
    from ppdm.attacks.models.explicit import ForestAuditOptions, _after_build
    from ppdm.maxent.solvers.forest_solve import ForestSolveOptions

    options = ForestAuditOptions(solve=ForestSolveOptions(time_limit=60.0), after_share=0.25, margin=0.02)
    assert _after_build(options, 20.0).solve.time_limit == pytest.approx(33.8)  # 60 - 1.2 - 20 - 5
    assert _after_build(options, 50.0).solve.time_limit == 0.0  # never negative
    assert _after_build(options, 20.0, 4.0).solve.time_limit == pytest.approx(29.8)  # and one more routing of the records
    assert _after_build(options, 20.0, 4.0, 5.0).solve.time_limit == pytest.approx(24.8)  # and the fast proof made before it
    assert _after_build(ForestAuditOptions(solve=ForestSolveOptions(time_limit=None)), 20.0).solve.time_limit is None
    with pytest.raises(ppdm.PpdmError, match="after_share"):
        ForestAuditOptions(after_share=-1)
    with pytest.raises(ppdm.PpdmError, match="margin"):
        ForestAuditOptions(margin=1.0)


def test_the_provenance_is_written_only_when_read(numeric_forest):
    model, df = numeric_forest
    est = ppdm.audit(model, df, ppdm.ThreatModel(sensitive="income", known=COLUMNS)).estimate
    assert not est.provenance.written  # the audit itself never reads it
    groups = est.to_dict()["groups"]
    assert est.provenance.written and groups[0]["provenance"].startswith("tree 0 leaf ")


def test_the_build_stops_reading_trees_at_its_deadline_and_says_so(numeric_forest):
    """With no time at all only the first tree's rows are built: the rest are named unread, the
    answer is a lower bound (the truth still possible, no wrong certainty) and the verdict does
    not judge the forest on it."""
    from ppdm.report.verdict import not_judged

    model, df = numeric_forest
    known = [c for c in [*COLUMNS, "income"] if c != "relationship"]
    est = ppdm.audit(model, df, ppdm.ThreatModel(sensitive="relationship", known=known), time_limit=0).estimate
    d = est.details
    assert d["trees_used"] == 1 and d["trees_unread"] == list(range(1, 10))
    assert "1 of 10 trees read; 9 not read (trees 1, 2," in scope_of(d).sentence()
    truth = est.true_codes
    assert (est.record_posterior()[np.arange(len(truth)), truth] > 0).all()
    certain = est.certain_groups[est.groups.group_of_record]
    assert (est.predicted()[certain] == truth[certain]).all()
    assert "1 trees read, 9 not read within the time limit" in not_judged(est.summary())


def test_the_fast_proof_runs_before_the_solve_and_its_time_comes_out_of_the_solve_s(numeric_forest):
    """Propagation needs no estimate, so it runs first: the solve's limit, as its progress reports
    it, is the audit's less the build and the proof. The LP step, which proves more with the
    estimate as its interior point, runs after over the small components only; the two passes
    prove what one pass after the solve proves."""
    from ppdm.attacks.models.estimate import hold_proved, sound_proof, with_lp
    from ppdm.maxent.constraints.forest_constraints import forest_type_problem
    from ppdm.maxent.constraints.tree_constraints import Knowledge
    from ppdm.maxent.solvers.forest_solve import solve_forest

    model, df = numeric_forest
    known = [c for c in [*COLUMNS, "income"] if c != "relationship"]
    seen = []
    audit = ppdm.audit(model, df, ppdm.ThreatModel(sensitive="relationship", known=known), time_limit=60, solver_progress=seen.append)
    steps = audit.estimate.details["sound_steps"]
    assert steps["method"] == "propagation+lp" and steps["certain_records"] > 0
    assert max(p.time_limit for p in seen) <= 60 * 0.98 - steps["propagation_seconds"]
    problem, types = forest_type_problem(model, df, known, "relationship", Knowledge(rate=True))
    estimate = solve_forest(problem, feasible=types.truth()).marginal
    first = sound_proof(types, problem, lp=False)
    two = with_lp(first, estimate)
    one = sound_proof(types, problem, estimate)
    assert first.details["method"] == "propagation" and (first.certain <= two.certain).all()
    assert (two.certain == one.certain).all()
    held, said = hold_proved(estimate, two, types.groups.counts)
    assert (held[two.certain.any(axis=1)].max(axis=1) == 1.0).all() and said["certain_groups"] == int(two.certain.any(axis=1).sum())
