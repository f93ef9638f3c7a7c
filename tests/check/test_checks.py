"""The structural checks (issue 46, deliverables 2-4): each policy rule triggers, passes, and is
cited by the recommendation; equivalence classes agree with the leaves a tree routes to and
refine the equal-output classes; parameter counts agree between scikit-learn and ppdm's reading;
a model no better than the majority class is never released; approximate evidence without a
proof is not met under the default policy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from ppdm.check import PRESETS, check_model
from ppdm.check.audit_evidence import audit_findings, membership_finding
from ppdm.check.dof import parameter_count
from ppdm.check.model import Checked, read_checked
from ppdm.check.policy import load_policy
from ppdm.check.recommend import CONDITIONAL, REJECT, RELEASE, recommend

CLASS = "target"


def _check(model, cancer, holdout=True, policy=None):
    Xtr, ytr, train, test = cancer
    model.fit(Xtr, ytr)
    return check_model(model, train, class_attribute=CLASS, holdout=test if holdout else None, policy=policy)


def _cited(result, rule, state):
    """The finding of ``rule`` is in ``state`` and the recommendation's reasons cite it."""
    finding = result.finding(rule)
    assert finding.state == state, finding.line()
    assert any(r.startswith(f"{rule}: {state}") for r in result.recommendation.reasons)
    return finding


def test_a_deep_tree_fails_the_cell_rules_and_a_shallow_one_with_large_leaves_passes_them(cancer):
    deep = _check(DecisionTreeClassifier(random_state=0), cancer)
    for rule in ("min_group_size", "class_disclosure", "small_groups", "hyperparameters"):
        _cited(deep, rule, "failed")
    assert deep.decision == CONDITIONAL and deep.recommendation.conditions
    shallow = _check(DecisionTreeClassifier(max_depth=2, min_samples_leaf=30, random_state=0), cancer)
    for rule in ("min_group_size", "hyperparameters", "residual_dof", "generalisation_gap", "beat_majority", "family"):
        _cited(shallow, rule, "passed")
    relaxed = _check(DecisionTreeClassifier(max_depth=2, min_samples_leaf=30, random_state=0), cancer, policy=load_policy({"structural": {"zeros_disclosive": False}}))
    _cited(relaxed, "class_disclosure", "passed")


def test_a_trees_classes_are_its_leaves_and_a_forests_spans_refine_its_outputs(cancer):
    Xtr, ytr, train, _ = cancer
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(Xtr, ytr)
    result = check_model(tree, train, class_attribute=CLASS)
    _, sizes = np.unique(tree.apply(Xtr), return_counts=True)
    assert result.classes["structure"]["classes"] == len(sizes) and result.classes["structure"]["k"] == sizes.min()
    leaf_proba = tree.tree_.value[:, 0, :] / tree.tree_.value[:, 0, :].sum(axis=1, keepdims=True)
    zero_leaves = {leaf for leaf in np.unique(tree.apply(Xtr)) if (leaf_proba[leaf] == 0).any()}
    assert result.classes["structure"]["people_with_zeros"] == int(np.isin(tree.apply(Xtr), list(zero_leaves)).sum())

    forest = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(Xtr, ytr)
    checked = read_checked(forest, train, CLASS)
    from ppdm.check.classes import output_classes, structural_classes

    spans, outputs = structural_classes(checked, train), output_classes(checked.proba(train))
    assert len(spans.sizes) >= len(outputs.sizes) and spans.k <= outputs.k
    for span in range(len(spans.sizes)):  # every span lies inside one output class
        assert len(np.unique(outputs.of[spans.of == span])) == 1
    assert spans.people_in(spans.zeros) >= outputs.people_in(outputs.zeros)
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.leaf.anonymity import model_anonymity

    linked = model_anonymity(checked.ppdm_model, train, ThreatModel(sensitive=CLASS, known=tuple(Xtr.columns)), class_public=False)
    assert sorted(linked.population) == sorted(spans.sizes)  # the linking attack's spans, every input known
    assert len(np.unique(np.stack([linked.span_of, spans.of]), axis=1).T) == len(spans.sizes)


