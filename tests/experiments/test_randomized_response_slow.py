"""End-to-end run of experiments/randomized_response.py (paper 001 §5, Figure 2), reduced.

Marked slow: the default test run (``-m 'not slow'``) skips it; run it with ``pytest -m slow``.
"""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_randomized_response_script_reproduces_figure2_shape(tmp_path, load_experiment):
    script = load_experiment("randomized_response")
    results = script.main(
        ["--reps", "4", "--categorical-reps", "2", "--thetas", "0.4", "0.51", "0.7", "0.8", "1.0", "--out", str(tmp_path), "--quiet"]
    )
    for name in ("results.json", "table.md"):
        assert (tmp_path / name).stat().st_size > 0
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pass
    else:
        assert (tmp_path / "figure2.png").stat().st_size > 0
    assert json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["settings"]["reps"] == 4

    binary = results["datasets"]["binary"]["configs"]
    for config in ("paper", "effective"):
        res = binary[config]
        original = res["original"]["accuracy"]
        # θ = 1 is exactly the original ID3
        assert res["thetas"]["1.0"]["mean"] == pytest.approx(original, abs=1e-12)
        assert res["thetas"]["1.0"]["variance"] < 1e-20
        # §4.3: the estimate from disguised test data is close to the true accuracy
        for theta in ("0.7", "0.8"):
            assert abs(res["thetas"][theta]["estimate_error_mean"]) <= 0.02
    effective = binary["effective"]
    original = effective["original"]["accuracy"]
    for theta in ("0.4", "0.7", "0.8"):
        assert effective["thetas"][theta]["mean"] >= original - 0.02
    # near 1/2 the variance grows (Figure 2(b))
    assert effective["thetas"]["0.51"]["variance"] > 10 * effective["thetas"]["0.8"]["variance"]
    categorical = results["datasets"]["categorical"]["configs"]["effective"]
    assert categorical["thetas"]["1.0"]["mean"] == pytest.approx(categorical["original"]["accuracy"], abs=1e-12)
    assert categorical["thetas"]["0.8"]["mean"] >= categorical["original"]["accuracy"] - 0.02
