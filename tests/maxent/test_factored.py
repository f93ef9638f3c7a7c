"""The factored maximum-entropy problem: the same answer as the explicit slots (and cvxpy +
Clarabel), its dual and presolve, and the threat-model audits that use it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import audit_problem, maxent_attack
from ppdm.data.datasets import load_adult, load_nursery
from ppdm.data.qigroups import QIGroups
from ppdm.errors import DataError, InfeasibleError
from ppdm.learn import C45Classifier, ID3Classifier
from ppdm.maxent import LinearBlock, solve_linear
from ppdm.maxent.constraints.tree_constraints import Knowledge
from ppdm.maxent.solvers.dual import Dual
from ppdm.maxent.solvers.factored import FactoredProblem, expand, solve_factored
from ppdm.maxent.solvers.factored_dual import FactoredDual
from ppdm.maxent.solvers.factored_presolve import reduce_factored
from ppdm.maxent.solvers.newton import NewtonOptions
from ppdm.maxent.solvers.presolve import reduce
from ppdm.maxent.table.unknowns import leaf_reach, unknown_domain
from ppdm.tree.model import Attribute, Node, Tree
from ppdm.tree.splits import CategoricalSplit, ThresholdSplit

from oracles import clarabel_slots, sklearn_tree

TOL = 1e-7


# -- random factored problems ------------------------------------------------------------------------


def random_problem(rng: np.random.Generator, n_groups: int, n_blocks: int, n_tags: int, n_labels: int,
                   tags_known: bool, publish: str, label_rows: bool, sa: bool, pinned: bool) -> FactoredProblem:
    """Groups reaching random blocks; rows computed from a random table of records, so feasible."""
    block, tag, label, base = [], [], [], []
    for b in range(n_blocks):
        labels = np.flatnonzero(rng.random(n_labels) < 0.7)
        labels = labels if len(labels) else np.array([int(rng.integers(n_labels))])
        m = float(np.log(rng.integers(1, 4)))
        for c in range(n_tags):
            for s in labels:
                block.append(b), tag.append(c), label.append(int(s)), base.append(m)
    block, tag, label, base = map(np.array, (block, tag, label, base))
    reach = rng.random((n_groups, n_blocks)) < 0.5
    reach[np.arange(n_groups), rng.integers(0, n_blocks, n_groups)] = True
    group_tag = rng.integers(0, n_tags, n_groups) if tags_known else np.full(n_groups, -1)
    counts = rng.integers(1, 5, n_groups)
    truth = np.zeros(len(block))
    pin = np.full(n_groups, -1)
    for g in range(n_groups):
        allowed = np.flatnonzero(reach[g, block] & ((group_tag[g] < 0) | (tag == group_tag[g])))
        picks = rng.choice(allowed, size=counts[g])
        np.add.at(truth, picks, 1.0 / counts.sum())
        if pinned and counts[g] == 1 and rng.random() < 0.5:
            pin[g] = picks[0]
    problem = FactoredProblem(counts / counts.sum(), sp.csr_matrix(reach), group_tag, block, tag, label, n_labels,
                              log_base=base, pinned=pin if pinned else None)

    def rows(masks: list[np.ndarray]) -> sp.csr_matrix:
        return sp.csr_matrix(np.array(masks, dtype=float).reshape(len(masks), len(block)))

    leaf_label = [int(np.argmax([truth[(block == b) & (tag == c)].sum() for c in range(n_tags)])) for b in range(n_blocks)]
    if publish == "counts":
        A = rows([(block == b) & (tag == c) for b in range(n_blocks) for c in range(n_tags)])
        problem.add(LinearBlock("class-count", A, A @ truth, "eq"))
    elif publish == "rates":
        A = rows([(block == b) & (tag == leaf_label[b]) for b in range(n_blocks)])
        problem.add(LinearBlock("rate", A, A @ truth, "eq"))
        A = rows([block == b for b in range(n_blocks)])
        problem.add(LinearBlock("size", A, A @ truth, "eq"))
    if label_rows and n_tags > 1:
        masks = [
            ((block == b) & (tag == w)).astype(float) - ((block == b) & (tag == leaf_label[b]))
            for b in range(n_blocks) for w in range(n_tags) if w != leaf_label[b]
        ]
        problem.add(LinearBlock("label", rows(masks), np.zeros(len(masks)), "le"))
    if sa:
        A = rows([label == s for s in range(n_labels - 1)])
        problem.add(LinearBlock("sa", A, A @ truth, "eq"))
    return problem


@st.composite
def problems(draw: st.DrawFn) -> FactoredProblem:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return random_problem(
        rng,
        n_groups=draw(st.integers(2, 25)),
        n_blocks=draw(st.integers(1, 5)),
        n_tags=draw(st.integers(1, 3)),
        n_labels=draw(st.integers(2, 3)),
        tags_known=draw(st.booleans()),
        publish=draw(st.sampled_from(["counts", "rates", "labels"])),
        label_rows=draw(st.booleans()),
        sa=draw(st.booleans()),
        pinned=draw(st.booleans()),
    )


def explicit_marginal(problem: FactoredProblem, slot_type: np.ndarray, p: np.ndarray) -> np.ndarray:
    valid = slot_type >= 0
    out = np.zeros((problem.n_groups, problem.n_labels))
    groups = np.broadcast_to(np.arange(problem.n_groups)[:, None], slot_type.shape)
    np.add.at(out, (groups[valid], problem.type_label[slot_type[valid]]), p[valid])
    return out


def explicit_types(problem: FactoredProblem, slot_type: np.ndarray, p: np.ndarray) -> np.ndarray:
    valid = slot_type >= 0
    joint = p * problem.weights[:, None]
    return np.bincount(slot_type[valid], weights=joint[valid], minlength=problem.n_types)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_factored_equals_explicit_slots_on_random_problems(problem):
    explicit, slot_type = expand(problem)
    reference = solve_linear(explicit)
    ours = solve_factored(problem)
    assert ours.status == "optimal"
    assert np.abs(ours.marginal - explicit_marginal(problem, slot_type, reference.p)).max() <= TOL
    assert np.abs(ours.types - explicit_types(problem, slot_type, reference.p)).max() <= TOL
    assert abs(ours.entropy - reference.entropy) <= TOL
    assert np.allclose(ours.marginal.sum(axis=1), 1.0)


clarabel = clarabel_slots  # the shared reference (tests/oracles.py)


@pytest.mark.parametrize("seed", range(8))
def test_factored_agrees_with_clarabel(seed):
    rng = np.random.default_rng(seed)
    problem = random_problem(rng, 12, 4, 2, 3, bool(seed % 2), ["counts", "rates", "labels"][seed % 3], True, seed % 4 < 2, seed % 3 == 0)
    explicit, slot_type = expand(problem)
    reference = explicit_marginal(problem, slot_type, clarabel(explicit))
    assert np.abs(solve_factored(problem).marginal - reference).max() <= 1e-5


# -- the dual and the presolve ------------------------------------------------------------------------


def test_hessian_is_the_derivative_of_the_gradient():
    rng = np.random.default_rng(4)
    problem = random_problem(rng, 15, 4, 2, 3, False, "counts", True, True, False)
    red = reduce_factored(problem)
    dual = FactoredDual(red)
    lam = dual.project(rng.normal(size=len(red.b)))
    rows = np.arange(len(red.b))
    H = dual.hessian(dual.state(lam), rows)
    h = 1e-6
    for r in range(len(red.b)):
        e = np.zeros(len(red.b))
        e[r] = h
        numeric = -(dual.state(lam + e).residual - dual.state(lam - e).residual) / (2 * h)
        assert np.abs(numeric - H[:, r]).max() <= 1e-6 * max(1.0, np.abs(H).max())
    # the value's derivative is minus the residual
    e = np.zeros(len(red.b))
    e[0] = h
    slope = (dual.state(lam + e).value - dual.state(lam - e).value) / (2 * h)
    assert slope == pytest.approx(-dual.state(lam).residual[0], abs=1e-7)


def two_leaf_problem(rate_b: float, size_b: float) -> FactoredProblem:
    """Two groups, both reaching blocks 0 and 1; types (block, class) with one label each."""
    problem = FactoredProblem([0.5, 0.5], sp.csr_matrix(np.ones((2, 2))), [-1, -1], [0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 0, 1], 2)
    problem.add(LinearBlock("rate", sp.csr_matrix([[1.0, 0, 0, 0]]), [rate_b], "eq", ["rate(leaf 0)"]))
    problem.add(LinearBlock("size", sp.csr_matrix([[1.0, 1, 0, 0]]), [size_b], "eq", ["size(leaf 0)"]))
    return problem


def test_a_pure_leaf_fixes_its_other_classes():
    red = reduce_factored(two_leaf_problem(0.4, 0.4))  # rate = size: class 1 of leaf 0 is impossible
    assert 1 not in red.types and {0, 2, 3} <= set(red.types.tolist())
    solution = solve_factored(two_leaf_problem(0.4, 0.4))
    assert solution.types[1] == 0.0 and solution.types[0] == pytest.approx(0.4)
    assert solution.max_violation <= 1e-12


def test_a_zero_row_fixes_its_types_for_every_group():
    problem = two_leaf_problem(0.0, 0.5)
    red = reduce_factored(problem)
    assert 0 not in red.types
    assert solve_factored(problem).types[0] == 0.0


def test_a_saturated_row_takes_the_other_cells_from_its_groups():
    # group 0 reaches blocks 0 and 1, group 1 only block 1; count(block 0) = P(group 0): group 0 lies in block 0
    problem = FactoredProblem([0.5, 0.5], sp.csr_matrix([[1, 1], [0, 1]]), [-1, -1], [0, 1], [0, 0], [0, 1], 2)
    problem.add(LinearBlock("count", sp.csr_matrix([[1.0, 0]]), [0.5], "eq", ["count(leaf 0)"]))
    red = reduce_factored(problem)
    assert red.access.nnz == 2  # each group keeps one cell
    solution = solve_factored(problem)
    assert np.allclose(solution.marginal, [[1, 0], [0, 1]])


def test_a_group_left_without_types_is_infeasible_naming_rows():
    problem = FactoredProblem([0.5, 0.5], sp.csr_matrix([[1, 0], [0, 1]]), [-1, -1], [0, 1], [0, 0], [0, 1], 2)
    problem.add(LinearBlock("count", sp.csr_matrix([[1.0, 0]]), [0.0], "eq", ["count(leaf 0) = 0"]))
    with pytest.raises(InfeasibleError, match=r"count\(leaf 0\) = 0") as err:
        solve_factored(problem)
    assert err.value.conflict == ["count(leaf 0) = 0"]


def test_violated_rows_are_named():
    problem = two_leaf_problem(0.6, 0.4)  # rate > size
    with pytest.raises(InfeasibleError, match="rate|size"):
        solve_factored(problem)


def test_pinned_groups_leave_the_problem_and_keep_their_type():
    problem = two_leaf_problem(0.3, 0.5)
    problem.pinned = np.array([3, -1])
    solution = solve_factored(problem)
    assert np.allclose(solution.marginal[0], [0, 1])
    assert solution.types[3] >= 0.5 - 1e-12
    explicit, slot_type = expand(problem)
    reference = solve_linear(explicit)
    assert np.abs(solution.marginal - explicit_marginal(problem, slot_type, reference.p)).max() <= TOL
    assert solution.entropy == pytest.approx(reference.entropy, abs=TOL)


def test_the_explicit_hessian_leaves_the_reduced_rows_alone():
    """Dual.hessian once shared A's indptr with a matrix it summed duplicates of, corrupting A."""
    problem = random_problem(np.random.default_rng(10), 12, 3, 2, 3, False, "labels", False, True, False)
    explicit, _ = expand(problem)
    A, b, le, _ = explicit.stacked()
    red = reduce(A, b, le, explicit.weights, explicit.n_values, log_base=explicit.log_base)
    before = red.A.toarray().copy()
    dual = Dual(red)
    dual.hessian(dual.state(np.zeros(len(red.b))), np.arange(len(red.b)))
    assert np.array_equal(red.A.toarray(), before)


