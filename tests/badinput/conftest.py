"""The bad-input corpus' shared ground: small valid files to corrupt, and the checks every case makes.

``world`` holds, once per run, the valid inputs the cases start from (Nursery and Adult samples of
300 rows, trees trained on them with ``ppdm train --test-size 0 --max-depth 3``, a random forest,
XGBoost and LightGBM models, an audit result, published rules, a threat model, hierarchies).
Each case writes its own bad files into its ``tmp_path`` and runs the command in-process
(``refuse``) or, for the few that could run away with time or memory, in a subprocess under a
memory cap and a timeout (``refuse_in_subprocess``). A refusal is: exit status 2, one line on
standard error naming the culprit, no traceback, no "unexpected" error, outputs absent or
untouched, and done quickly.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ppdm.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"

#: Seconds an in-process refusal may take (the slowest trains or audits 300 rows first).
IN_PROCESS_SECONDS = 20.0
#: The memory (address space: numpy, scipy and scikit-learn reserve some 2 GB of it at import, with
#: one thread each) and time a subprocess case may use; a runaway reader used 14 GB.
SUBPROCESS_BYTES = 3 * 2**30
SUBPROCESS_SECONDS = 60.0


@dataclass(frozen=True)
class World:
    """The valid files the cases corrupt (see the module docstring)."""

    root: Path

    def __getattr__(self, name: str) -> Path:
        return self.root / FILES[name]

    def json(self, name: str) -> Any:
        return json.loads(getattr(self, name).read_text())


FILES = {
    "data": "nursery.csv",  # 300 Nursery rows
    "tree": "tree.json",  # C4.5 on them, depth 3, class counts
    "rows": "rows.csv",  # its --train-out (a 'row' column of ids)
    "adult": "adult.csv",  # 300 Adult rows (numeric columns)
    "atree": "atree.json",  # C4.5 on them, depth 3, unpruned (numeric thresholds)
    "forest": "forest.json",  # a bootstrap random forest of the Nursery rows (ppdm-forest)
    "train": "train.csv",  # the forest's training rows, as the CLI reads them
    "xgb": "model.xgb.json",
    "lgb": "model.lgb.txt",
    "result": "result.json",  # ppdm audit --out of tree.json
    "rules": "rules.json",  # ppdm audit-rules --rules-out
    "threat": "threat.yaml",
    "hier": "hier.yaml",  # starting hierarchies of Adult's age and workclass
}


def _ok(args: list[Any]) -> None:
    done = CliRunner().invoke(main, [str(a) for a in args])
    assert done.exit_code == 0, (args, done.output)


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    import pandas as pd

    from ppdm.data.datasets import load_dataset

    from forest_files import nursery_forest_files

    root = tmp_path_factory.mktemp("badinput-world")
    w = World(root)
    load_dataset("nursery")[0].sample(300, random_state=0).reset_index(drop=True).to_csv(w.data, index=False)
    load_dataset("adult")[0].sample(300, random_state=0).reset_index(drop=True).to_csv(w.adult, index=False)
    _ok(["train", "--data", w.data, "--class-attribute", "class", "--test-size", "0", "--max-depth", "3", "--out", w.tree, "--train-out", w.rows, "-q"])
    _ok(["train", "--data", w.adult, "--class-attribute", "income", "--test-size", "0", "--max-depth", "3", "--no-prune", "--out", w.atree, "-q"])
    frame, dummies = nursery_forest_files(root, rows=300, trees=3, depth=3)
    codes = frame["class"].astype("category").cat.codes.to_numpy()
    try:
        import xgboost

        xgboost.XGBClassifier(n_estimators=2, max_depth=2, n_jobs=1).fit(dummies, codes).save_model(w.xgb)
    except ImportError:
        pass
    try:
        import lightgbm

        lightgbm.LGBMClassifier(n_estimators=2, max_depth=2, num_leaves=4, verbose=-1, n_jobs=1).fit(dummies, codes).booster_.save_model(w.lgb)
    except ImportError:
        pass
    _ok(["audit", "--tree", w.tree, "--data", w.data, "--out", w.result, "-q"])
    _ok(["audit-rules", "--data", w.data, "--sensitive", "class", "--support", "0.1", "--confidence", "0.5",
         "--quasi-identifiers", "parents,health", "--rules-out", w.rules, "-q"])
    w.threat.write_text("sensitive: class\nknown: [parents, health]\n")
    _ok(["hierarchy", "--data", w.adult, "--column", "age", "--column", "workclass", "--out", w.hier])
    assert pd.read_csv(w.data).shape == (300, 9)
    return w


@pytest.fixture
def needs(world: World) -> Any:
    """``needs("xgb")``: the world's file, or skip the case when its library is not installed."""

    def find(name: str) -> Path:
        path = getattr(world, name)
        if not path.exists():
            pytest.skip(f"{path.name}: its library is not installed")
        return path

    return find


