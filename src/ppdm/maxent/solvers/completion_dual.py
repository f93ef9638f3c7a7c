"""Maximum entropy over each group's completions, every boosting round's rows at once.

Over a group q's completions u (:mod:`ppdm.maxent.table.boosting_completions`, each with its weight
w_u against the counting measure over the cells) and the class c, the maximum-entropy belief is
the Gibbs distribution P(u, c | q) ∝ w_u exp(θ · f(u, c)) (paper 000 §3, Jaynes 1957), f the
coefficients of every row on (u, c). θ minimises the dual

    L(θ) = Σ_q (n_q / N) log Σ_{u ∈ q, c} w_u exp(θ · f(u, c)) − θ · b + (ρ / 2) |θ|²,

whose gradient is the rows' values under P less the published ones, plus ρθ. The ridge term ρ
(a Gaussian prior on θ: Chen & Rosenfeld 2000) keeps the dual bounded when a *sample* of the
completions cannot meet every row exactly; at the optimum a row misses by ρ |θ_row| records
(``ρ = penalty / N``, :attr:`CompletionDualOptions.penalty` in records per unit of θ): the
violation is reported, never hidden. L is convex and smooth; L-BFGS-B (Byrd et al. 1995)
minimises it, each evaluation one pass over (completions × trees).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ppdm.maxent.table.boosting_completions import CompletionRows, Features, row_values

__all__ = ["CompletionDualOptions", "CompletionSolution", "solve_completions"]


@dataclass(frozen=True)
class CompletionDualOptions:
    """``penalty``: records a row may miss by per unit of its multiplier (the ridge ρ N);
    ``max_iterations`` and ``time_limit`` (seconds) stop L-BFGS-B; ``gtol``: its gradient tolerance."""

    penalty: float = 0.02
    max_iterations: int = 400
    time_limit: float | None = 40.0
    gtol: float = 1e-9


@dataclass
class CompletionSolution:
    """θ, each (completion, class)'s share of the records (``weights``), the rows' values and
    violations in records, and how the fit went."""

    theta: np.ndarray
    weights: np.ndarray
    values: np.ndarray
    violation_records: np.ndarray
    iterations: int
    seconds: float
    converged: bool
    message: str


def _energy(theta: np.ndarray, rows: CompletionRows, f: Features, sens: np.ndarray, n_classes: int) -> np.ndarray:
    """θ · f(u, c) for every completion and class (completions × classes)."""
    t = np.r_[theta, 0.0]  # row −1 (none) reads the appended 0
    n = f.alpha.shape[0] if f.alpha.size else next(iter(f.rows.values())).shape[0]
    out = np.zeros((n, n_classes))
    m = f.mult or {}

    def gather(kind: str, idx: np.ndarray) -> np.ndarray:
        g = t[np.where(idx >= 0, idx, len(theta))]
        return g * m[kind] if kind in m else g

    idx = f.rows["counts"]
    for c in range(n_classes):
        if idx.shape[1]:
            out[:, c] += gather("counts", np.where(idx >= 0, idx + c, -1)).sum(axis=1)
    if f.rows["values"].shape[1]:
        g = gather("values", f.rows["values"])
        out -= (g * f.alpha).sum(axis=1)[:, None]
        for c in range(n_classes):
            mine = f.value_targets == c
            if mine.any():
                out[:, c] += g[:, mine].sum(axis=1)
    if f.rows["covers"].shape[1]:
        out += (gather("covers", f.rows["covers"]) * f.hessian).sum(axis=1)[:, None]
    if f.rows["sizes"].shape[1]:
        out += gather("sizes", f.rows["sizes"]).sum(axis=1)[:, None]
    if rows.sa_row >= 0:
        if (sens >= 0).all():
            out += theta[rows.sa_row + sens][:, None]
        else:
            out += theta[rows.sa_row : rows.sa_row + n_classes][None, :]
    return out


def _shares(theta: np.ndarray, rows: CompletionRows, f: Features, log_weight: np.ndarray, allowed: np.ndarray, start: np.ndarray, group_w: np.ndarray, sens: np.ndarray) -> tuple[np.ndarray, float]:
    """Each (completion, class)'s share of the records and Σ_q w_q log Z_q."""
    e = _energy(theta, rows, f, sens, allowed.shape[1]) + log_weight[:, None]
    e = np.where(allowed, e, -np.inf)
    top = np.maximum.reduceat(e.max(axis=1), start[:-1])
    size = np.diff(start)
    x = np.exp(e - np.repeat(top, size)[:, None])
    z = np.add.reduceat(x.sum(axis=1), start[:-1])
    w = x * np.repeat(group_w / z, size)[:, None]
    return w, float(group_w @ (np.log(z) + top))


def solve_completions(
    rows: CompletionRows, f: Features, log_weight: np.ndarray, allowed: np.ndarray, start: np.ndarray, group_w: np.ndarray,
    sens: np.ndarray, options: CompletionDualOptions = CompletionDualOptions(), theta0: np.ndarray | None = None,
) -> CompletionSolution:
    """Minimise the dual (module docstring). ``allowed``: completions × classes, the classes each
    may take (a group's known class); ``start``: group g's completions are ``start[g]:start[g+1]``;
    ``group_w``: each group's share of the records; ``sens``: each completion's sensitive cell
    (−1: the class is sensitive)."""
    n = rows.n_records
    rho = options.penalty / n
    began = time.perf_counter()

    def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, logz = _shares(theta, rows, f, log_weight, allowed, start, group_w, sens)
        g = row_values(rows, f, w, sens) - rows.b + rho * theta
        return logz - float(theta @ rows.b) + 0.5 * rho * float(theta @ theta), g

    def stop(intermediate_result: object) -> None:
        if options.time_limit is not None and time.perf_counter() - began > options.time_limit:
            raise StopIteration

    x0 = np.zeros(rows.n_rows) if theta0 is None else theta0
    r = minimize(fun, x0, jac=True, method="L-BFGS-B", callback=stop, options={"maxiter": options.max_iterations, "gtol": options.gtol, "ftol": 1e-15, "maxcor": 30})
    w, _ = _shares(r.x, rows, f, log_weight, allowed, start, group_w, sens)
    values = row_values(rows, f, w, sens)
    return CompletionSolution(
        r.x, w, values, np.abs(values - rows.b) * n, int(r.nit), time.perf_counter() - began, bool(r.success), str(r.message),
    )
