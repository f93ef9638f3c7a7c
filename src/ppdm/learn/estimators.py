"""scikit-learn style estimators on the grower: ``ID3Classifier`` and ``C45Classifier``.

Both take a pandas DataFrame whose categorical columns (``category``, text or bool dtype) are used
as they are, without one-hot encoding, and expose the fitted :class:`~ppdm.tree.Tree` as
``tree_``. Parameters are stored unchanged in ``__init__``; learned state ends in ``_``. There is
no randomness: ties between equally good splits go to the attribute listed first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from ppdm.data.counting import compress, is_dask
from ppdm.errors import DataError, NotFittedError, PpdmError
from ppdm.learn.counts import CountSource, ExactCounts
from ppdm.learn.criteria import get_criterion
from ppdm.learn.encoding import EncodedTable, check_frame, encode_table
from ppdm.learn.grower import Grower, StoppingRules
from ppdm.learn.pruning import error_based_prune
from ppdm.learn.splitter import SplitRules
from ppdm.tree.model import Tree

if TYPE_CHECKING:
    from sklearn.utils import Tags


#: With a Dask X: the most distinct (attributes, class) rows held in memory; beyond, ID3 and C4.5
#: count level by level (one pass over the data per tree level) and kADET refuses.
MAX_DISTINCT_ROWS = 5_000_000


class _TreeClassifier(ClassifierMixin, BaseEstimator):
    """Shared predict/score plumbing; subclasses say how to grow."""

    _algorithm = "tree"

    def __init__(
        self,
        criterion: str,
        max_depth: int | None,
        min_samples_split: int,
        min_samples_leaf: int,
        min_gain: float,
        categorical: Sequence[str] | None,
        max_distinct_rows: int = MAX_DISTINCT_ROWS,
    ) -> None:
        """Store the parameters every grower reads (unchecked, as scikit-learn asks: fit checks them)."""
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_gain = min_gain
        self.categorical = categorical
        self.max_distinct_rows = max_distinct_rows

    def _check_params(self) -> None:
        if self.max_depth is not None and (not isinstance(self.max_depth, (int, np.integer)) or self.max_depth < 0):
            raise PpdmError(f"max_depth must be a non-negative integer or None, got {self.max_depth!r}")
        if self.min_samples_leaf < 1:
            raise PpdmError(f"min_samples_leaf must be at least 1, got {self.min_samples_leaf!r}")
        if self.min_gain < 0:
            raise PpdmError(f"min_gain must be non-negative, got {self.min_gain!r}")

    def _encode(self, X: pd.DataFrame, y: Sequence | pd.Series | np.ndarray) -> EncodedTable | None:
        """The table the grower counts on; ``None`` for a Dask ``X`` with more distinct
        (attributes, class) rows than ``max_distinct_rows`` (count level by level instead)."""
        self._check_params()
        weights = None
        if is_dask(X):
            counted = _counted(X, y, self.max_distinct_rows)
            if counted is None:
                return None
            X, y, weights = counted
        table = encode_table(X, y, categorical=self.categorical or (), weights=weights)
        self.feature_names_in_ = np.array([a.name for a in table.attributes], dtype=object)
        self.n_features_in_ = len(table.attributes)
        self.classes_ = table.classes
        return table

    @staticmethod
    def _require_categorical(table: EncodedTable, learner: str, remedy: str) -> None:
        """Reject a table with a numeric column: ``learner`` splits categorical attributes only."""
        numeric = [a.name for a in table.attributes if not a.is_categorical]
        if numeric:
            raise DataError(f"{learner} splits categorical attributes only; column {numeric[0]!r} is numeric ({remedy})")

    def _level_wise(self, X: object, y: object, learner: str) -> tuple[EncodedTable, CountSource]:
        """The attributes and classes of a Dask table too large to hold as distinct rows, and a
        count source that reads it once per tree level (:mod:`ppdm.learn.levelwise`)."""
        from ppdm.learn.levelwise import LevelCounts, domains

        if not is_dask(y):
            raise DataError("with a Dask X, y must be a Dask Series from the same frame (e.g. frame['class'])")
        names = [str(c) for c in X.columns]
        frame = X.assign(**{_CLASS: y})
        attributes, classes = domains(frame, names, _CLASS, self.categorical or ())
        described = EncodedTable(attributes, {}, np.zeros(0, dtype=np.intp), classes)
        self.feature_names_in_ = np.array(names, dtype=object)
        self.n_features_in_ = len(names)
        self.classes_ = classes
        return described, LevelCounts(frame, attributes, _CLASS, classes)

    def _grower(self, table: EncodedTable, source: CountSource | None = None, **kwargs: object) -> Grower:
        """The grower over ``source`` (default: the exact counts of ``table``) with this estimator's criterion."""
        class_name = getattr(self, "_y_name", None) or "class"
        return Grower(
            ExactCounts(table) if source is None else source,
            table.attributes,
            get_criterion(self.criterion),
            list(table.classes),
            class_attribute=class_name,
            algorithm=self._algorithm,
            **kwargs,  # type: ignore[arg-type]
        )

    def _fitted_tree(self) -> Tree:
        if not hasattr(self, "tree_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(X, y) first")
        return self.tree_

    def _check_X(self, X: pd.DataFrame) -> pd.DataFrame:
        frame = check_frame(X)
        missing = [c for c in self.feature_names_in_ if c not in frame.columns]
        if missing:
            raise DataError(f"X lacks column(s) seen in fit: {', '.join(map(repr, missing))}")
        return frame

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Predicted class of each row of ``X``."""
        tree = self._fitted_tree()
        return tree.predict(self._check_X(X))

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class frequencies of each row's leaf, columns in ``classes_`` order."""
        return self._fitted_tree().predict_proba(self._check_X(X))

    def apply(self, X: pd.DataFrame) -> np.ndarray:
        """Id of the leaf each row lands in."""
        return self._fitted_tree().apply(self._check_X(X))

    def _remember_y_name(self, y: object) -> None:
        named = isinstance(y, pd.Series) or is_dask(y)
        self._y_name = y.name if named and y.name is not None else "class"

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = False
        return tags


