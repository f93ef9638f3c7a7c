"""RR-ID3: ID3 on randomized-response data (paper 001 §4.2), as a count source for the grower.

:class:`EstimatedCounts` answers the grower's questions (class counts of a node, counts by
candidate attribute value and class) for a node described by its *path predicate*
``A_1 = e_1 ∧ … ∧ A_p = e_p`` rather than by its rows: the rows of the true data that reach a
node are unknown, only the disguised table is. Every count is ``n · P(E)`` for a conjunction E,
estimated from the disguised proportions P*(E) and P*(Ē) by equations 3; the grower, criterion
and builder are the ones plain ID3 uses.

Where the estimator lives. The channel and its inverse (one implementation, shared with the
rest of ``ppdm.randomize``) are in :mod:`ppdm.randomize.channel`, a row above ``learn`` in
DESIGN.md's layer table; this module only counts.

Two ways of counting, same numbers:

* *complement path* (paper 001's setting: scheme ``"record"``, every disguised attribute binary,
  the class binary or undisguised): equations 3 need only the disguised records matching E and
  those matching its complement Ē, so a node keeps both row sets, split like ID3's rows. The cost
  of a node is that of exact ID3 on twice the rows.
* *indicator path* (attributes with more than two values, or scheme ``"attribute"``): each path
  attribute is collapsed to the indicator ``[A_i = e_i]`` and the node's counts are read off the
  inverse of the channel on the (2, …, 2, values, classes) tensor of disguised counts
  (Kronecker-structured, :func:`ppdm.randomize.channel.invert`).

Estimates outside [0, n] are clipped and renormalised (:func:`clip_and_renormalise`): negative
cells become 0 and a table is rescaled to the node's estimated size, itself floored at 0. At
θ = 1 (and θ = 0 for binary data) the estimates are the exact counts and RR-ID3 builds exactly
plain ID3's tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ppdm.errors import DataError, NotIdentifiableError, PpdmError
from ppdm.learn.counts import CountSource
from ppdm.learn.encoding import EncodedTable
from ppdm.learn.estimators import ID3Classifier
from ppdm.randomize.channel import (
    Scheme,
    check_scheme,
    check_theta,
    clip_and_renormalise,
    indicator_lie,
    invert,
    lie_matrix,
)
from ppdm.tree.splits import CategoricalSplit, Split

__all__ = ["EstimatedCounts", "RandomizedResponseTreeClassifier"]


@dataclass(frozen=True)
class PathState:
    """A node: its path predicate ((attribute index, value code), ...) and, on the complement
    path, the disguised rows matching the predicate (``rows``) and its complement (``comp``),
    and the node's unclipped class-count estimate when its parent's tables already gave it."""

    path: tuple[tuple[int, int], ...]
    rows: np.ndarray | None = None
    comp: np.ndarray | None = None
    counts: np.ndarray | None = None


class EstimatedCounts:
    """Counts estimated from a disguised table (paper 001 §4.2); implements ``CountSource``.

    Parameters
    ----------
    table: the disguised training table, encoded (categorical attributes only).
    theta: the probability θ that a respondent told the truth.
    disguised: names of the attributes that were disguised (default: all).
    class_disguised: whether the class was disguised too (§4.2 covers both).
    scheme: ``"record"`` (paper 001) or ``"attribute"``, as in :func:`ppdm.randomize.disguise`.
    """

    def __init__(
        self,
        table: EncodedTable,
        theta: float,
        disguised: Iterable[str] | None = None,
        class_disguised: bool = True,
        scheme: Scheme = "record",
    ) -> None:
        self.theta = check_theta(theta)
        self.scheme = check_scheme(scheme)
        numeric = [a.name for a in table.attributes if not a.is_categorical]
        if numeric:
            raise DataError(f"randomized-response ID3 needs categorical attributes; column {numeric[0]!r} is numeric")
        names = [a.name for a in table.attributes]
        chosen = set(names if disguised is None else disguised)
        unknown = chosen - set(names)
        if unknown:
            raise DataError(f"disguised attribute(s) not in the table: {', '.join(map(repr, sorted(map(str, unknown))))}")
        if table.weights is not None:
            raise DataError("counts estimated from disguised data need the disguised records themselves, not a Dask-counted table")
        self.n_classes = table.n_classes
        self._index = {name: i for i, name in enumerate(names)}
        self._k = np.array([len(a.categories) for a in table.attributes], dtype=np.intp)
        self._disguised = np.array([name in chosen for name in names])
        for name, k, d in zip(names, self._k, self._disguised):
            if d and k < 2:
                raise DataError(f"attribute {name!r} has {k} value(s) and cannot have been disguised")
        self._v_max = int(self._k.max(initial=1))
        self._codes = np.column_stack([table.columns[n] for n in names]).astype(np.intp)
        self._y = table.y.astype(np.intp)
        self._class_lie = lie_matrix(self.n_classes) if class_disguised and self.n_classes >= 2 else None
        self._complement = self.scheme == "record" and bool((self._k[self._disguised] == 2).all()) and (
            self._class_lie is None or self.n_classes == 2
        )
        self._last: tuple[PathState | None, np.ndarray] = (None, np.zeros(0))
        if self._complement:
            self._init_complement()

    def noise_factor(self) -> float:
        """``1/μ²``: how much noisier an estimated count is than an exact one (at worst, one axis).

        μ is the smallest eigenvalue in absolute value of a disguised attribute's channel,
        ``θ + (1 − θ)·(−1/(k − 1)) = (kθ − 1)/(k − 1)``: ``2θ − 1`` for binary attributes. Under
        the record scheme with binary attributes that is the smallest eigenvalue of the channel
        on any node's tensor; under the attribute scheme eigenvalues multiply along a path, so
        deep nodes are noisier than this factor says.
        """
        ks = [int(k) for k, d in zip(self._k, self._disguised) if d]
        if self._class_lie is not None:
            ks.append(self.n_classes)
        if not ks:
            return 1.0
        mu = min(abs(k * self.theta - 1.0) / (k - 1) for k in ks)
        if mu == 0.0:
            raise NotIdentifiableError(f"theta = {self.theta:g} cannot be inverted for attributes with {sorted(set(ks))} values")
        return 1.0 / mu**2

    # -- the complement path (binary data, paper 001) --------------------------------------
    def _init_complement(self) -> None:
        if self.theta == 0.5:
            raise NotIdentifiableError(
                "theta = 0.5: disguised binary data carry no information about the true data, "
                "P(E) cannot be estimated (paper 001 §3); choose theta away from 0.5"
            )
        flip = self._disguised & (self._k == 2)
        self._codes_bar = np.where(flip[None, :], 1 - self._codes, self._codes)
        self._y_bar = 1 - self._y if self._class_lie is not None else self._y
        self._keys = self._cell_keys(self._codes, self._y)
        self._keys_bar = self._cell_keys(self._codes_bar, self._y_bar)

    def _cell_keys(self, codes: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Each record's flat (attribute, value, class) cell for every attribute, for one bincount."""
        offsets = np.arange(codes.shape[1], dtype=np.intp)[None, :] * self._v_max
        return (offsets + codes) * self.n_classes + y[:, None]

    def _combine(self, n_e: np.ndarray, n_comp: np.ndarray) -> np.ndarray:
        """Equations 3 on counts: N(E) = (θ·N*(E) − (1 − θ)·N*(Ē)) / (2θ − 1)."""
        t = self.theta
        if t == 1.0:
            return n_e
        return (t * n_e - (1.0 - t) * n_comp) / (2.0 * t - 1.0)

    # -- CountSource -------------------------------------------------------------------------
    def root(self) -> PathState:
        if self._complement:
            everyone = np.arange(len(self._y), dtype=np.intp)
            return PathState((), everyone, everyone)
        return PathState(())

    def class_counts(self, state: PathState) -> np.ndarray:
        k = self.n_classes
        if self._complement:
            assert state.rows is not None and state.comp is not None
            if state.counts is not None:
                return clip_and_renormalise(state.counts)
            n_e = np.bincount(self._y[state.rows], minlength=k).astype(float)
            n_c = np.bincount(self._y_bar[state.comp], minlength=k).astype(float)
            return clip_and_renormalise(self._combine(n_e, n_c))
        pattern, lies = self._pattern(state.path)
        disguised = np.bincount(pattern * k + self._y, minlength=(2 ** len(state.path)) * k)
        tensor = disguised.reshape((2,) * len(state.path) + (k,)).astype(float)
        estimate = invert(tensor, self.theta, lies + [self._class_lie], self.scheme)
        return clip_and_renormalise(estimate[(1,) * len(state.path)])

    def categorical_tables(self, state: PathState, attributes: Sequence[str]) -> np.ndarray:
        cols = np.array([self._index[a] for a in attributes], dtype=np.intp)
        if self._complement:
            assert state.rows is not None and state.comp is not None
            every = self._combine(self._tables(self._keys, state.rows), self._tables(self._keys_bar, state.comp))
            self._last = (state, every)  # the depth-first builder splits this node next
            estimate = every[cols]
        else:
            estimate = self._indicator_tables(state.path, cols)
        return _clip_tables(estimate)

    def threshold_tables(self, state: PathState, attribute: str) -> tuple[np.ndarray, np.ndarray]:
        raise DataError(f"randomized-response ID3 has no numeric attributes; {attribute!r} is numeric")

    def children(self, state: PathState, split: Split) -> list[PathState]:
        a = self._index.get(split.attribute, -1)
        if not isinstance(split, CategoricalSplit) or a < 0 or split.n_branches != self._k[a]:
            raise PpdmError("randomized-response ID3 grows one branch per attribute value only")
        paths = [state.path + ((a, v),) for v in range(split.n_branches)]
        if not self._complement:
            return [PathState(path) for path in paths]
        assert state.rows is not None and state.comp is not None
        values, values_bar = self._codes[state.rows, a], self._codes_bar[state.comp, a]
        # a child's class counts are a row of the parent's (attribute, value, class) estimate
        known = self._last[1][a] if self._last[0] is state else [None] * len(paths)
        return [
            PathState(path, state.rows[values == v], state.comp[values_bar == v], known[v])
            for v, path in enumerate(paths)
        ]

    # -- helpers -----------------------------------------------------------------------------
    def _tables(self, keys: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Disguised counts of ``rows`` by (attribute, value, class), every attribute: one bincount."""
        d, v, k = keys.shape[1], self._v_max, self.n_classes
        flat = np.bincount(keys[rows].ravel(), minlength=d * v * k)
        return flat.reshape(d, v, k).astype(float)

    def _pattern(self, path: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, list[np.ndarray | None]]:
        """Each disguised record's match pattern on the path (bit of axis j = [A_j = e_j])."""
        pattern = np.zeros(len(self._y), dtype=np.intp)
        lies: list[np.ndarray | None] = []
        for a, e in path:
            pattern = pattern * 2 + (self._codes[:, a] == e)
            lies.append(indicator_lie(int(self._k[a])) if self._disguised[a] else None)
        return pattern, lies

    def _indicator_tables(self, path: tuple[tuple[int, int], ...], cols: np.ndarray) -> np.ndarray:
        """Estimated (attribute, value, class) tables of a node, grouped by domain size."""
        pattern, lies = self._pattern(path)
        k, p = self.n_classes, len(path)
        out = np.zeros((len(cols), self._v_max, k))
        groups: dict[tuple[int, bool], list[int]] = {}
        for i, c in enumerate(cols):
            groups.setdefault((int(self._k[c]), bool(self._disguised[c])), []).append(i)
        for (size, disguised), members in groups.items():
            sub = self._codes[:, cols[members]]
            keys = ((pattern[:, None] * len(members) + np.arange(len(members))) * size + sub) * k + self._y[:, None]
            flat = np.bincount(keys.ravel(), minlength=(2**p) * len(members) * size * k)
            tensor = flat.reshape((2,) * p + (len(members), size, k)).astype(float)
            value_lie = lie_matrix(size) if disguised else None
            estimate = invert(tensor, self.theta, lies + [None, value_lie, self._class_lie], self.scheme)
            out[members, :size, :] = estimate[(1,) * p]
        return out


def _clip_tables(tables: np.ndarray) -> np.ndarray:
    """:func:`clip_and_renormalise` of every attribute's (value, class) table at once."""
    if tables.size == 0 or tables.min() >= 0.0:
        return tables
    total = np.maximum(tables.sum(axis=(1, 2)), 0.0)
    clipped = np.maximum(tables, 0.0)
    mass = clipped.sum(axis=(1, 2))
    scale = np.divide(total, mass, out=np.zeros_like(mass), where=mass > 0)
    return clipped * scale[:, None, None]


class RandomizedResponseTreeClassifier(ID3Classifier):
    """ID3 learnt from randomized-response data (paper 001 §4.2), scikit-learn API.

    ``fit(X, y)`` takes the *disguised* records as collected (:func:`ppdm.randomize.disguise`)
    and grows ID3 on counts estimated from them; prediction is ordinary (the tree is applied to
    true records). Fitting involves no randomness: the data were randomized by the respondents.

    Parameters
    ----------
    theta: the probability θ with which respondents told the truth (known to the collector).
    class_disguised: whether ``y`` was disguised too (the default, as in §5).
    disguised: the columns of ``X`` that were disguised (default: all).
    scheme: ``"record"`` (paper 001, one coin per respondent) or ``"attribute"``.
    effective_sizes: if true (the default), ``min_samples_split`` and ``min_samples_leaf`` count
        *effective* records: a node needs ``min_samples_split / μ²`` estimated records, where
        ``μ = min_i |k_i·θ − 1| / (k_i − 1)`` over the disguised attributes (``|2θ − 1|`` for
        binary data). The variance of an estimated count is about ``1/μ²`` times that of an exact
        one, so this many estimated records carry as much information as ``min_samples_split``
        exact ones. Paper 001 has no such rule; without it (``False``) a tree grown on noisy
        estimates splits down to nodes whose labels are noise (see docs/randomized_response.md).
        At θ = 1 (and θ = 0 for binary data) μ = 1 and the rules are ID3's.
    criterion, max_depth, min_samples_split, min_samples_leaf, min_gain, categorical, builder,
    max_leaf_nodes: as for :class:`~ppdm.learn.ID3Classifier` (sizes are estimated counts).

    ``noise_factor_`` is the fitted ``1/μ²``.
    """

    _algorithm = "rr-id3"
    _learner = "randomized-response ID3"
    _numeric_remedy = "binarize it at the median or bin it before disguising: ppdm.randomize"

    def __init__(
        self,
        theta: float = 0.8,
        class_disguised: bool = True,
        disguised: Sequence[str] | None = None,
        scheme: str = "record",
        effective_sizes: bool = True,
        criterion: str = "entropy",
        max_depth: int | None = None,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        min_gain: float = 0.0,
        categorical: Sequence[str] | None = None,
        builder: str = "depth-first",
        max_leaf_nodes: int | None = None,
    ) -> None:
        super().__init__(
            criterion, max_depth, min_samples_split, min_samples_leaf, min_gain, categorical, builder, max_leaf_nodes
        )
        self.theta = theta
        self.class_disguised = class_disguised
        self.disguised = disguised
        self.scheme = scheme
        self.effective_sizes = effective_sizes

    def _count_source(self, table: EncodedTable) -> tuple[CountSource, float]:
        """Counts estimated from the disguised table, and ``noise_factor_`` (fitted here) on the sizes."""
        source = EstimatedCounts(table, self.theta, self.disguised, self.class_disguised, self.scheme)
        self.noise_factor_ = source.noise_factor() if self.effective_sizes else 1.0
        return source, self.noise_factor_
