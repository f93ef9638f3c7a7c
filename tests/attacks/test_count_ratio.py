"""The count-ratio attack on an incomplete pool (issue 45, deliverable 2): its score is the sum over
the trees of log((count + 1) / (candidates + 1)) read from scikit-learn's own trees, proofs rank
first and last, it lifts a bagged forest's half pool off the flat maximum-entropy belief, the
reported rates are never below it, and the Stouffer combination is the reference formula."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.ensemble import RandomForestClassifier

from ppdm.attacks.membership.audit import membership_attack
from ppdm.attacks.membership.count_ratio import count_ratio_scores, stouffer
from ppdm.metrics.membership import membership_metrics
from ppdm.tree import forest_from_sklearn


def _half_pool(frame: pd.DataFrame, inputs: list[str], klass: str, trees: int, seed: int):
    """A bagged forest fitted on a random half, and a pool of half its members and every non-member."""
    rng = np.random.default_rng(seed)
    member = rng.random(len(frame)) < 0.5
    D = pd.get_dummies(frame[inputs]).astype(float)
    labels = frame[klass].astype(str)
    est = RandomForestClassifier(trees, min_samples_leaf=1, random_state=seed).fit(D[member], labels[member])
    train = frame.loc[member, inputs].reset_index(drop=True)
    forest = forest_from_sklearn(est, train, y=labels[member].reset_index(drop=True).rename(klass))
    keep = ~member | (rng.random(len(frame)) < 0.5)
    pool = frame[keep].assign(**{klass: labels[keep]}).reset_index(drop=True)
    return est, forest, pool, D[keep].reset_index(drop=True), member[keep]


def _reference_scores(est: RandomForestClassifier, D: pd.DataFrame, codes: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Σ_t log((c + 1) / (R + 1)) from scikit-learn's trees: c the bootstrap draws of the candidate's
    class in its leaf (``weighted_n_node_samples`` times the class share), R the candidates there
    but the proved non-members ``out``."""
    score = np.zeros(len(D))
    for tree in est.estimators_:
        leaf = tree.apply(D.to_numpy())
        value = tree.tree_.value[:, 0, :]
        share = value / value.sum(axis=1, keepdims=True)
        draws = np.round(share * tree.tree_.weighted_n_node_samples[:, None])
        count = draws[leaf, codes]
        cell = leaf * len(est.classes_) + codes
        _, back = np.unique(cell, return_inverse=True)
        reach = np.bincount(back, weights=(~out).astype(float))
        score += np.log((count + 1) / (reach[back] + 1))
    return score


@pytest.mark.parametrize("seed", [0, 1])
def test_the_score_is_the_log_count_ratio_read_from_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n = 300
    frame = pd.DataFrame({"a": rng.integers(0, 6, n).astype(float), "b": rng.integers(0, 4, n).astype(float), "y": rng.choice(["n", "p"], n)})
    est, forest, pool, D, truth = _half_pool(frame, ["a", "b"], "y", 8, seed)
    result = membership_attack(forest, pool, truth=truth, complete=False)
    codes = np.searchsorted(est.classes_, pool["y"].to_numpy())
    undecided = result.state < 0
    assert undecided.sum() > 0.8 * len(pool)
    np.testing.assert_allclose(result.count_ratio[undecided], _reference_scores(est, D, codes, result.state == 0)[undecided], rtol=0, atol=1e-9)


def test_proved_candidates_rank_above_and_below_everyone():
    _, forest, pool, _, truth = _half_pool(*_random_table(seed=4), trees=40, seed=4)
    result = membership_attack(forest, pool, truth=truth, complete=False)
    score, state = result.count_ratio, result.state
    assert (state == 0).any()  # drawn by too few trees (the forest's draws)
    assert score[state == 0].max() < score[state < 0].min()
    forced = count_ratio_scores(result.rows, np.where(np.arange(len(state)) == 0, 1, state))
    assert forced[0] > np.delete(forced, 0).max()


def _random_table(seed: int, n: int = 200):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.integers(0, 6, n).astype(float), "b": rng.integers(0, 4, n).astype(float), "y": rng.choice(["n", "p"], n)})
    return frame, ["a", "b"], "y"


