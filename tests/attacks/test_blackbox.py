"""The black-box membership attacks (issue 45): each equals a reference written here from the
papers on a tiny case, the shadow models' cache is keyed by the model's parameters and the data,
the reported attacker is never weaker than any attack in the table, a verdict never says "met"
while an attack breaks the target, and a model ppdm cannot read as trees is audited."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import ppdm
from ppdm.attacks.membership.blackbox import ATTACKS, BlackboxOptions, blackbox_membership, estimator_inputs
from ppdm.attacks.membership.lira import lira_offline, lira_online
from ppdm.attacks.membership.rmia import rmia_scores
from ppdm.attacks.membership.shadow_models import keep_matrix, shadow_confidences
from ppdm.errors import DataError, PpdmError
from ppdm.report.membership import membership_summary, membership_target, membership_verdict

#: The white-box attacks beside the estimate on a sample pool: the count ratio, alone and with RMIA.
SAMPLE_POOL = ("count-ratio", "count-ratio+rmia-online")


# -- references, one example at a time, from the papers' formulas ---------------------------------
def ref_phi(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def ref_lira(target, shadow, inside, online):
    """Carlini et al. 2022, Algorithm 1 with each example's own Gaussian(s) (no fixed variance)."""
    out = []
    for i, p in enumerate(target):
        phis_in = [ref_phi(shadow[k, i]) for k in range(shadow.shape[0]) if inside[k, i]]
        phis_out = [ref_phi(shadow[k, i]) for k in range(shadow.shape[0]) if not inside[k, i]]
        m_out, s_out = np.mean(phis_out), max(np.std(phis_out, ddof=1), 1e-6)
        if online:
            m_in, s_in = np.mean(phis_in), max(np.std(phis_in, ddof=1), 1e-6)
            out.append(norm.logpdf(ref_phi(p), m_in, s_in) - norm.logpdf(ref_phi(p), m_out, s_out))
        else:
            out.append(-norm.logsf(ref_phi(p), m_out, s_out))  # log of the one-sided p-value Pr[Z > φ]
    return np.array(out)


def ref_rmia(target, shadow, inside, z, online, a, gamma):
    """Zarifzadeh et al. 2024, Eq. 4–5 (offline: App. B's ½((1+a)Pr_OUT + 1 − a)), pair by pair."""

    def pr(i):
        if online:
            return shadow[:, i].mean()
        return 0.5 * ((1 + a) * shadow[~inside[:, i], i].mean() + 1 - a)

    out = []
    for x in range(len(target)):
        hits = sum((target[x] / pr(x)) / (target[j] / pr(j)) >= gamma for j in z)
        out.append(hits / len(z))
    return np.array(out)


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(3)
    models, points = 8, 7
    inside = keep_matrix(models, points, seed=1)
    shadow = rng.uniform(0.05, 0.95, (models, points))
    target = rng.uniform(0.05, 0.95, points)
    return target, shadow, inside


def test_keep_matrix_puts_every_point_in_exactly_half_of_the_models():
    inside = keep_matrix(6, 50, seed=0)
    assert (inside.sum(axis=0) == 3).all() and inside.any(axis=1).all()


@pytest.mark.parametrize("online", [True, False])
def test_lira_equals_the_reference_on_a_tiny_case(tiny, online):
    target, shadow, inside = tiny
    run = lira_online if online else lira_offline
    assert np.allclose(run(target, shadow, inside, fixed_variance=False), ref_lira(target, shadow, inside, online), rtol=1e-9)


def test_lira_fixed_variance_is_one_median_standard_deviation(tiny):
    target, shadow, inside = tiny
    phi = np.log(shadow / (1 - shadow))
    sds = [np.std(phi[~inside[:, i], i], ddof=1) for i in range(len(target))]
    expect = -norm.logsf(np.log(target / (1 - target)), [phi[~inside[:, i], i].mean() for i in range(len(target))], np.median(sds))
    assert np.allclose(lira_offline(target, shadow, inside, fixed_variance=True), expect)


@pytest.mark.parametrize(("online", "gamma"), [(True, 1.0), (False, 1.0), (False, 1.7)])
def test_rmia_equals_the_reference_on_a_tiny_case(tiny, online, gamma):
    target, shadow, inside = tiny
    z = np.array([4, 5, 6])
    got = rmia_scores(target, shadow, inside, z, online=online, a=0.4, gamma=gamma)
    assert np.allclose(got, ref_rmia(target, shadow, inside, z, online, 0.4, gamma))