# -- the reach of the groups -------------------------------------------------------------------------


def test_a_category_in_no_branch_group_takes_the_default_branch():
    """An unknown attribute's value outside every branch group reaches the default branch."""
    attrs = [Attribute("color", "categorical", ("red", "green", "blue")), Attribute("size", "numeric")]
    nodes = [
        Node(0, None, 0, 0, np.array([3.0, 3.0]), split=CategoricalSplit("color", (("red",), ("green",)), default=1), children=[1, 2]),
        Node(1, 0, 1, 0, np.array([2.0, 1.0])),
        Node(2, 0, 1, 1, np.array([1.0, 2.0]), split=ThresholdSplit("size", 5.0), children=[3, 4]),
        Node(3, 2, 2, 1, np.array([1.0, 1.0])),
        Node(4, 2, 2, 1, np.array([0.0, 1.0])),
    ]
    tree = Tree(nodes, attrs, ["n", "y"], class_attribute="y")
    frame = pd.DataFrame({"color": pd.Categorical(["red", "blue", "green", "red", "blue", "green"], categories=["red", "green", "blue"]),
                          "size": [1.0, 7.0, 2.0, 8.0, 3.0, 9.0], "y": ["n", "y", "n", "y", "n", "y"]})
    leaf = tree.apply(frame)
    for node in reversed(tree.nodes):  # the counts the records give, children before parents
        if node.is_leaf:
            node.counts = np.array([np.sum((leaf == node.id) & (frame["y"] == c)) for c in ("n", "y")], dtype=float)
        else:
            node.counts = sum(tree.nodes[c].counts for c in node.children)
        node.label = int(np.argmax(node.counts))
    groups = QIGroups.from_frame(frame, ["size"])
    domain = unknown_domain(tree, frame, ["size"], "color")
    reach = leaf_reach(tree, groups, domain)
    assert reach.leaves.tolist() == [1, 3, 4]
    # leaf 1 allows red only; leaves 3, 4 allow green and blue (blue by the default branch)
    assert [s.tolist() for s in reach.sensitive] == [[0], [1, 2], [1, 2]]
    small = groups.table["size"].to_numpy() <= 5
    assert np.array_equal(reach.reach[:, 3].toarray().ravel().astype(bool), small)
    # every record's own type exists, in both forms
    threat = ThreatModel(sensitive="color", known=("size",), sa_published=False)
    assert np.abs(maxent_attack(tree, frame, threat=threat).posterior - maxent_attack(tree, frame, threat=threat, factored=False).posterior).max() <= TOL