@pytest.mark.parametrize(
    "make",
    [
        lambda: DecisionTreeClassifier(max_depth=5, random_state=0),
        lambda: RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0),
        lambda: HistGradientBoostingClassifier(max_iter=5, random_state=0),
    ],
)
def test_the_parameter_count_of_scikit_learn_and_of_ppdms_reading_agree(cancer, make):
    Xtr, ytr, train, _ = cancer
    model = make().fit(Xtr, ytr)
    checked = read_checked(model, train, CLASS)
    assert checked.ppdm_model is not None
    ours, _ = parameter_count(checked)
    again, _ = parameter_count(Checked(checked.ppdm_model, CLASS, checked.ppdm_model))
    assert ours == again and ours > 0


def test_parameters_of_the_other_families_are_what_they_store(cancer):
    Xtr, ytr, train, _ = cancer
    mlp = MLPClassifier(hidden_layer_sizes=(7,), max_iter=50, random_state=0).fit(Xtr, ytr)
    assert parameter_count(Checked(mlp, CLASS))[0] == Xtr.shape[1] * 7 + 7 + 7 + 1
    knn = KNeighborsClassifier().fit(Xtr, ytr)
    assert parameter_count(Checked(knn, CLASS))[0] == Xtr.size
    svc = SVC().fit(Xtr, ytr)
    assert parameter_count(Checked(svc, CLASS))[0] == svc.n_support_.sum() * (Xtr.shape[1] + 1) + 1
    lr = LogisticRegression(max_iter=2000).fit(Xtr, ytr)
    assert parameter_count(Checked(lr, CLASS))[0] == Xtr.shape[1] + 1
    assert parameter_count(Checked(DummyClassifier().fit(Xtr, ytr), CLASS))[0] is None


def test_residual_degrees_of_freedom_fail_for_a_forest_larger_than_its_table(cancer):
    result = _check(RandomForestClassifier(n_estimators=30, random_state=0), cancer)
    finding = _cited(result, "residual_dof", "failed")
    assert finding.value < 0 and finding.strength == "proved"


def test_an_svm_and_knn_are_rejected_on_sight_citing_the_family_rule(cancer):
    for model in (SVC(random_state=0), KNeighborsClassifier(n_neighbors=3)):
        result = _check(model, cancer)
        _cited(result, "family", "failed")
        assert result.decision == REJECT and "family" in result.recommendation.reasons[0]
    knn = _check(KNeighborsClassifier(n_neighbors=3), cancer, policy=load_policy({"reject": []}))
    assert knn.decision == CONDITIONAL and "n_neighbors=3" in knn.finding("hyperparameters").evidence


def test_a_gap_beyond_the_limit_fails_and_rejects_under_a_policy_that_says_so(cancer):
    Xtr, ytr, train, test = cancer
    rng = np.random.default_rng(0)
    noisy = train.assign(**{CLASS: np.where(rng.random(len(train)) < 0.3, 1 - train[CLASS], train[CLASS])})
    tree = DecisionTreeClassifier(random_state=0).fit(Xtr, noisy[CLASS])
    policy = load_policy({"structural": {"max_generalisation_gap": 0.05}, "reject": ["generalisation_gap"]})
    result = check_model(tree, noisy, class_attribute=CLASS, holdout=test, policy=policy)
    finding = _cited(result, "generalisation_gap", "failed")
    assert finding.value > 0.05 and result.decision == REJECT


def test_a_model_at_the_majority_class_accuracy_is_not_released(cancer):
    result = _check(DummyClassifier(strategy="most_frequent"), cancer, policy=load_policy({"structural": {"min_group_size": 1}}))
    finding = _cited(result, "beat_majority", "failed")
    assert finding.value == pytest.approx(finding.limit)
    assert result.decision != RELEASE and "majority class" in result.recommendation.reasons[0]
    better = _check(LogisticRegression(max_iter=3000), cancer)
    _cited(better, "beat_majority", "passed")


