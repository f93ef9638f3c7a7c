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
minimises it, each evaluation one pass over (completions × trees) (:func:`solve_completions`).

:func:`scale_completions` solves the same problem (without the ridge) by cyclic iterative
scaling, tree after tree: each tree's leaves partition the completions, so its rows take one
step each with the others fixed, the exact scaling step for the 0/1 rows (class counts, row
counts, the sensitive distribution) and a Newton step for the real ones (leaf values, covers).
On the first round of XGBoost on Adult (106 rows, 62 k completions) it meets every row to 0.0003
records in 2.5 s where L-BFGS-B took 10 s and missed by 0.14; it is the default.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ppdm.errors import check_options
from ppdm.maxent.table.boosting_completions import CompletionRows, Features, row_values

__all__ = ["CompletionDualOptions", "CompletionSolution", "solve_completions"]


@dataclass(frozen=True)
class CompletionDualOptions:
    """``penalty``: records a row may miss by per unit of its multiplier (the ridge ρ N);
    ``max_iterations`` and ``time_limit`` (seconds) stop L-BFGS-B; ``gtol``: its gradient tolerance."""

    penalty: float = 0.02
    #: The ridge on rows with real coefficients (leaf values, covers) and on later rounds' row
    #: counts, in the same unit: a sample meets them only approximately.
    real_penalty: float = 0.02
    max_iterations: int = 400
    time_limit: float | None = 40.0
    gtol: float = 1e-9

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


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
    n = rows.n_rows
    t = np.r_[theta, 0.0]  # row n (none) reads the appended 0
    size = next(iter(f.rows.values())).shape[0]
    out = np.zeros((size, n_classes))
    m = f.mult or {}

    def gather(kind: str, idx: np.ndarray) -> np.ndarray:
        g = t[idx]
        return g * m[kind] if kind in m else g

    idx = f.rows["counts"]
    if idx.shape[1]:
        for c in range(n_classes):
            out[:, c] += gather("counts", np.where(idx < n, idx + c, n)).sum(axis=1)
    if f.rows["values"].shape[1]:
        g = gather("values", f.rows["values"])
        out -= np.einsum("ij,ij->i", g, f.alpha)[:, None]
        for c in range(n_classes):
            mine = f.value_targets == c
            if mine.all():
                out[:, c] += g.sum(axis=1)
            elif mine.any():
                out[:, c] += g[:, mine].sum(axis=1)
    if f.rows["covers"].shape[1]:
        out += np.einsum("ij,ij->i", gather("covers", f.rows["covers"]), f.hessian)[:, None]
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
    rho = np.full(rows.n_rows, options.penalty / n)
    for kind in ("values", "covers", "sizes"):
        for r in rows.row_of_node[kind]:
            rho[r[r >= 0]] = options.real_penalty / n
    began = time.perf_counter()

    def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, logz = _shares(theta, rows, f, log_weight, allowed, start, group_w, sens)
        g = row_values(rows, f, w, sens) - rows.b + rho * theta
        return logz - float(theta @ rows.b) + 0.5 * float(rho @ theta**2), g

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


@dataclass(frozen=True)
class ScalingOptions:
    """``sweeps``: passes over every tree's rows; ``step_cap``: the largest change of one
    multiplier in one step; ``damping``: the share of each Newton step taken; ``time_limit``: seconds."""

    sweeps: int = 60
    step_cap: float = 4.0
    damping: float = 1.0
    time_limit: float | None = 30.0

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


def _normalise(logm: np.ndarray, start: np.ndarray, group_w: np.ndarray) -> np.ndarray:
    """Each (completion, class)'s share of the records from its log mass, group by group."""
    top = np.maximum.reduceat(logm.max(axis=1), start[:-1])
    size = np.diff(start)
    x = np.exp(logm - np.repeat(top, size)[:, None])
    z = np.add.reduceat(x.sum(axis=1), start[:-1])
    return x * np.repeat(group_w / z, size)[:, None]


