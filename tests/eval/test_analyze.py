"""The source's analyses over a hand-built sweep with known figures."""

import json

import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.eval import analyze, pearson_log, spearman


def metrics(coverage, cost, subs, root_in, total_in, incremental=True):
    return {"coverage": {"coverage": coverage},
            "usage": {"total": {"cost_usd": cost, "input_tokens": total_in, "output_tokens": 10},
                      "by_role": {"root": {"input_tokens": root_in, "output_tokens": 1}}},
            "behaviour": {"sub_calls": subs, "memo_incremental": incremental}}


def test_the_analyses_of_a_grid(sweep_builder, tmp_path):
    sweep = sweep_builder()
    rates = {("good", "oracle"): 0.8, ("good", "local"): 0.7, ("weak", "oracle"): 0.3,
             ("weak", "local"): 0.1}
    coverage, passes = [], []
    for n, ((root, sub), rate) in enumerate(rates.items()):
        cov = 10.0 ** -(3 - n)
        coverage.append(cov)
        passes.append(rate)
        sweep.episode("r1", root, sub=sub, pass_rate=rate,
                      metrics=metrics(cov, 0.5 * n, 4 * n, 5, 100, incremental=n % 2 == 0),
                      memo_turns={2 + n: "# Memo\n\n## Key Findings\n"})
    result = analyze(sweep.write())
    cov = result["coverage_pass"]
    assert cov["spearman"] == pytest.approx(spearman(coverage, passes))
    assert cov["pearson_log"] == pytest.approx(pearson_log(coverage, passes))
    assert result["root_share"]["input"] == pytest.approx(0.05)
    assert result["root_share"]["output"] == pytest.approx(0.1)
    assert result["memo"]["incremental_rate"] == 0.5
    assert result["memo"]["first_write_turn_mean"] == pytest.approx(3.5)
    grid = result["grid"]
    assert grid["roots"] == ["good", "weak"] and grid["subs"] == ["local", "oracle"]
    # root gap: per sub, best root - worst root, averaged; sub gap: per root, over subs
    assert grid["root_gap_points"] == pytest.approx(100 * ((0.7 - 0.1) + (0.8 - 0.3)) / 2)
    assert grid["sub_gap_points"] == pytest.approx(100 * ((0.8 - 0.7) + (0.3 - 0.1)) / 2)
    assert result["depth"] is None and result["simulated"]
    out = CliRunner().invoke(app, ["eval", "analyze", str(sweep.path), "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["grid"] == grid
    shown = CliRunner().invoke(app, ["eval", "analyze", str(sweep.path)])
    assert "root gap 55.0 points, sub gap 15.0 points" in shown.output


def test_depth_two_against_depth_one_per_room(sweep_builder):
    sweep = sweep_builder(depth=[1, 2])
    memo = {3: "# Memo\n\n## Findings\n"}
    for room, one, two, wrote in (("r1", 0.5, 0.6, True), ("r2", 0.5, 0.2, False),
                                  ("r3", 0.4, 0.1, True), ("r4", 0.3, 0.3, True)):
        sweep.episode(room, "scripted", depth=1, pass_rate=one, memo_turns=memo)
        sweep.episode(room, "scripted", depth=2, pass_rate=two,
                      memo_turns=memo if wrote else None)
    depth = analyze(sweep.write())["depth"]
    assert depth == {"pairs": 4, "better": 1, "worse": 2, "same": 1, "worse_without_memo": 1}
