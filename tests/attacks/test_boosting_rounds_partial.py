"""Every boosting round under partial knowledge, against brute force.

On tiny tables (3 rounds) the attacker misses two split columns and the class of a few records (the
others are known individuals). Every completion of those records' unknowns is enumerated; each is
scored by the library itself (its raw score before every round) and checked against every round's
Newton step (:mod:`ppdm.tree.newton`) leaf by leaf. The rows the audit builds over its types
(:mod:`ppdm.maxent.constraints.boosting_rows`) must accept exactly the completions the Newton steps
accept (to the rows' tolerance), and the real data must be one of them.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from ppdm.maxent.constraints.boosting_rows import ABSOLUTE
from ppdm.maxent.constraints.forest_constraints import forest_type_problem
from ppdm.tree import forest_from_lightgbm, forest_from_sklearn, forest_from_xgboost
from ppdm.tree.forest import leaf_values
from ppdm.tree.newton import NewtonStep, newton_step, tree_rounds

from families import tiny_table

ROUNDS = 3
#: Records whose unknowns are enumerated (every other record is a known individual).
OPEN = 4


def _margins_xgboost(est, D: pd.DataFrame, m: int) -> np.ndarray:
    import xgboost as xgb

    return est.get_booster().predict(xgb.DMatrix(D), output_margin=True, iteration_range=(0, m))


def _margins_lightgbm(est, D: pd.DataFrame, m: int) -> np.ndarray:
    return est.predict(D, raw_score=True, num_iteration=m)


def _margins_sklearn(est, D: pd.DataFrame, m: int) -> np.ndarray:
    return np.asarray(list(est.staged_decision_function(D))[m - 1]).ravel()


def _fit(family: str, D: pd.DataFrame, y: pd.Series):  # type: ignore[no-untyped-def]
    codes = y.cat.codes.to_numpy()
    if family == "xgboost":
        xgb = pytest.importorskip("xgboost")
        est = xgb.XGBClassifier(n_estimators=ROUNDS, max_depth=2, learning_rate=0.5, min_child_weight=0.5, n_jobs=1).fit(D, codes)
        return est, _margins_xgboost
    if family == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        est = lgb.LGBMClassifier(n_estimators=ROUNDS, max_depth=2, num_leaves=4, min_child_samples=3, verbose=-1, n_jobs=1).fit(D, codes)
        return est, _margins_lightgbm
    proto = (
        GradientBoostingClassifier(n_estimators=ROUNDS, max_depth=2, learning_rate=0.5, random_state=1)
        if family == "gradient-boosting"
        else HistGradientBoostingClassifier(max_iter=ROUNDS, max_depth=2, min_samples_leaf=3, learning_rate=0.5, early_stopping=False, random_state=1)
    )
    with threadpool_limits(1):
        return proto.fit(D, y), _margins_sklearn


def _import(family: str, est, X: pd.DataFrame, D: pd.DataFrame, y: pd.Series):  # type: ignore[no-untyped-def]
    if family == "xgboost":
        return forest_from_xgboost(est, X, y=y)
    if family == "lightgbm":
        return forest_from_lightgbm(est, X, list(D.columns), y=y)
    return forest_from_sklearn(est, X, y=y)


def _published_relations(forest, step: NewtonStep, used: list[int], truth_leaves: np.ndarray, leaves: np.ndarray, p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per completion (rows of ``leaves``, ``p``, ``y``: completions × records [× trees]), how far it
    misses what the model publishes, per leaf the truth reaches, in records: the first tree's class
    counts, every later used round's Newton step Σ ([y = k] − p − r s p (1 − p)) − r λ, every stored
    row count and every cover Σ s p (1 − p)."""
    n_comp, n_rec = y.shape
    rows = np.arange(n_comp)[:, None].repeat(n_rec, 1)
    out = []
    for t in range(forest.n_trees):
        tree = forest.trees[t]
        leaf, pt = leaves[:, :, t], p[:, :, t]
        reached = np.unique(truth_leaves[:, t])

        def per_leaf(values: np.ndarray, tree=tree, leaf=leaf, reached=reached) -> np.ndarray:
            total = np.zeros((n_comp, tree.n_nodes))
            np.add.at(total, (rows, leaf), values)
            return total[:, reached]

        counts = np.array([tree.nodes[i].counts if tree.nodes[i].counts is not None else [np.nan, np.nan] for i in reached], dtype=float)
        if t == 0 and "class-counts" in forest.known[0]:
            out.append(per_leaf((y == 1).astype(float)) - counts[:, 1])
        elif t in used:
            r = leaf_values(tree) / step.learning_rate
            h = step.hessian_scale * pt * (1 - pt)
            valued = leaf_values(tree)[reached] != 0.0 if step.min_hessian > 0 else np.ones(len(reached), dtype=bool)
            out.append((per_leaf((y == 1) - pt - r[leaf] * h) - step.l2 * r[reached])[:, valued])
        if "sample-counts" in forest.known[t]:
            out.append(per_leaf(np.ones_like(pt)) - np.array([tree.nodes[i].n_samples for i in reached]))
        if "cover" in forest.known[t] and t > 0:
            out.append(per_leaf(step.hessian_scale * pt * (1 - pt)) - np.array([tree.nodes[i].cover for i in reached]))
    return np.concatenate(out, axis=1)


