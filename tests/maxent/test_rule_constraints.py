"""Constraints from published association rules (paper 004 §V): Examples 1 and 2, Theorem 1's
expansion, Theorem 3's pruning and its counts on Adult, and the strict-inequality rounding."""

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks.models.rules import rules_attack
from ppdm.data.qigroups import QIGroups
from ppdm.errors import InfeasibleError, RulesError
from ppdm.maxent import LinearBlock, solve_linear
from ppdm.maxent.constraints.rule_constraints import RuleKnowledge, at_least_bound, rules_problem, strictly_below
from ppdm.rules import mine_rules, rules_from_items

VALUES = ("50K+", "50K-")
QIS = ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country", "education"]


def figure2() -> pd.DataFrame:
    rows = [("Doctorate", "Female", "50K+"), ("Doctorate", "Male", "50K+"), ("Masters", "Female", "50K-")]
    return pd.DataFrame(rows, columns=["Education", "Gender", "Salary"])


def figure1b(publish="exact"):
    """The three rules of Figure 1(b), with the paper's rounded values; not the complete rule set."""
    rules = rules_from_items(
        "Salary", VALUES, ["Education", "Gender"], 0.3, 0.8,
        [({"Education": "Doctorate"}, "50K+", 0.42, 0.83), ({"Education": "Doctorate", "Gender": "Female"}, "50K+", 0.33, 1.0),
         ({"Gender": "Female"}, "50K+", 0.67, 0.89)],
        n_records=12, complete=False,
    )
    return rules.published(publish)


def posterior_of(result, **qi):
    table = result.groups.table
    mask = np.logical_and.reduce([table[k].astype(str) == v for k, v in qi.items()])
    return result.posterior[np.flatnonzero(mask)[0], 0]


# -- Example 1 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("publish", ["exact", "thresholds"])
def test_example1_male_doctorates_earn_50k_plus_with_probability_one_half(publish, salary_d):
    """§I-A: rules 1 and 2 together: only one of the two male doctorates earns 50K+ (P_md = 0.5)."""
    result = rules_attack(figure1b(publish), salary_d, RuleKnowledge(nar=False))
    assert posterior_of(result, Education="Doctorate", Gender="Male") == pytest.approx(0.5, abs=1e-7)
    assert posterior_of(result, Education="Doctorate", Gender="Female") == pytest.approx(1.0, abs=1e-7)
    # rule 3: P(Gender=Female, 50K+) = 0.67 -> the five female masters hold 4 of the 8 (exact) / at least 4
    assert posterior_of(result, Education="Masters", Gender="Female") == pytest.approx(0.8, abs=1e-7)
    assert posterior_of(result, Education="Bachelors", Gender="Male") == pytest.approx(0.5, abs=1e-7)


def test_example1_single_rule_bounds_are_the_papers_inequalities(salary_d):
    """§I-A with thresholds only: P(Female, 50K+) >= 0.3 and P(50K+ | Female) >= 0.8, one AR row."""
    rules = rules_from_items("Salary", VALUES, ["Education", "Gender"], 0.3, 0.8, [({"Gender": "Female"}, "50K+", None, None)], "thresholds", 12, False)
    groups = QIGroups.from_frame(salary_d, ["Education", "Gender"])
    problem, _ = rules_problem(rules, groups, RuleKnowledge(nar=False, strict="closed"))
    (block,) = problem.blocks
    assert block.sense == "le" and block.b[0] == pytest.approx(-max(0.3, 0.8 * 9 / 12))
    female_plus = [g * 2 for g in range(groups.n_groups) if groups.table.Gender[g] == "Female"]
    assert sorted(block.A.indices) == sorted(female_plus) and set(block.A.data) == {-1.0}  # Theorem 1 expansion


def test_example1_figure1b_as_the_complete_rule_set_contradicts_its_data(salary_d):
    """Read as complete, Figure 1(b) says Masters => 50K+ failed a threshold, but it qualifies (4/12, 0.8)."""
    complete = figure1b().__class__(**{**figure1b().__dict__, "complete": True})
    with pytest.raises(InfeasibleError) as info:
        rules_attack(complete, salary_d, RuleKnowledge(nar=True))
    assert any("Education=Masters" in row and "NAR" in row for row in info.value.conflict)


def test_example1_with_the_complete_mined_rules_and_nar(salary_d):
    rules = mine_rules(salary_d, ["Education", "Gender"], "Salary", 0.3, 0.8, values=VALUES)
    result = rules_attack(rules, salary_d, RuleKnowledge(nar=True))
    assert posterior_of(result, Education="Doctorate", Gender="Male") == pytest.approx(0.5, abs=1e-6)
    # every group is estimated exactly but the lone male bachelor (50K−, estimated 1/2): D = log(2) / 12
    assert result.details["overall_divergence"] == pytest.approx(np.log(2) / 12, abs=1e-6)