_CLASS = "__ppdm_class__"

def _counted(X: object, y: object, limit: int) -> tuple[pd.DataFrame, pd.Series, np.ndarray] | None:
    """A Dask ``X`` and class ``y`` reduced to their distinct (attributes, class) rows and the
    records each stands for: ID3, C4.5 and kADET see a record only through these values, so
    they learn the same tree from the weighted rows as from the records, in one pass over the data
    (``None``: more than ``limit`` of them)."""
    if not is_dask(y):
        raise DataError("with a Dask X, y must be a Dask Series from the same frame (e.g. frame['class'])")
    columns = [str(c) for c in X.columns]
    if _CLASS in columns:
        raise DataError(f"column {_CLASS!r} is reserved")
    counted = compress(X.assign(**{_CLASS: y}), [*columns, _CLASS], limit=limit)
    if counted is None:
        return None
    frame, weights = counted
    assert weights is not None
    return frame[columns], frame[_CLASS], weights


class ID3Classifier(_TreeClassifier):
    """ID3: multiway splits on categorical attributes by information gain (Quinlan 1986).

    The algorithm of paper 001 §4.2: a node becomes a leaf when it is pure or no attribute is
    left; otherwise it splits on the best attribute with one branch per value of the attribute's
    domain (an empty branch is a leaf labelled with its parent's majority class), and each
    attribute is used at most once on a path.

    Parameters
    ----------
    criterion: "entropy" (information gain, the default), "gini" or "gain_ratio".
    max_depth: stop splitting at this depth (None: no limit).
    min_samples_split: a node with fewer rows is a leaf.
    min_samples_leaf: at least two branches of a split must hold this many rows.
    min_gain: a split must decrease impurity by more than this.
    categorical: columns to treat as categorical even if numeric (e.g. coded values).
    builder: "depth-first" (ID3) or "best-first" (one queue over the whole tree).
    max_leaf_nodes: with the best-first builder, stop at this many leaves.
    max_distinct_rows: with a Dask X, the most distinct (attributes, class) rows counted in memory
        (default :data:`MAX_DISTINCT_ROWS`, 5,000,000); beyond, the tree is counted level by level
        (one pass over the data per level: depth-first, exact counts only).

    Numeric columns are rejected: discretize them, declare them ``categorical`` or use
    :class:`C45Classifier`.
    """

    _algorithm = "id3"
    _learner = "ID3"
    _numeric_remedy = "discretize it, pass categorical=[...], or use C45Classifier"

    def __init__(
        self,
        criterion: str = "entropy",
        max_depth: int | None = None,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        min_gain: float = 0.0,
        categorical: Sequence[str] | None = None,
        builder: str = "depth-first",
        max_leaf_nodes: int | None = None,
        max_distinct_rows: int = MAX_DISTINCT_ROWS,
    ) -> None:
        super().__init__(criterion, max_depth, min_samples_split, min_samples_leaf, min_gain, categorical, max_distinct_rows)
        self.builder = builder
        self.max_leaf_nodes = max_leaf_nodes

    def fit(self, X: pd.DataFrame, y: Sequence | pd.Series | np.ndarray) -> ID3Classifier:
        """Grow the tree on ``X`` (categorical columns) and class labels ``y``."""
        self._remember_y_name(y)
        table = self._encode(X, y)
        builder = self.builder
        if table is None:
            if type(self)._count_source is not ID3Classifier._count_source or builder != "depth-first" or self.max_leaf_nodes is not None:
                raise DataError(
                    f"X has more than {self.max_distinct_rows:,} distinct rows: counted level by level, which grows "
                    "exact-count depth-first trees only (no best-first builder, no max_leaf_nodes)"
                )
            table, source = self._level_wise(X, y, self._learner)
            scale, builder = 1, "level-wise"
            self._require_categorical(table, self._learner, self._numeric_remedy)
        else:
            self._require_categorical(table, self._learner, self._numeric_remedy)
            source, scale = self._count_source(table)
        grower = self._grower(
            table,
            source,
            split_rules=SplitRules(min_samples_leaf=self.min_samples_leaf * scale, min_gain=self.min_gain),
            stopping=StoppingRules(self.max_depth, self.min_samples_split * scale, self.max_leaf_nodes),
            builder=builder,
        )
        self.tree_ = grower.grow()
        return self

    def _count_source(self, table: EncodedTable) -> tuple[CountSource, float]:
        """Where the grower's counts come from, and the factor on ``min_samples_*``: exact counts, 1."""
        return ExactCounts(table), 1