# -- audits: the factored form against the explicit one ------------------------------------------------


def _same_audit(tree, frame, threat, knowledge=Knowledge()):
    resolved = threat.resolve(frame, tree.class_attribute)
    slots = audit_problem(tree, frame, resolved, replace_sa(knowledge, resolved), factored=False)
    types = audit_problem(tree, frame, resolved, replace_sa(knowledge, resolved))
    assert types.factored and not slots.factored
    # the same rows, by name (known individuals are rows of the explicit form, pinned groups of the factored one)
    names = [n for n in slots.problem.stacked()[3] if not n.startswith("known individual")]
    assert names == types.problem.stacked()[3]
    a = maxent_attack(tree, frame, threat=threat, knowledge=knowledge, factored=False)
    b = maxent_attack(tree, frame, threat=threat, knowledge=knowledge)
    assert b.details["form"] == "factored" and a.details["form"] == "slots"
    assert np.abs(a.posterior - b.posterior).max() <= TOL
    assert abs(a.details["entropy"] - b.details["entropy"]) <= TOL
    assert a.provenance == b.provenance
    return a, b


def replace_sa(knowledge, resolved):
    from dataclasses import replace

    return replace(knowledge, sa=resolved.sa_published)


PUBLISH = ["class-counts", "error-rates", "labels"]


