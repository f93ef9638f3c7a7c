"""ppdm train with kADET (--k, --l, --hierarchies), randomized response (--theta) and the split it
used (--train-out, --test-out); ppdm disguise; one-line errors with exit status 2."""

import json

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def people(tmp_path):
    """A small table with a numeric and two categorical columns; the class follows 'job' mostly."""
    rng = np.random.default_rng(0)
    n = 400
    job = rng.choice(["clerk", "nurse", "pilot"], n)
    frame = pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "job": job,
        "city": rng.choice(["north", "south"], n),
        "risk": np.where((job == "pilot") ^ (rng.random(n) < 0.1), "high", "low"),
    })
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path


def test_kadet_on_nursery_is_k_anonymous_and_writes_its_split(run, tmp_path):
    out, train_csv, test_csv = tmp_path / "t.json", tmp_path / "train.csv", tmp_path / "test.csv"
    result = run("train", "--dataset", "nursery", "--k", "50", "--algorithm", "id3", "--out", out,
                 "--train-out", train_csv, "--test-out", test_csv)
    assert result.exit_code == 0, result.output
    assert "kADET-ID3 on 10,368 rows" in result.output and "smallest span: 53 rows (asked k = 50)" in result.output
    assert json.loads(out.read_text())["algorithm"] == "kadet-id3"
    train, test = pd.read_csv(train_csv), pd.read_csv(test_csv)
    assert train.columns[0] == "row" and len(train) == 10368 and len(test) == 2592
    assert set(train["row"]).isdisjoint(test["row"]) and len(set(train["row"]) | set(test["row"])) == 12960
    audited = run("attack", "--tree", out, "--data", test_csv, "--row-ids", "row", "--sensitive", "class",
                  "--out", tmp_path / "attack.json")
    assert audited.exit_code == 0, audited.output
    assert "2,592" in audited.output
    rows = [r for g in json.loads((tmp_path / "attack.json").read_text())["groups"] for r in g["rows"]]
    assert sorted(rows) == sorted(test["row"])  # the ids of the input file, not positions in test.csv


def test_kadet_with_a_hierarchy_file_and_l_diversity(run, tmp_path, people):
    hierarchies = tmp_path / "h.yaml"
    written = run("hierarchy", "--data", people, "--column", "age", "--column", "job", "--out", hierarchies)
    assert written.exit_code == 0, written.output
    assert "age (numeric), job (categorical)" in written.output
    result = run("train", "--data", people, "--class-attribute", "risk", "--k", "20", "--l", "1.2",
                 "--hierarchies", hierarchies, "--algorithm", "id3", "--out", tmp_path / "t.json",
                 "--train-out", tmp_path / "train.csv")
    assert result.exit_code == 0, result.output
    assert "kADET-ID3 on 320 rows × 3 attributes" in result.output and "l-diversity" in result.output
    ages = pd.read_csv(tmp_path / "train.csv")["age"]
    assert ages.str.startswith("[").all()  # the rows as the tree saw them: age binned by its hierarchy
    c45 = run("train", "--data", people, "--class-attribute", "risk", "--k", "20", "--hierarchies", hierarchies,
              "--quasi-identifiers", "age,job", "--out", tmp_path / "c.json", "-q")
    assert c45.exit_code == 0 and c45.output == ""


def test_disguise_then_train_on_disguised_records(run, tmp_path, people):
    disguised = tmp_path / "d.csv"
    result = run("disguise", "--data", people, "--theta", "0.9", "--median", "--seed", "1", "--out", disguised)
    assert result.exit_code == 0, result.output
    assert "disguised 4 column(s) of 400 rows with θ = 0.9" in result.output
    table = pd.read_csv(disguised)
    assert table.shape == (400, 4) and set(table["age"]) <= {"low", "high"} | set(table["age"])
    original = pd.read_csv(people)
    assert 0.75 < (table["job"] == original["job"]).mean() < 0.97
    trained = run("train", "--data", disguised, "--class-attribute", "risk", "--theta", "0.9", "--out", tmp_path / "rr.json")
    assert trained.exit_code == 0, trained.output
    assert "randomized-response ID3 on 320 rows" in trained.output
    estimated = float(trained.output.split("estimated test accuracy ")[1].split()[0])
    assert 0.6 < estimated <= 1.0
    assert json.loads((tmp_path / "rr.json").read_text())["algorithm"] == "rr-id3"


