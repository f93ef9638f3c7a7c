"""Real CSV files on every command that reads one: --sep, no header with --names, --na-values,
--row-ids; bad values are one line with exit status 2."""

import gzip
import importlib.resources
import json

import pytest

ADULT_NAMES = ("age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex,"
               "capital-gain,capital-loss,hours-per-week,native-country,income")


@pytest.fixture
def raw_adult(tmp_path):
    """The first 1,500 lines of the raw UCI adult.data: no header, ', ' between fields, '?' for missing."""
    resource = importlib.resources.files("ppdm") / "data/_bundled/adult.data.gz"
    with gzip.open(resource.open("rb"), "rt") as handle:
        lines = [next(handle) for _ in range(1500)]
    path = tmp_path / "adult.data"
    path.write_text("".join(lines))
    return path


def test_train_and_audit_a_file_without_header(run, raw_adult, tmp_path):
    tree, train_csv = tmp_path / "t.json", tmp_path / "train.csv"
    result = run("train", "--data", raw_adult, "--names", ADULT_NAMES, "--class-attribute", "income",
                 "--max-depth", "3", "--drop-missing", "--out", tree, "--train-out", train_csv)
    assert result.exit_code == 0, result.output
    assert "C45 on 1,101 rows × 14 attributes" in result.output and "left out" in result.output
    audited = run("audit", "--tree", tree, "--data", train_csv, "--row-ids", "row", "--sensitive", "income",
                  "--known", "age,education,sex", "--out", tmp_path / "a.json")
    assert audited.exit_code == 0, audited.output
    assert "over 1,101 records" in audited.output
    attacked = run("attack", "--tree", tree, "--data", raw_adult, "--names", ADULT_NAMES, "--sensitive", "income")
    assert attacked.exit_code == 0 and "homogeneity attack on 'income'" in attacked.output


def test_na_values_and_separator(run, tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("a\tb\ty\n" + "".join(f"{'x' if i % 3 else 'missing'}\t{i % 2}\t{'pq'[i % 2]}\n" for i in range(30)))
    default = run("hierarchy", "--data", path, "--sep", "\\t", "--column", "a")
    assert default.exit_code == 0 and "missing" in default.output
    chosen = run("hierarchy", "--data", path, "--sep", "tab", "--na-values", "missing", "--column", "a")
    assert chosen.exit_code == 0 and "missing" not in chosen.output and "ANY: [x]" in chosen.output
    semicolons = tmp_path / "s.csv"
    semicolons.write_text("a;b;y\n" + "".join(f"{i % 3};{'uv'[i % 2]};{'pq'[i % 2]}\n" for i in range(30)))
    trained = run("train", "--data", semicolons, "--sep", ";", "--class-attribute", "y", "--algorithm", "id3",
                  "--out", tmp_path / "s.json", "-q")
    assert trained.exit_code == 0, trained.output
    assert json.loads((tmp_path / "s.json").read_text())["class_attribute"] == "y"


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "--data", "adult.data", "--names", "age,workclass", "--class-attribute", "workclass", "--out", "x.json"],
         "15 field(s) but 2 name(s) given"),
        (["train", "--data", "adult.data", "--names", ADULT_NAMES, "--class-attribute", "salary", "--out", "x.json"], "'salary'"),
        (["train", "--data", "adult.data", "--names", ADULT_NAMES, "--row-ids", "id", "--class-attribute", "income", "--out", "x.json"],
         "row_ids names unknown column(s) 'id'"),
        (["train", "--data", "adult.data", "--names", ADULT_NAMES, "--row-ids", "workclass", "--class-attribute", "income", "--out", "x.json"],
         "must hold whole numbers"),
        (["attack", "--tree", "t.json", "--data", "adult.data", "--names", "a,a,b,c,d,e,f,g,h,i,j,k,l,m,n"], "names repeats 'a'"),
        (["audit", "--tree", "t.json", "--data", "adult.data", "--sep", ";", "--names", ADULT_NAMES], "1 field(s) but 15 name(s)"),
        (["audit-rules", "--data", "adult.data", "--sep", "|", "--sensitive", "income", "--support", "0.1", "--confidence", "0.5"], "the separator looks wrong (try --sep ',')"),
        (["disguise", "--data", "adult.data", "--names", ADULT_NAMES, "--theta", "0.8", "--columns", "workclass", "--out", "d.csv"],
         "column 'workclass': value nan at row 27 is missing"),
    ],
)
def test_bad_csv_input_is_one_line_and_exit_2(run, raw_adult, args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if args[0] in ("attack", "audit"):
        assert run("train", "--dataset", "nursery", "--max-depth", "1", "--out", "t.json", "-q").exit_code == 0
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert result.output.strip().count("\n") == 0 and "Traceback" not in result.output
