"""The maximum-entropy audit under general threat models: the truth is feasible, an independent
solver agrees, and paper 000's setting is the special case u = class."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.attacks.core.threat import ThreatModel, load_threat, threat_from_dict
from ppdm.attacks.models.maxent import audit_problem, maxent_attack
from ppdm.data.datasets import load_adult, load_bank_loan, load_nursery
from ppdm.errors import DataError, MaxEntError, PpdmError
from ppdm.learn import C45Classifier, ID3Classifier
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.table.attacker_types import attacker_types
from ppdm.maxent.table.unknowns import attacker_table

from oracles import sklearn_tree

BANK_LOAN = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"

PUBLISH = ["class-counts", "error-rates", "labels"]


def truth_violation(tree, data, threat, knowledge=Knowledge()):
    """Largest violation (in records) of any row built, by the table's own joint distribution."""
    audit = audit_problem(tree, data, threat.resolve(data, tree.class_attribute), knowledge, check=False, factored=False)
    table = audit.table
    p = table.truth() / table.groups.weights[:, None]
    return float(audit.problem.violations(p).max(initial=0.0)), audit


def settings_for(frame: pd.DataFrame, class_attribute: str, sensitive_inputs: list[str], known: list[str]):
    """(threat model, knowledge) pairs: class or input sensitive, class known or not, SA or not."""
    out = []
    for sa in (False, True):
        out.append(ThreatModel(sensitive=class_attribute, known=tuple(known), sa_published=sa))
        for s in sensitive_inputs:
            rest = tuple(c for c in known if c != s)
            out.append(ThreatModel(sensitive=s, known=rest, sa_published=sa))
            out.append(ThreatModel(sensitive=s, known=(*rest, class_attribute), sa_published=sa))
    return out


# -- the truth is feasible, on the real tables ----------------------------------------------------


@pytest.fixture(scope="module")
def adult_small():
    frame, roles = load_adult("train")
    return frame.sample(3000, random_state=1).reset_index(drop=True), roles


@pytest.mark.parametrize("publish", PUBLISH)
def test_truth_satisfies_every_row_on_adult(adult_small, publish):
    frame, roles = adult_small
    features = ["age", "sex", "race", "marital-status", "relationship", "hours-per-week", "education"]
    tree = C45Classifier(max_depth=4).fit(frame[features], frame["income"]).tree_
    tree.class_attribute = "income"
    tree = tree.published(publish)
    known = ["age", "sex", "race", "relationship"]
    for threat in settings_for(frame, "income", ["marital-status", "sex"], known):
        worst, audit = truth_violation(tree, frame, threat, Knowledge(sa=threat.sa_published))
        assert worst <= 1e-9, (threat, worst)
        assert audit.problem.n_variables == audit.table.groups.n_groups * audit.table.n_slots


@pytest.mark.parametrize("publish", ["class-counts", "error-rates"])
def test_truth_satisfies_every_row_on_a_sklearn_tree_of_adult(adult_small, publish):
    frame, _ = adult_small
    features = ["age", "sex", "race", "marital-status", "hours-per-week", "capital-gain"]
    tree = sklearn_tree(frame, features, "income", 6).published(publish)
    for threat in settings_for(frame, "income", ["marital-status", "race"], ["age", "sex", "race"]):
        worst, _ = truth_violation(tree, frame, threat, Knowledge(sa=threat.sa_published))
        assert worst <= 1e-9, (threat, worst)


@pytest.mark.parametrize("publish", PUBLISH)
def test_truth_satisfies_every_row_on_nursery(publish):
    frame, roles = load_nursery()
    tree = ID3Classifier(max_depth=3).fit(frame.drop(columns="class"), frame["class"]).tree_
    tree.class_attribute = "class"
    tree = tree.published(publish)
    for threat in settings_for(frame, "class", ["health", "finance"], ["parents", "has_nurs", "health", "finance"]):
        worst, _ = truth_violation(tree, frame, threat, Knowledge(sa=threat.sa_published))
        assert worst <= 1e-9, (threat, worst)


