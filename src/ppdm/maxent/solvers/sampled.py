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
* **Sample-average refinement**: the stochastic fit leaves a bias no batch mean sees (a first-order
  method converges slowly where posteriors reach 0 or 1). The chains' states over
  ``refine_sweeps`` sweeps with the multipliers fixed are kept, and the dual over that sample,
  importance-reweighted to any multipliers, is minimised deterministically by L-BFGS-B within a
  trust region (:mod:`ppdm.maxent.solvers.sample_average`), ``refine_rounds`` times, each on fresh
  states: what is left of the fit's error is the sample's, and it is measured by a jackknife over
  blocks of chains.
* **Monte-Carlo averaging** of the final posteriors with the multipliers fixed, the class's
  conditional given all columns but the one just drawn averaged over the sweep (Rao–Blackwell once
  more); each posterior's Monte-Carlo standard error is the larger of the batch means over
  (chain, batch) blocks and the spread of the chains' own means (independent chains: this one sees
  a chain that keeps to one mode), and its standard error adds the fit's jackknife error in
  quadrature. The rows' remaining violation is estimated the same way.

What comes out is an estimate, said so: status ``"sampled"``, standard errors, and the rows'
violation. The standard errors are calibrated against the explicit enumeration
(``experiments/sampled_agreement.py``, ``docs/ensembles.md``): the root mean square of
Δ/SE is about 1, so about 1 % of posteriors fall beyond 3 standard errors (a normal error would
put 0.3 % there; the error estimates have few degrees of freedom). No posterior from samples
proves a value: certainty is left to sound reasoning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ppdm.errors import MaxEntError, check_options
from ppdm.maxent.constraints.forest_factors import ForestFactors
from ppdm.maxent.solvers.gibbs import GibbsChains
from ppdm.maxent.solvers.sample_average import SampleAverageOptions, SampleSet, fit_std_error, refine

#: Called after every sweep with (sweeps done, sweeps in all).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SampledOptions:
    """Settings of :func:`solve_sampled` (the defaults: see ``benchmarks/README.md``, "Partial knowledge")."""

    #: Seed of the chains (the answer is reproducible given it).
    random_state: int = 0
    #: Chains in all, spread over the groups (at least ``min_chains`` and at most ``max_chains`` each).
    chains: int = 40_000
    min_chains: int = 2
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
    #: Sample-average refinements after the stochastic fit: each keeps ``refine_sweeps`` sweeps
    #: (after ``refine_burn_in``) and minimises the dual over them (:mod:`~ppdm.maxent.solvers.sample_average`).
    refine_rounds: int = 2
    refine_sweeps: int = 20
    refine_burn_in: int = 5
    #: Blocks of chains the fit's jackknife leaves out one at a time (0: no fit error is measured).
    jackknife_blocks: int = 8
    refine: SampleAverageOptions = field(default_factory=SampleAverageOptions)
    #: Iterative-scaling steps of θ_SA alone after the refinement when the sensitive cell is a
    #: sampled input (the refinement keeps θ_SA: see :class:`~ppdm.maxent.solvers.sample_average.SampleAverage`).
    sa_steps: int = 20

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


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
    total = (
        options.burn_in + options.fit_steps * options.sweeps_per_step + options.sample_sweeps
        + (options.refine_rounds * options.refine_sweeps + (options.refine_rounds + 2) * options.refine_burn_in if options.refine_rounds else 0)
        + (options.sa_steps - options.refine_burn_in if options.refine_rounds and sa is not None and not f.sens_is_class and f.sens_attr >= 0 else 0)
    )
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
    samples = None
    for r in range(options.refine_rounds):
        for _ in range(options.refine_burn_in * (1 + (r == 0))):  # the chains settle under new multipliers
            chains.sweep()
            tick()
        samples = _keep(chains, options, tick)
        lam, lam_sa = refine(f, samples, lam, lam_sa, options.refine)
        chains.set_theta(np.asarray(AT @ lam).reshape(-1, k), lam_sa)
    refined_sa = lam_sa
    if samples is not None and samples.sens is not None and sa is not None:
        lam_sa = _fit_sa(chains, sa, lam_sa, options, tick)
    elif samples is not None:
        for _ in range(options.refine_burn_in):
            chains.sweep()
            tick()
    post, se, rows, rows_se, sa_vals = _average(chains, f, options, tick)
    if samples is not None and options.jackknife_blocks >= 2:
        fit_se = fit_std_error(f, samples, lam, refined_sa, options.refine)
        pinned = f.known_group if f.known_group is not None else np.zeros(len(se), dtype=bool)
        se = np.where(pinned[:, None], se, np.sqrt(se**2 + fit_se**2))
    return SampledSolution(
        post, se, rows, rows_se, sa_vals, lam, chains.n_chains, done, time.perf_counter() - start, history,
    )


