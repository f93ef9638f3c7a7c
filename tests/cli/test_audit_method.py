"""``ppdm audit --method``: the estimate's method from the capabilities table (issue 40), the
default road unchanged, another method's estimate saying so, an unknown one refused in one line."""

from __future__ import annotations

import json

import pytest

from ppdm.data.datasets import load_dataset
from ppdm.pipeline.capabilities import METHODS

from cli_output import one_line_error


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("method")
    frame = load_dataset("nursery")[0].sample(600, random_state=1).reset_index(drop=True)
    frame.to_csv(folder / "data.csv", index=False)
    from click.testing import CliRunner

    from ppdm.cli import main

    done = CliRunner().invoke(main, ["train", "--data", str(folder / "data.csv"), "--class-attribute", "class",
                                     "--max-depth", "3", "--test-size", "0", "--out", str(folder / "tree.json"), "-q"])  # fmt: skip
    assert done.exit_code == 0, done.output
    return folder


def test_the_method_chooses_the_estimate_and_auto_is_the_default(run, files, tmp_path):
    args = ("audit", "--tree", files / "tree.json", "--data", files / "data.csv", "-q")
    outs = {}
    for method in (None, "auto", "explicit", "possible"):
        out = tmp_path / f"{method}.json"
        result = run(*args, *(("--method", method) if method else ()), "--out", out)
        assert result.exit_code == 0, result.output
        outs[method] = json.loads(out.read_text())
    posteriors = {m: [g["posterior"] for g in out["groups"]] for m, out in outs.items()}
    assert posteriors[None] == posteriors["auto"] == posteriors["explicit"]  # paper 000's attacker: explicit slots
    assert outs["explicit"]["summary"]["form"] == "slots"
    assert outs["possible"]["summary"]["status"] == "possible values only" and posteriors["possible"] != posteriors["auto"]


def test_an_unknown_method_is_one_line_naming_the_methods(run, files):
    result = run("audit", "--tree", files / "tree.json", "--data", files / "data.csv", "--method", "newton", "-q")
    one_line_error(result, "unknown estimate method 'newton'")
    assert all(m in result.output for m in METHODS)
