"""Candidates a defense search weighs: other trees (or the same tree, published with less) to publish.

Each generator returns :class:`Candidate` s whose tree is built only when the search reaches them
(so a time budget also bounds the training). The families:

* ``pruning-1`` / ``pruning-2``: paper 003 §4.1's Method 1 (remove leaves of ``n ≤ s``) and
  Method 2 (collapse nodes with a child of ``n ≤ s``) over a grid of ``s``
  (:mod:`ppdm.defend.pruning`);
* ``retrain``: the same learner with depth or minimum-leaf limits (ppdm's ID3 / C4.5, or the
  user's scikit-learn estimator with its own settings, :class:`Learner`);
* ``kadet``: k-anonymous (and entropy ℓ-diverse) trees over a grid of k and ℓ (paper 002,
  :class:`~ppdm.learn.KAnonymousTreeClassifier`), the threat model's known columns public;
* ``publish-less``: the input tree with less published: class counts → error rates → labels
  (:class:`~ppdm.tree.Disclosure`);
* ``dp``: the ε-differentially private random tree baseline over a grid of ε
  (:class:`~ppdm.learn.dp_tree.DPRandomTreeClassifier`); its counts are noisy (``noisy=True``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sklearn.base import clone

from ppdm.defend.pruning import collapse_small_children, remove_small_leaves
from ppdm.errors import PpdmError
from ppdm.learn.dp_tree import DPRandomTreeClassifier
from ppdm.learn.estimators import C45Classifier, ID3Classifier
from ppdm.learn.kanonymity import KAnonymousTreeClassifier
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest, as_forest
from ppdm.tree.model import Tree
from ppdm.tree.sklearn import trace_features, tree_from_sklearn
from ppdm.tree.sklearn_forest import forest_from_sklearn

__all__ = [
    "FAMILIES",
    "Candidate",
    "Grids",
    "Learner",
    "dp_candidates",
    "kadet_candidates",
    "learner_for",
    "pruning_candidates",
    "publish_less_candidates",
    "retrain_candidates",
]

FAMILIES = ("pruning", "retrain", "kadet", "publish-less", "dp")
"""The candidate families :func:`ppdm.defend.search.defend` draws from (``pruning`` = both methods)."""

@dataclass
class Candidate:
    """One thing the publisher could publish instead.

    ``build()`` trains or edits the tree or forest (class counts kept); ``publish`` caps what of it is
    published (``None``: what the search publishes for every candidate); ``noisy``: its counts
    are not the training counts (differential privacy), so audits that trust them do not apply;
    ``cost``: the estimated cost of its audit, the order a forest's candidates are taken in
    (:func:`~ppdm.defend.forest_candidates.audit_cost`); ``black_box``: the model is not published
    but answers queries with its predicted ``"label"`` or ``"score"`` only, and is audited by the
    attackers of such answers (:func:`~ppdm.attacks.baselines.likelihood.black_box_attacks`).
    """

    label: str
    family: str
    params: dict[str, Any]
    build: Callable[[], Tree | Forest]
    publish: Disclosure | None = None
    noisy: bool = False
    cost: float = 0.0
    black_box: str | None = None


@dataclass(frozen=True)
class Grids:
    """The parameter grids of each family (defaults: :meth:`full`; :meth:`small` for quick runs).

    ``n_estimators`` (fewer trees) and ``dp_trees`` (trees of the ε-DP forest) are for forests.
    """

    s: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100, 200, 500)
    max_depth: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 8, 10)
    min_samples_leaf: tuple[int, ...] = (5, 10, 20, 50, 100, 200, 500)
    k: tuple[int, ...] = (2, 5, 10, 20, 50, 100, 200)
    l: tuple[float, ...] = (1.5, 2.0, 3.0)  # noqa: E741 (l-diversity's l)
    epsilon: tuple[float, ...] = (0.1, 1.0, 10.0)
    dp_depth: tuple[int, ...] = (4, 8)
    n_estimators: tuple[int, ...] = (1, 2, 5, 10, 20, 50)
    dp_trees: tuple[int, ...] = (10,)

    @classmethod
    def full(cls) -> Grids:
        return cls()

    @classmethod
    def small(cls) -> Grids:
        return cls(
            s=(2, 10, 50), max_depth=(1, 2, 3), min_samples_leaf=(20, 100), k=(5, 50), l=(2.0,), epsilon=(1.0,), dp_depth=(4,),
            n_estimators=(1, 5),
        )


# -- learners ---------------------------------------------------------------------------------
@dataclass
class Learner:
    """How to train the model being defended again, with other limits.

    ``estimator``: an unfitted template, ppdm's (``ID3Classifier``, ``C45Classifier``) or
    scikit-learn's ``DecisionTreeClassifier`` (its settings are the user's; the search changes
    ``max_depth`` / ``min_samples_leaf`` only). ``features``: for a scikit-learn estimator, its
    input columns (one-hot ``column_value``, ordinal codes or numbers, as
    :func:`~ppdm.tree.tree_from_sklearn` reads them; default: one-hot of every categorical column).
    """

    estimator: Any
    features: Sequence[str] | None = None

    def columns(self, data: pd.DataFrame) -> list[str]:
        """The columns of ``data`` the estimator's ``features`` come from (none when not given)."""
        if self.features is None:
            return []
        return [a.name for a in trace_features(data, self.features)[2]]

    @property
    def is_sklearn(self) -> bool:
        return not isinstance(self.estimator, (ID3Classifier, C45Classifier))

    @property
    def is_forest(self) -> bool:
        """A scikit-learn random forest or extra-trees estimator, or a boosted one (it trains :class:`Forest` s)."""
        from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

        return isinstance(self.estimator, (RandomForestClassifier, ExtraTreesClassifier)) or self.is_boosted

    @property
    def is_boosted(self) -> bool:
        """A gradient-boosting estimator: XGBoost's or LightGBM's classifier, scikit-learn's
        gradient boosting or histogram gradient boosting."""
        return boosted_kind(self.estimator) is not None

    def fit(self, X: pd.DataFrame, y: pd.Series, **params: Any) -> Tree | Forest:
        """A tree (:meth:`fit_tree`) or, for a forest estimator, a forest (:meth:`fit_forest`)."""
        return self.fit_forest(X, y, **params) if self.is_forest else self.fit_tree(X, y, **params)

    def fit_forest(self, X: pd.DataFrame, y: pd.Series, **params: Any) -> Forest:
        """The forest estimator fitted on ``X`` (encoded as for :meth:`fit_tree`), imported with
        its bootstrap multiplicities (:func:`~ppdm.tree.sklearn_forest.forest_from_sklearn`)."""
        est = clone(self.estimator).set_params(**params)
        encoded = encode_for_sklearn(X, self.features)
        if self.is_boosted:
            from ppdm.tree.estimator import from_estimator

            classes = sorted(pd.unique(y.dropna()), key=lambda v: (str(type(v)), v))  # the codes the libraries number classes by
            est.fit(encoded, pd.Index(classes, dtype=object).get_indexer(y.astype(object)))
            return as_forest(from_estimator(est, X.assign(**{str(y.name): y}), y, class_attribute=str(y.name), feature_names=list(encoded.columns), verify=False))
        est.fit(encoded, y.to_numpy())
        return forest_from_sklearn(est, X, list(encoded.columns), y=y, class_attribute=str(y.name), verify=False)

    def fit_tree(self, X: pd.DataFrame, y: pd.Series, **params: Any) -> Tree:
        est = clone(self.estimator).set_params(**params)
        if not self.is_sklearn:
            tree = est.fit(X, y).tree_
            tree.class_attribute = str(y.name)
            return tree
        encoded = encode_for_sklearn(X, self.features)
        est.fit(encoded, y.to_numpy())
        return tree_from_sklearn(est, X, list(encoded.columns), y=y, class_attribute=str(y.name), verify=False)