def test_prune_methods_on_a_trained_tree(run, tmp_path):
    tree, test = tmp_path / "t.json", tmp_path / "test.csv"
    assert run("train", "--dataset", "nursery", "--out", tree, "--test-out", test, "-q").exit_code == 0
    one = run("prune", "--tree", tree, "--method", "1", "--s", "20", "--data", test, "--row-ids", "row", "--out", tmp_path / "p1.json")
    assert one.exit_code == 0, one.output
    assert "Method 1" in one.output and "accuracy on" in one.output
    before, after = (int(x.split()[0]) for x in one.output.split("\n")[1].strip().split("→"))
    assert after < before
    two = run("prune", "--tree", tree, "--method", "2", "--s", "20", "--out", tmp_path / "p2.json")
    assert two.exit_code == 0 and "Method 2" in two.output
    pruned = json.loads((tmp_path / "p2.json").read_text())
    leaves = [n for n in pruned["nodes"] if not n.get("children")]
    assert all(sum(n["counts"]) > 20 or n.get("parent") is None for n in leaves) or len(leaves) >= 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "--dataset", "nursery", "--k", "0", "--out", "x.json"], "0 is not in the range x>=1"),
        (["train", "--dataset", "nursery", "--k", "5", "--theta", "0.8", "--out", "x.json"], "separate learners"),
        (["train", "--dataset", "nursery", "--theta", "0.8", "--out", "x.json"], "disguise a table with `ppdm disguise`"),
        (["train", "--dataset", "nursery", "--hierarchies", "h.yaml", "--out", "x.json"], "are kADET options"),
        (["train", "--dataset", "nursery", "--k", "5", "--hierarchies", "none.yaml", "--out", "x.json"], "none.yaml: hierarchy file not found"),
        (["train", "--dataset", "nursery", "--k", "5", "--hierarchies", "h.yaml", "--out", "x.json"], "unknown column 'parent' (did you mean 'parents'?"),
        (["train", "--dataset", "nursery", "--k", "5", "--hierarchies", "bool.yaml", "--out", "x.json"], "is a YAML boolean"),
        (["train", "--dataset", "nursery", "--k", "5", "--quasi-identifiers", "pets", "--out", "x.json"], "'pets' is not an attribute"),
        (["train", "--dataset", "nursery", "--k", "5", "--quasi-identifiers", "form", "--hierarchies", "ok.yaml", "--out", "x.json"], "would be ignored"),
        (["train", "--dataset", "nursery", "--test-size", "0", "--test-out", "t.csv", "--out", "x.json"], "no held-out split"),
        (["train", "--dataset", "nursery", "--out", "x.json", "--train-out", "nowhere/t.csv"], "directory nowhere does not exist"),
        (["train", "--data", "people.csv", "--class-attribute", "risk", "--theta", "0.8", "--algorithm", "c45", "--out", "x.json"], "use --algorithm id3"),
        (["train", "--dataset", "nursery", "--disguised", "form", "--out", "x.json"], "--disguised goes with --theta"),
        (["train", "--dataset", "nursery", "--k", "5", "--criterion", "gini", "--out", "x.json"], "leave out --criterion"),
        (["disguise", "--dataset", "nursery", "--out", "d.csv"], "Missing option '--theta'"),
        (["disguise", "--dataset", "nursery", "--theta", "0.8", "--columns", "pets", "--out", "d.csv"], "'pets'"),
        (["disguise", "--data", "people.csv", "--theta", "1.5", "--out", "d.csv"], "1.5 is not in the range"),
        (["disguise", "--data", "people.csv", "--theta", "0.8", "--median", "--bins", "3", "--out", "d.csv"], "not both"),
        (["prune", "--tree", "none.json", "--method", "1", "--s", "3", "--out", "p.json"], "none.json: no such tree file"),
        (["prune", "--tree", "labels.json", "--method", "2", "--s", "3", "--out", "p.json"], "class counts"),
        (["prune", "--tree", "labels.json", "--method", "3", "--s", "3", "--out", "p.json"], "'3' is not one of '1', '2'"),
        (["prune", "--tree", "labels.json", "--method", "1", "--s", "-1", "--out", "p.json"], "-1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, args, message, tmp_path, monkeypatch, people):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.yaml").write_text("hierarchies:\n  parent: {kind: categorical, tree: {ANY: [usual]}}\n")
    (tmp_path / "bool.yaml").write_text("hierarchies:\n  form: {kind: categorical, tree: {ANY: [complete, yes]}}\n")
    (tmp_path / "ok.yaml").write_text("hierarchies:\n  health: {kind: categorical, tree: {ANY: [not_recom, priority, recommended]}}\n")
    if args[0] == "prune":
        run("train", "--dataset", "nursery", "--max-depth", "2", "--disclosure", "labels", "--out", "labels.json", "-q")
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert result.output.strip().count("\n") == 0, result.output