@pytest.mark.skipif(not BANK_LOAN.is_file(), reason="Bank_Personal_Loan_Modelling.csv not beside the repository (../shared/datasets/bank_loan, optional)")
@pytest.mark.parametrize("publish", PUBLISH)
def test_truth_satisfies_every_row_on_bank_loan(publish):
    frame, roles = load_bank_loan(BANK_LOAN)
    target = roles.class_attribute
    features = ["Age", "Income", "Family", "Education", "CD Account", "Online"]
    tree = sklearn_tree(frame, features, target, 5).published(publish)
    for threat in settings_for(frame, target, ["Education", "Family"], ["Age", "Family", "Online"]):
        worst, _ = truth_violation(tree, frame, threat, Knowledge(sa=threat.sa_published))
        assert worst <= 1e-9, (threat, worst)


@st.composite
def random_tables(draw):
    n = draw(st.integers(8, 40))
    n_cols = draw(st.integers(2, 4))
    cols = {}
    for j in range(n_cols):
        if draw(st.booleans()):
            k = draw(st.integers(2, 3))
            cols[f"c{j}"] = pd.Categorical(draw(st.lists(st.sampled_from(list("abc"[:k])), min_size=n, max_size=n)), categories=list("abc"[:k]))
        else:
            cols[f"c{j}"] = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    cols["y"] = pd.Categorical(draw(st.lists(st.sampled_from(["n", "p"]), min_size=n, max_size=n)), categories=["n", "p"])
    frame = pd.DataFrame(cols)
    known = draw(st.lists(st.sampled_from(list(frame.columns)), unique=True, max_size=n_cols))
    sensitive = draw(st.sampled_from([c for c in frame.columns if c not in known] or ["y"]))
    publish = draw(st.sampled_from(PUBLISH))
    sa = draw(st.booleans())
    depth = draw(st.integers(1, 3))
    return frame, [k for k in known if k != sensitive], sensitive, publish, sa, depth


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables())
def test_truth_is_feasible_on_random_tables(case):
    frame, known, sensitive, publish, sa, depth = case
    features = [c for c in frame.columns if c != "y"]
    tree = sklearn_tree(frame, features, "y", depth) if depth % 2 else C45Classifier(max_depth=depth).fit(frame[features], frame["y"]).tree_
    tree.class_attribute = "y"
    threat = ThreatModel(sensitive=sensitive, known=tuple(known), sa_published=sa)
    try:
        worst, _ = truth_violation(tree.published(publish), frame, threat, Knowledge(sa=sa))
    except DataError:  # a numeric sensitive column the tree does not cut is refused clearly
        assert sensitive != "y"
        return
    assert worst <= 1e-9


# -- an independent solver agrees -------------------------------------------------------------------


