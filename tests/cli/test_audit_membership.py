"""``ppdm audit --membership --model M --population P.csv``: the library's membership audit
printed, its JSON written, and one line with exit status 2 on bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

import ppdm
from ppdm.attacks.membership.blackbox import ATTACKS
from ppdm.errors import DataError, PpdmError
from ppdm.tree import forest_from_sklearn
from ppdm.tree.forest_io import save_forest

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def files(tmp_path_factory, nursery):
    frame, _ = nursery
    root = tmp_path_factory.mktemp("membership-cli")
    population = frame.sample(400, random_state=0).reset_index(drop=True)
    member = np.random.default_rng(0).random(len(population)) < 0.5
    train = population[member].reset_index(drop=True)
    D = pd.get_dummies(train[FEATURES]).astype(float)
    forest = RandomForestClassifier(5, bootstrap=False, max_features=0.5, random_state=0).fit(D, train["class"])
    save_forest(forest_from_sklearn(forest, train[FEATURES], y=train["class"]), root / "forest.json")
    population.assign(member=member).to_csv(root / "candidates.csv", index=False)
    return root


def test_cli_prints_and_writes(run, files, tmp_path):
    out = tmp_path / "membership.json"
    result = run("audit", "--membership", "--model", files / "forest.json", "--population", files / "candidates.csv", "--out", out)
    assert result.exit_code == 0, result.output
    assert "membership audit of 400 candidates" in result.output
    assert "wrong proofs: 0 members, 0 non-members" in result.output
    assert "TPR at 1% FPR" in result.output
    saved = json.loads(out.read_text())
    assert saved["membership"]["wrong_proved_members"] == 0
    assert len(saved["candidates"]["P(member)"]) == 400


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--population", "{root}/candidates.csv"], "add --membership"),
        (["--membership", "--population", "{root}/candidates.csv"], "needs --model"),
        (["--membership", "--model", "{root}/forest.json", "--population", "{root}/nothing.csv"], "nothing.csv"),
        (["--membership", "--model", "{root}/forest.json", "--population", "{root}/lacking.csv"], "lacks column 'health'"),
        (["--membership", "--model", "{root}/forest.json", "--population", "{root}/candidates.csv", "--member-column", "nosuch"], "no member column 'nosuch'"),
    ],
)
def test_cli_bad_input_is_one_line(run, files, args, message):
    pd.read_csv(files / "candidates.csv").drop(columns=["health"]).to_csv(files / "lacking.csv", index=False)
    result = run("audit", *[a.format(root=files) for a in args])
    assert result.exit_code == 2
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_api_front_door(files):
    audit = ppdm.audit(str(files / "forest.json"), membership=str(files / "candidates.csv"))
    summary = audit.summary()
    assert summary["wrong_proved_members"] == 0 and summary["wrong_proved_non_members"] == 0
    assert summary["auc"] > 0.5
    # a model file meets the black-box attacks too: each one's score beside P(member)
    assert list(audit.people().columns) == ["row", "P(member)", "proved", "member", *(f"score:{a}" for a in ATTACKS)]
    assert {"tree", "leaf", "proved_members"} <= set(audit.leaves().columns)
    assert "membership" in repr(audit)
    with pytest.raises(PpdmError, match="leave data out"):
        ppdm.audit(str(files / "forest.json"), pd.read_csv(files / "candidates.csv"), membership=str(files / "candidates.csv"))
    with pytest.raises(DataError):
        ppdm.audit(str(files / "forest.json"), membership=pd.read_csv(files / "candidates.csv").assign(member="maybe"))


def test_cli_writes_the_membership_report(run, files, tmp_path):
    page = tmp_path / "membership.html"
    result = run("audit", "--membership", "--model", files / "forest.json", "--population", files / "candidates.csv", "--report", page)
    assert result.exit_code == 0, result.output
    assert "membership: " in result.output and f"wrote {page}" in result.output
    data = json.loads((tmp_path / "membership.report.json").read_text())
    assert data["membership"]["summary"]["candidates"] == 400 and data["membership"]["roc"] is not None
    assert 'id="fig-membership-roc"' in page.read_text()
    clash = run("audit", "--membership", "--model", files / "forest.json", "--population", files / "candidates.csv", "--report", tmp_path / "m.txt")
    assert clash.exit_code == 2 and "name it .html" in clash.output


def test_cli_audits_a_rule_sets_membership(run, files, tmp_path):
    from ppdm.rules.mining import mine_rules

    candidates = pd.read_csv(files / "candidates.csv")
    members = candidates[candidates["member"]]
    mine_rules(members, FEATURES, "class", 0.1, 0.5).save(tmp_path / "rules.json")
    out, report = tmp_path / "rules-membership.json", tmp_path / "rules.html"
    result = run(
        "audit", "--membership", "--model", tmp_path / "rules.json", "--population", files / "candidates.csv", "--out", out, "--report", report,
    )
    assert result.exit_code == 0, result.output
    assert "rule(s) (records per rule and per antecedent)" in result.output
    assert "wrong proofs: 0 members, 0 non-members" in result.output
    saved = json.loads(out.read_text())
    assert saved["membership"]["wrong_proved_members"] == 0 and len(saved["candidates"]["P(member)"]) == 400
    html = report.read_text()
    assert "Riskiest rules" in html and "a rule set of" in html
    rounded = json.loads((tmp_path / "rules.json").read_text())
    rounded["rules"][0]["support"] = round(rounded["rules"][0]["support"], 2) + 0.001
    (tmp_path / "rounded.json").write_text(json.dumps(rounded))
    bad = run("audit", "--membership", "--model", tmp_path / "rounded.json", "--population", files / "candidates.csv")
    assert bad.exit_code == 2 and "rules[0]" in bad.output and len(bad.output.strip().splitlines()) == 1


def test_a_population_missing_training_records_is_declared_with_sample(run, files, tmp_path):
    """The refusal of a population without every training record names what declares it
    (--sample on the command line, sample=True to ppdm.audit), and --sample audits it with the
    counts as upper bounds (the line once said "declare it incomplete", which no option did)."""
    candidates = pd.read_csv(files / "candidates.csv")
    members = candidates.index[candidates["member"]]
    candidates.drop(index=members[: len(members) // 2]).to_csv(tmp_path / "half.csv", index=False)
    args = ["audit", "--membership", "--model", files / "forest.json", "--population", tmp_path / "half.csv"]
    refused = run(*args)
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1
    assert "declare it incomplete (--sample)" in refused.output, refused.output
    with pytest.raises(DataError, match="sample=True"):
        ppdm.audit(str(files / "forest.json"), membership=str(tmp_path / "half.csv"))
    result = run(*args, "--sample", "--report", tmp_path / "half.html")
    assert result.exit_code == 0, result.output
    assert "wrong proofs: 0 members, 0 non-members" in result.output
    page = (tmp_path / "half.html").read_text()  # not "N of them training records": only some are among them
    assert "some of the " in page and "of them training records by the model" not in page
    assert ppdm.audit(str(files / "forest.json"), membership=str(tmp_path / "half.csv"), sample=True).summary()["wrong_proved_members"] == 0


def _with_known(files, sample_share: float = 0.5):
    """The candidates with half the members kept and a column of the non-members the attacker knows."""
    frame = pd.read_csv(files / "candidates.csv")
    rng = np.random.default_rng(5)
    keep = ~frame["member"] | (rng.random(len(frame)) < sample_share)
    pool = frame[keep].reset_index(drop=True)
    pool["known_out"] = ~pool["member"] & (rng.random(len(pool)) < 0.5)
    return pool


def test_known_non_members_reach_the_audit(files):
    """``ppdm.audit(..., non_members=COLUMN)`` reads the attacker's known non-members as
    ``membership_attack(non_members=...)`` does: each is a proved non-member, no proof is wrong,
    and the column is no model input (the audit of the same pool without it proves fewer)."""
    from ppdm.attacks.membership.audit import membership_attack

    pool = _with_known(files)
    known = pool["known_out"].to_numpy(bool)
    done = ppdm.audit(files / "forest.json", membership=pool, non_members="known_out", sample=True, blackbox=False)
    s = done.membership.summary()
    assert (done.membership.state[known] == 0).all()
    assert s["wrong_proved_members"] == 0 and s["wrong_proved_non_members"] == 0
    assert s["known_non_members"] == int(known.sum()) > 0
    # their membership is given, not inferred: every rate is measured over the others
    assert s["members"] + s["non_members"] == len(pool) - known.sum()
    rest = ~known
    assert s["white_box_rates"]["auc"] == pytest.approx(roc_auc_score(pool["member"][rest], done.membership.probability[rest]))
    assert s["auc"] == max(r["auc"] for r in s["attacks"])  # the count ratio's on this sample pool
    direct = membership_attack(ppdm.load_model(files / "forest.json"), pool.drop(columns="known_out"), truth="member", complete=False, non_members=known)
    np.testing.assert_array_equal(done.membership.state, direct.state)
    without = ppdm.audit(files / "forest.json", membership=pool.drop(columns="known_out"), sample=True, blackbox=False)
    assert (without.membership.state == 0).sum() < (done.membership.state == 0).sum()
    as_values = ppdm.audit(files / "forest.json", membership=pool.drop(columns="known_out"), non_members=known, sample=True, blackbox=False)
    np.testing.assert_array_equal(as_values.membership.state, done.membership.state)


def test_known_non_members_bad_input(files):
    pool = _with_known(files)
    with pytest.raises(DataError, match="no non-member column 'gone'"):
        ppdm.audit(files / "forest.json", membership=pool, non_members="gone", sample=True, blackbox=False)
    with pytest.raises(DataError, match="known non-member"):  # a known non-member the truth calls a member
        ppdm.audit(files / "forest.json", membership=pool.assign(known_out=pool["member"]), non_members="known_out", sample=True, blackbox=False)
    with pytest.raises(DataError, match="'maybe' is not a membership flag"):
        ppdm.audit(files / "forest.json", membership=pool.assign(known_out="maybe"), non_members="known_out", sample=True, blackbox=False)
    with pytest.raises(PpdmError, match="the truth's column"):
        ppdm.audit(files / "forest.json", membership=pool, non_members="member", sample=True, blackbox=False)
    with pytest.raises(PpdmError, match="add membership="):
        ppdm.audit(files / "forest.json", pool, non_members="known_out")


def test_cli_known_non_members(run, files, tmp_path):
    _with_known(files).to_csv(tmp_path / "pool.csv", index=False)
    out = tmp_path / "m.json"
    args = ["audit", "--membership", "--model", files / "forest.json", "--population", tmp_path / "pool.csv", "--sample"]
    page = tmp_path / "m.html"
    result = run(*args, "--non-member-column", "known_out", "--out", out, "--report", page)
    assert result.exit_code == 0, result.output
    known = int(pd.read_csv(tmp_path / "pool.csv")["known_out"].sum())
    html = page.read_text()
    assert f"({known:,} of them known to the attacker as non-members)" in html
    strongest = json.loads(out.read_text())["membership"]["strongest"]
    assert ("scored by P(member)" if strongest == "ppdm" else f"members scored by {strongest}") in html  # the curve drawn is the strongest attack's
    assert json.loads(out.read_text())["membership"]["known_non_members"] > 0
    assert "known to the attacker as non-members: " in result.output
    bad = run(*args, "--non-member-column", "nowhere")
    assert bad.exit_code == 2 and "no non-member column 'nowhere'" in bad.output
    stray = run("audit", "--model", files / "forest.json", "--data", tmp_path / "pool.csv", "--non-member-column", "known_out")
    assert stray.exit_code == 2 and "add --membership" in stray.output


def test_a_model_file_meets_the_black_box_attacks_on_the_command_line(run, files, tmp_path):
    """The publisher's road: the model is a file named on the command line, the population holds
    half the members. The black-box attacks run on the file's answers (shadows by a stand-in
    learner), so the printout has their table and the reported rate is the table's highest."""
    _with_known(files).drop(columns="known_out").to_csv(tmp_path / "half.csv", index=False)
    out = tmp_path / "half.json"
    result = run("audit", "--membership", "--model", files / "forest.json", "--population", tmp_path / "half.csv", "--sample", "--out", out)
    assert result.exit_code == 0, result.output
    assert "rmia-online" in result.output and "stand-in" in result.output and "black-box attacks" in result.output
    saved = json.loads(out.read_text())["membership"]
    assert {r["attack"] for r in saved["attacks"]} >= {"ppdm", "confidence", "lira-offline", "lira-online", "rmia-offline", "rmia-online"}
    assert saved["tpr@1%"] == max(r["tpr@1%"] for r in saved["attacks"])
    assert saved["seconds"] >= saved["white_box_seconds"]