def _snapshot(paths: list[Path]) -> dict[Path, bytes | None]:
    return {p: (p.read_bytes() if p.is_file() else None) for p in paths}


def check_refusal(code: int, stdout: str, stderr: str, needles: tuple[str, ...], seconds: float, limit: float, status: int = 2) -> None:
    """Exit ``status``, one line on standard error holding every needle, nothing else printed,
    no traceback and no error the program did not anticipate."""
    assert code == status, (code, stdout, stderr)
    assert "Traceback" not in stdout + stderr, stderr
    assert stdout.strip() == "", stdout
    line = stderr.strip()
    assert line and "\n" not in line, stderr
    assert line.lower().startswith("error"), line
    assert "unexpected" not in line, line
    for needle in needles:
        assert needle in line, (needle, line)
    assert seconds < limit, f"{seconds:.1f} s"


def check_outputs(before: dict[Path, bytes | None]) -> None:
    """Every output file is as it was (absent, or the same bytes), with no temporary left beside it."""
    for path, content in before.items():
        now = path.read_bytes() if path.is_file() else None
        assert now == content, f"{path} was {'written' if content is None else 'changed'}"
        if path.parent.is_dir():
            stray = [p.name for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.") and p.name.endswith(".tmp")]
            assert not stray, stray


@pytest.fixture
def refuse():
    """``refuse(args, *needles, outputs=[...], status=2)``: run ``ppdm args`` in-process and check the refusal."""
    runner = CliRunner()

    def run(args: list[Any], *needles: str, outputs: list[Path] = (), status: int = 2) -> None:  # type: ignore[assignment]
        before = _snapshot(list(outputs))
        start = time.perf_counter()
        result = runner.invoke(main, [str(a) for a in args])
        seconds = time.perf_counter() - start
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        check_refusal(result.exit_code, result.stdout, result.stderr, needles, seconds, IN_PROCESS_SECONDS, status)
        check_outputs(before)

    return run


def _capped(limit_bytes: int) -> Any:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return cap


@pytest.fixture
def refuse_in_subprocess():
    """``refuse_in_subprocess(args, *needles, outputs=[...], fsize=None)``: run ``python -m ppdm args``
    under a memory cap (and a file-size cap ``fsize``) with a timeout, and check the refusal."""

    def run(args: list[Any], *needles: str, outputs: list[Path] = (), fsize: int | None = None) -> None:  # type: ignore[assignment]
        before = _snapshot(list(outputs))

        def limits() -> None:
            _capped(SUBPROCESS_BYTES)()
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

        env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200", **dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1")}
        env.pop("PPDM_DEBUG", None)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "ppdm", *map(str, args)], capture_output=True, text=True, env=env,
            timeout=SUBPROCESS_SECONDS, preexec_fn=limits,
        )  # fmt: skip
        seconds = time.perf_counter() - start
        check_refusal(done.returncode, done.stdout, done.stderr, needles, seconds, SUBPROCESS_SECONDS)
        check_outputs(before)

    return run


@pytest.fixture
def raises():
    """``raises(call, ErrorClass, *needles)``: ``call()`` raises that ppdm error, its message one
    line holding every needle, quickly."""
    from ppdm.errors import PpdmError

    def check(call: Any, error: type, *needles: str) -> None:
        assert issubclass(error, PpdmError)
        start = time.perf_counter()
        with pytest.raises(PpdmError) as info:
            call()
        assert time.perf_counter() - start < IN_PROCESS_SECONDS
        assert isinstance(info.value, error), (type(info.value), info.value)
        message = str(info.value)
        assert "\n" not in message and len(message) < 2000, message
        for needle in needles:
            assert needle in message, (needle, message)

    return check