def cvxpy_estimate(audit) -> np.ndarray:
    """Maximum entropy over the cells u (slots weighted by their base measure), by cvxpy + Clarabel."""
    cp = pytest.importorskip("cvxpy")
    problem = audit.problem
    A, b, le, _ = problem.stacked()
    G, K = problem.n_groups, problem.n_values
    w = problem.weights
    log_base = np.zeros((G, K)) if problem.log_base is None else problem.log_base
    possible = np.isfinite(log_base).ravel()
    P = cp.Variable(G * K, nonneg=True)  # the joint P(q, slot); H(Q, U) = H(Q) + H(U | Q), H(Q) fixed
    cons = [cp.reshape(P, (G, K), order="C").sum(axis=1) == w, P[np.flatnonzero(~possible)] == 0] if (~possible).any() else [cp.reshape(P, (G, K), order="C").sum(axis=1) == w]
    if (~le).any():
        cons.append(A[~le] @ P == b[~le])
    if le.any():
        cons.append(A[le] @ P <= b[le])
    idx = np.flatnonzero(possible)
    objective = cp.sum(cp.entr(P[idx])) + cp.sum(cp.multiply(P[idx], log_base.ravel()[idx]))
    cp.Problem(cp.Maximize(objective), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    joint = np.maximum(np.asarray(P.value).reshape(G, K), 0)
    return joint / joint.sum(axis=1, keepdims=True)


def _agree(tree, frame, threat, knowledge=Knowledge()):
    resolved = threat.resolve(frame, tree.class_attribute)
    audit = audit_problem(tree, frame, resolved, knowledge, factored=False)
    reference = audit.table.sensitive_marginal(cvxpy_estimate(audit))
    ours = maxent_attack(tree, frame, threat=threat, knowledge=knowledge)
    assert np.abs(ours.posterior - reference).max() <= 1e-5


@pytest.fixture(scope="module")
def nursery_small():
    frame, _ = load_nursery()
    frame = frame.sample(400, random_state=3).reset_index(drop=True)
    tree = ID3Classifier(max_depth=2).fit(frame.drop(columns="class"), frame["class"]).tree_
    tree.class_attribute = "class"
    return frame, tree


@pytest.mark.parametrize("publish", PUBLISH[:2])
@pytest.mark.parametrize(
    "spec",
    [
        {"sensitive": "class", "known": ["parents", "has_nurs"]},  # a split attribute unknown
        {"sensitive": "health", "known": ["parents", "has_nurs"]},  # a sensitive input, class unknown
        {"sensitive": "health", "known": ["parents", "has_nurs", "class"]},  # class known
        {"sensitive": "health", "known": ["parents", "class"], "sa_published": True},
    ],
)
def test_cvxpy_agrees_on_small_nursery_instances(nursery_small, publish, spec):
    frame, tree = nursery_small
    threat = threat_from_dict(spec)
    _agree(tree.published(publish), frame, threat, Knowledge(sa=threat.sa_published))


def test_cvxpy_agrees_with_known_individuals(nursery_small):
    frame, tree = nursery_small
    threat = ThreatModel(sensitive="health", known=("parents", "class"), known_individuals=(0, 5, 9))
    _agree(tree, frame, threat)


# -- behaviour ------------------------------------------------------------------------------------------


def test_paper_setting_is_the_special_case(adult_small):
    frame, roles = adult_small
    qi = ["race", "sex", "marital-status", "relationship"]
    tree = ID3Classifier(max_depth=3).fit(frame[qi], frame["income"]).tree_
    tree.class_attribute = "income"
    paper = maxent_attack(tree.published("error-rates"), frame, ThreatModel(known=qi))
    declared = maxent_attack(tree.published("error-rates"), frame, threat=ThreatModel(sensitive="income", known=tuple(qi)))
    assert paper.details["unknowns"] == "income (2)"
    assert np.array_equal(paper.posterior, declared.posterior)


def test_an_unknown_split_attribute_becomes_an_unknown(d2):
    tree = ID3Classifier(min_samples_split=3).fit(d2[["Age", "Education"]], d2["Salary"]).tree_
    tree.class_attribute = "Salary"
    result = maxent_attack(tree.published("error-rates"), d2, ThreatModel(known=["Education"]))
    assert result.details["unknowns"] == "Salary (2) × Age (3)"
    assert result.details["max_violation"] <= 1e-9
    assert np.allclose(result.posterior.sum(axis=1), 1.0)
    # the attacker who knows Age (paper 000 Example 1) is certain about 4 people, this one of nobody
    assert result.summary()["certain_records"] == 0


def test_numeric_unknowns_are_the_tree_intervals(adult_small):
    frame, _ = adult_small
    tree = sklearn_tree(frame, ["age", "hours-per-week", "sex"], "income", 3)
    table = attacker_table(tree, frame, ["sex"], "income")
    names = [c.name for c in table.domain.components]
    assert names == ["income", "age", "hours-per-week"] or names == ["income", "hours-per-week", "age"]
    age = next(c for c in table.domain.components if c.name == "age")
    assert age.size == len(age.thresholds) + 1
    # every record's slot is the leaf its own values reach, with its class
    g, s = table.groups.group_of_record, table.true_slot
    assert np.array_equal(table.leaf[g, s], tree.apply(frame))
    assert np.array_equal(table.klass[g, s], pd.Index(tree.classes).get_indexer(frame["income"]))
    # a slot holds as many cells as its leaf's path allows of the unknown split attributes
    cells = np.exp(table.log_base[table.valid]).round().astype(int)
    assert cells.min() >= 1 and cells.max() <= age.size * next(c.size for c in table.domain.components if c.name == "hours-per-week")


def test_slots_agree_with_enumerating_every_cell(adult_small):
    """Reference: enumerate every cell u of every group, route it, and count cells per slot."""
    import itertools

    frame, _ = adult_small
    frame = frame.head(300)
    tree = sklearn_tree(frame, ["age", "hours-per-week", "sex", "race"], "income", 4)
    table = attacker_table(tree, frame, ["sex"], "race")
    comps = table.domain.components
    reps = []
    for c in comps:
        if c.is_numeric:
            t = c.thresholds
            reps.append(list(t) + [t[-1] + 1] if len(t) else [0.0])
        else:
            reps.append(list(c.cells))
    classes = list(tree.classes)
    for g in range(table.groups.n_groups):
        counted: dict[tuple, int] = {}
        for combo in itertools.product(*reps):
            row = dict(zip([c.name for c in comps], combo))
            row["sex"] = table.groups.table["sex"].iloc[g]
            leaf = int(tree.apply(pd.DataFrame([row]).astype({"sex": frame["sex"].dtype}))[0])
            key = (leaf, classes.index(row["income"]), list(comps[0].cells).index(row["race"]))
            counted[key] = counted.get(key, 0) + 1
        ours = {
            (int(table.leaf[g, j]), int(table.klass[g, j]), int(table.sens[g, j])): int(round(np.exp(table.log_base[g, j])))
            for j in np.flatnonzero(table.valid[g])
        }
        assert ours == counted


def test_too_many_unknowns_are_refused_before_allocating(adult_small):
    import ppdm
    from ppdm.maxent.table.unknowns import TableOptions
    from ppdm.pipeline.options import AuditOptions

    frame, _ = adult_small
    tree = sklearn_tree(frame, ["age", "hours-per-week", "education"], "income", 8)
    small = TableOptions(max_variables=10)
    with pytest.raises(MaxEntError, match=r"\(at most 10\): coarsen 'age'|\(at most 10\): coarsen 'hours-per-week'|\(at most 10\): coarsen 'education'"):
        attacker_table(tree, frame, ["sex"], "income", options=small)
    with pytest.raises(MaxEntError, match="coarsen 'age'|coarsen 'hours-per-week'|coarsen 'education'"):
        attacker_types(tree, frame, ["sex"], "income", options=small)  # the factored form stops too
    with pytest.raises(MaxEntError, match="known-value groups make"):
        maxent_attack(tree, frame, threat=ThreatModel(sensitive="income", known=("sex",)), table_options=small)
    with pytest.raises(MaxEntError, match="known-value groups make"):
        ppdm.audit(tree, frame, ThreatModel(sensitive="income", known=("sex",)), options=AuditOptions(table=small))  # set where a user sets it
    attacker_types(tree, frame, ["sex"], "income")  # the default admits it


def test_a_table_that_contradicts_the_counts_is_refused(adult_small):
    frame, _ = adult_small
    qi = ["race", "sex"]
    tree = ID3Classifier(max_depth=2).fit(frame[qi], frame["income"]).tree_
    tree.class_attribute = "income"
    changed = frame.copy()
    changed.loc[changed["income"] == "<=50K", "income"] = ">50K"
    with pytest.raises(DataError, match="contradicts"):
        maxent_attack(tree, changed, ThreatModel(known=qi))


def test_known_individuals_are_not_targets_and_are_certain(nursery_small):
    frame, tree = nursery_small
    threat = ThreatModel(sensitive="health", known=("parents", "class"), known_individuals=(0, 1))
    result = maxent_attack(tree, frame, threat=threat)
    assert not result.targets[[0, 1]].any() and result.targets[2:].all()
    truth = result.true_codes[[0, 1]]
    assert np.allclose(result.record_posterior()[[0, 1], truth], 1.0)


def test_auditing_more_than_published_is_refused(nursery_small):
    frame, tree = nursery_small
    with pytest.raises(PpdmError, match="publishes labels only"):
        maxent_attack(tree.published("labels"), frame, threat=ThreatModel(sensitive="class", known=("parents",), publish="class-counts"))


def test_presets_resolve_on_adult(adult_small):
    frame, _ = adult_small
    census = ThreatModel(sensitive="marital-status", preset="census").resolve(frame, "income")
    assert set(census.known) == {"age", "sex", "race", "native-country", "education"}
    assert not census.class_known
    insider = ThreatModel(sensitive="sex", preset="insider").resolve(frame, "income")
    assert "income" in insider.known and "sex" not in insider.known and insider.class_known
    assert "class known" in insider.describe()


def test_threat_file(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("preset: census\nsensitive: marital-status\nsa_published: true\nknown_individuals: [3]\n")
    threat = load_threat(path)
    assert threat.preset == "census" and threat.sa_published and threat.known_individuals == (3,)
    path.write_text("sensitve: sex\n")
    with pytest.raises(PpdmError, match="unknown key 'sensitve'"):
        load_threat(path)
    path.write_text("sa_published: yes-please\n")
    with pytest.raises(PpdmError, match="sa_published"):
        load_threat(path)
