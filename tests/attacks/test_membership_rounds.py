"""Every boosting round read by the membership audit (issue 45): each round's leaf values and
covers are rows over the membership bits with the candidates' gradients and hessians as
coefficients; the true members meet every one, no proof is wrong, and the summary names the
rounds read."""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.attacks.membership.audit import MembershipOptions, membership_attack
from ppdm.exact.membership import ProofOptions
from ppdm.maxent.constraints.boosting_membership_rows import COVER, LEAF_VALUE
from ppdm.maxent.constraints.membership_rows import membership_rows
from ppdm.tree.newton import newton_step

from families import FAMILIES

BOOSTED = ["gradient-boosting", "hist-gradient-boosting", "lightgbm", "xgboost"]
QUICK = MembershipOptions(proof=ProofOptions(time_limit=3, solve_limit=3))


def _fitted(request, which: str, family: str):
    sample, X, D, y = request.getfixturevalue(which)
    member = np.random.default_rng(3).random(len(sample)) < 0.5
    model = FAMILIES[family](X[member].reset_index(drop=True), D[member].reset_index(drop=True), y[member].reset_index(drop=True))
    return sample, member, model


def _rounds_read(model, complete: bool) -> set[int]:
    """The trees whose rounds give real rows: every tree but a first round holding the starting
    score or publishing class counts; over an incomplete population, those with covers only."""
    step = newton_step(model)
    assert not isinstance(step, str)
    skip = model.n_outputs if step.biased_first_round else 0
    return {
        t for t in range(skip, model.n_trees) if model.trees[t].disclosure.value != "class-counts" and (complete or "cover" in model.known[t])
    }


@pytest.mark.parametrize("family", BOOSTED)
@pytest.mark.parametrize("which", ["adult_small", "nursery_small"])
@pytest.mark.parametrize("half", [False, True])
def test_the_truth_meets_every_round_s_rows_and_no_proof_is_wrong(family, which, half, request):
    sample, member, model = _fitted(request, which, family)
    keep = ~member | (np.random.default_rng(1).random(len(member)) < 0.5) if half else np.ones(len(member), bool)
    pool, truth = sample[keep].reset_index(drop=True), member[keep]
    rows = membership_rows(model, pool, True, complete=not half)
    real = rows.cell <= LEAF_VALUE
    assert rows.truth_violations(truth).size == 0  # habit 1, every real row included
    assert set(rows.tree[real].tolist()) == _rounds_read(model, not half) and (rows.real or half)
    if half:  # members outside the population: leaf values say nothing, covers bound from above
        assert not (rows.cell == LEAF_VALUE).any() and (rows.lo[rows.cell == COVER] == 0).all()
    else:
        assert (rows.cell == LEAF_VALUE).any()
    result = membership_attack(model, pool, truth=truth, complete=not half, options=QUICK)
    s = result.summary()
    assert s["wrong_proved_members"] == 0 and s["wrong_proved_non_members"] == 0
    n_rounds = model.n_trees // model.n_outputs
    assert f"boosting rounds used: {', '.join(map(str, range(n_rounds)))} of {n_rounds}" in s["trees_used"] or "lightgbm" in family


def test_a_round_s_rows_tell_a_wrong_training_set(request):
    """Swapping a member for a non-member in the same 0/1 cells (XGBoost's first-round leaf and
    class) keeps every count, yet breaks a later round's leaf-value or cover row."""
    sample, member, model = _fitted(request, "adult_small", "xgboost")
    rows = membership_rows(model, sample, True)
    counts = rows.A[rows.cell > LEAF_VALUE].toarray()
    real = rows.A[rows.cell <= LEAF_VALUE].toarray()
    best, pair = 0.0, None
    for i in np.flatnonzero(member):
        alike = np.flatnonzero(~member & (counts == counts[:, [i]]).all(axis=0))
        if alike.size:
            gap = np.abs(real[:, alike] - real[:, [i]]).max(axis=0)
            if gap.max() > best:
                best, pair = float(gap.max()), (i, int(alike[np.argmax(gap)]))
    assert pair is not None and best > 0.2
    swapped = member.copy()
    swapped[[pair[0], pair[1]]] = False, True
    assert rows.truth_violations(member).size == 0
    broken = rows.truth_violations(swapped)
    assert broken.size and (rows.cell[broken] <= LEAF_VALUE).all()


@pytest.mark.parametrize("family", ["xgboost", "lightgbm"])
def test_the_rounds_rows_sharpen_the_estimate_and_can_be_left_out(family, request):
    sample, member, model = _fitted(request, "adult_small", family)
    population = sample.assign(member=member)
    before = membership_attack(model, population, truth="member", options=MembershipOptions(proof=QUICK.proof, rounds=False))
    after = membership_attack(model, population, truth="member", options=QUICK)
    assert not before.rows.real and after.rows.real
    assert after.rows.n_rows > before.rows.n_rows
    assert after.summary()["auc"] > before.summary()["auc"]