def test_without_held_out_rows_the_gap_is_not_checked_and_the_model_not_released_outright(cancer):
    result = _check(DecisionTreeClassifier(max_depth=2, min_samples_leaf=30, random_state=0), cancer, holdout=False)
    _cited(result, "generalisation_gap", "not checked")
    assert result.decision == CONDITIONAL


def test_every_rule_passed_releases(cancer):
    policy = load_policy({"structural": {"zeros_disclosive": False, "min_group_size": 5}})
    result = _check(DecisionTreeClassifier(max_depth=1, random_state=0), cancer, policy=policy)
    assert result.decision == RELEASE, result.lines()
    assert all(f.state == "passed" for f in result.findings)


class _Audit:
    """An audit's shape as audit_findings reads it (an estimate, maybe a proof, maybe membership)."""

    def __init__(self, estimate, proved=None, membership=None):
        self.estimate, self.proved, self.membership = estimate, proved, membership


def test_an_approximate_estimate_without_proof_is_not_met_unless_the_policy_counts_it(report_audit):
    _, _, _, result = report_audit
    clean = PRESETS["default"]
    lenient = load_policy({"attribute": {"certain": 1000, "confident": {"share": 1.0, "at": 0.9}}})
    assert audit_findings(_Audit(result), lenient)[0].state == "passed"
    approximate = type(result)(**{k: getattr(result, k) for k in result.__dataclass_fields__})
    approximate.details = {**result.details, "status": "approximate"}
    (finding,) = audit_findings(_Audit(approximate), lenient)
    assert finding.state == "not checked" and finding.strength == "approximate" and "no proof" in finding.evidence
    advice = recommend([finding], lenient)
    assert advice.decision != RELEASE and any(r.startswith("attribute: not checked (approximate)") for r in advice.reasons)
    counted = load_policy({"attribute": {"certain": 1000, "confident": {"share": 1.0, "at": 0.9}}, "evidence": {"approximate_counts": True}})
    assert audit_findings(_Audit(approximate), counted)[0].state == "passed"
    failed = audit_findings(_Audit(approximate), clean)[0]  # the pure leaf: people certain, whatever the strength
    assert failed.state == "failed" and failed.rule == "attribute"


def test_a_membership_finding_cites_the_policy_limit():
    strict = PRESETS["strict"]
    assert membership_finding("lira", 0.01, 0.01, strict).state == "passed"
    failed = membership_finding("lira", 0.2, 0.01, strict)
    assert failed.state == "failed" and recommend([failed], strict).decision == REJECT
    assert membership_finding("lira", 0.2, 0.1, strict).state == "not checked"


def test_the_check_result_is_valid_json_of_the_policy_cited(cancer):
    import json

    result = _check(DecisionTreeClassifier(max_depth=3, random_state=0), cancer)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["policy"]["sha256"] == PRESETS["default"].sha256 and data["recommendation"]["decision"] == result.decision
    assert {f["rule"] for f in data["findings"]} >= {"family", "min_group_size", "class_disclosure", "small_groups", "residual_dof"}
    assert isinstance(pd.DataFrame(data["findings"]), pd.DataFrame)


def test_text_where_the_model_reads_numbers_is_named_by_its_column():
    """A table holding 'F' where the model was fitted on numbers: the error names the column, the
    value and the row (it said 'could not convert string to float: 'F'')."""
    from ppdm.errors import PpdmError

    X = pd.DataFrame({"a": [1.0, 2, 3, 4], "sex": [0.0, 1, 0, 1]})
    model = DecisionTreeClassifier().fit(X, ["n", "p", "n", "p"])
    table = pd.DataFrame({"a": [1.0, 2, 3, 4], "sex": [0, "F", 0, 1], "c": ["n", "p", "n", "p"]})
    with pytest.raises(PpdmError, match=r"column 'sex' holds text \('F', row 1\) where the model reads numbers"):
        read_checked(model, table, "c").proba(table)
