"""AttackResult.to_dict: linear in the groups, and each group's rows in the attacker's table."""

import json

import numpy as np
import pandas as pd

from ppdm.attacks import AttackResult
from ppdm.attacks.core.result import result_json
from ppdm.data.qigroups import QIGroups


def _result(frame: pd.DataFrame, qis: list[str]) -> AttackResult:
    groups = QIGroups.from_frame(frame, qis)
    posterior = np.tile([0.25, 0.75], (groups.n_groups, 1))
    posterior[0] = [1.0, 0.0]
    n = groups.n_records
    return AttackResult("test", "s", ("p", "q"), groups, posterior, [f"leaf {g}" for g in range(groups.n_groups)],
                        np.ones(n, dtype=bool), np.arange(n) % 2 == 0)


def test_each_group_lists_the_rows_of_its_records():
    frame = pd.DataFrame({"a": ["x", "y", "x", "z", "y", "x"], "b": [1, 2, 1, 3, 2, 2]}, index=[10, 11, 12, 13, 14, 15])
    groups = _result(frame, ["a", "b"]).to_dict()["groups"]
    assert [(g["qi"], g["rows"]) for g in groups] == [
        ({"a": "x", "b": 1}, [0, 2]), ({"a": "y", "b": 2}, [1, 4]), ({"a": "z", "b": 3}, [3]), ({"a": "x", "b": 2}, [5]),
    ]
    assert [g["records"] for g in groups] == [2, 2, 1, 1] and [g["exposed_records"] for g in groups] == [2, 1, 0, 0]
    assert [g["certain"] for g in groups] == [True, False, False, False]


def test_per_group_columns_are_computed_once(monkeypatch):
    calls = []
    certain = AttackResult.certain_groups.fget
    monkeypatch.setattr(AttackResult, "certain_groups", property(lambda self: calls.append(1) or certain(self)))
    frame = pd.DataFrame({"a": np.arange(2000) % 500, "b": np.arange(2000) % 7})
    data = _result(frame, ["a", "b"]).to_dict()
    assert len(data["groups"]) == 2000 and len(calls) <= 2  # once for the groups, once for the summary


def test_the_json_text_has_one_line_per_group_and_reads_back(tmp_path):
    frame = pd.DataFrame({"a": ["x", "y", None, "x"], "b": [1.5, 2.0, 3.0, np.nan]})
    result = _result(frame, ["a", "b"])
    result.save(tmp_path / "r.json")
    text = (tmp_path / "r.json").read_text()
    data = result.to_dict()
    assert json.loads(text) == data and data["groups"][2]["qi"] == {"a": None, "b": 3.0}
    lines = text.splitlines()
    assert [json.loads(line.rstrip(",")) for line in lines if line.startswith('  {"qi"')] == data["groups"]
    assert json.loads(result_json({"groups": [], "extra": [{"x": 1}]})) == {"groups": [], "extra": [{"x": 1}]}
