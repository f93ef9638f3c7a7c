"""``ppdm defend --model forest.json``: the search for a published forest through the command line,
the forest it writes (audited again), and one-line errors (exit 2) for bad input."""

import json

import pytest
from sklearn.ensemble import GradientBoostingClassifier

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.data.datasets import load_csv
from ppdm.tree import forest_from_sklearn, load_forest, save_forest

from cli_output import one_line_error as _one_line_error
from forest_files import nursery_forest_files

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]
KNOWN = ",".join(FEATURES)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Nursery (600 rows) as a CSV and a bootstrap random forest of it as ppdm-forest JSON."""
    root = tmp_path_factory.mktemp("defend-forest")
    frame, D = nursery_forest_files(root, rows=600, trees=3, depth=4)
    X, y = frame[FEATURES], frame["class"]
    frame.iloc[::-1].to_csv(root / "reversed.csv", index=False)
    frame.iloc[:-1].to_csv(root / "fewer.csv", index=False)
    gb = GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0).fit(D, y)
    save_forest(forest_from_sklearn(gb, X, y=y), root / "boosted.json")
    return root


@pytest.mark.filterwarnings("ignore::ppdm.errors.UninformativeKnowledgeWarning")
def test_defend_a_forest_file_writes_the_chosen_forest_and_the_frontier(run, files, tmp_path):
    result = run(
        "defend", "--model", files / "forest.json", "--data", files / "train.csv", "--known", KNOWN, "--quick",
        "--out", tmp_path / "chosen.json", "--frontier", tmp_path / "frontier.json", "--train-out", tmp_path / "fitted.csv",
    )
    assert result.exit_code == 0, result.output
    assert "unprotected model: held-out accuracy" in result.output and "chosen: " in result.output
    assert "accuracy: held-out, on 150 of the 600 rows (25 %, stratified by 'class', seed 0); every candidate fitted and audited on the other 450" in result.output
    assert "best DP baseline: DP forest ε=1, 10 trees, depth 4" in result.output
    assert "≥ = a lower bound: the audits stopped once the target was missed" in result.output
    records = json.loads((tmp_path / "frontier.json").read_text(encoding="utf-8"))
    assert {r["family"] for r in records} == {"unprotected", "dp", "retrain", "publish-less"}
    chosen = [r for r in records if r["chosen"]]
    assert len(chosen) == 1 and chosen[0]["meets_target"]
    forest = load_forest(tmp_path / "chosen.json")  # a ppdm-forest file, as published
    assert forest.trees[0].disclosure.value == chosen[0]["publish"]
    frame = load_csv(tmp_path / "fitted.csv")[0]  # the rows the chosen forest was fitted on
    assert len(frame) == 450 and forest.n_records == 450
    audit = maxent_attack(forest, frame, threat=ThreatModel(known=tuple(FEATURES)))
    assert audit.exposed_right().sum() == 0
    assert (audit.confidence_in_truth() >= 0.9 - 1e-9).mean() <= 0.01


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data", "{files}/fewer.csv"], "the forest was trained on 600 rows, the data has 599"),
        (["--data", "{files}/reversed.csv"], "the data is not the forest's training table: tree 0"),
        (["--algorithm", "id3"], "train a model: not with --model"),
        (["--class-attribute", "health"], "the model predicts 'class'"),
        (["--target", "certain=-1"], "certain takes a whole number of people"),
    ],
)
def test_bad_inputs_are_one_line(run, files, args, message):
    base = {"--model": str(files / "forest.json"), "--data": str(files / "train.csv")}
    extra = [a.format(files=files) for a in args]
    if extra[0] in base:
        base[extra[0]] = extra[1]
        extra = extra[2:]
    result = run("defend", *[x for kv in base.items() for x in kv], "--known", KNOWN, "--quick", "-q", *extra)
    _one_line_error(result, message)


@pytest.mark.filterwarnings("ignore::ppdm.errors.UninformativeKnowledgeWarning")
def test_defend_a_boosted_model_file(run, files, tmp_path):
    """Boosted models are defended too (fewer rounds, shallower trees, a larger minimum leaf, answers only)."""
    result = run(
        "defend", "--model", files / "boosted.json", "--data", files / "train.csv", "--sensitive", "health", "--preset", "insider",
        "--target", "certain=0,confident=60%@0.9", "--quick", "--out", tmp_path / "chosen.json", "--frontier", tmp_path / "frontier.json",
    )
    assert result.exit_code in (0, 1), result.output
    labels = [p["label"] for p in json.loads((tmp_path / "frontier.json").read_text())]
    assert "GradientBoostingClassifier n_estimators=1" in labels and "GradientBoostingClassifier max_depth=1" in labels
    assert "GradientBoostingClassifier min_samples_leaf=20" in labels and "publish predicted labels only" in labels
    assert "unprotected model:" in result.output