@pytest.mark.parametrize("learner", ["forest", "logistic"])
def test_a_skops_file_is_audited_with_its_own_learner(run, files, tmp_path, learner, nursery):
    """A scikit-learn model in skops' secure format: a forest is read white-box and by its
    answers, a logistic regression by its answers alone; either way the shadow models are clones
    of the estimator in the file (not a stand-in), and a class column the attacker must name is
    asked for by its option (the logistic regression's)."""
    skops_io = pytest.importorskip("skops.io")
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    frame = pd.read_csv(files / "candidates.csv")
    train = frame[frame["member"]]
    if learner == "forest":
        model = make_pipeline(OneHotEncoder(handle_unknown="ignore"), RandomForestClassifier(5, bootstrap=False, max_features=0.5, random_state=0))
    else:
        model = make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression(max_iter=500))
    skops_io.dump(model.fit(train[FEATURES], train["class"]), tmp_path / "m.skops")
    out = tmp_path / "m.json"
    result = run("audit", "--membership", "--model", tmp_path / "m.skops", "--population", files / "candidates.csv", "--out", out)
    assert result.exit_code == 0, result.output
    assert "shadow models: 16, clones of the target estimator" in result.output
    saved = json.loads(out.read_text())["membership"]
    assert {r["attack"] for r in saved["attacks"]} >= {"confidence", "lira-online", "rmia-online"}
    assert ("ppdm" in {r["attack"] for r in saved["attacks"]}) == (learner == "forest")  # the white-box estimate reads trees only
    if learner == "logistic":  # no tree names its class column: one more column beside the inputs leaves it to the user
        frame.assign(note="x").to_csv(tmp_path / "extra.csv", index=False)
        asked = run("audit", "--membership", "--model", tmp_path / "m.skops", "--population", tmp_path / "extra.csv")
        assert asked.exit_code == 2 and "which column is the class?" in asked.output and "(--class)" in asked.output


@pytest.mark.parametrize(("flags", "shown"), [(["--quiet"], False), (["--no-progress"], False), (["--progress"], True)])
def test_the_membership_audit_shows_its_progress_as_the_flags_say(run, files, monkeypatch, flags, shown):
    """``--quiet`` and ``--no-progress`` reached the attribute audit but not the membership audit,
    whose default printer wrote its long steps to stderr anyway (a new user's log under -q)."""
    import ppdm.api

    seen = {}
    real = ppdm.api.audit

    def spy(*args, **kwargs):
        seen["progress"] = kwargs.get("progress")
        return real(*args, **kwargs)

    monkeypatch.setattr(ppdm.api, "audit", spy)
    result = run("audit", "--membership", "--model", files / "forest.json", "--population", files / "candidates.csv", *flags)
    assert result.exit_code == 0, result.output
    assert (seen["progress"] is not False) == shown
