"""The one result of every maximum-entropy solver, and the names of how a solve ended.

:func:`~ppdm.maxent.solvers.solve.solve_linear`, :func:`~ppdm.maxent.solvers.factored.solve_factored`,
:func:`~ppdm.maxent.solvers.forest_solve.solve_forest` and
:func:`~ppdm.maxent.solvers.nonlinear.solve_with_internal` all return a :class:`Solution`: what every
solve reports (status, effort, residuals, entropy) and the estimate in the form the problem was
posed in (``p`` over explicit slots, ``marginal`` and ``types`` for the factored form), in the spirit
of scipy's ``OptimizeResult``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Every row holds within the tolerance asked for (the dual problem is convex: the maximum).
OPTIMAL = "optimal"
#: The answer meets every row to within 100 tol (the solver refuses worse) but not to tol, or a
#: forest solve guessed types to be empty (see :func:`~ppdm.maxent.solvers.forest_solve.solve_forest`).
INACCURATE = "inaccurate"
#: The sequential convex method reached a stationary point of the nonconvex problem.
LOCAL_OPTIMUM = "local optimum"
#: ... stopped at its iteration limit with a feasible estimate (usable, not stationary).
ITERATION_LIMIT = "iteration limit"
#: ... stopped at its time limit with a feasible estimate.
TIME_LIMIT = "time limit"
#: ... ended with an internal-node constraint still violated.
INTERNAL_VIOLATED = "internal constraints violated"


def _absent() -> np.ndarray:
    """The value of a field of the other form: an empty (0, 0) array."""
    return np.empty((0, 0))


@dataclass(kw_only=True)
class Solution:
    """A maximum-entropy estimate and how it was obtained.

    Every solver fills the common fields: ``status`` (one of the names above), ``entropy`` (the
    objective at the answer: H(X | Q) over explicit slots, the entropy relative to the base measure
    in the factored form; natural log), ``max_violation`` (the largest violation of an *original*
    row, measured on the answer), ``kkt_residual`` (NaN where not computed), ``iterations`` (the
    solver's inner iterations: L-BFGS-B's on the general driver, conjugate gradients' on the
    forest's, the sequential convex method's outer steps), ``newton_steps``, ``seconds``,
    ``n_classes`` (the groups after merging), ``n_rows`` (the original rows) and ``dual`` (a
    multiplier per original row, 0 on rows the presolve dropped; ``None`` where not reported).

    The estimate is in the problem's form; the other form's fields are empty (0, 0) arrays:

    * explicit slots (:class:`~ppdm.maxent.rows.problem.MaxEntProblem`): ``p``, p(x | q), groups × values;
    * factored (:class:`~ppdm.maxent.rows.factored_problem.FactoredProblem`): ``marginal``,
      P(label | q), groups × labels, and ``types``, P(t) per type (pinned groups included); ``face``
      says how the forest solver found the types no distribution meeting the rows can fill, and
      ``possible`` (groups × labels, boolean; the forest solver's) the labels not proved impossible
      (by the presolve, bound propagation or the face's certified linear programme, never by a
      guess): sound whatever the status, so an answer stopped at its time limit can still say who
      is certain.
    """

    status: str = OPTIMAL
    entropy: float
    max_violation: float
    kkt_residual: float = float("nan")
    iterations: int
    newton_steps: int
    seconds: float
    n_classes: int
    n_rows: int
    dual: np.ndarray | None = None
    p: np.ndarray = field(default_factory=_absent)
    marginal: np.ndarray = field(default_factory=_absent)
    types: np.ndarray = field(default_factory=_absent)
    face: str = ""
    possible: np.ndarray = field(default_factory=_absent)


def row_status(worst: float, tol: float) -> str:
    """:data:`OPTIMAL` when the worst row violation is within ``tol``, :data:`INACCURATE` otherwise."""
    return OPTIMAL if worst <= tol else INACCURATE


def full_dual(n_rows: int, kept: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """The multipliers ``lam`` of the presolved rows ``kept`` as a vector over all ``n_rows`` (0 elsewhere)."""
    full = np.zeros(n_rows)
    full[kept] = lam
    return full
