"""ppdm audit-rules: the people-at-risk table by default, the work bounded before mining, progress on
a terminal, an "inaccurate" solve explained; bad inputs are one line with exit status 2."""

import io
import json

import pandas as pd
import pytest
from rich.console import Console

from ppdm.cli import common
from ppdm.rules import frequent_itemset_bound, mine_rules


@pytest.fixture
def table_csv(tmp_path):
    """Paper 004 Figure 2, grown to 12 people with ids in a 'row' column."""
    frame = pd.DataFrame({
        "row": range(100, 112),
        "Education": ["Doctorate", "Doctorate", "Masters", "Masters", "Bachelors", "Bachelors"] * 2,
        "Gender": ["Female", "Male"] * 6,
        "Salary": ["50K+", "50K+", "50K-", "50K-", "50K-", "50K+", "50K+", "50K+", "50K-", "50K-", "50K-", "50K-"],
    })
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False, sep=";")
    return path


def test_default_table_lists_the_people_at_risk_with_their_row_ids(run, table_csv, tmp_path):
    out = tmp_path / "a.json"
    result = run("audit-rules", "--data", table_csv, "--sep", ";", "--row-ids", "row", "--sensitive", "Salary",
                 "--support", "0.1", "--confidence", "0.9", "--top", "3", "--out", out)
    assert result.exit_code == 0, result.output
    assert "people at risk: the attacker's confidence in their true 'Salary'" in result.output
    top = json.loads(out.read_text())["top_individuals"]
    assert len(top) == 3 and top[0]["confidence"] >= top[1]["confidence"] >= top[2]["confidence"]
    assert all(100 <= r <= 111 for t in top for r in t["rows"])  # the file's ids, not positions
    first = top[0]
    assert first["confidence"] == pytest.approx(1.0, abs=1e-6) and first["prior"] == pytest.approx(5 / 12)
    assert f"rows {', '.join(map(str, first['rows']))}" in result.output


def test_the_bound_holds_and_support_zero_is_refused(adult_train):
    frame, _ = adult_train
    qis = ["workclass", "race", "sex"]
    bound = frequent_itemset_bound(frame, qis, 0.05)
    mined = mine_rules(frame, qis, "income", 0.05, 0.0)
    itemsets = {r.antecedent for r in mined.rules}
    assert len(itemsets) <= bound <= 7 * 20
    assert frequent_itemset_bound(frame, qis, 0) == frequent_itemset_bound(frame, qis, 1e-9)
    calls = []
    mine_rules(frame, qis, "income", 0.05, 0.5, progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (1, 7) and calls[-1] == (7, 7)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--support", "0", "--confidence", "0.6"], "--support 0 makes every itemset"),
        (["--support", "0.01", "--confidence", "0.6"], "allows up to 23,564 frequent itemsets, above the cap of 20,000: raise --support"),
        (["--support", "0.1", "--confidence", "0.6", "--max-itemsets", "100"], "raise --max-itemsets"),
        (["--support", "0.1", "--confidence", "0.6", "--no-nar", "--view", "nar-impact"], "drop --no-nar"),
        (["--support", "0.1", "--confidence", "0.6", "--view", "figure"], "'figure' is not one of"),
        (["--support", "1.5", "--confidence", "0.6"], "1.5 is not in the range"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, args, message):
    result = run("audit-rules", "--dataset", "adult", "--sensitive", "income", *args)
    assert result.exit_code == 2 and message in result.output, result.output
    assert result.output.strip().count("\n") == 0 and "Traceback" not in result.output


def test_an_inaccurate_solve_is_explained_in_words(run, table_csv, monkeypatch):
    import ppdm.attacks.models.rules as rules_module

    solve = rules_module.rules_estimate

    def inaccurate(*args, **kwargs):
        result = solve(*args, **kwargs)
        result.details.update(status="inaccurate", max_violation=3e-6)
        return result

    monkeypatch.setattr(rules_module, "rules_estimate", inaccurate)
    result = run("audit-rules", "--data", table_csv, "--sep", ";", "--sensitive", "Salary", "--support", "0.1", "--confidence", "0.9")
    assert result.exit_code == 0, result.output
    assert "(inaccurate)" in result.output
    assert "note: the solver stopped close to, not at, the exact answer" in result.output
    assert "accurate to about 3e-06" in result.output


def test_progress_shows_on_a_terminal_only(run, table_csv):
    args = ("audit-rules", "--data", table_csv, "--sep", ";", "--sensitive", "Salary", "--support", "0.1", "--confidence", "0.9", "--top", "0")
    assert "mining rules" not in run(*args).output  # not a terminal: no progress
    screen = io.StringIO()
    with common.console.using(Console(file=screen, force_terminal=True, width=100)):
        assert run(*args).exit_code == 0
    assert "mining rules on 12 records" in screen.getvalue()