def _scores_before(forest, est, margins, D: pd.DataFrame) -> np.ndarray:
    """Each row's probability of the positive class before every round, from the library's own raw scores."""
    before = [np.full(len(D), float(np.ravel(forest.base_score)[0]))] + [np.ravel(margins(est, D, m)) for m in range(1, ROUNDS)]
    return 1.0 / (1.0 + np.exp(-np.column_stack(before)))


@pytest.mark.parametrize("family", ["xgboost", "lightgbm", "gradient-boosting", "hist-gradient-boosting"])
def test_every_rounds_rows_accept_exactly_the_completions_the_newton_steps_accept(family):
    accepted = np.array([_completions_accepted(family, seed) for seed in (0, 1)])
    assert (accepted[:, 0] > accepted[:, 1]).any(), accepted  # the later rounds rule out what the first round allows


def _completions_accepted(family: str, seed: int) -> tuple[int, int]:
    """On one tiny table, the brute-force comparison (module docstring); the completions the first
    round's rows accept and those every round's rows accept."""
    table, X, D, y = tiny_table(seed, n=40)
    est, margins = _fit(family, D, y)
    forest = _import(family, est, X, D, y)
    step = newton_step(forest)
    assert isinstance(step, NewtonStep) and tree_rounds(forest) is not None
    known, sensitive, n = ["a"], "y", len(table)
    open_rows, individuals = np.arange(OPEN), list(range(OPEN, n))
    # every combination of the unknowns (b, c and the class) one open record may take
    combos = list(itertools.product(table["b"].cat.categories, table["c"].cat.categories, y.cat.categories))
    type_of = np.empty((len(combos), OPEN), dtype=np.intp)
    p_of = np.empty((len(combos), OPEN, forest.n_trees))
    leaf_of = np.empty((len(combos), OPEN, forest.n_trees), dtype=np.intp)
    problem, types = forest_type_problem(forest, table, known, sensitive, individuals=individuals)
    for j, (b, c, cls) in enumerate(combos):
        frame = table.copy()
        frame.loc[open_rows, "b"], frame.loc[open_rows, "c"], frame.loc[open_rows, "y"] = b, c, cls
        other, other_types = forest_type_problem(forest, frame, known, sensitive, individuals=individuals)
        # the rows depend only on what the attacker knows, never on the unknowns' values
        assert all((x.A != z.A).nnz == 0 and np.array_equal(x.b, z.b) for x, z in zip(problem.blocks, other.blocks))
        type_of[j] = other_types.true_type[open_rows]
        inputs = frame[X.columns].iloc[open_rows]
        p_of[j] = _scores_before(forest, est, margins, pd.get_dummies(inputs).astype(float).reindex(columns=D.columns, fill_value=0.0))
        leaf_of[j] = forest.apply(inputs)
    rounds = types.rounds
    assert rounds is not None and [t for t in rounds.used if t > 0], rounds.left_out
    assert len(rounds.used) >= forest.n_trees - 1  # LightGBM's first round may hold the starting score
    # every completion of the open records: its type vector (the rows' side) ...
    pick = np.array(list(itertools.product(range(len(combos)), repeat=OPEN)))
    rec = np.arange(OPEN)
    P = np.tile(np.bincount(types.true_type[individuals], minlength=types.n_types).astype(float), (len(pick), 1))
    for i in rec:
        np.add.at(P, (np.arange(len(pick)), type_of[pick[:, i], i]), 1.0)
    A, b, le, _ = problem.stacked()
    lhs = (A @ (P / n).T).T - b[None, :]
    ours = np.where(le[None, :], np.maximum(lhs, 0.0), np.abs(lhs)).max(axis=1) * n <= 1e-6
    # ... and the library's scores with every round's Newton step (the brute force's side)
    known_p = _scores_before(forest, est, margins, D.iloc[individuals])
    known_leaves = forest.apply(X.iloc[individuals])
    known_y = (y.iloc[individuals] == y.cat.categories[1]).to_numpy()
    y_of = np.array([cls == y.cat.categories[1] for *_, cls in combos])
    m = len(pick)
    p_all = np.concatenate([p_of[pick, rec], np.broadcast_to(known_p, (m, *known_p.shape))], axis=1)
    leaves_all = np.concatenate([leaf_of[pick, rec], np.broadcast_to(known_leaves, (m, *known_leaves.shape))], axis=1)
    y_all = np.concatenate([y_of[pick], np.broadcast_to(known_y, (m, len(known_y)))], axis=1)
    miss = np.abs(_published_relations(forest, step, rounds.used, forest.apply(X), leaves_all, p_all, y_all)).max(axis=1)
    newton_ok = miss <= 1e-3
    newton_loose = miss <= ABSOLUTE + step.tolerance * n + 1e-9
    truth = [combos.index((table["b"][i], table["c"][i], table["y"][i])) for i in rec]
    at_truth = int(np.flatnonzero((pick == truth).all(axis=1))[0])
    assert ours[at_truth] and newton_ok[at_truth]  # the truth is feasible on both sides
    assert ours[newton_ok].all(), "the rows refuse a completion every published number accepts"
    assert newton_loose[ours].all(), "the rows accept a completion some round's Newton step refuses"
    # the later rounds rule out completions the first round's rows alone accept
    first = [blk for blk in problem.blocks if blk.name.rsplit(" tree ", 1)[-1] == "0" or " tree " not in blk.name]
    A1 = sp.vstack([blk.A for blk in first], format="csr")
    b1 = np.concatenate([blk.b for blk in first])
    le1 = np.concatenate([np.full(blk.n_rows, blk.sense == "le") for blk in first])
    lhs1 = (A1 @ (P / n).T).T - b1[None, :]
    first_only = np.where(le1[None, :], np.maximum(lhs1, 0.0), np.abs(lhs1)).max(axis=1) * n <= 1e-6
    assert (first_only >= ours).all()
    return int(first_only.sum()), int(ours.sum())


