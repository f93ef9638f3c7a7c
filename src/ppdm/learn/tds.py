"""TDS, the anonymize-then-learn baseline of paper 002 §4 (Fung, Wang & Yu, ICDE 2005).

Top-down specialization starts with every quasi-identifier at the root of its hierarchy (the
whole table is one group) and repeatedly performs the best *valid* specialization: replace one
node ``v`` of an attribute's current cut by its children, for every record at once
(single-dimension recoding). A specialization is valid when the generalized table stays
k-anonymous: every combination of generalized quasi-identifier values (the paper's single
virtual identifier made of all quasi-identifiers) is held by at least ``k`` records. It is scored
by information gain per unit of anonymity lost::

    InfoGain(v)  = H(class | R_v) − Σ_c |R_c| / |R_v| · H(class | R_c)
    AnonyLoss(v) = A(before) − A(after),   A = the smallest group size
    Score(v)     = InfoGain(v) / (AnonyLoss(v) + 1)

Then ID3 or C4.5 (:class:`TDSClassifier`) is learned on the generalized training table, and test
records are generalized by the same cuts before they are classified.

Decisions where the sources leave room (also in ``docs/kanonymity.md``):

* ``Score`` divides by ``AnonyLoss + 1`` (no division by zero when a specialization costs no
  anonymity); ties go to the attribute listed first, then to the node first in the cut.
* Only *beneficial* specializations (InfoGain > 0) are performed; TDS stops when no valid,
  beneficial specialization is left.
* Numeric quasi-identifiers with a numeric hierarchy specialize along it. Without one they are
  specialized as Fung et al. do, dynamically: an interval is split in two at the midpoint with
  the best information gain among its records. A categorical quasi-identifier without a
  hierarchy gets the flat one (``ANY`` above every value).
* Only the training table is anonymized (paper 002 §4 notes that the original TDS runs chose
  the generalization on training and test data together).
* For C4.5, a generalized numeric attribute is given to the learner as the ordinal index of its
  interval, so C4.5 can still cut it into two ranges; for ID3 it is a categorical attribute
  with one value per interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from ppdm.data.hierarchy import Cut, Hierarchy
from ppdm.errors import AnonymityError, DataError, NotFittedError, PpdmError
from ppdm.learn.criteria import entropy
from ppdm.learn.encoding import _encode_classes, check_frame, is_categorical
from ppdm.learn.estimators import C45Classifier, ID3Classifier
from ppdm.tree.model import Tree

__all__ = ["TDSClassifier", "TopDownSpecialization"]


def _info_gain(y: np.ndarray, child: np.ndarray, n_children: int, n_classes: int) -> float:
    """Information gain of splitting records with classes ``y`` by ``child`` codes."""
    table = np.bincount(child * n_classes + y, minlength=n_children * n_classes).reshape(n_children, n_classes)
    parent = table.sum(axis=0)
    sizes = table.sum(axis=1)
    return float(entropy(parent) - (sizes * entropy(table)).sum() / max(parent.sum(), 1))


@dataclass
class _Candidate:
    """A node of an attribute's current cut, with how its records would be divided."""

    attribute: int
    node: object  # hierarchy label, or (lo, hi) for a dynamic interval
    rows: np.ndarray
    child: np.ndarray  # per row of ``rows``, the child it would go to
    n_children: int
    info_gain: float
    split_point: float | None = None


@dataclass
class _Attribute:
    """One quasi-identifier being specialized: by its hierarchy's cuts or by dynamic intervals."""

    name: str
    hierarchy: Hierarchy | None  # None: numeric, dynamic intervals
    values: np.ndarray  # leaf positions (hierarchy) or numbers (dynamic)
    as_text: bool = False  # values matched to a flat hierarchy by their text
    cut: Cut | None = None
    bounds: list[float] = field(default_factory=lambda: [-np.inf, np.inf])
    first_leaf: dict = field(default_factory=dict)


