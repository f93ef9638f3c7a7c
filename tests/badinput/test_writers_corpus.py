"""Issue 41, the writers' side: no writer replaces a file the same call read, whatever its spelling
(a glob, a symbolic link, ``..``, a relative path, a hard link); JSON with a key written twice and
XGBoost files whose declared counts disagree with what they hold are refused; the OS errors and
options named in one line. Each case: exit 2 (or the ppdm error), one line naming the culprit, and
the folder hashed before and after unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ppdm.errors import ModelImportError, PpdmError, ReportError, RulesError, TreeFormatError


def folder_hash(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (temporaries included) by name, with its content's hash."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


@pytest.fixture
def parts(world, tmp_path):
    """The Nursery rows in two CSV partitions ``p0.csv`` and ``p1.csv`` of ``tmp_path``."""
    frame = pd.read_csv(world.data)
    frame.iloc[:150].to_csv(tmp_path / "p0.csv", index=False)
    frame.iloc[150:].to_csv(tmp_path / "p1.csv", index=False)
    shutil.copy(world.tree, tmp_path / "tree.json")
    return tmp_path


# -- an output over an input, through every spelling ------------------------------------------------
def _spellings(folder: Path) -> dict[str, str]:
    """Other names of ``folder/p0.csv``: a glob, a symbolic link, ``..``, a relative path, a hard link."""
    (folder / "sub").mkdir(exist_ok=True)
    link = folder / "link.csv"
    if not link.exists():
        link.symlink_to(folder / "p0.csv")
    hard = folder / "hard.csv"
    if not hard.exists():
        os.link(folder / "p0.csv", hard)
    return {
        "glob": str(folder / "p*.csv"),
        "symlink": str(link),
        "dotdot": str(folder / "sub" / ".." / "p0.csv"),
        "relative": os.path.relpath(folder / "p0.csv"),
        "hardlink": str(hard),
    }


SPELLINGS = ["glob", "symlink", "dotdot", "relative", "hardlink"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_dask_audit_never_writes_over_a_partition_it_read(parts, refuse, spelling):
    pytest.importorskip("dask")
    names = _spellings(parts)
    before = folder_hash(parts)
    data = names["glob"] if spelling == "glob" else names[spelling]
    out = parts / "p0.csv" if spelling == "glob" else parts / "p0.csv"
    refuse(["audit", "--backend", "dask", "--tree", parts / "tree.json", "--data", data, "--out", out, "-q"], "p0.csv", "input")
    assert folder_hash(parts) == before


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("writer", ["save", "report-json", "report-html", "save_record"])
def test_the_python_writers_never_write_over_what_the_audit_read(parts, spelling, writer):
    import ppdm

    names = _spellings(parts)
    data = str(parts / "p0.csv")
    whole = parts / "whole.csv"
    pd.concat([pd.read_csv(parts / "p0.csv"), pd.read_csv(parts / "p1.csv")]).to_csv(whole, index=False)
    shutil.copy(whole, parts / "p0.csv")  # p0.csv: the whole training table (the hard link sees it too)
    audit = ppdm.audit(str(parts / "tree.json"), data)
    target = names[spelling] if spelling != "glob" else data
    before = folder_hash(parts)
    calls = {
        "save": lambda: audit.save(target),
        "report-json": lambda: audit.report(parts / "r.html", json=target),
        "report-html": lambda: audit.report(target),
        "save_record": lambda: audit.save_record(target),
    }
    with pytest.raises(PpdmError) as info:
        calls[writer]()
    assert "input" in str(info.value) and "\n" not in str(info.value)
    assert folder_hash(parts) == before


@pytest.mark.parametrize("writer", ["save", "save_record"])
def test_the_python_writers_never_write_over_the_model_or_threat_read(world, tmp_path, writer):
    import ppdm

    tree, threat = tmp_path / "tree.json", tmp_path / "threat.yaml"
    shutil.copy(world.tree, tree)
    shutil.copy(world.threat, threat)
    audit = ppdm.audit(tree, str(world.data), threat)
    before = folder_hash(tmp_path)
    for target in (tree, threat, tmp_path / "." / "tree.json"):
        with pytest.raises(PpdmError, match="input"):
            getattr(audit, writer)(target)
    assert folder_hash(tmp_path) == before
    getattr(audit, writer)(tmp_path / "out.json")  # another file is written
    assert (tmp_path / "out.json").is_file()


def test_a_symlink_loop_given_with_out_is_one_line(world, refuse, tmp_path):
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    refuse(["audit", "--tree", world.tree, "--data", loop, "--out", tmp_path / "o.json", "-q"], "loop.csv", outputs=[tmp_path / "o.json"])
    refuse(["audit", "--tree", loop, "--data", world.data, "--out", tmp_path / "o.json", "-q"], "loop.csv", outputs=[tmp_path / "o.json"])
    refuse(["defend", "--model", world.tree, "--data", loop, "--out", tmp_path / "o.json", "-q"], "loop.csv", outputs=[tmp_path / "o.json"])


# -- JSON with a key written twice -----------------------------------------------------------------
def _twice(text: str, key: str) -> str:
    """``text`` (a JSON object) with its first ``"key": value`` pair written twice."""
    doc = json.loads(text)
    path = [doc]
    found = None
    while path and found is None:
        node = path.pop()
        if isinstance(node, dict):
            if key in node:
                found = node
            path.extend(node.values())
        elif isinstance(node, list):
            path.extend(node)
    assert found is not None, key
    found[key + "\0"] = found[key]
    return json.dumps(doc).replace(json.dumps(key + "\0"), json.dumps(key))


#: (world file, key written twice, the reader, the error).
DUPLICATES = [
    ("tree", "disclosure", "load_model", TreeFormatError),
    ("tree", "counts", "load_model", TreeFormatError),
    ("tree", "class_attribute", "load_model", TreeFormatError),
    ("forest", "trees", "load_model", TreeFormatError),
    ("forest", "format", "load_model", TreeFormatError),
    ("xgb", "num_class", "load_model", TreeFormatError),
    ("xgb", "left_children", "load_model", TreeFormatError),
    ("result", "summary", "report", ReportError),
    ("rules", "rules", "rules", RulesError),
]


@pytest.mark.parametrize("name, key, reader, error", DUPLICATES, ids=[f"{d[0]}-{d[1]}" for d in DUPLICATES])
def test_a_json_key_written_twice_is_refused(needs, raises, tmp_path, name, key, reader, error):
    source = needs(name)
    bad = tmp_path / f"twice-{source.name}"
    bad.write_text(_twice(source.read_text(), key))
    before = folder_hash(tmp_path)
    if reader == "load_model":
        from ppdm.tree.model_files import load_model

        raises(lambda: load_model(bad, pd.read_csv(needs("data"))), error, bad.name, repr(key), "twice")
    elif reader == "report":
        from ppdm.report.load import load_result

        raises(lambda: load_result(bad), error, bad.name, repr(key), "twice")
    else:
        from ppdm.rules.ruleset import RuleSet

        raises(lambda: RuleSet.load(bad), error, bad.name, repr(key), "twice")
    assert folder_hash(tmp_path) == before


@pytest.mark.parametrize("name, key", [("tree", "disclosure"), ("tree", "counts"), ("forest", "trees"), ("result", "summary")])
def test_the_cli_refuses_a_json_key_written_twice(world, refuse, tmp_path, name, key):
    source = getattr(world, name)
    bad = tmp_path / f"twice-{source.name}"
    bad.write_text(_twice(source.read_text(), key))
    if name == "result":
        args = ["report", bad, "--out", tmp_path / "r.html", "-q"]
    else:
        args = ["show", bad]
    refuse(args, bad.name, repr(key), "twice", outputs=[tmp_path / "r.html"])


# -- an XGBoost file whose declared counts disagree with its trees ------------------------------------
def _edit_xgb(doc: dict, what: str) -> None:
    model = doc["learner"]["gradient_booster"]["model"]
    if what == "num_trees-huge":
        model["gbtree_model_param"]["num_trees"] = "1000000000"
    elif what == "num_trees-less":
        model["gbtree_model_param"]["num_trees"] = str(len(model["trees"]) - 1)
    elif what == "num_trees-text":
        model["gbtree_model_param"]["num_trees"] = "many"
    elif what == "indptr-short":
        model["iteration_indptr"] = model["iteration_indptr"][:-1]
    elif what == "indptr-falling":
        model["iteration_indptr"] = [0, *reversed(model["iteration_indptr"][1:])]
    elif what == "tree-id":
        model["trees"][-1]["id"] = 0
    elif what == "num_nodes":
        model["trees"][0]["tree_param"]["num_nodes"] = "1000000"


XGB_EDITS = ["num_trees-huge", "num_trees-less", "num_trees-text", "indptr-short", "indptr-falling", "tree-id", "num_nodes"]
XGB_NEEDLES = {
    "num_trees-huge": "num_trees", "num_trees-less": "num_trees", "num_trees-text": "num_trees", "indptr-short": "iteration_indptr",
    "indptr-falling": "iteration_indptr", "tree-id": "id", "num_nodes": "num_nodes",
}


@pytest.mark.parametrize("what", XGB_EDITS)
def test_an_inconsistent_xgboost_file_is_refused(needs, raises, tmp_path, what):
    from ppdm.tree.model_files import load_model

    source = needs("xgb")
    doc = json.loads(source.read_text())
    _edit_xgb(doc, what)
    bad = tmp_path / "bad.xgb.json"
    bad.write_text(json.dumps(doc))
    raises(lambda: load_model(bad, pd.read_csv(needs("data"))), ModelImportError, bad.name, XGB_NEEDLES[what])


@pytest.mark.parametrize("what", ["num_trees-huge", "indptr-short"])
def test_the_cli_refuses_an_inconsistent_xgboost_file(world, needs, refuse, tmp_path, what):
    doc = json.loads(needs("xgb").read_text())
    _edit_xgb(doc, what)
    bad = tmp_path / "bad.xgb.json"
    bad.write_text(json.dumps(doc))
    out = tmp_path / "o.json"
    refuse(["audit", "--model", bad, "--data", world.data, "--out", out, "-q"], bad.name, XGB_NEEDLES[what], outputs=[out])


# -- options: each refused in one line naming it, in the spelling of the surface that was used ---------
def test_audit_rules_refuses_a_sensitive_column_the_rules_are_not_about(world, refuse, tmp_path):
    out = tmp_path / "o.json"
    refuse(["audit-rules", "--data", world.data, "--sensitive", "health", "--rules", world.rules, "--out", out, "-q"],
           "--sensitive 'health'", "'class'", outputs=[out])  # fmt: skip


OPTION_CASES = [
    ("out-empty", ["audit", "--tree", "{tree}", "--data", "{data}", "--out", "", "-q"], ("empty name",)),
    ("sep-two-characters", ["audit", "--tree", "{tree}", "--data", "{data}", "--sep", "ab", "-q"], ("--sep 'ab'", "one character")),
    ("trees-beyond-forest", ["audit", "--model", "{forest}", "--data", "{train}", "--trees", "0:1000", "-q"], ("0:1000", "3 trees")),
    ("trees-index-beyond-forest", ["audit", "--model", "{forest}", "--data", "{train}", "--trees", "0,7", "-q"], ("0,7", "3 trees")),
    ("trees-on-a-tree", ["audit", "--tree", "{tree}", "--data", "{data}", "--trees", "0:1", "-q"], ("--trees", "single tree")),
    ("domain-on-a-classifier", ["audit", "--tree", "{tree}", "--data", "{data}", "--domain", "0,1", "-q"], ("--domain", "predicts classes")),
    ("defend-row-ids-unknown", ["defend", "--model", "{tree}", "--data", "{data}", "--row-ids", "nope", "-q"], ("nope",)),
    ("defend-sep-two-characters", ["defend", "--model", "{tree}", "--data", "{data}", "--sep", "ab", "-q"], ("--sep 'ab'",)),
    ("defend-names-wrong", ["defend", "--model", "{tree}", "--data", "{data}", "--names", "a,b", "-q"], ()),
]


@pytest.mark.parametrize("args, needles", [c[1:] for c in OPTION_CASES], ids=[c[0] for c in OPTION_CASES])
def test_a_bad_option_is_one_line_in_the_cli_spelling(world, refuse, tmp_path, args, needles):
    names = {k: str(getattr(world, k)) for k in ("tree", "data", "forest", "train")}
    before = folder_hash(tmp_path)
    refuse([a.format(**names) for a in args], *needles)
    assert "=" not in "".join(needles)
    assert folder_hash(tmp_path) == before


def test_the_python_api_names_its_own_arguments(world, needs, raises):
    import ppdm
    from ppdm.tree.model_files import load_model

    data = pd.read_csv(world.data)
    raises(lambda: load_model(needs("xgb"), None), ModelImportError, "(data=)")
    raises(lambda: ppdm.audit(str(world.tree), data, trees="0:1"), PpdmError, "trees=")
    raises(lambda: ppdm.audit(str(world.tree), data, domain=(0, 1)), PpdmError, "tolerance= and domain=")
    forest = load_model(world.forest)
    raises(lambda: ppdm.audit(forest, pd.read_csv(world.train), trees=range(5)), PpdmError, "3 trees")


def test_load_model_without_data_names_the_option_in_the_cli(world, needs, refuse):
    refuse(["show", needs("xgb")], "--data")


def test_a_ragged_dask_partition_is_ppdms_own_line(parts, refuse):
    pytest.importorskip("dask")
    with (parts / "p1.csv").open("a") as f:
        f.write("a,b,c,d,e,f,g,h,i,j,k,l\n")
    before = folder_hash(parts)
    refuse(["audit", "--backend", "dask", "--tree", parts / "tree.json", "--data", parts / "p*.csv", "--sample", "-q"], "ragged row", "12 fields")
    assert folder_hash(parts) == before


def test_defend_reads_the_csv_options(world, tmp_path):
    """--sep and --row-ids reach defend's table (the search itself is tested elsewhere)."""
    from click.testing import CliRunner

    from ppdm.cli import main

    frame = pd.read_csv(world.data)
    frame.insert(0, "id", range(1000, 1000 + len(frame)))
    semi = tmp_path / "semi.csv"
    frame.to_csv(semi, sep=";", index=False)
    out = tmp_path / "d.json"
    done = CliRunner().invoke(main, ["defend", "--model", str(world.tree), "--data", str(semi), "--sep", ";", "--row-ids", "id",
                                     "--time-budget", "20", "--out", str(out), "-q"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert out.is_file()


# -- OS errors name the file being written -----------------------------------------------------------
def test_a_file_size_limit_names_the_output(world, refuse_in_subprocess, tmp_path):
    out = tmp_path / "o.json"
    out.write_text("old\n")
    refuse_in_subprocess(["audit", "--tree", world.tree, "--data", world.data, "--out", out, "-q"], "File too large", "o.json", outputs=[out], fsize=2000)


def test_a_missing_folder_met_while_writing_names_the_output(tmp_path, raises):
    from ppdm.files import write_atomic

    raises(lambda: write_atomic(tmp_path / "gone" / "o.json", "{}"), PpdmError, "o.json", "gone")


# -- the CLI: an output naming an input under another spelling ------------------------------------------
#: (id, the command with {input} and {out}, the input's world file, the option named).
CLI_CLASHES = [
    ("audit-out-data", ["audit", "--tree", "{tree}", "--data", "{input}", "--out", "{out}", "-q"], "data", "--data"),
    ("audit-out-threat", ["audit", "--tree", "{tree}", "--data", "{data}", "--threat", "{input}", "--out", "{out}", "-q"], "threat", "--threat"),
    ("audit-out-tree", ["audit", "--tree", "{input}", "--data", "{data}", "--out", "{out}", "-q"], "tree", "--tree"),
    ("train-out-data", ["train", "--data", "{input}", "--class-attribute", "class", "--out", "{out}", "-q"], "data", "--data"),
    ("disguise-out-data", ["disguise", "--data", "{input}", "--theta", "0.8", "--out", "{out}", "-q"], "data", "--data"),
    ("prune-out-tree", ["prune", "--tree", "{input}", "--method", "1", "--s", "2", "--out", "{out}", "-q"], "tree", "--tree"),
]


@pytest.mark.parametrize("spelling", ["symlink", "dotdot", "relative", "hardlink"])
@pytest.mark.parametrize("args, source, option", [c[1:] for c in CLI_CLASHES], ids=[c[0] for c in CLI_CLASHES])
def test_the_cli_refuses_an_output_over_an_input_however_spelled(world, refuse, tmp_path, spelling, args, source, option):
    original = getattr(world, source)
    given = tmp_path / f"in{original.suffix}"
    shutil.copy(original, given)
    (tmp_path / "sub").mkdir()
    out = {
        "symlink": tmp_path / f"link{original.suffix}",
        "dotdot": tmp_path / "sub" / ".." / given.name,
        "relative": Path(os.path.relpath(given)),
        "hardlink": tmp_path / f"hard{original.suffix}",
    }[spelling]
    if spelling == "symlink":
        out.symlink_to(given)
    if spelling == "hardlink":
        os.link(given, out)
    before = folder_hash(tmp_path)
    names = {"tree": str(world.tree), "data": str(world.data), "input": str(given), "out": str(out)}
    refuse([a.format(**names) for a in args], option, "input")
    assert folder_hash(tmp_path) == before


def test_a_symlink_loop_as_the_threat_with_out_is_one_line(world, refuse, tmp_path):
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    refuse(["audit", "--tree", world.tree, "--data", world.data, "--threat", loop, "--out", tmp_path / "o.json", "-q"], "loop.yaml",
           outputs=[tmp_path / "o.json"])  # fmt: skip


def test_a_full_disk_names_the_output_and_keeps_the_old_file(world, monkeypatch, tmp_path):
    import errno

    from click.testing import CliRunner

    from ppdm.cli import main
    from ppdm.files import write_atomic

    out = tmp_path / "o.json"
    out.write_text("old\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as info:
        write_atomic(out, "new\n")
    assert info.value.filename == str(out)
    done = CliRunner().invoke(main, ["audit", "--tree", str(world.tree), "--data", str(world.data), "--out", str(out), "-q"])
    assert done.exit_code == 2 and done.stderr.strip() == f"error: No space left on device: {out}", done.stderr
    assert out.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["o.json"]


@pytest.mark.parametrize("case", ["glob-clash", "twice-key"])
def test_refusals_hold_under_a_memory_limit(world, parts, refuse_in_subprocess, case):
    """The same refusals in a process capped in memory (conftest's SUBPROCESS_BYTES)."""
    if case == "glob-clash":
        pytest.importorskip("dask")
        refuse_in_subprocess(["audit", "--backend", "dask", "--tree", parts / "tree.json", "--data", parts / "p*.csv", "--out", parts / "p1.csv", "-q"],
                             "p1.csv", "input", outputs=[parts / "p0.csv", parts / "p1.csv"])  # fmt: skip
    else:
        bad = parts / "twice.json"
        bad.write_text(_twice(world.tree.read_text(), "disclosure"))
        refuse_in_subprocess(["audit", "--tree", bad, "--data", world.data, "--out", parts / "o.json", "-q"], "'disclosure'", "twice",
                             outputs=[parts / "o.json"])  # fmt: skip
