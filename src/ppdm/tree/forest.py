"""The ``Forest`` model: an ordered list of :class:`Tree` objects and how their predictions combine.

Publishers rarely release one tree: they release a random forest or gradient-boosted trees, and
what those reveal about each leaf's training rows is what paper 003 §3.1 audits for one tree
(Ferry et al., *Trained Random Forests Completely Reveal your Dataset*, ICML 2024, rebuild a whole
training set from a scikit-learn forest's per-leaf counts). A forest combines its trees one of
three ways:

* ``"vote"``: every tree votes for its leaf's label; the probabilities are the vote shares.
* ``"mean-proba"``: the trees' leaf class frequencies are averaged (scikit-learn's random forests
  and extra trees).
* ``"additive"``: each class's raw score is ``base_score`` plus the leaf values of the trees
  that add to it (``outputs[i]`` is tree ``i``'s class index), through a ``link``: ``"logistic"``
  (binary log-loss: one score, P(``classes[1]``) = σ(score)) or ``"softmax"`` (one score per
  class). Leaf values already include the learning rate (gradient boosting: scikit-learn,
  XGBoost, LightGBM).

A **regressor** is a forest without classes (``classes == ()``; :attr:`Forest.is_regressor`):
``class_attribute`` names its numeric target, every leaf's ``value`` is a prediction, and it
combines its trees as ``"mean"`` (random forests: the mean of the trees' leaf values, each a mean
target of the tree's rows) or ``"additive"`` with the ``"identity"`` link (squared-error gradient
boosting: ``base_score`` plus the leaf values). :mod:`ppdm.tree.regression` imports them.

What each tree publishes is its :class:`Disclosure` (what its labels and class counts reveal, as
for a single tree) and ``known[i]``, the per-node quantities its file holds, derived from what
its nodes carry (:data:`QUANTITIES`):

* ``"labels"``: each node's label is its training rows' majority class (never in an additive
  forest: there a label is a placeholder, the majority class where class counts are known,
  else the class the leaf's score favours);
* ``"error-rates"``: rows and misclassified rows per node; ``"class-counts"``: per-class rows;
* ``"sample-counts"``: rows per node without their classes (``Node.n_samples``);
* ``"cover"``: the sum of the rows' hessians per node (``Node.cover``);
* ``"leaf-values"``: each leaf's additive score (``Node.value``).

Rows are counted with their multiplicity: ``multiplicities[i]`` (when known) holds, for each
training row in the order the model was fitted on, how many times tree ``i`` drew it (bootstrap
counts; 1 for every row when the tree saw each row once; 0/1 under row subsampling); ``None``
when unknown. The importers say in ``docs/ensembles.md`` which counts are exact for which library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from ppdm.errors import PpdmError
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.levels import stack
from ppdm.tree.model import Attribute, Tree, TreeModel, encode_columns, facts_html, published_quantities

COMBINES = ("vote", "mean-proba", "additive", "mean")
LINKS = ("logistic", "softmax", "identity")
QUANTITIES = ("labels", "error-rates", "class-counts", "sample-counts", "cover", "leaf-values")
FAMILIES = {
    "sklearn-random-forest": "random forest",
    "sklearn-extra-trees": "extra trees",
    "sklearn-gradient-boosting": "gradient boosting",
    "sklearn-hist-gradient-boosting": "histogram gradient boosting",
    "xgboost": "XGBoost",
    "lightgbm": "LightGBM",
}


class Forest(TreeModel):
    """An ordered list of trees over the same classes, and how their predictions combine.

    Parameters
    ----------
    trees: the trees, in the library's order (boosting rounds first, then classes).
    combine: ``"vote"``, ``"mean-proba"`` or ``"additive"`` (see the module docstring).
    link: ``"logistic"`` or ``"softmax"``; additive forests only.
    base_score: the raw score each class starts from (one number for ``"logistic"``, one per
        class for ``"softmax"``; default zeros); additive forests only.
    outputs: the class whose score tree ``i`` adds to (default 0 for every tree: ``"logistic"``).
    multiplicities: per tree, each training row's multiplicity (non-negative integers, one per
        training row, the same rows for every tree) or ``None`` when unknown.
    algorithm: the library and model (``"sklearn-random-forest"``, ``"xgboost"``, ...).
    params: training parameters the counts were derived with (learning rate, regularization, ...).

    A forest answers what a :class:`~ppdm.tree.model.Tree` does about what it publishes, with the
    same spelling, so code can take either: :attr:`disclosure`, :meth:`published`,
    :attr:`n_leaves`, :attr:`depth`, :attr:`split_attributes` (a tree is a forest of one: a
    one-tree forest answers them as its tree does).
    """

    def __init__(
        self,
        trees: Sequence[Tree],
        combine: str,
        *,
        link: str | None = None,
        base_score: Sequence[float] | np.ndarray | None = None,
        outputs: Sequence[int] | np.ndarray | None = None,
        multiplicities: Sequence[np.ndarray | None] | None = None,
        algorithm: str | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        self.trees = list(trees)
        if not self.trees:
            raise PpdmError("a forest needs at least one tree")
        if combine not in COMBINES:
            raise PpdmError(f"unknown combine {combine!r} (choose one of: {', '.join(COMBINES)})")
        self.combine = combine
        self.classes = self.trees[0].classes
        self.class_attribute = self.trees[0].class_attribute
        self.attributes = _shared_attributes(self.trees)
        self.link, self.base_score, self.outputs = _additive_parts(self, link, base_score, outputs)
        self.multiplicities = _multiplicities(multiplicities, len(self.trees))
        self.algorithm = algorithm
        self.params = dict(params or {})
        self.known = [published_quantities(tree, combine in ("additive", "mean")) for tree in self.trees]
        if combine in ("additive", "mean"):
            _check_leaf_values(self.trees, "an additive forest" if combine == "additive" else "a regressor")
        if (combine == "mean" or self.link == "identity") != self.is_regressor:
            raise PpdmError("a regressor (trees without classes) combines its trees as 'mean' or 'additive' with the 'identity' link, and only a regressor does")

    # -- structure ---------------------------------------------------------------------------
    @property
    def is_regressor(self) -> bool:
        """Whether the forest predicts a number (its trees have no classes; see the module docstring)."""
        return not self.classes

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    @property
    def n_outputs(self) -> int:
        """Raw scores per row of an additive forest (1 for ``"logistic"``)."""
        return len(self.base_score)

    @property
    def family(self) -> str:
        """The model's family, in words (:data:`FAMILIES`; a regressor's as its classifier's), else its learner's name."""
        base = str(self.algorithm or "").removesuffix("-regressor")
        return FAMILIES.get(base, base or "forest")

    @property
    def n_records(self) -> int | None:
        """The number of training rows the multiplicities count, when any are known."""
        sizes = {len(m) for m in self.multiplicities if m is not None}
        return sizes.pop() if sizes else None

    @property
    def n_leaves(self) -> int:
        """Leaves published: over every tree (as :attr:`Tree.n_leaves <ppdm.tree.model.Tree.n_leaves>` for one)."""
        return sum(t.n_leaves for t in self.trees)

    @property
    def depth(self) -> int:
        """The depth of the deepest tree."""
        return max(t.depth for t in self.trees)

    @property
    def split_attributes(self) -> tuple[str, ...]:
        """The attributes any tree splits on, each once, in order of first appearance (tree order, then node order)."""
        return tuple(dict.fromkeys(a for t in self.trees for a in t.split_attributes))

    @property
    def n_training_records(self) -> float | None:
        """The training records the forest says it was fitted on (its per-row multiplicities), or ``None``."""
        return None if self.n_records is None else float(self.n_records)

    def __len__(self) -> int:
        return len(self.trees)

    def __getitem__(self, i: int) -> Tree:
        return self.trees[i]

    # -- publishing --------------------------------------------------------------------------
    @property
    def disclosure(self) -> Disclosure:
        """What the forest publishes: the most any of its trees does (:class:`Disclosure` is ordered).

        Read from the trees each time (a tree's level may be changed after the forest is built).
        Every importer gives all the trees of a model one level, which is then the forest's.
        """
        return max(t.disclosure for t in self.trees)

    def publishes(self, i: int) -> tuple[Disclosure, frozenset[str]]:
        """What tree ``i`` publishes: its disclosure level and its known per-node quantities."""
        return self.trees[i].disclosure, self.known[i]

    def published(self, disclosure: Disclosure | str | None = None) -> Forest:
        """The forest as audited at ``disclosure``: each tree publishing at most that level
        (:meth:`Tree.published <ppdm.tree.model.Tree.published>` for those that publish more).

        ``None`` means as the trees hold (the forest itself). Trees publishing no more than
        ``disclosure`` are kept as they are (shared, not copied), and a forest none of whose trees
        publishes more is returned itself. Asking for more than :attr:`disclosure` raises
        :class:`~ppdm.errors.PpdmError`: no tree holds it. With error rates or labels only, the
        trees' leaves no longer carry class frequencies, so a ``"mean-proba"`` forest predicts by
        its trees' votes (the "predict-only" release).
        """
        if disclosure is None:
            return self
        level = Disclosure.parse(disclosure)
        top = self.disclosure
        if level > top:
            raise PpdmError(f"the forest's trees publish {top.value} at most: they cannot be audited as publishing {level.value}")
        trees = [t.published(level) if t.disclosure > level else t for t in self.trees]
        if all(a is b for a, b in zip(trees, self.trees)):
            return self
        return self.with_trees(trees)

    def without_values(self, values: Mapping[str, Iterable[Any]]) -> Forest:
        """The forest whose every tree leaves out ``values`` of its domains
        (:meth:`Tree.without_values <ppdm.tree.model.Tree.without_values>`)."""
        return self.with_trees([t.without_values(values) for t in self.trees])

    def recoded(self, recode: Mapping[str, Mapping[Any, tuple[Any, ...]]]) -> Forest:
        """The forest whose every tree is recoded so (:meth:`Tree.recoded <ppdm.tree.model.Tree.recoded>`)."""
        return self.with_trees([t.recoded(recode) for t in self.trees])

    def with_trees(self, trees: Sequence[Tree]) -> Forest:
        """A forest of ``trees`` (one per tree of this one, in order: a tree read otherwise, its
        counts kept) combined as this one's are."""
        extra: dict[str, Any] = {"link": self.link, "base_score": self.base_score, "outputs": self.outputs} if self.combine == "additive" else {}
        return Forest(trees, self.combine, multiplicities=self.multiplicities, algorithm=self.algorithm, params=self.params, **extra)

    def select(self, trees: Sequence[int]) -> Forest:
        """The forest of ``trees`` only (indices, in the given order): what an audit of a subset
        of the trees reads. Fewer trees publish less, so an audit of them is a lower bound on what
        the whole forest discloses; an additive forest's subset no longer predicts as the model does."""
        idx = [int(i) for i in trees]
        bad = [i for i in idx if not 0 <= i < self.n_trees]
        if bad:
            raise PpdmError(f"tree {bad[0]} does not exist: the forest has trees 0 to {self.n_trees - 1}")
        if not idx:
            raise PpdmError("no tree selected: name at least one of the forest's trees")
        extra: dict[str, Any] = {}
        if self.combine == "additive":
            extra = {"link": self.link, "base_score": self.base_score, "outputs": np.asarray(self.outputs)[idx]}
        return Forest(
            [self.trees[i] for i in idx], self.combine, multiplicities=[self.multiplicities[i] for i in idx],
            algorithm=self.algorithm, params=self.params, **extra,
        )

    # -- routing and prediction ----------------------------------------------------------------
    def encode(self, X: pd.DataFrame) -> dict[str, np.ndarray]:
        """The columns of ``X`` any tree splits on, encoded once for every tree (see :meth:`Tree.encode`)."""
        return encode_columns(X, self.attributes, set(self.split_attributes), "forest")

    def apply(self, X: pd.DataFrame) -> np.ndarray:
        """The leaf each row of ``X`` lands in, per tree (rows × trees)."""
        stacked = stack(self.encode(X), len(X))  # the columns laid out once for every tree
        out = np.empty((len(X), self.n_trees), dtype=np.intp)
        for i, tree in enumerate(self.trees):
            out[:, i] = tree.apply_encoded(stacked, len(X))
        return out

    def apply_all(self, X: pd.DataFrame) -> np.ndarray:
        """:meth:`apply` (rows × trees), spelled as :meth:`Tree.apply_all <ppdm.tree.model.Tree.apply_all>` is for a forest of one."""
        return self.apply(X)

    def decision_function(self, X: pd.DataFrame) -> np.ndarray:
        """Raw scores of an additive forest (rows × :attr:`n_outputs`), before the link."""
        if self.combine != "additive":
            raise PpdmError(f"a {self.combine!r} forest has no raw scores")
        return self.raw_of_leaves(self.apply(X))

    def raw_of_leaves(self, leaves: np.ndarray) -> np.ndarray:
        """:meth:`decision_function` of rows given by their leaf in every tree (rows × trees)."""
        raw = np.tile(self.base_score, (len(leaves), 1))
        for i, tree in enumerate(self.trees):
            raw[:, self.outputs[i]] += leaf_values(tree)[leaves[:, i]]
        return raw

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities of the rows of ``X`` (rows × classes), as the source library computes them."""
        if self.is_regressor:
            raise PpdmError("a regressor predicts numbers, not class probabilities: use predict")
        return self.proba_of_leaves(self.apply(X))

    def proba_of_leaves(self, leaves: np.ndarray) -> np.ndarray:
        """:meth:`predict_proba` of rows given by their leaf in every tree (rows × trees): what
        any joint leaf answers, whether or not a record reaches it."""
        if self.combine == "additive":
            return _through_link(self.raw_of_leaves(leaves), self.link)
        k = len(self.classes)
        total = np.zeros((len(leaves), k))
        for i, tree in enumerate(self.trees):
            if self.combine == "vote":
                total[np.arange(len(leaves)), tree.leaf_labels()[leaves[:, i]]] += 1.0
            else:
                total += tree.leaf_distributions()[leaves[:, i]]
        return total / self.n_trees

    def labels_of_leaves(self, leaves: np.ndarray) -> np.ndarray:
        """The predicted class index of rows given by their leaf in every tree (rows × trees)."""
        if self.combine == "additive" and self.link == "logistic":
            return (self.raw_of_leaves(leaves)[:, 0] > 0).astype(np.intp)
        return np.argmax(self.proba_of_leaves(leaves), axis=1).astype(np.intp)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Predicted class values (ties go to the first class, as in scikit-learn); a regressor's
        predicted numbers (the library's own sum or mean of the leaf values)."""
        if self.is_regressor:
            if self.combine == "additive":
                return self.decision_function(X)[:, 0]
            leaves = self.apply(X)
            return np.mean([leaf_values(tree)[leaves[:, i]] for i, tree in enumerate(self.trees)], axis=0)
        classes = np.asarray(self.classes, dtype=object)
        return classes[self.labels_of_leaves(self.apply(X))]

    def _repr_html_(self) -> str:
        """What a notebook shows: the forest's facts as a small table (``ppdm.audit`` tells what it discloses)."""
        leaves = sum(t.n_leaves for t in self.trees)
        return facts_html(f"{self.combine} forest predicting {self.class_attribute!r}", [
            ("learner", str(self.algorithm or "unknown")),
            ("size", f"{self.n_trees:,} trees, {leaves:,} leaves, depth up to {self.depth}"),
            *([] if self.is_regressor else [("classes", ", ".join(map(str, self.classes)))]),
            ("publishes", ", ".join(sorted({t.disclosure.value for t in self.trees}))),
        ])

    def __repr__(self) -> str:
        return (
            f"Forest(algorithm={self.algorithm!r}, combine={self.combine!r}, link={self.link!r}, "
            f"trees={self.n_trees}, max_depth={self.depth}, classes={list(self.classes)!r})"
        )


def is_model(value: object) -> TypeGuard[Tree | Forest]:
    """Whether ``value`` is one of ppdm's models (a :class:`~ppdm.tree.model.Tree` or a
    :class:`Forest`: a :class:`~ppdm.tree.model.TreeModel`), never which."""
    return isinstance(value, TreeModel)


def as_forest(model: Tree | Forest) -> Forest:
    """``model`` as a forest: a forest itself, a tree as the forest of one it is (combining as
    :attr:`Tree.combine <ppdm.tree.model.Tree.combine>`: a regression tree is a ``"mean"`` forest)."""
    if isinstance(model, Forest):
        return model
    return Forest([model], model.combine, algorithm=model.algorithm)


def leaf_values(tree: Tree) -> np.ndarray:
    """Each node's ``value`` (0 where a node has none), indexed by node id."""
    return np.array([0.0 if n.value is None else n.value for n in tree.nodes])


def _through_link(raw: np.ndarray, link: str | None) -> np.ndarray:
    if link == "logistic":
        p = 1.0 / (1.0 + np.exp(-raw[:, 0]))
        return np.column_stack([1.0 - p, p])
    shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _shared_attributes(trees: Sequence[Tree]) -> dict[str, Attribute]:
    """The attributes of every tree; trees must agree on classes, class column and domains."""
    first = trees[0]
    out: dict[str, Attribute] = {}
    for i, tree in enumerate(trees):
        if tree.classes != first.classes:
            raise PpdmError(f"tree {i} has the classes {list(tree.classes)!r}, tree 0 has {list(first.classes)!r}")
        if tree.class_attribute != first.class_attribute:
            raise PpdmError(f"tree {i} predicts {tree.class_attribute!r}, tree 0 predicts {first.class_attribute!r}")
        for name, attr in tree.attributes.items():
            if out.setdefault(name, attr) != attr:
                raise PpdmError(f"tree {i}: attribute {name!r} has another kind or domain than in an earlier tree")
    return out


def _additive_parts(
    forest: Forest, link: str | None, base_score: Any, outputs: Any
) -> tuple[str | None, np.ndarray, np.ndarray]:
    """Checked ``link``, ``base_score`` and ``outputs`` of ``forest`` (empty unless additive)."""
    if forest.combine != "additive":
        if link is not None or base_score is not None or outputs is not None:
            raise PpdmError(f"link, base_score and outputs belong to additive forests, not {forest.combine!r}")
        return None, np.zeros(0), np.zeros(0, dtype=np.intp)
    if link not in LINKS:
        raise PpdmError(f"an additive forest needs a link ({', '.join(LINKS)}), got {link!r}")
    k = len(forest.classes)
    n_out = 1 if link in ("logistic", "identity") else k
    if link == "logistic" and k != 2:
        raise PpdmError(f"the logistic link needs 2 classes, the trees have {k}")
    base = np.zeros(n_out) if base_score is None else np.asarray(base_score, dtype=float).ravel()
    if base.shape != (n_out,) or not np.isfinite(base).all():
        raise PpdmError(f"base_score must hold {n_out} finite number(s), got {base.tolist()}")
    out = np.zeros(len(forest.trees), dtype=np.intp) if outputs is None else np.asarray(outputs)
    if out.shape != (len(forest.trees),) or not np.issubdtype(out.dtype, np.integer) or ((out < 0) | (out >= n_out)).any():
        raise PpdmError(f"outputs must give each of the {len(forest.trees)} trees a score index below {n_out}")
    return link, base, out.astype(np.intp)


def _multiplicities(given: Sequence[np.ndarray | None] | None, n_trees: int) -> list[np.ndarray | None]:
    if given is None:
        return [None] * n_trees
    out = list(given)
    if len(out) != n_trees:
        raise PpdmError(f"{len(out)} multiplicity arrays for {n_trees} trees")
    sizes = set()
    for i, m in enumerate(out):
        if m is None:
            continue
        arr = np.asarray(m)
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer) or (arr < 0).any():
            raise PpdmError(f"multiplicities of tree {i}: expected one non-negative integer per training row")
        out[i] = arr.astype(np.int64)
        sizes.add(len(arr))
    if len(sizes) > 1:
        raise PpdmError(f"the trees' multiplicities count different numbers of training rows: {sorted(sizes)}")
    return out