# -- the whole attack on a fitted model ---------------------------------------------------------
@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:, :8].rename(columns=lambda c: c.replace(" ", "_"))
    member = np.random.default_rng(0).random(len(y)) < 0.5
    return X, y.to_numpy(), member


def logistic():
    return make_pipeline(StandardScaler(), LogisticRegression(C=10.0, max_iter=500))


def test_the_attacks_read_the_shadow_models_as_the_references_do(cancer, tmp_path):
    X, y, member = cancer
    model = logistic().fit(X[member], y[member])
    options = BlackboxOptions(shadows=4, seed=2, cache=tmp_path)
    found = blackbox_membership(model, X, y, truth=member, options=options)
    assert list(found.scores) == list(ATTACKS)
    table = shadow_confidences(model, X, y, 4, 2, tmp_path)  # the cached table the attacks read
    assert table.cached
    target = model.predict_proba(X)[np.arange(len(y)), y]
    assert np.allclose(found.scores["confidence"], target)
    expect = ref_rmia(target[:40], table.confidence[:, :40], table.inside[:, :40], np.arange(40), False, options.rmia_a, 1.0)
    sub = rmia_scores(target[:40], table.confidence[:, :40], table.inside[:, :40], np.arange(40), online=False, a=options.rmia_a)
    assert np.allclose(sub, expect)
    # the full-scale LiRA equals the per-example reference once the variance is each example's own
    per_example = blackbox_membership(model, X, y, options=BlackboxOptions(shadows=4, seed=2, cache=tmp_path, fixed_variance=False))
    assert np.allclose(per_example.scores["lira-online"], ref_lira(target, table.confidence, table.inside, True))
    assert np.allclose(per_example.scores["lira-offline"], ref_lira(target, table.confidence, table.inside, False))
    rows = found.table()
    assert [r["attack"] for r in rows] == list(ATTACKS)
    assert all(0.0 <= r["auc"] <= 1.0 and r["control_auc"] is not None for r in rows)


def test_the_cache_is_keyed_by_the_model_parameters_and_the_data(cancer, tmp_path):
    X, y, member = cancer
    model = logistic().fit(X[member], y[member])
    options = BlackboxOptions(shadows=2, cache=tmp_path, attacks=("lira-offline",))
    first = blackbox_membership(model, X, y, options=options)
    again = blackbox_membership(model, X, y, options=options)
    assert not first.details["shadow_cached"] and again.details["shadow_cached"]
    assert np.array_equal(first.scores["lira-offline"], again.scores["lira-offline"])
    other = make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=500)).fit(X[member], y[member])
    assert not blackbox_membership(other, X, y, options=options).details["shadow_cached"]  # another parameter: a miss
    changed = X.copy()
    changed.iloc[3, 2] += 1.0
    assert not blackbox_membership(model, changed, y, options=options).details["shadow_cached"]  # another row: a miss
    flipped = y.copy()
    flipped[5] = 1 - flipped[5]
    assert not blackbox_membership(model, X, flipped, options=options).details["shadow_cached"]  # another label: a miss
    for entry in tmp_path.iterdir():  # a tampered entry reads as absent, never as another run's numbers
        np.save(entry / "inside.npy", np.zeros((7, 3), bool))
    assert not blackbox_membership(model, X, y, options=options).details["shadow_cached"]


def test_what_the_attacks_refuse(cancer):
    X, y, member = cancer
    model = logistic().fit(X[member], y[member])
    with pytest.raises(PpdmError, match="at least 2 shadow models"):
        blackbox_membership(model, X, y, options=BlackboxOptions(shadows=1, attacks=("lira-online",)))
    with pytest.raises(PpdmError, match="unknown black-box attack 'shokri'"):
        BlackboxOptions(attacks=("shokri",))
    with pytest.raises(DataError, match="3 class labels for 569 rows"):
        blackbox_membership(model, X, y[:3])
    with pytest.raises(DataError, match="which column is the class"):
        estimator_inputs(LogisticRegression(), X.assign(a=1, b=2))


# -- the membership audit reports the strongest attack -------------------------------------------
def population(X, y, member):
    return X.assign(target=y, member=member)