class C45Classifier(_TreeClassifier):
    """C4.5 (Quinlan 1993): gain ratio, binary thresholds on numeric attributes, pruning.

    Split selection follows C4.5 release 8: among candidates whose information gain is at least
    the average, the highest gain ratio wins; a numeric threshold is the best-gain midpoint
    between observed values, each side holding at least ``clip(0.1·n/n_classes, min_samples_leaf,
    25)`` rows, and its gain is charged ``log2(#thresholds)/n``. Categorical attributes split
    multiway (used once per path), numeric ones may be split again below. After growing, the tree
    is pruned by C4.5's pessimistic error estimate at confidence ``confidence`` by discarding
    subtrees only (no subtree raising: paper 002 §3.3). Missing values are not handled: drop or
    fill them first.

    Parameters
    ----------
    confidence: C4.5's CF for error-based pruning (smaller prunes more); 0.25 by default.
    prune: whether to prune at all.
    min_samples_leaf: C4.5's MINOBJS (default 2): at least two branches must hold this many rows.
    criterion, max_depth, min_samples_split, min_gain, categorical, max_distinct_rows: as for
        :class:`ID3Classifier`.
    """

    _algorithm = "c45"

    def __init__(
        self,
        criterion: str = "gain_ratio",
        confidence: float = 0.25,
        prune: bool = True,
        max_depth: int | None = None,
        min_samples_split: int = 4,
        min_samples_leaf: int = 2,
        min_gain: float = 0.0,
        categorical: Sequence[str] | None = None,
        max_distinct_rows: int = MAX_DISTINCT_ROWS,
    ) -> None:
        super().__init__(criterion, max_depth, min_samples_split, min_samples_leaf, min_gain, categorical, max_distinct_rows)
        self.confidence = confidence
        self.prune = prune

    def fit(self, X: pd.DataFrame, y: Sequence | pd.Series | np.ndarray) -> C45Classifier:
        """Grow and prune the tree on ``X`` (categorical and numeric columns) and labels ``y``."""
        if not 0 < self.confidence < 1:
            raise PpdmError(f"confidence must be in (0, 1), got {self.confidence!r}")
        self._remember_y_name(y)
        table = self._encode(X, y)
        source: CountSource | None = None
        if table is None:
            table, source = self._level_wise(X, y, "C4.5")
        grower = self._grower(
            table,
            source,
            split_rules=SplitRules(self.min_samples_leaf, self.min_gain, c45_thresholds=True),
            stopping=StoppingRules(self.max_depth, self.min_samples_split),
            selection="c45" if get_criterion(self.criterion).ratio else "best",
            builder="depth-first" if source is None else "level-wise",
        )
        tree = grower.grow()
        self.unpruned_tree_ = tree
        self.tree_ = error_based_prune(tree, self.confidence) if self.prune else tree
        return self