def _check_leaf_values(trees: Sequence[Tree], what: str = "an additive forest") -> None:
    for i, tree in enumerate(trees):
        for node in tree.leaves():
            if node.value is None or not np.isfinite(node.value):
                raise PpdmError(f"tree {i}, leaf {node.id}: {what} needs a finite value at every leaf")



def parse_trees(spec: str | Sequence[int] | range | slice, n_trees: int) -> list[int]:
    """The trees ``spec`` names among ``n_trees``: ``"0:10"`` (a Python slice: trees 0 to 9),
    ``"3,5,8"``, a slice, a range or a list of indices. One-line errors name what is wrong."""
    if isinstance(spec, slice):
        _within(spec.start, spec.stop, n_trees, spec)
        return list(range(n_trees))[spec]
    if isinstance(spec, (range, list, tuple)):
        chosen = [int(i) for i in spec]
        _within(min(chosen, default=0), max(chosen, default=-1) + 1, n_trees, spec)
        return _once(chosen, repr(spec))
    text = str(spec).strip()
    try:
        if ":" in text:
            parts = [int(p) if p.strip() else None for p in text.split(":")]
            if len(parts) > 3:
                raise ValueError
            _within(parts[0], parts[1] if len(parts) > 1 else None, n_trees, text)
            chosen = list(range(n_trees))[slice(*parts)]
        else:
            chosen = [int(p) for p in text.split(",")]
            _within(min(chosen), max(chosen) + 1, n_trees, text)
    except ValueError:
        raise PpdmError(f"--trees {text!r}: write a range such as 0:10 (trees 0 to 9) or a list such as 0,3,7") from None
    if not chosen:
        raise PpdmError(f"--trees {text!r} selects no tree of the forest's {n_trees}")
    return _once(chosen, repr(text))


def _once(chosen: list[int], shown: str) -> list[int]:
    """Refuse a tree named twice: the audit would read its counts twice, as two trees."""
    seen: set[int] = set()
    for i in chosen:
        if i in seen:
            raise PpdmError(f"trees {shown}: tree {i} is named twice (each tree is read once)")
        seen.add(i)
    return chosen


def _within(start: int | None, stop: int | None, n_trees: int, spec: Any) -> None:
    """Refuse trees beyond the forest's ``n_trees`` (a slice would quietly stop at the last one)."""
    shown = spec if isinstance(spec, str) else repr(spec)
    if (stop is not None and stop > n_trees) or (start is not None and not -n_trees <= start < n_trees):
        raise PpdmError(f"trees {shown}: the forest has {n_trees:,} tree{'' if n_trees == 1 else 's'} (numbered 0 to {n_trees - 1:,})")