def test_a_logistic_regression_is_audited_by_the_black_box_attacks(cancer, tmp_path):
    X, y, member = cancer
    model = logistic().fit(X[member], y[member])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = ppdm.audit(model, membership=population(X, y, member), blackbox=BlackboxOptions(shadows=4), progress=False)
    result = done.membership
    assert not result.white_box and (result.state == -1).all()
    s = result.summary()
    assert [r["attack"] for r in s["attacks"]] == list(ATTACKS)
    for key in ("auc", "tpr@0.1%", "tpr@1%"):
        assert s[key] == max(r[key] for r in s["attacks"])
        assert next(r for r in s["attacks"] if r["attack"] == s["reached_by"][key])[key] == s[key]  # named by the attack reaching it
    assert "the black-box attacks alone" in str(result)
    done.report(tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "membership-attacks" in page
    assert "the model publishes no training count" in page and "0 trees" not in page and "trained on 0 records" not in page
    record = done.release_record()
    assert record["model"]["family"] == "Pipeline" and record["model"]["trees"] is None


def test_rates_reached_by_different_attacks_are_each_named_by_theirs():
    """The printed rates and the report's verdict credit each rate to the attack reaching it, not
    every rate to the attack ranked strongest (a new user read RMIA's AUC as LiRA's)."""
    from ppdm.attacks.membership.audit import _against_the_truth

    s = {"auc": 0.577, "tpr@0.1%": 0.004, "tpr@1%": 0.018, "strongest": "lira-online",
         "reached_by": {"auc": "rmia-online", "tpr@0.1%": "lira-online", "tpr@1%": "lira-online"}}
    line = _against_the_truth(s)
    assert "AUC 0.577 (rmia-online)" in line and "TPR at 1% FPR 0.018 (lira-online)" in line and "the strongest attack" not in line
    same = {**s, "reached_by": dict.fromkeys(s["reached_by"], "lira-online")}
    assert _against_the_truth(same).startswith("against the truth (the strongest attack: lira-online): AUC 0.577")
    summary = {**s, "proved_members": 0, "candidates": 100, "baseline_member_share": 0.5, "proved_non_members": 0, "undecided": 100,
               "attacks": [{"attack": "lira-online"}, {"attack": "rmia-online"}]}
    text = " ".join(membership_verdict(summary)["lines"])
    assert "1.8 % of the members at 1 % FPR (lira-online)" in text and "AUC 0.577, rmia-online" in text


def test_the_verdict_reads_the_strongest_attack_never_weaker_than_one(cancer):
    """A bagged forest audited on a sample population: the white-box estimate alone finds few
    members at 1 % FPR; the black-box attacks on the same candidates find more, and the verdict
    and release record read them."""
    X, y, member = cancer
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X[member], y[member])
    held = member & (np.random.default_rng(1).random(len(y)) < 0.5)
    pool = population(X, y, member)[held | ~member]
    done = ppdm.audit(forest, membership=pool, sample=True, blackbox=BlackboxOptions(shadows=4), progress=False)
    s = done.membership.summary()
    rows = {r["attack"]: r for r in s["attacks"]}
    assert set(rows) == {"ppdm", *SAMPLE_POOL, *ATTACKS}
    for key in ("auc", "tpr@0.1%", "tpr@1%"):  # never weaker than any attack in the table
        assert s[key] >= max(r[key] for r in rows.values()) - 1e-12
        assert done.membership.tpr_at(0.01) == pytest.approx(s["tpr@1%"])
    assert s["white_box_rates"]["tpr@1%"] == rows["ppdm"]["tpr@1%"]
    target = ppdm.attacks.core.target.parse_target(f"mia_tpr@1%<={(rows['ppdm']['tpr@1%'] + s['tpr@1%']) / 2:.4f}")
    assert rows["ppdm"]["tpr@1%"] < s["tpr@1%"]  # a target the white-box estimate alone would meet
    verdict = membership_verdict(membership_summary(done.membership, membership_target(target)), target)
    assert verdict["level"] == "fails" and "not met" in verdict["lines"][-1]
    alone = {**s, "tpr@1%": rows["ppdm"]["tpr@1%"], "attacks": None, "strongest": None}
    assert membership_verdict(alone, target)["level"] != "fails"  # what it said before the black-box attacks
    record = ppdm.audit(forest, membership=pool, sample=True, blackbox=BlackboxOptions(shadows=4), progress=False, target=target).release_record()
    assert record["decision"] == "do not release"


def test_blackbox_false_keeps_the_white_box_audit_alone(cancer):
    X, y, member = cancer
    forest = RandomForestClassifier(n_estimators=5, random_state=0, max_depth=4).fit(X[member], y[member])
    done = ppdm.audit(forest, membership=population(X, y, member), blackbox=False, progress=False)
    assert done.membership.blackbox is None and "attacks" not in done.membership.summary()
    with pytest.raises(PpdmError, match="is not a model ppdm imports"):
        ppdm.audit(logistic().fit(X[member], y[member]), membership=population(X, y, member), blackbox=False, progress=False)


