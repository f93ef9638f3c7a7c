"""Maximum entropy with internal-node constraints: a sequential convex method around the dual.

The internal-node constraints c_j(P) ≤ 0 (:mod:`ppdm.maxent.internal`) are nonconvex. Each
iteration linearises them at the current estimate P_k, c_j(P_k) + ∇c_j(P_k)·(P − P_k) ≤ 0, and
solves the resulting *linear* maximum-entropy problem with a proximal term β·KL(P ‖ P_k) (a
trust region that keeps the linearisation honest) by the same dual Newton solver as the linear
problems (:mod:`ppdm.maxent.dual`). The linearised rows are elastic (a violation costs
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
import numpy as np
import scipy.sparse as sp

from ppdm.errors import InfeasibleError
from ppdm.maxent.dual import solve_dual
from ppdm.maxent.internal import InternalBlock
from ppdm.maxent.presolve import Reduced, group_classes, reduce
from ppdm.maxent.problem import MaxEntProblem
from ppdm.maxent.solve import Solution, solve_linear


_DEBUG = False
SUB_NEWTON = 50  # Newton steps per subproblem before it counts as failed (the step is then retried shorter)
STALL = 8  # kept steps in a row without reducing the worst violation by 1% before the penalty grows


def _class_entropy(red: Reduced, p: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return float(-(red.weights * terms.sum(axis=1)).sum())


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
    A, b, le, _ = problem.stacked()
    k = problem.n_values
    g = problem.n_groups
    structure = sp.vstack([A, sp.kron(internal.parts, sp.identity(k))], format="csr")
    classes = group_classes(structure, g, k)
    base = reduce(A, b, le, problem.weights, k, classes)
    if base.fixed.all(axis=1).any():
        raise InfeasibleError("the constraints force every sensitive value of some group to 0", [])
    first = solve_dual(base, tol)
    rep = np.unique(classes, return_index=True)[1]
    rep_columns = (rep[:, None] * k + np.arange(k)).ravel()
    keep = sp.diags((~base.fixed.ravel()).astype(float))

    p, lam_base = first.state.p, first.lam
    lam_int = np.zeros(internal.n_constraints)
    scale_j = internal.node_weight if internal.node_weight is not None else np.ones(internal.n_constraints)
    working = np.zeros(internal.n_constraints, dtype=bool)
    merit, beta = _merit(base, internal, p, classes, problem.weights, penalty), 0.1
    iterations = newton = kicks = 0
    rng = np.random.default_rng(seed)
    converged = False
    stalled, stall_ref = 0, np.inf
    timed_out = False
    for iterations in range(1, max_iter + 1):
        if time_limit is not None and time.perf_counter() - start > time_limit:
            timed_out = True
            break
        if beta > 1e4 and kicks < max_kicks and _worst(internal, p, classes, problem.weights) > internal_tol:
            # stuck at a point where the violated constraints are flat to first order (a symmetric
            # point such as the linear estimate often is): move to a nearby point that meets the
            # linear constraints, with the symmetry broken, and go on from there
            kicks += 1
            noise = rng.normal(size=p.shape) * 0.1 * kicks
            kicked = Reduced(**{**base.__dict__, "prior": np.log(np.maximum(p, 1e-300)) + noise})
            p = solve_dual(kicked, tol, lam0=lam_base).state.p
            merit, beta = _merit(base, internal, p, classes, problem.weights, penalty), 0.1
        joint = p[classes] * problem.weights[:, None]
        c_all = internal.values(joint)
        # the working set: constraints near their bound (relative to their node's mass), and
        # every one that has been near it before; the merit still checks them all
        working |= c_all >= -near * scale_j
        rows = np.flatnonzero(working)
        c = c_all[rows]
        J = sp.csr_matrix(internal.jacobian(joint, rows)[:, rep_columns] @ keep)
        J.eliminate_zeros()
        joint_class = (p * base.weights[:, None]).ravel()
        sub = Reduced(
            class_of_group=classes,
            weights=base.weights,
            A=sp.vstack([base.A, J], format="csr"),
            b=np.concatenate([base.b, J @ joint_class - c]),
            le=np.concatenate([base.le, np.ones(len(c), dtype=bool)]),
            rows=np.arange(len(base.b) + len(c)),
            fixed=base.fixed,
            n_values=k,
            prior=np.log(np.where(base.fixed, 1.0, np.maximum(p, 1e-300))) * beta,
            temperature=1.0 + beta,
            upper=np.concatenate([np.full(len(base.b), np.inf), np.full(len(c), penalty)]),
        )
        result = solve_dual(sub, tol, max_iter=100, lam0=np.concatenate([lam_base, lam_int[rows]]), max_newton=SUB_NEWTON)
        newton += result.newton_steps
        p_new = result.state.p
        # a subproblem the dual solver could not finish counts as a failed step
        new_merit = _merit(base, internal, p_new, classes, problem.weights, penalty) if result.converged else -np.inf
        scale = max(1.0, abs(merit))
        if new_merit >= merit - 1e-15 * scale:
            moved = float(np.abs(p_new - p).max())
            gain = new_merit - merit
            old_merit = merit
            p, merit = p_new, new_merit
            lam_base = result.lam[: len(base.b)]
            lam_int[:] = 0.0
            lam_int[rows] = result.lam[len(base.b) :]
            predicted = _model_merit(base, p_new, c, J, joint_class, penalty) - old_merit
            ratio = gain / predicted if predicted > 0 else 1.0
            beta = _next_beta(beta, ratio)
            worst = _worst(internal, p, classes, problem.weights)
            if _DEBUG:
                print(f"it {iterations} beta {beta:.1e} merit {merit:.12f} moved {moved:.2e} worst {worst:.2e} newton {result.newton_steps}")
            if worst <= internal_tol and (moved < 1e-10 or gain <= rel_gain * scale):
                converged = True
                break
            stalled = stalled + 1 if worst > internal_tol and worst > 0.99 * stall_ref else 0
            stall_ref = worst if stalled == 0 else stall_ref
            if stalled >= STALL and penalty < max_penalty:
                # the entropy gained by the violation outweighs the penalty (its slope grows
                # without bound as a probability nears 0): the exact penalty is too small
                penalty, stalled = min(penalty * 10, max_penalty), 0
                merit = _merit(base, internal, p, classes, problem.weights, penalty)
        else:
            if _DEBUG:
                print(f"it {iterations} reject beta {beta:.1e} new merit {new_merit:.12f} < {merit:.12f}")
            worst = _worst(internal, p, classes, problem.weights)
            if worst <= internal_tol and merit - new_merit <= rel_gain * scale:
                converged = True
                break  # the step only loses what rounding loses: P_k is stationary
            outside = ~working & (internal.values(p_new[classes] * problem.weights[:, None]) > -near * scale_j)
            if outside.any():
                working |= outside  # the step ran into constraints it did not see: retry with them
                continue
            beta *= 4
            if beta > 1e12 and kicks >= max_kicks:
                converged = True  # no step of any length gains: stationary as far as this method can tell
                break
    p_groups = p[classes]
    joint = p_groups * problem.weights[:, None]
    internal_violation = float(np.maximum(internal.values(joint), 0.0).max(initial=0.0))
    linear_violation = float(problem.violations(p_groups).max(initial=0.0))
    if internal_violation > internal_tol:
        status = "internal constraints violated"
    elif timed_out:
        status = "time limit"
    elif not converged:
        status = "iteration limit"  # feasible, but the last steps still gained entropy
    else:
        status = "local optimum"
    return Solution(
        p=p_groups,
        entropy=problem.entropy(p_groups),
        max_violation=max(linear_violation, internal_violation),
        iterations=iterations,
        newton_steps=newton,
        seconds=time.perf_counter() - start,
        n_classes=len(base.weights),
        n_rows=len(b) + internal.n_constraints,
        status=status,
    )


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