#: The boosted estimators a defense retrains, by class name: (library, the parameter counting
#: rounds, the parameter bounding a leaf's size from below).
BOOSTED = {
    "XGBClassifier": ("xgboost", "n_estimators", "min_child_weight"),
    "LGBMClassifier": ("lightgbm", "n_estimators", "min_child_samples"),
    "GradientBoostingClassifier": ("sklearn", "n_estimators", "min_samples_leaf"),
    "HistGradientBoostingClassifier": ("sklearn", "max_iter", "min_samples_leaf"),
}


def boosted_kind(estimator: Any) -> tuple[str, str, str] | None:
    """``BOOSTED``'s entry for ``estimator`` (``None``: not a boosted estimator ppdm retrains)."""
    entry = BOOSTED.get(type(estimator).__name__)
    return entry if entry is not None and type(estimator).__module__.split(".")[0] == entry[0] else None


def encode_for_sklearn(X: pd.DataFrame, features: Sequence[str] | None = None) -> pd.DataFrame:
    """``X`` as a scikit-learn tree's numeric input: the given encoded columns, or one-hot of every
    categorical column (``column_value``) and the numbers as they are."""
    if features is None:
        categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c]) or isinstance(X[c].dtype, pd.CategoricalDtype)]
        return pd.get_dummies(X, columns=categorical, prefix_sep="_", dtype=float)
    traced, domains, _ = trace_features(X, features)
    out = {}
    for name, f in zip(features, traced):
        column = X[f.attribute]
        if f.kind == "numeric":
            out[name] = column.astype(float).to_numpy()
        elif f.kind == "ordinal":
            out[name] = pd.Index(domains[f.attribute], dtype=object).get_indexer(column.astype(object)).astype(float)
        else:
            out[name] = (column.astype(object) == f.value).to_numpy(dtype=float)
    return pd.DataFrame(out, index=X.index)