def test_a_model_known_by_its_predicted_probabilities_gets_the_confidence_attack(cancer, tmp_path):
    X, y, member = cancer
    model = logistic().fit(X[member], y[member])
    population(X, y, member).to_csv(tmp_path / "pop.csv", index=False)
    proba = pd.DataFrame(model.predict_proba(X), columns=[str(c) for c in model.classes_])
    proba.to_csv(tmp_path / "scores.csv", index=False)
    done = ppdm.audit(None, membership=tmp_path / "pop.csv", blackbox=tmp_path / "scores.csv", class_attribute="target", progress=False)
    rows = done.membership.summary()["attacks"]
    assert [r["attack"] for r in rows] == ["confidence"]
    assert np.allclose(done.membership.blackbox.scores["confidence"], model.predict_proba(X)[np.arange(len(y)), y])
    assert "confidence attack alone" in str(done.membership)
    proba.iloc[4, 1] = 1.5
    with pytest.raises(DataError, match="column '1', row 4: 1.5 is not a probability"):
        ppdm.audit(None, membership=tmp_path / "pop.csv", blackbox=proba, class_attribute="target", progress=False)
    with pytest.raises(DataError, match="3 rows of probabilities for 569 candidates"):
        ppdm.audit(None, membership=tmp_path / "pop.csv", blackbox=proba.head(3), class_attribute="target", progress=False)


@pytest.mark.slow
def test_the_cli_reads_predicted_probabilities_with_scores(cancer, tmp_path):
    X, y, member = cancer
    model = logistic().fit(X[member], y[member])
    population(X, y, member).to_csv(tmp_path / "pop.csv", index=False)
    pd.DataFrame(model.predict_proba(X), columns=[str(c) for c in model.classes_]).to_csv(tmp_path / "scores.csv", index=False)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    pop, scores = str(tmp_path / "pop.csv"), str(tmp_path / "scores.csv")
    run = [sys.executable, "-m", "ppdm", "audit", "--membership", "--population", pop, "--scores", scores, "--class", "target"]
    shown = subprocess.run(run, capture_output=True, text=True, env=env, check=False)
    assert shown.returncode == 0 and "the strongest attack: confidence" in shown.stdout
    alone = subprocess.run([*run[:4], "--scores", str(tmp_path / "scores.csv")], capture_output=True, text=True, env=env, check=False)
    assert alone.returncode == 2 and "--scores gives a membership audit" in alone.stderr + alone.stdout


@pytest.mark.parametrize("family", ["tree", "forest", "logistic"])
@pytest.mark.parametrize("half", [False, True])
def test_the_reported_attacker_is_never_weaker_than_any_attack_over_a_grid(cancer, family, half):
    """The habit over model families × complete and half-member populations, a reference sample
    of non-members feeding the shadow models: every rate reported is the table's highest."""
    from sklearn.tree import DecisionTreeClassifier

    X, y, member = cancer
    rng = np.random.default_rng(4)
    spare = ~member & (rng.random(len(y)) < 0.3)  # reference people: non-members kept out of the candidates
    fitted = {"tree": DecisionTreeClassifier(max_depth=5, random_state=0), "forest": RandomForestClassifier(n_estimators=5, random_state=0), "logistic": logistic()}
    model = fitted[family].fit(X[member], y[member])
    keep = ~spare & (~member | (rng.random(len(y)) < 0.5) if half else ~spare)
    pool, reference = population(X, y, member)[keep], population(X, y, member)[spare].drop(columns="member")
    done = ppdm.audit(model, membership=pool, sample=half, reference=reference, blackbox=BlackboxOptions(shadows=4), progress=False)
    s = done.membership.summary()
    assert s["blackbox"]["reference"] == int(spare.sum())
    assert len(s["attacks"]) == len(ATTACKS) + (family != "logistic") * (3 if half else 1)  # a sample pool: the count ratio, alone and with RMIA
    for key in ("auc", "tpr@0.1%", "tpr@1%", "tpr@1%_thresholds"):
        assert s[key] == max(r[key] for r in s["attacks"])
    assert s["wrong_proved_members"] == 0 and s["wrong_proved_non_members"] == 0