@pytest.fixture(scope="module")
def nursery():
    frame, _ = load_nursery()
    frame = frame.sample(1500, random_state=5).reset_index(drop=True)
    tree = ID3Classifier(max_depth=3).fit(frame.drop(columns="class"), frame["class"]).tree_
    tree.class_attribute = "class"
    return frame, tree


NURSERY_THREATS = [
    {"sensitive": "class", "known": ("parents", "has_nurs")},  # class sensitive, split attributes unknown
    {"sensitive": "health", "known": ("parents", "has_nurs", "form")},  # an input sensitive, class unknown
    {"sensitive": "health", "known": ("parents", "has_nurs", "class")},  # class known
    {"sensitive": "finance", "known": ("parents", "class"), "known_individuals": (0, 7, 11)},
]


@pytest.mark.parametrize("publish", PUBLISH)
@pytest.mark.parametrize("sa", [False, True])
@pytest.mark.parametrize("spec", NURSERY_THREATS)
def test_factored_audit_equals_explicit_on_nursery(nursery, publish, sa, spec):
    frame, tree = nursery
    _same_audit(tree.published(publish), frame, ThreatModel(**spec, sa_published=sa))


@pytest.fixture(scope="module")
def adult():
    frame, _ = load_adult("train")
    frame = frame.sample(2500, random_state=2).reset_index(drop=True)
    features = ["age", "sex", "race", "marital-status", "relationship", "hours-per-week", "education"]
    c45 = C45Classifier(max_depth=4).fit(frame[features], frame["income"]).tree_
    c45.class_attribute = "income"
    sk = sklearn_tree(frame, ["age", "sex", "race", "marital-status", "hours-per-week", "capital-gain"], "income", 5)
    return frame, {"c45": c45, "sklearn": sk}


