"""End-to-end run of experiments/maxent_tree.py (paper 000, §5, Figures 3–9) in its --quick mode.

Marked slow: the default test run (``-m 'not slow'``) skips it; run it with ``pytest -m slow``.
"""

from __future__ import annotations

import json
import math

import pytest


@pytest.mark.slow
def test_maxent_tree_script_writes_outputs_and_error_rates_lower_the_divergence(tmp_path, load_experiment):
    script = load_experiment("maxent_tree")
    results = script.main(["--quick", "--jobs", "1", "--out", str(tmp_path)])

    for name in ("results.json", "results.md"):
        assert (tmp_path / name).stat().st_size > 0
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pass  # the script skips the figures without matplotlib (the `report` extra)
    else:
        for name in ("fig3_error_rates.png", "fig4_selection_measure.png", "fig6_internal.png", "fig8_top_k.png", "fig9_running_time.png", "example1.png"):
            assert (tmp_path / name).stat().st_size > 0, name

    on_disk = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert on_disk["baselines"]["records"] == 30162 and on_disk["baselines"]["qi_values"] == 4480

    # Fig. 3: publishing the error rates lowers the overall divergence, for every tree, with and
    # without SA constraints (without them, labels alone leave the uniform estimate)
    runs = results["runs"]
    checked = 0
    for key in results["trees"]:
        for sa in (False, True):
            rates = script.find(runs, key, "error-rates", sa, False)["overall_divergence"]
            labels = script.find(runs, key, "labels", sa, False)["overall_divergence"]
            assert rates < labels, (key, sa, rates, labels)
            checked += 1
        assert math.isclose(script.find(runs, key, "labels", False, False)["overall_divergence"], results["baselines"]["uniform"], rel_tol=1e-6)
    assert checked == 2 * len(results["trees"]) >= 12

    # labels only without the SA distribution: ppdm warns that the audit is uninformative, and
    # only then (error rates or the SA distribution move the estimate off the uniform one)
    for r in runs:
        assert r["uninformative_warning"] == (r["publish"] == "labels" and not r["sa"]), (r["tree"], r["publish"], r["sa"], r["internal"])
        assert (r["note"] is not None) == r["uninformative_warning"]

    # every solve reports one of the documented statuses; linear solves are optimal, and the
    # internal-node solves the quick run makes (depth 3) all end feasible: at a stationary point,
    # or, if stopped at max_iter, with internal constraints met and the run marked as such
    statuses = script.STATIONARY + script.STOPPED_FEASIBLE + (script.VIOLATED,)
    for r in runs:
        assert r["status"] in statuses, r["status"]
        if not r["internal"]:
            assert r["status"] == "optimal", (r["tree"], r["status"])
        else:
            assert r["status"] != script.VIOLATED and r["max_violation"] <= 1e-6, (r["tree"], r["status"], r["max_violation"])
            assert r["status"] != "iteration limit" or r["iterations"] >= 300
    # with error rates published and no SA constraints the depth-3 Gini solve reaches a stationary point
    assert script.find(runs, "gini/depth3", "error-rates", False, True)["status"] == "local optimum"
    assert script.find(runs, "gini/depth3", "error-rates", False, True)["overall_divergence"] < script.find(runs, "gini/depth3", "error-rates", False, False)["overall_divergence"]
    assert on_disk["settings"]["git"] is None or len(on_disk["settings"]["git"]["commit"]) == 40

    # Example 1 (Fig. 5): SA row exactly, and the internal constraint leaves the optimum at 0.5
    ex = results["example1"]
    assert ex["SA_ppdm"]["x"] == pytest.approx([1, 0, 0.5, 0.5, 0.5, 0.5, 0, 1], abs=1e-9)
    assert ex["SA_ppdm"]["Do"] == pytest.approx(math.log(2) / 3, abs=1e-9)  # the paper's 0.231
    assert ex["SB_ppdm"]["x"][2] == pytest.approx(0.5, abs=1e-9)
    assert ex["SB_ppdm"]["status"] == "local optimum"
    assert ex["boundary_a"] == pytest.approx(0.1845, abs=5e-5)
    assert "## Figure 3" in (tmp_path / "results.md").read_text(encoding="utf-8")