@pytest.mark.parametrize("family", ["tree", "forest"])
def test_a_model_read_from_its_file_gets_the_black_box_attacks_with_a_stand_in_learner(cancer, tmp_path, family):
    """The publisher's case: the model is a file (ppdm's JSON), the population holds half the
    members. The white-box estimate alone finds few members; the black-box attacks run on the
    file's own answers, their shadows fitted by a stand-in learner said so, and a target the
    white-box alone would meet is not met."""
    from sklearn.tree import DecisionTreeClassifier

    from ppdm.attacks.membership.stand_in import PublishedClassifier, stand_in_learner
    from ppdm.tree.model_files import load_model, save_model

    X, y, member = cancer
    fitted = DecisionTreeClassifier(random_state=0) if family == "tree" else RandomForestClassifier(n_estimators=10, random_state=0)
    fitted.fit(X[member], y[member])
    save_model(ppdm.from_estimator(fitted, X[member], pd.Series(y[member], name="target")), tmp_path / "model.json")
    read = load_model(tmp_path / "model.json")
    assert np.allclose(PublishedClassifier(read).predict_proba(X), fitted.predict_proba(X))  # the file answers as the estimator did
    learner, said = stand_in_learner(read, X)
    assert type(learner.steps[-1][1]).__name__ == ("DecisionTreeClassifier" if family == "tree" else "RandomForestClassifier")
    assert "stand-in" in said
    held = member & (np.random.default_rng(1).random(len(y)) < 0.5)
    pool = population(X, y, member)[held | ~member]
    done = ppdm.audit(read, membership=pool, sample=True, blackbox=BlackboxOptions(shadows=4), progress=False)
    s = done.membership.summary()
    rows = {r["attack"]: r for r in s["attacks"]}
    assert set(rows) == {"ppdm", *SAMPLE_POOL, *ATTACKS} and "stand-in" in s["blackbox"]["shadow_learner"] and "stand-in" in str(done.membership)
    for key in ("auc", "tpr@0.1%", "tpr@1%"):
        assert s[key] == max(r[key] for r in rows.values())
    assert rows["confidence"]["auc"] > 0.52  # the model's confidence separates members on its own
    assert s["wrong_proved_members"] == 0 and s["wrong_proved_non_members"] == 0
    if rows["ppdm"]["tpr@1%"] < s["tpr@1%"]:
        bar = (rows["ppdm"]["tpr@1%"] + s["tpr@1%"]) / 2
        record = ppdm.audit(read, membership=pool, sample=True, blackbox=BlackboxOptions(shadows=4), progress=False, target=f"mia_tpr@1%<={bar:.4f}").release_record()
        assert record["decision"] == "do not release"


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_a_boosted_model_file_over_categorical_inputs_meets_the_shadow_attacks(nursery, tmp_path, library):
    """Nursery's inputs are all categorical, so the stand-in's one-hot inputs would be sparse,
    which histogram gradient boosting refuses: the shadows are fitted on dense inputs, and a
    boosted model file (XGBoost JSON, LightGBM text) on half the members gets every attack."""
    pytest.importorskip(library)
    frame, _ = nursery
    frame = frame[frame["class"] != "recommend"].sample(600, random_state=0).reset_index(drop=True)
    frame["class"] = frame["class"].astype(str)  # the four classes left, as a CSV would give them
    member = np.random.default_rng(0).random(len(frame)) < 0.5
    inputs = [c for c in frame.columns if c != "class"]
    train = frame[member]
    D = pd.get_dummies(train[inputs]).astype(float)
    y = train["class"].astype(str).astype("category").cat.codes
    if library == "xgboost":
        import xgboost

        xgboost.XGBClassifier(n_estimators=5, max_depth=3).fit(D, y).save_model(tmp_path / "model.json")
        path = tmp_path / "model.json"
    else:
        import lightgbm

        lightgbm.LGBMClassifier(n_estimators=5, num_leaves=8, verbose=-1).fit(D, y).booster_.save_model(tmp_path / "model.txt")
        path = tmp_path / "model.txt"
    held = member & (np.random.default_rng(1).random(len(frame)) < 0.5)
    pool = frame.assign(member=member)[held | ~member].reset_index(drop=True)
    done = ppdm.audit(path, membership=pool, sample=True, blackbox=BlackboxOptions(shadows=4), progress=False)
    s = done.membership.summary()
    assert {r["attack"] for r in s["attacks"]} == {"ppdm", *SAMPLE_POOL, *ATTACKS}
    assert "histogram gradient boosting" in s["blackbox"]["shadow_learner"]
    assert s["wrong_proved_members"] == 0 and s["wrong_proved_non_members"] == 0