ADULT_THREATS = [
    {"sensitive": "income", "known": ("age", "sex", "race")},
    {"sensitive": "marital-status", "known": ("age", "sex", "race")},
    {"sensitive": "marital-status", "known": ("age", "sex", "race", "income")},
    {"sensitive": "sex", "known": ("race", "income"), "known_individuals": (3, 4)},
    {"sensitive": "marital-status", "preset": "census"},
]


@pytest.mark.parametrize("publish", PUBLISH)
@pytest.mark.parametrize("learner", ["c45", "sklearn"])
@pytest.mark.parametrize("spec", ADULT_THREATS)
def test_factored_audit_equals_explicit_on_adult(adult, publish, learner, spec):
    frame, trees = adult
    for sa in (False, True):
        _same_audit(trees[learner].published(publish), frame, ThreatModel(**spec, sa_published=sa))


def test_paper_setting_keeps_the_explicit_form_and_the_factored_one_agrees(adult):
    frame, _ = adult
    qi = ["race", "sex", "marital-status", "relationship"]
    tree = ID3Classifier(max_depth=3).fit(frame[qi], frame["income"]).tree_
    tree.class_attribute = "income"
    tree = tree.published("error-rates")
    default = maxent_attack(tree, frame, ThreatModel(known=qi))
    forced = maxent_attack(tree, frame, ThreatModel(known=qi), factored=True)
    assert default.details["form"] == "slots" and forced.details["form"] == "factored"
    assert np.abs(default.posterior - forced.posterior).max() <= TOL


def test_the_truth_satisfies_every_factored_row(adult):
    frame, trees = adult
    for publish in PUBLISH:
        threat = ThreatModel(sensitive="marital-status", known=("age", "sex")).resolve(frame, "income")
        audit = audit_problem(trees["sklearn"].published(publish), frame, threat, Knowledge(sa=True), check=False)
        truth = audit.table.truth()
        assert audit.problem.violations(truth).max(initial=0.0) * len(frame) <= 1e-9


def test_a_table_that_contradicts_the_counts_is_refused_in_factored_form(adult):
    frame, trees = adult
    changed = frame.copy()
    changed.loc[changed["income"] == "<=50K", "income"] = ">50K"
    with pytest.raises(DataError, match="contradicts"):
        maxent_attack(trees["c45"], changed, threat=ThreatModel(sensitive="marital-status", known=("age", "sex")))


def test_factored_and_explicit_tables_hold_the_same_slots(adult):
    frame, trees = adult
    tree = trees["sklearn"]
    threat = ThreatModel(sensitive="race", known=("sex",)).resolve(frame, "income")
    slots = audit_problem(tree, frame, threat, factored=False)
    types = audit_problem(tree, frame, threat)
    table = slots.table
    assert types.problem.n_slots == int(table.valid.sum())
    # the explicit table's (leaf, class, sensitive, log base) per slot are the factored types
    keys = {(int(leaf), int(c), int(s), round(float(m), 9)) for leaf, c, s, m in zip(table.leaf[table.valid], table.klass[table.valid], table.sens[table.valid], table.log_base[table.valid])}
    ours = {(int(leaf), int(c), int(s), round(float(m), 9)) for leaf, c, s, m in zip(types.table.type_leaf, types.table.type_class, types.table.type_sens, types.table.log_base)}
    assert keys == ours
    assert np.array_equal(types.table.true_sensitive(), table.true_sensitive())


