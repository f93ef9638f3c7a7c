"""Issue 41: no temporary file survives SIGINT, SIGTERM or SIGHUP at any point of a write, and
the file written is the old one whole or the new one complete (never a part)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

#: A process that writes, under the CLI's error handler, a 2 MB file over and over (each version
#: numbered on its first line, ``end`` on its last) until it is stopped.
WRITER = r"""
import sys
from ppdm.cli.common import handles_errors
from ppdm.files import write_atomic

block = ("x" * 1023 + "\n") * 1024

@handles_errors
def run():
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for i in range(10**6):
        write_atomic(sys.argv[1], f"{i}\n" + block * 2 + "end\n")

run()
"""

RUNS = 20


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("PPDM_DEBUG", None)
    return env


def _whole(path: Path) -> bool:
    text = path.read_text()
    first, _, rest = text.partition("\n")
    return first.isdigit() and rest == ("x" * 1023 + "\n") * 1024 * 2 + "end\n"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_at_any_moment_of_a_write_leaves_no_temporary_and_a_whole_file(tmp_path, signum):
    rng = random.Random(int(signum))
    target = tmp_path / "out.json"
    statuses = set()
    for run in range(RUNS):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.0, 0.15))
        writer.send_signal(signum)
        _, err = writer.communicate(timeout=60)
        statuses.add(writer.returncode)
        assert writer.returncode == 128 + int(signum), (run, writer.returncode, err)
        assert err.count("\n") == 1 and "no output was written in part" in err, err
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == [], run
        if target.exists():
            assert _whole(target), run
    assert statuses == {128 + int(signum)}


def test_the_cli_restores_the_signal_handlers_it_set(world, tmp_path):
    from click.testing import CliRunner

    from ppdm.cli import main

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    done = CliRunner().invoke(main, ["show", str(world.tree)])
    assert done.exit_code == 0, done.output
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == before


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_ppdm_train_stopped_leaves_no_temporary(world, tmp_path, signum):
    """The real command, stopped while it trains and writes (three moments each)."""
    rng = random.Random(7 * int(signum))
    for run in range(3):
        out, rows = tmp_path / f"t{run}.json", tmp_path / f"rows{run}.csv"
        args = [sys.executable, "-m", "ppdm", "train", "--data", str(world.adult), "--class-attribute", "income", "--test-size", "0",
                "--out", str(out), "--train-out", str(rows), "-q"]  # fmt: skip
        writer = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        time.sleep(rng.uniform(0.5, 2.5))
        writer.send_signal(signum)
        writer.communicate(timeout=60)
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == [], run
        for path in (out, rows):
            assert not path.exists() or path.stat().st_size > 0
