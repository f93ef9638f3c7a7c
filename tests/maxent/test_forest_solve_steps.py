"""The forest solver's conjugate gradients on a Hessian with no curvature left.

Rounding noise once gave a direction a curvature of about 1e-300 > 0; the step rz / curvature
then overflowed to infinity (Adult, 100 trees of depth 5) and the run ended infeasible.
"""

from __future__ import annotations

import numpy as np

from ppdm.maxent.solvers.forest_solve import ForestSolveOptions, ForestState, _pcg


class _FlatDual:
    """A dual whose Hessian is 0 up to rounding noise."""

    def hess_diag(self, state: ForestState) -> np.ndarray:
        return np.ones(3)

    def hess_vec(self, state: ForestState, v: np.ndarray) -> np.ndarray:
        return 1e-300 * v


def test_conjugate_gradients_stop_at_noise_curvature_with_a_finite_step() -> None:
    g = np.array([1.0, -2.0, 0.5])
    state = ForestState(0.0, residual=g, w=np.ones(3), P=np.ones(3))
    step, iterations = _pcg(_FlatDual(), state, 1e-3, ForestSolveOptions())  # type: ignore[arg-type]
    assert np.all(np.isfinite(step)) and iterations == 1
    assert np.allclose(step, g / (1.0 + 1e-12))  # the preconditioned gradient
