"""Stochastic maximum entropy over a forest's factor graph: Gibbs sampling and iterative scaling.

The dual of a forest's audit (:mod:`ppdm.maxent.constraints.forest_factors`) gives each group q the Gibbs
distribution P(u, c | q) ∝ exp(−Σ_t m_t Θ_t[leaf_t(q, u), c] − θ_SA[s]) over the cells u of the
unknown split columns and the class c. The dual's gradient is the rows' expected values, sums of
the expected leaf counts N_t[Λ, c]; they are estimated here by sampling, never by enumerating the
product of the trees' partitions (whose size is exponential in the number of trees):

* **Gibbs sweeps** (Geman & Geman 1984) over the unknown columns of many chains per group, the
  class summed out (collapsed Gibbs: P(u | q) ∝ Σ_c exp(−E(u, c))). A column's conditional over
  all its cells is computed in one vectorised pass over every tree: a tree whose current path does
  not split on the column keeps its leaf whatever the column's value; the others are re-routed from
  the first node on the path that does, once per interval of the column their splits leave (a
  numeric column's cells form intervals; a categorical column is routed once per category), and the
  per-cell energies are summed from those intervals by a difference array.
* **Rao–Blackwellised estimates**: the class's contribution to the leaf counts is its exact
  conditional given the sampled cells, and the sensitive value's is its exact conditional at its
  own Gibbs step (or given the cells, when it is the class).
* **Damped parallel iterative scaling** (generalised iterative scaling, Darroch & Ratcliff 1972):
  every row with non-negative coefficients moves its multiplier by ``step`` × log(estimate /
  published value) (an exact iterative-scaling step for one tree alone), all rows at once, on
  estimates from fresh sweeps of persistent chains (stochastic approximation, Younes 1989; the
  multipliers are averaged over the last half of the fit, Polyak & Juditsky 1992). Inequality rows
  (labels) take a projected gradient step.
* **Monte-Carlo averaging** of the final posteriors with the multipliers fixed, and a standard
  error for each one by batch means over (chain, batch) blocks; the rows' remaining violation is
  estimated the same way.

What comes out is an estimate, said so: status ``"sampled"``, standard errors, and the rows'
violation. No posterior from samples proves a value: certainty is left to sound reasoning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ppdm.errors import MaxEntError
from ppdm.maxent.constraints.forest_factors import ForestFactors
from ppdm.maxent.solvers.gibbs import GibbsChains

#: Called after every sweep with (sweeps done, sweeps in all).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SampledOptions:
    """Settings of :func:`solve_sampled` (the defaults: see ``benchmarks/README.md``, "Partial knowledge")."""

    #: Seed of the chains (the answer is reproducible given it).
    random_state: int = 0
    #: Chains in all, spread over the groups (at least ``min_chains`` and at most ``max_chains`` each).
    chains: int = 40_000
    min_chains: int = 1
    max_chains: int = 64
    #: Iterative-scaling steps, each on the leaf counts of ``sweeps_per_step`` sweeps.
    fit_steps: int = 120
    sweeps_per_step: int = 1
    #: Damping of every step (1: a tree alone would be fitted in one step); ``None``: ``damping``
    #: / (the number of trees that count a record, with multiplicity, on average).
    step: float | None = None
    damping: float = 0.6
    #: Heavy-ball momentum of the steps (Polyak 1964).
    momentum: float = 0.8
    #: Sweeps with the multipliers fixed whose posteriors are averaged, in ``batches`` batches.
    sample_sweeps: int = 100
    batches: int = 10
    #: Sweeps before the first step (the chains leave their uniform start).
    burn_in: int = 5
    #: Records added to both sides of a log ratio (a row whose published value is 0 still moves).
    smoothing: float = 0.05
    #: Largest |multiplier| (a row whose published value is 0 has none that meets it).
    cap: float = 30.0
    #: Floats in one chunk of the per-cell energy arrays.
    chunk_floats: int = 4_000_000


@dataclass
class SampledSolution:
    """The estimate: per group the posterior over the sensitive cells and its Monte-Carlo standard
    error, the rows' estimated values (``row_values``) and their standard errors, the multipliers."""

    posterior: np.ndarray
    std_error: np.ndarray
    row_values: np.ndarray
    row_std_error: np.ndarray
    sa_values: np.ndarray | None
    multipliers: np.ndarray
    chains: int
    sweeps: int
    seconds: float
    history: list[float]

    def max_violation(self, b: np.ndarray, le: np.ndarray) -> float:
        gap = self.row_values - b
        gap = np.where(le, np.maximum(gap, 0.0), np.abs(gap))
        return float(gap.max(initial=0.0))