def _fit_sa(chains: GibbsChains, sa: np.ndarray, lam_sa: np.ndarray, options: SampledOptions, tick: Callable[[], None]) -> np.ndarray:
    """θ_SA alone by half-damped iterative scaling on the chains' Rao–Blackwellised distribution of
    the sensitive cell, one sweep a step, averaged over the last half of the steps."""
    eps = options.smoothing / max(chains.f.groups.n_records, 1)
    lam_sa = lam_sa.copy()
    total, n_avg = np.zeros_like(lam_sa), 0
    for it in range(options.sa_steps):
        chains.sweep()
        tick()
        value = chains.sa_values()
        lam_sa[:-1] += 0.5 * np.log((value[:-1] + eps) / (sa[:-1] + eps))
        chains.set_theta(chains.theta, lam_sa.copy())
        if it >= options.sa_steps // 2:
            total += lam_sa
            n_avg += 1
    if n_avg:
        lam_sa = total / n_avg
        chains.set_theta(chains.theta, lam_sa)
    return lam_sa


def _keep(chains: GibbsChains, options: SampledOptions, tick: Callable[[], None]) -> SampleSet:
    """``options.refine_sweeps`` states of every chain under its current multipliers."""
    samples = SampleSet(chains, options.jackknife_blocks)
    for _ in range(options.refine_sweeps):
        chains.sweep()
        tick()
        samples.keep(chains)
    samples.freeze()
    return samples


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


def _between_chains(means: np.ndarray, group: np.ndarray, g: int) -> np.ndarray:
    """The standard error of each group's mean over its chains' own means (chains × cells): the
    chains are independent with the multipliers fixed, so this one sees a chain that stays in one
    mode for the whole average, which batches along the chain do not."""
    n = np.bincount(group, minlength=g).astype(float)[:, None]
    s1 = np.zeros((g, means.shape[1]))
    s2 = np.zeros_like(s1)
    np.add.at(s1, group, means)
    np.add.at(s2, group, means**2)
    mean = s1 / np.maximum(n, 1)
    var = np.maximum(s2 / np.maximum(n, 1) - mean**2, 0.0) * n / np.maximum(n - 1, 1)
    return np.sqrt(var / np.maximum(n, 1))


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
    chain_sum = np.zeros((chains.n_chains, n_s))
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
        chain_sum += acc
        acc /= per
        for c in range(n_s):
            s1[:, c] += np.bincount(chains.group, weights=acc[:, c], minlength=g)
            s2[:, c] += np.bincount(chains.group, weights=acc[:, c] ** 2, minlength=g)
        row_batches.append(np.asarray(f.A @ (N / per).ravel()))
        sa_batches.append(s_val / per)
    nb = np.maximum(blocks, 1)[:, None]
    post = s1 / nb
    var = np.maximum(s2 / nb - post**2, 0.0) * nb / np.maximum(nb - 1, 1)
    se = np.maximum(np.sqrt(var / nb), _between_chains(chain_sum / (per * options.batches), chains.group, g))
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
