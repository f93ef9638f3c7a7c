"""Outputs are whole or absent and never overwrite an input; whatever fails, one line and exit 2."""

from __future__ import annotations

import errno
import os

import pytest

from ppdm.data.datasets import load_dataset
from ppdm.errors import PpdmError
from ppdm.files import atomic_path, write_atomic

from cli_output import one_line_error


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("outputs")
    frame = load_dataset("nursery")[0].sample(800, random_state=0).reset_index(drop=True)
    frame.to_csv(folder / "data.csv", index=False)
    from click.testing import CliRunner

    from ppdm.cli import main

    done = CliRunner().invoke(main, ["train", "--data", str(folder / "data.csv"), "--class-attribute", "class",
                                     "--max-depth", "3", "--test-size", "0", "--out", str(folder / "tree.json"), "-q"])
    assert done.exit_code == 0, done.output
    return folder


def test_an_output_that_names_an_input_is_refused_before_any_work(run, files, tmp_path):
    data = tmp_path / "data.csv"
    data.write_bytes((files / "data.csv").read_bytes())
    before = data.read_bytes()
    one_line_error(run("audit", "--tree", files / "tree.json", "--data", data, "--out", data), "it is also an input (--data")
    assert data.read_bytes() == before
    one_line_error(run("disguise", "--data", data, "--theta", "0.8", "--out", data), "it is also an input (--data")
    assert data.read_bytes() == before
    one_line_error(run("prune", "--tree", files / "tree.json", "--method", "1", "--s", "3", "--out", files / "tree.json"), "it is also an input")


def test_two_outputs_on_one_file_are_refused(run, files, tmp_path):
    out = tmp_path / "x.json"
    one_line_error(
        run("train", "--data", files / "data.csv", "--class-attribute", "class", "--out", out, "--train-out", out),
        "two outputs would write the same file",
    )
    assert not out.exists()


def test_a_special_file_as_output_is_refused_before_any_work(run, files):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    one_line_error(run("audit", "--tree", files / "tree.json", "--data", files / "data.csv", "--out", "/dev/full"), "not a regular file")


def test_a_special_file_as_model_is_named(run, files):
    one_line_error(run("audit", "--tree", "/dev/null", "--data", files / "data.csv"), "/dev/null: not a regular file")


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)  # the umask's mode, not mkstemp's
    with pytest.raises(PpdmError, match="not a regular file"):
        write_atomic(tmp_path, "x")


def test_a_full_disk_is_one_line(run, files, tmp_path, monkeypatch):
    import ppdm.files

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "a.json"))

    monkeypatch.setattr(ppdm.files.os, "replace", full)
    result = run("audit", "--tree", files / "tree.json", "--data", files / "data.csv", "--out", tmp_path / "a.json", "-q")
    one_line_error(result, "No space left on device")
    assert not (tmp_path / "a.json").exists()
    assert not list(tmp_path.iterdir())


def test_an_unexpected_error_is_one_line_and_debug_shows_the_trace(run, files, monkeypatch):
    from ppdm.pipeline.estimate import ROADS

    def broken(*args, **kwargs):
        raise ValueError("x" * 5000)

    monkeypatch.setitem(ROADS, "auto", broken)  # the default road fails
    args = ("audit", "--tree", files / "tree.json", "--data", files / "data.csv", "-q")
    result = run(*args)
    one_line_error(result, "unexpected ValueError: xxx")
    assert "ppdm --debug" in result.output and "more characters" in result.output and len(result.output) < 700
    with pytest.raises(ValueError):
        run("--debug", *args)


def test_an_interrupt_is_one_line_with_status_130(run, files, monkeypatch):
    from ppdm.pipeline.estimate import ROADS

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setitem(ROADS, "auto", interrupted)  # the default road fails
    result = run("audit", "--tree", files / "tree.json", "--data", files / "data.csv", "-q")
    assert result.exit_code == 130 and "interrupted" in result.output and "Traceback" not in result.output


def test_a_table_that_cannot_be_the_training_data_is_refused_unless_declared_a_sample(run, files, tmp_path):
    """One policy for every model: a table of another size than the model's training data is
    refused with both counts; --sample audits it on purpose and every output says so."""
    import pandas as pd

    full = pd.read_csv(files / "data.csv")
    variants = {"first100": full.head(100), "one_row": full.head(1), "one_fewer": full.iloc[:-1], "twice": pd.concat([full, full])}
    for name, frame in variants.items():
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        one_line_error(run("audit", "--tree", files / "tree.json", "--data", path), f"the table has {len(frame):,} record{'' if len(frame) == 1 else 's'} but the model was trained on 800")
    sampled = run(
        "audit", "--tree", files / "tree.json", "--data", tmp_path / "first100.csv", "--sample", "--out", tmp_path / "s.json",
        "--report", tmp_path / "s.html",
    )
    assert sampled.exit_code == 0, sampled.output
    assert "audited a sample: 100 records; the model was trained on 800" in sampled.output
    import json

    assert "audited a sample" in json.loads((tmp_path / "s.json").read_text())["summary"]["sample"]
    verdict = (tmp_path / "s.html").read_text().split('id="verdict"')[1].split("</section>")[0]
    assert "audited a sample: 100 records" in verdict  # the verdict card says what it was judged on


def test_pruning_method_1_keeps_the_training_size_the_audit_checks(run, files, tmp_path):
    """A tree pruned by Method 1 publishes fewer records at its root; it says how many it removed,
    so the training table still passes (and another table still does not)."""
    out = tmp_path / "pruned.json"
    assert run("prune", "--tree", files / "tree.json", "--method", "1", "--s", "30", "--out", out, "-q").exit_code == 0
    from ppdm.tree import load_tree

    pruned = load_tree(out)
    assert pruned.removed_records > 0 and pruned.n_training_records == 800
    assert run("audit", "--tree", out, "--data", files / "data.csv", "-q").exit_code == 0
