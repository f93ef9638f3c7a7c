"""``ppdm defend`` through the command line: a search on a small Adult table, the files it writes,
and one-line errors (exit 2) for bad input."""

import json

import pytest

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.cli import defend as cli_defend
from ppdm.data.datasets import load_csv
from ppdm.defend import DEFAULT_TARGET
from ppdm.defend.candidates import FAMILIES
from ppdm.learn import ID3Classifier
from ppdm.tree import load_tree, save_tree

from cli_output import one_line_error as _one_line_error

QI = ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country", "income"]
KNOWN = ",".join(QI)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    from ppdm.data.datasets import load_adult

    folder = tmp_path_factory.mktemp("defend")
    train, _ = load_adult("train", sensitive="education", class_attribute="education")
    train = train[QI + ["education"]].sample(n=3000, random_state=1)
    train.to_csv(folder / "train.csv", index=False)
    frame = load_csv(folder / "train.csv")[0]
    tree = ID3Classifier(min_samples_leaf=2).fit(frame[QI], frame["education"]).tree_
    tree.class_attribute = "education"
    save_tree(tree, folder / "tree.json")
    return folder


@pytest.mark.filterwarnings("ignore::ppdm.errors.UninformativeKnowledgeWarning")
def test_defend_a_model_file_writes_the_chosen_model_and_the_frontier(run, files, tmp_path):
    result = run(
        "defend", "--model", files / "tree.json", "--data", files / "train.csv", "--known", KNOWN, "--publish", "error-rates",
        "--families", "pruning,publish-less", "--quick", "--out", tmp_path / "chosen.json", "--frontier", tmp_path / "frontier.json",
        "--train-out", tmp_path / "fitted.csv",
    )
    assert result.exit_code == 0, result.output
    assert "target: nobody certain, ≤ 1 % at confidence ≥ 0.9" in result.output
    assert "unprotected model: held-out accuracy" in result.output and "chosen: " in result.output
    assert "accuracy: held-out, on 750 of the 3,000 rows (25 %, stratified by 'education', seed 0)" in result.output
    records = json.loads((tmp_path / "frontier.json").read_text(encoding="utf-8"))
    assert len(records) == 1 + 6 + 1 and all({"label", "accuracy", "risk", "meets_target"} <= set(r) for r in records)
    chosen = load_tree(tmp_path / "chosen.json")
    assert chosen.disclosure.value in ("error-rates", "labels")
    # audited again on its own, the written model meets the target
    frame = load_csv(tmp_path / "fitted.csv")[0]  # the rows the chosen model was fitted on
    assert len(frame) == 2250
    audit = maxent_attack(chosen, frame, threat=ThreatModel(known=tuple(QI)))
    assert audit.exposed_right().sum() == 0
    assert (audit.confidence_in_truth() >= 0.9 - 1e-9).mean() <= 0.01


def test_defend_trains_from_data_and_holds_out_a_test_share(run, files):
    result = run(
        "defend", "--data", files / "train.csv", "--class-attribute", "education", "--families", "retrain,dp", "--quick",
        "--target", "certain=0", "--top", "3",
    )
    assert result.exit_code == 0, result.output
    assert "held-out accuracy" in result.output and "best DP baseline: DP tree" in result.output
    assert "accuracy: held-out, on 750 of the 3,000 rows (25 %, stratified by 'education', seed 0)" in result.output
    assert "model publishes error-rates" in result.output


def test_no_candidate_meeting_the_target_exits_1(run, files):
    result = run(
        "defend", "--model", files / "tree.json", "--data", files / "train.csv", "--known", KNOWN, "--families", "pruning",
        "--quick", "--target", "confident=0@0.05", "-q",
    )
    assert result.exit_code == 1 and result.output == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "sure=0"], "target: unknown measure 'sure'"),
        (["--target", "confident=0.01"], "confident takes SHARE@CONFIDENCE"),
        (["--families", "prune"], "unknown candidate family 'prune'"),
        (["--risk", "span"], "the target has no measure 'span'"),
        (["--dataset", "adult"], "give exactly one of --dataset NAME or --data FILE.csv"),
        (["--known", "nope"], "known column(s) not in the data: 'nope'"),
        (["--algorithm", "id3"], "train a model: not with --model"),
        (["--class-attribute", "sex"], "the model predicts 'education'"),
        (["--out", "{tmp}/missing/chosen.json"], "the directory {tmp}/missing does not exist"),
        (["--class-known"], "--class-known: the class 'education' is the sensitive column"),
    ],
)
def test_bad_inputs_are_one_line(run, files, tmp_path, args, message):
    args = [a.format(tmp=tmp_path) for a in args]
    result = run("defend", "--model", files / "tree.json", "--data", files / "train.csv", "--quick", "-q", *args)
    _one_line_error(result, message.format(tmp=tmp_path))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data", "{files}/train.csv"], "without --model, give --class-attribute"),
        (["--data", "{files}/train.csv", "--class-attribute", "nope"], "the class column 'nope' is not in the data"),
        (["--data", "{files}/train.csv", "--sensitive", "nosuch"], "the sensitive column (--sensitive) 'nosuch' is not in the data"),
        (["--model", "{files}/none.json", "--data", "{files}/train.csv"], "none.json"),
        (["--model", "{files}/tree.json", "--dataset", "adult"], "--model goes with --data"),
        (["--data", "{files}/train.csv", "--class-attribute", "education", "--test-size", "1"], "--test-size must be in [0, 1)"),
    ],
)
def test_bad_input_combinations_are_one_line(run, files, args, message):
    result = run("defend", "--quick", "-q", *(a.format(files=files) for a in args))
    _one_line_error(result, message)


def test_the_cli_spells_the_library_defaults():
    assert cli_defend.DEFAULT_TARGET == DEFAULT_TARGET
    assert cli_defend.FAMILIES == FAMILIES


def test_the_dp_candidates_no_audit_reads_are_explained_once(run, tmp_path):
    """ε-DP trees publish noisy counts, which no audit of a sensitive column other than the class
    reads: the output says so once, in words, instead of one bare "no audit applies" per candidate."""
    from sklearn.tree import DecisionTreeClassifier

    import ppdm

    from loan_table import FEATURES, loan_table

    data = loan_table()
    data.to_csv(tmp_path / "loan.csv", index=False)
    est = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(data[FEATURES], data["Personal Loan"])
    save_tree(ppdm.from_estimator(est, data[FEATURES], data["Personal Loan"]), tmp_path / "tree.json")
    result = run(
        "defend", "--model", tmp_path / "tree.json", "--data", tmp_path / "loan.csv", "--sensitive", "Education",
        "--known", "Age,Income,Family,CCAvg", "--class-known", "--families", "dp,publish-less", "--quick",
    )
    assert result.exit_code in (0, 1), result.output
    assert "no audit applies" not in result.output
    assert result.output.count("publishes counts with noise added") == 1 and "DP tree ε=" in result.output


@pytest.mark.parametrize("flag", ["--progress", "--no-progress"])
def test_progress_is_asked_for_or_left_out(run, files, flag, monkeypatch):
    seen = {}

    def spy(*args, **kwargs):  # the library's search, told how to show its progress
        seen["progress"] = kwargs["progress"]
        raise SystemExit(0)

    import importlib

    monkeypatch.setattr(importlib.import_module("ppdm.defend"), "defend", spy)
    run("defend", "--data", files / "train.csv", "--class-attribute", "education", "--families", "retrain", "--quick", flag)
    assert seen["progress"] is (flag == "--progress")
