"""``ppdm report`` and ``ppdm audit --report``: the page, its JSON and, with Chromium, its PDF;
bad inputs end in one line and exit status 2. ``ppdm show`` prints the node ids reports name."""

import json
import re

import numpy as np
import pytest

from ppdm.report.browser import find_chromium


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A CSV, the tree trained on it and the audit's saved result, all through the command line."""
    from click.testing import CliRunner

    from ppdm.cli import main

    folder = tmp_path_factory.mktemp("report_cli")
    rng = np.random.default_rng(1)
    a, b = rng.choice(list("xyz"), 200), rng.choice(list("uv"), 200)
    s = np.where(a == "x", "p", np.where(rng.random(200) < 0.5, "p", "q"))
    (folder / "t.csv").write_text("a,b,s\n" + "\n".join(f"{i},{j},{k}" for i, j, k in zip(a, b, s)) + "\n")
    runner = CliRunner()
    for args in (
        ["train", "--data", folder / "t.csv", "--class-attribute", "s", "--algorithm", "id3", "--test-size", "0", "--out", folder / "tree.json", "-q"],
        ["audit", "--tree", folder / "tree.json", "--data", folder / "t.csv", "--known", "a,b", "--out", folder / "result.json", "-q"],
    ):
        done = runner.invoke(main, [str(x) for x in args], catch_exceptions=False)
        assert done.exit_code == 0, done.output
    (folder / "frontier.json").write_text(json.dumps([[0.7, 0.3, "unprotected"], [0.6, 0.0, "pruned", True]]))
    return folder


def test_report_writes_the_page_and_its_json(run, files, tmp_path):
    out = tmp_path / "r.html"
    done = run("report", files / "result.json", "--model", files / "tree.json", "--frontier", files / "frontier.json", "--out", out)
    assert done.exit_code == 0, done.output
    assert "The attacker is right for" in done.output and f"wrote {out}" in done.output
    page, data = out.read_text(), json.loads((tmp_path / "r.report.json").read_text())
    assert data["format"] == "ppdm-report" and data["attacks"][0]["verdict"]["level"] == "fails"
    assert page.count('<svg id="fig-') == 3 and 'id="node-1"' in page
    shown = run("show", files / "tree.json")
    for leaf in data["attacks"][0]["exposure"]:  # every leaf the report names is in `ppdm show`
        assert f"[node {leaf['leaf']}]" in shown.output


def test_report_of_several_results(run, files, tmp_path):
    out = tmp_path / "two.html"
    done = run("report", files / "result.json", files / "result.json", "--out", out, "--json", tmp_path / "data.json", "-q")
    assert done.exit_code == 0 and done.output == ""
    assert len(json.loads((tmp_path / "data.json").read_text())["attacks"]) == 2
    page = out.read_text()
    assert 'id="attack-1"' in page and "No model was given" in page


def test_audit_writes_the_report_too(run, files, tmp_path):
    out = tmp_path / "audit.html"
    done = run("audit", "--tree", files / "tree.json", "--data", files / "t.csv", "--known", "a,b", "--report", out, "-q")
    assert done.exit_code == 0 and done.output == ""
    assert out.is_file() and (tmp_path / "audit.report.json").is_file()
    assert "threat model: attacker knows a, b" in out.read_text()


def test_show_prints_node_ids(run, files):
    shown = run("show", files / "tree.json").output
    ids = sorted(int(i) for i in re.findall(r"\[node (\d+)\]", shown))
    assert ids == list(range(len(json.loads((files / "tree.json").read_text())["nodes"])))
    assert "[node" not in run("show", files / "tree.json", "--no-ids").output


