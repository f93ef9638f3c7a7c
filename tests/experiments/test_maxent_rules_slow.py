"""End-to-end run of experiments/maxent_rules.py (paper 004 §VI, Figures 5–8) in its --quick mode.

Marked slow: the default test run (``-m 'not slow'``) skips it; run it with ``pytest -m slow``.
"""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_maxent_rules_script_reproduces_the_papers_trends(tmp_path, load_experiment):
    res = load_experiment("maxent_rules").main(["--quick", "--quiet", "--out", str(tmp_path)])
    for name in ("results.json", "results.md"):
        assert (tmp_path / name).stat().st_size > 0
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pass
    else:
        assert {"fig5a_confidence.png", "fig7_nar.png", "fig8_running_time.png"} <= set(res["figures"])

    def d(rows, **kw):
        return next(r["overall_divergence"] for r in rows if all(r[k] == v for k, v in kw.items()))

    exact = {"publish": "exact", "nar": True, "strict": "integer"}
    # Fig. 5(a)/(b): fewer rules (higher thresholds), higher divergence
    assert d(res["confidence"], confidence=0.6, **exact) < d(res["confidence"], confidence=0.9, **exact)
    assert d(res["support"], support=0.06, **exact) < d(res["support"], support=0.1, **exact)
    # Fig. 5(c): more rules published, lower divergence
    t = sorted((r["T"], r["overall_divergence"]) for r in res["rules_T"] if r["publish"] == "exact")
    assert all(a[1] > b[1] for a, b in zip(t, t[1:]))
    # Fig. 6: releasing exact values discloses more, less so at high confidence
    gap = lambda c: d(res["confidence"], confidence=c, publish="thresholds", nar=True, strict="integer") - d(res["confidence"], confidence=c, **exact)  # noqa: E731
    assert gap(0.6) > gap(0.9) > 0
    # Fig. 7(b): NAR constraints change the overall divergence little; (a) but some individuals a lot
    assert abs(d(res["confidence"], confidence=0.6, **exact) - d(res["confidence"], confidence=0.6, publish="exact", nar=False)) < 0.01
    assert res["nar"]["exact"]["top10"][0]["difference"] > 0.1
    # Fig. 8 / §VI-D: the paper's counts
    pruned = next(r for r in res["timing"] if r["confidence"] == 0.6 and r["nar"])
    assert (pruned["nar_generated"], pruned["nar_patterns"], pruned["nar_variables"]) == (449, 766_472, 281_014)
