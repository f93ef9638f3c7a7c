"""kADET (paper 002 §3, §4.2): Table 1 / Figure 1, Adult over the paper's k grid, random tables.

Every tree kADET returns is checked with the brute-force span reference of ``tests/oracles.py``
(enumerate the private values of every record), not with the learner's own bookkeeping.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.leaf.anonymity import model_anonymity
from ppdm.data.hierarchy import Hierarchy, adult_hierarchies
from ppdm.errors import AnonymityError, DataError, PpdmError
from ppdm.learn import ID3Classifier
from ppdm.learn.criteria import entropy
from ppdm.learn.kanonymity import KAnonymousTreeClassifier, confidence_to_l

from oracles import partition

K_GRID = (10, 50, 100, 500, 1000)


@pytest.fixture(scope="module")
def brute_force_check(brute_force_spans):
    """``check(model, data, public, k, ell)``: the reference confirms every span holds >= k records
    (and class entropy >= log2 ℓ); returns its span populations."""

    def check(model: KAnonymousTreeClassifier, data: pd.DataFrame, public: list[str], k: int, ell: float | None = None):
        keys, populations = brute_force_spans(model.tree_, data, public, model.class_public)
        assert populations.min() >= k
        assert partition(keys) == partition(model.spans_.span_of)  # the learner tracked the true spans
        assert model.anonymity_ == populations.min()
        if ell is not None:
            y = data[model.tree_.class_attribute].to_numpy()
            for group in partition(keys):
                counts = pd.Series(y[list(group)]).value_counts().to_numpy()
                assert entropy(counts) >= math.log2(ell) - 1e-9
        return populations

    return check


# -- paper 002, Table 1 and Figure 1 ----------------------------------------------------------


def test_table1_yields_the_tree_and_spans_of_figure_1(mortgage, brute_force_check):
    X, y = mortgage[["Marital Status", "Sports Car"]], mortgage["Loan Risk"]
    model = KAnonymousTreeClassifier(k=3, quasi_identifiers=["Marital Status"]).fit(X, y)
    tree = model.tree_
    paths = {tree.prefix(n.id).describe(): n.counts.tolist() for n in tree.leaves()}
    assert tree.root.split.attribute == "Sports Car"  # private, gain 0.459: split first
    assert paths == {  # counts are [bad, good]
        "Sports Car = No": [3.0, 0.0],  # l_no
        "Sports Car = Yes ∧ Marital Status = Married": [0.0, 1.0],  # l_Married
        "Sports Car = Yes ∧ Marital Status = Unmarried": [1.0, 1.0],  # l_Unmarried
    }
    leaf = {tree.prefix(n.id).describe().split(" ∧ ")[-1]: n.id for n in tree.leaves()}
    names = mortgage["Name"].to_numpy()
    spans = {
        frozenset(tree.nodes[i].id for i in leaves): frozenset(names[model.spans_.span_of == s])
        for s, leaves in enumerate(model.spans_.leaves)
    }
    # Figure 1: {l_Married, l_no} for John, Ben, Laura; {l_Unmarried, l_no} for Lisa, Robert, Anna
    assert spans == {
        frozenset({leaf["Marital Status = Married"], leaf["Sports Car = No"]}): frozenset({"John", "Ben", "Laura"}),
        frozenset({leaf["Marital Status = Unmarried"], leaf["Sports Car = No"]}): frozenset({"Lisa", "Robert", "Anna"}),
    }
    assert model.anonymity_ == 3
    brute_force_check(model, mortgage.drop(columns="Name"), ["Marital Status"], 3)


def test_table1_at_k4_refuses_the_marital_status_split(mortgage):
    X, y = mortgage[["Marital Status", "Sports Car"]], mortgage["Loan Risk"]
    model = KAnonymousTreeClassifier(k=4, quasi_identifiers=["Marital Status"]).fit(X, y)
    assert [n.split.attribute for n in model.tree_.internal_nodes()] == ["Sports Car"]
    assert model.anonymity_ == 6
    # plain ID3 grows the Figure 1 tree, which is 3- but not 4-anonymous
    plain = ID3Classifier().fit(X, y).tree_
    assert model_anonymity(plain, mortgage, ThreatModel(known=["Marital Status"])).k == 3


def test_a_breach_is_retried_one_level_up_the_hierarchy(brute_force_check):
    # "Married" alone holds 2 records: the multiway split breaches k = 3, the grouped one does not.
    data = pd.DataFrame(
        {
            "status": ["Married", "Married", "Divorced", "Widowed", "Never", "Never", "Never", "Never"],
            "y": ["a", "a", "a", "b", "b", "b", "b", "a"],
        }
    )
    h = Hierarchy.categorical("status", {"ANY": [{"Was-or-is": ["Married", {"Was": ["Divorced", "Widowed"]}]}, "Never"]})
    plain = KAnonymousTreeClassifier(k=3).fit(data[["status"]], data["y"])
    assert plain.tree_.n_nodes == 1
    model = KAnonymousTreeClassifier(k=3, hierarchies={"status": h}).fit(data[["status"]], data["y"])
    root = model.tree_.root.split
    assert {frozenset(g) for g in root.groups} == {frozenset({"Married", "Divorced", "Widowed"}), frozenset({"Never"})}
    brute_force_check(model, data, ["status"], 3)


def test_root_breach_raises_naming_the_requirement(mortgage):
    X, y = mortgage[["Marital Status", "Sports Car"]], mortgage["Loan Risk"]
    with pytest.raises(AnonymityError, match="k = 7"):
        KAnonymousTreeClassifier(k=7).fit(X, y)
    with pytest.raises(AnonymityError, match="ℓ-diverse"):
        KAnonymousTreeClassifier(k=1, max_confidence=0.6).fit(X, y)  # 4 of 6 are bad: 66.7 %


def test_bad_parameters_are_named(mortgage):
    X, y = mortgage[["Marital Status", "Sports Car"]], mortgage["Loan Risk"]
    with pytest.raises(DataError, match="'Zip'"):
        KAnonymousTreeClassifier(k=2, quasi_identifiers=["Zip"]).fit(X, y)
    with pytest.raises(PpdmError, match="k must be"):
        KAnonymousTreeClassifier(k=0).fit(X, y)
    with pytest.raises(PpdmError, match="algorithm"):
        KAnonymousTreeClassifier(algorithm="cart").fit(X, y)


def test_confidence_cap_of_85_percent_is_l_1_526():
    assert confidence_to_l(0.85) == pytest.approx(1.526, abs=5e-4)
    assert math.log2(confidence_to_l(0.85)) == pytest.approx(0.61, abs=5e-3)


# -- Adult, the paper's k grid --------------------------------------------------------------


@pytest.fixture(scope="module")
def adult(adult_train):
    frame, _ = adult_train
    cats = [c for c in frame.columns if c != "income" and isinstance(frame[c].dtype, pd.CategoricalDtype)]
    return frame, cats, adult_hierarchies()


@pytest.fixture(scope="module")
def plain_id3(adult):
    frame, cats, _ = adult
    return ID3Classifier().fit(frame[cats], frame["income"]).tree_


@pytest.mark.parametrize("k", K_GRID)
def test_adult_id3_trees_are_k_anonymous_and_plain_id3_is_not(adult, plain_id3, k, brute_force_check):
    frame, cats, hierarchies = adult
    model = KAnonymousTreeClassifier(k=k, quasi_identifiers=cats, hierarchies=hierarchies).fit(frame[cats], frame["income"])
    brute_force_check(model, frame, cats, k)
    assert model.tree_.n_leaves > 1
    assert model_anonymity(plain_id3, frame, ThreatModel(known=cats)).k < k


@pytest.mark.parametrize("k", (10, 1000))
def test_adult_id3_with_private_attributes(adult, plain_id3, k, brute_force_check):
    frame, cats, hierarchies = adult
    public = [c for c in cats if c not in ("relationship", "race")]
    model = KAnonymousTreeClassifier(k=k, quasi_identifiers=public, hierarchies=hierarchies).fit(frame[cats], frame["income"])
    brute_force_check(model, frame, public, k)
    assert any(n.split.attribute in ("relationship", "race") for n in model.tree_.internal_nodes())
    assert model_anonymity(plain_id3, frame, ThreatModel(known=public)).k < k


@pytest.mark.parametrize("k", K_GRID)
def test_adult_c45_trees_are_k_anonymous(adult, k, brute_force_spans):
    frame, _, hierarchies = adult
    X = frame.drop(columns="income")
    model = KAnonymousTreeClassifier(k=k, hierarchies=hierarchies, algorithm="c45").fit(X, frame["income"])
    public = list(X.columns)
    fast = model_anonymity(model.tree_, frame, ThreatModel(known=public))
    assert fast.k >= k and fast.k == model.anonymity_
    keys, populations = brute_force_spans(model.tree_, frame, public)
    assert populations.min() >= k
    # split points were moved to keep k: the unpruned tree is k-anonymous too
    assert model_anonymity(model.unpruned_tree_, frame, ThreatModel(known=public)).k >= k


@pytest.mark.parametrize("confidence", (0.8, 0.9))
def test_adult_l_diverse_trees_cap_the_attackers_confidence(adult, confidence, brute_force_check):
    frame, cats, hierarchies = adult
    model = KAnonymousTreeClassifier(k=1, quasi_identifiers=cats, hierarchies=hierarchies, max_confidence=confidence)
    model.fit(frame[cats], frame["income"])
    brute_force_check(model, frame, cats, 1, ell=confidence_to_l(confidence))
    result = model_anonymity(model.tree_, frame, ThreatModel(known=cats))
    top = (result.class_counts.max(axis=1) / result.class_counts.sum(axis=1)).max()
    assert top <= confidence + 1e-9  # two classes: entropy ℓ-diversity is the confidence cap
    assert result.exposed.sum() == 0
    with pytest.raises(AnonymityError):  # 75.1 % of Adult earns <= 50K: the root itself breaches
        KAnonymousTreeClassifier(k=1, quasi_identifiers=cats, max_confidence=0.75).fit(frame[cats], frame["income"])


# -- random tables ---------------------------------------------------------------------------

HIERARCHY = Hierarchy.categorical("c0", {"ANY": [{"uv": ["u", "v"]}, "w"]})


@st.composite
def random_case(draw):
    n = draw(st.integers(8, 40))
    columns = {}
    for j in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            columns[f"c{j}"] = pd.Categorical(draw(st.lists(st.sampled_from("uvw"), min_size=n, max_size=n)), categories=list("uvw"))
        else:
            columns[f"n{j}"] = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    columns["y"] = draw(st.lists(st.sampled_from("pq"), min_size=n, max_size=n))
    frame = pd.DataFrame(columns)
    public = [c for c in frame.columns[:-1] if draw(st.booleans())]
    k = draw(st.integers(1, 6))
    class_public = draw(st.booleans())
    ell = None if class_public or not draw(st.booleans()) else draw(st.floats(1.0, 1.9))
    return frame, public, k, class_public, ell


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_case(), st.sampled_from(["id3", "c45"]))
def test_random_tables_every_span_holds_k_records(brute_force_check, case, algorithm):
    frame, public, k, class_public, ell = case
    X, y = frame.drop(columns="y"), frame["y"]
    if algorithm == "id3":
        X = X[[c for c in X.columns if c.startswith("c")]]
        public = [c for c in public if c in X.columns]
        if X.shape[1] == 0:
            return
    hierarchies = {name: Hierarchy.categorical(name, {"ANY": [{"uv": ["u", "v"]}, "w"]}) for name in X.columns if name.startswith("c")}
    model = KAnonymousTreeClassifier(
        k=k, quasi_identifiers=public, hierarchies=hierarchies, algorithm=algorithm, class_public=class_public, l_diversity=ell,
        min_samples_leaf=1,
    )
    try:
        model.fit(X, y)
    except AnonymityError:
        assert len(frame) < k or class_public or ell is not None
        return
    brute_force_check(model, frame, public, k, ell)
    fast = model_anonymity(model.tree_, frame, ThreatModel(known=public), class_public)
    assert fast.k == model.anonymity_


def test_scikit_learn_conventions(mortgage):
    from sklearn.base import clone

    X, y = mortgage[["Marital Status", "Sports Car"]], mortgage["Loan Risk"]
    model = KAnonymousTreeClassifier(k=3, quasi_identifiers=["Marital Status"], algorithm="id3")
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    copy.fit(X, y)
    assert list(copy.classes_) == ["bad", "good"]
    assert copy.predict_proba(X).shape == (6, 2)
    assert (copy.predict(X) == model.fit(X, y).predict(X)).all()
    assert copy.score(X, y) == pytest.approx(5 / 6)


def test_c45_moves_a_breaching_split_point_to_one_that_keeps_k(brute_force_check):
    # the best threshold (x <= 16.5) leaves 3 records on its right; with k = 5 kADET-C4.5 takes
    # the best threshold that leaves at least 5 on each side (x <= 14.5), paper 002 §3.3.
    x = np.arange(20, dtype=float)
    X, y = pd.DataFrame({"x": x}), pd.Series(np.where(x >= 17, "hi", "lo"))
    free = KAnonymousTreeClassifier(k=1, algorithm="c45", prune=False, min_samples_leaf=1).fit(X, y)
    assert free.tree_.root.split.threshold == 16.5
    model = KAnonymousTreeClassifier(k=5, algorithm="c45", prune=False, min_samples_leaf=1).fit(X, y)
    assert model.tree_.root.split.threshold == 14.5
    assert model.anonymity_ == 5
    brute_force_check(model, X.assign(y=y), ["x"], 5)


def test_l_diversity_needs_a_private_class(mortgage):
    X, y = mortgage[["Marital Status", "Sports Car"]], mortgage["Loan Risk"]
    with pytest.raises(PpdmError, match="private class"):
        KAnonymousTreeClassifier(k=1, l_diversity=1.2, class_public=True).fit(X, y)