# -- Example 2 ------------------------------------------------------------------------------------
def example2(publish="exact"):
    rules = mine_rules(figure2(), ["Education", "Gender"], "Salary", 0.6, 0.9, values=VALUES)
    assert [(r.antecedent, r.consequent) for r in rules.rules] == [((("Education", "Doctorate"),), "50K+")]
    return rules.published(publish)


@pytest.mark.parametrize("publish", ["exact", "thresholds"])
def test_example2_nar_constraints_reveal_the_third_persons_salary(publish):
    """§I-A: 'Gender = Female => 50K+' is not published, so the third person earns 50K−."""
    without = rules_attack(example2(publish), figure2(), RuleKnowledge(nar=False))
    with_nar = rules_attack(example2(publish), figure2(), RuleKnowledge(nar=True))
    assert posterior_of(without, Education="Masters") == pytest.approx(0.5, abs=1e-7)
    assert posterior_of(with_nar, Education="Masters") < 1e-6  # moved all the way to 50K−
    assert posterior_of(with_nar, Education="Doctorate", Gender="Male") == pytest.approx(1.0, abs=1e-6)
    assert with_nar.exposed.all()


def _max_feasible(rules, frame, knowledge, group_qi, level):
    """Whether P(50K+ | group) >= level is consistent with the constraints (a probe row)."""
    groups = QIGroups.from_frame(frame, ["Education", "Gender"])
    problem, _ = rules_problem(rules, groups, knowledge)
    g = int(np.flatnonzero((groups.table.Education == group_qi).to_numpy())[0])
    A = np.zeros((1, problem.n_variables))
    A[0, g * 2] = -1.0
    problem.add(LinearBlock("probe", A, [-level * groups.weights[g]], "le", ["probe"]))
    try:
        solve_linear(problem)
        return True
    except InfeasibleError:
        return False


def test_example2_what_the_closed_relaxation_can_and_cannot_conclude():
    """With P(Q,X) <= bound (no integrality) the NAR row of 'Female => 50K+' only says
    P(50K+ | Masters, Female) <= 0.8: valid but weak. The uniform 0.5 already satisfies it, so
    the ME estimate does not move; the relaxation cannot exclude a fractional 0.8 of a person."""
    closed = RuleKnowledge(nar=True, strict="closed")
    assert posterior_of(rules_attack(example2(), figure2(), closed), Education="Masters") == pytest.approx(0.5, abs=1e-7)
    assert _max_feasible(example2(), figure2(), closed, "Masters", 0.79)
    assert not _max_feasible(example2(), figure2(), closed, "Masters", 0.81)
    assert _max_feasible(example2(), figure2(), RuleKnowledge(nar=False, strict="closed"), "Masters", 0.99)
    # with whole records the same row reads count(Female, 50K+) <= 1: no 50K+ at all is left for her
    assert not _max_feasible(example2(), figure2(), RuleKnowledge(nar=True), "Masters", 1e-3)


# -- rounding of strict inequalities --------------------------------------------------------------
def test_strict_bounds_on_whole_records():
    n = 10
    assert strictly_below(np.array([3.6, 4.0, 0.6 * 5]), n, "integer") * n == pytest.approx([3, 3, 2])
    assert at_least_bound(np.array([3.6, 4.0, 0.6 * 5]), n, "integer") * n == pytest.approx([4, 4, 3])
    assert strictly_below(np.array([3.6]), n, "closed") * n == pytest.approx([3.6])


def test_exact_supports_must_fit_the_table(salary_d):
    bad = rules_from_items("Salary", VALUES, ["Education", "Gender"], 0.3, 0.8, [({"Education": "Bachelors"}, "50K-", 0.5, 1.0)], n_records=12, complete=False)
    with pytest.raises(RulesError, match=r"rules\[0\]\.support"):
        rules_attack(bad, salary_d, RuleKnowledge(nar=False))
    unknown = rules_from_items("Salary", VALUES, ["Education", "Gender"], 0.3, 0.8, [({"Education": "PhD"}, "50K-", 0.5, 1.0)], n_records=12, complete=False)
    with pytest.raises(RulesError, match=r"rules\[0\].*matches no one"):
        rules_attack(unknown, salary_d, RuleKnowledge(nar=False))
    with pytest.raises(RulesError, match="complete rule set"):
        rules_attack(figure1b(), salary_d, RuleKnowledge(nar=True))