def solve_sampled(f: ForestFactors, options: SampledOptions | None = None, progress: Progress | None = None) -> SampledSolution:
    """Fit the multipliers by damped iterative scaling on sampled leaf counts, then average the
    posteriors with them fixed (see the module docstring)."""
    start = time.perf_counter()
    options = SampledOptions() if options is None else options
    if options.batches < 2 or options.sample_sweeps < options.batches:
        raise MaxEntError("sampling needs at least 2 batches and a sweep per batch")
    rng = np.random.default_rng(options.random_state)
    chains = GibbsChains(f, _chains_per_group(f, options), rng, options.chunk_floats)
    n = f.groups.n_records
    k = f.n_classes
    A, b, le = f.A, f.b, f.le
    AT = A.T.tocsr()
    sa = f.sa
    n_s = f.domain.sensitive.size
    lam = np.zeros(len(b))
    lam_sa = np.zeros(n_s)
    eps = options.smoothing / n
    step = options.step if options.step is not None else options.damping / max(float(chains.weight @ chains.M.sum(axis=1)), 1.0)
    total = options.burn_in + options.fit_steps * options.sweeps_per_step + options.sample_sweeps
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    for _ in range(options.burn_in):
        chains.sweep()
        tick()
    avg_lam, avg_sa, n_avg = np.zeros_like(lam), np.zeros_like(lam_sa), 0
    vel, vel_sa = np.zeros_like(lam), np.zeros_like(lam_sa)
    history: list[float] = []
    scaled = ~le & (A.min(axis=1).toarray().ravel() >= 0) if A.shape[0] else np.zeros(0, dtype=bool)
    for it in range(options.fit_steps):
        N = np.zeros((f.flat.n_nodes, k))
        s_val = np.zeros(n_s)
        for _ in range(options.sweeps_per_step):
            chains.sweep()
            tick()
            N += chains.leaf_counts()
            s_val += chains.sa_values()
        N /= options.sweeps_per_step
        s_val /= options.sweeps_per_step
        value = np.asarray(A @ N.ravel())
        history.append(float(np.where(le, np.maximum(value - b, 0), np.abs(value - b)).max(initial=0.0) * n))
        vel = options.momentum * vel + step * _direction(A, N, value, b, scaled, eps)
        lam = np.clip(lam + vel, -options.cap, options.cap)
        lam[le] = np.maximum(lam[le], 0.0)
        if sa is not None:
            vel_sa[:-1] = options.momentum * vel_sa[:-1] + step * np.log((s_val[:-1] + eps) / (sa[:-1] + eps))
            lam_sa = np.clip(lam_sa + vel_sa, -options.cap, options.cap)
        if it >= options.fit_steps // 2:
            avg_lam += lam
            avg_sa += lam_sa
            n_avg += 1
        chains.set_theta(np.asarray(AT @ lam).reshape(-1, k), lam_sa)
    if n_avg:
        lam, lam_sa = avg_lam / n_avg, avg_sa / n_avg
        chains.set_theta(np.asarray(AT @ lam).reshape(-1, k), lam_sa)
    post, se, rows, rows_se, sa_vals = _average(chains, f, options, tick)
    return SampledSolution(
        post, se, rows, rows_se, sa_vals, lam, chains.n_chains, done, time.perf_counter() - start, history,
    )


def _direction(A: sp.csr_matrix, N: np.ndarray, value: np.ndarray, b: np.ndarray, scaled: np.ndarray, eps: float) -> np.ndarray:
    """Each row's step before damping: log(estimate / published) for a row with non-negative
    coefficients (iterative scaling), the violation relative to the row's mass otherwise."""
    out = np.zeros(len(b))
    out[scaled] = np.log((value[scaled] + eps) / (b[scaled] + eps))
    other = ~scaled
    if other.any():
        mass = np.asarray(abs(A[other]) @ N.ravel())
        out[other] = (value[other] - b[other]) / (mass + eps)
    return out


def _chains_per_group(f: ForestFactors, options: SampledOptions) -> np.ndarray:
    """``options.chains`` spread evenly over the groups that are not fully known individuals."""
    pinned = f.known_group if f.known_group is not None else np.zeros(f.groups.n_groups, dtype=bool)
    per = int(np.clip(options.chains // max(int((~pinned).sum()), 1), options.min_chains, options.max_chains))
    return np.where(pinned, 0, per)


def _average(
    chains: GibbsChains, f: ForestFactors, options: SampledOptions, tick: Callable[[], None],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Posteriors and row values averaged over ``sample_sweeps`` sweeps with the multipliers fixed,
    with batch-means standard errors over (chain, batch) blocks."""
    g, n_s, k = f.groups.n_groups, f.domain.sensitive.size, f.n_classes
    per = options.sample_sweeps // options.batches
    s1, s2 = np.zeros((g, n_s)), np.zeros((g, n_s))
    blocks = np.bincount(chains.group, minlength=g) * options.batches
    row_batches, sa_batches = [], []
    for _ in range(options.batches):
        acc = np.zeros((chains.n_chains, n_s))
        N = np.zeros((f.flat.n_nodes, k))
        s_val = np.zeros(n_s)
        for _ in range(per):
            chains.sweep()
            tick()
            acc += chains.sens_p
            N += chains.leaf_counts()
            s_val += chains.sa_values()
        acc /= per
        for c in range(n_s):
            s1[:, c] += np.bincount(chains.group, weights=acc[:, c], minlength=g)
            s2[:, c] += np.bincount(chains.group, weights=acc[:, c] ** 2, minlength=g)
        row_batches.append(np.asarray(f.A @ (N / per).ravel()))
        sa_batches.append(s_val / per)
    nb = np.maximum(blocks, 1)[:, None]
    post = s1 / nb
    var = np.maximum(s2 / nb - post**2, 0.0) * nb / np.maximum(nb - 1, 1)
    se = np.sqrt(var / nb)
    pinned = f.known_group if f.known_group is not None else np.zeros(g, dtype=bool)
    if pinned.any():
        assert f.true_sens is not None
        first = f.groups.first_rows()
        post[pinned] = np.eye(n_s)[f.true_sens[first[pinned]]]
        se[pinned] = 0.0
    R = np.array(row_batches)
    S = np.array(sa_batches)
    return (
        post, se, R.mean(axis=0), R.std(axis=0, ddof=1) / np.sqrt(len(R)),
        S.mean(axis=0) if f.sa is not None else None,
    )