def learner_for(tree: Tree) -> Learner:
    """The learner that made ``tree`` (from its ``algorithm`` and ``criterion``), to train it again."""
    algorithm = (tree.algorithm or "").removeprefix("kadet-")
    criterion = tree.criterion
    if algorithm == "sklearn":
        from sklearn.tree import DecisionTreeClassifier

        return Learner(DecisionTreeClassifier(criterion=criterion if criterion in ("gini", "entropy") else "gini", random_state=0))
    numeric = any(not a.is_categorical for a in tree.attributes.values())
    if algorithm == "c45" or (algorithm != "id3" and numeric):
        return Learner(C45Classifier(criterion=criterion if criterion in ("entropy", "gini", "gain_ratio") else "gain_ratio"))
    return Learner(ID3Classifier(criterion=criterion if criterion in ("entropy", "gini", "gain_ratio") else "entropy"))


# -- generators -------------------------------------------------------------------------------
def pruning_candidates(tree: Tree, s_grid: Sequence[int], n_records: int) -> list[Candidate]:
    """Methods 1 and 2 of paper 003 §4.1 for every ``s`` below half the table (both need class counts)."""
    if any(n.counts is None for n in tree.nodes):
        return []
    grid = [s for s in s_grid if s < n_records / 2]
    out = [Candidate(f"Method 2, s={s}", "pruning-2", {"s": s}, lambda s=s: collapse_small_children(tree, s)) for s in grid]
    out += [Candidate(f"Method 1, s={s}", "pruning-1", {"s": s}, lambda s=s: remove_small_leaves(tree, s)) for s in grid]
    return out


def retrain_candidates(
    learner: Learner, X: pd.DataFrame, y: pd.Series, max_depths: Sequence[int], min_leaves: Sequence[int]
) -> list[Candidate]:
    """The learner again with each depth limit, then each minimum-leaf size."""
    name = type(learner.estimator).__name__
    out = [
        Candidate(f"{name} max_depth={d}", "retrain", {"max_depth": d}, lambda d=d: learner.fit_tree(X, y, max_depth=d))
        for d in max_depths
    ]
    out += [
        Candidate(f"{name} min_samples_leaf={m}", "retrain", {"min_samples_leaf": m}, lambda m=m: learner.fit_tree(X, y, min_samples_leaf=m))
        for m in min_leaves
        if m < len(X) / 2
    ]
    return out


