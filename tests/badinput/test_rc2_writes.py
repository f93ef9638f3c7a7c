"""Root cause 2: every writer writes a temporary beside the target and renames it when whole; an
output that names an input, or a path that cannot be written, is refused before any work; a full
disk, a file-size limit or an interrupt leaves the old file (or none), never a truncated one."""

from __future__ import annotations

import errno
import shutil

import pytest

# -- an output that names an input ---------------------------------------------------------------
#: (id, arguments with {data} {tree} ... and {out} for the clashing output, the input named).
CLASHES = [
    ("audit-out-data", ["audit", "--tree", "{tree}", "--data", "{copy_data}", "--out", "{copy_data}", "-q"], "--data"),
    ("audit-out-tree", ["audit", "--tree", "{copy_tree}", "--data", "{data}", "--out", "{copy_tree}", "-q"], "--tree"),
    ("audit-out-threat", ["audit", "--tree", "{tree}", "--data", "{data}", "--threat", "{copy_threat}", "--out", "{copy_threat}", "-q"], "--threat"),
    ("audit-report-json-data", ["audit", "--tree", "{tree}", "--data", "{w}/t.report.json", "--report", "{w}/t.html", "-q"], "would overwrite it"),
    ("train-out-data", ["train", "--data", "{copy_data}", "--class-attribute", "class", "--out", "{copy_data}", "-q"], "--data"),
    ("train-train-out-data", ["train", "--data", "{copy_data}", "--class-attribute", "class", "--out", "{w}/t.json", "--train-out", "{copy_data}", "-q"], "--data"),
    ("train-test-out-data", ["train", "--data", "{copy_data}", "--class-attribute", "class", "--out", "{w}/t.json", "--test-out", "{copy_data}", "-q"], "--data"),
    ("train-out-hierarchies", ["train", "--data", "{adult}", "--class-attribute", "income", "--k", "5", "--hierarchies", "{copy_hier}", "--out", "{copy_hier}", "-q"], "--hierarchies"),
    ("disguise-out-data", ["disguise", "--data", "{copy_data}", "--theta", "0.8", "--out", "{copy_data}", "-q"], "--data"),
    ("prune-out-tree", ["prune", "--tree", "{copy_tree}", "--method", "1", "--s", "2", "--out", "{copy_tree}", "-q"], "--tree"),
    ("prune-out-data", ["prune", "--tree", "{tree}", "--method", "1", "--s", "2", "--data", "{copy_data}", "--out", "{copy_data}", "-q"], "--data"),
    ("rules-out-data", ["audit-rules", "--data", "{copy_data}", "--sensitive", "class", "--rules", "{rules}", "--out", "{copy_data}", "-q"], "--data"),
    ("rules-rules-out-rules", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--rules", "{copy_rules}", "--rules-out", "{copy_rules}", "-q"], "--rules"),
    ("attack-out-data", ["attack", "--model", "{tree}", "--data", "{copy_data}", "--out", "{copy_data}"], "--data"),
    ("attack-out-model", ["attack", "--model", "{copy_tree}", "--data", "{data}", "--out", "{copy_tree}"], "--model"),
    ("attack-out-known", ["attack", "--model", "{tree}", "--data", "{data}", "--attack", "background", "--known", "{copy_data}", "--out", "{copy_data}"], "--known"),
    ("report-json-result", ["report", "{copy_result}", "--out", "{w}/r.html", "--json", "{copy_result}", "-q"], "would overwrite it"),
    ("report-json-model", ["report", "{result}", "--model", "{copy_tree}", "--out", "{w}/r.html", "--json", "{copy_tree}", "-q"], "would overwrite it"),
    ("report-json-threat", ["report", "{result}", "--threat", "{copy_threat}", "--out", "{w}/r.html", "--json", "{copy_threat}", "-q"], "would overwrite it"),
    ("defend-out-model", ["defend", "--model", "{copy_tree}", "--data", "{data}", "--out", "{copy_tree}", "-q"], "--model"),
    ("defend-frontier-data", ["defend", "--model", "{tree}", "--data", "{copy_data}", "--frontier", "{copy_data}", "-q"], "--data"),
    ("defend-out-test", ["defend", "--model", "{tree}", "--data", "{data}", "--test", "{copy_data}", "--out", "{copy_data}", "-q"], "--test"),
    ("defend-out-hierarchies", ["defend", "--model", "{tree}", "--data", "{data}", "--hierarchies", "{copy_hier}", "--out", "{copy_hier}", "-q"], "--hierarchies"),
    ("hierarchy-out-data", ["hierarchy", "--data", "{copy_data}", "--column", "parents", "--out", "{copy_data}"], "--data"),
]


def fill(args, world, tmp_path):
    """The arguments with the world's files and ``tmp_path`` (``{w}``) filled in; ``{copy_X}`` is a
    copy of the world's file X in ``tmp_path`` (the file a clash must leave untouched)."""
    names = {name: str(getattr(world, name)) for name in ("data", "tree", "adult", "atree", "result", "rules", "threat", "hier", "forest", "train", "rows")}
    for name in ("data", "tree", "threat", "hier", "rules", "result"):
        source = getattr(world, name)
        copy = tmp_path / f"copy-{source.name}"
        if not copy.exists():
            shutil.copy(source, copy)
        names[f"copy_{name}"] = str(copy)
    names["w"] = str(tmp_path)
    return [a.format(**names) for a in args]


@pytest.mark.parametrize("args, option", [c[1:] for c in CLASHES], ids=[c[0] for c in CLASHES])
def test_an_output_that_names_an_input_is_refused_before_any_work(world, refuse, tmp_path, args, option):
    if "{w}/t.report.json" in args:
        shutil.copy(world.data, tmp_path / "t.report.json")
    filled = fill(args, world, tmp_path)
    inputs = [tmp_path / p.name for p in tmp_path.iterdir()]
    refuse(filled, option, outputs=inputs)


TWO_OUTPUTS = [
    ("train", ["train", "--data", "{data}", "--class-attribute", "class", "--out", "{w}/x.json", "--train-out", "{w}/x.json", "-q"]),
    ("audit-rules", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--rules", "{rules}", "--out", "{w}/x.json", "--rules-out", "{w}/x.json", "-q"]),
    ("report", ["report", "{result}", "--out", "{w}/x.html", "--json", "{w}/x.html", "-q"]),
    ("defend", ["defend", "--model", "{tree}", "--data", "{data}", "--out", "{w}/x.json", "--frontier", "{w}/x.json", "-q"]),
    ("audit-report", ["audit", "--tree", "{tree}", "--data", "{data}", "--out", "{w}/x.report.json", "--report", "{w}/x.html", "-q"]),
]


@pytest.mark.parametrize("args", [c[1] for c in TWO_OUTPUTS], ids=[c[0] for c in TWO_OUTPUTS])
def test_two_outputs_on_one_file_are_refused(world, refuse, tmp_path, args):
    refuse(fill(args, world, tmp_path), "x.", outputs=[tmp_path / "x.json", tmp_path / "x.html", tmp_path / "x.report.json"])


# -- paths that cannot be written ----------------------------------------------------------------
UNWRITABLE = [
    ("audit-missing-folder", ["audit", "--tree", "{tree}", "--data", "{data}", "--out", "{w}/nowhere/x.json", "-q"], "the directory", "does not exist"),
    ("train-folder", ["train", "--data", "{data}", "--class-attribute", "class", "--out", "{w}", "-q"], "is a directory"),
    ("disguise-devnull", ["disguise", "--data", "{data}", "--theta", "0.8", "--out", "/dev/null", "-q"], "/dev/null: not a regular file"),
    ("prune-folder-is-file", ["prune", "--tree", "{tree}", "--method", "1", "--s", "2", "--out", "{data}/x.json", "-q"], "is not a directory"),
    ("audit-report-not-html", ["audit", "--tree", "{tree}", "--data", "{data}", "--report", "{w}/r.txt", "-q"], "name it .html"),
    ("report-pdf-not-pdf", ["report", "{result}", "--out", "{w}/r.html", "--pdf", "{w}/r.txt", "-q"], "name the PDF .pdf"),
    ("hierarchy-bad-extension", ["hierarchy", "--data", "{data}", "--column", "parents", "--out", "{w}/h.txt"], "unknown hierarchy file extension '.txt'"),
    ("rules-out-devfull", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--rules", "{rules}", "--rules-out", "/dev/full", "-q"], "/dev/full: not a regular file"),
]


@pytest.mark.parametrize("args, needles", [(c[1], c[2:]) for c in UNWRITABLE], ids=[c[0] for c in UNWRITABLE])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(world, refuse, tmp_path, args, needles):
    refuse(fill(args, world, tmp_path), *needles)


# -- a write that fails half way ------------------------------------------------------------------
#: (id, arguments, the outputs, given old contents first).
WRITERS = [
    ("audit-out", ["audit", "--tree", "{tree}", "--data", "{data}", "--out", "{w}/o.json", "-q"], ["o.json"]),
    ("audit-report", ["audit", "--tree", "{tree}", "--data", "{data}", "--report", "{w}/o.html", "-q"], ["o.html", "o.report.json"]),
    ("train", ["train", "--data", "{data}", "--class-attribute", "class", "--out", "{w}/o.json", "--train-out", "{w}/rows.csv", "--test-size", "0", "-q"], ["o.json", "rows.csv"]),
    ("disguise", ["disguise", "--data", "{data}", "--theta", "0.8", "--out", "{w}/o.csv", "-q"], ["o.csv"]),
    ("prune", ["prune", "--tree", "{tree}", "--method", "2", "--s", "3", "--out", "{w}/o.json", "-q"], ["o.json"]),
    ("audit-rules", ["audit-rules", "--data", "{data}", "--sensitive", "class", "--rules", "{rules}", "--out", "{w}/o.json", "--rules-out", "{w}/r.json", "-q"], ["o.json", "r.json"]),
    ("attack", ["attack", "--model", "{tree}", "--data", "{data}", "--out", "{w}/o.json"], ["o.json"]),
    ("report", ["report", "{result}", "--out", "{w}/o.html", "-q"], ["o.html", "o.report.json"]),
    ("hierarchy", ["hierarchy", "--data", "{adult}", "--column", "age", "--out", "{w}/o.yaml"], ["o.yaml"]),
]


@pytest.mark.parametrize("failure", ["ENOSPC", "EFBIG"])
@pytest.mark.parametrize("args, outputs", [c[1:] for c in WRITERS], ids=[c[0] for c in WRITERS])
def test_a_write_that_fails_leaves_the_old_files(world, refuse, tmp_path, monkeypatch, args, outputs, failure):
    import ppdm.files

    paths = [tmp_path / name for name in outputs]
    for path in paths:
        path.write_text("old, whole\n")
    code = getattr(errno, failure)
    where = "replace" if failure == "ENOSPC" else "fsync"

    def fail(*_args, **_kwargs):
        raise OSError(code, {"ENOSPC": "No space left on device", "EFBIG": "File too large"}[failure], str(paths[0]))

    monkeypatch.setattr(ppdm.files.os, where, fail)
    if "attack" in args:  # attack prints its result before writing it: the error line follows
        from click.testing import CliRunner

        from ppdm.cli import main

        result = CliRunner().invoke(main, fill(args, world, tmp_path))
        line = result.stderr.strip()
        assert result.exit_code == 2 and "\n" not in line and "Traceback" not in result.output, result.output
        assert ("No space left" in line) or ("File too large" in line), line
        assert all(p.read_text() == "old, whole\n" for p in paths)
        return
    refuse(fill(args, world, tmp_path), "No space left on device" if failure == "ENOSPC" else "File too large", outputs=paths)


def test_an_interrupt_during_disguise_leaves_no_partial_table(world, refuse, tmp_path, monkeypatch):
    import pandas as pd

    real = pd.DataFrame.to_csv

    def interrupted(self, path, *args, **kwargs):
        real(self.head(11), path, *args, **kwargs)  # part of the rows reach the disk ...
        raise KeyboardInterrupt  # ... then Ctrl-C

    monkeypatch.setattr(pd.DataFrame, "to_csv", interrupted)
    out = tmp_path / "disguised.csv"
    refuse(fill(["disguise", "--data", "{data}", "--theta", "0.8", "--out", str(out), "-q"], world, tmp_path), "interrupted", outputs=[out], status=130)


def test_an_interrupt_while_writing_the_training_rows_leaves_no_tree_either(world, refuse, tmp_path, monkeypatch):
    import pandas as pd

    def interrupted(self, path, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", interrupted)
    out, rows = tmp_path / "t.json", tmp_path / "rows.csv"
    out.write_text("the previous tree\n")
    refuse(fill(["train", "--data", "{data}", "--class-attribute", "class", "--test-size", "0", "--out", str(out), "--train-out", str(rows), "-q"], world, tmp_path),
           "interrupted", outputs=[out, rows], status=130)


@pytest.mark.parametrize("command", ["disguise", "train"])
def test_a_file_size_limit_leaves_the_old_file(world, refuse_in_subprocess, tmp_path, command):
    """``ulimit -f``: the write fails with EFBIG part way; the old file stays whole."""
    out = tmp_path / "out.csv"
    out.write_text("old, whole\n")
    if command == "disguise":
        args = ["disguise", "--data", world.data, "--theta", "0.8", "--out", out, "-q"]
    else:  # the tree fits under the limit, its training rows do not: neither is written
        args = ["train", "--data", world.data, "--class-attribute", "class", "--test-size", "0", "--max-depth", "1", "--out", tmp_path / "t.json",
                "--train-out", out, "-q"]
    refuse_in_subprocess(args, "File too large", outputs=[out, tmp_path / "t.json"], fsize=8192)