def test_no_newton_step_starts_that_would_end_past_the_deadline_at_the_last_one_s_pace(monkeypatch):
    """A fake clock: each Hessian (one per Newton step) takes 10 s. With 25 s left after the first
    step, a second step (ending at 20 s, 30 s at the pace) is not started: the solve stops after
    one step, ``inaccurate``, instead of ending past its time limit."""
    from ppdm.maxent.solvers import dual as dual_module
    from ppdm.maxent.solvers.factored_dual import FactoredDual as Timed

    problem = random_problem(np.random.default_rng(3), 30, 6, 3, 2, False, "counts", False, False, False)
    clock = [0.0]
    hessian = Timed.hessian

    def slow_hessian(self, state, rows=None):
        clock[0] += 10.0
        return hessian(self, state, rows)

    monkeypatch.setattr(Timed, "hessian", slow_hessian)
    monkeypatch.setattr(dual_module.time, "perf_counter", lambda: clock[0])
    red = reduce_factored(problem)
    result = dual_module.minimize_dual(Timed(red), len(red.b), 1e-9, deadline=25.0)
    assert result.timed_out and result.newton_steps == 1 and clock[0] == 10.0


def test_a_filled_sparse_newton_system_is_solved_as_a_dense_one(monkeypatch):
    """Above DENSE_SHARE filled, Cholesky on the dense array; the step is the sparse solver's."""
    from ppdm.maxent.solvers import dual as dual_module

    rng = np.random.default_rng(0)
    B = sp.random(60, 40, density=0.5, random_state=1)
    H = sp.csr_matrix(B @ B.T)  # positive semidefinite, mostly filled
    grad = rng.normal(size=60)
    assert H.nnz >= dual_module.DENSE_SHARE * 60 * 60
    expected = sp.linalg.spsolve((H + 0.1 * sp.identity(60)).tocsc(), -grad)
    called = []
    monkeypatch.setattr(dual_module.spla, "spsolve", lambda *a, **k: called.append(1))
    assert np.allclose(dual_module._newton_step(H, 0.1, grad), expected) and not called


def test_the_presolve_stops_its_rounds_at_the_deadline_and_is_not_run_twice(monkeypatch):
    """Past the deadline no round starts: the problem comes back unreduced but whole (the solve
    still meets it); a solve given the presolved problem does not presolve it again."""
    from ppdm.maxent.solvers import factored as factored_module

    problem = random_problem(np.random.default_rng(5), 40, 6, 3, 2, False, "counts", False, True, False)
    full, none = reduce_factored(problem), reduce_factored(problem, deadline=0.0)
    assert np.isfinite(none.log_base).sum() >= np.isfinite(full.log_base).sum()  # fewer types fixed, none wrongly
    monkeypatch.setattr(factored_module, "reduce_factored", lambda *a, **k: pytest.fail("presolved twice"))
    a = solve_factored(problem, reduced=none)
    b = solve_factored(problem, reduced=full)
    assert a.status == b.status == "optimal" and np.abs(a.marginal - b.marginal).max() <= 1e-6