@pytest.mark.parametrize(
    "args, message",
    [
        (["report", "nowhere.json", "--out", "r.html"], "nowhere.json: no such file"),
        (["report", "{tree}", "--out", "r.html"], "not an attack result"),
        (["report", "{result}", "--out", "r.txt"], "name it .html"),
        (["report", "{result}", "--out", "r.html", "--pdf", "r.png"], "name the PDF .pdf"),
        (["report", "{result}", "--out", "missing/r.html"], "does not exist"),
        (["report", "{result}", "--model", "nomodel.json", "--out", "r.html"], "nomodel.json: no such model file"),
        (["report", "{result}", "--frontier", "{csv}", "--out", "r.html"], "not valid JSON"),
        (["report", "{result}", "--frontier", "{badfront}", "--out", "r.html"], "frontier point 0"),
        (["report", "{result}", "--out", "r.html", "--json", "{result}"], "would overwrite it; give the report another name or --json"),
        (["audit", "--tree", "{tree}", "--data", "{csv}", "--report", "x.pdf"], "name it .html"),
        (["audit", "--tree", "{tree}", "--data", "{csv}", "--out", "x.report.json", "--report", "x.html"], "would overwrite it; give the report another name\n"),  # ppdm audit has no --json
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, files, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad_frontier.json").write_text('[["high", 0.1, "a"]]')
    names = {"tree": files / "tree.json", "result": files / "result.json", "csv": files / "t.csv",
             "badfront": tmp_path / "bad_frontier.json", "folder": files}
    done = run(*[a.format(**names) for a in args])
    assert done.exit_code == 2, done.output
    assert message in done.output + "\n" and "Traceback" not in done.output
    assert done.output.strip().count("\n") == 0


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium on this machine (apt-get install chromium): the PDF was not printed")
def test_report_prints_a_pdf(run, files, tmp_path):
    done = run("report", files / "result.json", "--model", files / "tree.json", "--out", tmp_path / "r.html", "--pdf", tmp_path / "r.pdf", "-q")
    assert done.exit_code == 0, done.output
    assert (tmp_path / "r.pdf").read_bytes()[:5] == b"%PDF-"


def test_report_draws_its_own_json_again(run, files, tmp_path):
    first = tmp_path / "audit.html"
    done = run("audit", "--tree", files / "tree.json", "--data", files / "t.csv", "--known", "a,b", "--report", first, "-q")
    assert done.exit_code == 0, done.output
    again = tmp_path / "again.html"
    done = run("report", tmp_path / "audit.report.json", "--out", again)
    assert done.exit_code == 0, done.output
    assert again.read_text() == first.read_text()  # the page is drawn from its JSON alone
    assert f"wrote {again}" in done.output and not (tmp_path / "again.report.json").exists()
    titled = run("report", tmp_path / "audit.report.json", "--out", tmp_path / "t.html", "--title", "Loan model, before", "--json", tmp_path / "t.json", "-q")
    assert titled.exit_code == 0 and "<title>Loan model, before</title>" in (tmp_path / "t.html").read_text()
    assert json.loads((tmp_path / "t.json").read_text())["title"] == "Loan model, before"


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--model", "{files}/tree.json"], "already holds its model, threat model and frontier; --model goes with audit results"),
        (["{files}/result.json"], "a report's JSON is drawn again on its own"),
        (["--json", "{report}"], "would overwrite the report's JSON it is drawn from"),
    ],
)
def test_report_json_refusals_are_one_line(run, files, tmp_path, extra, needle):
    run("audit", "--tree", files / "tree.json", "--data", files / "t.csv", "--known", "a,b", "--report", tmp_path / "a.html", "-q")
    report = tmp_path / "a.report.json"
    args = [a.format(files=files, report=report) for a in extra]
    done = run("report", report, "--out", tmp_path / "b.html", *args)
    assert done.exit_code == 2 and needle in done.output and len(done.output.strip().splitlines()) == 1
    assert not (tmp_path / "b.html").exists()


def test_a_report_json_the_page_cannot_be_drawn_from_is_named(run, files, tmp_path):
    run("audit", "--tree", files / "tree.json", "--data", files / "t.csv", "--known", "a,b", "--report", tmp_path / "a.html", "-q")
    data = json.loads((tmp_path / "a.report.json").read_text())
    del data["attacks"][0]["verdict"]
    (tmp_path / "edited.json").write_text(json.dumps(data))
    done = run("report", tmp_path / "edited.json", "--out", tmp_path / "b.html")
    assert done.exit_code == 2 and "edited.json: this ppdm cannot draw a page from it (missing field 'verdict')" in done.output
    assert not (tmp_path / "b.html").exists()
    (tmp_path / "notitle.json").write_text(json.dumps({"format": "ppdm-report", "version": 1, "attacks": [], "advice": []}))
    done = run("report", tmp_path / "notitle.json", "--out", tmp_path / "b.html")
    assert done.exit_code == 2 and "notitle.json: title: expected a text" in done.output


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium on this machine (apt-get install chromium): the PDF was not printed")
def test_a_report_json_prints_its_pdf_again(run, files, tmp_path):
    run("audit", "--tree", files / "tree.json", "--data", files / "t.csv", "--known", "a,b", "--report", tmp_path / "a.html", "-q")
    done = run("report", tmp_path / "a.report.json", "--out", tmp_path / "b.html", "--pdf", tmp_path / "b.pdf", "-q")
    assert done.exit_code == 0, done.output
    assert (tmp_path / "b.pdf").read_bytes()[:5] == b"%PDF-"