# -- what each estimate says it read ---------------------------------------------------------


@pytest.fixture(scope="module")
def adult_boosted(adult_small):
    data, X, D, y = adult_small
    xgb = pytest.importorskip("xgboost")
    est = xgb.XGBClassifier(n_estimators=5, max_depth=3, learning_rate=0.3, n_jobs=1).fit(D, y.cat.codes.to_numpy())
    return data, forest_from_xgboost(est, X, y=y)


def test_the_pooled_estimate_says_it_read_the_first_round_only_and_why(adult_boosted, tmp_path):
    import ppdm
    from ppdm.attacks.models.explicit import ForestAuditOptions
    from ppdm.attacks.models.pooled import UNPOOLED_ROUNDS
    from ppdm.pipeline.options import AuditOptions

    data, forest = adult_boosted
    never = AuditOptions(forest=ForestAuditOptions(max_routed=1))  # the joint table never fits: the pooled estimate answers
    threat = ppdm.ThreatModel(sensitive="marital-status", known=("sex", "race", "education"), sa_published=True)
    audit = ppdm.audit(forest, data, threat, options=never)
    details = audit.estimate.details
    assert details["method"] == "pooled"
    assert details["rounds"]["used"] == 1 and details["rounds"]["left_out"] == {UNPOOLED_ROUNDS: forest.n_trees - 1}
    assert "1 of 5 boosting rounds read" in str(audit)  # the printout's scope line
    audit.report(tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert "1 of 5 boosting rounds read" in page and "all 5 trees read" not in page  # the first card's account


def test_a_stalled_solve_widens_the_leaf_value_rows_before_leaving_them_out(adult_boosted, monkeypatch):
    """The explicit estimate reads every round under partial knowledge; where the solver stalls on
    the leaf-value intervals it widens them (a relaxation the truth still meets), and says so."""
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.models import explicit
    from ppdm.attacks.models.maxent import maxent_attack
    from ppdm.errors import InfeasibleError
    from ppdm.maxent.constraints.boosting_rows import REAL_ROWS

    data, forest = adult_boosted
    threat = ThreatModel(sensitive="income", known=("age", "workclass", "education", "marital-status", "occupation", "race", "sex"))
    real = explicit.solve_forest
    calls: list[float] = []
    limits: list[float] = []

    def stall_once(problem, **kw):  # the first solve with the narrow intervals stalls
        widths = [float(np.sort(b.b)[-1]) for b in problem.blocks if b.name.startswith(REAL_ROWS)]
        calls.append(max(widths, default=0.0))
        limits.append(kw["options"].time_limit)
        if len(calls) == 1 and widths:
            raise InfeasibleError("stalled", [])
        return real(problem, **kw)

    monkeypatch.setattr(explicit, "solve_forest", stall_once)
    result = maxent_attack(forest, data, threat=threat)
    assert len(calls) == 2 and calls[1] > calls[0]
    assert limits[1] < limits[0]  # the retry gets what the first solve left of the time limit
    assert result.details["rounds"]["used"] == forest.n_trees and result.details["rounds"]["real_rows"] > 0
    assert "widened by 0.1 records" in result.details["note"] and not result.details["note"].startswith(";")  # no empty fragment first