def scale_completions(
    rows: CompletionRows, f: Features, log_weight: np.ndarray, allowed: np.ndarray, start: np.ndarray, group_w: np.ndarray,
    sens: np.ndarray, options: ScalingOptions = ScalingOptions(),
) -> CompletionSolution:
    """The same maximum-entropy problem by cyclic iterative scaling (Darroch & Ratcliff 1972;
    Csiszár 1975): tree after tree, every leaf's multipliers take one Newton step on that tree's
    rows with the others fixed (a row of 0/1 coefficients: the exact scaling step log(b / value)),
    the groups renormalised after each; one sweep costs (completions × trees). A sample that
    cannot meet every row leaves a violation, reported in records, never hidden."""
    began = time.perf_counter()
    n_rows, n = rows.n_rows, rows.n_records
    logm = np.where(allowed, log_weight[:, None], -np.inf)
    theta = np.zeros(n_rows + 1)
    m = f.mult or {}
    k = allowed.shape[1]
    done = 0
    tiny = 1e-12 / n

    def leaf_step(kind: str, j: int, w: np.ndarray) -> None:
        idx = f.rows[kind][:, j]
        mult = m[kind][:, j] if kind in m else np.ones(len(idx))
        if kind == "counts":
            for c in range(k):
                r = np.where(idx < n_rows, idx + c, n_rows)
                got = np.bincount(r, weights=w[:, c] * mult, minlength=n_rows + 1)[:n_rows]
                hit = np.unique(r[r < n_rows])
                d = np.zeros(n_rows + 1)
                d[hit] = np.clip(np.log(np.maximum(rows.b[hit], tiny) / np.maximum(got[hit], tiny)), -options.step_cap, options.step_cap)
                theta[:n_rows] += d[:n_rows]
                logm[:, c] += d[r] * mult
            return
        if kind == "values":
            coef = (np.arange(k)[None, :] == rows.targets[rows.trees["values"][j]]).astype(float) - f.alpha[:, j : j + 1]
        elif kind == "covers":
            coef = np.broadcast_to(f.hessian[:, j : j + 1], w.shape)
        else:
            coef = np.ones_like(w)
        coef = coef * mult[:, None]
        got = np.bincount(idx, weights=(w * coef).sum(axis=1), minlength=n_rows + 1)[:n_rows]
        hit = np.unique(idx[idx < n_rows])
        d = np.zeros(n_rows + 1)
        if kind == "sizes":
            d[hit] = np.log(np.maximum(rows.b[hit], tiny) / np.maximum(got[hit], tiny))
        else:
            curv = np.bincount(idx, weights=(w * coef**2).sum(axis=1), minlength=n_rows + 1)[:n_rows]
            d[hit] = options.damping * (rows.b[hit] - got[hit]) / np.maximum(curv[hit], tiny)
        d = np.clip(d, -options.step_cap, options.step_cap)
        theta[:n_rows] += d[:n_rows]
        logm[:] += d[idx][:, None] * coef

    order = [(kind, j, int(t)) for kind in ("counts", "values", "covers", "sizes") for j, t in enumerate(rows.trees[kind])]
    order.sort(key=lambda x: x[2])
    while done < options.sweeps:
        done += 1
        for kind, j, _ in order:
            leaf_step(kind, j, _normalise(logm, start, group_w))
        if rows.sa_row >= 0:
            w = _normalise(logm, start, group_w)
            cells = len(rows.b) - rows.sa_row
            got = np.bincount(sens, weights=w.sum(axis=1), minlength=cells) if (sens >= 0).all() else w.sum(axis=0)
            d = np.clip(np.log(np.maximum(rows.b[rows.sa_row :], tiny) / np.maximum(got[:cells], tiny)), -options.step_cap, options.step_cap)
            theta[rows.sa_row : n_rows] += d
            logm[:] += d[sens][:, None] if (sens >= 0).all() else d[None, :k]
        if options.time_limit is not None and time.perf_counter() - began > options.time_limit:
            break
    w = _normalise(logm, start, group_w)
    values = row_values(rows, f, w, sens)
    off = np.abs(values - rows.b) * n
    return CompletionSolution(theta[:n_rows], w, values, off, done, time.perf_counter() - began, bool((off <= rows.slack).all()), "iterative scaling")
