"""``ppdm defend --membership --population P.csv``: membership targets from the command line, the
choice audited again meets them, and one line (exit 2) when the non-members are missing."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.tree import tree_from_sklearn
from ppdm.tree.io import save_tree

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def files(tmp_path_factory, nursery):
    frame, _ = nursery
    root = tmp_path_factory.mktemp("defend-membership")
    population = frame.sample(2000, random_state=3).reset_index(drop=True)
    member = np.random.default_rng(3).random(len(population)) < 0.5
    train, others = population[member].reset_index(drop=True), population[~member].reset_index(drop=True)
    est = DecisionTreeClassifier(random_state=0).fit(pd.get_dummies(train[FEATURES]).astype(float), train["class"])
    save_tree(tree_from_sklearn(est, train[FEATURES], y=train["class"]), root / "deep.json")
    train.to_csv(root / "train.csv", index=False)
    others[~others["class"].isin(train["class"])].to_csv(root / "unseen.csv", index=False)
    others = others[others["class"].isin(train["class"])].reset_index(drop=True)  # no model knows an unseen class
    others.to_csv(root / "others.csv", index=False)
    pd.concat([train.assign(member=True), others.assign(member=False)]).to_csv(root / "candidates.csv", index=False)
    return root


def test_cli_searches_a_membership_target(run, files, tmp_path):
    out = tmp_path / "chosen.json"
    result = run(
        "defend", "--model", files / "deep.json", "--data", files / "train.csv", "--membership", "--population", files / "others.csv",
        "--quick", "--families", "pruning,retrain", "--out", out, "--train-out", tmp_path / "fitted.csv",
    )
    assert result.exit_code == 0, result.output
    assert "target: nobody proved a member, membership TPR ≤ 2% at 1% FPR" in result.output
    assert "unprotected model:" in result.output and "misses the target" in result.output.split("chosen:")[0]
    # the chosen tree was fitted on the training part (a quarter of train.csv was held out for accuracy): those rows are its members
    fitted, others = pd.read_csv(tmp_path / "fitted.csv"), pd.read_csv(files / "others.csv")
    pd.concat([fitted.assign(member=True), others.assign(member=False)]).to_csv(tmp_path / "candidates.csv", index=False)
    again = ppdm.audit(str(out), membership=str(tmp_path / "candidates.csv")).summary()
    assert again["proved_members"] == 0 and again["tpr@1%"] <= 0.02


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "members_proved=0"], "add --membership --population"),
        (["--membership"], "needs --population"),
        (["--population", "{root}/others.csv"], "add --membership"),
        (["--membership", "--population", "{root}/others.csv", "--target", "certain=0"], "no membership measure"),
        (["--membership", "--population", "{root}/unseen.csv"], "is held by no training row"),
    ],
)
def test_cli_membership_refusals_are_one_line(run, files, args, message):
    base = ["defend", "--model", files / "deep.json", "--data", files / "train.csv", "--quick"]
    result = run(*base, *[str(a).format(root=files) for a in args])
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1


def test_the_next_step_printed_measures_membership(run, files, tmp_path, monkeypatch):
    import shlex

    out = tmp_path / "chosen.json"
    result = run(
        "defend", "--model", files / "deep.json", "--data", files / "train.csv", "--membership", "--population", files / "others.csv",
        "--quick", "--families", "pruning", "--out", out,
    )
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("next:")]
    command = shlex.split(line.split(": ", 2)[2])
    assert command[:2] == ["ppdm", "audit"] and "--membership" in command and "--population" in command
    monkeypatch.chdir(tmp_path)  # the report and record it names are written here
    audited = run(*command[1:])
    assert audited.exit_code == 0, audited.output
    assert "not measured" not in audited.output and "proved" in audited.output
    assert (tmp_path / "release.json").exists() and "not measured" not in (tmp_path / "release.json").read_text()


def test_every_measure_missed_is_printed_with_its_limit(run, files, tmp_path):
    result = run(
        "defend", "--model", files / "deep.json", "--data", files / "train.csv", "--membership", "--population", files / "others.csv",
        "--quick", "--families", "pruning", "--target", "members_proved=0,mia_tpr@1%<=0.001", "--top", "50",
    )
    assert result.exit_code in (0, 1), result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("unprotected model:")]
    assert re.search(r"misses the target: members_proved \d+ > 0, mia_tpr@1% [\d.]+ % > 0\.10 %", line), line
    table = result.output.split("candidates (accuracy")[1]
    assert re.search(r"misses .*\((members_proved \d+ > 0, )?mia_tpr@1% [\d.]+ % > 0\.10 %\)", table), table
    train = pd.read_csv(files / "train.csv")
    share = train["class"].value_counts().iloc[0] / len(train)
    (majority,) = [line for line in result.output.splitlines() if "majority class" in line]
    assert repr(train["class"].value_counts().idxmax()) in majority and "accuracy any model must beat" in majority
    assert abs(float(re.search(r"right for ([\d.]+)", majority).group(1)) - share) < 0.01


def test_the_majority_line_reads_the_held_out_rows_and_warns_of_a_choice_no_better():
    """The baseline line is measured where the accuracies are (the held-out part), and a chosen
    model that does not beat it is called out (the release record will not release it)."""
    from types import SimpleNamespace

    from ppdm.cli.defend import _majority_lines

    train = pd.DataFrame({"class": ["no"] * 90 + ["yes"] * 10})
    held = {"rows": 640, "majority_share": 0.9051}
    result = SimpleNamespace(train=train, held_out=held)
    flat = _majority_lines(result, "class", None, {"accuracy": 0.9047})
    assert "right for 0.9051 of the 640 held-out rows" in flat[0]
    assert len(flat) == 2 and "no better than that (0.9047 against 0.9051)" in flat[1]
    better = _majority_lines(result, "class", None, {"accuracy": 0.97})
    assert len(better) == 1
    on_train = _majority_lines(SimpleNamespace(train=train, held_out=None), "class", None, None)
    assert on_train == ["majority class: always guessing 'no' is right for 0.9000 of the rows the candidates were fitted on (the accuracy any model must beat)"]
