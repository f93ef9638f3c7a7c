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
                                     "--max-depth", "3", "--out", str(folder / "tree.json"), "-q"])
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
    import ppdm.api

    def broken(*args, **kwargs):
        raise ValueError("x" * 5000)

    monkeypatch.setattr(ppdm.api, "_estimate", broken)
    args = ("audit", "--tree", files / "tree.json", "--data", files / "data.csv", "-q")
    result = run(*args)
    one_line_error(result, "unexpected ValueError: xxx")
    assert "ppdm --debug" in result.output and "more characters" in result.output and len(result.output) < 700
    with pytest.raises(ValueError):
        run("--debug", *args)


def test_an_interrupt_is_one_line_with_status_130(run, files, monkeypatch):
    import ppdm.api

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ppdm.api, "_estimate", interrupted)
    result = run("audit", "--tree", files / "tree.json", "--data", files / "data.csv", "-q")
    assert result.exit_code == 130 and "interrupted" in result.output and "Traceback" not in result.output