@pytest.mark.parametrize("seed", range(8))
def test_the_factored_hessian_vector_product_is_the_hessian_s_and_its_diagonal_bound_holds(seed):
    """hess_vec(v) = H v with H formed; hess_diag bounds H's diagonal from above (a preconditioner
    that never goes negative)."""
    rng = np.random.default_rng(seed)
    problem = random_problem(rng, 40, 6, 3, 2, bool(seed % 2), "counts", False, seed % 3 == 0, False)
    red = reduce_factored(problem)
    dual = FactoredDual(red)
    state = dual.state(rng.normal(size=len(red.b)) * 0.3)
    H = dual.hessian(state, np.arange(len(red.b)))
    H = H.toarray() if sp.issparse(H) else H
    v = rng.normal(size=len(red.b))
    assert np.allclose(dual.hess_vec(state, v), H @ v, atol=1e-12)
    assert np.all(dual.hess_diag(state) >= np.diag(H) - 1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_large_newton_systems_are_solved_by_conjugate_gradients_to_the_same_optimum(monkeypatch, seed):
    """Beyond ``dense_max`` rows the general driver never forms the Hessian (conjugate gradients on
    Hessian-vector products) and still reaches the factorised solve's optimum."""
    problem = random_problem(np.random.default_rng(seed), 60, 8, 3, 3, bool(seed % 2), "counts", False, seed % 2 == 0, False)
    direct = solve_factored(problem)
    monkeypatch.setattr(FactoredDual, "hessian", lambda *a, **k: pytest.fail("the Hessian was formed"))
    free = solve_factored(problem, options=NewtonOptions(dense_max=0))
    assert direct.status == free.status == "optimal"
    assert np.abs(direct.marginal - free.marginal).max() <= 1e-5


def test_conjugate_gradients_stop_at_the_deadline_with_a_descent_direction(monkeypatch):
    """A fake clock advancing 1 s per Hessian-vector product: with the deadline at 3 s, three
    iterations, and the direction still lowers the quadratic model (a usable truncated step)."""
    from ppdm.maxent.solvers import newton as newton_module

    rng = np.random.default_rng(0)
    B = rng.normal(size=(50, 50))
    H = B @ B.T + np.eye(50)
    rhs = rng.normal(size=50)
    clock = [0.0]

    def product(v):
        clock[0] += 1.0
        return H @ v

    monkeypatch.setattr(newton_module.time, "perf_counter", lambda: clock[0])
    d, iterations, reached = newton_module.conjugate_gradients(product, rhs, np.diag(H).copy(), 0.0, 1e-12, 500, 1e-13, deadline=3.0)
    assert iterations == 3 and clock[0] == 3.0 and not reached
    assert float(rhs @ d) > 0 and 0.5 * d @ H @ d - rhs @ d < 0


def _exclude_by_full_product(sat, touch, reached, state):
    """The saturated-row exclusion as the product over every group and cell (the reference)."""
    from ppdm.maxent.solvers import factored_presolve as presolve

    by_group = sp.csr_matrix(reached[:, sat])
    n_sat = np.diff(by_group.indptr)
    inside = sp.csr_matrix(by_group @ touch[sat])
    live = np.flatnonzero(state.pair_alive & (n_sat[state.pair_group] > 0))
    out = live[presolve._lookup(inside, state.pair_group[live], state.pair_cell[live]) < n_sat[state.pair_group[live]]]
    state.pair_alive[out] = False
    state.excluded_by[out] = sat[by_group.indices[by_group.indptr[state.pair_group[out]]]]
    return len(out)


def test_the_saturated_rows_exclude_the_same_cells_counted_at_the_live_pairs_only(monkeypatch):
    """The presolve counts a group's saturated rows touching a cell at its live (group, cell)
    pairs only, in chunks; the reduced problems equal those of the full product, on random
    problems where the rule excludes cells (in chunks of a few pairs, to cross their edges)."""
    from ppdm.maxent.solvers import factored_presolve as presolve

    excluded = []
    for seed in range(120):
        rng = np.random.default_rng(seed)
        problem = random_problem(rng, int(rng.integers(5, 60)), int(rng.integers(2, 9)), int(rng.integers(1, 4)), int(rng.integers(2, 4)),
                                 bool(seed % 2), "counts", seed % 5 == 0, seed % 3 == 0, seed % 4 == 0)
        with monkeypatch.context() as m:
            m.setattr(presolve, "_exclude_untouched", lambda *a: excluded.append(_exclude_by_full_product(*a)))
            expected = reduce_factored(problem)
        with monkeypatch.context() as m:
            m.setattr(presolve, "CHUNK_PAIRS", 3)
            got = reduce_factored(problem)
        assert np.array_equal(got.types, expected.types) and np.array_equal(got.rows, expected.rows)
        assert (got.access != expected.access).nnz == 0
    assert sum(n > 0 for n in excluded) >= 5  # the rule did exclude cells



@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("by_groups", [True, False])
def test_the_sparse_group_term_equals_the_dense_sum_over_groups(seed, by_groups):
    """Σ_q W_q (A p_q)(A p_q)ᵀ formed by sparse products (BᵀB or Y K Yᵀ, each forced in turn)
    equals the sum of the groups' outer products formed densely, one group at a time; and the
    Hessian, dense or sparse, is the same matrix either way."""
    rng = np.random.default_rng(seed)
    n_groups, n_blocks = ((40, 3), (8, 12))[seed % 2]
    problem = random_problem(rng, n_groups, n_blocks, 2, 3, seed % 3 == 0, ["counts", "rates"][seed % 2], False, True, False)
    red = reduce_factored(problem)
    dual = FactoredDual(red)
    state = dual.state(rng.normal(size=len(red.b)) * 0.5)
    A = red.A.toarray()
    dense = np.zeros((len(red.b), len(red.b)))
    for q in range(red.access.shape[0]):
        p_q = np.zeros(A.shape[1])
        for pair in range(red.access.indptr[q], red.access.indptr[q + 1]):
            cell = red.access.indices[pair]
            lo, hi = red.cell_start[cell], red.cell_start[cell + 1]
            p_q[lo:hi] += state.share[pair] * state.within[lo:hi]
        dense += red.weights[q] * np.outer(A @ p_q, A @ p_q)
    forced = FactoredDual(red, NewtonOptions(group_term="groups" if by_groups else "cells"))
    sparse = forced.group_term(state, forced.AT)
    assert forced._by_groups is by_groups
    assert sp.issparse(sparse) and np.abs(sparse.toarray() - dense).max() <= 1e-12
    H = dual.hessian(state, np.arange(len(red.b)))
    expected = A @ np.diag(state.P) @ A.T - dense
    assert isinstance(H, np.ndarray) and np.abs(H - expected).max() <= 1e-12
    some = np.arange(0, len(red.b), 2)  # an active set: the rows' own transpose
    assert np.abs(dual.hessian(state, some) - expected[np.ix_(some, some)]).max() <= 1e-12
    H_sparse = FactoredDual(red, NewtonOptions(dense_rows=0)).hessian(state, np.arange(len(red.b)))
    assert sp.issparse(H_sparse) and np.abs(H_sparse.toarray() - expected).max() <= 1e-12


def test_the_group_term_s_cost_rule_prefers_the_cells_when_many_groups_share_them():
    """Many groups over few shared cells: Y K Yᵀ (K is cells × cells) costs less than BᵀB; each
    group with its own cells: BᵀB."""
    from ppdm.maxent.solvers import factored_dual

    rng = np.random.default_rng(3)
    for n_groups, n_blocks, expected in ((80, 2, False), (6, 60, True)):
        problem = random_problem(rng, n_groups, n_blocks, 2, 2, False, "counts", False, True, False)
        red = reduce_factored(problem)
        dual = FactoredDual(red)
        state = dual.state(np.zeros(len(red.b)))
        Yt, Pi = dual.cell_rows(state, red.A), dual.group_shares(state)
        per_cell = np.bincount(Yt.indices, minlength=Yt.shape[1])
        assert factored_dual._by_groups_cheaper(sp.csr_matrix(Pi @ Yt.T), sp.csr_matrix(Pi.T @ Pi), per_cell) is expected


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.integers(0, 2**32 - 1))
def test_decided_rows_equal_the_explicit_forms(problem, seed):
    """The factored rule (sorts and joins over cells and groups) finds the rows the explicit form's
    rule finds over P(q, slot), with the same values: the problem's rows and random ones (whole
    cells, single types, mixed coefficients)."""
    from ppdm.maxent.constraints.leaf_rows import decided_rows

    rng = np.random.default_rng(seed)
    cells = problem.cells()
    whole = [np.isin(cells.cell_of_type, rng.choice(cells.n_cells, size=int(rng.integers(1, cells.n_cells + 1)), replace=False))
             for _ in range(4)]
    scale = rng.choice([1.0, 2.0, -1.0], size=(4, 1))
    masks = np.vstack([np.array(whole, dtype=float) * scale, (rng.random((3, problem.n_types)) < 0.4).astype(float)])
    blocks = [*problem.blocks, LinearBlock("random", sp.csr_matrix(masks), np.zeros(len(masks)), "eq")]
    explicit, slot_type = expand(problem)
    per_group = (slot_type >= 0).sum(axis=1)
    for blk, explicit_blk in zip(blocks, [*explicit.blocks[:len(problem.blocks)], None]):
        pick = sp.csr_matrix((np.ones(int((slot_type >= 0).sum())), (slot_type[slot_type >= 0], np.flatnonzero((slot_type >= 0).ravel()))),
                             shape=(problem.n_types, slot_type.size))
        A_slots = explicit_blk.A if explicit_blk is not None else sp.csr_matrix(blk.A @ pick)
        ours, value = problem.decided_rows(blk.A)
        theirs, their_value = decided_rows(sp.csr_matrix(A_slots), problem.weights, per_group)
        assert (ours == theirs).all(), blk.name
        assert np.allclose(value[ours], their_value[ours], atol=1e-12), blk.name
