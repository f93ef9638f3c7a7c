"""Root cause 3: whatever fails underneath (an OS error, a parser's own error, recursion, memory,
a corrupt Parquet part), every command ends in one line and exit status 2; ``ppdm --debug``
shows the trace of an error ppdm did not anticipate."""

from __future__ import annotations

import errno

import pandas as pd
import pytest
from click.testing import CliRunner

from ppdm.cli import main


@pytest.mark.parametrize(
    "error, needle",
    [
        (OSError(errno.ENOSPC, "No space left on device", "/somewhere/x.json"), "No space left on device: /somewhere/x.json"),
        (OSError(errno.EFBIG, "File too large", "/somewhere/x.json"), "File too large: /somewhere/x.json"),
        (OSError(errno.EIO, "Input/output error"), "Input/output error"),
        (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
        (MemoryError(), "out of memory"),
    ],
    ids=["ENOSPC", "EFBIG", "EIO", "RecursionError", "MemoryError"],
)
def test_an_error_beneath_the_audit_is_one_line(world, refuse, monkeypatch, error, needle):
    from ppdm.pipeline.estimate import ROADS

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setitem(ROADS, "auto", broken)  # the default road fails
    refuse(["audit", "--tree", world.tree, "--data", world.data, "-q"], needle)


def test_an_unanticipated_error_is_one_line_and_debug_shows_its_trace(world, monkeypatch):
    from ppdm.pipeline.estimate import ROADS

    def broken(*args, **kwargs):
        raise ZeroDivisionError("x" * 100_000)

    monkeypatch.setitem(ROADS, "auto", broken)  # the default road fails
    args = ["audit", "--tree", str(world.tree), "--data", str(world.data), "-q"]
    result = CliRunner().invoke(main, args)
    line = result.stderr.strip()
    assert result.exit_code == 2 and "\n" not in line and "Traceback" not in result.output
    assert "unexpected ZeroDivisionError" in line and "ppdm --debug" in line and len(line) < 700
    with pytest.raises(ZeroDivisionError):
        CliRunner().invoke(main, ["--debug", *args], catch_exceptions=False)


def test_a_header_field_beyond_the_csv_modules_limit_is_named(world, refuse, tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("a" * 200_000 + ",class\nx,y\n")
    refuse(["audit", "--tree", world.tree, "--data", path, "-q"], "wide.csv, line 1: cannot read the header (field larger than field limit")


def test_a_header_field_beyond_the_limit_with_names_given_is_named(world, refuse, tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("a" * 200_000 + ",class\nx,y\n")
    refuse(["train", "--data", path, "--names", "a,class", "--class-attribute", "class", "--out", tmp_path / "t.json", "-q"], "wide.csv, line 1: cannot read the header")


def test_a_sparse_file_of_half_a_gigabyte_is_refused_at_its_first_line(world, refuse_in_subprocess, tmp_path):
    path = tmp_path / "sparse.csv"
    with open(path, "wb") as f:
        f.truncate(512 * 2**20)
    refuse_in_subprocess(["audit", "--tree", world.tree, "--data", path, "-q"], "sparse.csv: the first line is longer than 1,048,576 characters")


@pytest.mark.parametrize("content", [b"PAR1" + b"\0" * 64 + b"PAR1", b"PAR1garbagePAR1", b"not parquet at all"], ids=["zeros", "garbage", "text"])
def test_a_corrupt_parquet_part_is_named(world, refuse, tmp_path, content):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    pd.read_csv(world.data).head(150).to_parquet(tmp_path / "part-0.parquet")
    (tmp_path / "part-1.parquet").write_bytes(content)
    refuse(["audit", "--tree", world.tree, "--data", str(tmp_path / "part-*.parquet"), "--backend", "dask", "-q"], "part-1.parquet: not a readable Parquet file")


def test_a_csv_part_that_does_not_parse_is_one_line(world, refuse, tmp_path):
    pytest.importorskip("dask.dataframe")
    frame = pd.read_csv(world.data)
    frame.head(150).to_csv(tmp_path / "part-0.csv", index=False)
    text = frame.tail(150).to_csv(index=False)
    (tmp_path / "part-1.csv").write_text(text + "a,b,c,d,e,f,g,h,i,j,k,l\n")
    refuse(["audit", "--tree", world.tree, "--data", str(tmp_path / "part-*.csv"), "--backend", "dask", "-q"], "cannot be read")


def test_a_file_name_too_long_is_one_line(world, refuse):
    long = "/tmp/" + "x" * 5000 + ".csv"
    refuse(["audit", "--tree", world.tree, "--data", long, "-q"], "File name too long")


def test_a_loop_of_symbolic_links_is_no_such_file(world, refuse, tmp_path):
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    refuse(["audit", "--tree", loop, "--data", world.data, "-q"], "loop.json: no such model file")


def test_the_error_line_is_printed_even_when_rich_cannot_load(world, monkeypatch, tmp_path):
    """Out of memory, the error handler's own import fails: the line is still printed, plainly."""
    import builtins

    real = builtins.__import__

    def no_rich(name, *args, **kwargs):
        if name.startswith("rich"):
            raise MemoryError
        return real(name, *args, **kwargs)

    import ppdm.cli.common as common

    monkeypatch.setattr(builtins, "__import__", no_rich)
    with common.errors.using(None):
        result = CliRunner().invoke(main, ["show", str(tmp_path / "absent.json")])
    assert result.exit_code == 2 and result.stderr.strip() == f"error: {tmp_path / 'absent.json'}: no such tree file"
