"""What θ protects (paper 001 §5.3, made quantitative).

The paper argues qualitatively: θ = 1 and θ = 0 disclose everything, privacy grows as θ moves
towards 1/2. Two standard measures of what an adversary who knows θ learns from one disguised
value:

* :func:`posterior` / :func:`posterior_confidence`: the adversary's belief about the true value
  after seeing the reported one, by Bayes' rule from a prior (the population distribution,
  which the collector can itself estimate: :func:`ppdm.randomize.estimate_table`).
* :func:`ldp_epsilon`: the local-differential-privacy ε of one attribute's channel,
  ``ε = ln(max_{v,u,u'} P(v | u) / P(v | u'))``: ``|ln(θ/(1 − θ))|`` for binary attributes and
  ``|ln(θ(k − 1)/(1 − θ))|`` for k values (the liar's uniform choice among the other values).

A record of several attributes: under the attribute scheme the channels compose, ε adds up
(:func:`record_ldp_epsilon`). Under paper 001's record scheme (one coin for the whole record) a
reported binary record ``x*`` says the truth is ``x*`` or its complement, nothing else: for two
or more disguised attributes some reports are impossible from some true records, so the record
channel is *not* ε-LDP for any finite ε, although each attribute on its own is.
:func:`record_posterior` gives the adversary's confidence in that case.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ppdm.errors import PpdmError
from ppdm.randomize.channel import check_scheme, check_theta

__all__ = ["channel_matrix", "ldp_epsilon", "posterior", "posterior_confidence", "record_ldp_epsilon", "record_posterior"]


def channel_matrix(theta: float, k: int = 2) -> np.ndarray:
    """P(reported v | true u) of one disguised attribute with k values (rows: reported)."""
    theta = check_theta(theta)
    if k < 2:
        raise PpdmError(f"an attribute needs at least 2 values to be disguised, got k={k}")
    lie = (1.0 - theta) / (k - 1)
    return np.full((k, k), lie) + np.eye(k) * (theta - lie)


def _prior(prior: Sequence[float] | None, k: int) -> np.ndarray:
    p = np.full(k, 1.0 / k) if prior is None else np.asarray(prior, dtype=float)
    if p.shape != (k,) or (p < 0).any() or not np.isclose(p.sum(), 1.0):
        raise PpdmError(f"prior must be {k} non-negative probabilities summing to 1, got {prior!r}")
    return p


def posterior(theta: float, prior: Sequence[float] | None = None, k: int | None = None) -> np.ndarray:
    """P(true u | reported v) for one attribute (rows: reported v, columns: true u).

    ``prior`` is the distribution of the true values (default uniform over ``k`` values; k
    defaults to the prior's length, or 2). A reported value that cannot occur gets a row of NaN.
    """
    k = len(prior) if prior is not None else (k or 2)
    p = _prior(prior, k)
    joint = channel_matrix(theta, k) * p[None, :]
    evidence = joint.sum(axis=1, keepdims=True)
    return np.divide(joint, evidence, out=np.full_like(joint, np.nan), where=evidence > 0)


def posterior_confidence(theta: float, prior: Sequence[float] | None = None, k: int | None = None) -> float:
    """The adversary's best confidence about a true value after seeing a reported one.

    ``max_v max_u P(true u | reported v)`` over the reports that can occur: 1 at θ ∈ {0, 1} for
    binary data, ``max(θ, 1 − θ)`` for a binary attribute with a uniform prior, and never below
    the prior's largest probability.
    """
    post = posterior(theta, prior, k)
    return float(np.nanmax(post))


def ldp_epsilon(theta: float, k: int = 2) -> float:
    """ε of one disguised attribute's channel (∞ at θ ∈ {0, 1}, 0 when reports are uniform)."""
    m = channel_matrix(theta, k)
    hi, lo = m.max(), m.min()
    if lo == 0.0:
        return math.inf
    return float(math.log(hi / lo))


def record_ldp_epsilon(theta: float, ks: Sequence[int], scheme: str = "record") -> float:
    """ε of a whole record's channel with disguised attributes of ``ks`` values.

    ``"attribute"`` scheme: the sum of the attributes' ε. ``"record"`` scheme (paper 001): the
    attribute's ε if there is a single one, else ∞: a lying record changes every attribute at
    once, so a report that differs from the truth in some but not all attributes has
    probability 0.
    """
    check_scheme(scheme)
    theta = check_theta(theta)
    ks = list(ks)
    if not ks:
        return 0.0
    if scheme == "attribute" or len(ks) == 1:
        return float(sum(ldp_epsilon(theta, k) for k in ks))
    return math.inf


def record_posterior(theta: float, prior_true: float, prior_complement: float) -> float:
    """Record scheme, binary data: P(the reported record x* is the true one | x* reported).

    The truth is x* (reported truthfully, probability θ·P(x*)) or its complement (a lie,
    (1 − θ)·P(x̄*)). With equal priors this is θ; skewed priors move it either way.
    """
    theta = check_theta(theta)
    num = theta * prior_true
    den = num + (1.0 - theta) * prior_complement
    if den <= 0:
        raise PpdmError("the reported record and its complement both have prior probability 0")
    return float(num / den)
