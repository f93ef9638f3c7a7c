"""The membership audit (issue 27): no proof is ever wrong (every model family), the proofs are
the brute-force backbone on tiny instances, and the estimate is the brute-force maximum-entropy
distribution's marginals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from ppdm.attacks.membership.audit import MembershipOptions, membership_attack
from ppdm.errors import DataError
from ppdm.exact.membership import ProofOptions
from ppdm.maxent.constraints.membership_rows import membership_rows
from ppdm.tree import forest_from_sklearn, tree_from_sklearn

from families import FAMILIES
from oracles import brute_force_membership_maxent, feasible_memberships


def _split(table, seed: int = 0, share: float = 0.5) -> np.ndarray:
    return np.random.default_rng(seed).random(len(table[0])) < share


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("which", ["adult_small", "nursery_small"])
def test_no_proof_is_wrong(family, which, request):
    sample, X, D, y = request.getfixturevalue(which)
    member = _split((sample,), seed=3)
    model = FAMILIES[family](X[member].reset_index(drop=True), D[member].reset_index(drop=True), y[member].reset_index(drop=True))
    population = sample.assign(member=member)
    result = membership_attack(model, population, truth="member", options=MembershipOptions(proof=ProofOptions(time_limit=10)))
    s = result.summary()
    assert s["wrong_proved_members"] == 0 and s["wrong_proved_non_members"] == 0
    # the truth meets every row (habit 1), and the estimate is never below the prior's guess
    assert result.rows.truth_violations(member).size == 0
    assert s["auc"] >= 0.5 - 0.05
    assert s["members"] == member.sum()


def _tiny(seed: int, n: int = 12) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.integers(0, 3, n).astype(float), "b": rng.integers(0, 2, n).astype(float), "y": rng.choice(["n", "p"], n)})
    member = np.zeros(n, dtype=bool)
    member[rng.choice(n, n // 2, replace=False)] = True
    return frame, member


def _tiny_models(frame: pd.DataFrame, member: np.ndarray):
    train = frame[member].reset_index(drop=True)
    X, y = train[["a", "b"]], train["y"]
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    yield "tree", tree_from_sklearn(tree, train, ["a", "b"], y=y)
    for bootstrap in (False, True):
        forest = RandomForestClassifier(3, max_depth=2, bootstrap=bootstrap, max_features=1, random_state=1).fit(X, y)
        yield f"forest-bootstrap-{bootstrap}", forest_from_sklearn(forest, train, ["a", "b"], y=y)


@pytest.mark.parametrize("seed", range(4))
def test_proofs_are_the_brute_force_backbone(seed):
    frame, member = _tiny(seed)
    population = frame.assign(member=member)
    for name, model in _tiny_models(frame, member):
        result = membership_attack(model, population, truth="member")
        feasible = feasible_memberships(result.rows)
        assert len(feasible), name
        assert (feasible == member).all(axis=1).any(), name  # the truth is among them
        always = feasible.min(axis=0) == 1
        never = feasible.max(axis=0) == 0
        assert result.details["proof_settled"], name
        np.testing.assert_array_equal(result.state == 1, always, err_msg=name)
        np.testing.assert_array_equal(result.state == 0, never, err_msg=name)


@pytest.mark.parametrize("seed", range(3))
def test_estimate_is_the_brute_force_maxent(seed):
    frame, member = _tiny(seed, n=9)
    population = frame.assign(member=member)
    for name, model in _tiny_models(frame, member):
        if name.endswith("True"):
            continue  # bagged trees add soft rows: a different objective, checked for soundness above
        result = membership_attack(model, population, truth="member")
        expected = brute_force_membership_maxent(result.rows, result.state)
        np.testing.assert_allclose(result.probability, expected, atol=2e-3, err_msg=name)


def test_leaf_of_count_zero_and_full_leaf_prove():
    """A leaf whose class count equals the candidates reaching it proves each a member; count 0 proves non-members."""
    train = pd.DataFrame({"a": [0.0, 0.0, 1.0, 1.0], "y": ["n", "n", "p", "p"]})
    tree = tree_from_sklearn(DecisionTreeClassifier(random_state=0).fit(train[["a"]], train["y"]), train, ["a"], y=train["y"])
    population = pd.DataFrame({"a": [0.0, 0.0, 1.0, 1.0, 1.0, 0.0], "y": ["n", "n", "p", "p", "p", "p"]})
    result = membership_attack(tree, population, truth=np.array([1, 1, 1, 1, 0, 0], dtype=bool))
    assert list(result.state) == [1, 1, -1, -1, -1, 0]
    np.testing.assert_allclose(result.probability[2:5], 2 / 3, atol=1e-4)


def test_refusals_name_the_column():
    train = pd.DataFrame({"a": [0.0, 1.0], "y": ["n", "p"]})
    tree = tree_from_sklearn(DecisionTreeClassifier().fit(train[["a"]], train["y"]), train, ["a"], y=train["y"])
    with pytest.raises(DataError, match="lacks column 'a'"):
        membership_attack(tree, pd.DataFrame({"y": ["n"]}))
    with pytest.raises(DataError, match="'a', row 1: missing"):
        membership_attack(tree, pd.DataFrame({"a": [0.0, None], "y": ["n", "p"]}))
    with pytest.raises(DataError, match="population does not hold every training record"):
        membership_attack(tree, pd.DataFrame({"a": [0.0], "y": ["n"]}))
    with pytest.raises(DataError, match="column 'm', row 0"):
        membership_attack(tree, train.assign(m=["maybe", "yes"]), truth="m")
    incomplete = membership_attack(tree, pd.DataFrame({"a": [0.0, 0.0], "y": ["n", "p"]}), complete=False)
    assert list(incomplete.state) == [-1, 0]


def test_class_unknown_uses_leaf_totals():
    train = pd.DataFrame({"a": [0.0, 0.0, 1.0], "y": ["n", "p", "p"]})
    tree = tree_from_sklearn(DecisionTreeClassifier(max_depth=1).fit(train[["a"]], train["y"]), train, ["a"], y=train["y"])
    rows = membership_rows(tree, pd.DataFrame({"a": [0.0, 0.0, 1.0, 1.0]}), class_known=False)
    assert set(rows.cell[:-1]) == {-1}


def test_the_bagging_note_does_not_claim_a_vacuous_bound():
    """With few bagged trees some training row is drawn by none of them: the note said "every
    member was drawn by at least 0 of them"; it now says that some were drawn by none."""
    rng = np.random.default_rng(3)
    train = pd.DataFrame({"a": rng.integers(0, 4, 200).astype(float), "y": rng.choice(["n", "p"], 200)})
    est = RandomForestClassifier(2, max_depth=2, random_state=0).fit(train[["a"]], train["y"])
    forest = forest_from_sklearn(est, train, ["a"], y=train["y"])
    assert min(np.sum([m > 0 for m in forest.multiplicities], axis=0)) == 0  # a row no tree drew
    note = membership_attack(forest, train).details["note"]
    assert "at least 0" not in note and "drawn by none of them" in note