# -- Theorem 3 on Adult ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def adult_rules(adult_train):
    frame, _ = adult_train
    return frame, mine_rules(frame, QIS, "income", 0.1, 0.6)


def test_adult_nar_counts_match_the_paper(adult_rules):
    """§VI-D (s = 0.1, c = 0.6): about 766,000 NAR constraints without pruning, 449 after, with 281,014 variables."""
    frame, rules = adult_rules
    groups = QIGroups.from_frame(frame, QIS)
    assert groups.n_groups == 7722  # §VI: 7722 distinct QI values
    problem, stats = rules_problem(rules, groups, RuleKnowledge())
    assert stats.nar_patterns == 766_472
    assert stats.nar_generated == 449
    assert stats.nar_pruned == 766_472 - 449
    assert stats.nar_variables == 281_014
    assert stats.ar_rows == len(rules) == 110
    assert stats.itemsets_examined < 5000  # Figure 3 never looks at most of the 383,291 itemsets
    # the true distribution satisfies every row (the rounding of strict inequalities is valid)
    true = groups.value_counts(frame["income"].cat.codes.to_numpy(), 2) / groups.counts[:, None]
    assert problem.violations(true).max() <= 1e-12


def test_pruned_and_unpruned_constraints_give_the_same_solution(adult_rules):
    frame, _ = adult_rules
    sample = frame.sample(3000, random_state=0)  # 1,535 QI groups, 222,618 NAR rows unpruned, 403 pruned
    rules = mine_rules(sample, QIS, "income", 0.1, 0.6)
    groups = QIGroups.from_frame(sample, QIS)
    pruned, ps = rules_problem(rules, groups, RuleKnowledge(prune=True))
    full, fs = rules_problem(rules, groups, RuleKnowledge(prune=False))
    assert ps.nar_patterns == fs.nar_generated and ps.nar_generated < fs.nar_generated / 100
    a, b = solve_linear(pruned), solve_linear(full)
    assert np.abs(a.p - b.p).max() < 1e-6
    assert full.violations(a.p).max() < 1e-8  # every pruned row holds at the pruned solution


# -- random tables: the truth satisfies every row, pruning never changes the answer -----------------
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_tables_truth_is_feasible_and_pruning_is_exact(seed):
    rng = np.random.default_rng(seed)
    n = 80
    frame = pd.DataFrame({"a": rng.choice(list("xyz"), n, p=[0.5, 0.3, 0.2]), "b": rng.choice(list("pq"), n),
                          "c": rng.choice(list("uvw"), n, p=[0.6, 0.3, 0.1]), "d": rng.choice(list("mn"), n, p=[0.7, 0.3])})
    frame["s"] = np.where((frame.a == "x") & (rng.random(n) < 0.7), "hi", rng.choice(["hi", "lo", "mid"], n))
    s, c = [(0.05, 0.5), (0.1, 0.4), (0.03, 0.7), (0.15, 0.6)][seed]
    rules = mine_rules(frame, list("abcd"), "s", s, c)
    groups = QIGroups.from_frame(frame, list("abcd"))
    true = groups.value_counts(pd.Categorical(frame["s"], categories=rules.values).codes, 3) / groups.counts[:, None]
    for publish in ("exact", "thresholds"):
        published = rules.published(publish)
        pruned, ps = rules_problem(published, groups, RuleKnowledge(prune=True))
        full, fs = rules_problem(published, groups, RuleKnowledge(prune=False))
        assert full.violations(true).max() <= 1e-12  # every AR and NAR row holds for the real data
        assert ps.nar_patterns == fs.nar_generated and ps.nar_generated + ps.nar_pruned == fs.nar_generated
        a, b = solve_linear(pruned), solve_linear(full)
        assert np.abs(a.p - b.p).max() < 1e-6


def test_sa_constraints_alone_also_reveal_the_third_person():
    """§V-D, equation 9: if P(50K+) = 2/3 is published with the rule, the two doctorates already
    account for all of it, with or without NAR constraints."""
    with_sa = rules_attack(example2(), figure2(), RuleKnowledge(nar=False, sa=True))
    assert posterior_of(with_sa, Education="Masters") < 1e-6
    assert [blk.name for blk in rules_problem(example2(), QIGroups.from_frame(figure2(), ["Education", "Gender"]), RuleKnowledge(nar=False, sa=True), np.array([2 / 3, 1 / 3]))[0].blocks] == ["AR", "SA"]
    with pytest.raises(RulesError, match="distribution"):
        rules_problem(example2(), QIGroups.from_frame(figure2(), ["Education", "Gender"]), RuleKnowledge(sa=True))