class TopDownSpecialization:
    """Anonymize a table to k-anonymity by top-down specialization (Fung, Wang & Yu 2005).

    Parameters
    ----------
    k: the anonymity parameter.
    quasi_identifiers: the columns to generalize (default: every column of ``X``); the other
        columns are left as they are.
    hierarchies: name → :class:`Hierarchy` (see the module docstring for attributes without one).

    After :meth:`fit`: ``cuts_`` (name → the final :class:`Cut`, or the interval bounds of a
    dynamically specialized numeric attribute), ``anonymity_`` (the smallest group size),
    ``specializations_`` (the performed specializations, in order, with their scores).
    """

    def __init__(self, k: int = 10, quasi_identifiers: Sequence[str] | None = None, hierarchies: Mapping[str, Hierarchy] | None = None) -> None:
        self.k = k
        self.quasi_identifiers = quasi_identifiers
        self.hierarchies = hierarchies

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, X: pd.DataFrame, y: Sequence | pd.Series | np.ndarray) -> TopDownSpecialization:
        """Specialize the quasi-identifiers of ``X`` as far as k-anonymity and the class ``y`` allow."""
        frame = check_frame(X)
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise PpdmError(f"k must be an integer >= 1, got {self.k!r}")
        if len(frame) < self.k:
            raise AnonymityError(f"the table has {len(frame)} record(s), fewer than k = {self.k}")
        y_arr = np.asarray(list(y) if not isinstance(y, (np.ndarray, pd.Series)) else y, dtype=object)
        if len(y_arr) != len(frame):
            raise DataError(f"y must be one label per row of X ({len(frame)} rows, got {len(y_arr)})")
        _, codes = _encode_classes(y_arr)
        self._y, self._n_classes = codes, int(codes.max()) + 1
        self.quasi_identifiers_ = self._qis(frame)
        self._attrs = [self._attribute(frame, name) for name in self.quasi_identifiers_]
        self._codes = np.zeros((len(frame), len(self._attrs)), dtype=np.int64)
        self.specializations_: list[tuple[str, str, float]] = []
        self._run()
        self.cuts_ = {a.name: (a.cut if a.cut is not None else list(a.bounds)) for a in self._attrs}
        self.anonymity_ = int(self._sizes.min())
        return self

    def _qis(self, frame: pd.DataFrame) -> list[str]:
        if self.quasi_identifiers is None:
            return [str(c) for c in frame.columns]
        if isinstance(self.quasi_identifiers, str):
            raise DataError(f"quasi_identifiers must be a list of column names, not the string {self.quasi_identifiers!r}")
        unknown = [q for q in self.quasi_identifiers if q not in frame.columns]
        if unknown:
            raise DataError(f"quasi-identifier(s) not among the columns of X: {', '.join(map(repr, unknown))}")
        return list(self.quasi_identifiers)

    def _attribute(self, frame: pd.DataFrame, name: str) -> _Attribute:
        column = frame[name]
        if column.isna().any():
            raise DataError(f"column {name!r} has missing values; drop or fill them first")
        hierarchy = (self.hierarchies or {}).get(name)
        as_text = False
        if hierarchy is None and is_categorical(column):
            values = sorted({str(v) for v in column.astype(object)})
            hierarchy = Hierarchy.categorical(name, {"ANY": values})
            as_text = True
        if hierarchy is None:
            return _Attribute(name, None, column.to_numpy(dtype=float))
        attr = _Attribute(name, hierarchy, np.zeros(0, dtype=np.int64), as_text, cut=hierarchy.top_cut())
        leaves = hierarchy.cut_at_depth(hierarchy.height).apply(self._prepared(attr, column))
        attr.values = leaves.cat.codes.to_numpy(dtype=np.int64)
        order = {leaf: i for i, leaf in enumerate(hierarchy.leaves())}
        attr.first_leaf = {node: order[hierarchy.leaves(node)[0]] for node in hierarchy.nodes}
        return attr

    @staticmethod
    def _prepared(attr: _Attribute, column: pd.Series) -> pd.Series:
        if attr.hierarchy is not None and attr.hierarchy.kind == "categorical":
            return column.astype(object).astype(str) if attr.as_text else column.astype(object)
        return column

    def _root_candidates(self) -> dict[tuple[int, object], _Candidate]:
        rows = np.arange(len(self._y))
        out = {}
        for i, attr in enumerate(self._attrs):
            node = attr.cut.nodes[0] if attr.cut is not None else (-np.inf, np.inf)
            cand = self._candidate(i, attr, node, rows)
            if cand is not None:
                out[(i, node)] = cand
        return out

    def _candidate(self, i: int, attr: _Attribute, node: object, rows: np.ndarray) -> _Candidate | None:
        """How specializing ``node`` of attribute ``i`` would divide its records ``rows``."""
        if len(rows) == 0:
            return None
        if attr.hierarchy is not None:
            kids = attr.hierarchy.children(node)
            if not kids:
                return None
            sizes = [len(attr.hierarchy.leaves(c)) for c in kids]
            child = np.repeat(np.arange(len(kids)), sizes)[attr.values[rows] - attr.first_leaf[node]]
            gain = _info_gain(self._y[rows], child, len(kids), self._n_classes)
            return _Candidate(i, node, rows, child, len(kids), gain)
        values = attr.values[rows]
        point = self._best_point(values, self._y[rows])
        if point is None:
            return None
        child = (values > point).astype(np.int64)
        gain = _info_gain(self._y[rows], child, 2, self._n_classes)
        return _Candidate(i, node, rows, child, 2, gain, point)

    def _best_point(self, values: np.ndarray, y: np.ndarray) -> float | None:
        """The midpoint between distinct values with the best information gain (dynamic TDS)."""
        uniq, inverse = np.unique(values, return_inverse=True)
        if len(uniq) < 2:
            return None
        k = self._n_classes
        table = np.bincount(inverse * k + y, minlength=len(uniq) * k).reshape(len(uniq), k)
        left = np.cumsum(table, axis=0)[:-1]
        children = np.stack([left, table.sum(axis=0) - left], axis=1).astype(float)
        sizes = children.sum(axis=-1)
        gain = entropy(table.sum(axis=0)) - (sizes * entropy(children)).sum(axis=1) / len(values)
        best = int(np.argmax(gain))
        return float((uniq[best] + uniq[best + 1]) / 2)

    def _run(self) -> None:
        """Perform the best valid beneficial specialization until none is left."""
        self._group = np.zeros(len(self._y), dtype=np.int64)
        self._sizes = np.array([len(self._y)])
        candidates = self._root_candidates()
        while True:
            best, best_score = None, -np.inf
            current = int(self._sizes.min())
            for cand in candidates.values():
                if cand.info_gain <= 1e-12:
                    continue
                after = self._anonymity_after(cand)
                if after < self.k:
                    continue
                score = cand.info_gain / (current - after + 1)
                if score > best_score + 1e-12:
                    best, best_score = cand, score
            if best is None:
                return
            del candidates[(best.attribute, best.node)]
            candidates.update(self._apply(best, best_score))

    def _anonymity_after(self, cand: _Candidate) -> int:
        """The smallest group size once ``cand`` is specialized (A after, for AnonyLoss).

        Every group holding a record of the node lies wholly inside it (the node is one of the
        group's generalized values), so only those groups are divided.
        """
        n_groups, m = len(self._sizes), cand.n_children
        g = self._group[cand.rows]
        touched = np.bincount(g, minlength=n_groups) > 0
        new = np.bincount(g * m + cand.child, minlength=n_groups * m)
        smallest_new = int(new[new > 0].min())
        return min(smallest_new, int(self._sizes[~touched].min())) if not touched.all() else smallest_new

    def _apply(self, cand: _Candidate, score: float) -> dict[tuple[int, object], _Candidate]:
        """Specialize ``cand`` for every record; returns the candidates of the new children."""
        attr = self._attrs[cand.attribute]
        column = self._codes[:, cand.attribute]
        if attr.cut is not None:
            position = attr.cut.nodes.index(cand.node)
            kids: list[object] = list(attr.hierarchy.children(cand.node))  # type: ignore[union-attr]
            attr.cut = attr.cut.specialize(cand.node)
            label = str(cand.node)
        else:
            lo, hi = cand.node  # type: ignore[misc]
            position = attr.bounds.index(lo)
            attr.bounds.insert(position + 1, float(cand.split_point))  # type: ignore[arg-type]
            kids = [(lo, cand.split_point), (cand.split_point, hi)]
            label = f"({_num(lo)}, {_num(hi)}]"
        column[column > position] += cand.n_children - 1
        column[cand.rows] = position + cand.child
        key = self._group * cand.n_children
        key[cand.rows] += cand.child
        _, inverse, self._sizes = np.unique(key, return_inverse=True, return_counts=True)
        self._group = inverse.ravel().astype(np.int64)
        self.specializations_.append((attr.name, label, float(score)))
        out = {}
        for c, node in enumerate(kids):
            new = self._candidate(cand.attribute, attr, node, cand.rows[cand.child == c])
            if new is not None:
                out[(cand.attribute, node)] = new
        return out

    # -- applying the cuts ----------------------------------------------------------------------
    def transform(self, X: pd.DataFrame, numeric: str = "label") -> pd.DataFrame:
        """``X`` with every quasi-identifier generalized by the fitted cuts.

        ``numeric="label"``: numeric QIs become categorical interval labels; ``"ordinal"``: the
        index of their interval (a float column, for C4.5). Other columns are unchanged.
        """
        if not hasattr(self, "cuts_"):
            raise NotFittedError("this TopDownSpecialization is not fitted yet: call fit(X, y) first")
        if numeric not in ("label", "ordinal"):
            raise PpdmError(f"numeric must be 'label' or 'ordinal', got {numeric!r}")
        frame = check_frame(X).copy()
        for attr in self._attrs:
            if attr.name not in frame.columns:
                raise DataError(f"X lacks quasi-identifier column {attr.name!r}")
            frame[attr.name] = self._generalize(attr, frame[attr.name], numeric)
        return frame

    def _generalize(self, attr: _Attribute, column: pd.Series, numeric: str) -> pd.Series:
        if attr.cut is not None:
            out = attr.cut.apply(self._prepared(attr, column))
            out.index = column.index
        else:
            bounds = np.asarray(attr.bounds)
            codes = np.searchsorted(bounds, column.to_numpy(dtype=float), side="left") - 1
            labels = [f"({_num(lo)}, {_num(hi)}]" for lo, hi in zip(bounds[:-1], bounds[1:])]
            out = pd.Series(pd.Categorical.from_codes(np.clip(codes, 0, len(labels) - 1), categories=labels, ordered=True), index=column.index)
        is_numeric = attr.hierarchy is None or attr.hierarchy.kind == "numeric"
        if is_numeric and numeric == "ordinal":
            return pd.Series(out.cat.codes.to_numpy(dtype=float), index=column.index)
        return out