def test_the_forests_draws_bound_members_whatever_the_pool_holds():
    """Every member was drawn by at least k bagged trees, a property of the forest's draws, not of
    the pool: on a pool holding half the members the note says so (it said "some members were
    drawn by none of them", false, and read nothing from the draws), and a candidate with a
    positive count in fewer than k trees is proved a non-member, never wrongly."""
    proved = 0
    for seed in range(3):
        rng = np.random.default_rng(seed)
        n = 160
        frame = pd.DataFrame({"a": rng.integers(0, 6, n).astype(float), "b": rng.integers(0, 4, n).astype(float), "y": rng.choice(["n", "p"], n)})
        member = rng.random(n) < 0.5
        train = frame[member].reset_index(drop=True)
        est = RandomForestClassifier(40, max_depth=4, random_state=seed).fit(train[["a", "b"]], train["y"])
        forest = forest_from_sklearn(est, train, ["a", "b"], y=train["y"])
        k = int(min(np.sum([m > 0 for m in forest.multiplicities], axis=0)))
        keep = ~member | (rng.random(n) < 0.5)
        pool, truth = frame[keep].reset_index(drop=True), member[keep]
        result = membership_attack(forest, pool, truth=truth, complete=False)
        assert k > 0 and f"every member was drawn by at least {k} of them" in result.details["note"]
        drawn_too_few = result.rows.positive_trees < k
        assert (result.state[drawn_too_few] == 0).all() and not (drawn_too_few & truth).any()
        assert not ((result.state == 0) & truth).any() and not ((result.state == 1) & ~truth).any()
        proved += int(drawn_too_few.sum())
    assert proved > 0  # 5 candidates over the three seeds


def test_a_bagged_forest_s_estimate_converges(nursery):
    """Each tree's rows are solved exactly in every sweep (bagged trees' soft rows need more
    Newton steps than hard ones), so iterative scaling over a bagged forest converges: on 3,000
    Nursery candidates and 10 bagged trees it ran its 500 sweeps and stopped 0.03 records off."""
    frame, roles = nursery
    sample = frame.sample(3000, random_state=0).reset_index(drop=True)
    member = _split((sample,), seed=1)
    inputs = [c for c in sample.columns if c != roles.class_attribute]
    D = pd.get_dummies(sample[inputs]).astype(float)
    labels = sample[roles.class_attribute].astype(str)
    est = RandomForestClassifier(10, max_depth=6, random_state=0).fit(D[member], labels[member])
    forest = forest_from_sklearn(est, sample.loc[member, inputs].reset_index(drop=True), y=labels[member].reset_index(drop=True).rename(roles.class_attribute))
    result = membership_attack(forest, sample.assign(**{roles.class_attribute: labels}), truth=member)
    assert result.details["estimate_converged"] and result.details["estimate_iterations"] < 500, result.details
    assert "note" not in result.details or "short of its tolerance" not in result.details["note"]


