"""Maximum entropy with internal-node constraints: a sequential convex method around the dual.

The internal-node constraints c_j(P) ≤ 0 (:mod:`ppdm.maxent.constraints.internal`) are nonconvex. Each
iteration linearises them at the current estimate P_k, c_j(P_k) + ∇c_j(P_k)·(P − P_k) ≤ 0, and
solves the resulting *linear* maximum-entropy problem with a proximal term β·KL(P ‖ P_k) (a
trust region that keeps the linearisation honest) by the same dual Newton solver as the linear
problems (:mod:`ppdm.maxent.solvers.dual`). The linearised rows are elastic (a violation costs
``penalty`` per unit, so every subproblem is feasible). A step is kept when it does not lower the
merit H(P) − penalty · Σ_j max(0, c_j(P)); otherwise β grows fourfold and the step is retried.
After a kept step β shrinks, stays or grows as the merit's actual gain compares with the gain the
linearised model predicted (a trust-region ratio test). When kept steps stop reducing the worst
violation, the penalty grows tenfold (up to ``max_penalty``): near p = 0 the entropy's slope
exceeds any fixed penalty. The method stops when every internal constraint holds within
``internal_tol`` and a step changes the merit by less than ``rel_gain`` (relative): P is then
stationary to that precision.

QI groups that lie in the same leaf and in the same branch of every candidate split are merged
once, before the first iteration; their estimates are equal at every step. The answer is a local
optimum (the problem is nonconvex) and is reported as such.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ppdm.errors import InfeasibleError
from ppdm.maxent.constraints.internal import InternalBlock
from ppdm.maxent.rows.problem import MaxEntProblem
from ppdm.maxent.solvers.dual import DualResult, DualState, solve_dual
from ppdm.maxent.solvers.presolve import Reduced, group_classes, reduce
from ppdm.maxent.solvers.solution import INTERNAL_VIOLATED, ITERATION_LIMIT, LOCAL_OPTIMUM, TIME_LIMIT, Solution
from ppdm.maxent.solvers.solve import solve_linear


@dataclass(frozen=True)
class _Settings:
    """The tolerances and limits of :func:`solve_with_internal` the steps below read."""

    tol: float
    internal_tol: float
    max_penalty: float
    rel_gain: float
    near: float
    max_kicks: int
    #: Newton steps per subproblem before it counts as failed (the step is then retried shorter).
    sub_newton: int = 50
    #: Kept steps in a row without reducing the worst violation by 1% before the penalty grows.
    stall: int = 8


@dataclass(frozen=True)
class _Merged:
    """The problem as the iterations see it: QI groups merged into classes once, the linear rows
    presolved (``base``), and the columns of one representative group per class."""

    problem: MaxEntProblem
    internal: InternalBlock
    base: Reduced
    classes: np.ndarray  # class of each QI group
    rep_columns: np.ndarray  # joint columns of each class's representative group
    keep: sp.dia_matrix  # zeroes the Jacobian's columns of variables forced to 0
    node_scale: np.ndarray  # per internal constraint, the mass of its node (scale of "near")
    n_rows: int  # linear rows of the original problem

    def joint(self, p: np.ndarray) -> np.ndarray:
        """P(q, x) of every QI group from the per-class estimate ``p``."""
        return p[self.classes] * self.problem.weights[:, None]

    def merit(self, p: np.ndarray, penalty: float) -> float:
        """H(P) − penalty · Σ_j max(0, c_j(P)) at the per-class estimate ``p``."""
        return _merit(self.base, self.internal, p, self.classes, self.problem.weights, penalty)

    def worst(self, p: np.ndarray) -> float:
        """The largest internal constraint value c_j(P) (> 0: violated)."""
        return _worst(self.internal, p, self.classes, self.problem.weights)


@dataclass
class _Iterate:
    """The estimate and what the method carries from one iteration to the next."""

    p: np.ndarray  # (classes, values) estimate
    lam_base: np.ndarray  # multipliers of the linear rows (warm start)
    lam_int: np.ndarray  # multipliers of the linearised internal rows (warm start)
    working: np.ndarray  # internal constraints in the working set
    merit: float
    beta: float  # weight of the proximal term β·KL(P ‖ P_k)
    penalty: float  # price of a unit of internal violation
    kicks: int = 0
    newton: int = 0
    stalled: int = 0  # kept steps in a row without reducing the worst violation by 1%
    stall_ref: float = np.inf  # the worst violation when the stall began


@dataclass(frozen=True)
class _Step:
    """One linearised subproblem, solved: its working rows, their linearisation at P_k
    (``c + J (P − P_k)``, with ``joint_class`` = P_k), and the merit at its solution."""

    rows: np.ndarray
    c: np.ndarray
    J: sp.csr_matrix
    joint_class: np.ndarray
    result: DualResult[DualState]
    merit: float  # -inf when the dual solver could not finish the subproblem


def solve_with_internal(
    problem: MaxEntProblem,
    internal: InternalBlock | None,
    tol: float = 1e-9,
    internal_tol: float = 1e-8,
    max_iter: int = 300,
    penalty: float = 1e3,
    max_penalty: float = 1e5,
    rel_gain: float = 1e-12,
    near: float = 1e-3,
    max_kicks: int = 20,
    seed: int = 0,
    time_limit: float | None = None,
) -> Solution:
    """Maximise H(X | Q) under the problem's linear blocks and the internal-node constraints.

    Stops at a stationary point (``status`` "local optimum"), or after ``max_iter`` iterations or
    ``time_limit`` seconds with the best feasible estimate so far ("iteration limit", "time limit";
    each kept step only raises the merit, so the estimate is usable, just not stationary), or with
    "internal constraints violated" when no feasible point was reached.
    """
    if internal is None or internal.n_constraints == 0:
        return solve_linear(problem, tol=tol)
    start = time.perf_counter()
    settings = _Settings(tol, internal_tol, max_penalty, rel_gain, near, max_kicks)
    merged = _merge(problem, internal)
    it = _start(merged, tol, penalty)
    rng = np.random.default_rng(seed)
    iterations, converged, timed_out = 0, False, False
    for iterations in range(1, max_iter + 1):  # noqa: B007 (the count the loop reached is reported)
        if time_limit is not None and time.perf_counter() - start > time_limit:
            timed_out = True
            break
        if it.beta > 1e4 and it.kicks < max_kicks and merged.worst(it.p) > internal_tol:
            _kick(merged, it, rng, tol)
        step = _linearised_step(merged, it, settings)
        it.newton += step.result.newton_steps
        if step.merit >= it.merit - 1e-15 * max(1.0, abs(it.merit)):
            converged = _keep(merged, it, step, settings)
        else:
            converged = _reject(merged, it, step, settings)
        if converged:
            break
    return _solution(merged, it, iterations, converged, timed_out, settings, start)


def _merge(problem: MaxEntProblem, internal: InternalBlock) -> _Merged:
    """Merge the QI groups that lie in the same leaf and the same branch of every candidate split
    (their estimates are equal at every step) and presolve the linear rows, once."""
    A, b, le, _ = problem.stacked()
    k = problem.n_values
    structure = sp.vstack([A, sp.kron(internal.parts, sp.identity(k))], format="csr")
    classes = group_classes(structure, problem.n_groups, k)
    base = reduce(A, b, le, problem.weights, k, classes)
    if base.fixed.all(axis=1).any():
        raise InfeasibleError("the constraints force every sensitive value of some group to 0", [])
    rep = np.unique(classes, return_index=True)[1]
    rep_columns = (rep[:, None] * k + np.arange(k)).ravel()
    keep = sp.diags((~base.fixed.ravel()).astype(float))
    node_scale = internal.node_weight if internal.node_weight is not None else np.ones(internal.n_constraints)
    return _Merged(problem, internal, base, classes, rep_columns, keep, node_scale, len(b))


def _start(merged: _Merged, tol: float, penalty: float) -> _Iterate:
    """Start from the estimate under the linear blocks alone, with an empty working set."""
    first = solve_dual(merged.base, tol)
    n = merged.internal.n_constraints
    p = first.state.p
    return _Iterate(
        p=p, lam_base=first.lam, lam_int=np.zeros(n), working=np.zeros(n, dtype=bool),
        merit=merged.merit(p, penalty), beta=0.1, penalty=penalty,
    )  # fmt: skip


def _kick(merged: _Merged, it: _Iterate, rng: np.random.Generator, tol: float) -> None:
    """Leave a point where the violated constraints are flat to first order.

    A symmetric point such as the linear estimate often is one: move to a nearby point that meets
    the linear constraints, with the symmetry broken, and go on from there.
    """
    it.kicks += 1
    noise = rng.normal(size=it.p.shape) * 0.1 * it.kicks
    kicked = Reduced(**{**merged.base.__dict__, "prior": np.log(np.maximum(it.p, 1e-300)) + noise})
    it.p = solve_dual(kicked, tol, lam0=it.lam_base).state.p
    it.merit, it.beta = merged.merit(it.p, it.penalty), 0.1


def _linearised_step(merged: _Merged, it: _Iterate, settings: _Settings) -> _Step:
    """Linearise the working set's constraints at P_k and solve the proximal subproblem.

    The working set: constraints near their bound (relative to their node's mass), and every one
    that has been near it before; the merit still checks them all.
    """
    joint = merged.joint(it.p)
    c_all = merged.internal.values(joint)
    it.working |= c_all >= -settings.near * merged.node_scale
    rows = np.flatnonzero(it.working)
    c = c_all[rows]
    J = sp.csr_matrix(merged.internal.jacobian(joint, rows)[:, merged.rep_columns] @ merged.keep)
    J.eliminate_zeros()
    joint_class = (it.p * merged.base.weights[:, None]).ravel()
    sub = _subproblem(merged.base, it, c, J, joint_class)
    lam0 = np.concatenate([it.lam_base, it.lam_int[rows]])
    result = solve_dual(sub, settings.tol, max_iter=100, lam0=lam0, max_newton=settings.sub_newton)
    # a subproblem the dual solver could not finish counts as a failed step
    merit = merged.merit(result.state.p, it.penalty) if result.converged else -np.inf
    return _Step(rows, c, J, joint_class, result, merit)


def _subproblem(base: Reduced, it: _Iterate, c: np.ndarray, J: sp.csr_matrix, joint_class: np.ndarray) -> Reduced:
    """The linear blocks plus the elastic rows ``J P ≤ J P_k − c`` (a violation costs
    ``penalty`` per unit), with the proximal term β·KL(P ‖ P_k)."""
    n_base = len(base.b)
    return Reduced(
        class_of_group=base.class_of_group,
        weights=base.weights,
        A=sp.vstack([base.A, J], format="csr"),
        b=np.concatenate([base.b, J @ joint_class - c]),
        le=np.concatenate([base.le, np.ones(len(c), dtype=bool)]),
        rows=np.arange(n_base + len(c)),
        fixed=base.fixed,
        n_values=base.n_values,
        prior=np.log(np.where(base.fixed, 1.0, np.maximum(it.p, 1e-300))) * it.beta,
        temperature=1.0 + it.beta,
        upper=np.concatenate([np.full(n_base, np.inf), np.full(len(c), it.penalty)]),
    )


def _keep(merged: _Merged, it: _Iterate, step: _Step, settings: _Settings) -> bool:
    """Take a step that does not lower the merit; True when P is then stationary.

    β follows the trust-region ratio of the merit's actual gain to the gain the linearised model
    predicted; the penalty grows when the worst violation stalls.
    """
    p_new = step.result.state.p
    scale = max(1.0, abs(it.merit))
    moved = float(np.abs(p_new - it.p).max())
    gain = step.merit - it.merit
    old_merit = it.merit
    it.p, it.merit = p_new, step.merit
    n_base = len(merged.base.b)
    it.lam_base = step.result.lam[:n_base]
    it.lam_int[:] = 0.0
    it.lam_int[step.rows] = step.result.lam[n_base:]
    predicted = _model_merit(merged.base, p_new, step.c, step.J, step.joint_class, it.penalty) - old_merit
    ratio = gain / predicted if predicted > 0 else 1.0
    it.beta = _next_beta(it.beta, ratio)
    worst = merged.worst(it.p)
    if worst <= settings.internal_tol and (moved < 1e-10 or gain <= settings.rel_gain * scale):
        return True
    _watch_stall(merged, it, worst, settings)
    return False


def _watch_stall(merged: _Merged, it: _Iterate, worst: float, settings: _Settings) -> None:
    """Grow the penalty tenfold (up to ``max_penalty``) after ``settings.stall`` kept steps in a row
    that did not reduce the worst violation by 1%."""
    it.stalled = it.stalled + 1 if worst > settings.internal_tol and worst > 0.99 * it.stall_ref else 0
    it.stall_ref = worst if it.stalled == 0 else it.stall_ref
    if it.stalled >= settings.stall and it.penalty < settings.max_penalty:
        # the entropy gained by the violation outweighs the penalty (its slope grows
        # without bound as a probability nears 0): the exact penalty is too small
        it.penalty, it.stalled = min(it.penalty * 10, settings.max_penalty), 0
        it.merit = merged.merit(it.p, it.penalty)


def _reject(merged: _Merged, it: _Iterate, step: _Step, settings: _Settings) -> bool:
    """Refuse a step that lowers the merit; True when P_k is stationary after all.

    A step that ran into constraints outside the working set is retried with them; otherwise it
    is retried shorter (β grows fourfold).
    """
    worst = merged.worst(it.p)
    if worst <= settings.internal_tol and it.merit - step.merit <= settings.rel_gain * max(1.0, abs(it.merit)):
        return True  # the step only loses what rounding loses: P_k is stationary
    reached = merged.internal.values(merged.joint(step.result.state.p)) > -settings.near * merged.node_scale
    outside = ~it.working & reached
    if outside.any():
        it.working |= outside
        return False
    it.beta *= 4
    # no step of any length gains: stationary as far as this method can tell
    return it.beta > 1e12 and it.kicks >= settings.max_kicks


def _solution(
    merged: _Merged, it: _Iterate, iterations: int, converged: bool, timed_out: bool, settings: _Settings, start: float
) -> Solution:
    """The estimate per QI group, with what the method measured about it and how it stopped."""
    p_groups = it.p[merged.classes]
    internal_violation = float(np.maximum(merged.internal.values(merged.joint(it.p)), 0.0).max(initial=0.0))
    linear_violation = float(merged.problem.violations(p_groups).max(initial=0.0))
    return Solution(
        p=p_groups,
        entropy=merged.problem.entropy(p_groups),
        max_violation=max(linear_violation, internal_violation),
        iterations=iterations,
        newton_steps=it.newton,
        seconds=time.perf_counter() - start,
        n_classes=len(merged.base.weights),
        n_rows=merged.n_rows + merged.internal.n_constraints,
        status=_status(internal_violation > settings.internal_tol, timed_out, converged),
    )


def _status(violated: bool, timed_out: bool, converged: bool) -> str:
    """How the method stopped, most serious first."""
    if violated:
        return INTERNAL_VIOLATED
    if timed_out:
        return TIME_LIMIT
    if not converged:
        return ITERATION_LIMIT  # feasible, but the last steps still gained entropy
    return LOCAL_OPTIMUM


def _class_entropy(red: Reduced, p: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return float(-(red.weights * terms.sum(axis=1)).sum())


def _next_beta(beta: float, ratio: float) -> float:
    """The proximal weight after a kept step: a third when the linearised model predicted the
    merit's gain well (ratio > 0.75), unchanged when fairly (> 0.25), doubled when poorly."""
    if ratio > 0.75:
        return max(beta / 3, 1e-6)
    if ratio > 0.25:
        return beta
    return beta * 2


def _worst(internal: InternalBlock, p: np.ndarray, classes: np.ndarray, weights: np.ndarray) -> float:
    return float(internal.values(p[classes] * weights[:, None]).max(initial=-np.inf))


def _merit(red: Reduced, internal: InternalBlock, p: np.ndarray, classes: np.ndarray, weights: np.ndarray, penalty: float) -> float:
    """H(P) − penalty · Σ_j max(0, c_j(P)), the quantity every kept step must not lower."""
    c = internal.values(p[classes] * weights[:, None])
    return _class_entropy(red, p) - penalty * float(np.maximum(c, 0.0).sum())


def _model_merit(red: Reduced, p: np.ndarray, c: np.ndarray, J: sp.csr_matrix, joint_class: np.ndarray, penalty: float) -> float:
    """The merit with the working set's constraints linearised at the step's start (the subproblem's model)."""
    linear = c + J @ ((p * red.weights[:, None]).ravel() - joint_class)
    return _class_entropy(red, p) - penalty * float(np.maximum(linear, 0.0).sum())