def kadet_candidates(
    X: pd.DataFrame,
    y: pd.Series,
    public: Sequence[str],
    ks: Sequence[int],
    ls: Sequence[float],
    *,
    hierarchies: Mapping[str, Any] | None = None,
    class_public: bool = False,
) -> list[Candidate]:
    """kADET (paper 002) for each k, and ℓ-diverse kADET for each ℓ (with k = 1 and with the middle k).

    The public attributes are the threat model's known columns among ``X``'s; ID3 when every
    column is categorical, C4.5 otherwise. With a public class, ℓ-diversity does not apply.
    """
    public = [c for c in public if c in X.columns]
    numeric = any(pd.api.types.is_numeric_dtype(X[c]) and not isinstance(X[c].dtype, pd.CategoricalDtype) for c in X.columns)
    algorithm = "c45" if numeric else "id3"
    pairs: list[tuple[int, float | None]] = [(int(k), None) for k in ks]
    if not class_public:
        middle = sorted(ks)[len(ks) // 2] if ks else 1
        pairs += [(1, float(ell)) for ell in ls] + [(int(middle), float(ell)) for ell in ls if middle > 1]

    def build(k: int, ell: float | None) -> Tree:
        model = KAnonymousTreeClassifier(
            k=k, quasi_identifiers=public, hierarchies=hierarchies, algorithm=algorithm, l_diversity=ell, class_public=class_public
        )
        tree = model.fit(X, y).tree_
        tree.class_attribute = str(y.name)
        return tree

    out = []
    for k, ell in dict.fromkeys(pairs):
        label = f"kADET k={k}" + (f", l={ell:g}" if ell is not None else "")
        out.append(Candidate(label, "kadet", {"k": k, "l": ell}, lambda k=k, ell=ell: build(k, ell)))
    return out


def publish_less_candidates(tree: Tree | Forest, level: Disclosure) -> list[Candidate]:
    """The same tree with every disclosure level below ``level`` (the tree's predictions are unchanged;
    a ``mean-proba`` forest without class counts predicts by its trees' votes)."""
    below = [d for d in Disclosure if d < level]
    return [
        Candidate(f"publish {d.value}", "publish-less", {"publish": d.value}, lambda: tree, publish=d) for d in reversed(below)
    ]


def dp_candidates(
    X: pd.DataFrame, y: pd.Series, epsilons: Sequence[float], depths: Sequence[int], random_state: int | None = 0
) -> list[Candidate]:
    """The ε-DP random tree for each ε and depth (the baseline; see :mod:`ppdm.learn.dp_tree`)."""

    def build(eps: float, depth: int) -> Tree:
        tree = DPRandomTreeClassifier(epsilon=eps, max_depth=depth, random_state=random_state).fit(X, y).tree_
        tree.class_attribute = str(y.name)
        return tree

    return [
        Candidate(f"DP tree ε={eps:g}, depth {d}", "dp", {"epsilon": eps, "max_depth": d}, lambda e=eps, d=d: build(e, d), noisy=True)
        for eps in epsilons
        for d in depths
    ]


def check_families(families: Sequence[str]) -> tuple[str, ...]:
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise PpdmError(f"unknown candidate family {unknown[0]!r} (families: {', '.join(FAMILIES)})")
    if not families:
        raise PpdmError(f"no candidate family chosen (families: {', '.join(FAMILIES)})")
    return tuple(dict.fromkeys(families))


def interleave(groups: Sequence[Sequence[Candidate]]) -> list[Candidate]:
    """One candidate of each family in turn, so that a time budget cuts every family short alike."""
    out: list[Candidate] = []
    longest = max((len(g) for g in groups), default=0)
    for i in range(longest):
        out.extend(g[i] for g in groups if i < len(g))
    return out