def test_a_relaxation_past_the_deadline_is_stopped_and_the_proof_says_unsettled(monkeypatch):
    """HiGHS checks its time limit between iterations only: a large relaxation runs in a child
    stopped at the deadline. Here every relaxation goes to the child, which never answers in time
    (it sleeps past the budget); the audit stops and says the proof is not settled."""
    import time

    import ppdm.exact.membership as proofs

    real, asked = proofs._linprog_within, []

    def slow(**problem):
        time.sleep(60)  # a relaxation ignoring its time limit
        return proofs.linprog(**problem)

    def spied(problem, seconds):
        x = real(problem, seconds)
        asked.append((seconds, x))
        return x

    monkeypatch.setattr(proofs, "FORK_ENTRIES", 0)
    monkeypatch.setattr(proofs, "_linprog_x", lambda problem: slow(**problem))
    monkeypatch.setattr(proofs, "_linprog_within", spied)
    for seed in range(8):
        frame, member = _tiny(seed, n=40)
        model = next(_tiny_models(frame, member))[1]
        options = MembershipOptions(proof=ProofOptions(time_limit=0.5, search=False))
        result = membership_attack(model, frame.assign(member=member), truth="member", options=options)
        if asked:
            break
    assert asked and all(seconds <= 0.5 and x is None for seconds, x in asked)  # stopped at the deadline, no answer waited for
    assert not result.details["proof_settled"]


@pytest.mark.parametrize("seed", range(4))
def test_an_incomplete_pool_with_known_non_members_proves_nothing_wrong(seed):
    """Half the members and every non-member in the pool, half the non-members known to the
    attacker: on every family the known ones stay non-members, no proof is wrong, the truth is feasible."""
    frame, member = _tiny(seed, n=24)
    rng = np.random.default_rng(seed)
    keep = ~member | (rng.random(len(member)) < 0.5)
    pool, truth = frame[keep].reset_index(drop=True), member[keep]
    known = ~truth & (rng.random(len(truth)) < 0.5)
    for name, model in _tiny_models(frame, member):
        result = membership_attack(model, pool, truth=truth, complete=False, non_members=known)
        assert (result.state[known] == 0).all(), name
        assert not ((result.state == 1) & ~truth).any() and not ((result.state == 0) & truth).any(), name
        assert result.rows.truth_violations(truth).size == 0, name
        assert not (result.state == 1).any(), name  # upper bounds alone never prove a member
    with pytest.raises(DataError, match="known non-member"):
        membership_attack(model, pool, truth=truth, complete=False, non_members=known | truth)


@pytest.mark.parametrize("seed", range(4))
def test_an_incomplete_pool_is_settled_by_propagation_alone_as_the_brute_force_backbone(seed):
    """On a pool holding half the members, every count is an upper bound: leaving every candidate
    out is consistent, and so is any one candidate alone that fits its rows. Propagation then
    decides all a search could, and the proof says it is settled with no search and no time
    budget (it once spent its whole 30 s in integer programmes that could prove nothing more)."""
    frame, member = _tiny(seed, n=24)
    keep = ~member | (np.random.default_rng(seed).random(len(member)) < 0.5)
    pool, truth = frame[keep].reset_index(drop=True), member[keep]
    for name, model in _tiny_models(frame, member):
        result = membership_attack(model, pool, truth=truth, complete=False, options=MembershipOptions(proof=ProofOptions(time_limit=0.0, search=False)))
        feasible = feasible_memberships(result.rows)
        assert result.details["proof_settled"], name
        np.testing.assert_array_equal(result.state == 1, feasible.min(axis=0) == 1, err_msg=name)
        np.testing.assert_array_equal(result.state == 0, feasible.max(axis=0) == 0, err_msg=name)


def test_a_sample_pool_smaller_than_the_training_set_states_its_share_as_a_bound():
    """Without the truth, a sample pool's member share is not known: the baseline says at most
    min(1, published / candidates), never a share above 1 (12 members published, a pool of 8)."""
    frame, member = _tiny(3, n=24)
    _, tree = next(_tiny_models(frame, member))
    pool = frame.iloc[:8].reset_index(drop=True)
    result = membership_attack(tree, pool, complete=False, options=MembershipOptions(estimate=False))
    assert result.summary()["baseline_member_share"] == 1.0 and (result.probability <= 1.0).all()
    assert "baseline (no model): member share at most 1.000 (how many of the pool are members is not known), AUC 0.500, TPR = FPR" in result.lines()
    complete = membership_attack(tree, frame)
    assert f"baseline (no model): member share {12 / 24:.3f}, AUC 0.500, TPR = FPR" in complete.lines()