def _num(x: float) -> str:
    return str(int(x)) if np.isfinite(x) and float(x).is_integer() else f"{x:g}"


class TDSClassifier(ClassifierMixin, BaseEstimator):
    """The TDS baseline of paper 002 §4: anonymize the training table by TDS, then learn.

    ``algorithm="id3"`` learns :class:`~ppdm.learn.ID3Classifier` on the generalized table (numeric
    QIs as interval labels), ``"c45"`` learns :class:`~ppdm.learn.C45Classifier` (numeric QIs as
    ordinal interval indices). Test records are generalized by the same cuts before prediction.

    Fitted attributes: ``anonymizer_`` (:class:`TopDownSpecialization`), ``learner_``, ``tree_``
    (over the generalized attributes), ``anonymity_``, ``classes_``.
    """

    def __init__(
        self,
        k: int = 10,
        quasi_identifiers: Sequence[str] | None = None,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        algorithm: str = "id3",
    ) -> None:
        self.k = k
        self.quasi_identifiers = quasi_identifiers
        self.hierarchies = hierarchies
        self.algorithm = algorithm

    def _numeric(self) -> str:
        return "ordinal" if self.algorithm == "c45" else "label"

    def fit(self, X: pd.DataFrame, y: Sequence | pd.Series | np.ndarray) -> TDSClassifier:
        """Anonymize ``X`` to k-anonymity by TDS and learn the tree on the result."""
        if self.algorithm not in ("id3", "c45"):
            raise PpdmError(f"algorithm must be 'id3' or 'c45', got {self.algorithm!r}")
        self.anonymizer_ = TopDownSpecialization(self.k, self.quasi_identifiers, self.hierarchies).fit(X, y)
        generalized = self.anonymizer_.transform(X, self._numeric())
        self.learner_ = (C45Classifier() if self.algorithm == "c45" else ID3Classifier()).fit(generalized, y)
        self.tree_: Tree = self.learner_.tree_
        self.classes_ = self.learner_.classes_
        self.anonymity_ = self.anonymizer_.anonymity_
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """``X`` generalized as the learner sees it."""
        if not hasattr(self, "anonymizer_"):
            raise NotFittedError("this TDSClassifier is not fitted yet: call fit(X, y) first")
        return self.anonymizer_.transform(X, self._numeric())

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Classes of ``X``'s rows after generalizing them by the training cuts."""
        return self.learner_.predict(self.transform(X))

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return self.learner_.predict_proba(self.transform(X))
