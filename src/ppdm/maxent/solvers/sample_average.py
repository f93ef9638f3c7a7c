"""The forest dual over a fixed sample of the chains: the sample-average approximation.

Stochastic approximation (:mod:`ppdm.maxent.solvers.sampled`) brings the multipliers λ near the
optimum but leaves a bias of its own: a first-order fit converges slowly where posteriors reach 0
or 1, and the bias it leaves is not Monte-Carlo noise (no batch mean sees it). Here the dual is
minimised exactly over the empirical measure of a fixed sample (sample-average approximation,
Shapiro, Dentcheva & Ruszczyński 2009, ch. 5; Geyer & Thompson 1992 for the Monte-Carlo
likelihood of an exponential family):

    L̂(λ) = Σ_q w_q log( (1/n_q) Σ_{s ∈ q} Z_λ(u_s) / Z_λ₀(u_s) ) + λ·b + θ_SA·sa,

where u_s are the states the chains of group q visited with the multipliers λ₀ fixed and
Z_λ(u) = Σ_c exp(−E_λ(u, c)) sums the class out (the sampled cells weigh Z_λ/Z_λ₀: importance
sampling). L̂ is convex (a log-sum-exp of functions linear in λ); its gradient is b minus the
rows' values under the reweighted sample, computed exactly, so a deterministic quasi-Newton
method (L-BFGS-B: Byrd, Lu, Nocedal & Zhu 1995; bounds keep label rows' multipliers
non-negative and every multiplier within the cap) minimises it to any tolerance. What is left is
the error of the sample itself, which shrinks as 1/√(samples) and is measured:

* **the fit's standard error** by the delete-a-block jackknife (Quenouille 1956; Efron & Stein
  1981) over blocks of independent chains: λ is refitted without each block (warm-started), and
  the spread of the posteriors those multipliers give on the whole sample is the fit's
  contribution to every posterior's error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize as so

from ppdm.errors import check_options
from ppdm.maxent.constraints.forest_factors import ForestFactors
from ppdm.maxent.solvers.gibbs import GibbsChains, logsumexp, softmax


@dataclass(frozen=True)
class SampleAverageOptions:
    """Settings of :func:`refine`."""

    #: Largest |multiplier| (a row whose published value is 0 has none that meets it).
    cap: float = 30.0
    #: Largest move of a multiplier in one refinement (a trust region: the sample says nothing of
    #: cells it never visited, and a row none of its states reaches would run to the cap).
    radius: float = 2.0
    #: Stop when no row's gradient (projected on the bounds) exceeds this many records.
    tol_records: float = 1e-3
    #: Iterations of L-BFGS-B per solve (the jackknife's warm-started refits: ``jackknife_iterations``).
    iterations: int = 1_000
    jackknife_iterations: int = 200

    def __post_init__(self) -> None:
        check_options(self)  # a flag 'no' or a time limit '5' is refused here, naming the field


class SampleSet:
    """States of every chain over some sweeps with the multipliers λ₀ fixed (see the module docstring),
    each distinct state of a group once: ``group``, ``leaves`` (states × trees), ``sens`` (the sampled
    sensitive cell; ``None`` when the sensitive value is the class or no tree splits on it) and
    ``count`` (states × blocks: how often the chains of each block visited it)."""

    def __init__(self, chains: GibbsChains, blocks: int) -> None:
        self.f = chains.f
        self.blocks = max(blocks, 1)
        self.chain_group = chains.group
        rank = np.arange(chains.n_chains) - np.searchsorted(chains.group, chains.group)
        self.chain_block = rank % self.blocks
        self.w_q = np.bincount(chains.group, weights=chains.weight, minlength=self.f.groups.n_groups)
        self.theta0, self.sa0 = chains.theta, chains.sa_sens
        self.sampled_sens = not self.f.sens_is_class and self.f.sens_attr >= 0
        self._states: list[np.ndarray] = []

    def keep(self, chains: GibbsChains) -> None:
        """The chains' current states."""
        parts = [self.chain_group[:, None], self.chain_block[:, None], chains.L]
        if self.sampled_sens:
            parts.append(chains.X[:, [self.f.sens_attr]])
        self._states.append(np.hstack(parts).astype(np.int64))

    def freeze(self) -> None:
        """Count the distinct states per block and compute their log Z at λ₀."""
        states = np.concatenate(self._states)
        self.sweeps = len(self._states)
        self._states = []
        T = len(self.f.trees)
        key = np.delete(states, 1, axis=1)
        unique, inverse = np.unique(key, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        self.count = np.bincount(inverse * self.blocks + states[:, 1], minlength=len(unique) * self.blocks).reshape(-1, self.blocks).astype(float)
        self.group = unique[:, 0].astype(np.intp)
        self.leaves = unique[:, 1 : 1 + T].astype(np.intp)
        self.sens = unique[:, 1 + T].astype(np.intp) if self.sampled_sens else None
        self.M = self.f.mult[self.group].astype(float)
        gc = self.f.group_class[self.group]
        k = self.f.n_classes
        self.class_mask = np.where((gc >= 0)[:, None] & (np.arange(k)[None, :] != gc[:, None]), -np.inf, 0.0)
        self.ell0 = self.log_z(self.theta0, self.sa0)[0]

    def energies(self, theta: np.ndarray, sa_sens: np.ndarray) -> np.ndarray:
        """−E_λ(u, c) plus the class mask, per state and class."""
        out = -np.einsum("st,stc->sc", self.M, theta[self.leaves]) + self.class_mask
        if self.f.sens_is_class:
            out -= sa_sens[None, :]
        elif self.sens is not None:
            out -= sa_sens[self.sens][:, None]
        return out

    def log_z(self, theta: np.ndarray, sa_sens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log Z_λ(u) per state and the class's conditional given u."""
        logit = self.energies(theta, sa_sens)
        return logsumexp(logit), softmax(logit)


class SampleAverage:
    """L̂ over a :class:`SampleSet` (without its block ``leave_out``), in the variables
    x = (λ, θ_SA without its last cell, fixed at 0).

    When the sensitive cell is a sampled input, θ_SA stays at ``sa_fixed`` (the stochastic fit's):
    the sample holds the cell itself, whose indicator is a far noisier estimate of the published
    distribution than the Rao–Blackwellised conditional the stochastic fit reads."""

    def __init__(self, f: ForestFactors, samples: SampleSet, leave_out: int | None = None, sa_fixed: np.ndarray | None = None) -> None:
        self.f, self.s = f, samples
        self.AT = f.A.T.tocsr()
        self.n_rows = len(f.b)
        self.n_s = f.domain.sensitive.size
        self.has_sa = f.sa is not None and samples.sens is None
        self.sa_fixed = np.zeros(self.n_s) if sa_fixed is None else sa_fixed
        g = f.groups.n_groups
        total = samples.count.sum(axis=1)
        self.count = total if leave_out is None else total - samples.count[:, leave_out]
        self.group = samples.group
        self.n_q = np.bincount(self.group, weights=self.count, minlength=g)
        self.w_q = samples.w_q
        self.live = self.n_q > 0
        self.mass = float(self.w_q[self.live].sum())

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lam = x[: self.n_rows]
        if not self.has_sa:
            return lam, self.sa_fixed
        sa = np.zeros(self.n_s)
        sa[:-1] = x[self.n_rows :]
        return lam, sa

    def join(self, lam: np.ndarray, sa: np.ndarray) -> np.ndarray:
        return np.concatenate([lam, sa[:-1] - sa[-1]]) if self.has_sa else lam.copy()

    def bounds(self, x0: np.ndarray, cap: float, radius: float) -> list[tuple[float, float]]:
        """Within ``radius`` of ``x0`` and ``cap`` of 0; label rows' multipliers non-negative."""
        lo = np.full(len(x0), -cap)
        lo[: self.n_rows][self.f.le] = 0.0
        lo = np.maximum(lo, x0 - radius)
        hi = np.minimum(cap, x0 + radius)
        return list(zip(lo.tolist(), np.maximum(hi, lo).tolist()))

    def weights(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """Per state its share of its group's records (w_q × self-normalised importance weight),
        the class's conditional, and Σ_q w_q log(mean importance weight)."""
        lam, sa = self.split(x)
        theta = np.asarray(self.AT @ lam).reshape(-1, self.f.n_classes)
        ell, pc = self.s.log_z(theta, sa)
        g = self.f.groups.n_groups
        seen = self.count > 0
        log_r = np.where(seen, ell - self.s.ell0, -np.inf)
        top = np.full(g, -np.inf)
        np.maximum.at(top, self.group, log_r)
        top[~np.isfinite(top)] = 0.0
        r = self.count * np.exp(log_r - top[self.group])
        tot = np.bincount(self.group, weights=r, minlength=g)
        lse = np.zeros(g)
        lse[self.live] = np.log(tot[self.live]) + top[self.live] - np.log(self.n_q[self.live])
        share = np.where(seen, self.w_q[self.group] * r / np.maximum(tot[self.group], 1e-300), 0.0)
        return share, pc, float(self.w_q[self.live] @ lse[self.live])

    def dual(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """L̂(x) and its gradient."""
        f = self.f
        lam, sa = self.split(x)
        share, pc, value = self.weights(x)
        k = f.n_classes
        weight = (share[:, None] * pc)[:, None, :] * self.s.M[:, :, None]
        N = np.zeros((f.flat.n_nodes, k))
        leaves = self.s.leaves.ravel()
        for c in range(k):
            N[:, c] = np.bincount(leaves, weights=weight[:, :, c].ravel(), minlength=f.flat.n_nodes)
        grad = f.b - np.asarray(f.A @ N.ravel())
        value += float(lam @ f.b)
        if self.has_sa:
            assert f.sa is not None
            sa_val = self.sa_values(share, pc, sa)
            value += float(sa @ f.sa) + self.unsampled_sa(sa)
            grad = np.concatenate([grad, (f.sa - sa_val)[:-1]])
        return value, grad

    def unsampled_sa(self, sa: np.ndarray) -> float:
        """The sensitive cell's own log-partition when no tree splits on it (it is not sampled)."""
        if self.f.sens_is_class:
            return 0.0
        return self.mass * float(logsumexp(-sa[None, :])[0])

    def sa_values(self, share: np.ndarray, pc: np.ndarray, sa: np.ndarray) -> np.ndarray:
        """The weighted distribution of the sensitive cell."""
        if self.f.sens_is_class:
            return np.asarray(share @ pc)
        return self.mass * softmax(-sa[None, :])[0]

    def posterior(self, x: np.ndarray) -> np.ndarray:
        """Per group, the reweighted sample's distribution of the sensitive cell (groups × cells)."""
        share, pc, _ = self.weights(x)
        g = self.f.groups.n_groups
        out = np.zeros((g, self.n_s))
        if self.f.sens_is_class:
            for c in range(self.n_s):
                out[:, c] = np.bincount(self.group, weights=share * pc[:, c], minlength=g)
        elif self.s.sens is not None:
            np.add.at(out, (self.group, self.s.sens), share)
        else:
            out[:] = softmax(-self.split(x)[1][None, :])[0] * self.w_q[:, None]
        return out / np.maximum(self.w_q, 1e-300)[:, None]

    def minimise(self, x0: np.ndarray, options: SampleAverageOptions, iterations: int) -> np.ndarray:
        """L-BFGS-B from ``x0`` to a gradient of ``options.tol_records`` records."""
        n = self.f.groups.n_records
        res = so.minimize(
            self.dual, x0, jac=True, method="L-BFGS-B", bounds=self.bounds(x0, options.cap, options.radius),
            options={"maxiter": iterations, "gtol": options.tol_records / n, "ftol": 0.0, "maxcor": 20},
        )
        return np.asarray(res.x)


def refine(f: ForestFactors, samples: SampleSet, lam: np.ndarray, sa: np.ndarray, options: SampleAverageOptions) -> tuple[np.ndarray, np.ndarray]:
    """The multipliers that minimise L̂ over ``samples``, from (``lam``, ``sa``)."""
    problem = SampleAverage(f, samples, sa_fixed=sa)
    x = problem.minimise(problem.join(lam, sa), options, options.iterations)
    return problem.split(x)


def fit_std_error(f: ForestFactors, samples: SampleSet, lam: np.ndarray, sa: np.ndarray, options: SampleAverageOptions) -> np.ndarray:
    """The jackknife standard error (groups × cells) of the posteriors due to the fit of λ alone:
    λ refitted without each block of chains, its posteriors read on the whole sample."""
    whole = SampleAverage(f, samples, sa_fixed=sa)
    x = whole.join(lam, sa)
    base = whole.posterior(x)
    B = samples.blocks
    diffs = []
    for b in range(B):
        part = SampleAverage(f, samples, leave_out=b, sa_fixed=sa)
        diffs.append(whole.posterior(part.minimise(x, options, options.jackknife_iterations)) - base)
    D = np.array(diffs)
    return np.sqrt((B - 1) / B * ((D - D.mean(axis=0)) ** 2).sum(axis=0))