def test_a_half_pool_of_a_bagged_forest_is_no_longer_flat(adult_train):
    """Half the members of a 100-tree forest over 4,000 Adult rows: the maximum-entropy belief
    under upper bounds alone barely ranks the candidates, the count ratio does (AUC 0.500 before,
    on every bagged forest of ``bench_membership.py --blackbox``), and the reported rates are the
    stronger's, named."""
    frame, roles = adult_train
    sample = frame.sample(4000, random_state=0).reset_index(drop=True)
    inputs = ["age", "education", "marital-status", "occupation", "sex", "hours-per-week"]
    _, forest, pool, _, truth = _half_pool(sample, inputs, roles.class_attribute, 100, 0)
    result = membership_attack(forest, pool, truth=truth, complete=False)
    s = result.summary()
    rows = {r["attack"]: r for r in s["attacks"]}
    assert set(rows) == {"ppdm", "count-ratio"}
    assert rows["count-ratio"]["auc"] > 0.7 and rows["count-ratio"]["auc"] > rows["ppdm"]["auc"] + 0.1
    for key in ("auc", "tpr@0.1%", "tpr@1%"):
        assert s[key] == max(r[key] for r in rows.values())
    assert s["reached_by"]["auc"] == "count-ratio" and s["wrong_proved_members"] == s["wrong_proved_non_members"] == 0
    assert "count-ratio" in str(result)


def test_a_complete_pool_has_no_count_ratio_row(adult_small):
    sample, X, D, y = adult_small
    member = np.random.default_rng(0).random(len(sample)) < 0.5
    est = RandomForestClassifier(10, random_state=0).fit(D[member], y[member])
    forest = forest_from_sklearn(est, X[member].reset_index(drop=True), y=y[member].reset_index(drop=True))
    result = membership_attack(forest, sample.assign(member=member), truth="member")
    assert result.count_ratio is None and "count-ratio" not in result.scores()


def test_stouffer_is_the_sum_of_normal_scores_by_rank():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=50), rng.exponential(size=50)
    ref = [norm.ppf((np.sum(a < a[i]) + 1 - 0.5) / 50) + norm.ppf((np.sum(b < b[i]) + 1 - 0.5) / 50) for i in range(50)]
    np.testing.assert_allclose(stouffer(a, b), ref)
    np.testing.assert_allclose(stouffer(np.exp(a), 10 * b - 3), ref)  # only the ranks count
    truth = a + b > 1
    assert membership_metrics(truth, stouffer(a, b))["auc"] > max(membership_metrics(truth, a)["auc"], membership_metrics(truth, b)["auc"])


def test_the_release_record_says_the_pool_held_some_members_only():
    import ppdm

    frame, inputs, klass = _random_table(seed=2, n=300)
    est, _, pool, _, truth = _half_pool(frame, inputs, klass, 10, 2)
    sample = ppdm.audit(est, membership=pool.assign(member=truth), sample=True, blackbox=False, progress=False)
    said = sample.release_record()["threat_model"]["description"]
    assert "some of the training records among them only" in said
    assert "count-ratio" in {r["attack"] for r in sample.membership.summary()["attacks"]}


def test_a_sample_pool_s_riskiest_leaves_are_ranked_by_count_per_candidate():
    """On half the members the estimate's P(member) is flat, so a lift over the share made every
    leaf '1.30×' and ranked them by size (a new user's trial); the table now shows each cell's
    published count, not the bounds '0–703', ranked by that count per candidate reaching it."""
    from ppdm.report.membership import riskiest_leaves
    from ppdm.report.membership_html import _cells_kind

    frame, inputs, klass = _random_table(seed=5, n=400)
    _, forest, pool, _, truth = _half_pool(frame, inputs, klass, 20, 5)
    result = membership_attack(forest, pool, truth=truth, complete=False)
    rows = riskiest_leaves(result, forest, 15)
    ratios = [r["per_candidate"] for r in rows if not r["proves_members"]]
    assert ratios == sorted(ratios, reverse=True) and ratios[0] > 1
    assert all("–" not in r["count"] and r["lift"] is None for r in rows)
    assert _cells_kind({"leaves": rows}) == "sample"
